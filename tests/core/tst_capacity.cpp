// The capacity engine: per node and per series numbers from synthetic views (cordoned, not
// ready, tainted, terminal and unbound pods, pods on nodes not yet seen, CPU-only and unlabelled
// nodes, init-container GPU rules), every fit verdict with its sentence, pools competing for one
// series, the views read from JSON text (what the tracker's informer readers make) equal to the
// views read from QJsonObjects, and the tracker fed by real informers on the sandbox matching
// the pods it runs.

#include "core/cluster/capacity.h"
#include "core/kube/informer.h"
#include "core/kube/kubeclient.h"
#include "sandbox/sandbox.h"
#include "support/sandboxfixture.h"
#include "support/testutil.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <limits>

using namespace Starforge;
using namespace Starforge::Cluster;

namespace {

Kube::Node node(const QString &name, const QString &series, int gpus)
{
    Kube::Node n;
    n.name = name;
    n.series = series;
    n.gpuCapacity = gpus;
    n.gpuAllocatable = gpus;
    n.ready = true;
    return n;
}

Kube::Pod pod(const QString &name, const QString &nodeName, int gpus, const QString &phase = QStringLiteral("Running"),
              const QString &ns = QStringLiteral("ml"))
{
    Kube::Pod p;
    p.name = name;
    p.ns = ns;
    p.nodeName = nodeName;
    p.phase = phase;
    p.gpuRequests = gpus;
    return p;
}

Kube::Taint taint(const QString &key, const QString &value, const QString &effect)
{
    return Kube::Taint{key, value, effect};
}

QJsonObject gpuContainer(const QString &name, int gpus, bool sidecar = false)
{
    QJsonObject c{{QStringLiteral("name"), name},
                  {QStringLiteral("resources"), QJsonObject{{QStringLiteral("limits"), QJsonObject{{QStringLiteral("nvidia.com/gpu"), QString::number(gpus)}}}}}};
    if (sidecar) c.insert(QStringLiteral("restartPolicy"), QStringLiteral("Always"));
    return c;
}

QJsonObject parse(const char *json)
{
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(QByteArray(json), &error);
    if (error.error != QJsonParseError::NoError) qFatal("bad fixture: %s", qPrintable(error.errorString()));
    return document.object();
}

// Pod shapes for the GPU request rules and the odd values a view must read as absent.
QList<QJsonObject> podShapes()
{
    return {
        parse(R"({"metadata":{"name":"plain","namespace":"ml","uid":"u1"},"spec":{"nodeSelector":{"starforge/gpu-series":"h200","n":3},"nodeName":"n1","containers":[)"
                 R"({"name":"a","resources":{"limits":{"nvidia.com/gpu":"2"}}},)"
                 R"({"name":"b","resources":{"requests":{"nvidia.com/gpu":"1"},"limits":{"nvidia.com/gpu":"4"}}}]},)"
                 R"("status":{"phase":"Running"}})"),
        // The init container bigger than the sum; a sidecar before and one after it; overhead.
        parse(R"({"spec":{"overhead":{"nvidia.com/gpu":"1"},"initContainers":[)"
                 R"({"name":"side1","restartPolicy":"Always","resources":{"limits":{"nvidia.com/gpu":"1"}}},)"
                 R"({"name":"warm","resources":{"requests":{"nvidia.com/gpu":"6"}}},)"
                 R"({"name":"side2","restartPolicy":"Always","resources":{"requests":{"nvidia.com/gpu":"2"}}}],)"
                 R"("containers":[{"name":"main","resources":{"limits":{"nvidia.com/gpu":"2"}}}],"nodeName":"n2"},)"
                 R"("metadata":{"namespace":"ml","name":"init"},"status":{"phase":"Pending"}})"),
        // Keys in another order, status before spec; an init container after the app containers.
        parse(R"({"status":{"phase":"Succeeded"},"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"1"}}}],)"
                 R"("initContainers":[{"resources":{"limits":{"nvidia.com/gpu":"3"}}}]},"metadata":{"name":"order"}})"),
        // Quantities that are not whole numbers or not strings, a request that does not parse
        // (its limit counts), exponents and suffixes.
        parse(R"({"metadata":{"name":"odd"},"spec":{"containers":[)"
                 R"({"resources":{"limits":{"nvidia.com/gpu":8}}},)"
                 R"({"resources":{"requests":{"nvidia.com/gpu":"lots"},"limits":{"nvidia.com/gpu":"3"}}},)"
                 R"({"resources":{"limits":{"nvidia.com/gpu":"1500m"}}},)"
                 R"({"resources":{"limits":{"nvidia.com/gpu":"2e1"}}},)"
                 R"({"resources":{"limits":{"nvidia.com/gpu":"1k"}}},)"
                 R"({"resources":{"limits":{"nvidia.com/gpu":" 1"}}},)"
                 R"({"resources":{"limits":{"nvidia.com/gpu":"007"}}},)"
                 R"({"resources":"none"},"not a container",)"
                 R"({"resources":{"limits":{"nvidia.com/gpu":"999999999999999"}}}]}})"),
        parse(R"({"metadata":{"name":"huge"},"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"9000000000000000"}}},)"
                 R"({"resources":{"limits":{"nvidia.com/gpu":"9000000000000000"}}}],"overhead":{"nvidia.com/gpu":"-1"}}})"),
        // Wrong types everywhere: read as absent, never a crash.
        parse(R"({"metadata":{"name":7,"namespace":["x"]},"spec":{"nodeName":false,"containers":{"a":1},"initContainers":"x"},)"
                 R"("status":{"phase":null}})"),
        parse(R"({"metadata":"flat","spec":[],"status":1})"),
        // Escapes in the text: the views hold the unescaped strings.
        parse("{\"metadata\":{\"name\":\"esc\\\"aped \\u00e9\",\"namespace\":\"n\\\\s\"},\"spec\":{\"nodeName\":\"n\\u00e9\"},"
              "\"status\":{\"phase\":\"Running\"}}"),
        parse(R"({})"),
    };
}

} // namespace

