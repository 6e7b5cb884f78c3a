#include "core/cluster/capacity.h"
#include "core/config/settingsschema.h"

#include "core/kube/informer.h"

#include <QCoreApplication>
#include <QTimer>

namespace Starforge::Cluster {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(Capacity)
};

const QString NoSchedule = QStringLiteral("NoSchedule");
const QString NoExecute = QStringLiteral("NoExecute");

bool holdsResources(const Kube::Pod &pod)
{
    return !pod.nodeName.isEmpty() && pod.phase != QLatin1String("Succeeded") && pod.phase != QLatin1String("Failed");
}

// Unbound, waiting, asking for GPUs of a known series: pending demand.
bool waitsForSeries(const Kube::Pod &pod)
{
    return pod.nodeName.isEmpty() && (pod.phase.isEmpty() || pod.phase == QLatin1String("Pending")) && pod.gpuRequests > 0
        && !pod.series.isEmpty();
}

void decrement(std::map<int, int> &counts, int key)
{
    const auto it = counts.find(key);
    if (it != counts.end() && --it->second <= 0) {
        counts.erase(it);
    }
}

} // namespace

QString defaultSeriesLabel()
{
    return Config::SettingsSchema::defaultValue(QStringLiteral("FORGE_K8S_GPU_NODE_LABEL"));
}

QString seriesLabelFromEnvironment()
{
    const QString fromEnv = qEnvironmentVariable("FORGE_K8S_GPU_NODE_LABEL").trimmed();
    return fromEnv.isEmpty() ? defaultSeriesLabel() : fromEnv;
}

Toleration Toleration::fromJson(const QJsonObject &toleration)
{
    return Toleration{toleration.value(QStringLiteral("key")).toString(), toleration.value(QStringLiteral("operator")).toString(),
                      toleration.value(QStringLiteral("value")).toString(), toleration.value(QStringLiteral("effect")).toString()};
}

QJsonObject Toleration::toJson() const
{
    QJsonObject out;
    if (!key.isEmpty()) out.insert(QStringLiteral("key"), key);
    if (!operatorName.isEmpty()) out.insert(QStringLiteral("operator"), operatorName);
    if (!value.isEmpty()) out.insert(QStringLiteral("value"), value);
    if (!effect.isEmpty()) out.insert(QStringLiteral("effect"), effect);
    return out;
}

bool Toleration::tolerates(const Kube::Taint &taint) const
{
    // core/v1 Toleration.ToleratesTaint: effect (empty = all), key (empty with Exists = all),
    // then Exists matches any value and Equal (the default) the same value.
    if (!effect.isEmpty() && effect != taint.effect) {
        return false;
    }
    const bool exists = operatorName == QLatin1String("Exists");
    if (key.isEmpty()) {
        return exists;
    }
    if (key != taint.key) {
        return false;
    }
    return exists || value == taint.value;
}

QList<Toleration> defaultTolerations()
{
    return {Toleration{QStringLiteral("nvidia.com/gpu"), QStringLiteral("Exists"), {}, NoSchedule}};
}

bool tolerated(const QList<Toleration> &tolerations, const Kube::Taint &taint)
{
    return std::any_of(tolerations.cbegin(), tolerations.cend(), [&](const Toleration &t) { return t.tolerates(taint); });
}

std::optional<Kube::Taint> untoleratedTaint(const QList<Toleration> &tolerations, const QList<Kube::Taint> &taints)
{
    for (const Kube::Taint &taint : taints) {
        if ((taint.effect == NoSchedule || taint.effect == NoExecute) && !tolerated(tolerations, taint)) {
            return taint;
        }
    }
    return std::nullopt;
}

QString taintText(const Kube::Taint &taint)
{
    if (taint.value.isEmpty()) {
        return taint.key + u':' + taint.effect;
    }
    return taint.key + u'=' + taint.value + u':' + taint.effect;
}

QString blockName(Block block)
{
    switch (block) {
    case Block::None: return {};
    case Block::Cordoned: return Text::tr("cordoned");
    case Block::NotReady: return Text::tr("not ready");
    case Block::Tainted: return Text::tr("tainted");
    }
    return {};
}

QString fitName(Fit fit)
{
    switch (fit) {
    case Fit::FitsNow: return QStringLiteral("FitsNow");
    case Fit::FitsWhenFree: return QStringLiteral("FitsWhenFree");
    case Fit::NeverFits: return QStringLiteral("NeverFits");
    }
    return {};
}

