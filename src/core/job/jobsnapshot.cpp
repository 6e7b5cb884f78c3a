#include "core/job/jobsnapshot.h"

#include "core/job/rayjobbuilder.h"
#include "core/kube/kubeclient.h"
#include "core/kube/resourcekind.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QPointer>

#include <algorithm>
#include <memory>

namespace Starforge::Job {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(JobSnapshot)
};

// One gathering: the RayJob first (its cluster's name and job id lead to the rest), then the
// cluster, pods and events side by side, then the submitter's log.
class SnapshotFetch final : public QObject
{
public:
    SnapshotFetch(Kube::KubeClient *client, SnapshotRequest request, QObject *context, std::function<void(Result<JobSnapshot>)> done)
        : QObject(context)
        , m_client(client)
        , m_request(std::move(request))
        , m_done(std::move(done))
    {
    }

    void start()
    {
        if (m_request.rayJobName.isEmpty() && RayJobBuilder::isJobId(m_request.job)) {
            m_snapshot.jobId = m_request.job;
            Kube::ApiRequest list;
            list.path = Kube::ResourceKind::rayJobs().path(m_request.ns);
            list.query.addQueryItem(QStringLiteral("labelSelector"), QLatin1String(Labels::JobId) + u'=' + m_request.job);
            list.what = Text::tr("find job %1").arg(m_request.job);
            m_client->send(list, this, [this](const Kube::ApiResult &result) {
                if (!result.ok()) {
                    finish(result.error->toError());
                    return;
                }
                const QJsonArray items = result.json().value(QStringLiteral("items")).toArray();
                if (!items.isEmpty()) {
                    takeRayJob(items.first().toObject());
                }
                gather();
            });
            return;
        }
        m_snapshot.rayJobName = m_request.rayJobName.isEmpty() ? m_request.job : m_request.rayJobName;
        Kube::ApiRequest get;
        get.path = Kube::ResourceKind::rayJobs().path(m_request.ns, m_snapshot.rayJobName);
        get.what = QStringLiteral("read RayJob %1").arg(m_snapshot.rayJobName);
        m_client->send(get, this, [this](const Kube::ApiResult &result) {
            if (result.ok()) {
                takeRayJob(result.json());
            } else if (result.status != 404) {
                finish(result.error->toError());
                return;
            }
            gather();
        });
    }

private:
    void takeRayJob(const QJsonObject &rayJob)
    {
        m_snapshot.rayJob = rayJob;
        const QJsonObject meta = rayJob.value(QStringLiteral("metadata")).toObject();
        m_snapshot.rayJobName = meta.value(QStringLiteral("name")).toString();
        const QString id = meta.value(QStringLiteral("labels")).toObject().value(QLatin1String(Labels::JobId)).toString();
        if (!id.isEmpty()) {
            m_snapshot.jobId = id;
        }
        m_clusterName = rayJob.value(QStringLiteral("status")).toObject().value(QStringLiteral("rayClusterName")).toString();
    }

    void gather()
    {
        if (!m_snapshot.rayJob && m_snapshot.rayJobName.isEmpty()) {
            finish(std::move(m_snapshot));   // an id the cluster does not know
            return;
        }
        if (!m_clusterName.isEmpty()) {
            Kube::ApiRequest get;
            get.path = Kube::ResourceKind::rayClusters().path(m_request.ns, m_clusterName);
            get.what = QStringLiteral("read RayCluster %1").arg(m_clusterName);
            send(get, [this](const Kube::ApiResult &result) {
                if (result.ok()) m_snapshot.rayCluster = result.json();
                return result.ok() || result.status == 404;
            });
        }
        // Ray pods carry the job id on every template (they outlive a retry's cluster name);
        // the submitter's pods carry the Job's name, which is the RayJob's.
        QStringList selectors{QStringLiteral("job-name=") + m_snapshot.rayJobName};
        if (!m_snapshot.jobId.isEmpty()) {
            selectors << QLatin1String(Labels::JobId) + u'=' + m_snapshot.jobId;
        } else if (!m_clusterName.isEmpty()) {
            selectors << QStringLiteral("ray.io/cluster=") + m_clusterName;
        }
        for (const QString &selector : std::as_const(selectors)) {
            Kube::ApiRequest list;
            list.path = Kube::ResourceKind::pods().path(m_request.ns);
            list.query.addQueryItem(QStringLiteral("labelSelector"), selector);
            list.what = Text::tr("list the job's pods");
            send(list, [this](const Kube::ApiResult &result) {
                if (!result.ok()) return false;
                for (const QJsonValue &item : result.json().value(QStringLiteral("items")).toArray()) {
                    const QString uid = item[QStringLiteral("metadata")][QStringLiteral("uid")].toString();
                    if (!m_podUids.contains(uid)) {
                        m_podUids.insert(uid);
                        m_snapshot.pods.append(item.toObject());
                    }
                }
                return true;
            });
        }
        // Everything of a job is named after its RayJob: the cluster (<rayjob>-xxxxx), its pods
        // (<cluster>-head-xxxxx ...), the submitter Job (<rayjob>) and its pods.
        Kube::ApiRequest events;
        events.path = Kube::ResourceKind::events().path(m_request.ns);
        events.what = Text::tr("list events");
        send(events, [this](const Kube::ApiResult &result) {
            if (!result.ok()) return false;
            const QString &name = m_snapshot.rayJobName;
            for (const QJsonValue &item : result.json().value(QStringLiteral("items")).toArray()) {
                const QString regarding = Kube::Event::fromJson(item.toObject()).regardingName;
                if (regarding == name || regarding.startsWith(name + u'-')) {
                    m_snapshot.events.append(item.toObject());
                }
            }
            return true;
        });
    }

