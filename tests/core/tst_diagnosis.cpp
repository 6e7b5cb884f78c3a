// The diagnosis engine on fixtures written from the exact scheduler and kubelet texts of
// docs/kubernetes-facts.md, "Scheduler messages" and "Kubelet messages" (tests/data/diagnosis/*.json,
// each saying what it expects): every cause, the priority between causes, stale events, pods that
// are gone, both event shapes, a series no node has beside tainted nodes; the FailedScheduling
// parser on the real clusters' regression strings quoted there; the JSON
// that `diagnose --json` prints.

#include "core/cluster/diagnosis.h"
#include "support/testutil.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Cluster;

namespace {

QString dataDir()
{
    return QStringLiteral(SF_TEST_DATA_DIR "/diagnosis");
}

QJsonObject readFixture(const QString &name)
{
    QFile f(dataDir() + u'/' + name);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

struct Loaded
{
    CapacityModel capacity;
    DiagnosisInput input;
};

// Builds the engine's input from a fixture the way the app does from its informers.
void load(const QJsonObject &fx, Loaded &out)
{
    DiagnosisInput &in = out.input;
    if (fx.contains(QStringLiteral("rayJob"))) in.rayJob = Kube::RayJob::fromJson(fx.value(QStringLiteral("rayJob")).toObject());
    for (const QJsonValue &p : fx.value(QStringLiteral("pods")).toArray()) in.pods << PodInfo::fromJson(p.toObject());
    for (const QJsonValue &e : fx.value(QStringLiteral("events")).toArray()) in.events << Kube::Event::fromJson(e.toObject());
    in.submitterLog = fx.value(QStringLiteral("submitterLog")).toString();
    if (fx.contains(QStringLiteral("nodes"))) {
        QList<Kube::Node> nodes;
        for (const QJsonValue &n : fx.value(QStringLiteral("nodes")).toArray()) nodes << Kube::Node::fromJson(n.toObject(), in.seriesLabel);
        QList<Kube::Pod> pods;
        for (const QJsonValue &p : fx.value(QStringLiteral("capacityPods")).toArray()) pods << Kube::Pod::fromJson(p.toObject());
        for (const PodInfo &p : std::as_const(in.pods)) pods << p.view;
        out.capacity = CapacityModel::build(nodes, pods);
        in.capacity = &out.capacity;
    }
}

} // namespace

class TestDiagnosis : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The verdicts' English, as the apps show it ("2 nodes", not "2 node(s)").
    void initTestCase() { QVERIFY(Testing::installEnglishPlurals()); }

    void fixtures_data()
    {
        QTest::addColumn<QString>("file");
        const QStringList files = QDir(dataDir()).entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
        QVERIFY(files.size() >= 20);
        for (const QString &f : files) QTest::newRow(qPrintable(f)) << f;
    }

    void fixtures()
    {
        QFETCH(QString, file);
        const QJsonObject fx = readFixture(file);
        QVERIFY(!fx.isEmpty());
        Loaded loaded;
        load(fx, loaded);
        const Diagnosis d = diagnose(loaded.input);
        qInfo().noquote() << d.causeId() << d.message;
        const QJsonObject expect = fx.value(QStringLiteral("expect")).toObject();
        QCOMPARE(d.causeId(), expect.value(QStringLiteral("cause")).toString());
        for (const QJsonValue &part : expect.value(QStringLiteral("message")).toArray()) {
            QVERIFY2(d.message.contains(part.toString()), qPrintable(QStringLiteral("%1\n  lacks: %2").arg(d.message, part.toString())));
        }
        QStringList reasons;
        for (const Kube::Event &e : d.evidence) reasons << e.reason;
        QStringList wanted;
        for (const QJsonValue &r : expect.value(QStringLiteral("evidence")).toArray()) wanted << r.toString();
        QCOMPARE(reasons, wanted);
    }

    // Every cause of the fixed list has a fixture that produces it.
    void everyCauseHasAFixture()
    {
        QSet<QString> seen;
        for (const QString &f : QDir(dataDir()).entryList({QStringLiteral("*.json")}, QDir::Files)) {
            seen.insert(readFixture(f).value(QStringLiteral("expect")).toObject().value(QStringLiteral("cause")).toString());
        }
        for (const Cause c : allCauses()) {
            QVERIFY2(seen.contains(causeId(c)), qPrintable(causeId(c)));
        }
    }