// ---------------------------------------------------------------------------------------------

CapacityModel::CapacityModel(QList<Toleration> tolerations)
    : m_tolerations(std::move(tolerations))
{
}

CapacityModel CapacityModel::build(const QList<Kube::Node> &nodes, const QList<Kube::Pod> &pods, QList<Toleration> tolerations)
{
    CapacityModel model(std::move(tolerations));
    model.m_nodes.reserve(nodes.size());
    model.m_nodeViews.reserve(nodes.size());
    model.m_pods.reserve(pods.size());
    // Pods first, while no node is known: their use collects per node name, and each node then
    // enters the series totals once with its final usage.
    for (const Kube::Pod &pod : pods) {
        model.setPod(pod);
    }
    for (const Kube::Node &node : nodes) {
        model.setNode(node);
    }
    return model;
}

Block CapacityModel::judge(const Kube::Node &node, QString *detail) const
{
    if (node.unschedulable) {
        return Block::Cordoned;
    }
    if (!node.ready) {
        *detail = node.readyReason.isEmpty() ? Text::tr("Ready condition not True") : node.readyReason;
        return Block::NotReady;
    }
    if (const auto taint = untoleratedTaint(m_tolerations, node.taints)) {
        // The lifecycle controller's own taints say more than "tainted".
        if (taint->key == QLatin1String("node.kubernetes.io/unschedulable")) {
            return Block::Cordoned;
        }
        if (taint->key == QLatin1String("node.kubernetes.io/not-ready") || taint->key == QLatin1String("node.kubernetes.io/unreachable")) {
            *detail = taintText(*taint);
            return Block::NotReady;
        }
        *detail = taintText(*taint);
        return Block::Tainted;
    }
    return Block::None;
}

void CapacityModel::addContribution(const NodeEntry &e)
{
    SeriesTotals &t = m_series[e.series];
    ++t.nodes;
    t.capacity += e.allocatable;
    t.used += e.used;
    if (e.schedulable()) {
        ++t.schedulableNodes;
        t.free += e.free();
        ++t.freeCounts[e.free()];
        ++t.allocatableCounts[e.allocatable];
    } else {
        t.blocked += e.blocked();
    }
}

void CapacityModel::removeContribution(const NodeEntry &e)
{
    const auto it = m_series.find(e.series);
    if (it == m_series.end()) {
        return;
    }
    SeriesTotals &t = *it;
    --t.nodes;
    t.capacity -= e.allocatable;
    t.used -= e.used;
    if (e.schedulable()) {
        --t.schedulableNodes;
        t.free -= e.free();
        decrement(t.freeCounts, e.free());
        decrement(t.allocatableCounts, e.allocatable);
    } else {
        t.blocked -= e.blocked();
    }
    if (t.nodes <= 0) {
        m_series.erase(it);
    }
}

void CapacityModel::setNode(const Kube::Node &node)
{
    NodeEntry entry;
    entry.name = node.name;
    entry.series = node.series;
    entry.capacity = node.gpuCapacity;
    entry.allocatable = node.gpuAllocatable;
    entry.block = judge(node, &entry.blockDetail);
    const auto old = m_nodes.find(node.name);
    if (old != m_nodes.end()) {
        entry.used = old->used;
        entry.pods = old->pods;
        removeContribution(*old);
        if (old->series != entry.series) {
            m_seriesNodes[old->series].remove(node.name);
            if (m_seriesNodes[old->series].isEmpty()) {
                m_seriesNodes.remove(old->series);
            }
        }
    } else if (const auto pending = m_unknownNodeUse.constFind(node.name); pending != m_unknownNodeUse.constEnd()) {
        entry.used = pending->first;
        entry.pods = pending->second;
        m_unknownNodeUse.erase(pending);
    }
    m_seriesNodes[entry.series].insert(entry.name);
    addContribution(entry);
    m_nodes.insert(entry.name, entry);
    // Kept to judge the node again under other tolerations, which needs neither its labels nor
    // its uid: a node's labels are a kilobyte, five megabytes over a large fleet.
    Kube::Node kept = node;
    kept.labels = QJsonObject();
    kept.uid.clear();
    m_nodeViews.insert(entry.name, kept);
}

