// The Jobs dock on the sandbox: the main window connects, lists a RayJob submitted to the
// cluster as it runs, and its Stop button (after the confirmation) archives the job as Stopped.
// Also: the filter box and state filter, Details (the Job dock), Refresh history, and the sentence
// the panel shows when the profile has no bucket settings.

#include "core/config/embeddedsandbox.h"
#include "core/config/profilemanager.h"
#include "core/job/rayjobbuilder.h"
#include "core/job/tracker.h"
#include "core/session/session.h"
#include "gui/events/eventspanel.h"
#include "gui/jobs/jobdetailpanel.h"
#include "gui/jobs/jobspanel.h"
#include "gui/jobs/comparewindow.h"
#include "gui/mainwindow.h"
#include "models/jobpodsmodel.h"
#include "models/jobsmodel.h"
#include "models/timelinemodel.h"
#include "support/memorysecretstore.h"
#include "support/sandboxfixture.h"
#include "support/sandboxjobs.h"
#include "support/testutil.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLineEdit>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QSet>
#include <QSignalSpy>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QDockWidget>
#include <QMenu>
#include <QLabel>
#include <QGuiApplication>
#include <QTest>
#include <QTextBrowser>
#include <QToolButton>

#include "scriptedprompts.h"

using namespace Starforge;
using Models::JobsModel;

namespace {

// A RayJob as the app makes them, named gui-<id>.
QJsonObject rayJob(const QString &id, const QString &entrypoint)
{
    return Testing::starforgeRayJob(QStringLiteral("gui"), id, entrypoint);
}

} // namespace

class TestMainWindowJobs : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<Testing::SandboxHttp> m_http;
    Config::SandboxConnection m_connection;
    const QString m_rayjobs = QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs");

    // The view's row of a job, or -1.
    static int rowOf(QTableView *view, const QString &id)
    {
        const QModelIndexList found = view->model()->match(view->model()->index(0, 0), JobsModel::JobIdRole, id, 1, Qt::MatchExactly);
        return found.isEmpty() ? -1 : found.first().row();
    }
    static QString stateOf(QTableView *view, const QString &id)
    {
        const int row = rowOf(view, id);
        return row < 0 ? QString() : view->model()->index(row, JobsModel::StateColumn).data().toString();
    }

