#pragma once

// GPU capacity of the cluster, per node and per series, and the fit verdict for a job's pools.
// The capacity heatmap and the fit verdict read the same CapacityModel, so what the user sees
// is what the verdict decides on.
//
// Inputs, by the rules kubectl's describe node and the scheduler use:
//  - a node's GPUs are its allocatable nvidia.com/gpu; its series is the value of the GPU
//    series label (FORGE_K8S_GPU_NODE_LABEL, default starforge/gpu-series);
//  - a pod uses GPUs on a node when it is bound to it (spec.nodeName) and not Succeeded or
//    Failed; its GPUs are its nvidia.com/gpu requests (Kube::Pod::gpuRequests: app containers
//    summed, at least the largest init container, sidecars added, overhead added).
//
// Blocked nodes: a node whose GPUs the job's pods cannot get even when they are free.
//  - Cordoned: spec.unschedulable (the scheduler's NodeUnschedulable filter).
//  - NotReady: the Ready condition is not True (the node lifecycle controller taints such a
//    node not-ready/unreachable, which pods do not tolerate for scheduling).
//  - Tainted: a NoSchedule or NoExecute taint that the job's tolerations do not tolerate.
//    PreferNoSchedule never blocks. The default tolerations are those Kubernetes' admission
//    plugin ExtendedResourceToleration gives a pod that requests nvidia.com/gpu
//    ({key nvidia.com/gpu, Exists, NoSchedule}): GPU nodes are commonly tainted that way and
//    the job's GPU pods get that toleration. The RayJob builder must put exactly these
//    tolerations (defaultTolerations()) on its pods so the verdict and the scheduler agree.
// The first that applies names the block, in that order.
//
// Per series: capacity = allocatable GPUs of its nodes; used = GPUs requested by pods on them;
// free = unused GPUs on schedulable nodes; blocked = unused GPUs on blocked nodes. So
// capacity = used + free + blocked, unless a node is overcommitted (used > allocatable, which
// a node that shrank can show); free and blocked never go below zero.
//
// Pending demand of a series: the GPUs asked by pods that wait for it, that is pods not bound to
// a node yet (no spec.nodeName), in phase Pending, asking for GPUs, whose spec.nodeSelector
// names the series with the GPU series label (the RayJob builder pins every pool that way).
//
// Largest job that fits now, per series: the one-pool job {nodes x gpusPerNode} with the most
// GPUs that fit() would answer FitsNow for on an otherwise empty request: the g with the
// largest g x (schedulable nodes with at least g free GPUs); ties go to more GPUs per node.
//
// Fit: each of a pool's nodes is one pod of gpusPerNode GPUs on its own node of the pool's
// series; no two pods of the job (of one pool or of different pools) share a node. Pools are
// placed largest gpusPerNode first, each pod on the schedulable node with the fewest free GPUs
// that still has enough (best fit; ties by node name), which places every pool whenever any
// placement exists. The verdict of a pool:
//  - FitsNow: every pod found a node with gpusPerNode free GPUs;
//  - FitsWhenFree: not now, but the same placement by allocatable GPUs (everything idle)
//    succeeds: the pool waits for busy nodes to free up;
//  - NeverFits: not even then: the series has no nodes, gpusPerNode exceeds the largest
//    allocatable node, or the series has fewer schedulable nodes big enough than asked.
// The job's verdict is the worst of its pools.
//
// CapacityModel is plain data, updated per node and per pod event in O(log n) and read
// without a full pass; CapacityTracker feeds one from Kube::Informer signals. The tracker sets
// the informers' readers (Kube::Informer::setReader): each node and pod is read into its typed
// view where the list page is parsed, off the GUI thread, and never becomes a QJsonObject.

#include "core/kube/resources.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QVariant>

#include <algorithm>
#include <map>
#include <optional>

namespace Starforge::Kube {
class Informer;
}

namespace Starforge::Cluster {

// FORGE_K8S_GPU_NODE_LABEL's default, from the settings table.
QString defaultSeriesLabel();
// The series label from the environment's FORGE_K8S_GPU_NODE_LABEL, else the default. The app
// passes its effective configuration's value instead; this is for tools without a profile.
QString seriesLabelFromEnvironment();

// A pod's toleration (core/v1 Toleration). operatorName: "Exists" or "Equal" (empty = Equal);
// empty key with Exists tolerates every taint; empty effect matches every effect.
struct Toleration
{
    QString key;
    QString operatorName;
    QString value;
    QString effect;

