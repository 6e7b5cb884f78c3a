#include "sandbox/cluster/scheduler.h"

#include "sandbox/cluster/eventrecorder.h"
#include "sandbox/cluster/podrequests.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

#include <QDateTime>
#include <QJsonArray>
#include <QMap>

namespace Starforge::Sandbox {

namespace {

const ResourceType &podType()
{
    return *ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("pods"));
}

const QString Gpu = QStringLiteral("nvidia.com/gpu");

struct NodeState
{
    ObjectPtr node;
    PodRequests::MilliAmounts allocatable;
    PodRequests::MilliAmounts used;
    qint64 pods = 0;
};

enum class Rejection { None, Unschedulable, Taint, Affinity, Resources };

struct NodeVerdict
{
    Rejection rejection = Rejection::None;
    QStringList reasons;
};

bool tolerates(const QJsonArray &tolerations, const QJsonObject &taint)
{
    const QString key = taint.value(QStringLiteral("key")).toString();
    const QString value = taint.value(QStringLiteral("value")).toString();
    const QString effect = taint.value(QStringLiteral("effect")).toString();
    for (const QJsonValue &v : tolerations) {
        const QJsonObject t = v.toObject();
        const QString tEffect = t.value(QStringLiteral("effect")).toString();
        if (!tEffect.isEmpty() && tEffect != effect) {
            continue;
        }
        const QString tKey = t.value(QStringLiteral("key")).toString();
        const QString op = t.value(QStringLiteral("operator")).toString(QStringLiteral("Equal"));
        if (tKey.isEmpty() && op == QLatin1String("Exists")) {
            return true; // tolerates everything
        }
        if (tKey != key) {
            continue;
        }
        if (op == QLatin1String("Exists") || t.value(QStringLiteral("value")).toString() == value) {
            return true;
        }
    }
    return false;
}

bool matchesExpression(const QJsonObject &labels, const QJsonObject &expression)
{
    const QString key = expression.value(QStringLiteral("key")).toString();
    const QString op = expression.value(QStringLiteral("operator")).toString();
    QStringList values;
    for (const QJsonValue &v : expression.value(QStringLiteral("values")).toArray()) {
        values << v.toString();
    }
    const bool has = labels.contains(key);
    const QString value = labels.value(key).toString();
    if (op == QLatin1String("In")) return has && values.contains(value);
    if (op == QLatin1String("NotIn")) return !has || !values.contains(value);
    if (op == QLatin1String("Exists")) return has;
    if (op == QLatin1String("DoesNotExist")) return !has;
    if (op == QLatin1String("Gt") || op == QLatin1String("Lt")) {
        bool ok = false;
        const qint64 n = value.toLongLong(&ok);
        const qint64 bound = values.value(0).toLongLong();
        return has && ok && (op == QLatin1String("Gt") ? n > bound : n < bound);
    }
    return false;
}

bool matchesAffinity(const QJsonObject &pod, const QJsonObject &labels)
{
    const QJsonObject spec = pod.value(QStringLiteral("spec")).toObject();
    const QJsonObject selector = spec.value(QStringLiteral("nodeSelector")).toObject();
    for (auto it = selector.begin(); it != selector.end(); ++it) {
        if (labels.value(it.key()).toString() != it.value().toString() || !labels.contains(it.key())) {
            return false;
        }
    }
    const QJsonArray terms = spec.value(QStringLiteral("affinity")).toObject().value(QStringLiteral("nodeAffinity")).toObject()
                                 .value(QStringLiteral("requiredDuringSchedulingIgnoredDuringExecution")).toObject()
                                 .value(QStringLiteral("nodeSelectorTerms")).toArray();
    if (terms.isEmpty()) {
        return true;
    }
    // Terms are ORed; the expressions of a term are ANDed.
    for (const QJsonValue &term : terms) {
        bool all = true;
        for (const QJsonValue &e : term.toObject().value(QStringLiteral("matchExpressions")).toArray()) {
            all = all && matchesExpression(labels, e.toObject());
        }
        if (all) {
            return true;
        }
    }
    return false;
}

NodeVerdict evaluate(const QJsonObject &pod, const PodRequests::MilliAmounts &requests, const NodeState &state)
{
    const QJsonObject node = state.node->object;
    const QJsonObject spec = node.value(QStringLiteral("spec")).toObject();
    const QJsonArray tolerations = pod.value(QStringLiteral("spec")).toObject().value(QStringLiteral("tolerations")).toArray();
    if (spec.value(QStringLiteral("unschedulable")).toBool()
        && !tolerates(tolerations, QJsonObject{{QStringLiteral("key"), QStringLiteral("node.kubernetes.io/unschedulable")},
                                               {QStringLiteral("effect"), QStringLiteral("NoSchedule")}})) {
        return {Rejection::Unschedulable, {QStringLiteral("node(s) were unschedulable")}};
    }
    for (const QJsonValue &t : spec.value(QStringLiteral("taints")).toArray()) {
        const QJsonObject taint = t.toObject();
        const QString effect = taint.value(QStringLiteral("effect")).toString();
        if ((effect == QLatin1String("NoSchedule") || effect == QLatin1String("NoExecute")) && !tolerates(tolerations, taint)) {
            return {Rejection::Taint, {QStringLiteral("node(s) had untolerated taint {%1: %2}")
                                           .arg(taint.value(QStringLiteral("key")).toString(), taint.value(QStringLiteral("value")).toString())}};
        }
    }
    if (!matchesAffinity(pod, node.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("labels")).toObject())) {
        return {Rejection::Affinity, {QStringLiteral("node(s) didn't match Pod's node affinity/selector")}};
    }
    NodeVerdict verdict;
    if (state.pods + 1 > state.allocatable.value(QStringLiteral("pods"), 110000) / 1000) {
        verdict.reasons << QStringLiteral("Too many pods");
    }
    // Resources in the order NodeResourcesFit reports them: cpu, memory, ephemeral storage, then
    // extended resources.
    QStringList names = requests.keys();
    std::sort(names.begin(), names.end(), [](const QString &a, const QString &b) {
        const auto rank = [](const QString &n) {
            return n == QLatin1String("cpu") ? 0 : n == QLatin1String("memory") ? 1 : n == QLatin1String("ephemeral-storage") ? 2 : 3;
        };
        return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
    });
    for (const QString &name : names) {
        const qint64 want = requests.value(name);
        if (want <= 0) {
            continue;
        }
        if (state.used.value(name) + want > state.allocatable.value(name)) {
            verdict.reasons << QStringLiteral("Insufficient %1").arg(name);
        }
    }
    if (!verdict.reasons.isEmpty()) {
        verdict.rejection = Rejection::Resources;
    }
    return verdict;
}

