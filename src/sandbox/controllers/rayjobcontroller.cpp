#include "sandbox/controllers/rayjobcontroller.h"

#include "sandbox/cluster/eventrecorder.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTimer>

#include "sandbox/util/yaml.h"

namespace Starforge::Sandbox {

namespace {

const ResourceType &rayJobType() { return *ResourceTypes::find(QStringLiteral("ray.io"), QStringLiteral("v1"), QStringLiteral("rayjobs")); }
const ResourceType &clusterType() { return *ResourceTypes::find(QStringLiteral("ray.io"), QStringLiteral("v1"), QStringLiteral("rayclusters")); }
const ResourceType &jobType() { return *ResourceTypes::find(QStringLiteral("batch"), QStringLiteral("v1"), QStringLiteral("jobs")); }
const ResourceType &podType() { return *ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("pods")); }
const ResourceType &serviceType() { return *ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("services")); }

constexpr int MaxRayJobNameLength = 47;
// How long a resumed or retried RayJob stays in New with its old startTime (see holdInNew).
constexpr int NewAfterResumeMs = 1000;
const QString Component = QStringLiteral("rayjob-controller");


QString quoteForBash(const QString &text)
{
    // Go's strconv.Quote, which KubeRay uses for --runtime-env-json: a double-quoted string.
    QString out = QStringLiteral("\"");
    for (const QChar c : text) {
        if (c == u'"' || c == u'\\') out += u'\\';
        if (c == u'\n') { out += QStringLiteral("\\n"); continue; }
        out += c;
    }
    return out + u'"';
}

QString headImage(const QJsonObject &spec)
{
    return spec.value(QStringLiteral("rayClusterSpec")).toObject().value(QStringLiteral("headGroupSpec")).toObject()
        .value(QStringLiteral("template")).toObject().value(QStringLiteral("spec")).toObject()
        .value(QStringLiteral("containers")).toArray().first().toObject().value(QStringLiteral("image")).toString();
}

} // namespace

