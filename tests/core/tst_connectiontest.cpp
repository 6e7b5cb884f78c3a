// ConnectionTest against the sandbox: every part reported once, each outcome earned. A full
// token passes all; a researcher's narrower token passes with a warning per feature it cannot
// use, naming the Role rules; a refused token, a missing bucket, a server that does not answer
// and an invalid setting each fail the part they concern and skip only what depends on it.

#include "core/session/connectiontest.h"
#include "support/memorysecretstore.h"
#include "support/sandboxfixture.h"
#include "support/testutil.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using Outcome = ConnectionCheck::Outcome;

class TestConnectionTest : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<Testing::SandboxHttp> m_http;
    Testing::MemorySecretStore m_secrets;
    std::unique_ptr<ConnectionTest> m_test;

    QString connectionFile() const { return m_dir.filePath(QStringLiteral("conn.json")); }

    // Runs a test over the sandbox's connection file with these environment overrides, into
    // m_test. Empty when it went as every test must: the whole list from the start, each part
    // Running, then each reported exactly once and finished; else what went wrong.
    QString run(const QMap<QString, QString> &overrides = {})
    {
        QProcessEnvironment environment;
        for (auto it = overrides.cbegin(); it != overrides.cend(); ++it) environment.insert(it.key(), it.value());
        m_test = std::make_unique<ConnectionTest>(&m_secrets, environment);
        QSignalSpy finished(m_test.get(), &ConnectionTest::finished);
        QSignalSpy changed(m_test.get(), &ConnectionTest::checkChanged);
        m_test->start(SessionSource::ofConnectionFile(connectionFile()));
        if (!m_test->isRunning() || m_test->checks().size() < 10) return QStringLiteral("not running, or fewer than 10 parts");
        for (const ConnectionCheck &c : m_test->checks()) {
            if (c.outcome != Outcome::Running) return c.id + QStringLiteral(" did not start as running");
        }
        if (!finished.wait(30000) && finished.isEmpty()) return QStringLiteral("the connection test did not finish");
        if (finished.size() != 1 || m_test->isRunning()) return QStringLiteral("finished %1 times").arg(finished.size());
        QSet<int> seen;
        for (const auto &args : changed) {
            const int index = args.at(0).toInt();
            if (seen.contains(index)) return m_test->checks().at(index).id + QStringLiteral(" reported twice");
            seen.insert(index);
        }
        if (seen.size() != m_test->checks().size()) return QStringLiteral("%1 of %2 parts reported").arg(seen.size()).arg(m_test->checks().size());
        return {};
    }

    static const ConnectionCheck &check(const ConnectionTest &test, const QString &id)
    {
        for (const ConnectionCheck &c : test.checks()) {
            if (c.id == id) return c;
        }
        qFatal("no check %s", qPrintable(id));
    }