QString histogram(const QMap<QString, int> &counts)
{
    QStringList parts;
    for (auto it = counts.cbegin(); it != counts.cend(); ++it) {
        parts << QStringLiteral("%1 %2").arg(it.value()).arg(it.key());
    }
    // sort.Strings on "<count> <reason>": "12 X" sorts before "4 Y".
    std::sort(parts.begin(), parts.end());
    return parts.join(QStringLiteral(", "));
}

QHash<QString, NodeState> nodeStates(const ObjectStore &store)
{
    QHash<QString, NodeState> states;
    for (const ObjectPtr &node : store.list(QStringLiteral("nodes"))) {
        NodeState s;
        s.node = node;
        const QJsonObject allocatable = node->object.value(QStringLiteral("status")).toObject().value(QStringLiteral("allocatable")).toObject();
        for (auto it = allocatable.begin(); it != allocatable.end(); ++it) {
            if (const auto v = PodRequests::milliQuantity(it.value().toString())) {
                s.allocatable.insert(it.key(), *v);
            }
        }
        states.insert(node->name, s);
    }
    for (const ObjectPtr &pod : store.list(QStringLiteral("pods"))) {
        if (!PodRequests::holdsNodeResources(pod->object)) {
            continue;
        }
        const QString nodeName = pod->object.value(QStringLiteral("spec")).toObject().value(QStringLiteral("nodeName")).toString();
        auto it = states.find(nodeName);
        if (it == states.end()) {
            continue;
        }
        const PodRequests::MilliAmounts requests = PodRequests::ofPod(pod->object);
        for (auto r = requests.cbegin(); r != requests.cend(); ++r) {
            it->used[r.key()] += r.value();
        }
        ++it->pods;
    }
    return states;
}