RayJobController::RayJobController(ObjectStore *store, EventRecorder *events, quint32 seed, Options options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_store(store)
    , m_events(events)
    , m_random(seed ^ 0x72796a62u)
    , m_queue([this](const QString &ns, const QString &name) { reconcile(ns, name); }, this)
{
    connect(store, &ObjectStore::changed, this, &RayJobController::onChange);
}

std::optional<QJsonObject> RayJobController::runtimeEnvJson(const QString &yaml, QString *error)
{
    if (yaml.trimmed().isEmpty()) {
        return QJsonObject();
    }
    const auto value = Yaml::toJson(yaml.toUtf8());
    if (!value) {
        if (error) *error = QStringLiteral("failed to unmarshal RuntimeEnvYAML: %1").arg(value.error().message);
        return std::nullopt;
    }
    if (!value->isObject()) {
        if (error) *error = QStringLiteral("failed to unmarshal RuntimeEnvYAML: it is not a mapping");
        return std::nullopt;
    }
    return value->toObject();
}

QString RayJobController::validate(const QJsonObject &rayJob, QString *eventReason)
{
    const QString name = rayJob.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString();
    if (eventReason) *eventReason = QStringLiteral("InvalidRayJobMetadata");
    if (name.size() > MaxRayJobNameLength) {
        return QStringLiteral("The RayJob metadata is invalid: RayJob name should be no more than %1 characters").arg(MaxRayJobNameLength);
    }
    static const QRegularExpression dns1035(QStringLiteral("^[a-z]([-a-z0-9]*[a-z0-9])?$"));
    if (!dns1035.match(name).hasMatch()) {
        return QStringLiteral("The RayJob metadata is invalid: RayJob name should be a valid DNS1035 label: [a DNS-1035 label must consist of lower "
                              "case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character "
                              "(e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')]");
    }
    if (eventReason) *eventReason = QStringLiteral("InvalidRayJobSpec");
    const QJsonObject spec = rayJob.value(QStringLiteral("spec")).toObject();
    const bool shutdown = spec.value(QStringLiteral("shutdownAfterJobFinishes")).toBool();
    if (spec.value(QStringLiteral("suspend")).toBool() && !shutdown) {
        return QStringLiteral("The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false is not allowed to be suspended");
    }
    const qint64 ttl = spec.value(QStringLiteral("ttlSecondsAfterFinished")).toInteger(0);
    if (ttl < 0) {
        return QStringLiteral("The RayJob spec is invalid: TTLSecondsAfterFinished must be a non-negative integer");
    }
    if (!shutdown && ttl > 0) {
        return QStringLiteral("The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false cannot have TTLSecondsAfterFinished");
    }
    const bool selectorMode = !spec.value(QStringLiteral("clusterSelector")).toObject().isEmpty();
    if (spec.value(QStringLiteral("suspend")).toBool() && selectorMode) {
        return QStringLiteral("The RayJob spec is invalid: the ClusterSelector mode doesn't support the suspend operation");
    }
    if (!spec.contains(QStringLiteral("rayClusterSpec")) && !selectorMode) {
        return QStringLiteral("The RayJob spec is invalid: one of RayClusterSpec or ClusterSelector must be set");
    }
    if (selectorMode && spec.value(QStringLiteral("clusterSelector")).toObject().value(QStringLiteral("ray.io/cluster")).toString().isEmpty()) {
        return QStringLiteral("cluster name in ClusterSelector should not be empty");
    }
    const QString mode = spec.value(QStringLiteral("submissionMode")).toString(QStringLiteral("K8sJobMode"));
    if (mode == QLatin1String("InteractiveMode") && spec.value(QStringLiteral("backoffLimit")).toInt(0) > 0) {
        return QStringLiteral("The RayJob spec is invalid: BackoffLimit is incompatible with InteractiveMode");
    }
    if (spec.contains(QStringLiteral("rayClusterSpec"))) {
        const QJsonObject cluster = spec.value(QStringLiteral("rayClusterSpec")).toObject();
        if (cluster.value(QStringLiteral("headGroupSpec")).toObject().value(QStringLiteral("template")).toObject()
                .value(QStringLiteral("spec")).toObject().value(QStringLiteral("containers")).toArray().isEmpty()) {
            return QStringLiteral("The RayJob spec is invalid: headGroupSpec should have at least one container");
        }
        const bool autoscaling = cluster.value(QStringLiteral("enableInTreeAutoscaling")).toBool();
        for (const QJsonValue &g : cluster.value(QStringLiteral("workerGroupSpecs")).toArray()) {
            const QJsonObject group = g.toObject();
            if (group.value(QStringLiteral("template")).toObject().value(QStringLiteral("spec")).toObject()
                    .value(QStringLiteral("containers")).toArray().isEmpty()) {
                return QStringLiteral("The RayJob spec is invalid: workerGroupSpec should have at least one container");
            }
            // Replica bounds, as v1.7's ValidateRayClusterSpec words them (docs/kuberay.md, "Head and worker groups").
            const QString groupName = group.value(QStringLiteral("groupName")).toString();
            if (!autoscaling && (!group.contains(QStringLiteral("minReplicas")) || !group.contains(QStringLiteral("maxReplicas")))) {
                return QStringLiteral("The RayJob spec is invalid: worker group %1 must set both minReplicas and maxReplicas when autoscaling is disabled")
                    .arg(groupName);
            }
            const qint64 minReplicas = group.value(QStringLiteral("minReplicas")).toInteger(0);
            const qint64 maxReplicas = group.value(QStringLiteral("maxReplicas")).toInteger(2147483647);
            if (minReplicas < 0) {
                return QStringLiteral("The RayJob spec is invalid: worker group %1 has negative minReplicas %2").arg(groupName).arg(minReplicas);
            }
            if (maxReplicas < 0) {
                return QStringLiteral("The RayJob spec is invalid: worker group %1 has negative maxReplicas %2").arg(groupName).arg(maxReplicas);
            }
            if (minReplicas > maxReplicas) {
                return QStringLiteral("The RayJob spec is invalid: worker group %1 has minReplicas %2 greater than maxReplicas %3")
                    .arg(groupName).arg(minReplicas).arg(maxReplicas);
            }
        }
    }
    QString yamlError;
    if (!runtimeEnvJson(spec.value(QStringLiteral("runtimeEnvYAML")).toString(), &yamlError)) {
        return yamlError;
    }
    if (spec.contains(QStringLiteral("activeDeadlineSeconds")) && spec.value(QStringLiteral("activeDeadlineSeconds")).toInteger() <= 0) {
        return QStringLiteral("The RayJob spec is invalid: activeDeadlineSeconds must be a positive integer");
    }
    if (spec.value(QStringLiteral("backoffLimit")).toInteger(0) < 0) {
        return QStringLiteral("The RayJob spec is invalid: backoffLimit must be a positive integer");
    }
    return {};
}

void RayJobController::onChange(const Change &change)
{
    if (change.storage == rayJobType().storage && change.type != ChangeType::Deleted) {
        m_queue.add(change.object->ns, change.object->name);
        return;
    }
    if (change.storage == clusterType().storage || change.storage == jobType().storage || change.storage == podType().storage) {
        const QJsonObject labels = change.object->object.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("labels")).toObject();
        const QString owner = labels.value(QStringLiteral("ray.io/originated-from-cr-name")).toString();
        if (!owner.isEmpty() && labels.value(QStringLiteral("ray.io/originated-from-crd")).toString() == QLatin1String("RayJob")) {
            m_queue.add(change.object->ns, owner);
        }
        // Ray pods carry only the cluster label; the cluster's status change brings the RayJob back.
    }
}

void RayJobController::record(const QJsonObject &rayJob, const QString &type, const QString &reason, const QString &message, const QString &action)
{
    m_events->record(rayJob, type, reason, message, Component, EventRecorder::Api::EventsV1, action);
}

