// The Job dock on the sandbox, from the main window as a person uses it: a click on a running
// job shows its spec, status, pods and the progress its driver prints (the plot and the Jobs
// table's Progress column follow the log as it grows; the plot's cursor moves with the keys);
// a Pending job gets the diagnosis banner with the numbers; once the running job is archived
// the dock shows what the archive kept and the final progress read from the archived log.

#include "core/config/embeddedsandbox.h"
#include "core/config/profilemanager.h"
#include "core/job/progressfollower.h"
#include "core/job/tracker.h"
#include "core/session/session.h"
#include "gui/jobs/jobdetailpanel.h"
#include "gui/jobs/jobspanel.h"
#include "gui/jobs/progressplot.h"
#include "gui/mainwindow.h"
#include "gui/playground/launchdialog.h"
#include "gui/playground/playgroundpanel.h"
#include "models/checkpointsmodel.h"
#include "models/jobpodsmodel.h"
#include "models/jobsmodel.h"
#include "support/memorysecretstore.h"
#include "support/sandboxfixture.h"
#include "support/sandboxjobs.h"

#include <QAbstractItemModelTester>
#include <QAccessible>
#include <QClipboard>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QGuiApplication>
#include <QJsonDocument>
#include <QLabel>
#include <QPushButton>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>

#include "scriptedprompts.h"

using namespace Starforge;
using Models::JobsModel;

namespace {

// What runner.pex prints for three steps with a Loss and a reward, then waits for the gate.
QString progressDriver(const QString &gate)
{
    return QStringLiteral("import json, os, time\n"
                          "def p(o): print('STARFORGE_PROGRESS ' + json.dumps(o, sort_keys=True), flush=True)\n"
                          "p({'kind': 'start', 'job': 'x', 'files': 1, 'argv': []})\n"
                          "p({'kind': 'log_dir', 'path': '/starforge/jobs/x/logs/exp_001'})\n"
                          "for s in range(1, 4):\n"
                          "    p({'kind': 'step', 'step': s, 'total': 3})\n"
                          "    p({'kind': 'metric', 'name': 'Loss', 'value': 1.0 / s})\n"
                          "    p({'kind': 'metric', 'name': 'Avg Reward', 'value': 0.2 * s})\n"
                          "    time.sleep(0.3)\n"
                          "def saved(s):\n"
                          "    b = '/starforge/jobs/x/checkpoints/step_%d' % s\n"
                          "    p({'kind': 'checkpoint', 'step': s})\n"
                          "    p({'kind': 'checkpoint_saved', 'step': s, 'path': b})\n"
                          "    return b\n"
                          "b = saved(2)\n"
                          "p({'kind': 'servable', 'step': 2, 'path': b + '/policy/weights/model/consolidated', 'tokenizer': b + '/policy/tokenizer',"
                          " 'backend': 'dtensor_v2', 'consolidated': True, 'converter': ''})\n"
                          "while not os.path.exists(r'%1'): time.sleep(0.1)\n"
                          "b = saved(3)\n"
                          "p({'kind': 'exit', 'code': 0})\n"
                          "p({'kind': 'servable', 'step': 3, 'path': b + '/policy/weights/model/consolidated', 'tokenizer': b + '/policy/tokenizer',"
                          " 'backend': 'dtensor_v2', 'consolidated': True, 'converter': ''})\n")
        .arg(gate);
}

} // namespace

class TestJobDetailPanel : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<Testing::SandboxHttp> m_http;
    Config::SandboxConnection m_connection;
    std::unique_ptr<Config::ProfileStore> m_store;
    Testing::MemorySecretStore m_secrets;
    std::unique_ptr<Config::ProfileManager> m_manager;
    Testing::ScriptedPrompts m_prompts;
    QProcessEnvironment m_environment;
    const QString m_rayjobs = QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs");

    static int rowOf(QTableView *view, const QString &id)
    {
        const QModelIndexList found = view->model()->match(view->model()->index(0, 0), JobsModel::JobIdRole, id, 1, Qt::MatchExactly);
        return found.isEmpty() ? -1 : found.first().row();
    }

    static void clickRow(QTableView *view, const QString &id)
    {
        const QRect cell = view->visualRect(view->model()->index(rowOf(view, id), JobsModel::NameColumn));
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, cell.center());
    }

