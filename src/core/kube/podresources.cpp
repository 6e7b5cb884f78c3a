#include "core/kube/podresources.h"

#include "core/kube/quantity.h"

#include <QJsonArray>

#include <limits>

namespace Starforge::Kube {

namespace {

ResourceMilli containerRequests(const QJsonObject &container)
{
    const QJsonObject resources = container.value(QStringLiteral("resources")).toObject();
    const QJsonObject requests = resources.value(QStringLiteral("requests")).toObject();
    const QJsonObject limits = resources.value(QStringLiteral("limits")).toObject();
    ResourceMilli out;
    for (auto it = limits.begin(); it != limits.end(); ++it) {
        if (const auto v = parseQuantityMilli(it.value().toString())) {
            out.insert(it.key(), *v);
        }
    }
    for (auto it = requests.begin(); it != requests.end(); ++it) {
        if (const auto v = parseQuantityMilli(it.value().toString())) {
            out.insert(it.key(), *v);
        }
    }
    return out;
}

// One quantity may be up to 9e18 milli-units, so the sum of two can leave qint64: saturate
// instead of overflowing (found by fuzz_kube_views; a hostile pod spec must not be undefined
// behaviour).
qint64 saturatingAdd(qint64 a, qint64 b)
{
    qint64 sum = 0;
    if (__builtin_add_overflow(a, b, &sum)) {
        return b > 0 ? std::numeric_limits<qint64>::max() : std::numeric_limits<qint64>::min();
    }
    return sum;
}

void add(ResourceMilli &into, const ResourceMilli &from)
{
    for (auto it = from.cbegin(); it != from.cend(); ++it) {
        qint64 &total = into[it.key()];
        total = saturatingAdd(total, it.value());
    }
}

void maxInto(ResourceMilli &into, const ResourceMilli &from)
{
    for (auto it = from.cbegin(); it != from.cend(); ++it) {
        into[it.key()] = std::max(into.value(it.key()), it.value());
    }
}

} // namespace

ResourceMilli podRequests(const QJsonObject &pod)
{
    const QJsonObject spec = pod.value(QStringLiteral("spec")).toObject();
    ResourceMilli total;
    for (const QJsonValue &c : spec.value(QStringLiteral("containers")).toArray()) {
        add(total, containerRequests(c.toObject()));
    }
    ResourceMilli sidecars;
    ResourceMilli initPeak;
    for (const QJsonValue &c : spec.value(QStringLiteral("initContainers")).toArray()) {
        const QJsonObject container = c.toObject();
        const ResourceMilli requests = containerRequests(container);
        if (container.value(QStringLiteral("restartPolicy")).toString() == QLatin1String("Always")) {
            add(sidecars, requests);
            continue;
        }
        // An init container runs beside the sidecars started before it.
        ResourceMilli during = sidecars;
        add(during, requests);
        maxInto(initPeak, during);
    }
    add(total, sidecars);
    maxInto(total, initPeak);
    const QJsonObject overhead = spec.value(QStringLiteral("overhead")).toObject();
    for (auto it = overhead.begin(); it != overhead.end(); ++it) {
        if (const auto v = parseQuantityMilli(it.value().toString())) {
            total[it.key()] = saturatingAdd(total.value(it.key()), *v);
        }
    }
    return total;
}

bool holdsNodeResources(const QJsonObject &pod)
{
    const QString phase = pod.value(QStringLiteral("status")).toObject().value(QStringLiteral("phase")).toString();
    return !pod.value(QStringLiteral("spec")).toObject().value(QStringLiteral("nodeName")).toString().isEmpty()
        && phase != QLatin1String("Succeeded") && phase != QLatin1String("Failed");
}

} // namespace Starforge::Kube
