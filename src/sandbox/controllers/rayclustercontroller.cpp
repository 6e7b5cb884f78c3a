#include "sandbox/controllers/rayclustercontroller.h"

#include "sandbox/cluster/eventrecorder.h"
#include "sandbox/cluster/resourcequota.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

#include <QJsonArray>
#include <QVersionNumber>

#include <algorithm>

namespace Starforge::Sandbox {

namespace {

// The operator's requeue after a failed create: controller-runtime's per-item exponential
// back-off (its default rate limiter: 5 ms doubling, at most 1000 s).
constexpr int RetryBaseMs = 5;
constexpr qint64 RetryMaxMs = 1000 * 1000;
constexpr int MaxRayClusterNameLength = 53;

const ResourceType &clusterType()
{
    return *ResourceTypes::find(QStringLiteral("ray.io"), QStringLiteral("v1"), QStringLiteral("rayclusters"));
}
const ResourceType &podType()
{
    return *ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("pods"));
}
const ResourceType &serviceType()
{
    return *ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("services"));
}

bool podReady(const QJsonObject &pod)
{
    const QJsonObject status = pod.value(QStringLiteral("status")).toObject();
    if (status.value(QStringLiteral("phase")).toString() != QLatin1String("Running")) {
        return false;
    }
    for (const QJsonValue &c : status.value(QStringLiteral("conditions")).toArray()) {
        if (c.toObject().value(QStringLiteral("type")).toString() == QLatin1String("Ready")) {
            return c.toObject().value(QStringLiteral("status")).toString() == QLatin1String("True");
        }
    }
    return false;
}

// The operator's `ray start` line: rayStartParams as --key=value ("true" a bare flag, "false"
// dropped) after its own defaults.
QString rayStartCommand(bool head, const QJsonObject &params, const QString &headAddress)
{
    QMap<QString, QString> merged;
    merged.insert(QStringLiteral("metrics-export-port"), QStringLiteral("8080"));
    merged.insert(QStringLiteral("dashboard-agent-listen-port"), QStringLiteral("52365"));
    if (head) {
        merged.insert(QStringLiteral("dashboard-host"), QStringLiteral("0.0.0.0"));
    } else {
        merged.insert(QStringLiteral("address"), headAddress);
    }
    for (auto it = params.begin(); it != params.end(); ++it) {
        merged.insert(it.key(), it.value().toString());
    }
    QString line = QStringLiteral("ulimit -n 65536; ray start ") + (head ? QStringLiteral("--head ") : QString()) + QStringLiteral(" --block ");
    for (auto it = merged.cbegin(); it != merged.cend(); ++it) {
        if (it.value() == QLatin1String("false")) continue;
        line += it.value() == QLatin1String("true") ? QStringLiteral(" --%1 ").arg(it.key()) : QStringLiteral(" --%1=%2 ").arg(it.key(), it.value());
    }
    return line.trimmed();
}

QJsonObject envVar(const QString &name, const QString &value)
{
    return QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("value"), value}};
}

// DefaultWorkerPodTemplate's init container: it polls the head's GCS every 5 s, quietly for
// the first 120 s, and never gives up. Image, pull policy, securityContext, env and mounts are
// the worker's Ray container's as the user wrote them.
QJsonObject waitGcsReadyContainer(const QJsonObject &rayContainer, const QString &fqdn, const QString &port)
{
    const QString script = QStringLiteral(R"(
				SECONDS=0
				while true; do
					if (( SECONDS <= 120 )); then
						if ray health-check --address %1:%2 > /dev/null 2>&1; then
							echo "GCS is ready."
							break
						fi
						echo "$SECONDS seconds elapsed: Waiting for GCS to be ready."
					else
						if ray health-check --address %1:%2; then
							echo "GCS is ready. Any error messages above can be safely ignored."
							break
						fi
						echo "$SECONDS seconds elapsed: Still waiting for GCS to be ready. For troubleshooting, refer to the FAQ at https://docs.ray.io/en/master/cluster/kubernetes/troubleshooting.html."
					fi
					sleep 5
				done
			)").arg(fqdn, port);
    const QJsonObject fixed{{QStringLiteral("cpu"), QStringLiteral("200m")}, {QStringLiteral("memory"), QStringLiteral("256Mi")}};
    QJsonObject init{{QStringLiteral("name"), QStringLiteral("wait-gcs-ready")},
                     {QStringLiteral("image"), rayContainer.value(QStringLiteral("image"))},
                     {QStringLiteral("command"), QJsonArray{QStringLiteral("/bin/bash"), QStringLiteral("-c"), QStringLiteral("--")}},
                     {QStringLiteral("args"), QJsonArray{script}},
                     {QStringLiteral("resources"), QJsonObject{{QStringLiteral("limits"), fixed}, {QStringLiteral("requests"), fixed}}}};
    for (const char *copied : {"imagePullPolicy", "securityContext", "env", "volumeMounts"}) {
        const QString key = QString::fromLatin1(copied);
        if (rayContainer.contains(key)) init.insert(key, rayContainer.value(key));
    }
    return init;
}

