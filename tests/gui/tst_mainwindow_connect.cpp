// The main window connects to the active profile's cluster (the sandbox over TLS): the status
// bar names the server and version when the token may do everything, lists what a weaker token
// cannot use, and says why a wrong token or an untrusted certificate keeps it out. The profiles
// dialog's Test connection shows the same parts one row each, with the rules and settings to fix.

#include "core/config/profilemanager.h"
#include "core/session/session.h"
#include "core/session/connectiontest.h"
#include "gui/connectiontestdialog.h"
#include "gui/mainwindow.h"
#include "gui/profilesdialog.h"
#include "scriptedprompts.h"
#include "support/memorysecretstore.h"
#include "support/sandboxfixture.h"
#include "support/testutil.h"
#include "windowsetup.h"

#include <QApplication>
#include <QClipboard>
#include <QLabel>
#include <QPushButton>
#include <QTreeWidget>
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
        Testing::WindowSetup setup(m_dir.filePath(QStringLiteral("p.ini")));
        auto &[store, secrets, manager, prompts] = setup;
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

    void profilesDialogTestsTheConnection()
    {
        Testing::WindowSetup setup(m_dir.filePath(QStringLiteral("t.ini")));
        auto &[store, secrets, manager, prompts] = setup;
        QVERIFY(store.addProfile(QStringLiteral("viewer")).ok());
        QVERIFY(store.setValue(QStringLiteral("viewer"), QStringLiteral("FORGE_K8S_API_SERVER"), m_sandbox->apiServerUrl().toString()).ok());
        QVERIFY(store.setValue(QStringLiteral("viewer"), QStringLiteral("FORGE_K8S_CA_FILE"), m_sandbox->caFile()).ok());
        bool written = false;
        secrets.write(QStringLiteral("viewer"), QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("viewer-token"), this, [&](Result<void> r) { written = r.ok(); });
        QTRY_VERIFY(written);

        Gui::ProfilesDialog dialog(&manager, &prompts, QProcessEnvironment());
        dialog.show();
        dialog.selectProfile(QStringLiteral("viewer"));
        auto *test = dialog.findChild<QPushButton *>(QStringLiteral("testButton"));
        QVERIFY(test && test->isEnabled());
        QTest::mouseClick(test, Qt::LeftButton);
        auto *window = dialog.findChild<Gui::ConnectionTestDialog *>();
        QVERIFY(window);
        QTRY_VERIFY(window->isVisible());
        auto *list = window->findChild<QTreeWidget *>(QStringLiteral("checksList"));
        QCOMPARE(list->topLevelItemCount(), window->test()->checks().size());
        QTRY_VERIFY_WITH_TIMEOUT(!window->test()->isRunning(), 20000);

        // The viewer may read pods and logs: those pass; the rest are warnings with their
        // rules; the profile has no bucket, which fails and names the setting.
        QHash<QString, QString> results;
        for (int i = 0; i < list->topLevelItemCount(); ++i) results.insert(list->topLevelItem(i)->text(0), list->topLevelItem(i)->text(1));
        QCOMPARE(results.value(QStringLiteral("API server")), QStringLiteral("OK"));
        QCOMPARE(results.value(QStringLiteral("Signed in as")), QStringLiteral("OK"));
        QCOMPARE(results.value(QStringLiteral("Live logs")), QStringLiteral("OK"));
        QCOMPARE(results.value(QStringLiteral("Event timeline and diagnosis")), QStringLiteral("Warning"));
        QCOMPARE(results.value(QStringLiteral("Object storage bucket")), QStringLiteral("Failed"));
        auto *heading = window->findChild<QLabel *>(QStringLiteral("testHeading"));
        QVERIFY2(heading->text().contains(QStringLiteral("has a problem")), qPrintable(heading->text()));
        // The first failure is selected and explained under the list.
        QCOMPARE(list->currentItem()->text(0), QStringLiteral("Object storage bucket"));
        auto *detail = window->findChild<QLabel *>(QStringLiteral("checkDetail"));
        QVERIFY2(detail->text().contains(QStringLiteral("FORGE_S3_ENDPOINT")), qPrintable(detail->text()));
        // A warning's row shows the Role rules that would allow the feature.
        for (int i = 0; i < list->topLevelItemCount(); ++i) {
            if (list->topLevelItem(i)->text(0) == u"Event timeline and diagnosis") list->setCurrentItem(list->topLevelItem(i));
        }
        QVERIFY2(detail->text().contains(QStringLiteral("resources: [\"events\"]")), qPrintable(detail->text()));
        QVERIFY(!list->currentItem()->data(0, Qt::AccessibleDescriptionRole).toString().isEmpty());

        // Copy report: the whole result, for a ticket, without the token.
        QTest::mouseClick(window->findChild<QPushButton *>(QStringLiteral("copyReportButton")), Qt::LeftButton);
        const QString report = QApplication::clipboard()->text();
        QVERIFY2(report.contains(QStringLiteral("profile viewer")) && report.contains(QStringLiteral("Object storage bucket: Failed")), qPrintable(report));
        QVERIFY(!report.contains(QStringLiteral("viewer-token")));

        // Run again tests afresh, and ends the same way.
        QTest::mouseClick(window->findChild<QPushButton *>(QStringLiteral("runAgainButton")), Qt::LeftButton);
        QVERIFY(window->test()->isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(!window->test()->isRunning(), 20000);
        QVERIFY(!window->test()->passed());
    }
};

QTEST_MAIN(TestMainWindowConnect)
#include "tst_mainwindow_connect.moc"