void RayJobController::reconcile(const QString &ns, const QString &name)
{
    const ObjectPtr current = m_store->get(rayJobType().storage, ns, name);
    if (!current) {
        return;
    }
    // Being deleted: the finalizer's work, and nothing else (rayjobdeletion.h).
    if (RayJobDeletion::finalize(*m_store, current->object, [this](const QJsonObject &rayJob) { stopJob(rayJob); })) {
        return;
    }
    const QJsonObject rayJob = current->object;
    const QJsonObject spec = rayJob.value(QStringLiteral("spec")).toObject();
    QJsonObject status = rayJob.value(QStringLiteral("status")).toObject();
    const QString deployment = status.value(QStringLiteral("jobDeploymentStatus")).toString();
    const QString now = nowRfc3339();
    const auto write = [&](const QJsonObject &newStatus) {
        m_store->modify(rayJobType(), ns, name, [&](QJsonObject &o) {
            if (o.value(QStringLiteral("status")).toObject() == newStatus) return false;
            o.insert(QStringLiteral("status"), newStatus);
            return true;
        });
    };
    const auto fail = [&](const QString &reason, const QString &message) {
        status.insert(QStringLiteral("jobDeploymentStatus"), QStringLiteral("Failed"));
        status.insert(QStringLiteral("reason"), reason);
        status.insert(QStringLiteral("message"), message);
    };
    // The end of the operator's switch: counters, retries (checkBackoffLimitAndUpdateStatusIfNeeded),
    // endTime on a terminal status, the status written, and the next look.
    const auto conclude = [&](int requeueMs) {
        const QString to = status.value(QStringLiteral("jobDeploymentStatus")).toString();
        const bool ended = to == QLatin1String("Complete") || to == QLatin1String("Failed");
        if (to == QLatin1String("Failed")) {
            status.insert(QStringLiteral("failed"), status.value(QStringLiteral("failed")).toInt(0) + 1);
        } else if (to == QLatin1String("Complete") && status.value(QStringLiteral("jobStatus")).toString() == QLatin1String("SUCCEEDED")) {
            status.insert(QStringLiteral("succeeded"), status.value(QStringLiteral("succeeded")).toInt(0) + 1);
        }
        if (ended) {
            status.insert(QStringLiteral("endTime"), now);
        }
        const QString reason = status.value(QStringLiteral("reason")).toString();
        if (to == QLatin1String("Failed") && spec.contains(QStringLiteral("backoffLimit"))
            && status.value(QStringLiteral("failed")).toInt(0) < spec.value(QStringLiteral("backoffLimit")).toInt(0) + 1
            && reason != QLatin1String("DeadlineExceeded") && reason != QLatin1String("JobStatusCheckTimeoutExceeded")) {
            status.insert(QStringLiteral("jobDeploymentStatus"), QStringLiteral("Retrying"));
            write(status);
            m_queue.add(ns, name);
            return;
        }
        write(status);
        if (ended) {
            // Back for the TTL clean-up.
            m_queue.addAfter(ns, name, static_cast<int>(spec.value(QStringLiteral("ttlSecondsAfterFinished")).toInteger(0)) * 1000 + 10);
        } else if (requeueMs >= 0) {
            m_queue.addAfter(ns, name, requeueMs);
        }
    };
    // checkActiveDeadlineAndUpdateStatusIfNeeded and checkPreRunningDeadlineAndUpdateStatusIfNeeded:
    // both count from status.startTime, and print it as Go prints a metav1.Time.
    const auto deadlinePassed = [&](const char *field, const QString &reason, const QString &text) {
        if (!spec.contains(QLatin1String(field))) return false;
        const qint64 limit = spec.value(QLatin1String(field)).toInteger();
        const QString start = status.value(QStringLiteral("startTime")).toString();
        if (secondsSince(start) < limit) return false;
        fail(reason, QStringLiteral("The RayJob has passed the %1. StartTime: %2. %3: %4").arg(QLatin1String(field), goTimeString(start), text).arg(limit));
        return true;
    };
    const auto activeDeadlinePassed = [&] {
        return deadlinePassed("activeDeadlineSeconds", QStringLiteral("DeadlineExceeded"), QStringLiteral("ActiveDeadlineSeconds"));
    };
    const auto preRunningDeadlinePassed = [&] {
        return deadlinePassed("preRunningDeadlineSeconds", QStringLiteral("PreRunningDeadlineExceeded"), QStringLiteral("PreRunningDeadlineSeconds"));
    };
    // The next look while a deadline can pass without any object changing.
    const int deadlineLook = spec.contains(QStringLiteral("activeDeadlineSeconds")) || spec.contains(QStringLiteral("preRunningDeadlineSeconds")) ? 500 : -1;

    if (deployment == QLatin1String("ValidationFailed")) {
        return;
    }
    QString eventReason;
    QString problem = validate(rayJob, &eventReason);
    if (problem.isEmpty()) {
        problem = RayJobDeletion::validate(spec, m_operator.deletionPolicyGate);
        eventReason = QStringLiteral("InvalidRayJobSpec");
    }
    if (!problem.isEmpty()) {
        status.insert(QStringLiteral("jobDeploymentStatus"), QStringLiteral("ValidationFailed"));
        status.insert(QStringLiteral("reason"), QStringLiteral("ValidationFailed"));
        status.insert(QStringLiteral("message"), problem);
        write(status);
        // The operator's validation event says whose: "ns/name: <error>".
        record(rayJob, QStringLiteral("Warning"), eventReason, QStringLiteral("%1/%2: %3").arg(ns, name, problem), QStringLiteral("Validate"));
        return;
    }
    const QString mode = spec.value(QStringLiteral("submissionMode")).toString(QStringLiteral("K8sJobMode"));
    const bool terminal = deployment == QLatin1String("Complete") || deployment == QLatin1String("Failed");
    const bool suspend = spec.value(QStringLiteral("suspend")).toBool();

    if (deployment.isEmpty()) {
        if (m_heldInNew.contains(ObjectStore::keyOf(ns, name))) {
            return;
        }
        // New: the finalizer, jobId, rayClusterName and startTime (initRayJobStatusIfNeed), then Initializing.
        if (mode != QLatin1String("K8sJobMode")) {
            status.insert(QStringLiteral("jobDeploymentStatus"), QStringLiteral("Failed"));
            status.insert(QStringLiteral("reason"), QStringLiteral("SubmissionFailed"));
            status.insert(QStringLiteral("message"), QStringLiteral("the Starforge sandbox runs RayJobs in K8sJobMode only, not %1").arg(mode));
            write(status);
            return;
        }
        m_store->modify(rayJobType(), ns, name, [&](QJsonObject &o) {
            QJsonObject meta = o.value(QStringLiteral("metadata")).toObject();
            QJsonArray finalizers = meta.value(QStringLiteral("finalizers")).toArray();   // added beside the user's own
            if (finalizers.contains(QLatin1String(RayJobDeletion::Finalizer))) return false;
            finalizers.append(QLatin1String(RayJobDeletion::Finalizer));
            meta.insert(QStringLiteral("finalizers"), finalizers);
            o.insert(QStringLiteral("metadata"), meta);
            return true;
        });
        if (status.value(QStringLiteral("jobId")).toString().isEmpty()) {
            status.insert(QStringLiteral("jobId"), spec.value(QStringLiteral("jobId")).toString(name + u'-' + randomSuffix(m_random)));
        }
        if (status.value(QStringLiteral("rayClusterName")).toString().isEmpty()) {
            status.insert(QStringLiteral("rayClusterName"), QString(name + u'-' + randomSuffix(m_random)));
        }
        status.insert(QStringLiteral("startTime"), now);
        status.insert(QStringLiteral("jobDeploymentStatus"), QStringLiteral("Initializing"));
        status.insert(QStringLiteral("jobStatus"), QString());
        status.remove(QStringLiteral("endTime"));
        if (!status.contains(QStringLiteral("failed"))) status.insert(QStringLiteral("failed"), 0);
        if (!status.contains(QStringLiteral("succeeded"))) status.insert(QStringLiteral("succeeded"), 0);
        write(status);
        m_queue.add(ns, name);
        return;
    }

    const QString clusterName = status.value(QStringLiteral("rayClusterName")).toString();
    const QString jobId = status.value(QStringLiteral("jobId")).toString();
    const ObjectPtr latest = m_store->get(rayJobType().storage, ns, name);

    if (deployment == QLatin1String("Suspending") || deployment == QLatin1String("Retrying")) {
        // The cluster and the submitter go first; the status moves once both are gone.
        bool gone = true;
        if (const ObjectPtr cluster = m_store->get(clusterType().storage, ns, clusterName)) {
            gone = false;
            if (!cluster->object.value(QStringLiteral("metadata")).toObject().contains(QStringLiteral("deletionTimestamp"))) {
                (void)m_store->remove(clusterType(), ns, clusterName);
                record(rayJob, QStringLiteral("Normal"), QStringLiteral("DeletedRayCluster"), QStringLiteral("Deleted cluster %1/%2").arg(ns, clusterName), QStringLiteral("Delete"));
            }
        }
        if (const ObjectPtr job = m_store->get(jobType().storage, ns, name)) {
            gone = false;
            if (!job->object.value(QStringLiteral("metadata")).toObject().contains(QStringLiteral("deletionTimestamp"))) {
                (void)m_store->remove(jobType(), ns, name);
                record(rayJob, QStringLiteral("Normal"), QStringLiteral("DeletedRayJobSubmitter"), QStringLiteral("Deleted submitter K8s Job %1/%2").arg(ns, name), QStringLiteral("Delete"));
            }
        }
        if (!gone && (m_store->get(clusterType().storage, ns, clusterName) || m_store->get(jobType().storage, ns, name))) {
            m_queue.addAfter(ns, name, 200);
            return;
        }
        for (const char *field : {"rayClusterStatus", "rayClusterName", "dashboardURL", "jobId", "message", "reason", "rayJobInfo", "jobStatusCheckFailureStartTime"}) {
            status.remove(QLatin1String(field));
        }
        status.insert(QStringLiteral("jobStatus"), QString());
        status.insert(QStringLiteral("jobDeploymentStatus"), deployment == QLatin1String("Suspending") ? QStringLiteral("Suspended") : QString());
        write(status);
        if (deployment == QLatin1String("Retrying")) {
            holdInNew(ns, name);
        } else {
            m_queue.add(ns, name);
        }
        return;
    }

    if (deployment == QLatin1String("Suspended")) {
        if (!suspend) {
            // Resumed: back to New, which sets a new startTime.
            status.insert(QStringLiteral("jobStatus"), QString());
            status.insert(QStringLiteral("jobDeploymentStatus"), QString());
            write(status);
            holdInNew(ns, name);
        }
        return;
    }

    if (deployment == QLatin1String("Initializing")) {
        if (suspend) {
            status.insert(QStringLiteral("jobDeploymentStatus"), QStringLiteral("Suspending"));
            conclude(0);
            return;
        }
        if (activeDeadlinePassed() || preRunningDeadlinePassed()) {
            conclude(-1);
            return;
        }
        ObjectPtr cluster = m_store->get(clusterType().storage, ns, clusterName);
        if (!cluster) {
            QJsonObject labels = rayJob.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("labels")).toObject();
            labels.insert(QStringLiteral("ray.io/originated-from-cr-name"), name);
            labels.insert(QStringLiteral("ray.io/originated-from-crd"), QStringLiteral("RayJob"));
            labels.insert(QStringLiteral("ray.io/job-submission-mode"), mode);
            QJsonObject meta{{QStringLiteral("name"), clusterName}, {QStringLiteral("namespace"), ns}, {QStringLiteral("labels"), labels},
                             {QStringLiteral("ownerReferences"), QJsonArray{controllerReference(latest->object)}}};
            if (rayJob.value(QStringLiteral("metadata")).toObject().contains(QStringLiteral("annotations"))) {
                meta.insert(QStringLiteral("annotations"), rayJob.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("annotations")));
            }
            const QJsonObject object{{QStringLiteral("apiVersion"), QStringLiteral("ray.io/v1")}, {QStringLiteral("kind"), QStringLiteral("RayCluster")},
                                     {QStringLiteral("metadata"), meta}, {QStringLiteral("spec"), spec.value(QStringLiteral("rayClusterSpec"))}};
            if (std::holds_alternative<ObjectPtr>(m_store->create(clusterType(), object))) {
                record(rayJob, QStringLiteral("Normal"), QStringLiteral("CreatedRayCluster"),
                       QStringLiteral("Created RayCluster %1/%2").arg(ns, clusterName), QStringLiteral("Create"));
            }
            // The RayJob's own head Service, re-pointed to the current cluster.
            const QString svcName = name + QStringLiteral("-head-svc");
            if (!m_store->get(serviceType().storage, ns, svcName)) {
                const QJsonObject svcLabels{{QStringLiteral("ray.io/originated-from-cr-name"), name},
                                            {QStringLiteral("ray.io/originated-from-crd"), QStringLiteral("RayJob")},
                                            {QStringLiteral("ray.io/node-type"), QStringLiteral("head")},
                                            {QStringLiteral("ray.io/identifier"), QString(name + QStringLiteral("-head"))}};
                const QJsonObject svc{{QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("Service")},
                                      {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), svcName}, {QStringLiteral("namespace"), ns},
                                                                               {QStringLiteral("labels"), svcLabels},
                                                                               {QStringLiteral("ownerReferences"), QJsonArray{controllerReference(latest->object)}}}},
                                      {QStringLiteral("spec"), QJsonObject{{QStringLiteral("clusterIP"), QStringLiteral("None")},
                                                                           {QStringLiteral("selector"), QJsonObject{{QStringLiteral("ray.io/cluster"), clusterName},
                                                                                                                    {QStringLiteral("ray.io/node-type"), QStringLiteral("head")}}}}}};
                if (std::holds_alternative<ObjectPtr>(m_store->create(serviceType(), svc))) {
                    record(rayJob, QStringLiteral("Normal"), QStringLiteral("CreatedService"),
                           QStringLiteral("Created the service %1/%2").arg(ns, svcName), QStringLiteral("Create"));
                }
            }
            cluster = m_store->get(clusterType().storage, ns, clusterName);
        }
        if (cluster) {
            status.insert(QStringLiteral("rayClusterStatus"), cluster->object.value(QStringLiteral("status")));
        }
        const bool ready = cluster && cluster->object.value(QStringLiteral("status")).toObject().value(QStringLiteral("state")).toString() == QLatin1String("ready");
        if (!ready) {
            conclude(deadlineLook);
            return;
        }
        // The dashboard URL has no scheme; the submitter's command adds http://.
        const QString dashboardUrl = QStringLiteral("%1-head-svc.%2.svc.cluster.local:8265").arg(clusterName, ns);
        status.insert(QStringLiteral("dashboardURL"), dashboardUrl);
        if (!m_store->get(jobType().storage, ns, name)) {
            QString envError;
            const QJsonObject runtimeEnv = *runtimeEnvJson(spec.value(QStringLiteral("runtimeEnvYAML")).toString(), &envError);
            const QString script = submitterScript(QStringLiteral("http://") + dashboardUrl, jobId, spec.value(QStringLiteral("entrypoint")).toString().trimmed(), runtimeEnv);
            QJsonObject podTemplate = spec.value(QStringLiteral("submitterPodTemplate")).toObject();
            QJsonObject podSpec = podTemplate.value(QStringLiteral("spec")).toObject();
            QJsonArray containers = podSpec.value(QStringLiteral("containers")).toArray();
            QJsonObject submitter = containers.isEmpty()
                ? QJsonObject{{QStringLiteral("name"), QStringLiteral("ray-job-submitter")}, {QStringLiteral("image"), headImage(spec)},
                              {QStringLiteral("resources"), QJsonObject{{QStringLiteral("requests"), QJsonObject{{QStringLiteral("cpu"), QStringLiteral("500m")}, {QStringLiteral("memory"), QStringLiteral("200Mi")}}},
                                                                        {QStringLiteral("limits"), QJsonObject{{QStringLiteral("cpu"), QStringLiteral("1")}, {QStringLiteral("memory"), QStringLiteral("1Gi")}}}}}}
                : containers.first().toObject();
            if (!submitter.contains(QStringLiteral("command"))) {
                submitter.insert(QStringLiteral("command"), QJsonArray{QStringLiteral("/bin/bash"), QStringLiteral("-ce"), QStringLiteral("--")});
                submitter.insert(QStringLiteral("args"), QJsonArray{script});
            }
            QJsonArray env = submitter.value(QStringLiteral("env")).toArray();
            env.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("PYTHONUNBUFFERED")}, {QStringLiteral("value"), QStringLiteral("1")}});
            env.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("RAY_DASHBOARD_ADDRESS")}, {QStringLiteral("value"), dashboardUrl}});
            env.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("RAY_JOB_SUBMISSION_ID")}, {QStringLiteral("value"), jobId}});
            submitter.insert(QStringLiteral("env"), env);
            if (containers.isEmpty()) containers.append(submitter); else containers.replace(0, submitter);
            podSpec.insert(QStringLiteral("containers"), containers);
            if (!podSpec.contains(QStringLiteral("restartPolicy"))) podSpec.insert(QStringLiteral("restartPolicy"), QStringLiteral("Never"));
            podTemplate.insert(QStringLiteral("spec"), podSpec);
            const QJsonObject originLabels{{QStringLiteral("ray.io/originated-from-cr-name"), name},
                                           {QStringLiteral("ray.io/originated-from-crd"), QStringLiteral("RayJob")},
                                           {QStringLiteral("app.kubernetes.io/created-by"), QStringLiteral("kuberay-operator")}};
            QJsonObject templateMeta = podTemplate.value(QStringLiteral("metadata")).toObject();
            QJsonObject templateLabels = templateMeta.value(QStringLiteral("labels")).toObject();
            for (auto it = originLabels.begin(); it != originLabels.end(); ++it) templateLabels.insert(it.key(), it.value());
            templateMeta.insert(QStringLiteral("labels"), templateLabels);
            podTemplate.insert(QStringLiteral("metadata"), templateMeta);
            const QJsonObject job{{QStringLiteral("apiVersion"), QStringLiteral("batch/v1")}, {QStringLiteral("kind"), QStringLiteral("Job")},
                                  {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("namespace"), ns},
                                                                           {QStringLiteral("labels"), originLabels},
                                                                           {QStringLiteral("ownerReferences"), QJsonArray{controllerReference(latest->object)}}}},
                                  {QStringLiteral("spec"), QJsonObject{{QStringLiteral("backoffLimit"), spec.value(QStringLiteral("submitterConfig")).toObject()
                                                                                                              .value(QStringLiteral("backoffLimit")).toInt(2)},
                                                                       {QStringLiteral("template"), podTemplate}}}};
            if (std::holds_alternative<ObjectPtr>(m_store->create(jobType(), job))) {
                record(rayJob, QStringLiteral("Normal"), QStringLiteral("CreatedRayJobSubmitter"),
                       QStringLiteral("Created Kubernetes Job %1/%2").arg(ns, name), QStringLiteral("Create"));
            }
        }
        status.insert(QStringLiteral("jobDeploymentStatus"), QStringLiteral("Running"));
        conclude(300);
        return;
    }

    if (deployment == QLatin1String("Running")) {
        if (suspend) {
            status.insert(QStringLiteral("jobDeploymentStatus"), QStringLiteral("Suspending"));
            conclude(0);
            return;
        }
        if (activeDeadlinePassed()) {
            conclude(-1);
            return;
        }
        const QString rayStatus = status.value(QStringLiteral("jobStatus")).toString();
        const bool rayTerminal = rayStatus == QLatin1String("SUCCEEDED") || rayStatus == QLatin1String("FAILED") || rayStatus == QLatin1String("STOPPED");
        // checkTransitionGracePeriodAndUpdateStatusIfNeeded: Ray ended, the deployment did not follow.
        const QString rayEnd = status.value(QStringLiteral("rayJobInfo")).toObject().value(QStringLiteral("endTime")).toString();
        if (rayTerminal && !rayEnd.isEmpty() && secondsSince(rayEnd) >= m_options.transitionGraceSeconds) {
            status.insert(QStringLiteral("jobDeploymentStatus"), rayStatus == QLatin1String("FAILED") ? QStringLiteral("Failed") : QStringLiteral("Complete"));
            status.insert(QStringLiteral("reason"), QStringLiteral("JobDeploymentStatusTransitionGracePeriodExceeded"));
            status.insert(QStringLiteral("message"), QStringLiteral("JobDeploymentStatus does not transition to Complete or Failed within the grace period after JobStatus reaches a terminal state."));
            conclude(-1);
            return;
        }
        // checkJobStatusCheckTimeoutAndUpdateStatusIfNeeded: the dashboard unreachable too long.
        const QString checkFailing = status.value(QStringLiteral("jobStatusCheckFailureStartTime")).toString();
        if (!checkFailing.isEmpty() && secondsSince(checkFailing) >= m_options.statusCheckTimeoutSeconds) {
            fail(QStringLiteral("JobStatusCheckTimeoutExceeded"), QStringLiteral("Job status checks have been failing since %1; exceeded timeout of %2s")
                                                                      .arg(goDateTime(checkFailing)).arg(m_options.statusCheckTimeoutSeconds));
            conclude(-1);
            return;
        }
        const ObjectPtr cluster = m_store->get(clusterType().storage, ns, clusterName);
        // checkSubmitterAndUpdateStatusIfNeeded: the submitter Job failed (its backoff limit
        // reached), and when it finished either way.
        const ObjectPtr job = m_store->get(jobType().storage, ns, name);
        QString finishedAt;
        for (const QJsonValue &c : job ? job->object.value(QStringLiteral("status")).toObject().value(QStringLiteral("conditions")).toArray() : QJsonArray()) {
            const QJsonObject condition = c.toObject();
            if (condition.value(QStringLiteral("status")).toString() != QLatin1String("True")) continue;
            const QString type = condition.value(QStringLiteral("type")).toString();
            if (type == QLatin1String("Failed")) {
                if (rayStatus == QLatin1String("FAILED")) {
                    status.insert(QStringLiteral("jobDeploymentStatus"), QStringLiteral("Failed"));
                    status.insert(QStringLiteral("reason"), QStringLiteral("AppFailed"));
                } else {
                    fail(QStringLiteral("SubmissionFailed"), QStringLiteral("Job submission has failed. Reason: %1. Message: %2")
                                                                 .arg(condition.value(QStringLiteral("reason")).toString(), condition.value(QStringLiteral("message")).toString()));
                }
                conclude(-1);
                return;
            }
            if (type == QLatin1String("Complete") && finishedAt.isEmpty()) {
                finishedAt = condition.value(QStringLiteral("lastTransitionTime")).toString();
            }
        }
        // checkSubmitterFinishedTimeoutAndUpdateStatusIfNeeded.
        if (!finishedAt.isEmpty() && secondsSince(finishedAt) >= m_options.submitterFinishedTimeoutSeconds) {
            status.insert(QStringLiteral("jobStatus"), QStringLiteral("FAILED"));
            fail(QStringLiteral("JobDeploymentStatusTransitionGracePeriodExceeded"),
                 QStringLiteral("The RayJob submitter finished at %1 but the ray job did not reach terminal state within %2s")
                     .arg(goDateTime(finishedAt)).arg(m_options.submitterFinishedTimeoutSeconds));
            conclude(-1);
            return;
        }
        // GetJobInfo: the head's job record, as the dashboard answers it.
        const DashboardJob info = dashboardJob(ns, clusterName, jobId);
        if (info.unreachable) {
            if (checkFailing.isEmpty()) {
                status.insert(QStringLiteral("jobStatusCheckFailureStartTime"), now);
            }
            conclude(1000);
            return;
        }
        if (info.status.isEmpty()) {
            // Not submitted yet (the dashboard's BadRequest).
            if (!finishedAt.isEmpty()) {
                fail(QStringLiteral("AppFailed"), QStringLiteral("Submitter completed but Ray job not found in RayCluster."));
                conclude(-1);
                return;
            }
            conclude(300);
            return;
        }
        status.remove(QStringLiteral("jobStatusCheckFailureStartTime"));
        const bool infoTerminal = info.status == QLatin1String("SUCCEEDED") || info.status == QLatin1String("FAILED") || info.status == QLatin1String("STOPPED");
        QString to = QStringLiteral("Running");
        QString reason;
        if (infoTerminal && !finishedAt.isEmpty()) {
            to = info.status == QLatin1String("FAILED") ? QStringLiteral("Failed") : QStringLiteral("Complete");
            if (to == QLatin1String("Failed")) reason = QStringLiteral("AppFailed");
        }
        if (cluster) {
            status.insert(QStringLiteral("rayClusterStatus"), cluster->object.value(QStringLiteral("status")));
        }
        status.insert(QStringLiteral("jobStatus"), info.status);
        status.insert(QStringLiteral("jobDeploymentStatus"), to);
        if (reason.isEmpty()) status.remove(QStringLiteral("reason")); else status.insert(QStringLiteral("reason"), reason);
        status.insert(QStringLiteral("message"), info.message);
        QJsonObject rayInfo = status.value(QStringLiteral("rayJobInfo")).toObject();
        if (!info.startTime.isEmpty()) rayInfo.insert(QStringLiteral("startTime"), info.startTime);
        if (!info.endTime.isEmpty()) rayInfo.insert(QStringLiteral("endTime"), info.endTime);
        if (!rayInfo.isEmpty()) status.insert(QStringLiteral("rayJobInfo"), rayInfo);
        conclude(300);
        return;
    }

    if (terminal) {
        // What goes at the TTL: the cluster, its workers or the RayJob itself (rayjobdeletion.h).
        const int again = RayJobDeletion::afterFinished(*m_store, rayJob, m_operator, [&](const QString &deletionReason, const QString &deletionMessage, const QString &deletionAction) {
            record(rayJob, QStringLiteral("Normal"), deletionReason, deletionMessage, deletionAction);
        });
        if (again >= 0) {
            m_queue.addAfter(ns, name, again);
        }
    }
}

