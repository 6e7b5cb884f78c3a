#include "core/job/archiver.h"

#include "core/kube/kubeclient.h"
#include "core/kube/resourcekind.h"
#include "core/s3/multipartupload.h"
#include "core/s3/s3client.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QRegularExpression>
#include <QTemporaryFile>

namespace Starforge::Job {

namespace {

// The API server keeps events for an hour unless its --event-ttl says otherwise.
constexpr qint64 EventTtlSeconds = 3600;

// The operator's deletion policy that applies to a finished RayJob, and its TTL in seconds
// (docs/kuberay.md, "Deletion"): the most destructive deletionRules rule matching its status,
// the legacy onSuccess/onFailure policy with ttlSecondsAfterFinished, or shutdownAfterJobFinishes
// (DeleteCluster; DeleteSelf only when the operator runs with DELETE_RAYJOB_CR_AFTER_JOB_FINISHES,
// which the app cannot see). Empty policy: nothing is deleted.
struct DeletionPolicy
{
    QString policy;     // DeleteSelf, DeleteCluster, DeleteWorkers
    qint64 ttl = 0;
    QString how;        // "deletionRules", "deletionStrategy.onSuccess", "shutdownAfterJobFinishes"
};

DeletionPolicy deletionPolicyOf(const QJsonObject &rayJob)
{
    const QJsonObject spec = rayJob.value(QStringLiteral("spec")).toObject();
    const QJsonObject status = rayJob.value(QStringLiteral("status")).toObject();
    const QJsonObject strategy = spec.value(QStringLiteral("deletionStrategy")).toObject();
    const qint64 ttl = spec.value(QStringLiteral("ttlSecondsAfterFinished")).toInteger(0);
    const auto impact = [](const QString &p) {
        return p == QLatin1String("DeleteSelf") ? 3 : p == QLatin1String("DeleteCluster") ? 2 : p == QLatin1String("DeleteWorkers") ? 1 : 0;
    };
    if (const QJsonArray rules = strategy.value(QStringLiteral("deletionRules")).toArray(); !rules.isEmpty()) {
        DeletionPolicy best{{}, 0, QStringLiteral("deletionRules")};
        for (const QJsonValue &v : rules) {
            const QJsonObject condition = v[QStringLiteral("condition")].toObject();
            const bool matches = condition.contains(QStringLiteral("jobStatus"))
                ? condition.value(QStringLiteral("jobStatus")) == status.value(QStringLiteral("jobStatus"))
                : condition.value(QStringLiteral("jobDeploymentStatus")) == status.value(QStringLiteral("jobDeploymentStatus"));
            const QString policy = v[QStringLiteral("policy")].toString();
            if (matches && impact(policy) > impact(best.policy)) {
                best.policy = policy;
                best.ttl = condition.value(QStringLiteral("ttlSeconds")).toInteger(0);
            }
        }
        const QString jobStatus = status.value(QStringLiteral("jobStatus")).toString();
        if (best.policy.isEmpty() && jobStatus != QLatin1String("SUCCEEDED") && jobStatus != QLatin1String("FAILED")) {
            // Last seen before it ended: the most destructive rule is the likeliest to have acted.
            for (const QJsonValue &v : rules) {
                if (impact(v[QStringLiteral("policy")].toString()) > impact(best.policy)) {
                    best.policy = v[QStringLiteral("policy")].toString();
                    best.ttl = v[QStringLiteral("condition")][QStringLiteral("ttlSeconds")].toInteger(0);
                }
            }
        }
        return best;
    }
    if (strategy.contains(QStringLiteral("onSuccess")) || strategy.contains(QStringLiteral("onFailure"))) {
        const QString key = status.value(QStringLiteral("jobStatus")).toString() == QLatin1String("SUCCEEDED") ? QStringLiteral("onSuccess") : QStringLiteral("onFailure");
        const QString policy = strategy.value(key).toObject().value(QStringLiteral("policy")).toString();
        return {impact(policy) > 0 ? policy : QString(), ttl, QStringLiteral("deletionStrategy.") + key};
    }
    if (spec.value(QStringLiteral("shutdownAfterJobFinishes")).toBool()) return {QStringLiteral("DeleteCluster"), ttl, QStringLiteral("shutdownAfterJobFinishes")};
    return {};
}

// untranslated: a MIME type
const QByteArray LogType = "text/plain; charset=utf-8";
const QByteArray JsonType = "application/json";

QByteArray toJson(const QJsonValue &value)
{
    return value.isArray() ? QJsonDocument(value.toArray()).toJson(QJsonDocument::Indented)
                           : QJsonDocument(value.toObject()).toJson(QJsonDocument::Indented);
}

// A container has a log once it has started at least once.
bool hasStarted(const QJsonObject &status)
{
    const QJsonObject state = status.value(QStringLiteral("state")).toObject();
    return state.contains(QStringLiteral("running")) || state.contains(QStringLiteral("terminated"))
        || status.value(QStringLiteral("lastState")).toObject().contains(QStringLiteral("terminated"));
}

} // namespace

JobArchiver::JobArchiver(Kube::KubeClient *kube, S3::S3Client *s3, ArchiveRequest request, QObject *parent)
    : QObject(parent)
    , m_kube(kube)
    , m_s3(s3)
    , m_request(std::move(request))
{
}

JobArchiver::~JobArchiver() = default;

void JobArchiver::start()
{
    JobRecord &record = m_request.record;
    if (record.id.isEmpty()) {
        finish(Error::internal(tr("A job without a job id cannot be archived.")));
        return;
    }
    record.logs.clear();
    planLogs();
    nextLogs();
}

void JobArchiver::planLogs()
{
    JobRecord &record = m_request.record;
    const JobSnapshot &snapshot = m_request.snapshot;
    bool haveRayPods = false;
    bool haveSubmitter = false;
    for (const QJsonObject &pod : snapshot.pods) {
        const Cluster::PodInfo info = Cluster::PodInfo::fromJson(pod);
        const QString role = info.role();
        haveRayPods |= role == QLatin1String("head") || role.startsWith(QLatin1String("worker"));
        haveSubmitter |= role == QLatin1String("submitter");
        const QJsonObject status = pod.value(QStringLiteral("status")).toObject();
        if (!status.contains(QStringLiteral("containerStatuses")) && !status.contains(QStringLiteral("initContainerStatuses"))) {
            const auto scheduled = info.view.condition(QStringLiteral("PodScheduled"));
            record.lost << (scheduled && !scheduled->isTrue()
                                ? tr("The logs of pod %1: it was never scheduled (%2).").arg(info.view.name, scheduled->reason)
                                : tr("The logs of pod %1: its containers never started.").arg(info.view.name));
            continue;
        }
        for (const char *list : {"initContainerStatuses", "containerStatuses"}) {
            for (const QJsonValue &c : status.value(QLatin1String(list)).toArray()) {
                const QString container = c[QStringLiteral("name")].toString();
                if (hasStarted(c.toObject())) {
                    m_logQueue.append({info.view.name, container, role});
                } else {
                    record.lost << tr("The log of %1 in pod %2: the container never started (%3).")
                                       .arg(container, info.view.name,
                                            c[QStringLiteral("state")][QStringLiteral("waiting")][QStringLiteral("reason")].toString(QStringLiteral("waiting")));
                }
            }
        }
    }
    // What the cluster no longer has. A job that ended while nobody watched has lost its Ray
    // pods to shutdownAfterJobFinishes; the submitter's Job stays with the RayJob.
    if (snapshot.rayJob) {
        const Kube::RayJob rayJob = Kube::RayJob::fromJson(*snapshot.rayJob);
        const DeletionPolicy deletion = deletionPolicyOf(*snapshot.rayJob);
        if (!m_request.deleteRayJob) {
            // Archived from the last state seen: the RayJob itself went first.
            record.lost << (deletion.policy == QLatin1String("DeleteSelf")
                                ? tr("The RayJob %1 itself: the operator deleted it (%2 DeleteSelf, %3 s after the job ended) before Starforge "
                                     "archived it, and its RayCluster, submitter Job and pods went with it; its final status is the last one Starforge saw.")
                                      .arg(rayJob.name, deletion.how).arg(deletion.ttl)
                            : deletion.how == QLatin1String("shutdownAfterJobFinishes")
                                ? tr("The RayJob %1 itself was deleted before Starforge archived it (by a person or tool, or by an operator running "
                                     "with DELETE_RAYJOB_CR_AFTER_JOB_FINISHES=true, %2 s after the job ended); its RayCluster, submitter Job and "
                                     "pods went with it, and its final status is the last one Starforge saw.")
                                      .arg(rayJob.name).arg(deletion.ttl)
                                : tr("The RayJob %1 itself was deleted before Starforge archived it; its RayCluster, submitter Job and pods went "
                                     "with it, and its final status is the last one Starforge saw.").arg(rayJob.name));
        }
        bool haveWorkers = false;
        for (const QJsonObject &pod : snapshot.pods) haveWorkers |= Cluster::PodInfo::fromJson(pod).role().startsWith(QLatin1String("worker"));
        const QString by = deletion.how == QLatin1String("shutdownAfterJobFinishes") ? deletion.how : QStringLiteral("%1 %2").arg(deletion.how, deletion.policy);
        if (!haveRayPods && !rayJob.rayClusterName.isEmpty() && m_request.deleteRayJob) {
            record.lost << (snapshot.rayCluster ? tr("Head and worker logs: the pods of RayCluster %1 were already gone.").arg(rayJob.rayClusterName)
                                                : tr("Head and worker logs: RayCluster %1 was already deleted (%2, %3 s after the job ended).")
                                                      .arg(rayJob.rayClusterName, deletion.policy.isEmpty() ? QStringLiteral("shutdownAfterJobFinishes") : by)
                                                      .arg(deletion.ttl));
        } else if (haveRayPods && !haveWorkers && deletion.policy == QLatin1String("DeleteWorkers") && !rayJob.rayClusterSpec.workers.isEmpty()) {
            record.lost << tr("Worker logs: the operator removed the worker pods of RayCluster %1 (%2, %3 s after the job ended).")
                               .arg(rayJob.rayClusterName, by).arg(deletion.ttl);
        }
        if (!haveSubmitter && (rayJob.jobDeploymentStatus == QLatin1String("Running") || !rayJob.jobStatus.isEmpty())) {
            record.lost << tr("The driver's log: the submitter pod of %1 was already gone.").arg(rayJob.name);
        }
    } else {
        record.lost << tr("The RayJob %1 was deleted before Starforge archived it: its pods, logs and final status are gone.")
                           .arg(record.rayJobName.isEmpty() ? record.id : record.rayJobName);
    }
    const QDateTime ended = record.ended.isValid() ? record.ended : record.created;
    if (ended.isValid() && ended.secsTo(QDateTime::currentDateTimeUtc()) > EventTtlSeconds) {
        record.lost << tr("Events older than an hour: the API server keeps events for an hour by default, and the job ended %1 min before it was archived.")
                           .arg(ended.secsTo(QDateTime::currentDateTimeUtc()) / 60);
    }
}

void JobArchiver::nextLogs()
{
    if (m_result) {
        return;
    }
    while (m_logsInFlight < std::max(1, m_request.parallelLogs) && !m_logQueue.isEmpty()) {
        fetchLog(m_logQueue.takeFirst());
    }
    if (m_logsInFlight == 0 && m_logQueue.isEmpty()) {
        writeRecord();
    }
}

QString temporaryLogTemplate()
{
    return QDir::tempPath() + QStringLiteral("/starforge-log-XXXXXX.log");
}

struct JobArchiver::LogTransfer
{
    LogTask task;
    QString key;
    std::unique_ptr<QTemporaryFile> file;
    QPointer<S3::MultipartUpload> upload;