    void send(const Kube::ApiRequest &request, std::function<bool(const Kube::ApiResult &)> take)
    {
        ++m_pending;
        m_client->send(request, this, [this, take = std::move(take)](const Kube::ApiResult &result) {
            if (!take(result) && !m_error) {
                m_error = result.error ? result.error->toError() : Error::unavailable(Text::tr("unexpected answer from the API server"));
            }
            if (--m_pending == 0) {
                afterGather();
            }
        });
    }

    void afterGather()
    {
        if (m_error) {
            finish(*m_error);
            return;
        }
        // Each event's time read once, then ordered.
        QList<std::pair<QDateTime, QJsonObject>> timed;
        timed.reserve(m_snapshot.events.size());
        for (const QJsonObject &e : std::as_const(m_snapshot.events)) timed.append({Kube::Event::fromJson(e).lastSeen, e});
        std::stable_sort(timed.begin(), timed.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
        m_snapshot.events.clear();
        for (auto &[time, e] : timed) m_snapshot.events.append(std::move(e));
        if (!m_request.withSubmitterLog) {
            finish(std::move(m_snapshot));
            return;
        }
        // Every submitter pod, oldest first: a retried submission leaves earlier ones beside
        // it, and the newest may not have started yet while an older one holds the failure.
        for (const QJsonObject &pod : std::as_const(m_snapshot.pods)) {
            if (Cluster::PodInfo::fromJson(pod).role() == QLatin1String("submitter")) m_submitters.append(pod);
        }
        auto created = [](const QJsonObject &pod) { return pod[QStringLiteral("metadata")][QStringLiteral("creationTimestamp")].toString(); };
        std::stable_sort(m_submitters.begin(), m_submitters.end(),
                         [&created](const QJsonObject &x, const QJsonObject &y) { return created(x) < created(y); });   // RFC 3339 UTC sorts as text
        readSubmitterLogs();
    }

    // The tails of the submitter pods' logs, one after another into submitterLog.
    void readSubmitterLogs()
    {
        if (m_submitters.isEmpty()) {
            finish(std::move(m_snapshot));
            return;
        }
        Kube::ApiRequest log;
        log.path = Kube::ResourceKind::pods().path(m_request.ns, Kube::Pod::fromJson(m_submitters.takeFirst()).name, QStringLiteral("log"));
        log.query.addQueryItem(QStringLiteral("tailLines"), QString::number(m_request.submitterLogTailLines));
        log.what = Text::tr("read the submitter's log");
        m_client->send(log, this, [this](const Kube::ApiResult &result) {
            // A log that cannot be read yet (the container waits) adds nothing.
            if (result.ok()) m_snapshot.submitterLog += QString::fromUtf8(result.body);
            readSubmitterLogs();
        });
    }

    void finish(Result<JobSnapshot> result)
    {
        auto done = std::move(m_done);
        deleteLater();
        if (done) done(std::move(result));
    }

    Kube::KubeClient *m_client;
    SnapshotRequest m_request;
    std::function<void(Result<JobSnapshot>)> m_done;
    JobSnapshot m_snapshot;
    QString m_clusterName;
    QSet<QString> m_podUids;
    QList<QJsonObject> m_submitters;   // whose logs are still to be read
    int m_pending = 0;
    std::optional<Error> m_error;
};

} // namespace

QList<Kube::Event> JobSnapshot::typedEvents() const
{
    QList<Kube::Event> typed;
    typed.reserve(events.size());
    for (const QJsonObject &e : events) typed.append(Kube::Event::fromJson(e));
    return typed;
}

Cluster::DiagnosisInput JobSnapshot::diagnosisInput(const Cluster::CapacityModel *capacity, const QString &seriesLabel) const
{
    Cluster::DiagnosisInput in;
    if (rayJob) in.rayJob = Kube::RayJob::fromJson(*rayJob);
    if (rayCluster) in.rayCluster = Kube::RayCluster::fromJson(*rayCluster);
    for (const QJsonObject &pod : pods) in.pods.append(Cluster::PodInfo::fromJson(pod));
    in.events = typedEvents();
    in.submitterLog = submitterLog;
    in.capacity = capacity;
    if (!seriesLabel.isEmpty()) in.seriesLabel = seriesLabel;
    return in;
}

void fetchJobSnapshot(Kube::KubeClient *client, const SnapshotRequest &request, QObject *context, std::function<void(Result<JobSnapshot>)> done)
{
    auto *fetch = new SnapshotFetch(client, request, context, std::move(done));
    fetch->start();
}

} // namespace Starforge::Job