RayJobController::DashboardJob RayJobController::dashboardJob(const QString &ns, const QString &cluster, const QString &jobId) const
{
    DashboardJob job;
    // A head makes its jobs directory, then records itself; it removes the record when it
    // stops. A directory without the record is a head that went away: its dashboard cannot be
    // asked. No directory yet is a head still starting (the operator only asks a ready cluster,
    // whose dashboard answers), taken as "no such job".
    const QString head = QStringLiteral("%1/heads/%2/%3").arg(m_options.rayStateDir, ns, cluster);
    if (m_options.rayStateDir.isEmpty() || !QFileInfo::exists(head + QStringLiteral(".jobs"))) {
        return job;
    }
    if (!QFileInfo::exists(head + QStringLiteral(".json"))) {
        job.unreachable = true;
        return job;
    }
    QFile file(QStringLiteral("%1.jobs/%2.json").arg(head, jobId));
    if (!file.open(QIODevice::ReadOnly)) {
        return job;
    }
    const QJsonObject info = QJsonDocument::fromJson(file.readAll()).object();
    job.status = info.value(QStringLiteral("status")).toString();
    job.message = info.value(QStringLiteral("message")).toString();
    const auto time = [](const QJsonValue &ms) {
        const qint64 value = ms.toInteger(0);
        return value > 0 ? QDateTime::fromMSecsSinceEpoch(value, Qt::UTC).toString(Qt::ISODate) : QString();
    };
    job.startTime = time(info.value(QStringLiteral("start_time")));
    job.endTime = time(info.value(QStringLiteral("end_time")));
    return job;
}