QString CapacityModel::sharedNodeName(const QString &name) const
{
    // Fifty thousand pods name five thousand nodes: each pod's entry shares its node's string.
    if (const auto known = m_nodes.constFind(name); known != m_nodes.constEnd()) {
        return known.key();
    }
    if (const auto pending = m_unknownNodeUse.constFind(name); pending != m_unknownNodeUse.constEnd()) {
        return pending.key();
    }
    return name;
}

void CapacityModel::removeNode(const QString &name)
{
    const auto it = m_nodes.find(name);
    if (it == m_nodes.end()) {
        return;
    }
    removeContribution(*it);
    // Its pods are still bound to the name: keep their use for a node of that name coming back.
    if (it->pods > 0) {
        m_unknownNodeUse.insert(name, {it->used, it->pods});
    }
    auto members = m_seriesNodes.find(it->series);
    if (members != m_seriesNodes.end()) {
        members->remove(name);
        if (members->isEmpty()) {
            m_seriesNodes.erase(members);
        }
    }
    m_nodes.erase(it);
    m_nodeViews.remove(name);
}

void CapacityModel::addUse(const QString &key, const PodUse &use)
{
    m_nodePods[use.node].append(key);
    const auto it = m_nodes.find(use.node);
    if (it == m_nodes.end()) {
        auto &pending = m_unknownNodeUse[use.node];
        pending.first += use.gpus;
        pending.second += 1;
        return;
    }
    removeContribution(*it);
    it->used += use.gpus;
    it->pods += 1;
    addContribution(*it);
}

void CapacityModel::removeUse(const QString &key, const PodUse &use)
{
    if (const auto members = m_nodePods.find(use.node); members != m_nodePods.end()) {
        members->removeOne(key);
        if (members->isEmpty()) m_nodePods.erase(members);
    }
    const auto it = m_nodes.find(use.node);
    if (it == m_nodes.end()) {
        const auto pending = m_unknownNodeUse.find(use.node);
        if (pending != m_unknownNodeUse.end()) {
            pending->first -= use.gpus;
            pending->second -= 1;
            if (pending->second <= 0) {
                m_unknownNodeUse.erase(pending);
            }
        }
        return;
    }
    removeContribution(*it);
    it->used -= use.gpus;
    it->pods -= 1;
    addContribution(*it);
}

CapacityModel::PodMove CapacityModel::setPod(const Kube::Pod &pod)
{
    PodMove move;
    const QString key = pod.ns + u'/' + pod.name;
    const bool waits = waitsForSeries(pod);
    if (const auto demand = m_pending.constFind(key); demand != m_pending.constEnd()) {
        if (!waits || demand->series != pod.series || demand->gpus != pod.gpuRequests) {
            move.demandMoved = true;
            move.demandFrom = demand->series;
            auto &total = m_demand[demand->series];
            total.first -= demand->gpus;
            if (--total.second <= 0) m_demand.remove(demand->series);
            m_pending.erase(demand);
        }
    }
    if (waits && !m_pending.contains(key)) {
        move.demandMoved = true;
        move.demandTo = pod.series;
        m_pending.insert(key, Demand{pod.series, pod.gpuRequests});
        auto &total = m_demand[pod.series];
        total.first += pod.gpuRequests;
        total.second += 1;
    }
    const auto old = m_pods.constFind(key);
    const bool holds = holdsResources(pod);
    if (old != m_pods.constEnd()) {
        if (holds && old->node == pod.nodeName && old->gpus == pod.gpuRequests) {
            return move;   // status churn: nothing the numbers depend on moved
        }
        move.moved = true;
        move.from = old->node;
        removeUse(key, *old);
        m_pods.erase(old);
    }
    if (holds) {
        const PodUse use{sharedNodeName(pod.nodeName), pod.gpuRequests};
        addUse(key, use);
        m_pods.insert(key, use);
        move.moved = true;
        move.to = use.node;
    }
    return move;
}

CapacityModel::PodMove CapacityModel::removePod(const QString &ns, const QString &name)
{
    // A pod that is gone is one that neither holds nor waits.
    Kube::Pod gone;
    gone.ns = ns;
    gone.name = name;
    gone.phase = QStringLiteral("Succeeded");
    return setPod(gone);
}

