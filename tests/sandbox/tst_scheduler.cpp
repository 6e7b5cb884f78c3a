// The sandbox scheduler: upstream FitError texts, conditions and events, binding, and pods
// scheduled once room frees up.

#include "sandbox/cluster/eventrecorder.h"
#include "sandbox/cluster/fleet.h"
#include "sandbox/cluster/scheduler.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

#include <QJsonArray>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Sandbox;

namespace {

const ResourceType &type(const char *plural)
{
    return *ResourceTypes::find(QString(), QStringLiteral("v1"), QString::fromLatin1(plural));
}

QJsonObject gpuPod(const QString &name, int gpus, const QJsonObject &nodeSelector = {}, const QJsonArray &tolerations = {})
{
    QJsonObject spec{{QStringLiteral("containers"),
                      QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("main")}, {QStringLiteral("image"), QStringLiteral("x")},
                                             {QStringLiteral("resources"),
                                              QJsonObject{{QStringLiteral("limits"), QJsonObject{{QStringLiteral("nvidia.com/gpu"), QString::number(gpus)}}}}}}}}};
    if (!nodeSelector.isEmpty()) {
        spec.insert(QStringLiteral("nodeSelector"), nodeSelector);
    }
    if (!tolerations.isEmpty()) {
        spec.insert(QStringLiteral("tolerations"), tolerations);
    }
    return QJsonObject{{QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("Pod")},
                       {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("namespace"), QStringLiteral("ns")}}},
                       {QStringLiteral("spec"), spec}};
}

QJsonObject condition(const ObjectPtr &pod, const QString &conditionType)
{
    for (const QJsonValue &c : pod->object.value(QStringLiteral("status")).toObject().value(QStringLiteral("conditions")).toArray()) {
        if (c.toObject().value(QStringLiteral("type")).toString() == conditionType) {
            return c.toObject();
        }
    }
    return {};
}

} // namespace

class TestScheduler : public QObject
{
    Q_OBJECT

    std::unique_ptr<ObjectStore> m_store;
    std::unique_ptr<EventRecorder> m_events;
    std::unique_ptr<Scheduler> m_scheduler;

    ObjectPtr pod(const QString &name) { return m_store->get(QStringLiteral("pods"), QStringLiteral("ns"), name); }
    QString nodeOf(const QString &name)
    {
        return pod(name)->object.value(QStringLiteral("spec")).toObject().value(QStringLiteral("nodeName")).toString();
    }
    void create(const QJsonObject &object) { QVERIFY(std::holds_alternative<ObjectPtr>(m_store->create(type("pods"), object))); }
    QList<QJsonObject> events(const QString &reason)
    {
        QList<QJsonObject> out;
        for (const ObjectPtr &e : m_store->list(QStringLiteral("events"))) {
            if (e->object.value(QStringLiteral("reason")).toString() == reason) {
                out << e->object;
            }
        }
        return out;
    }

private Q_SLOTS:
    void init()
    {
        m_store = std::make_unique<ObjectStore>();
        createFleet(*m_store, *FleetSpec::parse(QStringLiteral("h200:2x8,cpu:1x0")), QStringLiteral("starforge/gpu-series"), QStringLiteral("bg"));
        m_events = std::make_unique<EventRecorder>(m_store.get());
        m_scheduler = std::make_unique<Scheduler>(m_store.get(), m_events.get());
    }
    void cleanup()
    {
        m_scheduler.reset();
        m_events.reset();
        m_store.reset();
    }

    void bindsAndRecordsScheduled()
    {
        create(gpuPod(QStringLiteral("a"), 8));
        QTRY_VERIFY(!nodeOf(QStringLiteral("a")).isEmpty());
        QVERIFY(nodeOf(QStringLiteral("a")).startsWith(QStringLiteral("h200-")));
        QCOMPARE(condition(pod(QStringLiteral("a")), QStringLiteral("PodScheduled")).value(QStringLiteral("status")).toString(), QStringLiteral("True"));
        const auto scheduled = events(QStringLiteral("Scheduled"));
        QCOMPARE(scheduled.size(), 1);
        QCOMPARE(scheduled.first().value(QStringLiteral("message")).toString(),
                 QStringLiteral("Successfully assigned ns/a to %1").arg(nodeOf(QStringLiteral("a"))));
        QCOMPARE(scheduled.first().value(QStringLiteral("reportingComponent")).toString(), QStringLiteral("default-scheduler"));
        QCOMPARE(scheduled.first().value(QStringLiteral("action")).toString(), QStringLiteral("Binding"));
        // The second 8-GPU pod goes to the other GPU node (spreading), the third fits nowhere.
        create(gpuPod(QStringLiteral("b"), 8));
        QTRY_VERIFY(!nodeOf(QStringLiteral("b")).isEmpty());
        QVERIFY(nodeOf(QStringLiteral("b")) != nodeOf(QStringLiteral("a")));
        create(gpuPod(QStringLiteral("c"), 8));
        QTRY_VERIFY(!condition(pod(QStringLiteral("c")), QStringLiteral("PodScheduled")).isEmpty());
        QCOMPARE(condition(pod(QStringLiteral("c")), QStringLiteral("PodScheduled")).value(QStringLiteral("message")).toString(),
                 QStringLiteral("0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.."));
        // Room frees up: c is scheduled where a was.
        const QString freed = nodeOf(QStringLiteral("a"));
        (void)m_store->remove(type("pods"), QStringLiteral("ns"), QStringLiteral("a"));
        QTRY_COMPARE(nodeOf(QStringLiteral("c")), freed);
    }