void RayJobController::holdInNew(const QString &ns, const QString &name)
{
    // The operator writes New (from Suspended or Retrying) in one reconcile and the new
    // startTime in the next one, so in between the RayJob is New with the startTime of its
    // previous attempt. On a cluster the gap lasts as long as the operator's queue takes to come
    // back (its own status update, or the 3 s requeue); the sandbox holds it a second, so that
    // a client that miscounts from the old startTime is caught in tests, not only under load.
    const QString key = ObjectStore::keyOf(ns, name);
    m_heldInNew.insert(key);
    QTimer::singleShot(NewAfterResumeMs, this, [this, ns, name, key] {
        m_heldInNew.remove(key);
        m_queue.add(ns, name);
    });
}

void RayJobController::stopJob(const QJsonObject &rayJob) const
{
    // The head's supervisor (the Ray stand-in) takes <id>.stop beside the job's record as the
    // dashboard's stop request. A head that is not up does not answer, as the dashboard would not.
    const QString ns = rayJob.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("namespace")).toString();
    const QJsonObject status = rayJob.value(QStringLiteral("status")).toObject();
    const QString cluster = status.value(QStringLiteral("rayClusterName")).toString();
    const QString jobId = status.value(QStringLiteral("jobId")).toString();
    const QString head = QStringLiteral("%1/heads/%2/%3").arg(m_options.rayStateDir, ns, cluster);
    if (m_options.rayStateDir.isEmpty() || cluster.isEmpty() || jobId.isEmpty() || !QFileInfo::exists(head + QStringLiteral(".json"))) {
        return;
    }
    QFile request(QStringLiteral("%1.jobs/%2.stop").arg(head, jobId));
    (void)request.open(QIODevice::WriteOnly);
}

