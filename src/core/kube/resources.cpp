#include "core/kube/resources.h"

#include "core/kube/podresources.h"
#include "core/kube/quantity.h"

#include <QJsonArray>
#include <QRegularExpression>

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

int gpus(const QJsonObject &resources)
{
    const auto milli = parseQuantityMilli(resources.value(QStringLiteral("nvidia.com/gpu")).toString());
    return milli ? static_cast<int>(*milli / 1000) : 0;
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
    const QJsonObject status = obj(pod, "status");
    p.phase = text(status, "phase");
    for (const QJsonValue &c : status.value(QStringLiteral("conditions")).toArray()) {
        const QJsonObject o = c.toObject();
        p.conditions << Condition{text(o, "type"), text(o, "status"), text(o, "reason"), text(o, "message")};
    }
    p.containers = containerStates(status.value(QStringLiteral("containerStatuses")).toArray());
    p.initContainers = containerStates(status.value(QStringLiteral("initContainerStatuses")).toArray());
    p.gpuRequests = static_cast<int>(podRequests(pod).value(QStringLiteral("nvidia.com/gpu")) / 1000);
    return p;
}

std::optional<Condition> Pod::condition(const QString &type) const
{
    for (const Condition &c : conditions) {
        if (c.type == type) return c;
    }
    return std::nullopt;
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

} // namespace Starforge::Kube
