#include "core/kube/resources.h"

#include "core/kube/podresources.h"
#include "core/kube/quantity.h"

#include <QJsonArray>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <limits>

namespace Starforge::Kube {

namespace {

QJsonObject obj(const QJsonObject &o, const char *key)
{
    return o.value(QLatin1String(key)).toObject();
}

QString text(const QJsonObject &o, const char *key)
{
    return o.value(QLatin1String(key)).toString();
}

// Whole units from milli-units, saturated: a quantity can hold far more than an int.
int wholeUnits(qint64 milli)
{
    const qint64 units = milli / 1000;
    return static_cast<int>(std::clamp<qint64>(units, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
}

int gpus(const QJsonObject &resources)
{
    const auto milli = parseQuantityMilli(resources.value(QStringLiteral("nvidia.com/gpu")).toString());
    return milli ? wholeUnits(*milli) : 0;
}

// An integer field that may be absent: a fraction, a string or a number beyond int is absent too.
std::optional<int> optionalInt(const QJsonObject &o, const char *key)
{
    const QJsonValue v = o.value(QLatin1String(key));
    if (!v.isDouble()) {
        return std::nullopt;
    }
    const double d = v.toDouble();
    // NaN fails the first test, infinities the range.
    if (d != std::trunc(d) || d < std::numeric_limits<int>::min() || d > std::numeric_limits<int>::max()) {
        return std::nullopt;
    }
    return static_cast<int>(d);
}

int integer(const QJsonObject &o, const char *key, int fallback = 0)
{
    return optionalInt(o, key).value_or(fallback);
}

bool flag(const QJsonObject &o, const char *key)
{
    return o.value(QLatin1String(key)).toBool();
}

QList<Condition> readConditions(const QJsonObject &status)
{
    QList<Condition> out;
    for (const QJsonValue &c : status.value(QStringLiteral("conditions")).toArray()) {
        const QJsonObject o = c.toObject();
        out << Condition{text(o, "type"), text(o, "status"), text(o, "reason"), text(o, "message"),
                         parseTime(text(o, "lastTransitionTime"))};
    }
    return out;
}

std::optional<Condition> findCondition(const QList<Condition> &list, const QString &type)
{
    for (const Condition &c : list) {
        if (c.type == type) return c;
    }
    return std::nullopt;
}

std::optional<OwnerReference> controllerOf(const QJsonObject &meta)
{
    for (const QJsonValue &v : meta.value(QStringLiteral("ownerReferences")).toArray()) {
        const QJsonObject o = v.toObject();
        if (flag(o, "controller")) {
            return OwnerReference{text(o, "apiVersion"), text(o, "kind"), text(o, "name"), text(o, "uid"), true};
        }
    }
    return std::nullopt;
}

ResourceMilli quantities(const QJsonObject &map)
{
    ResourceMilli out;
    for (auto it = map.begin(); it != map.end(); ++it) {
        if (const auto v = parseQuantityMilli(it.value().toString())) {
            out.insert(it.key(), *v);
        }
    }
    return out;
}

QList<ContainerState> containerStates(const QJsonArray &statuses)
{
    QList<ContainerState> out;
    for (const QJsonValue &v : statuses) {
        const QJsonObject s = v.toObject();
        ContainerState c;
        c.name = text(s, "name");
        c.ready = s.value(QStringLiteral("ready")).toBool();
        c.restartCount = s.value(QStringLiteral("restartCount")).toInt();
        const QJsonObject state = obj(s, "state");
        for (const char *kind : {"waiting", "running", "terminated"}) {
            if (state.contains(QLatin1String(kind))) {
                const QJsonObject detail = obj(state, kind);
                c.state = QLatin1String(kind);
                c.reason = text(detail, "reason");
                c.message = text(detail, "message");
                c.exitCode = detail.value(QStringLiteral("exitCode")).toInt();
                break;
            }
        }
        out << c;
    }
    return out;
}

} // namespace

QDateTime parseTime(const QString &value)
{
    if (value.isEmpty()) {
        return {};
    }
    QDateTime t = QDateTime::fromString(value, Qt::ISODateWithMs);
    if (!t.isValid()) {
        // MicroTime has six fractional digits; Qt reads at most three.
        QString trimmed = value;
        static const QRegularExpression fraction(QStringLiteral("\\.(\\d{3})\\d*"));
        trimmed.replace(fraction, QStringLiteral(".\\1"));
        t = QDateTime::fromString(trimmed, Qt::ISODateWithMs);
    }
    return t.toUTC();
}

Node Node::fromJson(const QJsonObject &node, const QString &seriesLabel)
{
    Node n;
    const QJsonObject meta = obj(node, "metadata");
    n.name = text(meta, "name");
    n.uid = text(meta, "uid");
    n.labels = obj(meta, "labels");
    n.series = n.labels.value(seriesLabel).toString();
    const QJsonObject spec = obj(node, "spec");
    n.unschedulable = spec.value(QStringLiteral("unschedulable")).toBool();
    for (const QJsonValue &t : spec.value(QStringLiteral("taints")).toArray()) {
        n.taints << Taint{text(t.toObject(), "key"), text(t.toObject(), "value"), text(t.toObject(), "effect")};
    }
    const QJsonObject status = obj(node, "status");
    n.gpuCapacity = gpus(obj(status, "capacity"));
    n.gpuAllocatable = gpus(obj(status, "allocatable"));
    for (const QJsonValue &c : status.value(QStringLiteral("conditions")).toArray()) {
        if (text(c.toObject(), "type") == QLatin1String("Ready")) {
            n.ready = text(c.toObject(), "status") == QLatin1String("True");
            n.readyReason = text(c.toObject(), "reason");
        }
    }
    return n;
}

Pod Pod::fromJson(const QJsonObject &pod)
{
    Pod p;
    const QJsonObject meta = obj(pod, "metadata");
    p.name = text(meta, "name");
    p.ns = text(meta, "namespace");
    p.uid = text(meta, "uid");
    p.labels = obj(meta, "labels");
    p.nodeName = text(obj(pod, "spec"), "nodeName");
    const QJsonObject selector = obj(obj(pod, "spec"), "nodeSelector");
    for (auto it = selector.constBegin(); it != selector.constEnd(); ++it) {
        if (it.value().isString()) p.nodeSelector.insert(it.key(), it.value());
    }
    const QJsonObject status = obj(pod, "status");
    p.phase = text(status, "phase");
    p.conditions = readConditions(status);
    p.containers = containerStates(status.value(QStringLiteral("containerStatuses")).toArray());
    p.initContainers = containerStates(status.value(QStringLiteral("initContainerStatuses")).toArray());
    p.gpuRequests = wholeUnits(podRequests(pod).value(QStringLiteral("nvidia.com/gpu")));
    return p;
}

std::optional<Condition> Pod::condition(const QString &type) const
{
    return findCondition(conditions, type);
}

Event Event::fromJson(const QJsonObject &event)
{
    Event e;
    const bool v1 = text(event, "apiVersion") == QLatin1String("events.k8s.io/v1") || event.contains(QStringLiteral("regarding"));
    const QJsonObject meta = obj(event, "metadata");
    e.ns = text(meta, "namespace");
    e.name = text(meta, "name");
    e.type = text(event, "type");
    e.reason = text(event, "reason");
    e.action = text(event, "action");
    e.message = text(event, v1 ? "note" : "message");
    e.reportingComponent = text(event, v1 ? "reportingController" : "reportingComponent");
    if (e.reportingComponent.isEmpty()) {
        e.reportingComponent = text(obj(event, v1 ? "deprecatedSource" : "source"), "component");
    }
    const QJsonObject regarding = obj(event, v1 ? "regarding" : "involvedObject");
    e.regardingKind = text(regarding, "kind");
    e.regardingName = text(regarding, "name");
    e.regardingNamespace = text(regarding, "namespace");
    e.regardingUid = text(regarding, "uid");
    e.regardingFieldPath = text(regarding, "fieldPath");
    const QJsonObject series = obj(event, "series");
    const QDateTime eventTime = parseTime(text(event, "eventTime"));
    const QDateTime last = parseTime(text(event, v1 ? "deprecatedLastTimestamp" : "lastTimestamp"));
    const QDateTime first = parseTime(text(event, v1 ? "deprecatedFirstTimestamp" : "firstTimestamp"));
    const QDateTime observed = parseTime(text(series, "lastObservedTime"));
    e.lastSeen = observed.isValid() ? observed : last.isValid() ? last : eventTime;
    e.firstSeen = first.isValid() ? first : eventTime;
    const int seriesCount = series.value(QStringLiteral("count")).toInt();
    const int legacyCount = event.value(QLatin1String(v1 ? "deprecatedCount" : "count")).toInt();
    e.count = seriesCount > 0 ? seriesCount : legacyCount > 0 ? legacyCount : 1;
    return e;
}

Job Job::fromJson(const QJsonObject &job)
{
    Job j;
    const QJsonObject meta = obj(job, "metadata");
    j.name = text(meta, "name");
    j.ns = text(meta, "namespace");
    j.uid = text(meta, "uid");
    j.labels = obj(meta, "labels");
    j.controller = controllerOf(meta);
    j.backoffLimit = optionalInt(obj(job, "spec"), "backoffLimit");
    const QJsonObject status = obj(job, "status");
    j.active = integer(status, "active");
    j.succeeded = integer(status, "succeeded");
    j.failed = integer(status, "failed");
    j.conditions = readConditions(status);
    j.startTime = parseTime(text(status, "startTime"));
    j.completionTime = parseTime(text(status, "completionTime"));
    return j;
}

std::optional<Condition> Job::condition(const QString &type) const
{
    return findCondition(conditions, type);
}

bool Job::isFailed() const
{
    const auto c = condition(QStringLiteral("Failed"));
    return c && c->isTrue();
}

bool Job::isFinished() const
{
    const auto c = condition(QStringLiteral("Complete"));
    return (c && c->isTrue()) || isFailed();
}

QString Job::ownerRayJob() const
{
    return controller && controller->kind == QLatin1String("RayJob") ? controller->name : QString();
}

RayGroup RayGroup::fromJson(const QJsonObject &group, bool head)
{
    RayGroup g;
    g.isHead = head;
    g.groupName = head ? QStringLiteral("headgroup") : text(group, "groupName");
    if (head) {
        g.replicas = g.minReplicas = g.maxReplicas = 1;
    } else {
        g.replicas = integer(group, "replicas");
        g.minReplicas = integer(group, "minReplicas");
        g.maxReplicas = integer(group, "maxReplicas", std::numeric_limits<int>::max());
        g.numOfHosts = integer(group, "numOfHosts", 1);
        g.suspend = flag(group, "suspend");
    }
    g.rayStartParams = obj(group, "rayStartParams");
    const QJsonObject templ = obj(group, "template");
    const QJsonObject podSpec = obj(templ, "spec");
    g.nodeSelector = obj(podSpec, "nodeSelector");
    // at(0), not first(): an empty or absent list must read as no container, not assert.
    const QJsonObject ray = podSpec.value(QStringLiteral("containers")).toArray().at(0).toObject();
    g.image = text(ray, "image");
    const QJsonObject resources = obj(ray, "resources");
    g.limits = quantities(obj(resources, "limits"));
    g.requests = g.limits;
    g.requests.insert(quantities(obj(resources, "requests")));
    g.gpusPerPod = wholeUnits(podRequests(templ).value(QStringLiteral("nvidia.com/gpu")));
    return g;
}

qint64 RayGroup::desiredPods() const
{
    if (isHead) {
        return 1;
    }
    if (suspend) {
        return 0;
    }
    // Not std::clamp: a spec with min > max is invalid input, not a precondition we may break.
    const qint64 count = std::max<qint64>(0, std::max(minReplicas, std::min(replicas, maxReplicas)));
    return count * std::max(1, numOfHosts);
}

RayClusterSpec RayClusterSpec::fromJson(const QJsonObject &spec)
{
    RayClusterSpec s;
    s.rayVersion = text(spec, "rayVersion");
    s.suspend = flag(spec, "suspend");
    s.head = RayGroup::fromJson(obj(spec, "headGroupSpec"), true);
    for (const QJsonValue &w : spec.value(QStringLiteral("workerGroupSpecs")).toArray()) {
        s.workers << RayGroup::fromJson(w.toObject(), false);
    }
    return s;
}

qint64 RayClusterSpec::desiredGpus() const
{
    // Pods (replicas x hosts) use up to 62 bits, so a hostile spec overflows the product:
    // saturate, both factors being non-negative.
    constexpr qint64 max = std::numeric_limits<qint64>::max();
    qint64 total = std::max(0, head.gpusPerPod);
    for (const RayGroup &g : workers) {
        const qint64 pods = g.desiredPods();
        const qint64 perPod = std::max(0, g.gpusPerPod);
        const qint64 add = perPod != 0 && pods > max / perPod ? max : pods * perPod;
        total = add > max - total ? max : total + add;
    }
    return total;
}

RayClusterStatus RayClusterStatus::fromJson(const QJsonObject &status)
{
    RayClusterStatus s;
    s.state = text(status, "state");
    s.reason = text(status, "reason");
    s.readyWorkerReplicas = integer(status, "readyWorkerReplicas");
    s.availableWorkerReplicas = integer(status, "availableWorkerReplicas");
    s.desiredWorkerReplicas = integer(status, "desiredWorkerReplicas");
    s.minWorkerReplicas = integer(status, "minWorkerReplicas");
    s.maxWorkerReplicas = integer(status, "maxWorkerReplicas");
    const auto gpuMilli = parseQuantityMilli(text(status, "desiredGPU"));
    s.desiredGpus = gpuMilli ? wholeUnits(*gpuMilli) : 0;
    const QJsonObject headStatus = obj(status, "head");
    s.headPodName = text(headStatus, "podName");
    s.headPodIP = text(headStatus, "podIP");
    s.headServiceName = text(headStatus, "serviceName");
    s.headServiceIP = text(headStatus, "serviceIP");
    s.endpoints = obj(status, "endpoints");
    s.conditions = readConditions(status);
    s.lastUpdateTime = parseTime(text(status, "lastUpdateTime"));
    return s;
}

std::optional<Condition> RayClusterStatus::condition(const QString &type) const
{
    return findCondition(conditions, type);
}

RayCluster RayCluster::fromJson(const QJsonObject &cluster)
{
    RayCluster c;
    const QJsonObject meta = obj(cluster, "metadata");
    c.name = text(meta, "name");
    c.ns = text(meta, "namespace");
    c.uid = text(meta, "uid");
    c.labels = obj(meta, "labels");
    c.annotations = obj(meta, "annotations");
    c.creationTimestamp = parseTime(text(meta, "creationTimestamp"));
    c.controller = controllerOf(meta);
    c.spec = RayClusterSpec::fromJson(obj(cluster, "spec"));
    c.status = RayClusterStatus::fromJson(obj(cluster, "status"));
    return c;
}

QString RayCluster::originRayJob() const
{
    if (labels.value(QStringLiteral("ray.io/originated-from-crd")).toString() != QLatin1String("RayJob")) {
        return {};
    }
    return labels.value(QStringLiteral("ray.io/originated-from-cr-name")).toString();
}

RayJob RayJob::fromJson(const QJsonObject &rayJob)
{
    RayJob r;
    const QJsonObject meta = obj(rayJob, "metadata");
    r.name = text(meta, "name");
    r.ns = text(meta, "namespace");
    r.uid = text(meta, "uid");
    r.labels = obj(meta, "labels");
    r.annotations = obj(meta, "annotations");
    r.creationTimestamp = parseTime(text(meta, "creationTimestamp"));

    const QJsonObject spec = obj(rayJob, "spec");
    r.entrypoint = text(spec, "entrypoint");
    r.runtimeEnvYAML = text(spec, "runtimeEnvYAML");
    r.submissionMode = text(spec, "submissionMode");
    r.specJobId = text(spec, "jobId");
    r.shutdownAfterJobFinishes = flag(spec, "shutdownAfterJobFinishes");
    r.suspend = flag(spec, "suspend");
    r.ttlSecondsAfterFinished = integer(spec, "ttlSecondsAfterFinished");
    r.activeDeadlineSeconds = optionalInt(spec, "activeDeadlineSeconds");
    r.preRunningDeadlineSeconds = optionalInt(spec, "preRunningDeadlineSeconds");
    r.backoffLimit = integer(spec, "backoffLimit");
    r.clusterSelector = obj(spec, "clusterSelector");
    r.hasRayClusterSpec = spec.value(QStringLiteral("rayClusterSpec")).isObject();
    r.rayClusterSpec = RayClusterSpec::fromJson(obj(spec, "rayClusterSpec"));

    const QJsonObject status = obj(rayJob, "status");
    r.jobStatus = text(status, "jobStatus");
    r.jobDeploymentStatus = text(status, "jobDeploymentStatus");
    r.reason = text(status, "reason");
    r.message = text(status, "message");
    r.jobId = text(status, "jobId");
    r.rayClusterName = text(status, "rayClusterName");
    r.dashboardURL = text(status, "dashboardURL");
    r.startTime = parseTime(text(status, "startTime"));
    r.endTime = parseTime(text(status, "endTime"));
    r.failed = integer(status, "failed");
    r.succeeded = integer(status, "succeeded");
    r.hasRayClusterStatus = status.value(QStringLiteral("rayClusterStatus")).isObject();
    r.rayClusterStatus = RayClusterStatus::fromJson(obj(status, "rayClusterStatus"));
    return r;
}

QString RayJob::effectiveSubmissionMode() const
{
    return submissionMode.isEmpty() ? QStringLiteral("K8sJobMode") : submissionMode;
}

bool RayJob::isTerminal() const
{
    // ValidationFailed has no case in the operator's state machine and is never requeued, so
    // for a client it is as final as Failed.
    return jobDeploymentStatus == QLatin1String("Complete") || jobDeploymentStatus == QLatin1String("Failed")
        || jobDeploymentStatus == QLatin1String("ValidationFailed");
}

bool RayJob::isSucceeded() const
{
    return jobDeploymentStatus == QLatin1String("Complete") && jobStatus == QLatin1String("SUCCEEDED");
}

bool RayJob::isJobStatusTerminal() const
{
    return jobStatus == QLatin1String("STOPPED") || jobStatus == QLatin1String("SUCCEEDED") || jobStatus == QLatin1String("FAILED");
}

} // namespace Starforge::Kube
