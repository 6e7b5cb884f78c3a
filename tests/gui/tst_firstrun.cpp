// A first run: the window offers three ways in and each works. Entering a server makes a profile
// (its token in the keychain only), makes it active and tests it; the embedded sandbox starts as
// a child process and the window connects to it with no profile written; the kubeconfig way
// opens the profiles dialog's import.

#include "core/config/profilemanager.h"
#include "core/session/connectiontest.h"
#include "core/session/session.h"
#include "gui/connectiontestdialog.h"
#include "gui/firstrunpanel.h"
#include "gui/mainwindow.h"
#include "gui/newconnectiondialog.h"
#include "gui/profilesdialog.h"
#include "scriptedprompts.h"
#include "support/memorysecretstore.h"
#include "support/sandboxfixture.h"
#include "support/testutil.h"
#include "windowsetup.h"

#include <QCommandLinkButton>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;

class TestFirstRun : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;

    static QCommandLinkButton *way(Gui::MainWindow &window, const char *name)
    {
        return window.findChild<QCommandLinkButton *>(QString::fromLatin1(name));
    }

private Q_SLOTS:
    void threeWaysInUntilThereIsAConnection()
    {
        Testing::WindowSetup setup(m_dir.filePath(QStringLiteral("a.ini")));
        auto &[store, secrets, manager, prompts] = setup;
        Gui::MainWindow window(&manager, &prompts, QProcessEnvironment());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.firstRunPanel()->isVisible());
        QVERIFY(!window.findChild<QPushButton *>(QStringLiteral("setupButton"))->isVisible());
        for (const char *name : {"importKubeconfigWay", "enterServerWay", "trySandboxWay"}) {
            QCommandLinkButton *button = way(window, name);
            QVERIFY2(button && button->isVisible() && button->isEnabled(), name);
            QVERIFY2(!button->accessibleDescription().isEmpty(), name);
        }
        // Import opens the profiles dialog and asks for the kubeconfig file (cancelled here).
        QTest::mouseClick(way(window, "importKubeconfigWay"), Qt::LeftButton);
        QTRY_COMPARE(window.findChildren<Gui::ProfilesDialog *>().size(), 1);
        QVERIFY2(prompts.asked.value(0).startsWith(QStringLiteral("file: Import kubeconfig")), qPrintable(prompts.asked.join(u'\n')));
        QVERIFY(store.profileNames().isEmpty());

        // A profile appears some other way: the ways in make room for the profiles button.
        QVERIFY(store.addProfile(QStringLiteral("lab")).ok());
        QVERIFY(manager.setActiveProfile(QStringLiteral("lab")).ok());
        QTRY_VERIFY(!window.firstRunPanel()->isVisible());
        QVERIFY(window.findChild<QPushButton *>(QStringLiteral("setupButton"))->isVisible());
    }

    void enterAServer()
    {
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("h200:1x8");
        std::unique_ptr<Sandbox::Sandbox> sandbox;
        std::unique_ptr<Testing::SandboxHttp> http;
        QString error;
        QVERIFY2(Testing::startSandbox(sandbox, http, options, &error), qPrintable(error));

        Testing::WindowSetup setup(m_dir.filePath(QStringLiteral("b.ini")));
        auto &[store, secrets, manager, prompts] = setup;
        Gui::MainWindow window(&manager, &prompts, QProcessEnvironment());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTest::mouseClick(way(window, "enterServerWay"), Qt::LeftButton);
        auto *form = window.findChild<Gui::NewConnectionDialog *>();
        QVERIFY(form);
        QTRY_VERIFY(form->isVisible());
        auto *create = form->findChild<QPushButton *>(QStringLiteral("createButton"));
        auto *problems = form->findChild<QLabel *>(QStringLiteral("problemsLabel"));
        // Empty: Create is off and the form says what is missing.
        QVERIFY(!create->isEnabled());
        QVERIFY2(problems->text().contains(QStringLiteral("API server")) && problems->text().contains(QStringLiteral("Token")), qPrintable(problems->text()));
        auto *server = form->findChild<QLineEdit *>(QStringLiteral("serverEdit"));
        QTest::keyClicks(server, QStringLiteral("ftp://nowhere"));
        QVERIFY2(problems->text().contains(QStringLiteral("FORGE_K8S_API_SERVER")), qPrintable(problems->text()));
        server->clear();
        QTest::keyClicks(server, sandbox->apiServerUrl().toString());
        QTest::keyClicks(form->findChild<QLineEdit *>(QStringLiteral("tokenEdit")), QString::fromLatin1(sandbox->token()));
        QTest::keyClicks(form->findChild<QLineEdit *>(QStringLiteral("caFileEdit")), sandbox->caFile());
        QVERIFY2(create->isEnabled(), qPrintable(problems->text()));
        QVERIFY(problems->text().isEmpty());
        QTest::mouseClick(create, Qt::LeftButton);

        // A profile, active, its token in the keychain alone; the window connects and the
        // profiles dialog tests it.
        QTRY_COMPARE(store.activeProfile(), QStringLiteral("my-cluster"));
        QCOMPARE(secrets.entries.value(QStringLiteral("my-cluster/FORGE_K8S_TOKEN")), QString::fromLatin1(sandbox->token()));
        QVERIFY(!Testing::readAll(store.filePath()).contains(sandbox->token()));
        QTRY_VERIFY_WITH_TIMEOUT(window.session()->isUp(), 20000);
        auto *test = window.findChild<Gui::ConnectionTestDialog *>();
        QVERIFY(test);
        QTRY_VERIFY_WITH_TIMEOUT(!test->test()->isRunning(), 20000);
        // The cluster parts pass; the bucket is not set up yet, and the test says so.
        for (const ConnectionCheck &check : test->test()->checks()) {
            if (check.id == u"bucket") QCOMPARE(check.outcome, ConnectionCheck::Outcome::Failed);
            else QVERIFY2(check.outcome == ConnectionCheck::Outcome::Passed, qPrintable(check.id + u' ' + check.detail));
        }
        QVERIFY(!window.firstRunPanel()->isVisible());
    }

    void tryTheSandbox()
    {
        Testing::WindowSetup setup(m_dir.filePath(QStringLiteral("c.ini")));
        auto &[store, secrets, manager, prompts] = setup;
        QString connectionFile;
        {
            Gui::MainWindow window(&manager, &prompts, QProcessEnvironment());
            window.setSandboxProgram(QStringLiteral(SF_BIN_DIR "/starforge-sandbox"));
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            QTest::mouseClick(way(window, "trySandboxWay"), Qt::LeftButton);
            auto *status = window.findChild<QLabel *>(QStringLiteral("firstRunStatus"));
            QVERIFY2(status->text().contains(QStringLiteral("Starting the sandbox")), qPrintable(status->text()));
            QVERIFY(!way(window, "enterServerWay")->isEnabled()); // one way at a time
            QTRY_VERIFY_WITH_TIMEOUT(window.session()->isUp(), 60000);
            QVERIFY(window.isOnSandbox());
            QCOMPARE(window.findChild<QLabel *>(QStringLiteral("profileStatus"))->text(), QStringLiteral("Sandbox (until the app quits)"));
            QVERIFY(window.windowTitle().startsWith(QStringLiteral("Sandbox")));
            QVERIFY(!window.firstRunPanel()->isVisible());
            // Nothing of the sandbox is kept: no profile, no secret.
            QVERIFY(store.profileNames().isEmpty());
            QVERIFY(secrets.entries.isEmpty());
            connectionFile = window.session()->source().connectionFile;
            QVERIFY(QFileInfo::exists(connectionFile));
        }
        // The window gone, the sandbox stops with it and takes its connection file.
        QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(connectionFile), 15000);
    }

    void aSandboxThatCannotStartSaysWhy()
    {
        Testing::WindowSetup setup(m_dir.filePath(QStringLiteral("d.ini")));
        auto &[store, secrets, manager, prompts] = setup;
        Gui::MainWindow window(&manager, &prompts, QProcessEnvironment());
        window.setSandboxProgram(m_dir.filePath(QStringLiteral("no-such-sandbox")));
        window.show();
        window.trySandbox();
        auto *status = window.findChild<QLabel *>(QStringLiteral("firstRunStatus"));
        QTRY_VERIFY2_WITH_TIMEOUT(status->text().startsWith(QStringLiteral("The sandbox did not start")), qPrintable(status->text()), 15000);
        QVERIFY(way(window, "trySandboxWay")->isEnabled()); // it can be tried again
        QVERIFY(!window.isOnSandbox());
    }
};

QTEST_MAIN(TestFirstRun)
#include "tst_firstrun.moc"