class TestCapacity : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The verdicts' English, as the apps show it ("2 nodes", not "2 node(s)").
    void initTestCase() { QVERIFY(Testing::installEnglishPlurals()); }

    void perNodeAndPerSeries()
    {
        Kube::Node cordoned = node(QStringLiteral("h200-01"), QStringLiteral("h200"), 8);
        cordoned.unschedulable = true;
        Kube::Node notReady = node(QStringLiteral("h200-02"), QStringLiteral("h200"), 8);
        notReady.ready = false;
        notReady.readyReason = QStringLiteral("KubeletNotReady");
        Kube::Node tainted = node(QStringLiteral("h200-03"), QStringLiteral("h200"), 8);
        tainted.taints = {taint(QStringLiteral("dedicated"), QStringLiteral("infra"), QStringLiteral("NoSchedule"))};
        Kube::Node gpuTainted = node(QStringLiteral("h200-04"), QStringLiteral("h200"), 8);
        gpuTainted.taints = {taint(QStringLiteral("nvidia.com/gpu"), QStringLiteral("present"), QStringLiteral("NoSchedule")),
                             taint(QStringLiteral("spot"), {}, QStringLiteral("PreferNoSchedule"))};
        Kube::Node cpu = node(QStringLiteral("cpu-00"), QStringLiteral("cpu"), 0);
        Kube::Node unlabelled = node(QStringLiteral("odd-00"), QString(), 4);
        Kube::Node shrunk = node(QStringLiteral("h100-00"), QStringLiteral("h100"), 8);
        shrunk.gpuAllocatable = 6;   // two GPUs marked unhealthy by the device plugin

        const CapacityModel model = CapacityModel::build(
            {node(QStringLiteral("h200-00"), QStringLiteral("h200"), 8), cordoned, notReady, tainted, gpuTainted, cpu, unlabelled, shrunk},
            {pod(QStringLiteral("a"), QStringLiteral("h200-00"), 3), pod(QStringLiteral("b"), QStringLiteral("h200-01"), 2),
             pod(QStringLiteral("done"), QStringLiteral("h200-00"), 4, QStringLiteral("Succeeded")),
             pod(QStringLiteral("crashed"), QStringLiteral("h200-04"), 4, QStringLiteral("Failed")),
             pod(QStringLiteral("pending"), QString(), 8, QStringLiteral("Pending")),
             pod(QStringLiteral("binding"), QStringLiteral("h200-04"), 1, QStringLiteral("Pending")),
             pod(QStringLiteral("web"), QStringLiteral("cpu-00"), 0), pod(QStringLiteral("big"), QStringLiteral("h100-00"), 7)});

        const NodeEntry *n0 = model.node(QStringLiteral("h200-00"));
        QVERIFY(n0);
        QCOMPARE(n0->used, 3);
        QCOMPARE(n0->pods, 1);
        QCOMPARE(n0->free(), 5);
        QCOMPARE(n0->block, Block::None);
        QCOMPARE(model.node(QStringLiteral("h200-01"))->block, Block::Cordoned);
        QCOMPARE(model.node(QStringLiteral("h200-01"))->blocked(), 6);
        QCOMPARE(model.node(QStringLiteral("h200-01"))->free(), 0);
        QCOMPARE(model.node(QStringLiteral("h200-02"))->block, Block::NotReady);
        QCOMPARE(model.node(QStringLiteral("h200-02"))->blockDetail, QStringLiteral("KubeletNotReady"));
        QCOMPARE(model.node(QStringLiteral("h200-03"))->block, Block::Tainted);
        QCOMPARE(model.node(QStringLiteral("h200-03"))->blockDetail, QStringLiteral("dedicated=infra:NoSchedule"));
        // The GPU taint is tolerated by default, PreferNoSchedule never blocks; a Pending pod
        // already bound holds its GPUs, a Failed one does not.
        QCOMPARE(model.node(QStringLiteral("h200-04"))->block, Block::None);
        QCOMPARE(model.node(QStringLiteral("h200-04"))->used, 1);
        // Allocatable decides, and an overcommitted node has nothing free, not a negative.
        QCOMPARE(model.node(QStringLiteral("h100-00"))->capacity, 8);
        QCOMPARE(model.node(QStringLiteral("h100-00"))->free(), 0);

        const SeriesSummary h200 = model.series(QStringLiteral("h200"));
        QCOMPARE(h200.nodes, 5);
        QCOMPARE(h200.schedulableNodes, 2);
        QCOMPARE(h200.blockedNodes, 3);
        QCOMPARE(h200.capacity, 40);
        QCOMPARE(h200.used, 6);
        QCOMPARE(h200.free, 5 + 7);
        QCOMPARE(h200.blocked, 6 + 8 + 8);
        QCOMPARE(h200.capacity, h200.used + h200.free + h200.blocked);
        QCOMPARE(h200.largestFree, 7);
        QCOMPARE(h200.largestAllocatable, 8);
        const SeriesSummary h100 = model.series(QStringLiteral("h100"));
        QCOMPARE(h100.capacity, 6);
        QCOMPARE(h100.used, 7);
        QCOMPARE(h100.free, 0);
        const SeriesSummary cpuSeries = model.series(QStringLiteral("cpu"));
        QCOMPARE(cpuSeries.nodes, 1);
        QCOMPARE(cpuSeries.capacity, 0);
        QCOMPARE(model.node(QStringLiteral("cpu-00"))->pods, 1);
        // Unlabelled nodes are no series the user can ask for.
        QCOMPARE(model.seriesNames(), (QStringList{QStringLiteral("cpu"), QStringLiteral("h100"), QStringLiteral("h200")}));
        QCOMPARE(model.allSeries().size(), 3);
        QCOMPARE(model.nodesOf(QStringLiteral("h200")).first(), QStringLiteral("h200-00"));
        QCOMPARE(model.podCount(), 5);
    }

    void incrementalUpdatesMatchAFullBuild()
    {
        CapacityModel model;
        model.setNode(node(QStringLiteral("n1"), QStringLiteral("h200"), 8));
        model.setNode(node(QStringLiteral("n2"), QStringLiteral("h200"), 8));
        model.setPod(pod(QStringLiteral("p"), QStringLiteral("n1"), 4));
        QCOMPARE(model.series(QStringLiteral("h200")).largestFree, 8);
        model.setPod(pod(QStringLiteral("q"), QStringLiteral("n2"), 6));
        QCOMPARE(model.series(QStringLiteral("h200")).largestFree, 4);
        QCOMPARE(model.series(QStringLiteral("h200")).free, 6);
        // The same pod again (status churn) changes nothing; finishing releases its GPUs.
        model.setPod(pod(QStringLiteral("q"), QStringLiteral("n2"), 6));
        QCOMPARE(model.node(QStringLiteral("n2"))->used, 6);
        model.setPod(pod(QStringLiteral("q"), QStringLiteral("n2"), 6, QStringLiteral("Succeeded")));
        QCOMPARE(model.node(QStringLiteral("n2"))->used, 0);
        QCOMPARE(model.podNode(QStringLiteral("ml"), QStringLiteral("q")), QString());
        model.removePod(QStringLiteral("ml"), QStringLiteral("p"));
        QCOMPARE(model.series(QStringLiteral("h200")).free, 16);
        // Cordon, then relabel into another series.
        Kube::Node n1 = node(QStringLiteral("n1"), QStringLiteral("h200"), 8);
        n1.unschedulable = true;
        model.setNode(n1);
        QCOMPARE(model.series(QStringLiteral("h200")).blocked, 8);
        QCOMPARE(model.series(QStringLiteral("h200")).largestFree, 8);
        model.setNode(node(QStringLiteral("n1"), QStringLiteral("h100"), 8));
        QCOMPARE(model.series(QStringLiteral("h200")).nodes, 1);
        QCOMPARE(model.series(QStringLiteral("h100")).free, 8);
        model.removeNode(QStringLiteral("n2"));
        QCOMPARE(model.seriesNames(), QStringList{QStringLiteral("h100")});
        QCOMPARE(model.series(QStringLiteral("h200")).nodes, 0);

        // A random walk of events ends where a full build of the final state does.
        CapacityModel walked;
        QList<Kube::Node> nodes;
        for (int i = 0; i < 20; ++i) {
            nodes << node(QStringLiteral("g%1").arg(i, 2, 10, QLatin1Char('0')), i % 2 ? QStringLiteral("a") : QStringLiteral("b"), 8);
            walked.setNode(nodes.last());
        }
        QHash<QString, Kube::Pod> live;
        quint32 seed = 7;
        const auto next = [&seed](quint32 n) { seed = seed * 1103515245u + 12345u; return (seed >> 8) % n; };
        for (int step = 0; step < 2000; ++step) {
            const QString name = QStringLiteral("p%1").arg(next(60));
            if (next(4) == 0) {
                walked.removePod(QStringLiteral("ml"), name);
                live.remove(name);
                continue;
            }
            const Kube::Pod p = pod(name, next(5) == 0 ? QString() : nodes.at(int(next(20))).name, int(next(5)),
                                    next(6) == 0 ? QStringLiteral("Succeeded") : QStringLiteral("Running"));
            walked.setPod(p);
            live.insert(name, p);
        }
        const CapacityModel built = CapacityModel::build(nodes, live.values());
        for (const QString &series : {QStringLiteral("a"), QStringLiteral("b")}) {
            const SeriesSummary x = walked.series(series), y = built.series(series);
            QCOMPARE(x.used, y.used);
            QCOMPARE(x.free, y.free);
            QCOMPARE(x.largestFree, y.largestFree);
        }
        for (const Kube::Node &n : std::as_const(nodes)) {
            QCOMPARE(walked.node(n.name)->used, built.node(n.name)->used);
            QCOMPARE(walked.node(n.name)->pods, built.node(n.name)->pods);
        }
    }

    // A small fleet taken through a few events, each state checked against sums worked out by
    // hand (in the comments), not against another build by the same engine.
    void handComputedFleet()
    {
        const auto summary = [](const SeriesSummary &x) {
            return QList<qint64>{x.nodes, x.schedulableNodes, x.blockedNodes, x.capacity, x.used, x.free, x.blocked, x.largestFree, x.largestAllocatable};
        };
        Kube::Node n3 = node(QStringLiteral("n3"), QStringLiteral("h100"), 4);
        n3.unschedulable = true;
        Kube::Node m1 = node(QStringLiteral("m1"), QStringLiteral("a100"), 4);
        m1.ready = false;
        Kube::Node m2 = node(QStringLiteral("m2"), QStringLiteral("a100"), 4);
        m2.taints = {taint(QStringLiteral("maintenance"), QStringLiteral("yes"), QStringLiteral("NoSchedule"))};
        CapacityModel model;
        for (const Kube::Node &n : {node(QStringLiteral("n1"), QStringLiteral("h100"), 8), node(QStringLiteral("n2"), QStringLiteral("h100"), 8), n3, m1, m2})
            model.setNode(n);
        model.setPod(pod(QStringLiteral("p1"), QStringLiteral("n1"), 4));
        model.setPod(pod(QStringLiteral("p2"), QStringLiteral("n2"), 8));
        model.setPod(pod(QStringLiteral("p3"), QStringLiteral("n3"), 2));                              // a cordoned node's pods still use GPUs
        model.setPod(pod(QStringLiteral("p4"), QStringLiteral("m2"), 1, QStringLiteral("Pending")));  // bound, not yet running: counts
        model.setPod(pod(QStringLiteral("p5"), QString(), 8, QStringLiteral("Pending")));             // not bound: counts nowhere
        model.setPod(pod(QStringLiteral("p6"), QStringLiteral("n1"), 2, QStringLiteral("Succeeded"))); // ended: counts nowhere

        // h100: 3 nodes, n3 cordoned; capacity 8+8+4 = 20; used 4+8+2 = 14; free on schedulable
        // nodes (8-4)+(8-8) = 4; blocked: unused on n3, 4-2 = 2; largest free 4 (n1); largest
        // schedulable node 8.
        QCOMPARE(summary(model.series(QStringLiteral("h100"))), (QList<qint64>{3, 2, 1, 20, 14, 4, 2, 4, 8}));
        // a100: m1 not ready, m2 tainted; capacity 8, used 1; nothing free; blocked 4 + (4-1) = 7.
        QCOMPARE(summary(model.series(QStringLiteral("a100"))), (QList<qint64>{2, 0, 2, 8, 1, 0, 7, 0, 0}));
        QCOMPARE(model.node(QStringLiteral("m1"))->block, Block::NotReady);
        QCOMPARE(model.node(QStringLiteral("m2"))->block, Block::Tainted);

        // p2 ends: used 14-8 = 6; free 4+8 = 12; largest free 8 (n2).
        model.setPod(pod(QStringLiteral("p2"), QStringLiteral("n2"), 8, QStringLiteral("Succeeded")));
        QCOMPARE(summary(model.series(QStringLiteral("h100"))), (QList<qint64>{3, 2, 1, 20, 6, 12, 2, 8, 8}));
        // n3 uncordoned: its 2 unused GPUs move from blocked to free: free 14, blocked 0.
        n3.unschedulable = false;
        model.setNode(n3);
        QCOMPARE(summary(model.series(QStringLiteral("h100"))), (QList<qint64>{3, 3, 0, 20, 6, 14, 0, 8, 8}));
        // m1 ready: 4 free, 3 still blocked on m2; largest free and allocatable 4.
        m1.ready = true;
        model.setNode(m1);
        QCOMPARE(summary(model.series(QStringLiteral("a100"))), (QList<qint64>{2, 1, 1, 8, 1, 4, 3, 4, 4}));
        // n3 overcommitted (it shrank under its pods): used 2+6 = 8 on 4 allocatable; its free is
        // 0, never negative: used 6+6 = 12, free (8-4)+8+0 = 12.
        model.setPod(pod(QStringLiteral("p7"), QStringLiteral("n3"), 6));
        QCOMPARE(summary(model.series(QStringLiteral("h100"))), (QList<qint64>{3, 3, 0, 20, 12, 12, 0, 8, 8}));
        // The fit of a job on this state: 2 nodes of 8 on h100 cannot be had now (only n2 is
        // idle) but can when the cluster is idle (n1 and n2 have 8): FitsWhenFree.
        QCOMPARE(model.fit(FitRequest{{PoolRequest{QStringLiteral("train"), QStringLiteral("h100"), 2, 8}}}).fit, Fit::FitsWhenFree);
        QCOMPARE(model.fit(FitRequest{{PoolRequest{QStringLiteral("train"), QStringLiteral("h100"), 1, 8}}}).fit, Fit::FitsNow);
        QCOMPARE(model.fit(FitRequest{{PoolRequest{QStringLiteral("train"), QStringLiteral("h100"), 3, 8}}}).fit, Fit::NeverFits);
    }

    // Pending demand (pods waiting for a series), the pods counted on a node, and the largest
    // job that fits now, each against numbers worked out by hand.
    void pendingDemandPodsOnANodeAndTheLargestJob()
    {
        CapacityModel model;
        for (const Kube::Node &n : {node(QStringLiteral("a"), QStringLiteral("h200"), 8), node(QStringLiteral("b"), QStringLiteral("h200"), 8),
                                    node(QStringLiteral("c"), QStringLiteral("h200"), 8), node(QStringLiteral("d"), QStringLiteral("h200"), 8)})
            model.setNode(n);
        const auto waiting = [](const QString &name, const QString &series, int gpus) {
            Kube::Pod p = pod(name, QString(), gpus, QStringLiteral("Pending"));
            p.series = series;
            return p;
        };
        // Free a 8, b 6, c 2, d 0 (c also runs a pod without GPUs).
        model.setPod(pod(QStringLiteral("p-b"), QStringLiteral("b"), 2));
        model.setPod(pod(QStringLiteral("p-c"), QStringLiteral("c"), 6));
        model.setPod(pod(QStringLiteral("cpu-c"), QStringLiteral("c"), 0));
        model.setPod(pod(QStringLiteral("p-d"), QStringLiteral("d"), 8, QStringLiteral("Running"), QStringLiteral("other")));
        // Largest job now: 8 GPUs x 1 node = 8; 6 x 2 (a, b) = 12; 2 x 3 = 6: 2 nodes x 6.
        SeriesSummary h200 = model.series(QStringLiteral("h200"));
        QCOMPARE(h200.fitNowNodes, 2);
        QCOMPARE(h200.fitNowGpusPerNode, 6);
        QCOMPARE(model.fit(FitRequest{{PoolRequest{QStringLiteral("x"), QStringLiteral("h200"), 2, 6}}}).fit, Fit::FitsNow);
        QCOMPARE(model.fit(FitRequest{{PoolRequest{QStringLiteral("x"), QStringLiteral("h200"), 3, 6}}}).fit, Fit::FitsWhenFree);

        // Pods of a node: most GPUs first, then namespace and name.
        const QList<NodePod> onC = model.podsOn(QStringLiteral("c"));
        QCOMPARE(onC.size(), 2);
        QCOMPARE(onC.at(0).name, QStringLiteral("p-c"));
        QCOMPARE(onC.at(0).gpus, 6);
        QCOMPARE(onC.at(1).name, QStringLiteral("cpu-c"));
        QCOMPARE(model.podsOn(QStringLiteral("d")).at(0).ns, QStringLiteral("other"));
        QVERIFY(model.podsOn(QStringLiteral("a")).isEmpty());

        // Two pods wait for h200 (4 + 8), one for a series with no nodes, one asks no GPUs, one
        // names no series: demand h200 = 12 GPUs in 2 pods; b200 = 16 in 1.
        model.setPod(waiting(QStringLiteral("w1"), QStringLiteral("h200"), 4));
        model.setPod(waiting(QStringLiteral("w2"), QStringLiteral("h200"), 8));
        model.setPod(waiting(QStringLiteral("w3"), QStringLiteral("b200"), 16));
        model.setPod(waiting(QStringLiteral("none"), QStringLiteral("h200"), 0));
        model.setPod(waiting(QStringLiteral("anywhere"), QString(), 8));
        h200 = model.series(QStringLiteral("h200"));
        QCOMPARE(h200.pendingGpus, 12);
        QCOMPARE(h200.pendingPods, 2);
        QCOMPARE(model.series(QStringLiteral("b200")).pendingGpus, 16);
        QCOMPARE(model.series(QStringLiteral("b200")).nodes, 0);
        // The same pod again moves nothing; asking more moves the demand.
        QVERIFY(!model.setPod(waiting(QStringLiteral("w1"), QStringLiteral("h200"), 4)).demandMoved);
        const auto more = model.setPod(waiting(QStringLiteral("w1"), QStringLiteral("h200"), 6));
        QVERIFY(more.demandMoved);
        QCOMPARE(more.demandFrom, QStringLiteral("h200"));
        QCOMPARE(more.demandTo, QStringLiteral("h200"));
        QCOMPARE(model.series(QStringLiteral("h200")).pendingGpus, 14);
        // w1 is bound to a: it leaves the demand and uses a's GPUs; free a 2, b 6, c 2, d 0:
        // largest job 1 x 6 = 6 against 3 x 2 = 6: the tie goes to more GPUs per node.
        Kube::Pod bound = pod(QStringLiteral("w1"), QStringLiteral("a"), 6, QStringLiteral("Pending"));
        bound.series = QStringLiteral("h200");
        const auto placed = model.setPod(bound);
        QVERIFY(placed.demandMoved && placed.moved);
        QCOMPARE(placed.to, QStringLiteral("a"));
        h200 = model.series(QStringLiteral("h200"));
        QCOMPARE(h200.pendingGpus, 8);
        QCOMPARE(h200.pendingPods, 1);
        QCOMPARE(h200.used, 2 + 6 + 8 + 6);
        QCOMPARE(h200.fitNowNodes, 1);
        QCOMPARE(h200.fitNowGpusPerNode, 6);
        // Deleting the waiting pods ends the demand.
        QCOMPARE(model.removePod(QStringLiteral("ml"), QStringLiteral("w2")).demandFrom, QStringLiteral("h200"));
        model.removePod(QStringLiteral("ml"), QStringLiteral("w3"));
        QCOMPARE(model.series(QStringLiteral("h200")).pendingPods, 0);
        QCOMPARE(model.series(QStringLiteral("b200")).pendingGpus, 0);
        // A full node: nothing fits now (0 x 0).
        CapacityModel full;
        full.setNode(node(QStringLiteral("f"), QStringLiteral("a100"), 4));
        full.setPod(pod(QStringLiteral("all"), QStringLiteral("f"), 4));
        QCOMPARE(full.series(QStringLiteral("a100")).fitNowNodes, 0);
        QCOMPARE(full.series(QStringLiteral("a100")).fitNowGpusPerNode, 0);
        // A node that goes keeps its pods listed for when it comes back.
        full.removeNode(QStringLiteral("f"));
        QCOMPARE(full.podsOn(QStringLiteral("f")).size(), 1);
        full.removePod(QStringLiteral("ml"), QStringLiteral("all"));
        QVERIFY(full.podsOn(QStringLiteral("f")).isEmpty());
    }

    void podsOnNodesNotYetSeen()
    {
        CapacityModel model;
        model.setPod(pod(QStringLiteral("early"), QStringLiteral("late-node"), 4));
        QCOMPARE(model.usedOnUnknownNodes(), 4);
        model.setNode(node(QStringLiteral("late-node"), QStringLiteral("h200"), 8));
        QCOMPARE(model.usedOnUnknownNodes(), 0);
        QCOMPARE(model.node(QStringLiteral("late-node"))->used, 4);
        QCOMPARE(model.series(QStringLiteral("h200")).free, 4);
        // The node goes (a relist, a replacement): its pods' use waits for it again.
        model.removeNode(QStringLiteral("late-node"));
        QCOMPARE(model.usedOnUnknownNodes(), 4);
        model.removePod(QStringLiteral("ml"), QStringLiteral("early"));
        QCOMPARE(model.usedOnUnknownNodes(), 0);
    }

    void initContainerGpuRules()
    {
        // The largest init container counts when it exceeds the app containers; sidecars add.
        QJsonObject spec{{QStringLiteral("nodeName"), QStringLiteral("n1")},
                         {QStringLiteral("containers"), QJsonArray{gpuContainer(QStringLiteral("main"), 2), gpuContainer(QStringLiteral("aux"), 1)}},
                         {QStringLiteral("initContainers"), QJsonArray{gpuContainer(QStringLiteral("warm"), 6)}}};
        const auto json = [](const QString &name, const QJsonObject &s) {
            return QJsonObject{{QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("namespace"), QStringLiteral("ml")}}},
                               {QStringLiteral("spec"), s},
                               {QStringLiteral("status"), QJsonObject{{QStringLiteral("phase"), QStringLiteral("Pending")}}}};
        };
        CapacityModel model;
        model.setNode(node(QStringLiteral("n1"), QStringLiteral("h200"), 8));
        model.setPod(Kube::Pod::fromJson(json(QStringLiteral("init-peak"), spec)));
        QCOMPARE(model.node(QStringLiteral("n1"))->used, 6);
        spec.insert(QStringLiteral("initContainers"), QJsonArray{gpuContainer(QStringLiteral("proxy"), 1, true), gpuContainer(QStringLiteral("warm"), 1)});
        model.setPod(Kube::Pod::fromJson(json(QStringLiteral("init-peak"), spec)));
        QCOMPARE(model.node(QStringLiteral("n1"))->used, 4);   // 2 + 1 app, + 1 sidecar
    }

    void tolerationsDecideWhatBlocks()
    {
        Kube::Node dedicated = node(QStringLiteral("d1"), QStringLiteral("h200"), 8);
        dedicated.taints = {taint(QStringLiteral("dedicated"), QStringLiteral("rl"), QStringLiteral("NoExecute"))};
        Kube::Node gpuExecute = node(QStringLiteral("d2"), QStringLiteral("h200"), 8);
        gpuExecute.taints = {taint(QStringLiteral("nvidia.com/gpu"), {}, QStringLiteral("NoExecute"))};
        Kube::Node cordonTaint = node(QStringLiteral("d3"), QStringLiteral("h200"), 8);
        cordonTaint.taints = {taint(QStringLiteral("node.kubernetes.io/unschedulable"), {}, QStringLiteral("NoSchedule"))};
        CapacityModel model = CapacityModel::build({dedicated, gpuExecute, cordonTaint}, {});
        QCOMPARE(model.node(QStringLiteral("d1"))->block, Block::Tainted);
        QCOMPARE(model.node(QStringLiteral("d2"))->block, Block::Tainted);   // the default toleration is NoSchedule only
        QCOMPARE(model.node(QStringLiteral("d3"))->block, Block::Cordoned);
        QCOMPARE(model.series(QStringLiteral("h200")).free, 0);

        QList<Toleration> tolerations = defaultTolerations();
        tolerations << Toleration{QStringLiteral("dedicated"), QStringLiteral("Equal"), QStringLiteral("rl"), {}};
        model.setTolerations(tolerations);
        QCOMPARE(model.node(QStringLiteral("d1"))->block, Block::None);
        QCOMPARE(model.series(QStringLiteral("h200")).free, 8);
        const Toleration otherValue{QStringLiteral("dedicated"), QStringLiteral("Equal"), QStringLiteral("other"), {}};
        const Toleration everything{{}, QStringLiteral("Exists"), {}, {}};
        const Toleration emptyEqual{{}, QString(), {}, {}};
        QVERIFY(!otherValue.tolerates(dedicated.taints.first()));
        QVERIFY(everything.tolerates(dedicated.taints.first()));
        QVERIFY(!emptyEqual.tolerates(dedicated.taints.first()));
        QCOMPARE(Toleration::fromJson(tolerations.last().toJson()).value, QStringLiteral("rl"));
        QCOMPARE(taintText(gpuExecute.taints.first()), QStringLiteral("nvidia.com/gpu:NoExecute"));
    }

    void seriesLabelFromTheEnvironment()
    {
        qunsetenv("FORGE_K8S_GPU_NODE_LABEL");
        QCOMPARE(seriesLabelFromEnvironment(), QStringLiteral("starforge/gpu-series"));
        qputenv("FORGE_K8S_GPU_NODE_LABEL", "example.com/accelerator");
        QCOMPARE(seriesLabelFromEnvironment(), QStringLiteral("example.com/accelerator"));
        qunsetenv("FORGE_K8S_GPU_NODE_LABEL");

        // The tracker reads the series from the label it was given.
        CapacityTracker tracker(QStringLiteral("example.com/accelerator"));
        QSignalSpy changed(&tracker, &CapacityTracker::changed);
        QSignalSpy nodeChanged(&tracker, &CapacityTracker::nodeChanged);
        tracker.nodeAdded(QJsonObject{
            {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), QStringLiteral("x1")},
                                                     {QStringLiteral("labels"), QJsonObject{{QStringLiteral("example.com/accelerator"), QStringLiteral("b200")},
                                                                                            {QStringLiteral("starforge/gpu-series"), QStringLiteral("wrong")}}}}},
            {QStringLiteral("status"), QJsonObject{{QStringLiteral("allocatable"), QJsonObject{{QStringLiteral("nvidia.com/gpu"), QStringLiteral("8")}}},
                                                   {QStringLiteral("conditions"), QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("Ready")},
                                                                                                        {QStringLiteral("status"), QStringLiteral("True")}}}}}}});
        QCOMPARE(tracker.model().seriesNames(), QStringList{QStringLiteral("b200")});
        QCOMPARE(tracker.model().series(QStringLiteral("b200")).free, 8);
        QCOMPARE(nodeChanged.size(), 1);
        QCOMPARE(nodeChanged.first().at(1).toString(), QStringLiteral("b200"));
        tracker.podAdded(QJsonObject{{QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), QStringLiteral("p")}, {QStringLiteral("namespace"), QStringLiteral("ml")}}},
                                     {QStringLiteral("spec"), QJsonObject{{QStringLiteral("nodeName"), QStringLiteral("x1")},
                                                                          {QStringLiteral("containers"), QJsonArray{gpuContainer(QStringLiteral("c"), 3)}}}},
                                     {QStringLiteral("status"), QJsonObject{{QStringLiteral("phase"), QStringLiteral("Running")}}}});
        QCOMPARE(tracker.model().series(QStringLiteral("b200")).free, 5);
        QCOMPARE(nodeChanged.size(), 2);
        // A status heartbeat that changes nothing counted is no news.
        tracker.nodeAdded(QJsonObject{
            {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), QStringLiteral("x1")}, {QStringLiteral("resourceVersion"), QStringLiteral("99")},
                                                     {QStringLiteral("labels"), QJsonObject{{QStringLiteral("example.com/accelerator"), QStringLiteral("b200")}}}}},
            {QStringLiteral("status"), QJsonObject{{QStringLiteral("allocatable"), QJsonObject{{QStringLiteral("nvidia.com/gpu"), QStringLiteral("8")}}},
                                                   {QStringLiteral("conditions"), QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("Ready")},
                                                                                                        {QStringLiteral("status"), QStringLiteral("True")}}}}}}});
        QCOMPARE(nodeChanged.size(), 2);
        // One coalesced change for the whole burst.
        QTRY_COMPARE(changed.size(), 1);
    }

    // The informer readers' views from text are the views from QJsonObjects, compact or not.
    void viewsFromTextMatchViewsFromObjects()
    {
        for (const QJsonObject &object : podShapes()) {
            const Kube::Pod expected = Kube::Pod::fromJson(object);
            for (const auto format : {QJsonDocument::Compact, QJsonDocument::Indented}) {
                const auto read = Kube::Pod::usageFromJsonText(QJsonDocument(object).toJson(format));
                QVERIFY(read);
                const QString what = QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
                QVERIFY2(read->name == expected.name && read->ns == expected.ns && read->uid == expected.uid, qPrintable(what));
                QVERIFY2(read->phase == expected.phase && read->nodeName == expected.nodeName, qPrintable(what));
                QVERIFY2(read->nodeSelector == expected.nodeSelector, qPrintable(what));
                QVERIFY2(read->gpuRequests == expected.gpuRequests,
                         qPrintable(QStringLiteral("%1: %2 != %3").arg(what).arg(read->gpuRequests).arg(expected.gpuRequests)));
            }
        }
        // max(main 2 + sidecars 1 + 2, sidecar 1 beside init 6) + overhead 1
        QCOMPARE(Kube::Pod::usageFromJsonText(QJsonDocument(podShapes().at(1)).toJson()).value().gpuRequests, 8);
        QVERIFY(!Kube::Pod::usageFromJsonText("[1,2]"));
        QVERIFY(!Kube::Pod::usageFromJsonText("{\"metadata\":"));
        QVERIFY(!Kube::Pod::usageFromJsonText(""));

        QList<QJsonObject> nodes;
        for (const char *fixture : {"k9s-real.node-minikube.json", "api-roundtrip.core.v1.Node.json"}) {
            QFile file(Testing::dataPath(QStringLiteral("kubernetes/") + QLatin1String(fixture)));
            QVERIFY(file.open(QIODevice::ReadOnly));
            nodes << QJsonDocument::fromJson(file.readAll()).object();
        }
        nodes << parse(R"({"metadata":{"name":"gpu-1","labels":{"starforge/gpu-series":"h200","n":3}},)"
                          R"("spec":{"unschedulable":true,"taints":[{"key":"nvidia.com/gpu","effect":"NoSchedule"},"odd",{"key":"k","value":"v","effect":"NoExecute"}]},)"
                          R"("status":{"capacity":{"nvidia.com/gpu":"8"},"allocatable":{"nvidia.com/gpu":"7"},)"
                                    R"("conditions":[{"type":"Ready","status":"False","reason":"KubeletNotReady"},{"type":"Ready","status":"True"}]}})")
              << parse(R"({"metadata":{"name":"gpu-2","labels":{"starforge/gpu-series":4}},"spec":{"unschedulable":"yes","taints":{}},)"
                          R"("status":{"capacity":{"nvidia.com/gpu":8},"conditions":"Ready"}})")
              << parse(R"({"metadata":[],"spec":null})");
        for (const QJsonObject &object : std::as_const(nodes)) {
            for (const QString &label : {defaultSeriesLabel(), QStringLiteral("labelsKey"), QStringLiteral("n")}) {
                const Kube::Node expected = Kube::Node::fromJson(object, label);
                const auto read = Kube::Node::fromJsonText(QJsonDocument(object).toJson(), label);
                QVERIFY(read);
                const QString what = QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact).left(200));
                QVERIFY2(read->name == expected.name && read->uid == expected.uid && read->labels == expected.labels, qPrintable(what));
                QVERIFY2(read->series == expected.series, qPrintable(what));
                QVERIFY2(read->gpuCapacity == expected.gpuCapacity && read->gpuAllocatable == expected.gpuAllocatable, qPrintable(what));
                QVERIFY2(read->unschedulable == expected.unschedulable && read->ready == expected.ready && read->readyReason == expected.readyReason,
                         qPrintable(what));
                QCOMPARE(read->taints.size(), expected.taints.size());
                for (qsizetype i = 0; i < read->taints.size(); ++i) {
                    QCOMPARE(read->taints.at(i).key, expected.taints.at(i).key);
                    QCOMPARE(read->taints.at(i).value, expected.taints.at(i).value);
                    QCOMPARE(read->taints.at(i).effect, expected.taints.at(i).effect);
                }
            }
        }
        const Kube::Node gpu = *Kube::Node::fromJsonText(QJsonDocument(nodes.at(2)).toJson(), defaultSeriesLabel());
        QCOMPARE(gpu.series, QStringLiteral("h200"));
        QCOMPARE(gpu.gpuAllocatable, 7);
        QVERIFY(gpu.ready);   // the last Ready condition counts
        QCOMPARE(gpu.taints.size(), 3);
    }

    void fitsNow()
    {
        const CapacityModel model = CapacityModel::build(
            {node(QStringLiteral("h200-00"), QStringLiteral("h200"), 8), node(QStringLiteral("h200-01"), QStringLiteral("h200"), 8),
             node(QStringLiteral("h200-02"), QStringLiteral("h200"), 8)},
            {pod(QStringLiteral("small"), QStringLiteral("h200-01"), 2)});
        const FitVerdict v = model.fit(FitRequest{{PoolRequest{QStringLiteral("workers"), QStringLiteral("h200"), 2, 4}}});
        QCOMPARE(v.fit, Fit::FitsNow);
        QCOMPARE(v.pools.size(), 1);
        // Best fit: the node with 6 free before an idle one; ties by name.
        QCOMPARE(v.pools.first().placement, (QStringList{QStringLiteral("h200-01"), QStringLiteral("h200-00")}));
        QCOMPARE(v.pools.first().sentence, QStringLiteral("pool \"workers\" fits now: needs 2 nodes with 4 free GPUs of h200; 3 have 4 free now; largest free node has 8"));
        QCOMPARE(v.sentence, v.pools.first().sentence);
        QCOMPARE(fitName(v.fit), QStringLiteral("FitsNow"));
        QCOMPARE(model.fit(FitRequest{}).fit, Fit::FitsNow);
    }

    void fitsWhenFree()
    {
        QList<Kube::Node> nodes;
        QList<Kube::Pod> pods;
        for (int i = 0; i < 5; ++i) {
            nodes << node(QStringLiteral("h200-%1").arg(i), QStringLiteral("h200"), 8);
        }
        pods << pod(QStringLiteral("a"), QStringLiteral("h200-2"), 1) << pod(QStringLiteral("b"), QStringLiteral("h200-3"), 8) << pod(QStringLiteral("c"), QStringLiteral("h200-4"), 4);
        const CapacityModel model = CapacityModel::build(nodes, pods);
        const FitVerdict v = model.fit(FitRequest{{PoolRequest{QStringLiteral("workers"), QStringLiteral("h200"), 4, 8}}});
        QCOMPARE(v.fit, Fit::FitsWhenFree);
        const PoolVerdict &p = v.pools.first();
        QCOMPARE(p.freeNow, 2);
        QCOMPARE(p.busy, 3);
        QVERIFY(p.placement.isEmpty());
        QCOMPARE(p.sentence, QStringLiteral("pool \"workers\" waits for busy nodes: needs 4 nodes with 8 free GPUs of h200; 2 have 8 free now, 3 more are busy; "
                                            "largest free node has 8"));
    }

    void neverFits()
    {
        Kube::Node cordoned = node(QStringLiteral("h200-02"), QStringLiteral("h200"), 8);
        cordoned.unschedulable = true;
        const CapacityModel model = CapacityModel::build(
            {node(QStringLiteral("h200-00"), QStringLiteral("h200"), 8), node(QStringLiteral("h200-01"), QStringLiteral("h200"), 8), cordoned,
             node(QStringLiteral("a100-00"), QStringLiteral("a100"), 4)},
            {pod(QStringLiteral("x"), QStringLiteral("h200-00"), 8)});

        const FitVerdict unknown = model.fit(FitRequest{{PoolRequest{QStringLiteral("main"), QStringLiteral("b300"), 1, 8}}});
        QCOMPARE(unknown.fit, Fit::NeverFits);
        QCOMPARE(unknown.sentence, QStringLiteral("pool \"main\" can never fit: needs 1 node with 8 free GPUs of b300, and no node has the series \"b300\" "
                                                  "(known series: a100, h200)"));

        const FitVerdict tooBig = model.fit(FitRequest{{PoolRequest{QStringLiteral("main"), QStringLiteral("a100"), 1, 8}}});
        QCOMPARE(tooBig.fit, Fit::NeverFits);
        QCOMPARE(tooBig.sentence, QStringLiteral("pool \"main\" can never fit: needs 1 node with 8 free GPUs of a100, and the largest a100 node has 4 GPUs"));

        // Three h200 nodes exist but one is cordoned: two are schedulable, three asked.
        const FitVerdict tooFew = model.fit(FitRequest{{PoolRequest{QStringLiteral("main"), QStringLiteral("h200"), 3, 8}}});
        QCOMPARE(tooFew.fit, Fit::NeverFits);
        QCOMPARE(tooFew.pools.first().blocked, 1);
        QCOMPARE(tooFew.sentence, QStringLiteral("pool \"main\" can never fit: needs 3 nodes with 8 free GPUs of h200; 1 has 8 free now, 1 more is busy, "
                                                 "1 more is cordoned, not ready or tainted; the series has only 2 schedulable nodes big enough; largest free node has 8"));
    }

    // A device plugin may publish absurd counts (a fake plugin, a bug): two nodes near INT_MAX
    // GPUs, and pods asking for as many, must add up without wrapping to a negative number.
    void hugeGpuCountsDoNotWrap()
    {
        const int huge = std::numeric_limits<int>::max() - 1;
        const CapacityModel model = CapacityModel::build(
            {node(QStringLiteral("big-00"), QStringLiteral("h200"), huge), node(QStringLiteral("big-01"), QStringLiteral("h200"), huge)},
            {pod(QStringLiteral("a"), QStringLiteral("big-00"), huge), pod(QStringLiteral("b"), QStringLiteral("big-00"), huge),
             pod(QStringLiteral("c"), QStringLiteral("gone-node"), huge), pod(QStringLiteral("d"), QStringLiteral("gone-node"), huge)});
        const SeriesSummary s = model.series(QStringLiteral("h200"));
        QCOMPARE(s.capacity, 2 * qint64(huge));
        QCOMPARE(s.used, 2 * qint64(huge));
        QCOMPARE(s.free, qint64(huge));   // big-01 is free; the overcommitted big-00 counts 0, not less
        QCOMPARE(s.blocked, qint64(0));
        QCOMPARE(s.largestFree, huge);
        QCOMPARE(s.largestAllocatable, huge);
        const NodeEntry *big = model.node(QStringLiteral("big-00"));
        QVERIFY(big);
        QCOMPARE(big->used, 2 * qint64(huge));
        QCOMPARE(big->free(), 0);
        QCOMPARE(model.usedOnUnknownNodes(), 2 * qint64(huge));

        // Updates in place keep the exact sums: the second pod goes, then a third node comes.
        CapacityModel updated = model;
        updated.removePod(QStringLiteral("ml"), QStringLiteral("b"));
        QCOMPARE(updated.series(QStringLiteral("h200")).used, qint64(huge));
        updated.setNode(node(QStringLiteral("big-02"), QStringLiteral("h200"), huge));
        QCOMPARE(updated.series(QStringLiteral("h200")).capacity, 3 * qint64(huge));
        QCOMPARE(updated.series(QStringLiteral("h200")).free, 2 * qint64(huge));
    }

    void poolsShareNoNode()
    {
        QList<Kube::Node> nodes;
        for (int i = 0; i < 4; ++i) nodes << node(QStringLiteral("h200-%1").arg(i), QStringLiteral("h200"), 8);
        nodes << node(QStringLiteral("h100-0"), QStringLiteral("h100"), 8);
        const CapacityModel model = CapacityModel::build(nodes, {pod(QStringLiteral("busy"), QStringLiteral("h200-3"), 8), pod(QStringLiteral("busy2"), QStringLiteral("h200-2"), 2)});

        // Two pools of one series: the first placed takes two idle nodes, the second finds one
        // node with 8 free and one busy: it waits.
        const FitVerdict v = model.fit(FitRequest{{PoolRequest{QStringLiteral("policy"), QStringLiteral("h200"), 2, 8},
                                                   PoolRequest{QStringLiteral("generation"), QStringLiteral("h200"), 2, 8},
                                                   PoolRequest{QStringLiteral("reward"), QStringLiteral("h100"), 1, 8}}});
        QCOMPARE(v.pools.at(0).fit, Fit::FitsNow);
        QCOMPARE(v.pools.at(0).placement, (QStringList{QStringLiteral("h200-0"), QStringLiteral("h200-1")}));
        QCOMPARE(v.pools.at(1).fit, Fit::FitsWhenFree);
        QCOMPARE(v.pools.at(1).freeNow, 0);
        QCOMPARE(v.pools.at(1).busy, 2);
        QCOMPARE(v.pools.at(2).fit, Fit::FitsNow);
        QCOMPARE(v.fit, Fit::FitsWhenFree);
        QVERIFY2(v.sentence.startsWith(QStringLiteral("pool \"generation\" waits for busy nodes")), qPrintable(v.sentence));
        QVERIFY2(v.pools.at(1).sentence.contains(QStringLiteral("2 nodes taken by the job's other pools")), qPrintable(v.pools.at(1).sentence));

        // Three pools of two nodes on four h200 nodes can never all be placed.
        const FitVerdict over = model.fit(FitRequest{{PoolRequest{QStringLiteral("a"), QStringLiteral("h200"), 2, 8},
                                                      PoolRequest{QStringLiteral("b"), QStringLiteral("h200"), 2, 8},
                                                      PoolRequest{QStringLiteral("c"), QStringLiteral("h200"), 1, 8}}});
        QCOMPARE(over.pools.at(2).fit, Fit::NeverFits);
        QCOMPARE(over.fit, Fit::NeverFits);

        // Bigger pods are placed first, so a small pool does not take the only big node.
        const CapacityModel mixed = CapacityModel::build(
            {node(QStringLiteral("m-big"), QStringLiteral("h200"), 8), node(QStringLiteral("m-small"), QStringLiteral("h200"), 8)},
            {pod(QStringLiteral("half"), QStringLiteral("m-small"), 4)});
        const FitVerdict ordered = mixed.fit(FitRequest{{PoolRequest{QStringLiteral("small"), QStringLiteral("h200"), 1, 2},
                                                         PoolRequest{QStringLiteral("big"), QStringLiteral("h200"), 1, 8}}});
        QCOMPARE(ordered.fit, Fit::FitsNow);
        QCOMPARE(ordered.pools.at(0).placement, QStringList{QStringLiteral("m-small")});
        QCOMPARE(ordered.pools.at(1).placement, QStringList{QStringLiteral("m-big")});
    }

    // The tracker on real informers against the sandbox: its numbers are the pods it runs.
    void trackerFollowsTheSandbox()
    {
        QTemporaryDir dir;
        Sandbox::SandboxOptions options;
        options.connectionFile = dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("h200:2x8,h100:1x8,cpu:1x0");
        options.presentImages = {QStringLiteral("registry.example/present:1")};
        std::unique_ptr<Sandbox::Sandbox> sandbox;
        std::unique_ptr<Testing::SandboxHttp> http;
        QString error;
        QVERIFY2(Testing::startSandbox(sandbox, http, options, &error), qPrintable(error));
        Kube::ClientConfig config;
        config.server = sandbox->apiServerUrl();
        config.token = sandbox->token();
        config.tls.caCertificates = QSslCertificate::fromData(sandbox->caCertificatePem(), QSsl::Pem);
        config.ns = QStringLiteral("starforge");
        Kube::KubeClient client(config);
        Kube::Informer nodes(&client, Kube::ResourceKind::nodes());
        Kube::Informer pods(&client, Kube::ResourceKind::pods());
        CapacityTracker tracker;
        tracker.attach(&nodes, &pods);
        QSignalSpy synced(&tracker, &CapacityTracker::synced);
        nodes.start();
        pods.start();
        QTRY_VERIFY_WITH_TIMEOUT(tracker.isSynced(), 10000);
        QCOMPARE(tracker.model().seriesNames(), (QStringList{QStringLiteral("h100"), QStringLiteral("h200")}));
        QCOMPARE(tracker.model().series(QStringLiteral("h200")).free, 16);

        const auto makePod = [&](const QString &name, const QString &series, int gpus, const QString &script) {
            const QJsonObject body{
                {QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("Pod")},
                {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}}},
                {QStringLiteral("spec"), QJsonObject{{QStringLiteral("restartPolicy"), QStringLiteral("Never")},
                                                     {QStringLiteral("nodeSelector"), QJsonObject{{QStringLiteral("starforge/gpu-series"), series}}},
                                                     {QStringLiteral("containers"), QJsonArray{QJsonObject{
                                                         {QStringLiteral("name"), QStringLiteral("main")}, {QStringLiteral("image"), options.presentImages.first()},
                                                         {QStringLiteral("command"), QJsonArray{QStringLiteral("sh"), QStringLiteral("-c"), script}},
                                                         {QStringLiteral("resources"), QJsonObject{{QStringLiteral("limits"), QJsonObject{{QStringLiteral("nvidia.com/gpu"), QString::number(gpus)}}}}}}}}}}};
            QCOMPARE(http->send("POST", QStringLiteral("/api/v1/namespaces/starforge/pods"), QJsonDocument(body).toJson()).status, 201);
        };
        makePod(QStringLiteral("four"), QStringLiteral("h200"), 4, QStringLiteral("sleep 30"));
        makePod(QStringLiteral("eight"), QStringLiteral("h100"), 8, QStringLiteral("sleep 30"));
        makePod(QStringLiteral("brief"), QStringLiteral("h200"), 2, QStringLiteral("true"));
        // The short pod ends and gives its GPUs back; the others hold theirs.
        QTRY_COMPARE_WITH_TIMEOUT(http->get(QStringLiteral("/api/v1/namespaces/starforge/pods/brief")).json()
                                      .value(QStringLiteral("status")).toObject().value(QStringLiteral("phase")).toString(), QStringLiteral("Succeeded"), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(tracker.model().series(QStringLiteral("h200")).used, 4, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(tracker.model().series(QStringLiteral("h100")).used, 8, 10000);

        // The server's own account, per node, as kubectl describe node sums it.
        const QJsonArray listed = http->get(QStringLiteral("/api/v1/pods")).json().value(QStringLiteral("items")).toArray();
        QHash<QString, int> perNode;
        for (const QJsonValue &v : listed) {
            if (Kube::holdsNodeResources(v.toObject())) {
                perNode[v.toObject().value(QStringLiteral("spec")).toObject().value(QStringLiteral("nodeName")).toString()] +=
                    int(Kube::podRequests(v.toObject()).value(QStringLiteral("nvidia.com/gpu")) / 1000);
            }
        }
        QVERIFY(!perNode.isEmpty());
        for (const QString &name : tracker.model().nodesOf(QStringLiteral("h200")) + tracker.model().nodesOf(QStringLiteral("h100"))) {
            QCOMPARE(tracker.model().node(name)->used, perNode.value(name));
        }
        QCOMPARE(tracker.model().series(QStringLiteral("h100")).free, 0);
        QCOMPARE(tracker.model().fit(FitRequest{{PoolRequest{QStringLiteral("p"), QStringLiteral("h200"), 2, 8}}}).fit, Fit::FitsWhenFree);

        // Cordon an h200 node: its free GPUs become blocked.
        const QString target = tracker.model().nodesOf(QStringLiteral("h200")).first();
        const int idle = tracker.model().node(target)->free();
        QCOMPARE(http->send("PATCH", QStringLiteral("/api/v1/nodes/") + target, R"({"spec":{"unschedulable":true}})", "application/merge-patch+json").status, 200);
        QTRY_COMPARE_WITH_TIMEOUT(tracker.model().node(target)->block, Block::Cordoned, 10000);
        QCOMPARE(tracker.model().series(QStringLiteral("h200")).blocked, idle);

        // A pod asking more than any h200 node has waits: the series' pending demand.
        QSignalSpy demand(&tracker, &CapacityTracker::demandChanged);
        makePod(QStringLiteral("waiting"), QStringLiteral("h200"), 16, QStringLiteral("sleep 30"));
        QTRY_COMPARE_WITH_TIMEOUT(tracker.model().series(QStringLiteral("h200")).pendingGpus, 16, 10000);
        QCOMPARE(tracker.model().series(QStringLiteral("h200")).pendingPods, 1);
        QCOMPARE(demand.first().first().toString(), QStringLiteral("h200"));
        QCOMPARE(http->send("DELETE", QStringLiteral("/api/v1/namespaces/starforge/pods/waiting")).status, 200);
        QTRY_COMPARE_WITH_TIMEOUT(tracker.model().series(QStringLiteral("h200")).pendingGpus, 0, 10000);
        // The pods the tracker counts on a node are the ones bound to it.
        const QString busy = tracker.model().nodesOf(QStringLiteral("h100")).first();
        QCOMPARE(tracker.model().podsOn(busy).size(), 1);
        QCOMPARE(tracker.model().podsOn(busy).first().name, QStringLiteral("eight"));

        // Deleting the pods frees their GPUs.
        QCOMPARE(http->send("DELETE", QStringLiteral("/api/v1/namespaces/starforge/pods/four")).status, 200);
        QCOMPARE(http->send("DELETE", QStringLiteral("/api/v1/namespaces/starforge/pods/eight")).status, 200);
        QTRY_COMPARE_WITH_TIMEOUT(tracker.model().series(QStringLiteral("h100")).free, 8, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(tracker.model().series(QStringLiteral("h200")).used, 0, 10000);
        QCOMPARE(synced.size(), 1);
    }
};

QTEST_GUILESS_MAIN(TestCapacity)
#include "tst_capacity.moc"
