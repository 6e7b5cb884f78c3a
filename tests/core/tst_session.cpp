// The core Session against the sandbox: it connects and runs the shared parts; a token without
// events and nodes switches those features off, each with its reason and Role rule, and asks
// no more; a sandbox stopped and restarted on the same port is lost, then reconnected with new
// informers and one tracker; and one Pending job gets the same diagnosis from the session's
// tracker archive, from `starforge-cli diagnose` and from `starforge-cli status`.

#include "core/cluster/capacity.h"
#include "core/job/history.h"
#include "core/job/rayjobbuilder.h"
#include "core/job/tracker.h"
#include "core/kube/informer.h"
#include "core/playground/playgroundclient.h"
#include "core/playground/playgroundpod.h"
#include "core/session/session.h"
#include "support/memorysecretstore.h"
#include "support/sandboxfixture.h"
#include "support/sandboxjobs.h"
#include "support/testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace Starforge;

class TestSession : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<Testing::SandboxHttp> m_http;
    Testing::MemorySecretStore m_secrets;

    QString connectionFile() const { return m_dir.filePath(QStringLiteral("conn.json")); }

    bool startSandbox(const QString &fleet, quint16 port = 0, const QVersionNumber &kuberay = QVersionNumber(1, 7))
    {
        Sandbox::SandboxOptions options;
        options.connectionFile = connectionFile();
        options.fleet = fleet;
        options.port = port;
        options.kuberayVersion = kuberay;
        // A researcher's token that may run jobs in the namespace, but not read events or nodes.
        options.rbacFile = m_dir.filePath(QStringLiteral("rbac.json"));
        if (!Testing::writeFile(options.rbacFile, Testing::ResearcherRbac)) return false;
        QString error;
        const bool ok = Testing::startSandbox(m_sandbox, m_http, options, &error);
        if (!ok) qWarning() << error;
        return ok;
    }

    static SessionOptions quickOptions()
    {
        SessionOptions options;
        options.livenessIntervalMs = 200;
        options.reconnectBackoff = {200, 1000, 2.0, 0.2, 120000};
        options.trackerCheckIntervalMs = 200;
        return options;
    }

    static bool waitReady(Session &session, QSignalSpy &ready, int count = 1, int timeoutMs = 20000)
    {
        return QTest::qWaitFor([&] { return ready.size() >= count || session.state() == Session::State::Disconnected; }, timeoutMs)
            && ready.size() >= count;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
    }

    void cleanup()
    {
        m_http.reset();
        m_sandbox.reset();
    }

    // A sandbox killed and not yet reaped by whoever started it is a zombie: kill(pid, 0) still
    // succeeds, yet it serves nothing. A person is told to start it again all the same.
    void aKilledSandboxNotYetReapedHasStopped()
    {
        const pid_t child = ::fork();
        if (child == 0) ::_exit(0);
        QVERIFY(child > 0);
        const QString file = m_dir.filePath(QStringLiteral("zombie.json"));
        QVERIFY(Testing::writeFile(file, QByteArray("{\"pid\": ") + QByteArray::number(child) + "}"));
        const SessionSource source = SessionSource::ofConnectionFile(file);
        // Running, then exited and unreaped: the reason appears once it is a zombie.
        QTRY_VERIFY2(!source.stoppedReason().isEmpty(), "a zombie sandbox counted as running");
        QVERIFY(::kill(child, 0) == 0);   // still there for kill 0: the case this covers
        QCOMPARE(source.stoppedReason(), QStringLiteral("The starforge-sandbox that wrote %1 (pid %2) is not running any more: start it again.").arg(file).arg(child));
        int status = 0;
        QCOMPARE(::waitpid(child, &status, 0), child);
        QVERIFY(!source.stoppedReason().isEmpty());   // reaped: gone
        // A live process is not stopped.
        QVERIFY(Testing::writeFile(file, QByteArray("{\"pid\": ") + QByteArray::number(::getpid()) + "}"));
        QCOMPARE(SessionSource::ofConnectionFile(file).stoppedReason(), QString());
    }

    void connectsAndRunsTheSharedParts()
    {
        QVERIFY(startSandbox(QStringLiteral("h100:2x8,cpu:1x0")));
        Session session(&m_secrets, QProcessEnvironment(), quickOptions());
        QSignalSpy ready(&session, &Session::ready);
        session.open(SessionSource::ofConnectionFile(connectionFile()));
        QCOMPARE(session.state(), Session::State::Connecting);
        QVERIFY2(waitReady(session, ready), qPrintable(session.statusText()));
        QCOMPARE(session.state(), Session::State::Connected);
        QVERIFY2(session.statusText().startsWith(QStringLiteral("Connected to https://127.0.0.1:")), qPrintable(session.statusText()));
        QVERIFY(!session.serverVersion().isEmpty());
        for (const FeatureStatus &feature : session.features()) QVERIFY2(feature.available, qPrintable(feature.id + u' ' + feature.reason));
        QVERIFY(session.operatorVersion().detected());
        QCOMPARE(session.operatorVersion().version, QVersionNumber(1, 7));
        // Every shared part runs and has synced.
        for (Kube::Informer *informer : {session.rayJobInformer(), session.eventInformer(), session.nodeInformer(), session.podInformer()}) {
            QVERIFY(informer);
            QVERIFY(informer->hasSynced());
        }
        QVERIFY(session.capacity() && session.capacity()->isSynced());
        QCOMPARE(session.capacity()->model().series(QStringLiteral("h100")).capacity, 16);
        QVERIFY(session.jobs() && session.jobs()->hasSynced());
        QVERIFY(session.bucket());
        QCOMPARE(session.findChildren<Job::JobTracker *>().size(), 1);

        // Closing tears everything down, in order, and says so.
        QSignalSpy parts(&session, &Session::partsChanged);
        session.close();
        QCOMPARE(session.state(), Session::State::Disconnected);
        QVERIFY(!session.kube() && !session.jobs() && !session.capacity() && !session.nodeInformer());
        QCOMPARE(parts.size(), 1);
        QVERIFY(session.findChildren<Job::JobTracker *>().isEmpty());
    }

    // With followPlayground, the session reaps the owner's playground pods when it connects
    // (what expired while no app ran) and periodically after (a pod the cluster ended at its
    // deadline); another owner's expired pod stays.
    void reapsTheOwnersPlaygroundPods()
    {
        QVERIFY(startSandbox(QStringLiteral("h100:1x8")));
        const auto pod = [](const QString &owner, const QString &id, const QDateTime &created, int deadline) {
            Job::ClusterSettings settings;
            settings.ns = QStringLiteral("starforge");
            settings.owner = owner;
            Playground::LaunchRequest request;
            request.model = QStringLiteral("Qwen/Qwen3-0.6B");
            request.series = QStringLiteral("h100");
            request.ttlSeconds = 3600;
            QJsonObject object = *Playground::PlaygroundPod::build(request, settings, id, created);
            QJsonObject spec = object.value(QStringLiteral("spec")).toObject();
            spec.insert(QStringLiteral("activeDeadlineSeconds"), deadline);
            object.insert(QStringLiteral("spec"), spec);
            return QJsonDocument(object).toJson();
        };
        const QString pods = QStringLiteral("/api/v1/namespaces/starforge/pods");
        const QDateTime longAgo = QDateTime::currentDateTimeUtc().addSecs(-3 * 3600);
        QCOMPARE(m_http->send("POST", pods, pod(QStringLiteral("sandbox-admin"), QStringLiteral("b7d4kq"), longAgo, 3600)).status, 201);
        QCOMPARE(m_http->send("POST", pods, pod(QStringLiteral("bob@lab.example"), QStringLiteral("b7d4kr"), longAgo, 3600)).status, 201);
        SessionOptions options = quickOptions();
        options.followPlayground = true;
        options.playgroundReapIntervalMs = 300;
        Session session(&m_secrets, QProcessEnvironment(), options);
        QSignalSpy ready(&session, &Session::ready);
        QSignalSpy reaped(&session, &Session::playgroundReaped);
        session.open(SessionSource::ofConnectionFile(connectionFile()));
        QVERIFY2(waitReady(session, ready), qPrintable(session.statusText()));
        QVERIFY(session.playground());
        QTRY_VERIFY_WITH_TIMEOUT(!reaped.isEmpty(), 10000);
        QCOMPARE(reaped.first().first().toStringList(), QStringList{QStringLiteral("play-b7d4kq")});
        QCOMPARE(m_http->get(pods + QStringLiteral("/play-b7d4kq")).status, 404);
        QCOMPARE(m_http->get(pods + QStringLiteral("/play-b7d4kr")).status, 200);   // Bob's
        // In time by its annotation, but ended by the cluster at its deadline: reaped on a later pass.
        QCOMPARE(m_http->send("POST", pods, pod(QStringLiteral("sandbox-admin"), QStringLiteral("b7d4ks"), QDateTime::currentDateTimeUtc(), 1)).status, 201);
        QTRY_VERIFY_WITH_TIMEOUT(reaped.size() >= 2 && reaped.last().first().toStringList() == QStringList{QStringLiteral("play-b7d4ks")}, 15000);
        QCOMPARE(m_http->get(pods + QStringLiteral("/play-b7d4kr")).status, 200);
        session.close();
        QVERIFY(!session.playground());
    }

    void aLimitedTokenSwitchesFeaturesOff()
    {
        QVERIFY(startSandbox(QStringLiteral("h100:1x8")));
        QProcessEnvironment environment;
        environment.insert(QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("researcher-token"));
        Session session(&m_secrets, environment, quickOptions());
        QSignalSpy ready(&session, &Session::ready);
        session.open(SessionSource::ofConnectionFile(connectionFile()));
        QVERIFY2(waitReady(session, ready), qPrintable(session.statusText()));
        QCOMPARE(session.state(), Session::State::Degraded);

        const auto events = session.feature(QStringLiteral("events"));
        QVERIFY(events && !events->available);
        QVERIFY2(events->reason.contains(QStringLiteral("list events in namespace starforge")), qPrintable(events->reason));
        QVERIFY2(events->roleRule.contains(QStringLiteral("resources: [\"events\"]")) && events->roleRule.contains(QStringLiteral("\"watch\"")),
                 qPrintable(events->roleRule));
        const auto capacity = session.feature(QStringLiteral("capacity"));
        QVERIFY(capacity && !capacity->available);
        QVERIFY2(capacity->reason.contains(QStringLiteral("list nodes at the cluster scope")), qPrintable(capacity->reason));
        QVERIFY2(capacity->roleRule.contains(QStringLiteral("resources: [\"nodes\"]")) && capacity->roleRule.contains(QStringLiteral("ClusterRole")),
                 qPrintable(capacity->roleRule));
        QVERIFY2(session.statusText().contains(QStringLiteral("Event timeline and diagnosis is unavailable")), qPrintable(session.statusText()));
        // What it may do runs; what it may not is not even tried.
        QVERIFY(session.feature(QStringLiteral("jobs"))->available);
        QVERIFY(session.jobs() && session.rayJobInformer()->hasSynced());
        QVERIFY(!session.eventInformer());
        QVERIFY(!session.nodeInformer() && !session.podInformer() && !session.capacity());
        // And it stays that way: nothing retries a refused feature.
        QTest::qWait(1500);
        QCOMPARE(session.state(), Session::State::Degraded);
        QVERIFY(!session.eventInformer() && !session.nodeInformer());
    }

    void lostAndReconnectedOnTheSamePort()
    {
        QVERIFY(startSandbox(QStringLiteral("h100:1x8")));
        const quint16 port = static_cast<quint16>(m_sandbox->apiServerUrl().port());
        Session session(&m_secrets, QProcessEnvironment(), quickOptions());
        QSignalSpy ready(&session, &Session::ready);
        QList<Session::State> states;
        connect(&session, &Session::stateChanged, this, [&states](Session::State state) {
            if (states.isEmpty() || states.last() != state) states.append(state);
        });
        session.open(SessionSource::ofConnectionFile(connectionFile()));
        QVERIFY2(waitReady(session, ready), qPrintable(session.statusText()));
        QPointer<Job::JobTracker> firstTracker = session.jobs();
        QVERIFY(firstTracker);

        // Stopped: the liveness request fails and the session says the cluster is lost.
        m_http.reset();
        m_sandbox.reset();
        QTRY_COMPARE_WITH_TIMEOUT(session.state(), Session::State::Lost, 10000);
        QVERIFY2(session.statusText().startsWith(QStringLiteral("Lost the cluster")), qPrintable(session.statusText()));

        // Back on the same port with a new CA, new tokens and another fleet: the session reads
        // its connection file again, rebuilds, and its informers see the new cluster.
        QVERIFY(startSandbox(QStringLiteral("h200:2x8"), port));
        QVERIFY2(waitReady(session, ready, 2, 30000), qPrintable(session.statusText()));
        QVERIFY(session.isUp());
        QVERIFY(states.contains(Session::State::Lost));
        QVERIFY(states.contains(Session::State::Reconnecting));
        QVERIFY(states.indexOf(Session::State::Lost) < states.lastIndexOf(Session::State::Connected));
        QVERIFY(session.nodeInformer()->hasSynced());
        QCOMPARE(session.capacity()->model().series(QStringLiteral("h200")).capacity, 16);
        QCOMPARE(session.capacity()->model().series(QStringLiteral("h100")).capacity, 0);
        // One tracker: the old one is gone, not running beside the new one.
        QVERIFY(firstTracker.isNull());
        QCOMPARE(session.findChildren<Job::JobTracker *>().size(), 1);
        QVERIFY(session.jobs() && session.jobs()->hasSynced());
    }

    // NoNodeMatchesSelector beside a tainted node: without the capacity model the scheduler's
    // message alone would point at the taint. The session's tracker archives the job with the
    // capacity it follows; the CLI computes the same from its own session.
    void oneDiagnosisForOnePendingJob()
    {
        QVERIFY(startSandbox(QStringLiteral("h100:1x8,cpu:1x0"), 0, QVersionNumber(1, 5)));   // 1.5: the app enforces the deadline at once
        QCOMPARE(m_http->send("PATCH", QStringLiteral("/api/v1/nodes/cpu-00"),
                              R"({"spec":{"taints":[{"key":"node-role.kubernetes.io/control-plane","effect":"NoSchedule"}]}})", "application/merge-patch+json")
                     .status,
                 200);
        QProcessEnvironment environment;
        environment.insert(QStringLiteral("FORGE_KUBERAY_PRERUNNING_DEADLINE_S"), QStringLiteral("25"));
        Session session(&m_secrets, environment, quickOptions());
        QSignalSpy ready(&session, &Session::ready);
        session.open(SessionSource::ofConnectionFile(connectionFile()));
        QVERIFY2(waitReady(session, ready), qPrintable(session.statusText()));
        QVERIFY(session.capacity()->isSynced());
        std::optional<Job::JobRecord> archived;
        connect(session.jobs(), &Job::JobTracker::jobArchived, this, [&archived](const Job::JobRecord &r) { archived = r; });

        const QString id = Job::RayJobBuilder::newJobId();
        // Submitted with a 25 s deadline, as the app writes it for any KubeRay.
        const QJsonObject job = Testing::withAnnotation(
            Testing::starforgeRayJob(QStringLiteral("nosel"), id, QStringLiteral("python3 -c pass"), Testing::unschedulableHead()),
            Job::Labels::PreRunningDeadline, QStringLiteral("25"));
        QCOMPARE(m_http->send("POST", QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs"), QJsonDocument(job).toJson()).status, 201);
        // Wait for the scheduler's verdict on the head pod, which every diagnosis reads.
        QTRY_VERIFY_WITH_TIMEOUT(m_http->send("GET", QStringLiteral("/api/v1/namespaces/starforge/events?fieldSelector=reason%3DFailedScheduling")).body.contains("untolerated taint"),
                                 15000);

        auto cli = [this](const QStringList &arguments) {
            QProcess process;
            process.start(QStringLiteral(SF_BIN_DIR "/starforge-cli"), arguments + QStringList{QStringLiteral("--json"), QStringLiteral("--connection-file"), connectionFile()});
            // The sandbox runs in this process: keep its event loop turning while the CLI asks.
            if (!QTest::qWaitFor([&process] { return process.state() == QProcess::NotRunning; }, 30000)) process.kill();
            const QByteArray out = process.readAllStandardOutput();
            if (process.exitCode() != 0) qWarning() << arguments << process.readAllStandardError();
            return QJsonDocument::fromJson(out).object();
        };
        const QString fromDiagnose = cli({QStringLiteral("diagnose"), id}).value(QStringLiteral("cause")).toString();
        const QString fromStatus = cli({QStringLiteral("status"), id}).value(QStringLiteral("diagnosis")).toObject().value(QStringLiteral("cause")).toString();
        QCOMPARE(fromDiagnose, QStringLiteral("NoNodeMatchesSelector"));
        QCOMPARE(fromStatus, fromDiagnose);

        // Past the pre-running deadline the session's tracker fails, diagnoses and archives it.
        QTRY_VERIFY_WITH_TIMEOUT(archived.has_value(), 60000);
        const Job::JobRecord record = *archived;
        QCOMPARE(record.id, id);
        QCOMPARE(record.state, Job::JobState::Failed);
        QCOMPARE(record.cause, fromDiagnose);
        // And the archive in the bucket says the same.
        std::optional<Result<Job::JobRecord>> stored;
        Job::readArchivedJob(session.s3(), id, this, [&stored](Result<Job::JobRecord> r) { stored = std::move(r); });
        QTRY_VERIFY(stored.has_value());
        QVERIFY(*stored);
        QCOMPARE((*stored)->cause, fromDiagnose);
    }
};

QTEST_GUILESS_MAIN(TestSession)
#include "tst_session.moc"