// initLivenessAndReadinessProbe: Ray 2.53 and later answer /api/healthz on the dashboard
// agent's port; older Rays are asked through wget, the head also for the GCS.
QJsonObject rayProbe(bool liveness, bool head, const QString &rayVersion, const QJsonObject &startParams)
{
    const QString agentPort = startParams.value(QStringLiteral("dashboard-agent-listen-port")).toString(QStringLiteral("52365"));
    const QString dashboardPort = startParams.value(QStringLiteral("dashboard-port")).toString(QStringLiteral("8265"));
    QJsonObject probe{{QStringLiteral("initialDelaySeconds"), liveness ? 30 : 10},
                      {QStringLiteral("timeoutSeconds"), head ? 5 : 2},
                      {QStringLiteral("periodSeconds"), 5},
                      {QStringLiteral("successThreshold"), 1},
                      {QStringLiteral("failureThreshold"), liveness ? 120 : 10}};
    const QVersionNumber version = QVersionNumber::fromString(rayVersion);
    if (!version.isNull() && version >= QVersionNumber(2, 53, 0)) {
        probe.insert(QStringLiteral("httpGet"), QJsonObject{{QStringLiteral("path"), QStringLiteral("/api/healthz")},
                                                            {QStringLiteral("port"), agentPort.toInt()}});
    } else {
        QString command = QStringLiteral("wget --tries 1 -T 2 -q -O- http://localhost:%1/api/local_raylet_healthz | grep success").arg(agentPort);
        if (head) {
            // The operator fills the GCS check's -T with the readiness failure threshold (10).
            command += QStringLiteral(" && wget --tries 1 -T 10 -q -O- http://localhost:%1/api/gcs_healthz | grep success").arg(dashboardPort);
        }
        probe.insert(QStringLiteral("exec"), QJsonObject{{QStringLiteral("command"), QJsonArray{QStringLiteral("bash"), QStringLiteral("-c"), command}}});
    }
    return probe;
}

} // namespace

RayClusterController::RayClusterController(ObjectStore *store, EventRecorder *events, quint32 seed, Options options, QObject *parent)
    : QObject(parent)
    , m_store(store)
    , m_events(events)
    , m_options(options)
    , m_random(seed ^ 0x72617963u)
    , m_queue([this](const QString &ns, const QString &name) { reconcile(ns, name); }, this)
{
    connect(store, &ObjectStore::changed, this, &RayClusterController::onChange);
}

void RayClusterController::onChange(const Change &change)
{
    if (change.storage == clusterType().storage && change.type != ChangeType::Deleted) {
        m_queue.add(change.object->ns, change.object->name);
    } else if (change.storage == QLatin1String("resourcequotas")
               && (change.type != ChangeType::Modified || !change.previous
                   || change.previous->object.value(QStringLiteral("spec")) != change.object->object.value(QStringLiteral("spec")))) {
        // A quota added, changed or removed may let a refused pod be created now.
        for (const ObjectPtr &cluster : m_store->list(clusterType().storage, change.object->ns)) {
            m_queue.add(cluster->ns, cluster->name);
        }
    } else if (change.storage == podType().storage) {
        const QString cluster = change.object->object.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("labels")).toObject()
                                    .value(QStringLiteral("ray.io/cluster")).toString();
        if (!cluster.isEmpty()) {
            m_queue.add(change.object->ns, cluster);
        }
    }
}