    static Toleration fromJson(const QJsonObject &toleration);
    QJsonObject toJson() const;
    bool tolerates(const Kube::Taint &taint) const;
};

// {nvidia.com/gpu, Exists, NoSchedule}: what ExtendedResourceToleration adds to GPU pods.
QList<Toleration> defaultTolerations();
bool tolerated(const QList<Toleration> &tolerations, const Kube::Taint &taint);
// The first NoSchedule/NoExecute taint none of the tolerations tolerates, if any.
std::optional<Kube::Taint> untoleratedTaint(const QList<Toleration> &tolerations, const QList<Kube::Taint> &taints);
// "key=value:Effect" (or "key:Effect"), as kubectl prints a taint.
QString taintText(const Kube::Taint &taint);

enum class Block { None, Cordoned, NotReady, Tainted };
QString blockName(Block block);   // "", "cordoned", "not ready", "tainted"

struct NodeEntry
{
    QString name;
    QString series;         // empty: the node has no series label
    int capacity = 0;       // status.capacity nvidia.com/gpu
    int allocatable = 0;    // status.allocatable nvidia.com/gpu: what the numbers use
    // 64-bit: the GPU requests of many pods on one node must not wrap around (a device plugin
    // may publish a huge count, and pods ask for what it says).
    qint64 used = 0;        // GPUs requested by the pods that hold resources on it
    int pods = 0;           // those pods
    Block block = Block::None;
    QString blockDetail;    // the taint for Tainted, the Ready reason for NotReady

    bool schedulable() const { return block == Block::None; }
    // At most allocatable, so an int.
    int free() const { return schedulable() ? unused() : 0; }
    int blocked() const { return schedulable() ? 0 : unused(); }

private:
    int unused() const { return static_cast<int>(std::max<qint64>(0, qint64(allocatable) - used)); }
};

struct SeriesSummary
{
    QString series;
    int nodes = 0;
    int schedulableNodes = 0;
    int blockedNodes = 0;
    // Sums over nodes, in 64 bits: two nodes that each publish close to INT_MAX GPUs (a broken
    // or fake device plugin) would wrap an int around to a negative total.
    qint64 capacity = 0;    // allocatable, all nodes
    qint64 used = 0;
    qint64 free = 0;
    qint64 blocked = 0;
    int largestFree = 0;              // the most free GPUs on one schedulable node
    int largestAllocatable = 0;       // the largest schedulable node
    qint64 pendingGpus = 0;           // GPUs asked by Pending pods waiting for this series
    int pendingPods = 0;              // those pods
    int fitNowNodes = 0;              // the largest job that fits now: fitNowNodes nodes
    int fitNowGpusPerNode = 0;        //   of fitNowGpusPerNode GPUs each (0 x 0: none)
};

// A pod that holds GPUs (or other resources) on a node.
struct NodePod
{
    QString ns;
    QString name;
    int gpus = 0;
};

struct PoolRequest
{
    QString name;
    QString series;
    int nodes = 1;
    int gpusPerNode = 0;
};

struct FitRequest
{
    QList<PoolRequest> pools;   // the first is the primary pool (holds the Ray head)
};

// Ordered best to worst; a job's verdict is the largest of its pools'.
enum class Fit { FitsNow, FitsWhenFree, NeverFits };
QString fitName(Fit fit);   // "FitsNow", "FitsWhenFree", "NeverFits"

struct PoolVerdict
{
    PoolRequest request;
    Fit fit = Fit::NeverFits;
    int freeNow = 0;        // nodes open to this pool with gpusPerNode free GPUs now
    int busy = 0;           // more nodes big enough but busy now
    int blocked = 0;        // nodes big enough but cordoned, not ready or tainted
    int largestFree = 0;    // the series' largest free node
    int largestAllocatable = 0;
    int seriesNodes = 0;
    QStringList placement;  // the nodes chosen, when FitsNow
    QString sentence;       // e.g. needs 4 nodes with 8 free GPUs of h200; 2 have 8 free now, ...
};

struct FitVerdict
{
    Fit fit = Fit::FitsNow;
    QList<PoolVerdict> pools;
    QString sentence;       // the pools' sentences, worst first
};

class CapacityModel
{
public:
    explicit CapacityModel(QList<Toleration> tolerations = defaultTolerations());

    // A whole model at once (a first fill, the benchmark's full recompute).
    static CapacityModel build(const QList<Kube::Node> &nodes, const QList<Kube::Pod> &pods,
                               QList<Toleration> tolerations = defaultTolerations());

    // Add or replace a node (by name); the usage of pods already bound to it carries over.
    void setNode(const Kube::Node &node);
    void removeNode(const QString &name);
    // Add or replace a pod, keyed "namespace/name". A pod that holds no resources (unbound,
    // terminal) is kept out. Pods on nodes not (yet) known are counted once the node appears.
    // Says whether its use moved: the node it was counted on before and the one now (empty:
    // none), and moved false for a change the numbers do not see. The same for its pending
    // demand (Pod::series): demandMoved, and the series it counted for before and now.
    struct PodMove
    {
        bool moved = false;
        QString from;
        QString to;
        bool demandMoved = false;
        QString demandFrom;
        QString demandTo;
    };
    PodMove setPod(const Kube::Pod &pod);
    PodMove removePod(const QString &ns, const QString &name);
    // The node a pod's GPUs are counted on; empty when the model holds no such pod.
    QString podNode(const QString &ns, const QString &name) const;
    void clear();

    const QList<Toleration> &tolerations() const { return m_tolerations; }
    // Changes which taints block; every node is re-judged.
    void setTolerations(const QList<Toleration> &tolerations);

