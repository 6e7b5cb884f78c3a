// The main window: menus, docks, the status bar's profile and connection state, the TLS warning,
// and switching the active profile from the toolbar.

#include "core/config/profilemanager.h"
#include "core/i18n/translations.h"
#include "core/session/session.h"
#include "gui/jobs/jobspanel.h"
#include "gui/mainwindow.h"
#include "gui/notify/jobstray.h"
#include "gui/profilesdialog.h"
#include "scriptedprompts.h"
#include "support/memorysecretstore.h"
#include "windowsetup.h"

#include <QAction>
#include <QComboBox>
#include <QStatusBar>
#include <QFile>
#include <QHeaderView>
#include <QTableView>
#include <QDockWidget>
#include <QLabel>
#include <QMenu>
#include <QSettings>
#include <QSignalSpy>
#include <QSystemTrayIcon>
#include <QMenuBar>
#include <QTemporaryDir>
#include <QToolBar>
#include <QKeySequence>
#include <QTest>

using namespace Starforge;

class TestMainWindow : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;

private Q_SLOTS:
    // View › Language: the system's at first; a choice is kept beside the default profiles file
    // for the next start (main.cpp installs it before any window), the status bar says when it
    // takes effect, and STARFORGE_LANGUAGE still decides one run.
    void languageChoiceIsKeptForTheNextStart()
    {
        QTemporaryDir dir;
        qputenv("STARFORGE_CONFIG_FILE", dir.filePath(QStringLiteral("profiles.ini")).toUtf8());
        Testing::WindowSetup setup(dir.filePath(QStringLiteral("profiles.ini")));
        auto &[store, secrets, manager, prompts] = setup;
        {
            Gui::MainWindow window(&manager, &prompts, QProcessEnvironment());
            auto *system = window.findChild<QAction *>(QStringLiteral("language_system"));
            auto *german = window.findChild<QAction *>(QStringLiteral("language_de"));
            QVERIFY(system && german && window.findChild<QAction *>(QStringLiteral("language_zh_CN")));
            QVERIFY(system->isChecked());
            QCOMPARE(I18n::startLanguage(), QString());
            german->trigger();
            QVERIFY(german->isChecked() && !system->isChecked());
            QCOMPARE(I18n::savedLanguage(), QStringLiteral("de"));
            QVERIFY2(window.statusBar()->currentMessage().contains(QLatin1String("next start")), qPrintable(window.statusBar()->currentMessage()));
        }
        QCOMPARE(I18n::startLanguage(), QStringLiteral("de"));
        qputenv("STARFORGE_LANGUAGE", "zh_CN");
        QCOMPARE(I18n::startLanguage(), QStringLiteral("zh_CN"));
        qunsetenv("STARFORGE_LANGUAGE");
        Gui::MainWindow again(&manager, &prompts, QProcessEnvironment());
        QVERIFY(again.findChild<QAction *>(QStringLiteral("language_de"))->isChecked());
        qunsetenv("STARFORGE_CONFIG_FILE");
    }

    // Size, docks and the tables' columns come back after a restart, from window.ini beside
    // the profiles file; a window that was never closed leaves nothing behind.
    void geometryDocksAndColumnsSurviveARestart()
    {
        QTemporaryDir dir;
        Testing::WindowSetup setup(dir.filePath(QStringLiteral("profiles.ini")));
        auto &[store, secrets, manager, prompts] = setup;
        int jobsColumn = 0;
        QSize size;
        {
            Gui::MainWindow window(&manager, &prompts, QProcessEnvironment());
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            window.resize(1300, 777);
            QTRY_COMPARE(window.height(), 777);
            size = window.size();   // as wide as the docks let it be
            window.findChild<QDockWidget *>(QStringLiteral("logsDock"))->hide();
            QTableView *jobs = window.jobsPanel()->view();
            jobs->horizontalHeader()->resizeSection(1, 321);
            jobsColumn = jobs->horizontalHeader()->sectionSize(1);
            QVERIFY(!QFile::exists(window.windowStateFile()));
            window.close();
            QVERIFY(QFile::exists(window.windowStateFile()));
        }
        Gui::MainWindow again(&manager, &prompts, QProcessEnvironment());
        again.show();
        QVERIFY(QTest::qWaitForWindowExposed(&again));
        QCOMPARE(again.size(), size);
        QVERIFY(!again.findChild<QDockWidget *>(QStringLiteral("logsDock"))->isVisible());
        QVERIFY(again.findChild<QDockWidget *>(QStringLiteral("jobsDock"))->isVisible());
        QCOMPARE(again.jobsPanel()->view()->horizontalHeader()->sectionSize(1), jobsColumn);
    }

    // The tray: off by default, its choice kept; its menu lists the active jobs (a click opens
    // one) with Show and Quit, its tooltip counts them. Without a system tray (this platform),
    // closing the window closes it even with the tray on: nothing would bring it back.
    void trayIcon()
    {
        QTemporaryDir dir;
        Testing::WindowSetup setup(dir.filePath(QStringLiteral("profiles.ini")));
        auto &[store, secrets, manager, prompts] = setup;
        Gui::MainWindow window(&manager, &prompts, QProcessEnvironment());
        auto *trayAction = window.findChild<QAction *>(QStringLiteral("trayAction"));
        QVERIFY(trayAction && trayAction->isCheckable() && !trayAction->isChecked());
        QVERIFY(!window.tray()->isEnabled());
        trayAction->setChecked(true);
        QVERIFY(window.tray()->isEnabled());
        QCOMPARE(QSettings(window.windowStateFile(), QSettings::IniFormat).value(QStringLiteral("preferences/tray")).toBool(), true);

        Gui::JobsTray *tray = window.tray();
        QCOMPARE(tray->toolTip(), QStringLiteral("Starforge: no active jobs"));
        Job::JobRecord running;
        running.id = QStringLiteral("bcdfgh");
        running.rayJobName = QStringLiteral("grpo-math-bcdfgh");
        running.state = Job::JobState::Running;
        Job::JobRecord pending = running;
        pending.id = QStringLiteral("cdfghj");
        pending.rayJobName = QStringLiteral("grpo-math-cdfghj");
        pending.state = Job::JobState::Pending;
        tray->setActiveJobs({running, pending});
        QCOMPARE(tray->activeCount(), 2);
        QCOMPARE(tray->toolTip(), QStringLiteral("Starforge: 2 active job(s)"));
        QStringList entries;
        for (QAction *a : tray->menu()->actions()) {
            if (!a->isSeparator()) entries << a->text();
        }
        QCOMPARE(entries, (QStringList{QStringLiteral("grpo-math-bcdfgh — Running"), QStringLiteral("grpo-math-cdfghj — Pending"),
                                       QStringLiteral("&Show Starforge"), QStringLiteral("&Quit")}));
        QSignalSpy opened(tray, &Gui::JobsTray::jobRequested);
        tray->menu()->actions().at(1)->trigger();
        QCOMPARE(opened.size(), 1);
        QCOMPARE(opened.first().first().toString(), QStringLiteral("cdfghj"));

        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QCOMPARE(tray->keepsRunning(), QSystemTrayIcon::isSystemTrayAvailable());
        if (!tray->keepsRunning()) {
            QVERIFY(window.close());
            QVERIFY(!window.isVisible());
        }
        // Turned off again, and kept off.
        trayAction->setChecked(false);
        QCOMPARE(QSettings(window.windowStateFile(), QSettings::IniFormat).value(QStringLiteral("preferences/tray")).toBool(), false);
    }

    void layoutAndStatus()
    {
        Testing::WindowSetup setup(m_dir.filePath(QStringLiteral("w.ini")));
        auto &[store, secrets, manager, prompts] = setup;
        QProcessEnvironment env;
        Gui::MainWindow window(&manager, &prompts, env);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));

        QStringList menus;
        for (QAction *a : window.menuBar()->actions()) {
            menus.append(a->text());
        }
        QCOMPARE(menus, (QStringList{QStringLiteral("&File"), QStringLiteral("&View"), QStringLiteral("&Help")}));
        for (const char *dock : {"jobsDock", "jobDetailDock", "capacityDock", "eventsDock", "logsDock", "playgroundDock"}) {
            QVERIFY2(window.findChild<QDockWidget *>(QString::fromLatin1(dock)), dock);
        }
        auto *profileStatus = window.findChild<QLabel *>(QStringLiteral("profileStatus"));
        auto *connection = window.findChild<QLabel *>(QStringLiteral("connectionStatus"));
        auto *tls = window.findChild<QLabel *>(QStringLiteral("tlsWarning"));
        auto *combo = window.findChild<QComboBox *>(QStringLiteral("profileCombo"));
        QCOMPARE(profileStatus->text(), QStringLiteral("Profile: none"));
        QVERIFY(connection->text().contains(QStringLiteral("no connection profile")));
        QVERIFY(!combo->isEnabled());
        QVERIFY(!tls->isVisible());

        // Profiles arrive: the toolbar and status bar follow.
        QVERIFY(store.addProfile(QStringLiteral("lab")).ok());
        QVERIFY(store.setValue(QStringLiteral("lab"), QStringLiteral("FORGE_K8S_API_SERVER"), QStringLiteral("https://k8s.lab:6443")).ok());
        QVERIFY(store.setValue(QStringLiteral("lab"), QStringLiteral("FORGE_K8S_INSECURE_SKIP_TLS_VERIFY"), QStringLiteral("true")).ok());
        QVERIFY(store.addProfile(QStringLiteral("bare")).ok());
        QVERIFY(manager.setActiveProfile(QStringLiteral("bare")).ok());
        QCOMPARE(profileStatus->text(), QStringLiteral("Profile: bare"));
        QVERIFY2(connection->text().contains(QStringLiteral("FORGE_K8S_API_SERVER")), qPrintable(connection->text()));
        QVERIFY(combo->isEnabled());
        QCOMPARE(combo->currentText(), QStringLiteral("bare"));

        // Chosen as a person does, from the keyboard: focus the combo, type the name's start.
        combo->setFocus();
        QTest::keyClicks(combo, QStringLiteral("l"));
        QCOMPARE(combo->currentText(), QStringLiteral("lab"));
        QCOMPARE(store.activeProfile(), QStringLiteral("lab"));
        QCOMPARE(profileStatus->text(), QStringLiteral("Profile: lab"));
        // It tries at once, and says exactly why it cannot: this profile has no token.
        QTRY_VERIFY2(connection->text().startsWith(QStringLiteral("Not connected: No credential is set for https://k8s.lab:6443")),
                     qPrintable(connection->text()));
        QVERIFY(window.session()->state() == Session::State::Disconnected && window.session()->error());
        QVERIFY(tls->isVisible());
        QVERIFY(window.windowTitle().contains(QStringLiteral("lab")));

        // An invalid environment value is the state, not silently ignored.
        Gui::MainWindow withEnv(&manager, &prompts, [] {
            QProcessEnvironment e;
            e.insert(QStringLiteral("FORGE_K8S_NAMESPACE"), QStringLiteral("Bad_NS"));
            return e;
        }());
        QVERIFY2(withEnv.connectionStateText().contains(QStringLiteral("FORGE_K8S_NAMESPACE")), qPrintable(withEnv.connectionStateText()));

        // The profiles dialog opens from its toolbar button, once, and the shortcut brings the
        // same one back.
        QAction *profilesAction = window.findChild<QAction *>(QStringLiteral("profilesAction"));
        QVERIFY(profilesAction);
        QCOMPARE(profilesAction->shortcut(), QKeySequence(QStringLiteral("Ctrl+Shift+P")));
        auto *toolBar = window.findChild<QToolBar *>(QStringLiteral("mainToolBar"));
        QVERIFY(toolBar);
        QWidget *button = toolBar->widgetForAction(profilesAction);
        QVERIFY(button);
        QTest::mouseClick(button, Qt::LeftButton);
        QTRY_COMPARE(window.findChildren<Gui::ProfilesDialog *>().size(), 1);
        Gui::ProfilesDialog *dialog = window.findChildren<Gui::ProfilesDialog *>().first();
        QTRY_VERIFY(dialog->isVisible());
        QCOMPARE(dialog->currentProfile(), QStringLiteral("lab"));
        dialog->hide();
        window.activateWindow();
        QTRY_VERIFY(window.isActiveWindow());
        QTest::keyClick(&window, Qt::Key_P, Qt::ControlModifier | Qt::ShiftModifier);
        QTRY_VERIFY(dialog->isVisible());
        QCOMPARE(window.findChildren<Gui::ProfilesDialog *>().size(), 1);
        dialog->close();
        QTRY_VERIFY(window.findChildren<Gui::ProfilesDialog *>().isEmpty());

        // Each panel is a key away: View › Go to …, Ctrl+1 to Ctrl+6, raising a tabbed dock.
        QStringList goTo;
        for (QAction *a : window.findChild<QMenu *>(QStringLiteral("viewMenu"))->actions()) {
            if (a->text().startsWith(QStringLiteral("Go to"))) goTo << a->text() + u' ' + a->shortcut().toString();
        }
        QCOMPARE(goTo, (QStringList{QStringLiteral("Go to Jobs Ctrl+1"), QStringLiteral("Go to Job Ctrl+2"), QStringLiteral("Go to GPU Capacity Ctrl+3"),
                                    QStringLiteral("Go to Events Ctrl+4"), QStringLiteral("Go to Logs Ctrl+5"), QStringLiteral("Go to Playground Ctrl+6")}));
        auto *jobDock = window.findChild<QDockWidget *>(QStringLiteral("jobDetailDock"));
        auto *eventsDock = window.findChild<QDockWidget *>(QStringLiteral("eventsDock"));
        auto *playgroundDock = window.findChild<QDockWidget *>(QStringLiteral("playgroundDock"));
        window.activateWindow();
        QTRY_VERIFY(window.isActiveWindow());
        QVERIFY(!jobDock->visibleRegion().isEmpty() && eventsDock->visibleRegion().isEmpty());
        QTest::keyClick(&window, Qt::Key_4, Qt::ControlModifier);
        QTRY_VERIFY(!eventsDock->visibleRegion().isEmpty());
        QVERIFY(jobDock->visibleRegion().isEmpty());
        QTest::keyClick(&window, Qt::Key_6, Qt::ControlModifier);
        QTRY_VERIFY(!playgroundDock->visibleRegion().isEmpty());
        // A closed dock comes back.
        jobDock->close();
        QTest::keyClick(&window, Qt::Key_2, Qt::ControlModifier);
        QTRY_VERIFY(jobDock->isVisible() && !jobDock->visibleRegion().isEmpty());
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