QString RayJobController::submitterScript(const QString &address, const QString &jobId, const QString &entrypoint, const QJsonObject &runtimeEnv)
{
    // common/job.go's BuildJobSubmitCommand for K8sJobMode, its words joined by single spaces:
    // wait for the dashboard's GCS health, submit unless the job exists, then follow its logs.
    QStringList cmd{QStringLiteral("until"),
                    QStringLiteral("python -c \"import urllib.request; r=urllib.request.urlopen('%1/api/gcs_healthz', timeout=10); "
                                   "exit(0 if b'success' in r.read() else 1)\"").arg(address),
                    QStringLiteral(">/dev/null"), QStringLiteral("2>&1"), QStringLiteral(";"), QStringLiteral("do"), QStringLiteral("echo"),
                    quoteForBash(QStringLiteral("Waiting for Ray Dashboard GCS to become healthy at %1 ...").arg(address)),
                    QStringLiteral(";"), QStringLiteral("sleep"), QStringLiteral("2"), QStringLiteral(";"), QStringLiteral("done"), QStringLiteral(";"),
                    QStringLiteral("if"), QStringLiteral("!"), QStringLiteral("ray"), QStringLiteral("job"), QStringLiteral("status"),
                    QStringLiteral("--address"), address, jobId, QStringLiteral(">/dev/null"), QStringLiteral("2>&1"), QStringLiteral(";"),
                    QStringLiteral("then"), QStringLiteral("ray"), QStringLiteral("job"), QStringLiteral("submit"), QStringLiteral("--address"), address,
                    QStringLiteral("--no-wait")};
    if (!runtimeEnv.isEmpty()) {
        cmd << QStringLiteral("--runtime-env-json") << quoteForBash(QString::fromUtf8(QJsonDocument(runtimeEnv).toJson(QJsonDocument::Compact)));
    }
    if (!jobId.isEmpty()) {
        cmd << QStringLiteral("--submission-id") << jobId;
    }
    cmd << QStringLiteral("--") << entrypoint << QStringLiteral(";") << QStringLiteral("fi") << QStringLiteral(";")
        << QStringLiteral("ray") << QStringLiteral("job") << QStringLiteral("logs") << QStringLiteral("--address") << address
        << QStringLiteral("--follow") << jobId;
    return cmd.join(u' ');
}

QString RayJobController::goTimeString(const QString &rfc3339)
{
    // Go's time.Time.String() of a time read back from the API (whole seconds, UTC).
    const QDateTime t = QDateTime::fromString(rfc3339, Qt::ISODate).toUTC();
    return t.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) + QStringLiteral(" +0000 UTC");
}

QString RayJobController::goDateTime(const QString &rfc3339)
{
    // Go's time.DateTime layout, "2006-01-02 15:04:05".
    return QDateTime::fromString(rfc3339, Qt::ISODate).toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

} // namespace Starforge::Sandbox
