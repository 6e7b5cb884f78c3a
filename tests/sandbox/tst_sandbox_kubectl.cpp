// kubectl, a real client, against the starforge-sandbox executable over TLS with the token from
// the connection file: get, watch, field selectors, create/delete, auth can-i (protobuf bodies),
// 401 and 403 as kubectl renders them, and a clean stop on SIGTERM.

#include "support/testutil.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace Starforge::Testing;

class TestSandboxKubectl : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QProcess m_sandbox;
    QString m_kubeconfig;
    QString m_kubectl;
    QJsonObject m_connection;

    struct Run
    {
        int exitCode = -1;
        QString out;
        QString err;
    };

    QStringList baseArgs() const
    {
        // A cache directory per test run: kubectl caches discovery per host:port for six hours.
        return {QStringLiteral("--kubeconfig"), m_kubeconfig, QStringLiteral("--cache-dir"), m_dir.filePath(QStringLiteral("cache")),
                QStringLiteral("--request-timeout"), QStringLiteral("20s")};
    }

    Run kubectl(const QStringList &args, const QString &input = {})
    {
        QProcess p;
        p.start(m_kubectl, baseArgs() + args);
        if (!input.isEmpty()) {
            p.write(input.toUtf8());
        }
        p.closeWriteChannel();
        if (!p.waitForFinished(60000)) {
            p.kill();
            p.waitForFinished();
        }
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
                QString::fromUtf8(p.readAllStandardError())};
    }

    // Watches the sandbox has begun to stream for resource paths ending in `suffix`, from its
    // request record (GET /sandbox/v1/requests, admin only): a stream that began is answered 200.
    int watchesStarted(const QString &suffix)
    {
        const Run record = kubectl({QStringLiteral("get"), QStringLiteral("--raw"), QStringLiteral("/sandbox/v1/requests")});
        int n = 0;
        for (const QJsonValue &item : QJsonDocument::fromJson(record.out.toUtf8()).object().value(QStringLiteral("items")).toArray()) {
            const QJsonObject r = item.toObject();
            if (r.value(QStringLiteral("method")).toString() == u"GET" && r.value(QStringLiteral("path")).toString().endsWith(suffix)
                && r.value(QStringLiteral("query")).toString().contains(QStringLiteral("watch=true")) && r.value(QStringLiteral("code")).toInt() == 200) {
                ++n;
            }
        }
        return n;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_kubectl = QStandardPaths::findExecutable(QStringLiteral("kubectl"));
        QVERIFY2(!m_kubectl.isEmpty(), "kubectl must be on PATH (it is part of the build image)");
        const QString rbac = m_dir.filePath(QStringLiteral("rbac.json"));
        QVERIFY(writeFile(rbac, R"({"users":[{"name":"viewer","token":"viewer-token","rules":[
            {"apiGroups":[""],"resources":["pods"],"verbs":["get","list"],"namespaces":["starforge"]}]}]})"));
        const QString connection = m_dir.filePath(QStringLiteral("conn.json"));
        m_sandbox.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        m_sandbox.start(QStringLiteral(SF_BIN_DIR "/starforge-sandbox"),
                        {QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"), QStringLiteral("--connection-file"), connection,
                         QStringLiteral("--fleet"), QStringLiteral("h200:2x8,h100:1x8,cpu:1x0"), QStringLiteral("--rbac"), rbac});
        QVERIFY(m_sandbox.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(connection), 15000);
        m_connection = QJsonDocument::fromJson(readAll(connection)).object();
        m_kubeconfig = m_connection.value(QStringLiteral("kubeconfig")).toString();
        QVERIFY(QFile::exists(m_kubeconfig));
    }

    void cleanupTestCase()
    {
        if (m_sandbox.state() != QProcess::NotRunning) {
            m_sandbox.kill();
            m_sandbox.waitForFinished();
        }
    }

    void getNodes()
    {
        const Run r = kubectl({QStringLiteral("get"), QStringLiteral("nodes"), QStringLiteral("-o"), QStringLiteral("name")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(r.out.split(u'\n', Qt::SkipEmptyParts),
                 (QStringList{QStringLiteral("node/cpu-00"), QStringLiteral("node/h100-00"), QStringLiteral("node/h200-00"),
                              QStringLiteral("node/h200-01")}));
        const Run labelled = kubectl({QStringLiteral("get"), QStringLiteral("nodes"), QStringLiteral("-l"), QStringLiteral("starforge/gpu-series in (h100)"),
                                      QStringLiteral("-o"), QStringLiteral("jsonpath={.items[*].status.allocatable.nvidia\\.com/gpu}")});
        QVERIFY2(labelled.exitCode == 0, qPrintable(labelled.err));
        QCOMPARE(labelled.out, QStringLiteral("8"));
        // Server-side printing: the columns kubectl shows for a real cluster.
        const Run table = kubectl({QStringLiteral("get"), QStringLiteral("nodes")});
        const QStringList lines = table.out.split(u'\n', Qt::SkipEmptyParts);
        QVERIFY2(QRegularExpression(QStringLiteral("^NAME\\s+STATUS\\s+ROLES\\s+AGE\\s+VERSION$")).match(lines.first()).hasMatch(), qPrintable(table.out));
        QVERIFY2(QRegularExpression(QStringLiteral("^cpu-00\\s+Ready\\s+<none>\\s+\\d+[smhd]\\s+v1\\.32\\.4$")).match(lines.at(1)).hasMatch(), qPrintable(table.out));
        const Run described = kubectl({QStringLiteral("describe"), QStringLiteral("node"), QStringLiteral("h200-00")});
        QVERIFY2(described.exitCode == 0 && described.out.contains(QStringLiteral("nvidia.com/gpu:     8")), qPrintable(described.out + described.err));
    }

    void createWatchAndDelete()
    {
        const int before = watchesStarted(QStringLiteral("/namespaces/starforge/pods"));
        QProcess watch;
        watch.start(m_kubectl, baseArgs() + QStringList{QStringLiteral("get"), QStringLiteral("pods"), QStringLiteral("-w"),
                                                        QStringLiteral("-o"), QStringLiteral("custom-columns=NAME:.metadata.name,APP:.metadata.labels.app")});
        QVERIFY(watch.waitForStarted());
        // Changes made before kubectl's watch is open would be missed: wait until the server streams it.
        QTRY_VERIFY_WITH_TIMEOUT(watchesStarted(QStringLiteral("/namespaces/starforge/pods")) > before, 20000);
        const QString pod = QStringLiteral(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"w1","labels":{"app":"one"}},"spec":{"schedulerName":"test-none","containers":[{"name":"main","image":"busybox"}]}})");
        // (No scheduler by that name: the pod stays unbound, so the watch sees only our changes.)
        const Run created = kubectl({QStringLiteral("create"), QStringLiteral("--validate=false"), QStringLiteral("-f"), QStringLiteral("-")}, pod);
        QVERIFY2(created.exitCode == 0, qPrintable(created.err));
        QCOMPARE(created.out.trimmed(), QStringLiteral("pod/w1 created"));
        const Run labelled = kubectl({QStringLiteral("label"), QStringLiteral("pod"), QStringLiteral("w1"), QStringLiteral("app=two"), QStringLiteral("--overwrite")});
        QVERIFY2(labelled.exitCode == 0, qPrintable(labelled.err));
        QElapsedTimer timer;
        timer.start();
        const Run deleted = kubectl({QStringLiteral("delete"), QStringLiteral("pod"), QStringLiteral("w1")});
        QVERIFY2(deleted.exitCode == 0, qPrintable(deleted.err));
        QCOMPARE(deleted.out.trimmed(), QStringLiteral("pod \"w1\" deleted"));
        QVERIFY2(timer.elapsed() < 10000, "kubectl delete waits for the object to go; it must return promptly");
        QTRY_VERIFY_WITH_TIMEOUT(watch.bytesAvailable() > 0 && QString::fromUtf8(watch.peek(4096)).count(u'\n') >= 4, 10000);
        watch.terminate();
        watch.waitForFinished();
        const QStringList lines = QString::fromUtf8(watch.readAllStandardOutput()).split(u'\n', Qt::SkipEmptyParts);
        QVERIFY2(lines.size() >= 4, qPrintable(lines.join(u'\n')));
        QVERIFY(lines.at(1).contains(QStringLiteral("one")));  // ADDED
        QVERIFY(lines.at(2).contains(QStringLiteral("two")));  // MODIFIED by the label
        QVERIFY(lines.at(3).startsWith(QStringLiteral("w1")));  // DELETED
        const Run gone = kubectl({QStringLiteral("get"), QStringLiteral("pod"), QStringLiteral("w1")});
        QCOMPARE(gone.exitCode, 1);
        QCOMPARE(gone.err.trimmed(), QStringLiteral("Error from server (NotFound): pods \"w1\" not found"));
    }

    void eventsByFieldSelector()
    {
        const QString event = QStringLiteral(R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"p1.abc"},"involvedObject":{"kind":"Pod","name":"p1","namespace":"starforge"},"reason":"FailedScheduling","type":"Warning","message":"0/4 nodes are available: 4 Insufficient nvidia.com/gpu.","source":{"component":"default-scheduler"}})");
        QCOMPARE(kubectl({QStringLiteral("create"), QStringLiteral("--validate=false"), QStringLiteral("-f"), QStringLiteral("-")}, event).exitCode, 0);
        const Run hit = kubectl({QStringLiteral("get"), QStringLiteral("events"), QStringLiteral("--field-selector"),
                                 QStringLiteral("involvedObject.kind=Pod,involvedObject.name=p1,reason=FailedScheduling"),
                                 QStringLiteral("-o"), QStringLiteral("jsonpath={.items[*].message}")});
        QVERIFY2(hit.exitCode == 0, qPrintable(hit.err));
        QCOMPARE(hit.out, QStringLiteral("0/4 nodes are available: 4 Insufficient nvidia.com/gpu."));
        const Run miss = kubectl({QStringLiteral("get"), QStringLiteral("events"), QStringLiteral("--field-selector"), QStringLiteral("reason=Pulled"),
                                  QStringLiteral("-o"), QStringLiteral("name")});
        QCOMPARE(miss.out.trimmed(), QString());
        const Run bad = kubectl({QStringLiteral("get"), QStringLiteral("events"), QStringLiteral("--field-selector"), QStringLiteral("spec.x=1")});
        QCOMPARE(bad.exitCode, 1);
        QVERIFY2(bad.err.contains(QStringLiteral("field label not supported: spec.x")), qPrintable(bad.err));
    }

    void unschedulablePodExplainsItself()
    {
        const QString pod = QStringLiteral(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"huge"},"spec":{"containers":[{"name":"main","image":"busybox","resources":{"limits":{"nvidia.com/gpu":"16"}}}]}})");
        QCOMPARE(kubectl({QStringLiteral("create"), QStringLiteral("--validate=false"), QStringLiteral("-f"), QStringLiteral("-")}, pod).exitCode, 0);
        const QString expected = QStringLiteral("0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available: "
                                                "4 No preemption victims found for incoming pod..");
        QString message;
        QTRY_VERIFY_WITH_TIMEOUT((message = kubectl({QStringLiteral("get"), QStringLiteral("pod"), QStringLiteral("huge"), QStringLiteral("-o"),
                                                     QStringLiteral("jsonpath={.status.conditions[?(@.type==\"PodScheduled\")].message}")}).out) == expected, 10000);
        const Run events = kubectl({QStringLiteral("get"), QStringLiteral("events"), QStringLiteral("--field-selector"),
                                    QStringLiteral("involvedObject.name=huge,reason=FailedScheduling"), QStringLiteral("-o"),
                                    QStringLiteral("jsonpath={.items[0].type} {.items[0].reportingComponent}: {.items[0].message}")});
        QCOMPARE(events.out, QStringLiteral("Warning default-scheduler: ") + expected);
        const Run v1 = kubectl({QStringLiteral("get"), QStringLiteral("events.v1.events.k8s.io"), QStringLiteral("--field-selector"),
                                QStringLiteral("regarding.name=huge"), QStringLiteral("-o"), QStringLiteral("jsonpath={.items[0].note}")});
        QVERIFY2(v1.exitCode == 0, qPrintable(v1.err));
        QCOMPARE(v1.out, expected);
    }

    void logsFollow()
    {
        const QString pod = QStringLiteral(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"talker"},"spec":{"restartPolicy":"Never","containers":[{"name":"main","image":"nvcr.io/nvidia/nemo-rl:v0.7.0","command":["sh","-c","for i in 1 2 3; do echo step $i; sleep 0.3; done"]}]}})");
        QCOMPARE(kubectl({QStringLiteral("create"), QStringLiteral("--validate=false"), QStringLiteral("-f"), QStringLiteral("-")}, pod).exitCode, 0);
        QTRY_COMPARE_WITH_TIMEOUT(kubectl({QStringLiteral("get"), QStringLiteral("pod"), QStringLiteral("talker"), QStringLiteral("-o"),
                                           QStringLiteral("jsonpath={.status.phase}")}).out, QStringLiteral("Running"), 10000);
        const Run follow = kubectl({QStringLiteral("logs"), QStringLiteral("-f"), QStringLiteral("talker")});
        QVERIFY2(follow.exitCode == 0, qPrintable(follow.err));
        QCOMPARE(follow.out, QStringLiteral("step 1\nstep 2\nstep 3\n"));
        const Run tail = kubectl({QStringLiteral("logs"), QStringLiteral("talker"), QStringLiteral("--tail=1")});
        QCOMPARE(tail.out, QStringLiteral("step 3\n"));
        // An image that is not on the nodes: the real pull failure as kubectl shows it.
        const QString missing = QStringLiteral(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"noimage"},"spec":{"containers":[{"name":"main","image":"registry.example/nope:1"}]}})");
        QCOMPARE(kubectl({QStringLiteral("create"), QStringLiteral("--validate=false"), QStringLiteral("-f"), QStringLiteral("-")}, missing).exitCode, 0);
        QTRY_VERIFY_WITH_TIMEOUT(kubectl({QStringLiteral("logs"), QStringLiteral("noimage")}).err.contains(
                                     QStringLiteral("is waiting to start: image can't be pulled")) ||
                                 kubectl({QStringLiteral("logs"), QStringLiteral("noimage")}).err.contains(
                                     QStringLiteral("is waiting to start: trying and failing to pull image")), 10000);
    }

    void rayJobWatchSeesTheStatusChanges()
    {
        const int before = watchesStarted(QStringLiteral("/namespaces/starforge/rayjobs"));
        QProcess watch;
        watch.start(m_kubectl, baseArgs() + QStringList{QStringLiteral("get"), QStringLiteral("rayjobs"), QStringLiteral("-w"), QStringLiteral("-o"),
                                                        QStringLiteral("custom-columns=NAME:.metadata.name,DEPLOYMENT:.status.jobDeploymentStatus,JOB:.status.jobStatus")});
        QVERIFY(watch.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(watchesStarted(QStringLiteral("/namespaces/starforge/rayjobs")) > before, 20000);
        const QString image = QStringLiteral("nvcr.io/nvidia/nemo-rl:v0.7.0");
        const QString job = QStringLiteral(R"({"apiVersion":"ray.io/v1","kind":"RayJob","metadata":{"name":"hello"},"spec":{
            "entrypoint":"echo hello from the driver","shutdownAfterJobFinishes":true,
            "rayClusterSpec":{"headGroupSpec":{"rayStartParams":{},"template":{"spec":{"containers":[{"name":"ray-head","image":"%1"}]}}},
              "workerGroupSpecs":[{"groupName":"cpu","replicas":1,"minReplicas":1,"maxReplicas":1,"rayStartParams":{},
                "template":{"spec":{"containers":[{"name":"ray-worker","image":"%1"}]}}}]}}})").arg(image);
        const Run created = kubectl({QStringLiteral("create"), QStringLiteral("--validate=false"), QStringLiteral("-f"), QStringLiteral("-")}, job);
        QVERIFY2(created.exitCode == 0, qPrintable(created.err));
        QString seen;
        QTRY_VERIFY_WITH_TIMEOUT((seen += QString::fromUtf8(watch.readAllStandardOutput())).contains(QStringLiteral("Complete")), 30000);
        watch.terminate();
        watch.waitForFinished();
        QVERIFY2(seen.contains(QStringLiteral("Initializing")), qPrintable(seen));
        QVERIFY2(seen.contains(QStringLiteral("Running")), qPrintable(seen));
        QVERIFY2(QRegularExpression(QStringLiteral("hello\\s+Complete\\s+SUCCEEDED")).match(seen).hasMatch(), qPrintable(seen));
        // The driver's output is in the submitter's log, found by the Job controller's label.
        const Run logs = kubectl({QStringLiteral("logs"), QStringLiteral("-l"), QStringLiteral("job-name=hello")});
        QVERIFY2(logs.out.contains(QStringLiteral("hello from the driver")), qPrintable(logs.out + logs.err));
    }

    void authCanI()
    {
        const Run yes = kubectl({QStringLiteral("auth"), QStringLiteral("can-i"), QStringLiteral("create"), QStringLiteral("pods")});
        QCOMPARE(yes.out.trimmed(), QStringLiteral("yes"));
        QCOMPARE(yes.exitCode, 0);
        const Run viewerNo = kubectl({QStringLiteral("--token"), QStringLiteral("viewer-token"), QStringLiteral("auth"), QStringLiteral("can-i"),
                                      QStringLiteral("create"), QStringLiteral("pods")});
        QCOMPARE(viewerNo.out.trimmed(), QStringLiteral("no"));
        QCOMPARE(viewerNo.exitCode, 1);
        const Run viewerYes = kubectl({QStringLiteral("--token"), QStringLiteral("viewer-token"), QStringLiteral("auth"), QStringLiteral("can-i"),
                                       QStringLiteral("list"), QStringLiteral("pods"), QStringLiteral("-n"), QStringLiteral("starforge")});
        QCOMPARE(viewerYes.out.trimmed(), QStringLiteral("yes"));
        const Run list = kubectl({QStringLiteral("--token"), QStringLiteral("viewer-token"), QStringLiteral("auth"), QStringLiteral("can-i"),
                                  QStringLiteral("--list"), QStringLiteral("-n"), QStringLiteral("starforge")});
        QVERIFY2(list.exitCode == 0, qPrintable(list.err));
        QVERIFY2(list.out.contains(QStringLiteral("pods ")) && list.out.contains(QStringLiteral("[get list]")), qPrintable(list.out));
    }

    void unauthorizedAndForbidden()
    {
        const Run wrong = kubectl({QStringLiteral("--token"), QStringLiteral("not-a-token"), QStringLiteral("get"), QStringLiteral("pods")});
        QCOMPARE(wrong.exitCode, 1);
        // "(Unauthorized)" when the list answers 401 with a Status; the longer text on discovery.
        QVERIFY2(wrong.err.contains(QStringLiteral("error: You must be logged in to the server (Unauthorized)"))
                     || wrong.err.contains(QStringLiteral("error: You must be logged in to the server (the server has asked for the client to provide credentials)")),
                 qPrintable(wrong.err));
        const Run forbidden = kubectl({QStringLiteral("--token"), QStringLiteral("viewer-token"), QStringLiteral("get"), QStringLiteral("pods"),
                                       QStringLiteral("-n"), QStringLiteral("default")});
        QCOMPARE(forbidden.exitCode, 1);
        QCOMPARE(forbidden.err.trimmed(),
                 QStringLiteral("Error from server (Forbidden): pods is forbidden: User \"viewer\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\""));
    }

    void stopsCleanlyOnSigterm()
    {
        const QString connection = m_dir.filePath(QStringLiteral("conn.json"));
        ::kill(static_cast<pid_t>(m_sandbox.processId()), SIGTERM);
        QVERIFY(m_sandbox.waitForFinished(10000));
        QCOMPARE(m_sandbox.exitStatus(), QProcess::NormalExit);
        QCOMPARE(m_sandbox.exitCode(), 0);
        QVERIFY(!QFile::exists(connection));
        const Run after = kubectl({QStringLiteral("get"), QStringLiteral("nodes")});
        QVERIFY(after.exitCode != 0);
    }
};

QTEST_GUILESS_MAIN(TestSandboxKubectl)
#include "tst_sandbox_kubectl.moc"