    // A series no node has is NoNodeMatchesSelector even when tainted nodes tie with it (kind's
    // control-plane node); it takes the capacity model and the pod's selector to tell, so
    // without either the histogram decides, as before.
    void seriesNobodyHasNeedsTheModel()
    {
        Loaded loaded;
        load(readFixture(QStringLiteral("series-nobody-has-beside-a-tainted-node.json")), loaded);
        QCOMPARE(diagnose(loaded.input).cause, Cause::NoNodeMatchesSelector);

        DiagnosisInput noModel = loaded.input;
        noModel.capacity = nullptr;
        Diagnosis d = diagnose(noModel);
        QCOMPARE(d.cause, Cause::UntoleratedTaint);
        QVERIFY2(!d.message.contains(QStringLiteral("series b200")), qPrintable(d.message));

        // A model that knows no node yet (informers not synced) cannot say a series is missing.
        const CapacityModel empty;
        DiagnosisInput emptyModel = loaded.input;
        emptyModel.capacity = &empty;
        QCOMPARE(diagnose(emptyModel).cause, Cause::UntoleratedTaint);

        // The selector does not use the series label the app is configured with.
        DiagnosisInput otherLabel = loaded.input;
        otherLabel.seriesLabel = QStringLiteral("example.com/gpu-series");
        QCOMPARE(diagnose(otherLabel).cause, Cause::UntoleratedTaint);

        // The pod is gone: only its FailedScheduling event is left, without the selector.
        DiagnosisInput gone = loaded.input;
        gone.pods.clear();
        QCOMPARE(diagnose(gone).cause, Cause::UntoleratedTaint);

        // The series appears on a node: the histogram decides again.
        Loaded withSeries;
        load(readFixture(QStringLiteral("series-nobody-has-beside-a-tainted-node.json")), withSeries);
        Kube::Node b200;
        b200.name = QStringLiteral("b200-00");
        b200.series = QStringLiteral("b200");
        b200.gpuCapacity = 8;
        b200.gpuAllocatable = 8;
        b200.ready = true;
        withSeries.capacity.setNode(b200);
        QCOMPARE(diagnose(withSeries.input).cause, Cause::UntoleratedTaint);
    }

    void causeIdsAreStable()
    {
        const QStringList ids = {QStringLiteral("InsufficientGpu"), QStringLiteral("NoNodeMatchesSelector"), QStringLiteral("UntoleratedTaint"),
                                 QStringLiteral("NodesCordoned"), QStringLiteral("ImagePullNotFound"), QStringLiteral("ImagePullUnauthorized"),
                                 QStringLiteral("ImagePullFailed"), QStringLiteral("CapsuleDownloadFailed"), QStringLiteral("ContainerConfigError"),
                                 QStringLiteral("CrashLoop"), QStringLiteral("PreRunningDeadlineExceeded"), QStringLiteral("SubmissionFailed"),
                                 QStringLiteral("QuotaExceeded"), QStringLiteral("PodCreationFailed"), QStringLiteral("Unknown")};
        QCOMPARE(allCauses().size(), ids.size());
        for (int i = 0; i < ids.size(); ++i) {
            QCOMPARE(causeId(allCauses().at(i)), ids.at(i));
            QCOMPARE(causeFromId(ids.at(i)), allCauses().at(i));
        }
        QVERIFY(!causeFromId(QStringLiteral("insufficientgpu")));
        QCOMPARE(QLatin1String(CapsuleInitContainerName), QLatin1String("fetch-capsule"));
    }