QString CapacityModel::podNode(const QString &ns, const QString &name) const
{
    return m_pods.value(ns + u'/' + name).node;
}

QList<NodePod> CapacityModel::podsOn(const QString &node) const
{
    QList<NodePod> out;
    const auto members = m_nodePods.constFind(node);
    if (members == m_nodePods.constEnd()) {
        return out;
    }
    out.reserve(members->size());
    for (const QString &key : *members) {
        const qsizetype slash = key.indexOf(u'/');
        out << NodePod{key.left(slash), key.mid(slash + 1), m_pods.value(key).gpus};
    }
    std::sort(out.begin(), out.end(), [](const NodePod &a, const NodePod &b) {
        if (a.gpus != b.gpus) return a.gpus > b.gpus;
        return a.ns != b.ns ? a.ns < b.ns : a.name < b.name;
    });
    return out;
}

void CapacityModel::clear()
{
    m_nodes.clear();
    m_nodeViews.clear();
    m_pods.clear();
    m_nodePods.clear();
    m_pending.clear();
    m_demand.clear();
    m_unknownNodeUse.clear();
    m_series.clear();
    m_seriesNodes.clear();
}

void CapacityModel::setTolerations(const QList<Toleration> &tolerations)
{
    m_tolerations = tolerations;
    const QList<Kube::Node> views = m_nodeViews.values();
    for (const Kube::Node &node : views) {
        setNode(node);
    }
}

const NodeEntry *CapacityModel::node(const QString &name) const
{
    const auto it = m_nodes.constFind(name);
    return it == m_nodes.constEnd() ? nullptr : &*it;
}

QStringList CapacityModel::nodesOf(const QString &series) const
{
    QStringList out = m_seriesNodes.value(series).values();
    out.sort();
    return out;
}

QStringList CapacityModel::seriesNames() const
{
    QStringList out;
    for (auto it = m_series.cbegin(); it != m_series.cend(); ++it) {
        if (!it.key().isEmpty()) {
            out << it.key();
        }
    }
    out.sort();
    return out;
}

QStringList CapacityModel::pendingSeries() const
{
    QStringList out = m_demand.keys();
    out.sort();
    return out;
}

SeriesSummary CapacityModel::series(const QString &series) const
{
    SeriesSummary s;
    s.series = series;
    if (const auto demand = m_demand.constFind(series); demand != m_demand.constEnd()) {
        s.pendingGpus = demand->first;
        s.pendingPods = demand->second;
    }
    const auto it = m_series.constFind(series);
    if (it == m_series.constEnd()) {
        return s;
    }
    s.nodes = it->nodes;
    s.schedulableNodes = it->schedulableNodes;
    s.blockedNodes = it->nodes - it->schedulableNodes;
    s.capacity = it->capacity;
    s.used = it->used;
    s.free = it->free;
    s.blocked = it->blocked;
    s.largestFree = it->freeCounts.empty() ? 0 : it->freeCounts.rbegin()->first;
    s.largestAllocatable = it->allocatableCounts.empty() ? 0 : it->allocatableCounts.rbegin()->first;
    // Most free first: `nodes` counts the schedulable nodes with at least `free` free GPUs.
    int nodes = 0;
    qint64 best = 0;
    for (auto count = it->freeCounts.crbegin(); count != it->freeCounts.crend() && count->first > 0; ++count) {
        nodes += count->second;
        if (qint64(nodes) * count->first > best) {
            best = qint64(nodes) * count->first;
            s.fitNowNodes = nodes;
            s.fitNowGpusPerNode = count->first;
        }
    }
    return s;
}

QList<SeriesSummary> CapacityModel::allSeries() const
{
    QList<SeriesSummary> out;
    for (const QString &name : seriesNames()) {
        out << series(name);
    }
    return out;
}

qint64 CapacityModel::usedOnUnknownNodes() const
{
    qint64 total = 0;
    for (const auto &use : m_unknownNodeUse) {
        total += use.first;
    }
    return total;
}

