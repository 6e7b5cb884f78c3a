// Typed views over Kubernetes JSON: the upstream round-trip fixtures and real captures (both
// Event shapes, a Node with GPUs added), GPU requests by kubectl's rules, and garbage that
// must read as empty rather than crash.

#include "core/kube/resources.h"
#include "support/testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Kube;
using namespace Starforge::Testing;

namespace {
QJsonObject fixture(const char *name)
{
    return QJsonDocument::fromJson(readAll(dataPath(QStringLiteral("kubernetes/") + QLatin1String(name)))).object();
}
} // namespace

class TestKubeResources : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void eventShapes()
    {
        // Legacy recorder (a real kubelet event): count and lastTimestamp.
        const Event pulled = Event::fromJson(fixture("k9s-real.event-pulled.json"));
        QCOMPARE(pulled.reason, QStringLiteral("Pulled"));
        QCOMPARE(pulled.type, QStringLiteral("Normal"));
        QCOMPARE(pulled.message, QStringLiteral("Successfully pulled image \"blang/busybox-bash\""));
        QCOMPARE(pulled.count, 1);
        QCOMPARE(pulled.lastSeen, QDateTime(QDate(2019, 8, 30), QTime(20, 43, 5), Qt::UTC));
        QVERIFY(!pulled.regardingName.isEmpty());
        QCOMPARE(pulled.reportingComponent, QStringLiteral("kubelet")); // from source.component

        // core/v1 with every field: series wins for last seen and count.
        const Event core = Event::fromJson(fixture("api-roundtrip.core.v1.Event.json"));
        QCOMPARE(core.lastSeen, QDateTime(QDate(2002, 1, 1), QTime(1, 1, 1, 0), Qt::UTC));
        QCOMPARE(core.count, 1);
        QCOMPARE(core.reportingComponent, QStringLiteral("reportingComponentValue"));

        // events.k8s.io/v1: regarding and note.
        const Event v1 = Event::fromJson(fixture("api-roundtrip.events.k8s.io.v1.Event.json"));
        QCOMPARE(v1.message, QStringLiteral("noteValue"));
        QCOMPARE(v1.reportingComponent, QStringLiteral("reportingControllerValue"));
        QVERIFY(!v1.regardingName.isEmpty());
        QVERIFY(v1.lastSeen.isValid());

        // New recorder without series: eventTime; no count means 1.
        const Event fresh = Event::fromJson(QJsonObject{{QStringLiteral("eventTime"), QStringLiteral("2026-12-03T10:00:00.123456Z")},
                                                        {QStringLiteral("involvedObject"), QJsonObject{{QStringLiteral("name"), QStringLiteral("p")}}}});
        QCOMPARE(fresh.lastSeen, QDateTime(QDate(2026, 12, 3), QTime(10, 0, 0, 123), Qt::UTC));
        QCOMPARE(fresh.count, 1);
    }

    void nodeWithGpus()
    {
        QJsonObject node = fixture("k9s-real.node-minikube.json");
        QJsonObject status = node.value(QStringLiteral("status")).toObject();
        for (const char *key : {"capacity", "allocatable"}) {
            QJsonObject r = status.value(QLatin1String(key)).toObject();
            r.insert(QStringLiteral("nvidia.com/gpu"), QStringLiteral("8"));
            status.insert(QLatin1String(key), r);
        }
        node.insert(QStringLiteral("status"), status);
        QJsonObject meta = node.value(QStringLiteral("metadata")).toObject();
        QJsonObject labels = meta.value(QStringLiteral("labels")).toObject();
        labels.insert(QStringLiteral("starforge/gpu-series"), QStringLiteral("h200"));
        meta.insert(QStringLiteral("labels"), labels);
        node.insert(QStringLiteral("metadata"), meta);
        const Node n = Node::fromJson(node, QStringLiteral("starforge/gpu-series"));
        QCOMPARE(n.name, QStringLiteral("minikube"));
        QCOMPARE(n.series, QStringLiteral("h200"));
        QCOMPARE(n.gpuCapacity, 8);
        QCOMPARE(n.gpuAllocatable, 8);
        QVERIFY(n.ready);
        QCOMPARE(n.readyReason, QStringLiteral("KubeletReady"));
        QVERIFY(!n.unschedulable);
        const Node roundtrip = Node::fromJson(fixture("api-roundtrip.core.v1.Node.json"), QStringLiteral("x"));
        QVERIFY(roundtrip.unschedulable);
        QVERIFY(!roundtrip.taints.isEmpty());
    }

    void podGpuRequestsAndStates()
    {
        const QJsonObject pod = QJsonDocument::fromJson(R"({"metadata":{"name":"w","namespace":"ns"},
            "spec":{"nodeName":"h200-00","initContainers":[{"name":"init","resources":{"limits":{"nvidia.com/gpu":"8"}}}],
                    "containers":[{"name":"a","resources":{"limits":{"nvidia.com/gpu":"2"}}},{"name":"b","resources":{"requests":{"nvidia.com/gpu":"1"}}}]},
            "status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/3 nodes are available"}],
                      "containerStatuses":[{"name":"a","restartCount":2,"state":{"waiting":{"reason":"ImagePullBackOff","message":"Back-off"}}}]}})").object();
        const Pod p = Pod::fromJson(pod);
        QCOMPARE(p.gpuRequests, 8); // the init container's 8 exceeds the containers' 3
        QCOMPARE(p.condition(QStringLiteral("PodScheduled"))->reason, QStringLiteral("Unschedulable"));
        QVERIFY(!p.condition(QStringLiteral("Ready")));
        QCOMPARE(p.containers.first().state, QStringLiteral("waiting"));
        QCOMPARE(p.containers.first().reason, QStringLiteral("ImagePullBackOff"));
        QCOMPARE(p.containers.first().restartCount, 2);
    }

    void garbageReadsAsEmpty()
    {
        const QJsonObject garbage = QJsonDocument::fromJson(R"({"metadata":7,"spec":[1,2],"status":{"conditions":"x","containerStatuses":[null,3,{"state":5}],
            "capacity":{"nvidia.com/gpu":{"a":1}}},"series":"s","count":"many","regarding":null})").object();
        const Pod p = Pod::fromJson(garbage);
        QVERIFY(p.name.isEmpty());
        QCOMPARE(p.gpuRequests, 0);
        QCOMPARE(p.containers.size(), 3);
        const Node n = Node::fromJson(garbage, QStringLiteral("x"));
        QCOMPARE(n.gpuCapacity, 0);
        const Event e = Event::fromJson(garbage);
        QCOMPARE(e.count, 1);
        QVERIFY(!e.lastSeen.isValid());
    }
};

QTEST_APPLESS_MAIN(TestKubeResources)
#include "tst_kuberesources.moc"