void RayClusterController::reconcile(const QString &ns, const QString &name)
{
    const ObjectPtr cluster = m_store->get(clusterType().storage, ns, name);
    if (!cluster) {
        m_refusals.remove(ObjectStore::keyOf(ns, name));
        return;
    }
    // ValidateRayClusterMetadata: pod and service names are built from the cluster's, which
    // therefore has at most 53 characters (docs/kuberay.md, "Names, labels and events").
    if (name.size() > MaxRayClusterNameLength) {
        m_events->record(cluster->object, QStringLiteral("Warning"), QStringLiteral("InvalidRayClusterMetadata"),
                         QStringLiteral("The RayCluster metadata is invalid %1/%2: RayCluster name should be no more than %3 characters")
                             .arg(ns, name).arg(MaxRayClusterNameLength),
                         QStringLiteral("raycluster-controller"), EventRecorder::Api::EventsV1, QStringLiteral("Validate"));
        return;
    }
    const QJsonObject spec = cluster->object.value(QStringLiteral("spec")).toObject();
    const QJsonObject headSpec = spec.value(QStringLiteral("headGroupSpec")).toObject();
    const QString serviceName = name + QStringLiteral("-head-svc");
    const QString headFqdn = QStringLiteral("%1.%2.svc.cluster.local").arg(serviceName, ns);
    // GetHeadPort: the head's rayStartParams port, else the GCS's default.
    const QString headPort = headSpec.value(QStringLiteral("rayStartParams")).toObject().value(QStringLiteral("port")).toString(QStringLiteral("6379"));
    const QString headAddress = headFqdn + u':' + headPort;
    const QString rayVersion = spec.value(QStringLiteral("rayVersion")).toString();

    std::vector<ObjectPtr> heads;
    QHash<QString, std::vector<ObjectPtr>> workers;
    for (const ObjectPtr &pod : m_store->list(podType().storage, ns)) {
        if (!isControlledBy(pod->object, cluster->uid)) continue;
        const QJsonObject labels = pod->object.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("labels")).toObject();
        if (labels.value(QStringLiteral("ray.io/node-type")).toString() == QLatin1String("head")) {
            heads.push_back(pod);
        } else {
            workers[labels.value(QStringLiteral("ray.io/group")).toString()].push_back(pod);
        }
    }

    bool createFailed = false;
    const auto makePod = [&](const QJsonObject &groupSpec, bool head, const QString &group) -> bool {
        QJsonObject pod = groupSpec.value(QStringLiteral("template")).toObject();
        QJsonObject meta = pod.value(QStringLiteral("metadata")).toObject();
        QJsonObject labels = meta.value(QStringLiteral("labels")).toObject();
        labels.insert(QStringLiteral("ray.io/cluster"), name);
        labels.insert(QStringLiteral("ray.io/node-type"), head ? QStringLiteral("head") : QStringLiteral("worker"));
        labels.insert(QStringLiteral("ray.io/group"), head ? QStringLiteral("headgroup") : group);
        labels.insert(QStringLiteral("ray.io/is-ray-node"), QStringLiteral("yes"));
        labels.insert(QStringLiteral("ray.io/identifier"), QString(name + (head ? QStringLiteral("-head") : QStringLiteral("-worker"))));
        labels.insert(QStringLiteral("app.kubernetes.io/name"), QStringLiteral("kuberay"));
        labels.insert(QStringLiteral("app.kubernetes.io/created-by"), QStringLiteral("kuberay-operator"));
        meta.insert(QStringLiteral("labels"), labels);
        // utils.PodName: the cluster (or cluster-group) name cut to 50 first, then "-head-" or
        // "-worker-" and the 5 generated characters, so a long name keeps its node type.
        const QString prefix = (head ? name : QStringLiteral("%1-%2").arg(name, group)).left(50).toLower()
            + (head ? QStringLiteral("-head") : QStringLiteral("-worker"));
        const QString podName = prefix + u'-' + randomSuffix(m_random);
        meta.insert(QStringLiteral("name"), podName);
        meta.insert(QStringLiteral("generateName"), QString(prefix + u'-'));
        meta.insert(QStringLiteral("namespace"), ns);
        meta.insert(QStringLiteral("ownerReferences"), QJsonArray{controllerReference(cluster->object)});
        pod.insert(QStringLiteral("metadata"), meta);
        QJsonObject podSpec = pod.value(QStringLiteral("spec")).toObject();
        QJsonArray containers = podSpec.value(QStringLiteral("containers")).toArray();
        if (!containers.isEmpty()) {
            // Container 0 is the Ray container: the operator writes its command and environment.
            QJsonObject ray = containers.first().toObject();
            QJsonArray inits = podSpec.value(QStringLiteral("initContainers")).toArray();
            if (!head && m_options.injectInitContainer) {
                inits.append(waitGcsReadyContainer(ray, headFqdn, headPort));
            }
            // BuildPod gives every init container, the user's too, the head's address.
            for (qsizetype i = 0; i < inits.size(); ++i) {
                QJsonObject init = inits.at(i).toObject();
                QJsonArray initEnv = init.value(QStringLiteral("env")).toArray();
                initEnv.append(envVar(QStringLiteral("FQ_RAY_IP"), headFqdn));
                initEnv.append(envVar(QStringLiteral("RAY_IP"), serviceName)); // deprecated, kept by KubeRay
                init.insert(QStringLiteral("env"), initEnv);
                inits.replace(i, init);
            }
            if (!inits.isEmpty()) podSpec.insert(QStringLiteral("initContainers"), inits);
            if (m_options.injectProbes) {
                const QJsonObject params = groupSpec.value(QStringLiteral("rayStartParams")).toObject();
                if (!ray.contains(QStringLiteral("livenessProbe"))) ray.insert(QStringLiteral("livenessProbe"), rayProbe(true, head, rayVersion, params));
                if (!ray.contains(QStringLiteral("readinessProbe"))) ray.insert(QStringLiteral("readinessProbe"), rayProbe(false, head, rayVersion, params));
            }
            const QString start = rayStartCommand(head, groupSpec.value(QStringLiteral("rayStartParams")).toObject(), headAddress);
            ray.insert(QStringLiteral("command"), QJsonArray{QStringLiteral("/bin/bash"), QStringLiteral("-c"), QStringLiteral("--")});
            ray.insert(QStringLiteral("args"), QJsonArray{start});
            QJsonArray env = ray.value(QStringLiteral("env")).toArray();
            env.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("RAY_CLUSTER_NAME")}, {QStringLiteral("value"), name}});
            env.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("RAY_NODE_TYPE_NAME")}, {QStringLiteral("value"), head ? QStringLiteral("headgroup") : group}});
            env.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("KUBERAY_GEN_RAY_START_CMD")}, {QStringLiteral("value"), start}});
            if (!head) {
                env.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("RAY_ADDRESS")}, {QStringLiteral("value"), headAddress}});
            }
            ray.insert(QStringLiteral("env"), env);
            containers.replace(0, ray);
            podSpec.insert(QStringLiteral("containers"), containers);
        }
        pod.insert(QStringLiteral("spec"), podSpec);
        pod.insert(QStringLiteral("apiVersion"), QStringLiteral("v1"));
        pod.insert(QStringLiteral("kind"), QStringLiteral("Pod"));
        // The API server's quota admission refuses the create (the controller's client goes
        // through it); the operator records the API's error and retries with back-off. Its
        // pod has only a generateName then, so the head's text names "ns/" and no pod
        // (docs/kuberay.md, "Names, labels and events").
        if (const auto exceeded = ResourceQuotas::exceeded(*m_store, ns, pod)) {
            const QString error = ResourceQuotas::forbiddenMessage(podName, *exceeded);
            m_events->record(cluster->object, QStringLiteral("Warning"),
                             head ? QStringLiteral("FailedToCreateHeadPod") : QStringLiteral("FailedToCreateWorkerPod"),
                             head ? QStringLiteral("Failed to create head Pod %1/, %2").arg(ns, error)
                                  : QStringLiteral("Failed to create worker Pod for the cluster %1/%2, %3").arg(ns, name, error),
                             QStringLiteral("raycluster-controller"), EventRecorder::Api::EventsV1, QStringLiteral("Create"));
            createFailed = true;
            return false;
        }
        if (std::holds_alternative<ObjectPtr>(m_store->create(podType(), pod))) {
            m_events->record(cluster->object, QStringLiteral("Normal"), head ? QStringLiteral("CreatedHeadPod") : QStringLiteral("CreatedWorkerPod"),
                             QStringLiteral("Created %1 Pod %2/%3").arg(head ? QStringLiteral("head") : QStringLiteral("worker"), ns, podName),
                             QStringLiteral("raycluster-controller"), EventRecorder::Api::EventsV1, QStringLiteral("Create"));
        }
        return true;
    };

    if (heads.empty()) {
        makePod(headSpec, true, {});
    }
    int desiredWorkers = 0;
    int minWorkers = 0;
    int maxWorkers = 0;
    for (const QJsonValue &g : spec.value(QStringLiteral("workerGroupSpecs")).toArray()) {
        const QJsonObject group = g.toObject();
        const QString groupName = group.value(QStringLiteral("groupName")).toString();
        const int minReplicas = group.value(QStringLiteral("minReplicas")).toInt(0);
        const int maxReplicas = group.value(QStringLiteral("maxReplicas")).toInt(2147483647);
        const int hosts = std::max(1, group.value(QStringLiteral("numOfHosts")).toInt(1));
        const int replicas = group.value(QStringLiteral("suspend")).toBool()
            ? 0 : std::clamp(group.value(QStringLiteral("replicas")).toInt(0), minReplicas, std::max(minReplicas, maxReplicas));
        const int want = replicas * hosts;
        desiredWorkers += want;
        minWorkers += minReplicas * hosts;
        maxWorkers = static_cast<int>(std::min<qint64>(2147483647, qint64(maxWorkers) + qint64(maxReplicas) * hosts));
        auto &existing = workers[groupName];
        for (int i = static_cast<int>(existing.size()); i < want && !createFailed; ++i) {
            makePod(group, false, groupName);
        }
        for (int i = want; i < static_cast<int>(existing.size()); ++i) {
            (void)m_store->remove(podType(), ns, existing[static_cast<std::size_t>(i)]->name);
            m_events->record(cluster->object, QStringLiteral("Normal"), QStringLiteral("DeletedWorkerPod"),
                             QStringLiteral("Deleted worker Pod %1/%2").arg(ns, existing[static_cast<std::size_t>(i)]->name),
                             QStringLiteral("raycluster-controller"), EventRecorder::Api::EventsV1, QStringLiteral("Delete"));
        }
    }

    if (!m_store->get(serviceType().storage, ns, serviceName)) {
        QJsonArray ports;
        const QJsonArray declared = headSpec.value(QStringLiteral("template")).toObject().value(QStringLiteral("spec")).toObject()
                                        .value(QStringLiteral("containers")).toArray().first().toObject().value(QStringLiteral("ports")).toArray();
        for (const QJsonValue &p : declared) {
            ports.append(QJsonObject{{QStringLiteral("name"), p.toObject().value(QStringLiteral("name"))},
                                     {QStringLiteral("port"), p.toObject().value(QStringLiteral("containerPort"))},
                                     {QStringLiteral("protocol"), QStringLiteral("TCP")}});
        }
        if (ports.isEmpty()) {
            for (const auto &[portName, port] : {std::pair{"client", 10001}, std::pair{"gcs-server", 6379}, std::pair{"dashboard", 8265},
                                                 std::pair{"metrics", 8080}, std::pair{"serve", 8000}}) {
                ports.append(QJsonObject{{QStringLiteral("name"), QString::fromLatin1(portName)}, {QStringLiteral("port"), port},
                                         {QStringLiteral("protocol"), QStringLiteral("TCP")}});
            }
        }
        const QJsonObject selector{{QStringLiteral("ray.io/cluster"), name}, {QStringLiteral("ray.io/node-type"), QStringLiteral("head")},
                                   {QStringLiteral("ray.io/identifier"), QString(name + QStringLiteral("-head"))}};
        const QJsonObject service{{QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("Service")},
                                  {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), serviceName}, {QStringLiteral("namespace"), ns},
                                                                           {QStringLiteral("labels"), selector},
                                                                           {QStringLiteral("ownerReferences"), QJsonArray{controllerReference(cluster->object)}}}},
                                  {QStringLiteral("spec"), QJsonObject{{QStringLiteral("clusterIP"), QStringLiteral("None")},
                                                                       {QStringLiteral("publishNotReadyAddresses"), true},
                                                                       {QStringLiteral("selector"), selector}, {QStringLiteral("ports"), ports},
                                                                       {QStringLiteral("type"), QStringLiteral("ClusterIP")}}}};
        if (std::holds_alternative<ObjectPtr>(m_store->create(serviceType(), service))) {
            m_events->record(cluster->object, QStringLiteral("Normal"), QStringLiteral("CreatedService"),
                             QStringLiteral("Created service %1/%2").arg(ns, serviceName), QStringLiteral("raycluster-controller"),
                             EventRecorder::Api::EventsV1, QStringLiteral("Create"));
        }
    }

    // Status from the pods as they are now.
    ObjectPtr head;
    int readyWorkers = 0;
    int workerCount = 0;
    for (const ObjectPtr &pod : m_store->list(podType().storage, ns)) {
        if (!isControlledBy(pod->object, cluster->uid)) continue;
        const bool isHead = pod->object.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("labels")).toObject()
                                .value(QStringLiteral("ray.io/node-type")).toString() == QLatin1String("head");
        if (isHead) {
            head = pod;
        } else {
            ++workerCount;
            readyWorkers += podReady(pod->object) ? 1 : 0;
        }
    }
    const bool headReady = head && podReady(head->object);
    const bool ready = headReady && readyWorkers == desiredWorkers && workerCount == desiredWorkers;
    m_store->modify(clusterType(), ns, name, [&](QJsonObject &c) {
        QJsonObject status = c.value(QStringLiteral("status")).toObject();
        const QString now = nowRfc3339();
        const auto cond = [&](const QString &type, bool value, const QString &reason, const QString &message) {
            QJsonObject out{{QStringLiteral("type"), type}, {QStringLiteral("status"), value ? QStringLiteral("True") : QStringLiteral("False")},
                            {QStringLiteral("reason"), reason}, {QStringLiteral("message"), message},
                            {QStringLiteral("lastTransitionTime"), now}};
            for (const QJsonValue &o : status.value(QStringLiteral("conditions")).toArray()) {
                if (o.toObject().value(QStringLiteral("type")).toString() == type && o.toObject().value(QStringLiteral("status")) == out.value(QStringLiteral("status"))) {
                    out.insert(QStringLiteral("lastTransitionTime"), o.toObject().value(QStringLiteral("lastTransitionTime")));
                }
            }
            return out;
        };
        // HeadPodReady as v1.7's FindHeadPodReadyCondition reads it off the head pod's Ready
        // condition, with the first waiting (or terminated) container's reason in place of
        // ContainersNotReady (docs/kuberay.md, "Head and worker groups").
        QString headReason = QStringLiteral("HeadPodNotFound");
        QString headMessage = QStringLiteral("Head Pod not found");
        if (head) {
            headReason = QStringLiteral("Unknown");
            headMessage.clear();
            const QJsonObject podStatus = head->object.value(QStringLiteral("status")).toObject();
            for (const QJsonValue &podCondition : podStatus.value(QStringLiteral("conditions")).toArray()) {
                if (podCondition[QStringLiteral("type")].toString() != QLatin1String("Ready")) continue;
                headMessage = podCondition[QStringLiteral("message")].toString();
                headReason = podCondition[QStringLiteral("reason")].toString();
                if (headReason.isEmpty()) headReason = headReady ? QStringLiteral("HeadPodRunningAndReady") : QStringLiteral("Unknown");
                if (headReason == QLatin1String("ContainersNotReady")) {
                    for (const QJsonValue &cs : podStatus.value(QStringLiteral("containerStatuses")).toArray()) {
                        const QJsonObject state = cs[QStringLiteral("state")].toObject();
                        const QJsonObject detail = state.contains(QStringLiteral("waiting")) ? state.value(QStringLiteral("waiting")).toObject()
                                                                                               : state.value(QStringLiteral("terminated")).toObject();
                        if (detail.isEmpty()) continue;
                        headReason = detail.value(QStringLiteral("reason")).toString();
                        headMessage += (headMessage.isEmpty() ? QString() : QStringLiteral("; "))
                            + QStringLiteral("%1: %2").arg(cs[QStringLiteral("name")].toString(), detail.value(QStringLiteral("message")).toString());
                        break;
                    }
                }
                break;
            }
        }
        status.insert(QStringLiteral("conditions"),
                      QJsonArray{cond(QStringLiteral("HeadPodReady"), headReady, headReason, headMessage),
                                 cond(QStringLiteral("RayClusterProvisioned"), ready, ready ? QStringLiteral("AllPodRunningAndReadyFirstTime") : QStringLiteral("RayClusterPodsProvisioning"),
                                      ready ? QString() : QStringLiteral("RayCluster Pods are being provisioned for first time"))});
        if (ready) {
            status.insert(QStringLiteral("state"), QStringLiteral("ready"));
            status.insert(QStringLiteral("stateTransitionTimes"), QJsonObject{{QStringLiteral("ready"), status.value(QStringLiteral("stateTransitionTimes")).toObject()
                                                                                                       .value(QStringLiteral("ready")).toString(now)}});
        }
        status.insert(QStringLiteral("desiredWorkerReplicas"), desiredWorkers);
        status.insert(QStringLiteral("minWorkerReplicas"), minWorkers);
        status.insert(QStringLiteral("maxWorkerReplicas"), maxWorkers);
        status.insert(QStringLiteral("readyWorkerReplicas"), readyWorkers);
        status.insert(QStringLiteral("availableWorkerReplicas"), readyWorkers);
        if (head) {
            status.insert(QStringLiteral("head"), QJsonObject{{QStringLiteral("podName"), head->name}, {QStringLiteral("podIP"), QStringLiteral("127.0.0.1")},
                                                              {QStringLiteral("serviceName"), serviceName}, {QStringLiteral("serviceIP"), QStringLiteral("127.0.0.1")}});
        }
        status.insert(QStringLiteral("endpoints"), QJsonObject{{QStringLiteral("client"), QStringLiteral("10001")}, {QStringLiteral("dashboard"), QStringLiteral("8265")},
                                                               {QStringLiteral("gcs-server"), QStringLiteral("6379")}, {QStringLiteral("metrics"), QStringLiteral("8080")}});
        status.insert(QStringLiteral("observedGeneration"), c.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("generation")));
        c.insert(QStringLiteral("status"), status);
        return true;
    });
    const QString key = ObjectStore::keyOf(ns, name);
    if (createFailed) {
        // controller-runtime's back-off for a reconcile that returned an error: 5 ms doubling
        // per failure in a row, up to 1000 s. A quota change brings the cluster back at once.
        const int failures = m_refusals.value(key) + 1;
        m_refusals.insert(key, failures);
        m_queue.addAfter(ns, name, static_cast<int>(std::min<qint64>(qint64(RetryBaseMs) << std::min(failures - 1, 20), RetryMaxMs)));
    } else {
        m_refusals.remove(key);
    }
}

} // namespace Starforge::Sandbox