private Q_SLOTS:
    void initTestCase()
    {
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("h100:2x8,cpu:1x0");
        options.presentImages = {Testing::jobTestImage()};
        QString error;
        QVERIFY2(Testing::startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
        auto connection = Config::SandboxConnection::read(options.connectionFile);
        QVERIFY2(connection, connection ? "" : qPrintable(connection.error().message));
        m_connection = *connection;
        // A profile with the sandbox's settings; its secrets in the environment, as
        // `starforge --sandbox` passes them.
        m_store = std::make_unique<Config::ProfileStore>(m_dir.filePath(QStringLiteral("p.ini")));
        m_manager = std::make_unique<Config::ProfileManager>(m_store.get(), &m_secrets);
        const QString problem = Testing::useSandboxProfile(*m_store, *m_manager, m_connection, m_environment);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
    }

    void cleanupTestCase()
    {
        m_manager.reset();
        m_store.reset();
        m_http.reset();
        m_sandbox.reset();
    }

    void followsTheSelectedJob()
    {
        Gui::MainWindow window(m_manager.get(), &m_prompts, m_environment);
        window.resize(1400, 900);
        window.show();
        QTRY_VERIFY(window.session()->isUp());
        QTRY_VERIFY(window.jobTracker() && window.jobTracker()->hasSynced());
        QTableView *view = window.jobsPanel()->view();
        Gui::JobDetailPanel *detail = window.jobDetailPanel();
        QAbstractItemModelTester tester(detail->podsModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        detail->setRefreshInterval(300);
        // Nothing selected: the dock says what it is for.
        QVERIFY(!detail->isShowingJob());
        QVERIFY(detail->findChild<QLabel *>(QStringLiteral("jobDetailEmpty"))->text().contains(QStringLiteral("Select a job")));

        // A running job that prints its progress.
        const QString gate = m_dir.filePath(QStringLiteral("gate"));
        const QString running = QStringLiteral("dtlb22");
        QJsonObject job = Testing::starforgeRayJob(QStringLiteral("detail"), running, Testing::driverEntrypoint(m_dir.path(), progressDriver(gate)));
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(job).toJson()).status, 201);
        QTRY_VERIFY_WITH_TIMEOUT(rowOf(view, running) >= 0, 20000);
        clickRow(view, running);
        QTRY_COMPARE(detail->jobId(), running);
        QVERIFY(detail->isShowingJob());
        QTRY_VERIFY_WITH_TIMEOUT(detail->titleLabel()->text().contains(QStringLiteral("Running")), 30000);
        // The pods: the head and the submitter, running, on their nodes.
        QTRY_VERIFY_WITH_TIMEOUT(detail->podsModel()->rowCount() >= 2, 20000);
        QStringList roles;
        for (int r = 0; r < detail->podsModel()->rowCount(); ++r)
            roles << detail->podsModel()->index(r, Models::JobPodsModel::RoleColumn).data().toString();
        QVERIFY2(roles.contains(QStringLiteral("head")) && roles.contains(QStringLiteral("submitter")), qPrintable(roles.join(u',')));
        // The summary: the JobSpec's name, the RayJob's status and its RayCluster.
        QTRY_VERIFY2(detail->summaryView()->toPlainText().contains(QStringLiteral("RayCluster")), qPrintable(detail->summaryView()->toPlainText()));
        QTRY_VERIFY2(detail->summaryView()->toPlainText().contains(QStringLiteral("RUNNING")), qPrintable(detail->summaryView()->toPlainText()));
        QVERIFY(!detail->diagnosisBanner()->isVisible());

        // The progress, live: the plot has every step, the label and the table say where it is.
        QTRY_VERIFY_WITH_TIMEOUT(detail->plot()->series().size() == 3, 30000);
        QCOMPARE(detail->plot()->metric(), QStringLiteral("Loss"));
        QCOMPARE(detail->plot()->series().at(1).y(), 0.5);
        QTRY_VERIFY2(detail->progressLabel()->text().startsWith(QStringLiteral("step 3/3")), qPrintable(detail->progressLabel()->text()));
        // Where NeMo-RL logs the run: the exp_NNN folder its driver printed.
        QVERIFY2(detail->progressLabel()->text().endsWith(QStringLiteral("\nNeMo-RL's log directory: /starforge/jobs/x/logs/exp_001")),
                 qPrintable(detail->progressLabel()->text()));
        QCOMPARE(view->model()->index(rowOf(view, running), JobsModel::ProgressColumn).data().toString(), QStringLiteral("step 3/3"));
        QVERIFY(view->model()->index(rowOf(view, running), JobsModel::ProgressColumn).data(Qt::ToolTipRole).toString().contains(QStringLiteral("Loss")));
        QCOMPARE(detail->metricCombo()->count(), 2);
        QVERIFY(detail->metricCombo()->isEnabled());
        // Another metric, from the keyboard.
        detail->metricCombo()->setFocus();
        QTest::keyClick(detail->metricCombo(), Qt::Key_Down);
        QCOMPARE(detail->plot()->metric(), QStringLiteral("Avg Reward"));
        QCOMPARE(detail->plot()->series().at(2).y(), 0.2 * 3);
        // The plot's cursor with the keys, said in its accessible description.
        detail->plot()->setFocus();
        QTest::keyClick(detail->plot(), Qt::Key_Home);
        QCOMPARE(detail->plot()->cursor(), 0);
        QTest::keyClick(detail->plot(), Qt::Key_Right);
        QCOMPARE(detail->plot()->cursor(), 1);
        QVERIFY2(detail->plot()->accessibleDescription().contains(QStringLiteral("Cursor: step 2")), qPrintable(detail->plot()->accessibleDescription()));
        // ... and with the mouse, at the last point.
        QTest::mouseMove(detail->plot(), detail->plot()->pointPosition(2).toPoint());
        QTRY_COMPARE(detail->plot()->cursor(), 2);
        // Step 2 has finished: it is listed, ready to chat, and Ctrl+C copies the path to serve.
        QAbstractItemModelTester checkpointsTester(detail->checkpointsModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QTRY_VERIFY_WITH_TIMEOUT(detail->checkpointsView()->isVisible(), 20000);
        QCOMPARE(detail->checkpointsModel()->rowCount(), 1);
        QCOMPARE(detail->checkpointsModel()->index(0, Models::CheckpointsModel::ChatColumn).data().toString(), QStringLiteral("Ready to chat"));
        detail->checkpointsView()->setFocus();
        detail->checkpointsView()->setCurrentIndex(detail->checkpointsModel()->index(0, 0));
        QTest::keyClick(detail->checkpointsView(), Qt::Key_C, Qt::ControlModifier);
        QCOMPARE(QGuiApplication::clipboard()->text(), QStringLiteral("/starforge/jobs/x/checkpoints/step_2/policy/weights/model/consolidated"));
        // Chat with it: the Playground dock comes forward with the launch form filled in, the
        // job and step kept, on the series the job trained on.
        QVERIFY(detail->chatButton()->isVisible() && detail->chatButton()->isEnabled());
        QCOMPARE(detail->chatButton()->text(), QStringLiteral("&Chat with step 2"));
        QTest::mouseClick(detail->chatButton(), Qt::LeftButton);
        Gui::LaunchDialog *launch = window.playgroundPanel()->launchDialog();
        QVERIFY(launch && launch->isVisible());
        const Playground::LaunchRequest asked = launch->request();
        QCOMPARE(asked.model, QStringLiteral("/starforge/jobs/x/checkpoints/step_2/policy/weights/model/consolidated"));
        QCOMPARE(asked.tokenizer, QStringLiteral("/starforge/jobs/x/checkpoints/step_2/policy/tokenizer"));
        QCOMPARE(asked.jobId, running);
        QCOMPARE(asked.step, 2);
        QCOMPARE(asked.series, QStringLiteral("h100"));
        QCOMPARE(Playground::PlaygroundPod::servedNameFor(asked), running + QStringLiteral("-step-2"));
        launch->reject();

        // A Pending job: the banner says why, with the diagnosis' cause and the series.
        const QString pending = QStringLiteral("dtlb44");
        QCOMPARE(m_http->send("POST", m_rayjobs,
                              QJsonDocument(Testing::starforgeRayJob(QStringLiteral("detail"), pending, QStringLiteral("true"), Testing::unschedulableHead())).toJson())
                     .status,
                 201);
        QTRY_VERIFY_WITH_TIMEOUT(rowOf(view, pending) >= 0, 20000);
        clickRow(view, pending);
        QTRY_COMPARE(detail->jobId(), pending);
        QVERIFY(detail->plot()->series().isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(detail->diagnosisBanner()->isVisible(), 20000);
        QTRY_VERIFY2_WITH_TIMEOUT(detail->diagnosisBanner()->text().contains(QStringLiteral("NoNodeMatchesSelector"))
                                      && detail->diagnosisBanner()->text().contains(QStringLiteral("b200")),
                                  qPrintable(detail->diagnosisBanner()->text()), 20000);
        QTRY_VERIFY_WITH_TIMEOUT(detail->podsModel()->rowCount() >= 1
                                     && detail->podsModel()->index(0, Models::JobPodsModel::PhaseColumn).data().toString() == QStringLiteral("Pending: Unschedulable"),
                                 20000);
        // The Jobs table says it too, in the Message column, without the job being selected.
        clickRow(view, running);
        QTRY_VERIFY2_WITH_TIMEOUT(view->model()->index(rowOf(view, pending), JobsModel::MessageColumn).data().toString().startsWith(QStringLiteral("NoNodeMatchesSelector: ")),
                                  qPrintable(view->model()->index(rowOf(view, pending), JobsModel::MessageColumn).data().toString()), 20000);
        QVERIFY(view->model()->index(rowOf(view, pending), JobsModel::MessageColumn).data().toString().contains(QStringLiteral("b200")));
        QVERIFY(view->model()->index(rowOf(view, pending), JobsModel::MessageColumn).data(Qt::ToolTipRole).toString().startsWith(QStringLiteral("Why it is pending")));
        // A click on a notification about it selects it and brings the Job dock forward.
        window.openNotificationTarget(pending);
        QTRY_COMPARE(detail->jobId(), pending);
        QVERIFY(window.jobsPanel()->selectedJob() && window.jobsPanel()->selectedJob()->id == pending);
        QCOMPARE(m_http->send("DELETE", m_rayjobs + QStringLiteral("/detail-") + pending).status, 200);

        // Back to the running job, let go: once archived, the dock shows the archive and the
        // final progress; the Return key on the row brings the dock forward.
        clickRow(view, running);
        QTRY_COMPARE(detail->jobId(), running);
        QFile(gate).open(QIODevice::WriteOnly);
        QTRY_VERIFY_WITH_TIMEOUT(view->model()->index(rowOf(view, running), JobsModel::StateColumn).data().toString() == QStringLiteral("Archived (Succeeded)"), 60000);
        QTRY_VERIFY2(detail->summaryView()->toPlainText().contains(QStringLiteral("jobs/dtlb22/")), qPrintable(detail->summaryView()->toPlainText()));
        QTRY_VERIFY(detail->titleLabel()->text().contains(QStringLiteral("Archived (Succeeded)")));
        QVERIFY2(detail->progressLabel()->text().contains(QStringLiteral("last checkpoint step 3")), qPrintable(detail->progressLabel()->text()));
        QCOMPARE(detail->plot()->series().size(), 3);
        QTRY_VERIFY(detail->podsModel()->rowCount() >= 2);

    }

    // The job archived by the first case, in a new window that never followed it live: the
    // archived driver log gives the plot.
    void anArchivedJobReadsItsProgressFromTheArchive()
    {
        Gui::MainWindow window(m_manager.get(), &m_prompts, m_environment);
        window.resize(1400, 900);
        window.show();
        QTRY_VERIFY(window.session()->isUp());
        QTableView *view = window.jobsPanel()->view();
        const QString id = QStringLiteral("dtlb22");
        // (Let go here too, should the first case have stopped before it did.)
        QFile(m_dir.filePath(QStringLiteral("gate"))).open(QIODevice::WriteOnly);
        QTRY_VERIFY_WITH_TIMEOUT(rowOf(view, id) >= 0
                                     && view->model()->index(rowOf(view, id), JobsModel::StateColumn).data().toString() == QStringLiteral("Archived (Succeeded)"),
                                 60000);
        QVERIFY(!window.session()->progress()->progress(id));
        clickRow(view, id);
        // Return on the selected row: the dock comes forward.
        view->setFocus();
        QTest::keyClick(view, Qt::Key_Return);
        auto *dock = window.findChild<QDockWidget *>(QStringLiteral("jobDetailDock"));
        QTRY_VERIFY(dock && dock->isVisible());
        Gui::JobDetailPanel *detail = window.jobDetailPanel();
        QTRY_COMPARE(detail->jobId(), id);
        QTRY_VERIFY_WITH_TIMEOUT(detail->plot()->series().size() == 3, 20000);
        QVERIFY2(detail->progressLabel()->text().startsWith(QStringLiteral("Final: step 3/3")), qPrintable(detail->progressLabel()->text()));
        QVERIFY2(detail->progressLabel()->text().endsWith(QStringLiteral("\nNeMo-RL's log directory: /starforge/jobs/x/logs/exp_001")),
                 qPrintable(detail->progressLabel()->text()));
        // Both finished steps, from the archived log.
        QCOMPARE(detail->checkpointsModel()->rowCount(), 2);
        QCOMPARE(detail->checkpointsModel()->index(1, Models::CheckpointsModel::StepColumn).data().toInt(), 3);
        QVERIFY(detail->checkpointsView()->isVisible());
        QTRY_VERIFY(detail->podsModel()->rowCount() >= 2);
    }
};

QTEST_MAIN(TestJobDetailPanel)
#include "tst_jobdetailpanel.moc"
