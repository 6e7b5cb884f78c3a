#include "core/job/jobrecord.h"

#include "core/job/rayjobbuilder.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>

namespace Starforge::Job {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(JobRecord)
};

struct StateName
{
    JobState state;
    const char *name;
};

constexpr StateName StateNames[] = {
    {JobState::Submitting, "Submitting"}, {JobState::Pending, "Pending"}, {JobState::Running, "Running"},
    {JobState::Succeeded, "Succeeded"},   {JobState::Failed, "Failed"},   {JobState::Stopped, "Stopped"},
};

QString isoTime(const QDateTime &time)
{
    return time.isValid() ? time.toUTC().toString(Qt::ISODate) : QString();
}

QDateTime readTime(const QJsonObject &json, const QString &key)
{
    const QString text = json.value(key).toString();
    return text.isEmpty() ? QDateTime() : QDateTime::fromString(text, Qt::ISODate);
}

QString readLabel(const QJsonObject &map, const char *key)
{
    return map.value(QLatin1String(key)).toString();
}

} // namespace

QString jobStateName(JobState state)
{
    for (const auto &entry : StateNames) {
        if (entry.state == state) {
            return QLatin1String(entry.name);
        }
    }
    return {};
}

std::optional<JobState> jobStateFromName(const QString &name)
{
    for (const auto &entry : StateNames) {
        if (name == QLatin1String(entry.name)) {
            return entry.state;
        }
    }
    return std::nullopt;
}

JobState stateOfRayJob(const Kube::RayJob &rayJob)
{
    const QString &deployment = rayJob.jobDeploymentStatus;
    const QString &ray = rayJob.jobStatus;
    if (deployment == QLatin1String("Complete")) {
        if (ray == QLatin1String("STOPPED")) {
            return JobState::Stopped;
        }
        return ray == QLatin1String("FAILED") ? JobState::Failed : JobState::Succeeded;
    }
    if (deployment == QLatin1String("Failed") || deployment == QLatin1String("ValidationFailed")) {
        return JobState::Failed;
    }
    if (deployment == QLatin1String("Running")
        && (ray == QLatin1String("RUNNING") || ray == QLatin1String("SUCCEEDED") || ray == QLatin1String("FAILED") || ray == QLatin1String("STOPPED"))) {
        return JobState::Running;   // a terminal Ray status waits for the deployment status to follow
    }
    return JobState::Pending;
}

namespace ArchiveKeys {

QString prefix(const QString &jobId)
{
    return QStringLiteral("jobs/%1/").arg(jobId);
}

QString status(const QString &jobId)
{
    return prefix(jobId) + QStringLiteral("status.json");
}

QString events(const QString &jobId)
{
    return prefix(jobId) + QStringLiteral("events.json");
}

QString objects(const QString &jobId)
{
    return prefix(jobId) + QStringLiteral("objects.json");
}

QString log(const QString &jobId, const QString &pod, const QString &container)
{
    return prefix(jobId) + QStringLiteral("logs/%1/%2.log").arg(pod, container);
}

QString jobIdOfStatusKey(const QString &key)
{
    static const QString head = QStringLiteral("jobs/");
    static const QString tail = QStringLiteral("/status.json");
    if (!key.startsWith(head) || !key.endsWith(tail)) {
        return {};
    }
    const QString id = key.mid(head.size(), key.size() - head.size() - tail.size());
    return id.contains(u'/') ? QString() : id;
}

} // namespace ArchiveKeys

JobRecord JobRecord::fromRayJob(const QJsonObject &json)
{
    const Kube::RayJob rayJob = Kube::RayJob::fromJson(json);
    JobRecord record;
    record.id = readLabel(rayJob.labels, Labels::JobId);
    record.name = readLabel(rayJob.labels, Labels::JobName);
    record.rayJobName = rayJob.name;
    record.ns = rayJob.ns;
    record.state = stateOfRayJob(rayJob);
    record.reason = rayJob.reason;
    record.message = rayJob.message;
    record.created = rayJob.creationTimestamp;
    // Being deleted: the RayJob stays visible until its finalizers are done
    // (docs/kubernetes-facts.md, "Deletion and finalizers").
    record.deleting = readTime(json.value(QStringLiteral("metadata")).toObject(), QStringLiteral("deletionTimestamp"));
    // Ray's own start when the operator has it: rayJobInfo.startTime is when Ray accepted the
    // job (the submission), before its runtime env was set up and its driver started, so it
    // is set while the job is still PENDING. KubeRay's status.startTime is when the cluster was
    // asked for, which is earlier still.
    const QJsonObject info = json.value(QStringLiteral("status")).toObject().value(QStringLiteral("rayJobInfo")).toObject();
    // Ray's job status says the driver ran; a job failed before that (a deadline, a validation
    // error, a failed submission, a runtime env that could not be set up) has a KubeRay
    // startTime, and maybe Ray's, but never ran.
    const bool driverRan = !rayJob.jobStatus.isEmpty() && rayJob.jobStatus != QLatin1String("PENDING");
    record.started = driverRan ? rayJob.startTime : QDateTime();
    if (const QDateTime rayStart = readTime(info, QStringLiteral("startTime")); rayStart.isValid() && driverRan) {
        record.started = rayStart;
    }
    record.ended = rayJob.endTime;
    record.capsuleSha256 = readLabel(rayJob.annotations, Labels::CapsuleSha256);
    record.jobSpec = QJsonDocument::fromJson(readLabel(rayJob.annotations, Labels::JobSpec).toUtf8()).object();
    if (record.name.isEmpty()) {
        record.name = record.jobSpec.value(QStringLiteral("name")).toString();
    }
    record.owner = readLabel(rayJob.annotations, Labels::Owner);
    record.archiveBucket = readLabel(rayJob.annotations, Labels::ArchiveBucket);
    const QJsonValue specDeadline = json.value(QStringLiteral("spec")).toObject().value(QStringLiteral("preRunningDeadlineSeconds"));
    record.deadlineInSpec = specDeadline.isDouble() && specDeadline.toInt() > 0;
    record.preRunningDeadlineSeconds = record.deadlineInSpec ? specDeadline.toInt() : readLabel(rayJob.annotations, Labels::PreRunningDeadline).toInt();
    if (record.preRunningDeadlineSeconds < 0) record.preRunningDeadlineSeconds = 0;
    return record;
}

