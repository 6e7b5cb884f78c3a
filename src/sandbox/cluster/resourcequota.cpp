#include "sandbox/cluster/resourcequota.h"

#include "sandbox/api/status.h"
#include "sandbox/cluster/podrequests.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

#include <QJsonArray>
#include <QTimer>

#include <algorithm>
#include <limits>

namespace Starforge::Sandbox {

namespace {

const QString QuotaStorage = QStringLiteral("resourcequotas");
const QString PodStorage = QStringLiteral("pods");

bool byteSized(const QString &resource)
{
    return resource.endsWith(QLatin1String("memory")) || resource.endsWith(QLatin1String("ephemeral-storage"));
}

// A quantity as Kubernetes prints a canonical one: whole units without a suffix (or with the
// largest binary, else decimal, suffix that divides a byte amount exactly), else thousandths "m".
QString formatMilli(const QString &resource, qint64 milli)
{
    if (milli % 1000 != 0) {
        return QString::number(milli) + u'm';
    }
    qint64 value = milli / 1000;
    if (byteSized(resource) && value != 0) {
        static const char *binary[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
        static const char *decimal[] = {"k", "M", "G", "T", "P", "E"};
        int b = -1;
        qint64 bv = value;
        while (b < 5 && bv % 1024 == 0) {
            bv /= 1024;
            ++b;
        }
        if (b >= 0) {
            return QString::number(bv) + QLatin1String(binary[b]);
        }
        int d = -1;
        qint64 dv = value;
        while (d < 5 && dv % 1000 == 0) {
            dv /= 1000;
            ++d;
        }
        if (d >= 0) {
            return QString::number(dv) + QLatin1String(decimal[d]);
        }
    }
    return QString::number(value);
}

// "k=v,k=v" with keys sorted, as the quota admission's prettyPrint writes a resource list.
QString prettyPrint(const QHash<QString, qint64> &amounts)
{
    QStringList keys = amounts.keys();
    keys.sort();
    QStringList parts;
    for (const QString &k : std::as_const(keys)) {
        parts << k + u'=' + formatMilli(k, amounts.value(k));
    }
    return parts.join(u',');
}

qint64 plus(qint64 a, qint64 b)
{
    return a > std::numeric_limits<qint64>::max() - b ? std::numeric_limits<qint64>::max() : a + b;
}

// The pod's limits: app containers add up, an init container needs at least its own.
PodRequests::MilliAmounts limitsOf(const QJsonObject &pod)
{
    const QJsonObject spec = pod.value(QStringLiteral("spec")).toObject();
    const auto limits = [](const QJsonObject &container) {
        PodRequests::MilliAmounts out;
        const QJsonObject l = container.value(QStringLiteral("resources")).toObject().value(QStringLiteral("limits")).toObject();
        for (auto it = l.begin(); it != l.end(); ++it) {
            if (const auto v = PodRequests::milliQuantity(it.value().toString()); v && *v >= 0) out.insert(it.key(), *v);
        }
        return out;
    };
    PodRequests::MilliAmounts sum;
    for (const QJsonValue &c : spec.value(QStringLiteral("containers")).toArray()) {
        const auto l = limits(c.toObject());
        for (auto it = l.cbegin(); it != l.cend(); ++it) sum[it.key()] = plus(sum.value(it.key()), it.value());
    }
    for (const QJsonValue &c : spec.value(QStringLiteral("initContainers")).toArray()) {
        const auto l = limits(c.toObject());
        for (auto it = l.cbegin(); it != l.cend(); ++it) sum[it.key()] = std::max(sum.value(it.key()), it.value());
    }
    return sum;
}

bool countsAgainstQuota(const QJsonObject &pod)
{
    const QString phase = pod.value(QStringLiteral("status")).toObject().value(QStringLiteral("phase")).toString();
    return phase != QLatin1String("Succeeded") && phase != QLatin1String("Failed");
}

QHash<QString, qint64> hardOf(const QJsonObject &quota)
{
    QHash<QString, qint64> hard;
    const QJsonObject spec = quota.value(QStringLiteral("spec")).toObject().value(QStringLiteral("hard")).toObject();
    for (auto it = spec.begin(); it != spec.end(); ++it) {
        if (const auto v = PodRequests::milliQuantity(it.value().toString()); v) hard.insert(it.key(), *v);
    }
    return hard;
}

QHash<QString, qint64> usedIn(const ObjectStore &store, const QString &ns, const QHash<QString, qint64> &hard)
{
    QHash<QString, qint64> used;
    for (auto it = hard.cbegin(); it != hard.cend(); ++it) used.insert(it.key(), 0);
    store.visit(PodStorage, ns, {}, [&](const ObjectPtr &pod) {
        if (!countsAgainstQuota(pod->object)) return true;
        const auto usage = ResourceQuotas::usageOf(pod->object);
        for (auto it = usage.cbegin(); it != usage.cend(); ++it) {
            if (used.contains(it.key())) used[it.key()] = plus(used.value(it.key()), it.value());
        }
        return true;
    });
    return used;
}

QJsonObject asList(const QHash<QString, qint64> &amounts, const QJsonObject &texts = {})
{
    QJsonObject out;
    for (auto it = amounts.cbegin(); it != amounts.cend(); ++it) {
        // spec.hard is kept as written, as the API server keeps a quantity's own format.
        out.insert(it.key(), texts.contains(it.key()) ? texts.value(it.key()) : QJsonValue(formatMilli(it.key(), it.value())));
    }
    return out;
}

} // namespace

namespace ResourceQuotas {

QHash<QString, qint64> usageOf(const QJsonObject &pod)
{
    QHash<QString, qint64> usage;
    usage.insert(QStringLiteral("pods"), 1000);
    usage.insert(QStringLiteral("count/pods"), 1000);
    const PodRequests::MilliAmounts requests = PodRequests::ofPod(pod);
    for (auto it = requests.cbegin(); it != requests.cend(); ++it) {
        const QString &name = it.key();
        if (name == QLatin1String("cpu") || name == QLatin1String("memory") || name == QLatin1String("ephemeral-storage")) {
            usage.insert(name, it.value());
            usage.insert(QStringLiteral("requests.") + name, it.value());
        } else if (name.contains(u'/') && !name.startsWith(QLatin1String("requests."))) {
            usage.insert(QStringLiteral("requests.") + name, it.value());
        }
    }
    const PodRequests::MilliAmounts limits = limitsOf(pod);
    for (const char *name : {"cpu", "memory", "ephemeral-storage"}) {
        const QString key = QString::fromLatin1(name);
        if (limits.contains(key)) usage.insert(QStringLiteral("limits.") + key, limits.value(key));
    }
    return usage;
}

std::optional<QString> exceeded(const ObjectStore &store, const QString &ns, const QJsonObject &pod)
{
    const QHash<QString, qint64> requested = usageOf(pod);
    for (const ObjectPtr &quota : store.list(QuotaStorage, ns)) {
        const QHash<QString, qint64> hard = hardOf(quota->object);
        QHash<QString, qint64> asked;
        for (auto it = hard.cbegin(); it != hard.cend(); ++it) {
            if (requested.contains(it.key())) asked.insert(it.key(), requested.value(it.key()));
        }
        if (asked.isEmpty()) continue;
        const QHash<QString, qint64> used = usedIn(store, ns, asked);
        QHash<QString, qint64> failedAsked, failedUsed, failedHard;
        for (auto it = asked.cbegin(); it != asked.cend(); ++it) {
            if (plus(used.value(it.key()), it.value()) > hard.value(it.key())) {
                failedAsked.insert(it.key(), it.value());
                failedUsed.insert(it.key(), used.value(it.key()));
                failedHard.insert(it.key(), hard.value(it.key()));
            }
        }
        if (!failedAsked.isEmpty()) {
            return QStringLiteral("exceeded quota: %1, requested: %2, used: %3, limited: %4")
                .arg(quota->name, prettyPrint(failedAsked), prettyPrint(failedUsed), prettyPrint(failedHard));
        }
    }
    return std::nullopt;
}

QString forbiddenMessage(const QString &podName, const QString &exceededText)
{
    return QStringLiteral("pods \"%1\" is forbidden: %2").arg(podName, exceededText);
}

QJsonObject forbiddenStatus(const QString &podName, const QString &exceededText)
{
    return Status::make(403, QStringLiteral("Forbidden"), forbiddenMessage(podName, exceededText),
                        Status::details(podName, QString(), QStringLiteral("pods")));
}

QJsonObject statusOf(const ObjectStore &store, const QJsonObject &quota)
{
    const QHash<QString, qint64> hard = hardOf(quota);
    const QString ns = quota.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("namespace")).toString();
    return QJsonObject{{QStringLiteral("hard"), asList(hard, quota.value(QStringLiteral("spec")).toObject().value(QStringLiteral("hard")).toObject())},
                       {QStringLiteral("used"), asList(usedIn(store, ns, hard))}};
}

} // namespace ResourceQuotas

QuotaController::QuotaController(ObjectStore *store, QObject *parent)
    : QObject(parent)
    , m_store(store)
{
    connect(store, &ObjectStore::changed, this, &QuotaController::onChange);
}

void QuotaController::onChange(const Change &change)
{
    if (change.storage != QuotaStorage && change.storage != PodStorage) return;
    const QString ns = change.object->ns;
    // A quota's own status write changes nothing it counts.
    if (change.storage == QuotaStorage && change.type == ChangeType::Modified && change.previous
        && change.previous->object.value(QStringLiteral("spec")) == change.object->object.value(QStringLiteral("spec"))) {
        return;
    }
    if (m_store->count(QuotaStorage) == 0 || m_pending.contains(ns)) return;
    m_pending.insert(ns);
    QTimer::singleShot(0, this, [this, ns] {
        m_pending.remove(ns);
        refresh(ns);
    });
}

void QuotaController::refresh(const QString &ns)
{
    const ResourceType *type = ResourceTypes::storageType(QuotaStorage);
    if (!type) return;
    for (const ObjectPtr &quota : m_store->list(QuotaStorage, ns)) {
        const QJsonObject status = ResourceQuotas::statusOf(*m_store, quota->object);
        m_store->modify(*type, ns, quota->name, [&](QJsonObject &q) {
            if (q.value(QStringLiteral("status")).toObject() == status) return false;
            q.insert(QStringLiteral("status"), status);
            return true;
        });
    }
}

} // namespace Starforge::Sandbox
