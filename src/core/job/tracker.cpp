#include "core/job/tracker.h"

#include "core/cluster/capacity.h"
#include "core/cluster/diagnosis.h"
#include "core/job/archiver.h"
#include "core/job/history.h"
#include "core/job/jobsnapshot.h"
#include "core/job/rayjobbuilder.h"
#include "core/kube/informer.h"
#include "core/kube/kubeclient.h"
#include "core/kube/resourcekind.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QSaveFile>

#include <algorithm>

namespace Starforge::Job {

Q_LOGGING_CATEGORY(lcTracker, "starforge.core.tracker")

JobTracker::JobTracker(Kube::KubeClient *kube, S3::S3Client *s3, TrackerOptions options, QObject *parent)
    : QObject(parent)
    , m_kube(kube)
    , m_s3(s3)
    , m_options(std::move(options))
    , m_informer(m_options.rayJobs)
{
    if (!m_informer) {
        Kube::InformerOptions informer;
        informer.ns = m_options.ns;
        informer.labelSelector = labelSelector(m_options.onlyJobId);
        m_ownInformer = std::make_unique<Kube::Informer>(kube, Kube::ResourceKind::rayJobs(), informer);
        m_informer = m_ownInformer.get();
    }
    connect(m_informer, &Kube::Informer::added, this, &JobTracker::onRayJob);
    connect(m_informer, &Kube::Informer::updated, this, [this](const QJsonObject &, const QJsonObject &after) { onRayJob(after); });
    connect(m_informer, &Kube::Informer::deleted, this, &JobTracker::onRayJobDeleted);
    connect(m_informer, &Kube::Informer::synced, this, [this] {
        archiveLostWhileClosed();
        check();
        Q_EMIT synced();
    });
    loadSeen();
    m_timer.setInterval(m_options.checkIntervalMs);
    connect(&m_timer, &QTimer::timeout, this, &JobTracker::check);
}

JobTracker::~JobTracker() = default;

QString JobTracker::labelSelector(const QString &onlyJobId)
{
    QString selector = QLatin1String(Labels::ManagedBy) + u'=' + QLatin1String(Labels::ManagedByValue);
    if (!onlyJobId.isEmpty()) selector += u',' + QLatin1String(Labels::JobId) + u'=' + onlyJobId;
    return selector;
}

void JobTracker::start()
{
    if (m_ownInformer) {
        m_ownInformer->start();
    } else if (m_informer->hasSynced()) {
        // A shared informer that synced before this tracker existed: take what it holds.
        for (const QJsonObject &rayJob : m_informer->list()) onRayJob(rayJob);
        QTimer::singleShot(0, this, [this] {
            archiveLostWhileClosed();
            check();
            Q_EMIT synced();
        });
    }
    m_timer.start();
}

bool JobTracker::hasSynced() const
{
    return m_informer->hasSynced();
}

QList<JobRecord> JobTracker::jobs() const
{
    QList<JobRecord> all;
    for (const Live &live : m_live) all.append(live.record);
    for (const JobRecord &record : m_submitting) {
        if (!m_live.contains(record.id)) all.append(record);
    }
    std::sort(all.begin(), all.end(), [](const JobRecord &a, const JobRecord &b) {
        return a.created != b.created ? a.created > b.created : a.id < b.id;
    });
    return all;
}

std::optional<JobRecord> JobTracker::job(const QString &id) const
{
    if (const auto it = m_live.constFind(id); it != m_live.cend()) return it->record;
    if (const auto it = m_submitting.constFind(id); it != m_submitting.cend()) return *it;
    return std::nullopt;
}

void JobTracker::addSubmitting(const JobRecord &record)
{
    JobRecord submitting = record;
    submitting.state = JobState::Submitting;
    if (!submitting.created.isValid()) submitting.created = QDateTime::currentDateTimeUtc();
    m_submitting.insert(submitting.id, submitting);
    if (!m_live.contains(submitting.id)) Q_EMIT jobChanged(submitting);
}

void JobTracker::removeSubmitting(const QString &id)
{
    if (m_submitting.remove(id) && !m_live.contains(id)) Q_EMIT jobRemoved(id);
}

void JobTracker::onRayJob(const QJsonObject &rayJob)
{
    JobRecord record = JobRecord::fromRayJob(rayJob);
    if (record.id.isEmpty() || m_done.contains(record.id)) {
        return;   // not one of ours, or archived and about to disappear
    }
    if (const auto shaped = checkJobIdentity(rayJob); !shaped) {
        // A RayJob carrying someone's job id under another name would otherwise be archived
        // over that job's archive.
        if (!m_refused.contains(record.rayJobName)) {
            m_refused.insert(record.rayJobName);
            qCWarning(lcTracker).noquote() << shaped.error().message;
        }
        return;
    }
    Live &live = m_live[record.id];
    const bool changed = live.rayJob.isEmpty() || live.record.state != record.state || live.record.message != record.message
        || live.record.deleting != record.deleting;
    live.rayJob = rayJob;
    if (!live.archiving) live.record = record;
    m_submitting.remove(record.id);
    if (changed && !live.archiving) Q_EMIT jobChanged(live.record);
    if (!actsOn(ownershipOf(record))) return;   // its owner's app archives it
    if (changed || !m_seen.contains(record.id)) remember(record.id, rayJob);
    const bool deleteRequested = rayJob[QStringLiteral("metadata")][QStringLiteral("annotations")][QLatin1String(Labels::DeleteRequested)].toString() == u"true";
    if (record.isDeleting() && deleteRequested) {
        return;   // `starforge-cli delete`: the job goes archive and all, and is let go when it is gone
    }
    if (record.isDeleting() && !isTerminal(record.state) && !live.archiving) {
        // Being deleted behind the app's back (kubectl, another tool) while it was still on its
        // way: the operator stops the Ray job, and what the cluster still has is archived now,
        // before the finalizer lets the RayJob and its pods go. Never archived as running.
        JobRecord outcome = record;
        outcome.state = JobState::Stopped;
        outcome.reason = QStringLiteral("DeletedOutsideStarforge");
        outcome.message = tr("The RayJob %1 was deleted outside Starforge while it was %2.").arg(record.rayJobName, jobStateName(record.state).toLower());
        outcome.ended = record.deleting;
        outcome.lost << tr("The RayJob %1 was deleted outside Starforge before it was archived; what its pods still had was kept.").arg(record.rayJobName);
        archive(record.id, outcome, false);
        return;
    }
    if (isTerminal(record.state) && !live.archiving && !live.retryAt.isValid()) {
        archive(record.id, record, false);
    }
}

void JobTracker::onRayJobDeleted(const QJsonObject &rayJob)
{
    const JobRecord record = JobRecord::fromRayJob(rayJob);
    if (record.id.isEmpty()) return;
    const auto it = m_live.find(record.id);
    if (it == m_live.end() || m_done.contains(record.id) || it->archiving) {
        return;   // our own delete after the archive (or the archive will see it gone)
    }
    if (!actsOn(ownershipOf(it->record))
        || rayJob[QStringLiteral("metadata")][QStringLiteral("annotations")][QLatin1String(Labels::DeleteRequested)].toString() == u"true") {
        // Someone else's job went (its owner archived it), or the user deleted it, archive
        // and all (`starforge-cli delete`).
        forget(record.id);
        m_live.erase(it);
        Q_EMIT jobRemoved(record.id);
        return;
    }
    // Deleted behind the app's back (kubectl, another tool): keep what is known.
    JobRecord outcome = it->record;
    if (!isTerminal(outcome.state)) {
        outcome.state = JobState::Stopped;
        outcome.reason = QStringLiteral("DeletedOutsideStarforge");
        outcome.message = tr("The RayJob %1 was deleted outside Starforge while it was %2.").arg(outcome.rayJobName, jobStateName(it->record.state).toLower());
    }
    outcome.lost << tr("The RayJob %1 was deleted outside Starforge before it was archived; what its pods still had was kept.").arg(outcome.rayJobName);
    it->rayJob = rayJob;
    archive(record.id, outcome, true);
}

void JobTracker::check()
{
    if (!m_informer->hasSynced()) return;
    const QDateTime now = QDateTime::currentDateTimeUtc();
    for (auto it = m_live.begin(); it != m_live.end(); ++it) {
        Live &live = *it;
        if (live.archiving || live.archived || !actsOn(ownershipOf(live.record))) continue;
        if (live.retryAt.isValid()) {
            if (now >= live.retryAt) {
                live.retryAt = {};
                archive(it.key(), live.record, false);
            }
            continue;
        }
        // The deadline the job was submitted with, never this viewer's setting.
        const int deadline = live.record.preRunningDeadlineSeconds;
        if (live.record.state != JobState::Pending || live.record.isDeleting() || deadline <= 0 || !live.record.created.isValid()) continue;
        // Counted as the operator counts it: from status.startTime, which KubeRay sets when the
        // job leaves New and sets again on a retry and on a resume; before that, from the
        // creation. A job Suspended (or Suspending) waits in a queue: its deadline is paused,
        // and starts again with the resume's new startTime. Retrying is paused the same way,
        // the operator tearing the failed attempt down before the next one starts. Both go
        // through New keeping the old startTime until the operator's next reconcile sets the
        // new one, so a New job with a startTime is not counted either (one without has never
        // been started by the operator: it counts from its creation, whatever holds it up).
        const QJsonObject status = live.rayJob.value(QStringLiteral("status")).toObject();
        const QString deployment = status.value(QStringLiteral("jobDeploymentStatus")).toString();
        if (deployment == QLatin1String("Suspended") || deployment == QLatin1String("Suspending") || deployment == QLatin1String("Retrying")) continue;
        if (deployment.isEmpty() && status.contains(QStringLiteral("startTime"))) continue;
        QDateTime start = QDateTime::fromString(status.value(QStringLiteral("startTime")).toString(), Qt::ISODate);
        if (!start.isValid() || start < live.record.created) start = live.record.created;
        const bool operatorFailsIt = live.record.deadlineInSpec && m_options.operatorEnforcesDeadline;
        const qint64 limit = deadline + (operatorFailsIt ? m_options.deadlineGraceSeconds : 0);
        if (start.secsTo(now) < limit) continue;
        JobRecord outcome = live.record;
        outcome.state = JobState::Failed;
        outcome.reason = QStringLiteral("PreRunningDeadlineExceeded");
        outcome.message = start == live.record.created
            ? tr("Not running %1 s after it was submitted (the pre-running deadline it was submitted with, "
                 "FORGE_KUBERAY_PRERUNNING_DEADLINE_S = %2 s); Starforge failed it.")
                  .arg(start.secsTo(now))
                  .arg(deadline)
            : tr("Not running %1 s after the operator started it (the pre-running deadline it was submitted with, "
                 "FORGE_KUBERAY_PRERUNNING_DEADLINE_S = %2 s); Starforge failed it.")
                  .arg(start.secsTo(now))
                  .arg(deadline);
        outcome.ended = now;
        archive(it.key(), outcome, false);
    }
}

void JobTracker::archive(const QString &id, JobRecord outcome, bool rayJobGone)
{
    Live &live = m_live[id];
    live.archiving = true;
    const bool changed = live.record.state != outcome.state || live.record.message != outcome.message;
    live.record = outcome;
    if (!rayJobGone && changed) Q_EMIT jobChanged(live.record);   // the app's own verdict (deadline, stop)
    m_archiveQueue.append([this, id, outcome, rayJobGone] { snapshotAndArchive(id, outcome, rayJobGone); });
    pumpArchives();
}

void JobTracker::snapshotAndArchive(const QString &id, JobRecord outcome, bool rayJobGone)
{
    SnapshotRequest request;
    request.ns = m_options.ns;
    request.job = id;
    request.rayJobName = outcome.rayJobName;
    request.withSubmitterLog = true;
    fetchJobSnapshot(m_kube, request, this, [this, id, outcome, rayJobGone](Result<JobSnapshot> snapshot) mutable {
        if (!snapshot) {
            Live &failed = m_live[id];
            failed.archiving = false;
            scheduleRetry(failed);
            --m_archivesRunning;
            Q_EMIT archiveFailed(id, snapshot.error().message);
            pumpArchives();
            return;
        }
        if (!snapshot->rayJob) {
            // Gone already. Another tracker (the GUI, a `submit --wait`, another workstation)
            // may have archived and deleted it: that archive is complete, and one made from the
            // last state seen here would overwrite it with less.
            readArchivedJob(m_s3, id, this, [this, id, outcome, rayJobGone, taken = std::move(*snapshot)](Result<JobRecord> existing) mutable {
                if (existing && existing->archived) {
                    adoptArchive(id, *existing);
                    return;
                }
                taken.rayJob = m_live.value(id).rayJob;   // archive from the last state seen
                taken.rayJobName = outcome.rayJobName;
                startArchiver(id, std::move(outcome), std::move(taken), rayJobGone);
            });
            return;
        }
        startArchiver(id, std::move(outcome), std::move(*snapshot), rayJobGone);
    });
}

void JobTracker::adoptArchive(const QString &id, const JobRecord &existing)
{
    std::function<void(Result<JobRecord>)> done;
    if (auto it = m_live.find(id); it != m_live.end()) {
        done = std::move(it->onArchived);
        m_live.erase(it);
    }
    m_done.insert(id);
    forget(id);
    --m_archivesRunning;
    Q_EMIT jobArchived(existing);
    Q_EMIT jobRemoved(id);
    if (done) done(existing);
    pumpArchives();
}

void JobTracker::startArchiver(const QString &id, JobRecord outcome, JobSnapshot taken, bool rayJobGone)
{
    // A job that ended without ever running: say why, from its events and pods.
    if (outcome.state == JobState::Failed && !outcome.started.isValid()) {
        const Cluster::CapacityModel *capacity = m_options.capacity && m_options.capacity->isSynced() ? &m_options.capacity->model() : nullptr;
        const Cluster::Diagnosis d = Cluster::diagnose(taken.diagnosisInput(capacity, m_options.seriesLabel));
        if (d.cause != Cluster::Cause::Unknown || outcome.cause.isEmpty()) {
            outcome.cause = d.causeId();
            if (d.cause == Cluster::Cause::PreRunningDeadlineExceeded) {
                outcome.message = d.message;   // the operator's verdict, retold with its cause
            } else if (!d.message.isEmpty() && !outcome.message.contains(d.message)) {
                outcome.message = outcome.message.isEmpty() ? d.message : outcome.message + u' ' + d.message;
            }
        }
    }
    if (!outcome.ended.isValid()) outcome.ended = QDateTime::currentDateTimeUtc();
    ArchiveRequest work;
    work.record = outcome;
    work.snapshot = std::move(taken);
    work.ns = m_options.ns;
    work.deleteRayJob = !rayJobGone;
    auto *archiver = new JobArchiver(m_kube, m_s3, std::move(work), this);
    connect(archiver, &JobArchiver::finished, this, [this, id, archiver] { archiveFinished(id, archiver); });
    archiver->start();
}

void JobTracker::scheduleRetry(Live &live)
{
    const qint64 delay = std::min<qint64>(static_cast<qint64>(m_options.archiveRetryMs) << std::min(live.failedArchives, 16), m_options.archiveRetryMaxMs);
    ++live.failedArchives;
    live.retryAt = QDateTime::currentDateTimeUtc().addMSecs(delay);
}

void JobTracker::pumpArchives()
{
    while (m_archivesRunning < std::max(1, m_options.maxParallelArchives) && !m_archiveQueue.isEmpty()) {
        ++m_archivesRunning;
        m_archiveQueue.takeFirst()();
    }
}

void JobTracker::archiveFinished(const QString &id, JobArchiver *archiver)
{
    archiver->deleteLater();
    --m_archivesRunning;
    const Result<JobRecord> &result = archiver->result();
    auto it = m_live.find(id);
    std::function<void(Result<JobRecord>)> done;
    if (it != m_live.end()) {
        done = std::move(it->onArchived);
        it->onArchived = {};
    }
    if (result) {
        m_done.insert(id);
        forget(id);
        m_live.remove(id);
        Q_EMIT jobArchived(*result);
        Q_EMIT jobRemoved(id);
    } else if (it != m_live.end()) {
        it->archiving = false;
        scheduleRetry(*it);
        Q_EMIT archiveFailed(id, result.error().message);
    }
    if (done) done(result);
    pumpArchives();
}

void JobTracker::stopJob(const QString &id, std::function<void(Result<JobRecord>)> done)
{
    const auto it = m_live.find(id);
    if (it == m_live.end()) {
        if (done) done(Error::notFound(tr("No job %1 is on the cluster; it may have ended and been archived already (see the job history).").arg(id)));
        return;
    }
    if (const Ownership ownership = ownershipOf(it->record); !actsOn(ownership)) {
        if (done) done(notYours(it->record, ownership, tr("stop")));
        return;
    }
    Q_EMIT stopRequested(id);
    if (it->archiving || isTerminal(it->record.state)) {
        // Already ending: report when its archive is done.
        it->onArchived = std::move(done);
        if (!it->archiving) archive(id, it->record, false);
        return;
    }
    it->onArchived = std::move(done);
    JobRecord outcome = it->record;
    outcome.state = JobState::Stopped;
    outcome.reason = QStringLiteral("StoppedByUser");
    outcome.message = tr("Stopped from Starforge while it was %1.").arg(jobStateName(it->record.state).toLower());
    outcome.ended = QDateTime::currentDateTimeUtc();
    archive(id, outcome, false);
}

void JobTracker::loadSeen()
{
    if (m_options.seenJobsFile.isEmpty()) return;
    QFile file(m_options.seenJobsFile);
    if (!file.open(QIODevice::ReadOnly)) return;   // none yet
    const QJsonObject jobs = QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("jobs")).toObject();
    for (auto it = jobs.begin(); it != jobs.end(); ++it) {
        if (it.value().isObject() && (m_options.onlyJobId.isEmpty() || it.key() == m_options.onlyJobId)) m_seen.insert(it.key(), it.value().toObject());
    }
}

