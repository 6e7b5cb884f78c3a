// `starforge-cli cluster-setup` applied to the sandbox with kubectl, as an administrator would,
// then the app's own permission check (ConnectionTest) with the ServiceAccount's token: every
// feature and the KubeRay probe pass; and the YAML without any one of its rules switches off
// exactly the features that needed that rule, the others still passing. So the YAML grants what
// the check asks for, nothing it does not need, and each rule is needed. The sandbox's RBAC reads
// Roles and bindings at each request, so a change counts at once (sandbox/api/authorizer.h).

#include "core/kube/clustersetup.h"
#include "core/session/connectiontest.h"
#include "support/memorysecretstore.h"
#include "support/sandboxfixture.h"
#include "support/testutil.h"

#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using Outcome = ConnectionCheck::Outcome;

namespace {
struct Run
{
    int exitCode = -1;
    QString out;
    QString err;
};
} // namespace

class TestClusterSetup : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<Testing::SandboxHttp> m_http;
    Testing::MemorySecretStore m_secrets;
    QString m_kubectl;
    QString m_token;   // the ServiceAccount's, once the token controller filled it in
    const QString m_ns = QStringLiteral("team-a");
    const QString m_user = QStringLiteral("alice");

    QString connectionFile() const { return m_dir.filePath(QStringLiteral("conn.json")); }

    // The sandbox runs in this process: the event loop must turn while a client talks to it.
    Run run(const QString &program, const QStringList &args, const QString &input = {}, const QMap<QString, QString> &env = {})
    {
        QProcess p;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        for (auto it = env.cbegin(); it != env.cend(); ++it) environment.insert(it.key(), it.value());
        p.setProcessEnvironment(environment);
        QSignalSpy finished(&p, &QProcess::finished);
        p.start(program, args);
        if (!p.waitForStarted(10000)) return {};
        if (!input.isEmpty()) p.write(input.toUtf8());
        p.closeWriteChannel();
        if (finished.isEmpty() && !finished.wait(30000)) {
            p.kill();
            p.waitForFinished();
            return {};
        }
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
                QString::fromUtf8(p.readAllStandardError())};
    }
    Run kubectl(const QStringList &args, const QString &input = {})
    {
        // A cache directory per run: kubectl caches discovery per host:port.
        return run(m_kubectl,
                   QStringList{QStringLiteral("--kubeconfig"), m_sandbox->kubeconfigFile(), QStringLiteral("--cache-dir"),
                               m_dir.filePath(QStringLiteral("cache")), QStringLiteral("--request-timeout"), QStringLiteral("20s")}
                       + args,
                   input);
    }
    Run cli(const QStringList &args, const QMap<QString, QString> &env = {})
    {
        return run(QStringLiteral(SF_BIN_DIR "/starforge-cli"), args, {}, env);
    }
    // kubectl apply as an administrator pipes the YAML into it (the sandbox serves no OpenAPI).
    QString apply(const QString &yaml)
    {
        const Run applied = kubectl({QStringLiteral("apply"), QStringLiteral("--validate=false"), QStringLiteral("-f"), QStringLiteral("-")}, yaml);
        return applied.exitCode == 0 ? QString() : applied.out + applied.err;
    }

    // The connection test as the researcher's app runs it: the sandbox's connection file with the
    // ServiceAccount's token and namespace over it. Null when it did not finish.
    std::unique_ptr<ConnectionTest> check(const QString &token)
    {
        QProcessEnvironment environment;
        environment.insert(QStringLiteral("FORGE_K8S_TOKEN"), token);
        environment.insert(QStringLiteral("FORGE_K8S_NAMESPACE"), m_ns);
        auto test = std::make_unique<ConnectionTest>(&m_secrets, environment);
        QSignalSpy finished(test.get(), &ConnectionTest::finished);
        test->start(SessionSource::ofConnectionFile(connectionFile()));
        if (!finished.wait(30000) && finished.isEmpty()) return nullptr;
        return test;
    }
    static const ConnectionCheck *find(const ConnectionTest &test, const QString &id)
    {
        for (const ConnectionCheck &c : test.checks()) {
            if (c.id == id) return &c;
        }
        return nullptr;
    }
    // What each rule-dependent check must show: "feature:<id>" and "kuberay", Passed or Warning.
    static QString describe(const ConnectionTest &test)
    {
        QStringList lines;
        for (const ConnectionCheck &c : test.checks()) lines << c.id + u' ' + ConnectionCheck::outcomeName(c.outcome) + u' ' + c.detail;
        return lines.join(u'\n');
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_kubectl = QStandardPaths::findExecutable(QStringLiteral("kubectl"));
        QVERIFY2(!m_kubectl.isEmpty(), "kubectl must be on PATH (it is part of the build image)");
        Sandbox::SandboxOptions options;
        options.connectionFile = connectionFile();
        options.fleet = QStringLiteral("h200:1x8");
        QString error;
        QVERIFY2(Testing::startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
    }
    void cleanupTestCase()
    {
        m_http.reset();
        m_sandbox.reset();
    }

    void theCommandPrintsTheSetupForTheProfilesNamespace()
    {
        // The namespace comes from the connection file (starforge), the account's default name.
        const Run plain = cli({QStringLiteral("--connection-file"), connectionFile(), QStringLiteral("cluster-setup")});
        QVERIFY2(plain.exitCode == 0, qPrintable(plain.err));
        Kube::ClusterSetup expected;
        expected.ns = QStringLiteral("starforge");
        QCOMPARE(plain.out, expected.yaml());
        QVERIFY(plain.out.contains(QStringLiteral("name: starforge-user")));
        QVERIFY2(plain.err.contains(QStringLiteral("namespace starforge")), qPrintable(plain.err));
        // The environment over the file, as everywhere; --user names the account.
        const Run env = cli({QStringLiteral("--connection-file"), connectionFile(), QStringLiteral("cluster-setup"), QStringLiteral("--user"), m_user},
                            {{QStringLiteral("FORGE_K8S_NAMESPACE"), m_ns}});
        QVERIFY2(env.exitCode == 0, qPrintable(env.err));
        QVERIFY(env.out.contains(QStringLiteral("kind: Namespace\nmetadata:\n  name: team-a\n")));
        QVERIFY(env.out.contains(QStringLiteral("kind: ClusterRoleBinding\nmetadata:\n  name: team-a-alice\n")));
        // No profile at all: the setting's default namespace; a bad name is the user's error.
        const QMap<QString, QString> noProfiles{{QStringLiteral("STARFORGE_CONFIG_FILE"), m_dir.filePath(QStringLiteral("none.ini"))}};
        const Run fallback = cli({QStringLiteral("cluster-setup"), QStringLiteral("--namespace"), QStringLiteral("ml")}, noProfiles);
        QVERIFY2(fallback.exitCode == 0 && fallback.out.contains(QStringLiteral("  namespace: ml\n")), qPrintable(fallback.err));
        const Run bad = cli({QStringLiteral("cluster-setup"), QStringLiteral("--namespace"), QStringLiteral("Not_A_Namespace")}, noProfiles);
        QCOMPARE(bad.exitCode, 1);
        QVERIFY(bad.out.isEmpty());
        QVERIFY2(bad.err.contains(QStringLiteral("--namespace Not_A_Namespace")), qPrintable(bad.err));
    }

    void appliedItGivesATokenThatPassesEveryCheck()
    {
        const Run printed = cli({QStringLiteral("--connection-file"), connectionFile(), QStringLiteral("cluster-setup"), QStringLiteral("--user"), m_user,
                                 QStringLiteral("--namespace"), m_ns});
        QVERIFY2(printed.exitCode == 0, qPrintable(printed.err));
        const QString problem = apply(printed.out);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        // The token controller fills the Secret in.
        QTRY_VERIFY_WITH_TIMEOUT(!(m_token = QString::fromLatin1(QByteArray::fromBase64(
                                       kubectl({QStringLiteral("-n"), m_ns, QStringLiteral("get"), QStringLiteral("secret"), QStringLiteral("alice-token"),
                                                QStringLiteral("-o"), QStringLiteral("jsonpath={.data.token}")})
                                           .out.toLatin1())))
                                      .isEmpty(),
                                 10000);
        const auto test = check(m_token);
        QVERIFY2(test, "the connection test did not finish");
        for (const ConnectionCheck &c : test->checks()) QVERIFY2(c.outcome == Outcome::Passed, qPrintable(describe(*test)));
        QVERIFY(find(*test, QStringLiteral("identity"))->detail.startsWith(QStringLiteral("system:serviceaccount:team-a:alice")));
        QVERIFY(find(*test, QStringLiteral("kuberay"))->detail.contains(QStringLiteral("KubeRay 1.7")));
        // Applying it again changes nothing that matters (kubectl apply is the way to update it).
        QVERIFY(apply(printed.out).isEmpty());
        QVERIFY(check(m_token)->passed());
    }

    void withoutAnyOneRuleExactlyTheFeaturesThatNeedItGoOff()
    {
        QVERIFY2(!m_token.isEmpty(), "needs the token of the previous test");
        const QList<Kube::AccessRule> rules = Kube::accessRules();
        QVERIFY(rules.size() >= 5);
        for (qsizetype i = 0; i < rules.size(); ++i) {
            const Kube::AccessRule &removed = rules.at(i);
            const QString what = removed.resource + (removed.clusterWide ? QStringLiteral(" (cluster)") : QString());
            QList<Kube::AccessRule> rest = rules;
            rest.removeAt(i);
            // What RBAC leaves allowed: a need is met while some remaining rule allows it.
            const auto met = [&rest](const Kube::Permission &p) {
                return std::any_of(rest.cbegin(), rest.cend(), [&p](const Kube::AccessRule &r) { return r.allows(p); });
            };
            QSet<QString> off;
            for (const Kube::Feature &f : Kube::Feature::all()) {
                if (!std::all_of(f.needs.cbegin(), f.needs.cend(), met)) off.insert(QStringLiteral("feature:") + f.id);
            }
            if (!met(Kube::operatorProbePermission())) off.insert(QStringLiteral("kuberay"));
            QVERIFY2(!off.isEmpty(), qPrintable(QStringLiteral("the rule for %1 is needed by nothing").arg(what)));

            Kube::ClusterSetup setup;
            setup.ns = m_ns;
            setup.serviceAccount = m_user;
            setup.rules = rest;
            const QString problem = apply(setup.yaml());
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
            const auto test = check(m_token);
            QVERIFY2(test, "the connection test did not finish");
            for (const ConnectionCheck &c : test->checks()) {
                const bool ruled = c.id.startsWith(QLatin1String("feature:")) || c.id == QLatin1String("kuberay");
                const Outcome expected = ruled && off.contains(c.id) ? Outcome::Warning : Outcome::Passed;
                QVERIFY2(c.outcome == expected, qPrintable(QStringLiteral("without %1, %2 should be %3:\n%4")
                                                               .arg(what, c.id, ConnectionCheck::outcomeName(expected), describe(*test))));
            }
            // A feature that went off says what it lacks, and the rules that would give it back.
            for (const QString &id : std::as_const(off)) {
                if (id == QLatin1String("kuberay")) continue;
                const ConnectionCheck *c = find(*test, id);
                QVERIFY2(c->detail.contains(removed.resource.section(u'/', 0, 0)), qPrintable(c->detail));
                QVERIFY2(c->fix.contains(QStringLiteral("resources: [\"%1\"]").arg(removed.resource)), qPrintable(c->fix));
            }
        }
        Kube::ClusterSetup full;
        full.ns = m_ns;
        full.serviceAccount = m_user;
        QVERIFY(apply(full.yaml()).isEmpty());
        QVERIFY2(check(m_token)->passed(), "the whole setup applied again gives everything back");
    }

    void deletingTheTokenSecretRevokesTheToken()
    {
        QVERIFY(!m_token.isEmpty());
        QCOMPARE(kubectl({QStringLiteral("-n"), m_ns, QStringLiteral("delete"), QStringLiteral("secret"), QStringLiteral("alice-token")}).exitCode, 0);
        const auto test = check(m_token);
        QVERIFY(test);
        QCOMPARE(find(*test, QStringLiteral("identity"))->outcome, Outcome::Failed);
        // A token Secret must name its ServiceAccount, as the API server requires.
        const Run refused = kubectl({QStringLiteral("-n"), m_ns, QStringLiteral("create"), QStringLiteral("--validate=false"), QStringLiteral("-f"),
                                     QStringLiteral("-")},
                                    QStringLiteral("apiVersion: v1\nkind: Secret\nmetadata: {name: loose}\ntype: kubernetes.io/service-account-token\n"));
        QVERIFY(refused.exitCode != 0);
        QVERIFY2(refused.err.contains(QStringLiteral("kubernetes.io/service-account.name")), qPrintable(refused.err));
    }
};

QTEST_GUILESS_MAIN(TestClusterSetup)
#include "tst_clustersetup.moc"