FitVerdict CapacityModel::fit(const FitRequest &request) const
{
    FitVerdict verdict;
    verdict.pools.resize(request.pools.size());
    // Largest pods first; ties keep the JobSpec's order, so the result is deterministic.
    QList<qsizetype> order;
    for (qsizetype i = 0; i < request.pools.size(); ++i) {
        order << i;
    }
    std::stable_sort(order.begin(), order.end(), [&](qsizetype a, qsizetype b) {
        return request.pools.at(a).gpusPerNode > request.pools.at(b).gpusPerNode;
    });

    QSet<QString> takenNow;    // nodes the placement by free GPUs has given a pod
    QSet<QString> takenIdle;   // nodes the placement by allocatable GPUs has given a pod
    const QStringList known = seriesNames();
    for (const qsizetype index : order) {
        const PoolRequest &pool = request.pools.at(index);
        PoolVerdict &v = verdict.pools[index];
        v.request = pool;
        const int need = std::max(0, pool.gpusPerNode);
        const int wanted = std::max(0, pool.nodes);
        const SeriesSummary summary = series(pool.series);
        v.seriesNodes = summary.nodes;
        v.largestFree = summary.largestFree;
        v.largestAllocatable = summary.largestAllocatable;

        // Candidates by free GPUs (best fit: fewest free first) and by allocatable.
        QList<const NodeEntry *> byFree;
        QList<const NodeEntry *> byAllocatable;
        int takenByOthers = 0;
        for (const QString &name : m_seriesNodes.value(pool.series)) {
            const NodeEntry *entry = &*m_nodes.constFind(name);
            const NodeEntry &e = *entry;
            if (e.allocatable < need) {
                continue;
            }
            if (!e.schedulable()) {
                ++v.blocked;
                continue;
            }
            if (takenIdle.contains(name)) {
                ++takenByOthers;
            } else {
                byAllocatable << entry;
            }
            if (takenNow.contains(name)) {
                continue;
            }
            if (e.free() >= need) {
                byFree << entry;
                ++v.freeNow;
            } else {
                ++v.busy;
            }
        }
        const auto bestFit = [](auto key) {
            return [key](const NodeEntry *a, const NodeEntry *b) {
                const int ka = key(a), kb = key(b);
                return ka != kb ? ka < kb : a->name < b->name;
            };
        };
        std::sort(byFree.begin(), byFree.end(), bestFit([](const NodeEntry *e) { return e->free(); }));
        std::sort(byAllocatable.begin(), byAllocatable.end(), bestFit([](const NodeEntry *e) { return e->allocatable; }));

        const bool idleFits = byAllocatable.size() >= wanted;
        if (idleFits) {
            for (int i = 0; i < wanted; ++i) takenIdle.insert(byAllocatable.at(i)->name);
        }
        if (v.freeNow >= wanted) {
            v.fit = Fit::FitsNow;
            for (int i = 0; i < wanted; ++i) {
                takenNow.insert(byFree.at(i)->name);
                v.placement << byFree.at(i)->name;
            }
        } else {
            v.fit = idleFits ? Fit::FitsWhenFree : Fit::NeverFits;
        }

        // The sentence, with the numbers that decided it.
        const QString who = pool.name.isEmpty() ? Text::tr("the pool") : Text::tr("pool \"%1\"").arg(pool.name);
        const QString needs = Text::tr("needs %1 with %2 free GPUs of %3").arg(Text::tr("%n node(s)", nullptr, wanted)).arg(need).arg(pool.series);
        QString sentence;
        if (summary.nodes == 0) {
            sentence = Text::tr("%1 can never fit: %2, and no node has the series \"%3\" (known series: %4)")
                           .arg(who, needs, pool.series, known.isEmpty() ? Text::tr("none") : known.join(QStringLiteral(", ")));
        } else if (v.fit == Fit::NeverFits && need > summary.largestAllocatable && v.blocked == 0) {
            sentence = Text::tr("%1 can never fit: %2, and the largest %3 node has %4 GPUs")
                           .arg(who, needs, pool.series).arg(summary.largestAllocatable);
        } else {
            const QString state = v.fit == Fit::FitsNow ? Text::tr("fits now") : v.fit == Fit::FitsWhenFree ? Text::tr("waits for busy nodes")
                                                                                                                : Text::tr("can never fit");
            sentence = Text::tr("%1 %2: %3; %n has %4 free now", nullptr, v.freeNow).arg(who, state, needs).arg(need);
            if (v.busy > 0) {
                sentence += Text::tr(", %n more is busy", nullptr, v.busy);
            }
            if (v.blocked > 0) {
                sentence += Text::tr(", %n more is cordoned, not ready or tainted", nullptr, v.blocked);
            }
            if (takenByOthers > 0) {
                sentence += Text::tr(", %1 taken by the job's other pools").arg(Text::tr("%n node(s)", nullptr, takenByOthers));
            }
            if (v.fit == Fit::NeverFits) {
                sentence += Text::tr("; the series has only %1 big enough").arg(Text::tr("%n schedulable node(s)", nullptr, int(byAllocatable.size()) + takenByOthers));
            }
            sentence += Text::tr("; largest free node has %1").arg(summary.largestFree);
        }
        v.sentence = sentence;
        verdict.fit = std::max(verdict.fit, v.fit);
    }

    if (request.pools.isEmpty()) {
        verdict.sentence = Text::tr("no pools asked");
        return verdict;
    }
    QStringList sentences;
    for (const Fit level : {Fit::NeverFits, Fit::FitsWhenFree, Fit::FitsNow}) {
        for (const PoolVerdict &v : std::as_const(verdict.pools)) {
            if (v.fit == level) sentences << v.sentence;
        }
    }
    verdict.sentence = sentences.join(QStringLiteral("; "));
    return verdict;
}