bool isPending(const QJsonObject &pod)
{
    const QJsonObject spec = pod.value(QStringLiteral("spec")).toObject();
    const QString scheduler = spec.value(QStringLiteral("schedulerName")).toString();
    const QString phase = pod.value(QStringLiteral("status")).toObject().value(QStringLiteral("phase")).toString();
    return spec.value(QStringLiteral("nodeName")).toString().isEmpty()
        && (scheduler.isEmpty() || scheduler == QLatin1String("default-scheduler"))
        && phase != QLatin1String("Succeeded") && phase != QLatin1String("Failed")
        && !pod.value(QStringLiteral("metadata")).toObject().contains(QStringLiteral("deletionTimestamp"));
}

QJsonArray withCondition(QJsonArray conditions, const QJsonObject &condition)
{
    for (qsizetype i = 0; i < conditions.size(); ++i) {
        QJsonObject c = conditions.at(i).toObject();
        if (c.value(QStringLiteral("type")) == condition.value(QStringLiteral("type"))) {
            if (c.value(QStringLiteral("status")) == condition.value(QStringLiteral("status"))
                && c.value(QStringLiteral("message")) == condition.value(QStringLiteral("message"))) {
                return conditions; // unchanged: keep the transition time
            }
            conditions.replace(i, condition);
            return conditions;
        }
    }
    conditions.append(condition);
    return conditions;
}

// Where the pod goes (least allocated among the feasible nodes), or the FitError text when
// no node can take it.
struct Placement
{
    QString node;
    QString fitError;
};

Placement place(const QJsonObject &pod, const PodRequests::MilliAmounts &requests, const QHash<QString, NodeState> &states)
{
    if (states.isEmpty()) {
        return {{}, QStringLiteral("no nodes available to schedule pods")};
    }
    QString chosen;
    double bestScore = -1;
    QMap<QString, int> reasons;
    QMap<QString, int> preemption;
    for (auto it = states.cbegin(); it != states.cend(); ++it) {
        const NodeVerdict v = evaluate(pod, requests, *it);
        if (v.rejection != Rejection::None) {
            for (const QString &r : v.reasons) {
                ++reasons[r];
            }
            ++preemption[v.rejection == Rejection::Resources ? QStringLiteral("No preemption victims found for incoming pod")
                                                             : QStringLiteral("Preemption is not helpful for scheduling")];
            continue;
        }
        // LeastAllocated on the resources the pod asks for: spread, as the default profile does.
        double free = 0;
        int counted = 0;
        for (const QString &name : {QStringLiteral("cpu"), QStringLiteral("memory"), Gpu}) {
            const qint64 cap = it->allocatable.value(name);
            if (cap > 0 && requests.value(name) > 0) {
                free += double(cap - it->used.value(name) - requests.value(name)) / double(cap);
                ++counted;
            }
        }
        const double score = counted ? free / counted : 1.0;
        if (score > bestScore || (score == bestScore && it.key() < chosen)) {
            bestScore = score;
            chosen = it.key();
        }
    }
    if (!chosen.isEmpty()) {
        return {chosen, {}};
    }
    return {{}, QStringLiteral("0/%1 nodes are available: %2. preemption: 0/%1 nodes are available: %3..")
                    .arg(QString::number(states.size()), histogram(reasons), histogram(preemption))};
}

} // namespace

Scheduler::Scheduler(ObjectStore *store, EventRecorder *events, QObject *parent)
    : QObject(parent)
    , m_store(store)
    , m_events(events)
{
    m_pass.setSingleShot(true);
    m_pass.setInterval(10); // coalesce bursts of changes into one pass
    connect(&m_pass, &QTimer::timeout, this, &Scheduler::schedulePending);
    // Unschedulable pods are flushed back periodically, as the scheduling queue does.
    m_retry.setInterval(30000);
    connect(&m_retry, &QTimer::timeout, this, &Scheduler::requestPass);
    m_retry.start();
    connect(store, &ObjectStore::changed, this, &Scheduler::onChange);
    requestPass();
}

void Scheduler::requestPass()
{
    if (!m_pass.isActive()) {
        m_pass.start();
    }
}

