#include "sandbox/controllers/rayjobcontroller.h"

#include "sandbox/cluster/eventrecorder.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

#include "sandbox/util/yaml.h"

namespace Starforge::Sandbox {

namespace {

const ResourceType &rayJobType() { return *ResourceTypes::find(QStringLiteral("ray.io"), QStringLiteral("v1"), QStringLiteral("rayjobs")); }
const ResourceType &clusterType() { return *ResourceTypes::find(QStringLiteral("ray.io"), QStringLiteral("v1"), QStringLiteral("rayclusters")); }
const ResourceType &jobType() { return *ResourceTypes::find(QStringLiteral("batch"), QStringLiteral("v1"), QStringLiteral("jobs")); }
const ResourceType &podType() { return *ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("pods")); }
const ResourceType &serviceType() { return *ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("services")); }

constexpr int MaxRayJobNameLength = 47;
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

RayJobController::RayJobController(ObjectStore *store, EventRecorder *events, quint32 seed, QObject *parent)
    : QObject(parent)
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
    if (RayJobDeletion::finalize(*m_store, current->object)) {
        return;
    }
    const QJsonObject rayJob = current->object;
    const QJsonObject spec = rayJob.value(QStringLiteral("spec")).toObject();
    QJsonObject status = rayJob.value(QStringLiteral("status")).toObject();
    const QString deployment = status.value(QStringLiteral("jobDeploymentStatus")).toString();
    const QString now = nowRfc3339();
    const auto write = [&](const QJsonObject &newStatus) {
        m_store->modify(rayJobType(), ns, name, [&](QJsonObject &o) {
            o.insert(QStringLiteral("status"), newStatus);
            return true;
        });
    };
    const auto finish = [&](const QString &deploymentStatus, const QString &reason, const QString &message) {
        status.insert(QStringLiteral("jobDeploymentStatus"), deploymentStatus);
        if (!reason.isEmpty()) status.insert(QStringLiteral("reason"), reason);
        if (!message.isEmpty()) status.insert(QStringLiteral("message"), message);
        status.insert(QStringLiteral("endTime"), now);
        if (deploymentStatus == QLatin1String("Failed")) {
            status.insert(QStringLiteral("failed"), status.value(QStringLiteral("failed")).toInt(0) + 1);
        } else if (status.value(QStringLiteral("jobStatus")).toString() == QLatin1String("SUCCEEDED")) {
            status.insert(QStringLiteral("succeeded"), status.value(QStringLiteral("succeeded")).toInt(0) + 1);
        }
        write(status);
        // Back for the TTL clean-up.
        m_queue.addAfter(ns, name, static_cast<int>(spec.value(QStringLiteral("ttlSecondsAfterFinished")).toInteger(0)) * 1000 + 10);
    };

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

    // Deadlines, measured from startTime, while the job is on its way.
    if (!terminal && !deployment.isEmpty()) {
        const qint64 elapsed = secondsSince(status.value(QStringLiteral("startTime")).toString());
        if (spec.contains(QStringLiteral("activeDeadlineSeconds")) && elapsed >= spec.value(QStringLiteral("activeDeadlineSeconds")).toInteger()) {
            finish(QStringLiteral("Failed"), QStringLiteral("DeadlineExceeded"),
                   QStringLiteral("The RayJob has passed the activeDeadlineSeconds. StartTime: %1. ActiveDeadlineSeconds: %2")
                       .arg(status.value(QStringLiteral("startTime")).toString()).arg(spec.value(QStringLiteral("activeDeadlineSeconds")).toInteger()));
            return;
        }
        if (deployment == QLatin1String("Initializing") && spec.contains(QStringLiteral("preRunningDeadlineSeconds"))
            && elapsed >= spec.value(QStringLiteral("preRunningDeadlineSeconds")).toInteger()) {
            finish(QStringLiteral("Failed"), QStringLiteral("PreRunningDeadlineExceeded"),
                   QStringLiteral("The RayJob has passed the preRunningDeadlineSeconds. StartTime: %1. PreRunningDeadlineSeconds: %2")
                       .arg(status.value(QStringLiteral("startTime")).toString()).arg(spec.value(QStringLiteral("preRunningDeadlineSeconds")).toInteger()));
            return;
        }
    }

    if (deployment.isEmpty()) {
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
            if (!finalizers.contains(QLatin1String(RayJobDeletion::Finalizer))) finalizers.append(QLatin1String(RayJobDeletion::Finalizer));
            meta.insert(QStringLiteral("finalizers"), finalizers);
            o.insert(QStringLiteral("metadata"), meta);
            return true;
        });
        const QString jobId = spec.value(QStringLiteral("jobId")).toString(name + u'-' + randomSuffix(m_random));
        status.insert(QStringLiteral("jobId"), jobId);
        status.insert(QStringLiteral("rayClusterName"), QString(name + u'-' + randomSuffix(m_random)));
        status.insert(QStringLiteral("startTime"), now);
        status.insert(QStringLiteral("jobDeploymentStatus"), spec.value(QStringLiteral("suspend")).toBool() ? QStringLiteral("Suspended") : QStringLiteral("Initializing"));
        status.insert(QStringLiteral("jobStatus"), QString());
        status.remove(QStringLiteral("reason"));
        status.remove(QStringLiteral("message"));
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

    if (deployment == QLatin1String("Initializing")) {
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
            write(status);
            if (spec.contains(QStringLiteral("activeDeadlineSeconds")) || spec.contains(QStringLiteral("preRunningDeadlineSeconds"))) {
                m_queue.addAfter(ns, name, 500); // deadlines are checked as the operator's requeue does
            }
            return;
        }
        status.insert(QStringLiteral("dashboardURL"), QStringLiteral("%1-head-svc.%2.svc.cluster.local:8265").arg(clusterName, ns));
        if (!m_store->get(jobType().storage, ns, name)) {
            QString envError;
            const QJsonObject runtimeEnv = *runtimeEnvJson(spec.value(QStringLiteral("runtimeEnvYAML")).toString(), &envError);
            const QString address = QStringLiteral("http://%1-head-svc.%2.svc.cluster.local:8265").arg(clusterName, ns);
            QString script = QStringLiteral("ray job submit --address %1").arg(address);
            if (!runtimeEnv.isEmpty()) {
                script += QStringLiteral(" --runtime-env-json ") + quoteForBash(QString::fromUtf8(QJsonDocument(runtimeEnv).toJson(QJsonDocument::Compact)));
            }
            script += QStringLiteral(" --submission-id %1 -- %2").arg(jobId, spec.value(QStringLiteral("entrypoint")).toString());
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
            env.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("RAY_DASHBOARD_ADDRESS")}, {QStringLiteral("value"), address}});
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
        status.insert(QStringLiteral("jobStatus"), QStringLiteral("PENDING"));
        write(status);
        return;
    }

    if (deployment == QLatin1String("Running")) {
        if (const ObjectPtr cluster = m_store->get(clusterType().storage, ns, clusterName)) {
            status.insert(QStringLiteral("rayClusterStatus"), cluster->object.value(QStringLiteral("status")));
        }
        const ObjectPtr job = m_store->get(jobType().storage, ns, name);
        // The submitter runs the driver; its latest pod tells the Ray job's state.
        ObjectPtr lastPod;
        for (const ObjectPtr &pod : m_store->list(podType().storage, ns)) {
            if (job && isControlledBy(pod->object, job->uid) && (!lastPod || pod->resourceVersion > lastPod->resourceVersion)) {
                lastPod = pod;
            }
        }
        const QJsonObject podStatus = lastPod ? lastPod->object.value(QStringLiteral("status")).toObject() : QJsonObject();
        const QString phase = podStatus.value(QStringLiteral("phase")).toString();
        const QJsonObject terminated = podStatus.value(QStringLiteral("containerStatuses")).toArray().first().toObject()
                                           .value(QStringLiteral("state")).toObject().value(QStringLiteral("terminated")).toObject();
        if (phase == QLatin1String("Running") && status.value(QStringLiteral("jobStatus")).toString() != QLatin1String("RUNNING")) {
            status.insert(QStringLiteral("jobStatus"), QStringLiteral("RUNNING"));
            status.insert(QStringLiteral("rayJobInfo"), QJsonObject{{QStringLiteral("startTime"), now}});
        }
        if (phase == QLatin1String("Succeeded")) {
            status.insert(QStringLiteral("jobStatus"), QStringLiteral("SUCCEEDED"));
            QJsonObject info = status.value(QStringLiteral("rayJobInfo")).toObject();
            info.insert(QStringLiteral("endTime"), now);
            status.insert(QStringLiteral("rayJobInfo"), info);
            finish(QStringLiteral("Complete"), {}, QStringLiteral("Job finished successfully."));
            return;
        }
        if (phase == QLatin1String("Failed")) {
            status.insert(QStringLiteral("jobStatus"), QStringLiteral("FAILED"));
            QJsonObject info = status.value(QStringLiteral("rayJobInfo")).toObject();
            info.insert(QStringLiteral("endTime"), now);
            status.insert(QStringLiteral("rayJobInfo"), info);
            const int exitCode = terminated.value(QStringLiteral("exitCode")).toInt(1);
            const int backoff = spec.value(QStringLiteral("backoffLimit")).toInt(0);
            if (status.value(QStringLiteral("failed")).toInt(0) < backoff) {
                // Retrying: a new cluster and submitter, as the operator does.
                status.insert(QStringLiteral("failed"), status.value(QStringLiteral("failed")).toInt(0) + 1);
                status.insert(QStringLiteral("jobDeploymentStatus"), QStringLiteral("Retrying"));
                write(status);
                (void)m_store->remove(clusterType(), ns, clusterName);
                (void)m_store->remove(jobType(), ns, name);
                record(rayJob, QStringLiteral("Normal"), QStringLiteral("DeletedRayCluster"), QStringLiteral("Deleted cluster %1/%2").arg(ns, clusterName), QStringLiteral("Delete"));
                QJsonObject fresh{{QStringLiteral("failed"), status.value(QStringLiteral("failed"))},
                                  {QStringLiteral("succeeded"), status.value(QStringLiteral("succeeded"))}};
                write(fresh);
                m_queue.add(ns, name);
                return;
            }
            finish(QStringLiteral("Failed"), QStringLiteral("AppFailed"),
                   QStringLiteral("Job entrypoint command failed with exit code %1").arg(exitCode));
            return;
        }
        write(status);
        if (spec.contains(QStringLiteral("activeDeadlineSeconds"))) {
            m_queue.addAfter(ns, name, 500);
        }
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

} // namespace Starforge::Sandbox
