#include "core/job/progressfollower.h"

#include "core/cluster/diagnosis.h"
#include "core/job/jobactions.h"
#include "core/job/tracker.h"
#include "core/kube/kubeclient.h"
#include "core/kube/logstream.h"
#include "core/kube/resourcekind.h"
#include "core/s3/s3client.h"

#include <QCoreApplication>
#include <QDir>
#include <QFutureWatcher>
#include <QJsonArray>
#include <QTemporaryFile>
#include <QTimer>
#include <QtConcurrent>

#include <QLoggingCategory>

namespace Starforge::Job {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(ProgressFollower)
};
Q_LOGGING_CATEGORY(lcProgress, "starforge.core.progress")
}

struct ProgressFollower::Followed
{
    QString rayJobName;
    QString pod;                                // the submitter pod whose log is followed
    std::unique_ptr<Kube::LogStream> stream;
    std::unique_ptr<QObject> pending;           // context of a pod list in flight; deleting it drops the answer
    QTimer recheck;
    bool own = false;
};

ProgressFollower::ProgressFollower(Kube::KubeClient *kube, JobTracker *tracker, ProgressFollowerOptions options, QObject *parent)
    : QObject(parent)
    , m_kube(kube)
    , m_tracker(tracker)
    , m_options(std::move(options))
{
}

ProgressFollower::~ProgressFollower() = default;

void ProgressFollower::start()
{
    if (!m_tracker) return;
    connect(m_tracker, &JobTracker::jobChanged, this, &ProgressFollower::onJob);
    connect(m_tracker, &JobTracker::jobArchived, this, &ProgressFollower::onJob);
    connect(m_tracker, &JobTracker::jobRemoved, this, &ProgressFollower::onRemoved);
    for (const JobRecord &record : m_tracker->jobs()) onJob(record);
}

const JobProgress *ProgressFollower::progress(const QString &jobId) const
{
    const auto it = m_progress.constFind(jobId);
    return it == m_progress.cend() ? nullptr : &it.value();
}

QStringList ProgressFollower::followed() const
{
    return m_followed.keys();
}

bool ProgressFollower::isViewersOwn(const JobRecord &record) const
{
    return m_tracker && actsOn(m_tracker->ownershipOf(record));
}

void ProgressFollower::onJob(const JobRecord &record)
{
    if (record.state == JobState::Running && !record.archived) {
        if (!m_followed.contains(record.id)) follow(record);
        return;
    }
    if (isTerminal(record.state) && m_progress.contains(record.id) && !m_ended.contains(record.id)) {
        // The log stream ends by itself when the submitter's container does: the last lines
        // (the exit record) still arrive. A job archived before that lets go now.
        m_ended.append(record.id);
        if (record.archived) unfollow(record.id);
        forgetOldEnded();
        fillFreeSlots();
    }
}

void ProgressFollower::onRemoved(const QString &id)
{
    unfollow(id);
    fillFreeSlots();
}

void ProgressFollower::fillFreeSlots()
{
    if (!m_tracker) return;
    // The viewer's own first, as follow() would choose.
    for (const bool own : {true, false}) {
        for (const JobRecord &record : m_tracker->jobs()) {
            if (m_followed.size() >= m_options.maxFollowed) return;
            if (record.state != JobState::Running || record.archived || m_followed.contains(record.id) || isViewersOwn(record) != own) continue;
            follow(record);
        }
    }
}

void ProgressFollower::follow(const JobRecord &record)
{
    const bool own = isViewersOwn(record);
    if (m_followed.size() >= m_options.maxFollowed) {
        // Full: one of the viewer's own jobs takes the place of someone else's.
        QString victim;
        if (own) {
            for (auto it = m_followed.cbegin(); it != m_followed.cend() && victim.isEmpty(); ++it) {
                if (!it.value()->own) victim = it.key();
            }
        }
        if (victim.isEmpty()) return;
        unfollow(victim);
    }
    auto followed = std::make_shared<Followed>();
    followed->rayJobName = record.rayJobName;
    followed->own = own;
    followed->recheck.setSingleShot(true);
    followed->recheck.setInterval(m_options.podRecheckMs);
    connect(&followed->recheck, &QTimer::timeout, this, [this, id = record.id] { findPod(id); });
    m_followed.insert(record.id, followed);
    findPod(record.id);
}

void ProgressFollower::unfollow(const QString &id)
{
    // Taken out first: a stream deleted here must not find itself still listed.
    std::shared_ptr<Followed> followed = m_followed.take(id);
    if (followed) retire(std::move(followed->stream));
}

void ProgressFollower::retire(std::unique_ptr<Kube::LogStream> stream)
{
    // Later: this may run inside the stream's own signal (its log ended).
    if (!stream) return;
    stream->stop();
    disconnect(stream.get(), nullptr, this, nullptr);
    stream.release()->deleteLater();
}