void JobTracker::remember(const QString &id, const QJsonObject &rayJob)
{
    if (m_options.seenJobsFile.isEmpty()) return;
    m_seen.insert(id, rayJob);
    saveSeen();
}

void JobTracker::forget(const QString &id)
{
    if (m_options.seenJobsFile.isEmpty() || !m_seen.remove(id)) return;
    saveSeen();
}

void JobTracker::saveSeen()
{
    // Another tracker of the same cluster (a `submit --wait`) may have written since: its jobs
    // are kept unless this one has the newer word on them.
    QJsonObject jobs;
    if (QFile file(m_options.seenJobsFile); file.open(QIODevice::ReadOnly)) {
        jobs = QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("jobs")).toObject();
    }
    for (const QString &id : std::as_const(m_done)) jobs.remove(id);
    for (auto it = m_live.cbegin(); it != m_live.cend(); ++it) {
        if (!m_seen.contains(it.key())) jobs.remove(it.key());
    }
    for (auto it = m_seen.cbegin(); it != m_seen.cend(); ++it) jobs.insert(it.key(), it.value());
    QDir().mkpath(QFileInfo(m_options.seenJobsFile).absolutePath());
    QSaveFile out(m_options.seenJobsFile);
    if (!out.open(QIODevice::WriteOnly)) {
        qCWarning(lcTracker).noquote() << "cannot write" << m_options.seenJobsFile << out.errorString();
        return;
    }
    out.write(QJsonDocument(QJsonObject{{QStringLiteral("format"), QStringLiteral("starforge-seen-jobs/1")}, {QStringLiteral("jobs"), jobs}})
                  .toJson(QJsonDocument::Compact));
    if (!out.commit()) qCWarning(lcTracker).noquote() << "cannot write" << m_options.seenJobsFile << out.errorString();
}

void JobTracker::archiveLostWhileClosed()
{
    if (m_seenChecked) return;
    m_seenChecked = true;
    const QHash<QString, QJsonObject> seen = m_seen;
    for (auto it = seen.cbegin(); it != seen.cend(); ++it) {
        const QString &id = it.key();
        if (m_live.contains(id) || m_done.contains(id)) continue;
        // Gone from the cluster while no tracker ran. The archive (if another tracker made one)
        // wins; else it is archived from the last state seen here (snapshotAndArchive).
        JobRecord record = JobRecord::fromRayJob(it.value());
        if (record.id != id || !actsOn(ownershipOf(record))) {
            forget(id);
            continue;
        }
        JobRecord outcome = record;
        outcome.deleting = {};
        if (!isTerminal(outcome.state)) {
            outcome.state = JobState::Stopped;
            outcome.reason = QStringLiteral("RayJobLost");
            outcome.message = tr("The RayJob %1 was deleted while no Starforge tracker ran; it was last seen %2, and how it ended is unknown.")
                                  .arg(record.rayJobName, jobStateName(record.state).toLower());
        }
        Live &live = m_live[id];
        live.record = outcome;
        live.rayJob = it.value();
        archive(id, outcome, true);
    }
}

} // namespace Starforge::Job