    void parsesTheSchedulersMessages()
    {
        // The real messages quoted in the notes (§3.1), with their trailing "..".
        SchedulingFailure f = SchedulingFailure::parse(QStringLiteral(
            "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.."));
        QVERIFY(f.valid);
        QCOMPARE(f.totalNodes, 1);
        QCOMPARE(f.reasons.size(), 1);
        QCOMPARE(f.reasons.first(), qMakePair(1, QStringLiteral("Insufficient nvidia.com/gpu")));
        QCOMPARE(f.preemption, QStringLiteral("0/1 nodes are available: 1 No preemption victims found for incoming pod.."));

        f = SchedulingFailure::parse(QStringLiteral(
            "0/8 nodes are available: 1 node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode, 7 node(s) didn't match "
            "Pod's node affinity/selector. preemption: 0/8 nodes are available: 1 No preemption victims found for incoming pod, 7 Preemption is not helpful for scheduling."));
        QCOMPARE(f.totalNodes, 8);
        QCOMPARE(f.reasons.size(), 2);
        QCOMPARE(f.reasons.at(1), qMakePair(7, QStringLiteral("node(s) didn't match Pod's node affinity/selector")));
        QCOMPARE(f.count(QStringLiteral("node(s) didn't match")), 7);

        // Histograms sort as strings, so "12 X" comes before "4 Y"; both are read.
        f = SchedulingFailure::parse(QStringLiteral("0/16 nodes are available: 12 node(s) didn't match Pod's node affinity/selector, 4 Insufficient nvidia.com/gpu."));
        QCOMPARE(f.count(QStringLiteral("Insufficient nvidia.com/gpu")), 4);
        QVERIFY(f.preemption.isEmpty());

        f = SchedulingFailure::parse(QStringLiteral("0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.."));
        QVERIFY(f.reasons.isEmpty());
        QCOMPARE(f.preFilter, QStringLiteral("pod has unbound immediate PersistentVolumeClaims"));

        QVERIFY(!SchedulingFailure::parse(QStringLiteral("no nodes available to schedule pods")).valid);
        QVERIFY(!SchedulingFailure::parse(QString()).valid);
        QVERIFY(!SchedulingFailure::parse(QStringLiteral("0/x nodes are available: 1 Insufficient cpu.")).valid);
    }

    void jsonIsWhatTheCliPrints()
    {
        Loaded loaded;
        load(readFixture(QStringLiteral("nodes-cordoned.json")), loaded);
        const Diagnosis d = diagnose(loaded.input);
        const QJsonObject json = d.toJson();
        QCOMPARE(json.keys(), (QStringList{QStringLiteral("cause"), QStringLiteral("evidence"), QStringLiteral("message")}));
        QCOMPARE(json.value(QStringLiteral("cause")).toString(), QStringLiteral("NodesCordoned"));
        QCOMPARE(json.value(QStringLiteral("message")).toString(), d.message);
        const QJsonArray evidence = json.value(QStringLiteral("evidence")).toArray();
        QCOMPARE(evidence.size(), 1);
        const QJsonObject e = evidence.first().toObject();
        QCOMPARE(e.value(QStringLiteral("type")).toString(), QStringLiteral("Warning"));
        QCOMPARE(e.value(QStringLiteral("reason")).toString(), QStringLiteral("FailedScheduling"));
        QCOMPARE(e.value(QStringLiteral("object")).toString(), QStringLiteral("Pod/grpo-7b-x2kqp-policy-worker-abcde"));
        QCOMPARE(e.value(QStringLiteral("count")).toInt(), 2);
        QCOMPARE(e.value(QStringLiteral("reportingComponent")).toString(), QStringLiteral("default-scheduler"));
        QCOMPARE(e.value(QStringLiteral("lastSeen")).toString(), QStringLiteral("2026-12-02T10:00:05.000Z"));
        QVERIFY(e.value(QStringLiteral("message")).toString().startsWith(QStringLiteral("0/3 nodes are available: ")));
    }

    void podRoles()
    {
        const QJsonObject fx = readFixture(QStringLiteral("capsule-working-dir.json"));
        const QJsonArray pods = fx.value(QStringLiteral("pods")).toArray();
        QCOMPARE(PodInfo::fromJson(pods.at(0).toObject()).role(), QStringLiteral("head"));
        QCOMPARE(PodInfo::fromJson(pods.at(1).toObject()).role(), QStringLiteral("submitter"));
        QCOMPARE(PodInfo::fromJson(pods.at(1).toObject()).lastExitCodes.value(QStringLiteral("ray-job-submitter")), 1);
        const PodInfo worker = PodInfo::fromJson(readFixture(QStringLiteral("crash-loop.json")).value(QStringLiteral("pods")).toArray().first().toObject());
        QCOMPARE(worker.role(), QStringLiteral("worker policy"));
        QCOMPARE(worker.tolerations.size(), 1);
        QCOMPARE(worker.nodeSelector.value(QStringLiteral("starforge/gpu-series")).toString(), QStringLiteral("h200"));
        QCOMPARE(PodInfo::fromJson(QJsonObject()).role(), QStringLiteral("pod"));
    }

    void emptyInputIsUnknown()
    {
        const Diagnosis d = diagnose(DiagnosisInput{});
        QCOMPARE(d.cause, Cause::Unknown);
        QCOMPARE(d.message, QStringLiteral("No known cause found: no pods"));
        QVERIFY(d.evidence.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestDiagnosis)
#include "tst_diagnosis.moc"