void ProgressFollower::findPod(const QString &id)
{
    const auto it = m_followed.constFind(id);
    if (it == m_followed.cend()) return;
    Followed &f = *it.value();
    if (f.rayJobName.isEmpty()) return;
    Kube::ApiRequest list;
    list.path = Kube::ResourceKind::pods().path(m_options.ns);
    // The submitter Job has the RayJob's name, and the Job controller labels its pods with it.
    list.query.addQueryItem(QStringLiteral("labelSelector"), QStringLiteral("job-name=") + f.rayJobName);
    list.what = Text::tr("find the submitter pod of job %1").arg(id);
    f.pending = std::make_unique<QObject>();
    m_kube->send(list, f.pending.get(), [this, id](const Kube::ApiResult &result) {
        const auto found = m_followed.constFind(id);
        if (found == m_followed.cend()) return;
        const Followed &followed = *found.value();
        if (!result.ok()) {
            qCInfo(lcProgress) << "progress of" << id << ": cannot list its submitter pods:" << result.error->message;
            scheduleRecheck(id);
            return;
        }
        // The newest submitter pod: a retried submission's replays the whole driver log.
        QString newest;
        QDateTime newestCreated;
        for (const QJsonValue &value : result.json().value(QStringLiteral("items")).toArray()) {
            const QJsonObject pod = value.toObject();
            if (Cluster::PodInfo::fromJson(pod).role() != QLatin1String("submitter")) continue;
            const QJsonObject meta = pod.value(QStringLiteral("metadata")).toObject();
            const QDateTime created = QDateTime::fromString(meta.value(QStringLiteral("creationTimestamp")).toString(), Qt::ISODate);
            if (newest.isEmpty() || created > newestCreated) {
                newest = meta.value(QStringLiteral("name")).toString();
                newestCreated = created;
            }
        }
        if (newest.isEmpty()) {
            scheduleRecheck(id);
            return;
        }
        if (newest != followed.pod || !followed.stream) startStream(id, newest);
        else scheduleRecheck(id);
    });
}

void ProgressFollower::startStream(const QString &id, const QString &pod)
{
    Followed &f = *m_followed.value(id);
    retire(std::move(f.stream));
    f.pod = pod;
    // The stream reads the log from its first line: the progress starts again from nothing.
    m_progress.insert(id, JobProgress());
    Q_EMIT progressChanged(id);
    Kube::LogStreamOptions options;
    options.tailLines = -1;   // the whole log: the plot shows every step
    options.follow = true;
    f.stream = std::make_unique<Kube::LogStream>(m_kube, m_options.ns, pod, options);
    connect(f.stream.get(), &Kube::LogStream::lines, this, [this, id](const QList<Kube::LogLine> &lines) {
        JobProgress &progress = m_progress[id];
        bool changed = false;
        for (const Kube::LogLine &line : lines) changed = progress.feed(line.text) || changed;
        if (changed) Q_EMIT progressChanged(id);
    });
    connect(f.stream.get(), &Kube::LogStream::finished, this, [this, id] {
        // The container ended. A job that still runs has (or will have) a retried submitter.
        const bool stillRunning = m_tracker && m_tracker->job(id) && m_tracker->job(id)->state == JobState::Running;
        if (stillRunning) {
            scheduleRecheck(id);
        } else {
            unfollow(id);
            fillFreeSlots();
        }
    });
    f.stream->start();
}

void ProgressFollower::scheduleRecheck(const QString &id)
{
    const auto it = m_followed.constFind(id);
    if (it != m_followed.cend()) it.value()->recheck.start();
}

void ProgressFollower::forgetOldEnded()
{
    while (m_ended.size() > m_options.keepEnded) {
        const QString id = m_ended.takeFirst();
        unfollow(id);
        m_progress.remove(id);
    }
}

void readArchivedProgress(S3::S3Client *s3, const JobRecord &record, QObject *context, std::function<void(std::optional<JobProgress>)> done)
{
    const ArchivedLog *driver = pickArchivedLog(record, QString(), QString());
    if (!s3 || !driver) {
        done(std::nullopt);
        return;
    }
    auto file = std::make_shared<QTemporaryFile>(QDir::tempPath() + QStringLiteral("/starforge-log-XXXXXX.log"));
    if (!file->open()) {
        done(std::nullopt);
        return;
    }
    file->close();
    s3->downloadObject(driver->key, file->fileName(), context, [file, context, done](Result<qint64> written) {
        if (!written) {
            done(std::nullopt);
            return;
        }
        // Off the caller's thread: a gigabyte log takes seconds to read line by line.
        auto *watcher = new QFutureWatcher<std::optional<JobProgress>>(context);
        QObject::connect(watcher, &QFutureWatcherBase::finished, context, [watcher, done] {
            watcher->deleteLater();
            done(watcher->result());
        });
        watcher->setFuture(QtConcurrent::run([file]() -> std::optional<JobProgress> {
            if (!file->open()) return std::nullopt;
            JobProgress progress;
            while (!file->atEnd()) progress.feed(file->readLine(1024 * 1024));
            return progress;
        }));
    });
}

} // namespace Starforge::Job
