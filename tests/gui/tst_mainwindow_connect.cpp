// The main window connects to the active profile's cluster (the sandbox over TLS): the status
// bar names the server and version when the token may do everything, lists what a weaker token
// cannot use, and says why a wrong token or an untrusted certificate keeps it out.

#include "core/config/profilemanager.h"
#include "core/session/session.h"
#include "gui/mainwindow.h"
#include "scriptedprompts.h"
#include "support/memorysecretstore.h"
#include "support/sandboxfixture.h"
#include "support/testutil.h"

#include <QLabel>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;

class TestMainWindowConnect : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<Testing::SandboxHttp> m_http;

private Q_SLOTS:
    void initTestCase()
    {
        const QString rbac = m_dir.filePath(QStringLiteral("rbac.json"));
        QVERIFY(Testing::writeFile(rbac, R"({"users":[{"name":"viewer","token":"viewer-token","rules":[{"apiGroups":[""],"resources":["pods","pods/log"],"verbs":["get","list","watch"],"namespaces":["starforge"]}]}]})"));
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("h200:1x8");
        options.rbacFile = rbac;
        QString error;
        QVERIFY2(Testing::startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
    }
    void cleanupTestCase()
    {
        m_http.reset();
        m_sandbox.reset();
    }

    void connectsAndSaysWhatTheTokenMayDo()
    {
        Config::ProfileStore store(m_dir.filePath(QStringLiteral("p.ini")));
        Testing::MemorySecretStore secrets;
        Config::ProfileManager manager(&store, &secrets);
        Testing::ScriptedPrompts prompts;
        const QString server = m_sandbox->apiServerUrl().toString();
        QVERIFY(store.addProfile(QStringLiteral("sandbox")).ok());
        QVERIFY(store.setValue(QStringLiteral("sandbox"), QStringLiteral("FORGE_K8S_API_SERVER"), server).ok());
        QVERIFY(store.setValue(QStringLiteral("sandbox"), QStringLiteral("FORGE_K8S_CA_FILE"), m_sandbox->caFile()).ok());
        bool written = false;
        secrets.write(QStringLiteral("sandbox"), QStringLiteral("FORGE_K8S_TOKEN"), QString::fromLatin1(m_sandbox->token()), this,
                      [&](Result<void> r) { written = r.ok(); });
        QTRY_VERIFY(written);
        QVERIFY(manager.setActiveProfile(QStringLiteral("sandbox")).ok());

        Gui::MainWindow window(&manager, &prompts, QProcessEnvironment());
        window.show();
        auto *status = window.findChild<QLabel *>(QStringLiteral("connectionStatus"));
        QTRY_VERIFY(window.session()->isUp());
        QVERIFY2(status->text().startsWith(QStringLiteral("Connected to ") + server), qPrintable(status->text()));
        QVERIFY2(status->text().contains(QStringLiteral("namespace starforge")), qPrintable(status->text()));
        // The token may do everything; only job tracking is off, for want of a bucket.
        QCOMPARE(window.session()->state(), Session::State::Degraded);
        for (const FeatureStatus &feature : window.session()->features()) {
            QVERIFY2(feature.available == (feature.id != u"jobs"), qPrintable(feature.id + u' ' + feature.reason));
        }
        QVERIFY(window.session()->feature(QStringLiteral("jobs"))->reason.contains(QStringLiteral("FORGE_S3_ENDPOINT")));
        QVERIFY(window.session()->feature(QStringLiteral("jobs"))->roleRule.isEmpty());
        QVERIFY(!window.session()->serverVersion().isEmpty());

        // A weaker token: connected, and the status says which features it cannot use.
        written = false;
        manager.setValues(QStringLiteral("sandbox"), {{QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("viewer-token")}}, false, this,
                          [&](Result<void> r) { written = r.ok(); });
        QTRY_VERIFY(written);
        QTRY_VERIFY(window.session()->state() == Session::State::Degraded && !window.session()->feature(QStringLiteral("capacity"))->available);
        QVERIFY2(status->text().contains(QStringLiteral("Capacity heatmap and fit verdicts is unavailable: the token cannot list nodes at the cluster scope")),
                 qPrintable(status->text()));
        // The status's tooltip gives the rules an administrator would grant.
        QVERIFY2(status->toolTip().contains(QStringLiteral("resources: [\"nodes\"]")) && status->toolTip().contains(QStringLiteral("resources: [\"rayjobs\"]")),
                 qPrintable(status->toolTip()));

        // A token the cluster does not know.
        written = false;
        manager.setValues(QStringLiteral("sandbox"), {{QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("stale-token")}}, false, this,
                          [&](Result<void> r) { written = r.ok(); });
        QTRY_VERIFY(written);
        QTRY_VERIFY(window.session()->state() == Session::State::Disconnected && window.session()->error());
        QVERIFY2(status->text().contains(QStringLiteral("401 Unauthorized")), qPrintable(status->text()));

        // The wrong CA: refused, and the sentence says what to give.
        written = false;
        manager.setValues(QStringLiteral("sandbox"), {{QStringLiteral("FORGE_K8S_TOKEN"), QString::fromLatin1(m_sandbox->token())},
                                                      {QStringLiteral("FORGE_K8S_CA_FILE"), Testing::dataPath(QStringLiteral("kubeconfig/ca.pem"))}},
                          false, this, [&](Result<void> r) { written = r.ok(); });
        QTRY_VERIFY(written);
        QTRY_VERIFY(window.session()->state() == Session::State::Disconnected && window.session()->error());
        QVERIFY2(status->text().contains(QStringLiteral("is not trusted")), qPrintable(status->text()));
    }
};

QTEST_MAIN(TestMainWindowConnect)
#include "tst_mainwindow_connect.moc"