// ---------------------------------------------------------------------------------------------

CapacityTracker::CapacityTracker(QString seriesLabel, QList<Toleration> tolerations, QObject *parent)
    : QObject(parent)
    , m_seriesLabel(std::move(seriesLabel))
    , m_model(std::move(tolerations))
{
}

CapacityTracker::~CapacityTracker() = default;

namespace {

// The view a reader made, without copying it out of the QVariant.
template <typename T>
const T *viewIn(const QVariant &value)
{
    return value.metaType() == QMetaType::fromType<T>() ? static_cast<const T *>(value.constData()) : nullptr;
}

} // namespace

QVariant CapacityTracker::readNode(QByteArrayView json)
{
    return QVariant::fromValue(Kube::Node::fromJsonText(json, QString()).value_or(Kube::Node{}));
}

QVariant CapacityTracker::readPod(QByteArrayView json)
{
    return QVariant::fromValue(Kube::Pod::usageFromJsonText(json).value_or(Kube::Pod{}));
}

void CapacityTracker::attach(Kube::Informer *nodes, Kube::Informer *pods)
{
    if (m_nodes) disconnect(m_nodes, nullptr, this, nullptr);
    if (m_pods) disconnect(m_pods, nullptr, this, nullptr);
    m_nodes = nodes;
    m_pods = pods;
    m_model.clear();
    // Views, not QJsonObjects: a pod read into a QJsonObject and then into a view costs fifteen
    // times reading the view from its text (bench_capacity), and at 50,000 pods that decided how
    // long a connect took.
    if (nodes) {
        nodes->setReader(&CapacityTracker::readNode);
        connect(nodes, &Kube::Informer::readAdded, this, &CapacityTracker::onNodeRead);
        connect(nodes, &Kube::Informer::readUpdated, this, &CapacityTracker::onNodeRead);
        connect(nodes, &Kube::Informer::readDeleted, this, &CapacityTracker::onNodeGone);
        connect(nodes, &Kube::Informer::synced, this, [this] { if (isSynced()) Q_EMIT synced(); });
        for (const QByteArray &node : nodes->listJson()) onNodeRead(readNode(node));
    }
    if (pods) {
        pods->setReader(&CapacityTracker::readPod);
        connect(pods, &Kube::Informer::readAdded, this, &CapacityTracker::onPodRead);
        connect(pods, &Kube::Informer::readUpdated, this, &CapacityTracker::onPodRead);
        connect(pods, &Kube::Informer::readDeleted, this, &CapacityTracker::onPodGone);
        connect(pods, &Kube::Informer::synced, this, [this] { if (isSynced()) Q_EMIT synced(); });
        for (const QByteArray &pod : pods->listJson()) onPodRead(readPod(pod));
    }
    scheduleChanged();
}

bool CapacityTracker::isSynced() const
{
    return (!m_nodes || m_nodes->hasSynced()) && (!m_pods || m_pods->hasSynced()) && (m_nodes || m_pods);
}

void CapacityTracker::onNodeRead(const QVariant &value)
{
    if (const Kube::Node *node = viewIn<Kube::Node>(value)) {
        Kube::Node view = *node;
        view.series = view.labels.value(m_seriesLabel).toString();
        applyNode(view);
    }
}