private Q_SLOTS:
    void initTestCase()
    {
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("h100:1x8,cpu:1x0");
        options.presentImages = { Testing::jobTestImage() };
        QString error;
        QVERIFY2(Testing::startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
        auto connection = Config::SandboxConnection::read(options.connectionFile);
        QVERIFY2(connection, connection ? "" : qPrintable(connection.error().message));
        m_connection = *connection;
    }
    void cleanupTestCase()
    {
        m_http.reset();
        m_sandbox.reset();
    }

    void listsAJobAndStopsIt()
    {
        Config::ProfileStore store(m_dir.filePath(QStringLiteral("p.ini")));
        Testing::MemorySecretStore secrets;
        Config::ProfileManager manager(&store, &secrets);
        Testing::ScriptedPrompts prompts;
        // The sandbox's settings, all of them; a second profile without the bucket.
        QVERIFY(store.addProfile(QStringLiteral("sandbox")).ok());
        QVERIFY(store.addProfile(QStringLiteral("nobucket")).ok());
        for (auto it = m_connection.settings.cbegin(); it != m_connection.settings.cend(); ++it) {
            QVERIFY(store.setValue(QStringLiteral("sandbox"), it.key(), it.value()).ok());
            if (!it.key().startsWith(QStringLiteral("FORGE_S3_")))
                QVERIFY(store.setValue(QStringLiteral("nobucket"), it.key(), it.value()).ok());
        }
        // Secrets as `starforge --sandbox` passes them: in the environment.
        QProcessEnvironment environment;
        environment.insert(QStringLiteral("FORGE_K8S_TOKEN"), m_connection.secrets.value(QStringLiteral("FORGE_K8S_TOKEN")));
        QVERIFY(manager.setActiveProfile(QStringLiteral("nobucket")).ok());

        {
            Gui::MainWindow window(&manager, &prompts, environment);
            window.show();
            auto *panel = window.jobsPanel();
            QVERIFY(panel);
            QTRY_VERIFY(window.session()->isUp());
            // No bucket settings: the panel says which to set instead of failing.
            QTRY_VERIFY(panel->messageText().contains(QStringLiteral("FORGE_S3_ENDPOINT")));
            QVERIFY2(panel->messageText().contains(QStringLiteral("FORGE_S3_BUCKET"))
                         && panel->messageText().contains(QStringLiteral("FORGE_S3_ACCESS_KEY")),
                     qPrintable(panel->messageText()));
            QVERIFY(!panel->isShowingJobs());
            QVERIFY(!window.jobTracker());
        }

        // The profile with the bucket (its keys in the environment too).
        for (const char *key : { "FORGE_S3_ACCESS_KEY", "FORGE_S3_SECRET_KEY" }) {
            environment.insert(QLatin1String(key), m_connection.secrets.value(QLatin1String(key)));
        }
        QVERIFY(manager.setActiveProfile(QStringLiteral("sandbox")).ok());
        Gui::MainWindow full(&manager, &prompts, environment);
        full.show();
        auto *panel = full.jobsPanel();
        QTRY_VERIFY(full.session()->isUp());
        QTRY_VERIFY(panel->isShowingJobs());
        QTRY_VERIFY(full.jobTracker() && full.jobTracker()->hasSynced());
        // Nothing submitted yet: the summary says how to submit, the wizard first.
        QTRY_COMPARE(full.findChild<QLabel *>(QStringLiteral("jobsSummary"))->text(),
                     QStringLiteral("No jobs yet: File › New Job (Ctrl+N) submits one, as does starforge-cli submit SPEC"));
        auto *view = full.findChild<QTableView *>(QStringLiteral("jobsView"));
        auto *stop = full.findChild<QToolButton *>(QStringLiteral("stopJobButton"));
        auto *refresh = full.findChild<QToolButton *>(QStringLiteral("refreshHistoryButton"));
        QVERIFY(view && stop && refresh);
        // The proxy the view shows (filters, colours) keeps the model rules through everything
        // below: rows coming, changing, filtered and going.
        QAbstractItemModelTester proxyTester(view->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(!stop->isEnabled());

        // A job on the cluster appears and runs.
        const QString id = QStringLiteral("gvjb22");
        const QString driver = m_dir.filePath(QStringLiteral("sleepy.py"));
        QVERIFY(Testing::writeFile(driver, "import time\nprint('started', flush=True)\ntime.sleep(120)\n"));
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(rayJob(id, QStringLiteral("python3 ") + driver)).toJson()).status, 201);
        QTRY_VERIFY_WITH_TIMEOUT(rowOf(view, id) >= 0, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(view, id), QStringLiteral("Running"), 30000);
        const QModelIndex state = view->model()->index(rowOf(view, id), JobsModel::StateColumn);
        QCOMPARE(view->model()->index(state.row(), JobsModel::NameColumn).data().toString(), QStringLiteral("gui-") + id);
        // Literal colours, not the function that paints them: a change of palette is a choice
        // the test makes visible (dark blue on light blue for Running).
        QCOMPARE(state.data(Qt::BackgroundRole).value<QColor>(), QColor(0xd3, 0xe4, 0xfa));
        QCOMPARE(state.data(Qt::ForegroundRole).value<QColor>(), QColor(0x0b, 0x4a, 0x94));

        // Stop: asks first; "cancel" leaves the job alone. Selecting the row tells the panels
        // that follow one job which one.
        QSignalSpy selected(panel, &Gui::JobsPanel::selectedJobChanged);
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(state).center());
        QCOMPARE(selected.size(), 1);
        QCOMPARE(selected.first().first().toString(), id);
        QTRY_VERIFY(stop->isEnabled());
        prompts.answers << false;
        QTest::mouseClick(stop, Qt::LeftButton);
        QCOMPARE(prompts.asked.size(), 1);
        QVERIFY2(prompts.asked.first().startsWith(QStringLiteral("confirm: Stop job: Stop job gvjb22 (gui-gvjb22)?")),
                 qPrintable(prompts.asked.first()));
        QTest::qWait(500);
        QCOMPARE(stateOf(view, id), QStringLiteral("Running"));
        // Yes: archived as Stopped, in the same row.
        prompts.answers << true;
        QTest::mouseClick(stop, Qt::LeftButton);
        QCOMPARE(prompts.asked.size(), 2);
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(view, id), QStringLiteral("Archived (Stopped)"), 30000);
        QTRY_VERIFY2(full.statusBar()->currentMessage().contains(QStringLiteral("Job gvjb22 archived (stopped)")),
                     qPrintable(full.statusBar()->currentMessage()));
        QCOMPARE(view->model()->index(rowOf(view, id), JobsModel::StateColumn).data(Qt::BackgroundRole).value<QColor>(), QColor(0xe2, 0xe2, 0xe2));
        QCOMPARE(view->model()->index(rowOf(view, id), JobsModel::StateColumn).data(Qt::ForegroundRole).value<QColor>(), QColor(0x4a, 0x4a, 0x4a));
        QVERIFY(!stop->isEnabled());
        QTRY_COMPARE(m_http->get(m_rayjobs + QStringLiteral("/gui-") + id).status, 404);

        // A newer job goes on top (newest first), the archived one below it.
        const QString newer = QStringLiteral("gvjb44");
        QTest::qWait(1000); // creation times have whole seconds
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(rayJob(newer, QStringLiteral("python3 ") + driver)).toJson()).status, 201);
        QTRY_VERIFY_WITH_TIMEOUT(rowOf(view, newer) >= 0, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(view, newer), QStringLiteral("Running"), 30000);
        QCOMPARE(rowOf(view, newer), 0);
        QCOMPARE(rowOf(view, id), 1);
        QCOMPARE(view->model()->index(rowOf(view, newer), JobsModel::OwnerColumn).data().toString(), QStringLiteral("you"));

        // A colleague's job in the same namespace: listed with its owner, read-only. Stop stays
        // off and says why; the job runs on.
        const QString colleagues = QStringLiteral("gvjb45");
        QCOMPARE(m_http->send("POST", m_rayjobs,
                              QJsonDocument(Testing::starforgeRayJob(QStringLiteral("gui"), colleagues, QStringLiteral("python3 ") + driver, {}, 30,
                                                                     QStringLiteral("bob@lab.example")))
                                  .toJson())
                     .status,
                 201);
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(view, colleagues), QStringLiteral("Running"), 30000);
        const QModelIndex owner = view->model()->index(rowOf(view, colleagues), JobsModel::OwnerColumn);
        QCOMPARE(owner.data().toString(), QStringLiteral("bob@lab.example"));
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(owner).center());
        QTRY_COMPARE(panel->selectedJob().value_or(Job::JobRecord{}).id, colleagues);
        QVERIFY(!stop->isEnabled());
        QVERIFY2(stop->toolTip().contains(QStringLiteral("bob@lab.example's job: shown read-only")), qPrintable(stop->toolTip()));
        QCOMPARE(m_http->get(m_rayjobs + QStringLiteral("/gui-") + colleagues).status, 200);
        QCOMPARE(m_http->send("DELETE", m_rayjobs + QStringLiteral("/gui-") + colleagues).status, 200);
        QTRY_VERIFY_WITH_TIMEOUT(rowOf(view, colleagues) < 0, 10000);

        // The filters.
        auto *filter = full.findChild<QLineEdit *>(QStringLiteral("jobsFilter"));
        auto *states = full.findChild<QComboBox *>(QStringLiteral("jobsStateFilter"));
        auto *summary = full.findChild<QLabel *>(QStringLiteral("jobsSummary"));
        QVERIFY(summary);
        QTRY_COMPARE(summary->text(), QStringLiteral("2 jobs: 1 active, 1 ended"));
        QTest::keyClicks(filter, QStringLiteral("GVJB22"));
        QCOMPARE(view->model()->rowCount(), 1);
        QCOMPARE(summary->text(), QStringLiteral("2 jobs: 1 active, 1 ended; 1 shown"));
        filter->clear();
        QTest::keyClicks(filter, QStringLiteral("no such job"));
        QCOMPARE(view->model()->rowCount(), 0);
        filter->clear();
        // The state filter from the keyboard, as a person without a mouse chooses: All, Active, Ended.
        states->setFocus();
        QTest::keyClick(states, Qt::Key_Down);
        QCOMPARE(states->currentText(), QStringLiteral("Active"));
        QCOMPARE(rowOf(view, id), -1);
        QTest::keyClick(states, Qt::Key_Down);
        QCOMPARE(states->currentText(), QStringLiteral("Ended"));
        QVERIFY(rowOf(view, id) >= 0);
        QTest::keyClick(states, Qt::Key_Home);
        QCOMPARE(states->currentText(), QStringLiteral("All"));

        // The context menu on a row (the event a right click or the Menu key makes): it selects
        // the row, offers what the toolbar does, and "Copy job id" (its C accelerator) puts the
        // id on the clipboard.
        QGuiApplication::clipboard()->clear();
        const QPoint onRow = view->visualRect(view->model()->index(rowOf(view, newer), JobsModel::NameColumn)).center();
        QContextMenuEvent rightClick(QContextMenuEvent::Mouse, onRow, view->viewport()->mapToGlobal(onRow));
        QApplication::sendEvent(view->viewport(), &rightClick);
        QMenu *menu = nullptr;
        QTRY_VERIFY((menu = full.findChild<QMenu *>(QStringLiteral("jobsContextMenu"))) && menu->isVisible());
        QStringList offered;
        for (QAction *a : menu->actions()) {
            if (!a->isSeparator()) offered << a->text();
        }
        QCOMPARE(offered, (QStringList{QStringLiteral("&Stop"), QStringLiteral("&Details"), QStringLiteral("&Copy job id"), QStringLiteral("Copy Ray&Job"),
                                       QStringLiteral("Res&ubmit…"), QStringLiteral("Open e&vents"), QStringLiteral("Open &logs"),
                                       QStringLiteral("Co&mpare runs…"), QStringLiteral("D&elete…"), QStringLiteral("&Refresh history")}));
        // One accelerator per item, so each is one key away.
        QSet<QChar> accelerators;
        for (const QString &text : offered) accelerators.insert(text.at(text.indexOf(u'&') + 1).toLower());
        QCOMPARE(accelerators.size(), offered.size());
        QCOMPARE(panel->selectedJob().value_or(Job::JobRecord{}).id, newer);
        QTest::keyClick(menu, Qt::Key_C);
        QTRY_COMPARE(QGuiApplication::clipboard()->text(), newer);
        QTRY_VERIFY(!full.findChild<QMenu *>(QStringLiteral("jobsContextMenu")));

        // Two rows, Ctrl+click: Compare runs is on (one-job actions are off), and opens the
        // comparison of both; one row again, and it is off.
        QVERIFY(!panel->compareAction()->isEnabled());
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(view->model()->index(rowOf(view, newer), JobsModel::IdColumn)).center());
        QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::ControlModifier, view->visualRect(view->model()->index(rowOf(view, id), JobsModel::IdColumn)).center());
        QCOMPARE(panel->selectedJobs().size(), 2);
        QVERIFY(panel->compareAction()->isEnabled());
        QVERIFY(!full.findChild<QAction *>(QStringLiteral("deleteAction")) || !full.findChild<QAction *>(QStringLiteral("deleteAction"))->isEnabled());
        // (Its shortcut, Ctrl+Shift+M, needs an active window, which the offscreen platform has
        // not; the screenshot script presses it under Xvfb.)
        panel->compareAction()->trigger();
        Gui::CompareWindow *compare = nullptr;
        QTRY_VERIFY((compare = full.findChild<Gui::CompareWindow *>()) && compare->isVisible());
        QCOMPARE(compare->windowTitle(), QStringLiteral("Compare 2 run(s)"));
        QTRY_VERIFY_WITH_TIMEOUT(compare->isLoaded(), 20000);
        compare->close();
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(view->model()->index(rowOf(view, newer), JobsModel::IdColumn)).center());
        QVERIFY(!panel->compareAction()->isEnabled());

        // Details on double-click: the Job dock comes forward with the archived job's record,
        // and its pods as objects.json kept them.
        const QRect cell = view->visualRect(view->model()->index(rowOf(view, id), JobsModel::IdColumn));
        // A view emits doubleClicked for the index the first click pressed.
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, cell.center());
        QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, cell.center());
        Gui::JobDetailPanel *details = full.jobDetailPanel();
        QTRY_COMPARE(details->jobId(), id);
        QTRY_VERIFY(details->isVisible());
        QTRY_COMPARE(full.focusWidget(), details->summaryView());
        QTRY_VERIFY2(details->summaryView()->toPlainText().contains(QStringLiteral("StoppedByUser"))
                         && details->summaryView()->toPlainText().contains(QStringLiteral("jobs/gvjb22/")),
                     qPrintable(details->summaryView()->toPlainText()));
        QTRY_VERIFY_WITH_TIMEOUT(details->podsModel()->rowCount() >= 2, 10000);
        QVERIFY(!details->diagnosisBanner()->isVisible());

        // Refresh history: the archived job is listed once.
        QVERIFY(refresh->isEnabled());
        const int rows = view->model()->rowCount();
        QTest::mouseClick(refresh, Qt::LeftButton);
        QTRY_VERIFY(refresh->isEnabled() && !panel->model()->isHistoryLoading());
        QCOMPARE(view->model()->rowCount(), rows);
        QCOMPARE(stateOf(view, id), QStringLiteral("Archived (Stopped)"));

        // The archived job's actions, from its context menu: Copy RayJob (the archived one, the
        // cluster has none), Open events (the Events dock on the job), then Delete.
        QGuiApplication::clipboard()->clear();
        const QPoint archivedRow = view->visualRect(view->model()->index(rowOf(view, id), JobsModel::NameColumn)).center();
        QContextMenuEvent onArchived(QContextMenuEvent::Mouse, archivedRow, view->viewport()->mapToGlobal(archivedRow));
        QApplication::sendEvent(view->viewport(), &onArchived);
        QMenu *archivedMenu = nullptr;
        QTRY_VERIFY((archivedMenu = full.findChild<QMenu *>(QStringLiteral("jobsContextMenu"))) && archivedMenu->isVisible());
        QAction *openEvents = full.findChild<QAction *>(QStringLiteral("openJobEventsAction"));
        QVERIFY(openEvents && openEvents->isEnabled());
        QVERIFY(full.findChild<QAction *>(QStringLiteral("resubmitJobAction"))->isEnabled());
        QTest::keyClick(archivedMenu, Qt::Key_J);   // Copy Ray&Job
        QTRY_VERIFY(QGuiApplication::clipboard()->text().contains(QStringLiteral("\"kind\": \"RayJob\"")));
        QVERIFY(QGuiApplication::clipboard()->text().contains(QStringLiteral("\"name\": \"gui-gvjb22\"")));
        QTRY_VERIFY(!full.findChild<QMenu *>(QStringLiteral("jobsContextMenu")));
        // Resubmit reads the job's JobSpec with the core's parser: this test job's annotation
        // has only a name, so nothing opens and the status bar says why.
        QContextMenuEvent again(QContextMenuEvent::Mouse, archivedRow, view->viewport()->mapToGlobal(archivedRow));
        QApplication::sendEvent(view->viewport(), &again);
        QTRY_VERIFY((archivedMenu = full.findChild<QMenu *>(QStringLiteral("jobsContextMenu"))) && archivedMenu->isVisible());
        QTest::keyClick(archivedMenu, Qt::Key_U);   // Res&ubmit…
        QTRY_VERIFY2(full.statusBar()->currentMessage().startsWith(QStringLiteral("Cannot resubmit: the job's JobSpec does not read:")),
                     qPrintable(full.statusBar()->currentMessage()));
        QVERIFY(!full.wizard());
        // Open events: the Events dock comes forward on the archived job, its timeline from the archive.
        QContextMenuEvent third(QContextMenuEvent::Mouse, archivedRow, view->viewport()->mapToGlobal(archivedRow));
        QApplication::sendEvent(view->viewport(), &third);
        QTRY_VERIFY((archivedMenu = full.findChild<QMenu *>(QStringLiteral("jobsContextMenu"))) && archivedMenu->isVisible());
        QTest::keyClick(archivedMenu, Qt::Key_V);   // Open e&vents
        QTRY_VERIFY(full.findChild<QDockWidget *>(QStringLiteral("eventsDock"))->isVisible());
        QCOMPARE(full.eventsPanel()->jobId(), id);
        QTRY_VERIFY_WITH_TIMEOUT(full.eventsPanel()->timelineModel()->rowCount() > 0, 20000);
        QCOMPARE(full.eventsPanel()->timelineModel()->timeline().lanes.first().title, QStringLiteral("RayJob gui-gvjb22"));

        // Delete (the Delete key on the selected row): asks, then the archive goes and its row too.
        full.activateWindow();
        QTRY_VERIFY(full.isActiveWindow());
        view->setFocus();
        QTRY_VERIFY(view->hasFocus());
        QCOMPARE(panel->selectedJob().value_or(Job::JobRecord{}).id, id);
        QTRY_VERIFY(full.findChild<QAction *>(QStringLiteral("deleteJobAction"))->isEnabled());
        prompts.answers << true;
        QTest::keyClick(view, Qt::Key_Delete);
        QVERIFY2(prompts.asked.last().startsWith(QStringLiteral("confirm: Delete job: Delete job gvjb22 (gui-gvjb22) for good?")),
                 qPrintable(prompts.asked.last()));
        QTRY_COMPARE_WITH_TIMEOUT(rowOf(view, id), -1, 20000);
        QTRY_VERIFY2(full.statusBar()->currentMessage().contains(QStringLiteral("Job gvjb22 deleted")), qPrintable(full.statusBar()->currentMessage()));
        QCOMPARE(m_http->get(m_rayjobs + QStringLiteral("/gui-") + id).status, 404);

        // A profile change tears the jobs session down.
        QVERIFY(manager.setActiveProfile(QStringLiteral("nobucket")).ok());
        QVERIFY(!full.jobTracker());
        QTRY_VERIFY(panel->messageText().contains(QStringLiteral("FORGE_S3_ENDPOINT")));
        QCOMPARE(panel->model()->rowCount(), 0);
    }
};

QTEST_MAIN(TestMainWindowJobs)
#include "tst_mainwindow_jobs.moc"