private Q_SLOTS:
    void initTestCase()
    {
        Sandbox::SandboxOptions options;
        options.connectionFile = connectionFile();
        options.fleet = QStringLiteral("h200:1x8");
        // A researcher who may run jobs and read pods and logs, but not events, nodes or CRDs.
        options.rbacFile = m_dir.filePath(QStringLiteral("rbac.json"));
        QVERIFY(Testing::writeFile(options.rbacFile, Testing::ResearcherRbac));
        QString error;
        QVERIFY2(Testing::startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
    }
    void cleanupTestCase()
    {
        m_http.reset();
        m_sandbox.reset();
    }

    void everyPartPassesWithAFullToken()
    {
        const QString problem = run();
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        const auto &test = m_test;
        QVERIFY(!test->isRunning());
        for (const ConnectionCheck &c : test->checks()) {
            QVERIFY2(c.outcome == Outcome::Passed, qPrintable(c.id + u' ' + ConnectionCheck::outcomeName(c.outcome) + u' ' + c.detail));
        }
        QVERIFY(test->passed());
        QVERIFY2(check(*test, QStringLiteral("server")).detail.contains(QStringLiteral("Kubernetes v1.32")), qPrintable(check(*test, QStringLiteral("server")).detail));
        QVERIFY(check(*test, QStringLiteral("server")).elapsedMs >= 0);
        QVERIFY(check(*test, QStringLiteral("identity")).detail.startsWith(QStringLiteral("sandbox-admin")));
        QVERIFY(check(*test, QStringLiteral("kuberay")).detail.contains(QStringLiteral("KubeRay 1.7")));
        QVERIFY(check(*test, QStringLiteral("bucket")).detail.contains(QStringLiteral("starforge")));
        QCOMPARE(test->summary(), QStringLiteral("%1 of %1 checks passed").arg(test->checks().size()));
    }

    void aNarrowTokenWarnsPerFeatureWithTheRulesToGrant()
    {
        const QString problem = run({{QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("researcher-token")}});
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        const auto &test = m_test;
        QVERIFY(test->passed()); // warnings only: the app works, with less
        QVERIFY(check(*test, QStringLiteral("identity")).detail.startsWith(QStringLiteral("researcher")));
        QCOMPARE(check(*test, QStringLiteral("feature:logs")).outcome, Outcome::Passed);
        const ConnectionCheck &events = check(*test, QStringLiteral("feature:events"));
        QCOMPARE(events.outcome, Outcome::Warning);
        QVERIFY2(events.detail.contains(QStringLiteral("list events in namespace starforge")), qPrintable(events.detail));
        QVERIFY2(events.fix.contains(QStringLiteral("resources: [\"events\"]")), qPrintable(events.fix));
        const ConnectionCheck &capacity = check(*test, QStringLiteral("feature:capacity"));
        QCOMPARE(capacity.outcome, Outcome::Warning);
        QVERIFY(capacity.detail.contains(QStringLiteral("nodes at the cluster scope")));
        // A cluster-wide rule says where it goes: nodes cannot be granted by a Role.
        QVERIFY2(capacity.fix.contains(QStringLiteral("# needed by: capacity (in a ClusterRole)\n- apiGroups: [\"\"]\n  resources: [\"nodes\"]")),
                 qPrintable(capacity.fix));
        // CRDs are not readable either: the release is unknown, and that is a warning too.
        const ConnectionCheck &kuberay = check(*test, QStringLiteral("kuberay"));
        QCOMPARE(kuberay.outcome, Outcome::Warning);
        QVERIFY(kuberay.fix.contains(QStringLiteral("customresourcedefinitions")));
        QVERIFY(test->summary().contains(QStringLiteral("with a warning")));
    }

    void aRefusedTokenFailsSignIn()
    {
        const QString problem = run({{QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("not-a-token-9999")}});
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        const auto &test = m_test;
        QVERIFY(!test->passed());
        // The server answered, with a 401: it is there, the credentials are what is wrong.
        QCOMPARE(check(*test, QStringLiteral("server")).outcome, Outcome::Passed);
        const ConnectionCheck &identity = check(*test, QStringLiteral("identity"));
        QCOMPARE(identity.outcome, Outcome::Failed);
        QVERIFY(identity.fix.contains(QStringLiteral("Sign-in")));
        QVERIFY(check(*test, QStringLiteral("feature:jobs")).outcome != Outcome::Passed);
        // The token never appears in what is shown.
        for (const ConnectionCheck &c : test->checks()) QVERIFY(!c.detail.contains(QStringLiteral("not-a-token-9999")));
        QCOMPARE(check(*test, QStringLiteral("bucket")).outcome, Outcome::Passed);
    }

    void aMissingBucketFailsOnlyTheBucket()
    {
        const QString problem = run({{QStringLiteral("FORGE_S3_BUCKET"), QStringLiteral("no-such-bucket")}});
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        const auto &test = m_test;
        QVERIFY(!test->passed());
        const ConnectionCheck &bucket = check(*test, QStringLiteral("bucket"));
        QCOMPARE(bucket.outcome, Outcome::Failed);
        QVERIFY2(bucket.detail.contains(QStringLiteral("no-such-bucket")) && bucket.detail.contains(QStringLiteral("FORGE_S3_BUCKET")), qPrintable(bucket.detail));
        QCOMPARE(check(*test, QStringLiteral("feature:jobs")).outcome, Outcome::Passed);
        QCOMPARE(test->summary(), QStringLiteral("%1 of %2 checks passed, 1 failed").arg(test->checks().size() - 1).arg(test->checks().size()));
    }

    void aServerThatDoesNotAnswerSkipsWhatNeedsIt()
    {
        // A port nothing listens on; the bucket is still checked beside it.
        const QString problem = run({{QStringLiteral("FORGE_K8S_API_SERVER"), QStringLiteral("https://127.0.0.1:9")}});
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        const auto &test = m_test;
        QCOMPARE(check(*test, QStringLiteral("server")).outcome, Outcome::Failed);
        QVERIFY(check(*test, QStringLiteral("server")).fix.contains(QStringLiteral("FORGE_K8S_API_SERVER")));
        for (const QString &id : {QStringLiteral("identity"), QStringLiteral("kuberay"), QStringLiteral("feature:jobs")}) {
            QCOMPARE(check(*test, id).outcome, Outcome::Skipped);
            QVERIFY(check(*test, id).detail.contains(QStringLiteral("API server")));
        }
        QCOMPARE(check(*test, QStringLiteral("bucket")).outcome, Outcome::Passed);
        QVERIFY(!test->passed());
    }

    void anInvalidSettingStopsBeforeAnyRequest()
    {
        const QString problem = run({{QStringLiteral("FORGE_K8S_SHM_SIZE"), QStringLiteral("64GB")}});
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        const auto &test = m_test;
        const ConnectionCheck &settings = check(*test, QStringLiteral("settings"));
        QCOMPARE(settings.outcome, Outcome::Failed);
        QVERIFY2(settings.detail.contains(QStringLiteral("FORGE_K8S_SHM_SIZE")), qPrintable(settings.detail));
        for (const ConnectionCheck &c : test->checks()) {
            if (c.id != u"settings") QCOMPARE(c.outcome, Outcome::Skipped);
        }
    }

    void cancelledTestsStaySilent()
    {
        ConnectionTest test(&m_secrets, QProcessEnvironment());
        QSignalSpy finished(&test, &ConnectionTest::finished);
        test.start(SessionSource::ofConnectionFile(connectionFile()));
        test.cancel();
        QVERIFY(!test.isRunning());
        QTest::qWait(500);
        QVERIFY(finished.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestConnectionTest)
#include "tst_connectiontest.moc"