void Scheduler::onChange(const Change &change)
{
    if (change.storage == QLatin1String("nodes")) {
        requestPass();
        return;
    }
    if (change.storage != QLatin1String("pods")) {
        return;
    }
    const bool newPending = change.type == ChangeType::Added && isPending(change.object->object);
    const bool freed = (change.type == ChangeType::Deleted && change.previous && PodRequests::holdsNodeResources(change.previous->object))
        || (change.type == ChangeType::Modified && change.previous && PodRequests::holdsNodeResources(change.previous->object)
            && !PodRequests::holdsNodeResources(change.object->object));
    if (newPending || freed) {
        requestPass();
    }
}

QString Scheduler::fitError(const QJsonObject &pod) const
{
    return place(pod, PodRequests::ofPod(pod), nodeStates(*m_store)).fitError;
}

void Scheduler::schedulePending()
{
    std::vector<ObjectPtr> pending;
    for (const ObjectPtr &pod : m_store->list(podType().storage)) {
        if (isPending(pod->object)) {
            pending.push_back(pod);
        }
    }
    if (pending.empty()) {
        return;
    }
    std::stable_sort(pending.begin(), pending.end(), [](const ObjectPtr &a, const ObjectPtr &b) {
        return a->resourceVersion < b->resourceVersion;
    });
    QHash<QString, NodeState> states = nodeStates(*m_store);
    const QString now = QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
    for (const ObjectPtr &pod : pending) {
        const PodRequests::MilliAmounts requests = PodRequests::ofPod(pod->object);
        const Placement placement = place(pod->object, requests, states);
        const QString &chosen = placement.node;
        const QString ns = pod->ns;
        if (!chosen.isEmpty()) {
            const ObjectPtr bound = m_store->modify(podType(), ns, pod->name, [&](QJsonObject &p) {
                QJsonObject spec = p.value(QStringLiteral("spec")).toObject();
                if (!spec.value(QStringLiteral("nodeName")).toString().isEmpty()) {
                    return false;
                }
                spec.insert(QStringLiteral("nodeName"), chosen);
                p.insert(QStringLiteral("spec"), spec);
                QJsonObject status = p.value(QStringLiteral("status")).toObject();
                status.insert(QStringLiteral("phase"), QStringLiteral("Pending"));
                status.insert(QStringLiteral("conditions"),
                              withCondition(status.value(QStringLiteral("conditions")).toArray(),
                                            QJsonObject{{QStringLiteral("type"), QStringLiteral("PodScheduled")},
                                                        {QStringLiteral("status"), QStringLiteral("True")},
                                                        {QStringLiteral("lastProbeTime"), QJsonValue::Null},
                                                        {QStringLiteral("lastTransitionTime"), now}}));
                p.insert(QStringLiteral("status"), status);
                return true;
            });
            if (bound) {
                NodeState &state = states[chosen];
                for (auto r = requests.cbegin(); r != requests.cend(); ++r) {
                    state.used[r.key()] += r.value();
                }
                ++state.pods;
                m_events->record(bound->object, QStringLiteral("Normal"), QStringLiteral("Scheduled"),
                                 QStringLiteral("Successfully assigned %1/%2 to %3").arg(ns, pod->name, chosen),
                                 QStringLiteral("default-scheduler"), EventRecorder::Api::EventsV1, QStringLiteral("Binding"));
            }
            continue;
        }
        const QString &message = placement.fitError;
        const ObjectPtr updated = m_store->modify(podType(), ns, pod->name, [&](QJsonObject &p) {
            QJsonObject status = p.value(QStringLiteral("status")).toObject();
            status.insert(QStringLiteral("phase"), QStringLiteral("Pending"));
            status.insert(QStringLiteral("conditions"),
                          withCondition(status.value(QStringLiteral("conditions")).toArray(),
                                        QJsonObject{{QStringLiteral("type"), QStringLiteral("PodScheduled")},
                                                    {QStringLiteral("status"), QStringLiteral("False")},
                                                    {QStringLiteral("lastProbeTime"), QJsonValue::Null},
                                                    {QStringLiteral("lastTransitionTime"), now},
                                                    {QStringLiteral("reason"), QStringLiteral("Unschedulable")},
                                                    {QStringLiteral("message"), message}}));
            p.insert(QStringLiteral("status"), status);
            return true;
        });
        if (updated) {
            m_events->record(updated->object, QStringLiteral("Warning"), QStringLiteral("FailedScheduling"), message,
                             QStringLiteral("default-scheduler"), EventRecorder::Api::EventsV1, QStringLiteral("Scheduling"));
        }
    }
}

} // namespace Starforge::Sandbox