    ~LogTransfer()
    {
        // An archive that ended early (failed, or its archiver deleted): the upload is aborted
        // on the server, so no parts are left behind, and goes once it has.
        if (upload) {
            upload->disconnect();
            QObject::connect(upload, &S3::MultipartUpload::finished, upload, &QObject::deleteLater);
            upload->cancel();
        }
    }
};

void JobArchiver::fetchLog(const LogTask &task)
{
    ++m_logsInFlight;
    auto transfer = std::make_shared<LogTransfer>();
    transfer->task = task;
    transfer->key = ArchiveKeys::log(m_request.record.id, task.pod, task.container);
    transfer->file = std::make_unique<QTemporaryFile>(temporaryLogTemplate());
    if (!transfer->file->open()) {
        finish(Error::io(tr("Cannot make a temporary file for the log of %1 in pod %2 in %3: %4")
                             .arg(task.container, task.pod, QDir::tempPath(), transfer->file->errorString())));
        return;
    }
    m_transfers.append(transfer);
    Kube::ApiRequest request;
    request.path = Kube::ResourceKind::pods().path(m_request.ns, task.pod, QStringLiteral("log"));
    request.query.addQueryItem(QStringLiteral("container"), task.container);
    request.what = tr("read the log of %1 in pod %2").arg(task.container, task.pod);
    // Streamed to the file, so its size is bounded by the disk. The timeout is Qt's transfer
    // timeout, which counts from the last byte received, not from the start.
    request.sink = transfer->file.get();
    request.timeoutMs = 300000;
    m_kube->send(request, this, [this, transfer](const Kube::ApiResult &result) {
        if (m_result) {
            return;
        }
        if (!result.ok()) {
            // A pod can go between the snapshot and the read: the log is lost, the archive goes on.
            if (result.error->kind == Kube::ApiError::Kind::NotFound || result.error->kind == Kube::ApiError::Kind::Invalid) {
                m_request.record.lost << tr("The log of %1 in pod %2: %3").arg(transfer->task.container, transfer->task.pod, result.error->message);
                logDone(transfer);
            } else {
                finish(result.error->toError());
            }
            return;
        }
        storeLog(transfer);
    });
}

void JobArchiver::storeLog(const std::shared_ptr<LogTransfer> &transfer)
{
    QTemporaryFile &file = *transfer->file;
    if (!file.flush()) {
        finish(Error::io(tr("Cannot write the log of %1 in pod %2 to %3: %4").arg(transfer->task.container, transfer->task.pod, file.fileName(), file.errorString())));
        return;
    }
    const qint64 size = file.size();
    m_request.record.logs.append({transfer->task.pod, transfer->task.container, transfer->task.role, transfer->key, size});
    // The driver's log ends with the runner's list of servable checkpoints: the record keeps it,
    // read from the file's tail.
    const QString &role = transfer->task.role;
    if (role == QLatin1String("submitter") || role == QLatin1String("head")) {
        if (auto checkpoints = servableCheckpointsAtTheEnd(file)) m_checkpointLists.insert(role, *checkpoints);
    }
    if (size <= m_request.singlePutMaxBytes) {
        file.seek(0);
        put(transfer->key, file.readAll(), LogType, [this, transfer] { logDone(transfer); });
        return;
    }
    S3::MultipartOptions options;
    options.partSize = std::max(m_request.multipartPartSize, S3::MultipartOptions::MinPartSize);
    options.concurrency = 2;
    options.contentType = LogType;
    transfer->upload = m_s3->uploadFile(transfer->key, file.fileName(), options);
    connect(transfer->upload, &S3::MultipartUpload::finished, this, [this, transfer] {
        S3::MultipartUpload *upload = transfer->upload;
        transfer->upload = nullptr;
        upload->deleteLater();
        if (m_result) {
            return;
        }
        if (const Result<void> stored = upload->result(); !stored) {
            finish(Error::unavailable(tr("Archiving to %1 failed: %2 The RayJob is kept; the archive will be tried again.").arg(transfer->key, stored.error().message)));
            return;
        }
        logDone(transfer);
    });
}

void JobArchiver::logDone(const std::shared_ptr<LogTransfer> &transfer)
{
    --m_logsInFlight;
    m_transfers.removeOne(transfer);   // its temporary file goes with it
    nextLogs();
}

void JobArchiver::put(const QString &key, const QByteArray &data, const QByteArray &contentType, std::function<void()> then)
{
    m_s3->putObject(key, data, contentType, this, [this, key, then = std::move(then)](Result<void> stored) {
        if (m_result) {
            return;
        }
        if (!stored) {
            finish(Error::unavailable(tr("Archiving to %1 failed: %2 The RayJob is kept; the archive will be tried again.").arg(key, stored.error().message)));
            return;
        }
        then();
    });
}

namespace {

// A presigned URL's signature (and credential scope, session token) in every string of value:
// the Capsule URL in the RayJob's runtimeEnvYAML would otherwise let whoever reads the archive
// fetch the Capsule until the URL expires.
QJsonValue withoutUrlSignatures(const QJsonValue &value)
{
    static const QRegularExpression signature(QStringLiteral("(X-Amz-(?:Signature|Credential|Security-Token)=)[^&\\s\"']+"),
                                              QRegularExpression::CaseInsensitiveOption);
    if (value.isString()) {
        QString text = value.toString();
        if (!text.contains(QLatin1String("X-Amz-"), Qt::CaseInsensitive)) return value;
        text.replace(signature, QStringLiteral("\\1REDACTED"));
        return text;
    }
    if (value.isArray()) {
        QJsonArray out;
        for (const QJsonValue &v : value.toArray()) out.append(withoutUrlSignatures(v));
        return out;
    }
    if (value.isObject()) {
        QJsonObject out = value.toObject();
        for (auto it = out.begin(); it != out.end(); ++it) it.value() = withoutUrlSignatures(it.value());
        return out;
    }
    return value;
}

} // namespace

QJsonObject archivedObjects(const JobSnapshot &snapshot)
{
    QJsonArray pods;
    for (const QJsonObject &p : snapshot.pods) pods.append(p);
    const QJsonObject objects{{QStringLiteral("rayJob"), snapshot.rayJob ? QJsonValue(*snapshot.rayJob) : QJsonValue()},
                              {QStringLiteral("rayCluster"), snapshot.rayCluster ? QJsonValue(*snapshot.rayCluster) : QJsonValue()},
                              {QStringLiteral("pods"), pods}};
    return withoutUrlSignatures(objects).toObject();
}

JobSnapshot snapshotFromArchive(const QByteArray &objectsJson, const QByteArray &eventsJson)
{
    JobSnapshot snapshot;
    const QJsonObject o = QJsonDocument::fromJson(objectsJson).object();
    if (o.value(QStringLiteral("rayJob")).isObject()) snapshot.rayJob = o.value(QStringLiteral("rayJob")).toObject();
    if (o.value(QStringLiteral("rayCluster")).isObject()) snapshot.rayCluster = o.value(QStringLiteral("rayCluster")).toObject();
    for (const QJsonValue &p : o.value(QStringLiteral("pods")).toArray()) snapshot.pods.append(p.toObject());
    for (const QJsonValue &e : QJsonDocument::fromJson(eventsJson).array()) snapshot.events.append(e.toObject());
    if (snapshot.rayJob) {
        snapshot.rayJobName = snapshot.rayJob->value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString();
    }
    return snapshot;
}

void JobArchiver::writeRecord()
{
    const JobSnapshot &snapshot = m_request.snapshot;
    std::sort(m_request.record.logs.begin(), m_request.record.logs.end(),
              [](const ArchivedLog &a, const ArchivedLog &b) { return std::tie(a.pod, a.container) < std::tie(b.pod, b.container); });
    // The submitter's log is the driver's; the head's has it only when there is no submitter
    // (pickArchivedLog's order).
    for (const QString &role : {QStringLiteral("submitter"), QStringLiteral("head")}) {
        if (const auto found = m_checkpointLists.constFind(role); found != m_checkpointLists.cend()) {
            m_request.record.servableCheckpoints = *found;
            break;
        }
    }
    QJsonArray events;
    for (const QJsonObject &e : snapshot.events) events.append(e);
    const QJsonObject objects = archivedObjects(snapshot);
    put(ArchiveKeys::events(m_request.record.id), toJson(events), JsonType, [this, objects] {
        put(ArchiveKeys::objects(m_request.record.id), toJson(objects), JsonType, [this] {
            m_request.record.archived = true;
            m_request.record.archivedAt = QDateTime::currentDateTimeUtc();
            put(ArchiveKeys::status(m_request.record.id), toJson(m_request.record.toJson()), JsonType, [this] { deleteRayJob(); });
        });
    });
}

void JobArchiver::deleteRayJob()
{
    const JobSnapshot &snapshot = m_request.snapshot;
    if (!m_request.deleteRayJob || !snapshot.rayJob) {
        finish(m_request.record);
        return;
    }
    // The uid precondition keeps a same-named RayJob made since (a resubmission with this id)
    // from being deleted in its place; Background lets the cluster and submitter Job follow.
    const QString uid = (*snapshot.rayJob)[QStringLiteral("metadata")][QStringLiteral("uid")].toString();
    Kube::ApiRequest request;
    request.method = "DELETE";
    request.path = Kube::ResourceKind::rayJobs().path(m_request.ns, snapshot.rayJobName);
    request.body = QJsonDocument(QJsonObject{{QStringLiteral("kind"), QStringLiteral("DeleteOptions")},
                                             {QStringLiteral("apiVersion"), QStringLiteral("v1")},
                                             {QStringLiteral("propagationPolicy"), QStringLiteral("Background")},
                                             {QStringLiteral("preconditions"), QJsonObject{{QStringLiteral("uid"), uid}}}})
                       .toJson(QJsonDocument::Compact);
    request.what = tr("delete RayJob %1").arg(snapshot.rayJobName);
    m_kube->send(request, this, [this](const Kube::ApiResult &result) {
        if (result.ok() || result.status == 404 || result.status == 409) {
            finish(m_request.record);
        } else {
            finish(Error::unavailable(tr("The job is archived, but its RayJob could not be deleted: %1").arg(result.error->message)));
        }
    });
}

void JobArchiver::finish(Result<JobRecord> result)
{
    if (m_result) {
        return;
    }
    m_result = std::move(result);
    // Whatever is still on its way stops here: uploads are aborted, temporary files removed.
    m_transfers.clear();
    Q_EMIT finished();
}

} // namespace Starforge::Job