void CapacityTracker::onNodeGone(const QVariant &value)
{
    if (const Kube::Node *node = viewIn<Kube::Node>(value)) {
        removeNodeNamed(node->name);
    }
}

void CapacityTracker::onPodRead(const QVariant &value)
{
    if (const Kube::Pod *pod = viewIn<Kube::Pod>(value)) {
        // Only a pod that names the series label needs its own copy to say which it waits for.
        const QJsonValue series = pod->nodeSelector.value(m_seriesLabel);
        if (series.isString()) {
            Kube::Pod view = *pod;
            view.series = series.toString();
            applyPod(view);
        } else {
            applyPod(*pod);
        }
    }
}

void CapacityTracker::onPodGone(const QVariant &value)
{
    if (const Kube::Pod *pod = viewIn<Kube::Pod>(value)) {
        removePodNamed(pod->ns, pod->name);
    }
}

void CapacityTracker::nodeAdded(const QJsonObject &node)
{
    applyNode(Kube::Node::fromJson(node, m_seriesLabel));
}

void CapacityTracker::applyNode(const Kube::Node &view)
{
    const NodeEntry *current = m_model.node(view.name);
    const std::optional<NodeEntry> before = current ? std::optional<NodeEntry>(*current) : std::nullopt;
    m_model.setNode(view);
    const NodeEntry &after = *m_model.node(view.name);
    // Kubelets post their status every few seconds: only a change the numbers see is news.
    if (before && before->series == after.series && before->allocatable == after.allocatable && before->capacity == after.capacity
        && before->block == after.block && before->blockDetail == after.blockDetail) {
        return;
    }
    if (before && before->series != after.series) {
        Q_EMIT nodeChanged(view.name, before->series);
    }
    Q_EMIT nodeChanged(view.name, view.series);
    scheduleChanged();
}

void CapacityTracker::nodeDeleted(const QJsonObject &node)
{
    removeNodeNamed(node.value(QLatin1String("metadata")).toObject().value(QLatin1String("name")).toString());
}

void CapacityTracker::removeNodeNamed(const QString &name)
{
    const NodeEntry *entry = m_model.node(name);
    if (!entry) {
        return;
    }
    const QString series = entry->series;
    m_model.removeNode(name);
    Q_EMIT nodeChanged(name, series);
    scheduleChanged();
}

void CapacityTracker::podAdded(const QJsonObject &pod)
{
    Kube::Pod view = Kube::Pod::fromJson(pod);
    view.series = view.nodeSelector.value(m_seriesLabel).toString();
    applyPod(view);
}

void CapacityTracker::applyPod(const Kube::Pod &view)
{
    // One lookup per pod: fifty thousand of them arrive on the GUI thread at connect.
    announce(m_model.setPod(view));
}

void CapacityTracker::announce(const CapacityModel::PodMove &move)
{
    if (move.demandMoved) {
        if (!move.demandFrom.isEmpty()) Q_EMIT demandChanged(move.demandFrom);
        if (!move.demandTo.isEmpty() && move.demandTo != move.demandFrom) Q_EMIT demandChanged(move.demandTo);
    }
    if (!move.moved) {
        if (move.demandMoved) scheduleChanged();
        return;
    }
    if (const NodeEntry *e = move.from.isEmpty() ? nullptr : m_model.node(move.from)) {
        Q_EMIT nodeChanged(move.from, e->series);
    }
    if (const NodeEntry *e = move.to.isEmpty() || move.to == move.from ? nullptr : m_model.node(move.to)) {
        Q_EMIT nodeChanged(move.to, e->series);
    }
    scheduleChanged();
}

void CapacityTracker::podDeleted(const QJsonObject &pod)
{
    const QJsonObject meta = pod.value(QLatin1String("metadata")).toObject();
    removePodNamed(meta.value(QLatin1String("namespace")).toString(), meta.value(QLatin1String("name")).toString());
}

void CapacityTracker::removePodNamed(const QString &ns, const QString &name)
{
    announce(m_model.removePod(ns, name));
}

void CapacityTracker::scheduleChanged()
{
    if (m_changePending) {
        return;
    }
    m_changePending = true;
    QTimer::singleShot(0, this, [this] {
        m_changePending = false;
        Q_EMIT changed();
    });
}

} // namespace Starforge::Cluster