QString JobRecord::displayState() const
{
    if (archived) return QStringLiteral("Archived (%1)").arg(jobStateName(state));
    if (isDeleting()) {
        return isTerminal(state) ? Text::tr("%1 (being deleted)").arg(jobStateName(state)) : Text::tr("Stopping (being deleted)");
    }
    return jobStateName(state);
}

QJsonObject JobRecord::toJson() const
{
    QJsonArray logArray;
    for (const ArchivedLog &l : logs) {
        logArray.append(QJsonObject{{QStringLiteral("pod"), l.pod},
                                    {QStringLiteral("container"), l.container},
                                    {QStringLiteral("role"), l.role},
                                    {QStringLiteral("key"), l.key},
                                    {QStringLiteral("size"), static_cast<double>(l.size)}});
    }
    QJsonObject json{{QStringLiteral("format"), QStringLiteral("starforge-job/1")},
                     {QStringLiteral("id"), id},
                     {QStringLiteral("name"), name},
                     {QStringLiteral("rayJobName"), rayJobName},
                     {QStringLiteral("namespace"), ns},
                     {QStringLiteral("state"), jobStateName(state)},
                     {QStringLiteral("archived"), archived},
                     {QStringLiteral("reason"), reason},
                     {QStringLiteral("message"), message},
                     {QStringLiteral("cause"), cause},
                     {QStringLiteral("createdAt"), isoTime(created)},
                     {QStringLiteral("startedAt"), isoTime(started)},
                     {QStringLiteral("endedAt"), isoTime(ended)},
                     {QStringLiteral("archivedAt"), isoTime(archivedAt)},
                     {QStringLiteral("capsuleSha256"), capsuleSha256},
                     {QStringLiteral("jobSpec"), jobSpec},
                     {QStringLiteral("logs"), logArray},
                     {QStringLiteral("lost"), QJsonArray::fromStringList(lost)}};
    if (!owner.isEmpty()) json.insert(QStringLiteral("owner"), owner);
    if (!archiveBucket.isEmpty()) json.insert(QStringLiteral("archiveBucket"), archiveBucket);
    if (!servableCheckpoints.isEmpty()) {
        QJsonArray checkpoints;
        for (const ServableCheckpoint &c : servableCheckpoints) checkpoints.append(c.toJson());
        json.insert(QStringLiteral("servableCheckpoints"), checkpoints);
    }
    return json;
}

Result<JobRecord> JobRecord::fromJson(const QJsonObject &json)
{
    if (json.value(QStringLiteral("format")).toString() != QLatin1String("starforge-job/1")) {
        return Error::invalid(Text::tr("not a Starforge job record (format is \"%1\", expected \"starforge-job/1\")")
                                  .arg(json.value(QStringLiteral("format")).toString()));
    }
    JobRecord record;
    record.id = json.value(QStringLiteral("id")).toString();
    const auto state = jobStateFromName(json.value(QStringLiteral("state")).toString());
    if (record.id.isEmpty() || !state) {
        return Error::invalid(Text::tr("a job record without an id or a known state"));
    }
    record.state = *state;
    record.name = json.value(QStringLiteral("name")).toString();
    record.rayJobName = json.value(QStringLiteral("rayJobName")).toString();
    record.ns = json.value(QStringLiteral("namespace")).toString();
    record.archived = json.value(QStringLiteral("archived")).toBool();
    record.reason = json.value(QStringLiteral("reason")).toString();
    record.message = json.value(QStringLiteral("message")).toString();
    record.cause = json.value(QStringLiteral("cause")).toString();
    record.created = readTime(json, QStringLiteral("createdAt"));
    record.started = readTime(json, QStringLiteral("startedAt"));
    record.ended = readTime(json, QStringLiteral("endedAt"));
    record.archivedAt = readTime(json, QStringLiteral("archivedAt"));
    record.capsuleSha256 = json.value(QStringLiteral("capsuleSha256")).toString();
    record.jobSpec = json.value(QStringLiteral("jobSpec")).toObject();
    for (const QJsonValue &v : json.value(QStringLiteral("logs")).toArray()) {
        const QJsonObject l = v.toObject();
        record.logs.append({l.value(QStringLiteral("pod")).toString(), l.value(QStringLiteral("container")).toString(),
                            l.value(QStringLiteral("role")).toString(), l.value(QStringLiteral("key")).toString(),
                            static_cast<qint64>(l.value(QStringLiteral("size")).toDouble())});
    }
    for (const QJsonValue &v : json.value(QStringLiteral("lost")).toArray()) {
        record.lost << v.toString();
    }
    record.owner = json.value(QStringLiteral("owner")).toString();
    record.archiveBucket = json.value(QStringLiteral("archiveBucket")).toString();
    for (const QJsonValue &v : json.value(QStringLiteral("servableCheckpoints")).toArray()) {
        if (const auto c = ServableCheckpoint::fromJson(v.toObject())) record.servableCheckpoints.append(*c);
    }
    return record;
}

} // namespace Starforge::Job