    void fitErrorTexts_data()
    {
        QTest::addColumn<QJsonObject>("pod");
        QTest::addColumn<QString>("message");
        QTest::newRow("more GPUs than any node")
            << gpuPod(QStringLiteral("p"), 16)
            << "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod..";
        QTest::newRow("no node of the series")
            << gpuPod(QStringLiteral("p"), 1, {{QStringLiteral("starforge/gpu-series"), QStringLiteral("h100")}})
            << "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..";
        QTest::newRow("series matches but too big")
            << gpuPod(QStringLiteral("p"), 16, {{QStringLiteral("starforge/gpu-series"), QStringLiteral("h200")}})
            << "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..";
    }

    void fitErrorTexts()
    {
        QFETCH(QJsonObject, pod);
        QFETCH(QString, message);
        QCOMPARE(m_scheduler->fitError(pod), message);
        create(pod);
        QTRY_VERIFY(!events(QStringLiteral("FailedScheduling")).isEmpty());
        const QJsonObject event = events(QStringLiteral("FailedScheduling")).first();
        QCOMPARE(event.value(QStringLiteral("message")).toString(), message);
        QCOMPARE(event.value(QStringLiteral("type")).toString(), QStringLiteral("Warning"));
        QCOMPARE(event.value(QStringLiteral("action")).toString(), QStringLiteral("Scheduling"));
        QCOMPARE(event.value(QStringLiteral("involvedObject")).toObject().value(QStringLiteral("name")).toString(), QStringLiteral("p"));
        const QJsonObject c = condition(this->pod(QStringLiteral("p")), QStringLiteral("PodScheduled"));
        QCOMPARE(c.value(QStringLiteral("status")).toString(), QStringLiteral("False"));
        QCOMPARE(c.value(QStringLiteral("reason")).toString(), QStringLiteral("Unschedulable"));
        QCOMPARE(this->pod(QStringLiteral("p"))->object.value(QStringLiteral("status")).toObject().value(QStringLiteral("phase")).toString(),
                 QStringLiteral("Pending"));
    }

    void cordonsAndTaints()
    {
        for (const char *node : {"h200-00", "h200-01", "cpu-00"}) {
            (void)m_store->modify(type("nodes"), QString(), QString::fromLatin1(node), [&](QJsonObject &n) {
                QJsonObject spec = n.value(QStringLiteral("spec")).toObject();
                if (QByteArray(node) == "cpu-00") {
                    spec.insert(QStringLiteral("unschedulable"), true);
                } else {
                    spec.insert(QStringLiteral("taints"), QJsonArray{QJsonObject{{QStringLiteral("key"), QStringLiteral("gpu")},
                                                                                 {QStringLiteral("value"), QString()},
                                                                                 {QStringLiteral("effect"), QStringLiteral("NoSchedule")}}});
                }
                n.insert(QStringLiteral("spec"), spec);
                return true;
            });
        }
        QCOMPARE(m_scheduler->fitError(gpuPod(QStringLiteral("p"), 1)),
                 QStringLiteral("0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) had untolerated taint {gpu: }. "
                                "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.."));
        const QJsonArray tolerate{QJsonObject{{QStringLiteral("key"), QStringLiteral("gpu")}, {QStringLiteral("operator"), QStringLiteral("Exists")},
                                              {QStringLiteral("effect"), QStringLiteral("NoSchedule")}}};
        QCOMPARE(m_scheduler->fitError(gpuPod(QStringLiteral("p"), 1, {}, tolerate)), QString());
    }

    void repeatedFailuresBecomeASeries()
    {
        create(gpuPod(QStringLiteral("big"), 64));
        QTRY_COMPARE(events(QStringLiteral("FailedScheduling")).size(), 1);
        m_scheduler->schedulePending();
        m_scheduler->schedulePending();
        const auto failed = events(QStringLiteral("FailedScheduling"));
        QCOMPARE(failed.size(), 1);
        QCOMPARE(failed.first().value(QStringLiteral("series")).toObject().value(QStringLiteral("count")).toInt(), 3);
    }
};

QTEST_GUILESS_MAIN(TestScheduler)
#include "tst_scheduler.moc"