    qsizetype nodeCount() const { return m_nodes.size(); }
    qsizetype podCount() const { return m_pods.size(); }
    const NodeEntry *node(const QString &name) const;
    // The pods counted on a node (known or not yet), most GPUs first, then by namespace and name.
    QList<NodePod> podsOn(const QString &node) const;
    // Node names of a series, sorted.
    QStringList nodesOf(const QString &series) const;
    // Every labelled series, sorted (unlabelled nodes are left out; CPU-only nodes with a
    // label are a series of capacity 0).
    QStringList seriesNames() const;
    // Series that pods wait for (pending demand), known nodes or not, sorted.
    QStringList pendingSeries() const;
    SeriesSummary series(const QString &series) const;
    QList<SeriesSummary> allSeries() const;
    // GPUs requested by pods bound to nodes the model does not know.
    qint64 usedOnUnknownNodes() const;

    FitVerdict fit(const FitRequest &request) const;

private:
    struct PodUse
    {
        QString node;
        int gpus = 0;
    };
    struct SeriesTotals
    {
        int nodes = 0;
        int schedulableNodes = 0;
        qint64 capacity = 0;
        qint64 used = 0;
        qint64 free = 0;
        qint64 blocked = 0;
        std::map<int, int> freeCounts;         // free GPUs -> schedulable nodes with that many
        std::map<int, int> allocatableCounts;  // allocatable -> schedulable nodes
    };

    Block judge(const Kube::Node &node, QString *detail) const;
    QString sharedNodeName(const QString &name) const;
    void addContribution(const NodeEntry &entry);
    void removeContribution(const NodeEntry &entry);
    void addUse(const QString &key, const PodUse &use);
    void removeUse(const QString &key, const PodUse &use);
    struct Demand
    {
        QString series;
        int gpus = 0;
    };

    QList<Toleration> m_tolerations;
    QHash<QString, NodeEntry> m_nodes;
    QHash<QString, Kube::Node> m_nodeViews;            // to re-judge on new tolerations
    QHash<QString, PodUse> m_pods;                     // "ns/name" -> where and how much
    // node -> "ns/name" of the pods counted on it. A list, not a set: ten pods a node, and a
    // QSet's first allocation (48 slots) cost 5 MB more at 5,000 nodes (bench_start).
    QHash<QString, QList<QString>> m_nodePods;
    QHash<QString, Demand> m_pending;                  // "ns/name" -> the series it waits for
    QHash<QString, QPair<qint64, int>> m_demand;       // series -> (GPUs, pods) pending
    QHash<QString, QPair<qint64, int>> m_unknownNodeUse;  // node -> (gpus, pods) before it appears
    QHash<QString, SeriesTotals> m_series;
    QHash<QString, QSet<QString>> m_seriesNodes;
};

// A CapacityModel kept current from a node informer and a pod informer (all namespaces: GPUs
// other teams' pods hold are not free). The GUI's heatmap model and the CLI both read model().
class CapacityTracker final : public QObject
{
    Q_OBJECT
public:
    explicit CapacityTracker(QString seriesLabel = defaultSeriesLabel(),
                             QList<Toleration> tolerations = defaultTolerations(), QObject *parent = nullptr);
    ~CapacityTracker() override;

    // Follows these informers (either may be null); what they already hold is taken at once.
    void attach(Kube::Informer *nodes, Kube::Informer *pods);
    const CapacityModel &model() const { return m_model; }
    QString seriesLabel() const { return m_seriesLabel; }
    // Both informers have synced: the numbers describe the whole cluster.
    bool isSynced() const;

    // Direct feeding from objects (for tests and tools); the informers feed views.
    void nodeAdded(const QJsonObject &node);
    void nodeDeleted(const QJsonObject &node);
    void podAdded(const QJsonObject &pod);
    void podDeleted(const QJsonObject &pod);

    // The readers attach() gives the informers: an object's JSON text to a Kube::Node (series
    // unset: each tracker reads its own label) or a Kube::Pod (Pod::usageFromJsonText).
    static QVariant readNode(QByteArrayView json);
    static QVariant readPod(QByteArrayView json);

Q_SIGNALS:
    // A node's entry changed (its usage, its pods, blocking, or it came or went).
    void nodeChanged(const QString &name, const QString &series);
    // A series' pending demand changed (a pod waiting for it came, went, or was bound).
    void demandChanged(const QString &series);
    // Coalesced: emitted once per event-loop turn after any change.
    void changed();
    void synced();

private:
    void onNodeRead(const QVariant &value);
    void onNodeGone(const QVariant &value);
    void onPodRead(const QVariant &value);
    void onPodGone(const QVariant &value);
    void applyNode(const Kube::Node &view);
    void removeNodeNamed(const QString &name);
    void applyPod(const Kube::Pod &view);
    void announce(const CapacityModel::PodMove &move);
    void removePodNamed(const QString &ns, const QString &name);
    void scheduleChanged();

    QString m_seriesLabel;
    CapacityModel m_model;
    QPointer<Kube::Informer> m_nodes;
    QPointer<Kube::Informer> m_pods;
    bool m_changePending = false;
};

} // namespace Starforge::Cluster
