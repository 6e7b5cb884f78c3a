// The Logs dock on the sandbox, as a person uses it from the window: Open logs on a running
// job shows its driver's log as it grows; the search (typed, F3 and Shift+F3, an expression,
// only the matching lines), the jump to the first traceback and Save; once the job is archived,
// its archived log from the bucket.

#include "core/config/embeddedsandbox.h"
#include "core/config/profilemanager.h"
#include "core/job/tracker.h"
#include "core/session/session.h"
#include "gui/jobs/jobspanel.h"
#include "gui/logs/logspanel.h"
#include "gui/mainwindow.h"
#include "models/jobsmodel.h"
#include "models/loglinesmodel.h"
#include "support/memorysecretstore.h"
#include "support/sandboxfixture.h"
#include "support/sandboxjobs.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QContextMenuEvent>
#include <QDockWidget>
#include <QFile>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QMenu>
#include <QPushButton>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include "scriptedprompts.h"

using namespace Starforge;
using Models::JobsModel;

class TestLogsPanel : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<Testing::SandboxHttp> m_http;
    Config::SandboxConnection m_connection;

    static int rowOf(QTableView *view, const QString &id)
    {
        const QModelIndexList found = view->model()->match(view->model()->index(0, 0), JobsModel::JobIdRole, id, 1, Qt::MatchExactly);
        return found.isEmpty() ? -1 : found.first().row();
    }

private Q_SLOTS:
    void initTestCase()
    {
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("h100:1x8,cpu:1x0");
        options.presentImages = {Testing::jobTestImage()};
        QString error;
        QVERIFY2(Testing::startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
        auto connection = Config::SandboxConnection::read(options.connectionFile);
        QVERIFY(connection);
        m_connection = *connection;
    }

    void cleanupTestCase()
    {
        m_http.reset();
        m_sandbox.reset();
    }

    void readsSearchesAndSavesAJobsLog()
    {
        Config::ProfileStore store(m_dir.filePath(QStringLiteral("p.ini")));
        Testing::MemorySecretStore secrets;
        Config::ProfileManager manager(&store, &secrets);
        Testing::ScriptedPrompts prompts;
        QVERIFY(store.addProfile(QStringLiteral("sandbox")).ok());
        for (auto it = m_connection.settings.cbegin(); it != m_connection.settings.cend(); ++it)
            QVERIFY(store.setValue(QStringLiteral("sandbox"), it.key(), it.value()).ok());
        QProcessEnvironment environment;
        for (auto it = m_connection.secrets.cbegin(); it != m_connection.secrets.cend(); ++it) environment.insert(it.key(), it.value());
        QVERIFY(manager.setActiveProfile(QStringLiteral("sandbox")).ok());
        Gui::MainWindow window(&manager, &prompts, environment);
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QTRY_VERIFY_WITH_TIMEOUT(window.jobTracker() && window.jobTracker()->hasSynced(), 20000);

        // A driver with what real logs have, then it waits.
        const QString gate = m_dir.filePath(QStringLiteral("gate"));
        const QString code = QStringLiteral("import os, time\n"
                                            "print('alpha 1', flush=True)\n"
                                            "print('WARNING: the GCS is slow', flush=True)\n"
                                            "print('STARFORGE_PROGRESS {\"kind\": \"step\", \"step\": 1, \"total\": 2}', flush=True)\n"
                                            "print('ERROR first failure', flush=True)\n"
                                            "print('Traceback (most recent call last):', flush=True)\n"
                                            "print('  File \"train.py\", line 3', flush=True)\n"
                                            "print('alpha 3', flush=True)\n"
                                            "print('ERROR second failure', flush=True)\n"
                                            "while not os.path.exists(r'%1'): time.sleep(0.1)\n"
                                            "print('the end', flush=True)\n")
                                 .arg(gate);
        const QString id = QStringLiteral("lgvw22");
        const QJsonObject job = Testing::starforgeRayJob(QStringLiteral("logs"), id, Testing::driverEntrypoint(m_dir.path(), code));
        QCOMPARE(m_http->send("POST", QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs"), QJsonDocument(job).toJson()).status, 201);
        QTableView *jobs = window.jobsPanel()->view();
        QTRY_VERIFY_WITH_TIMEOUT(rowOf(jobs, id) >= 0 && jobs->model()->index(rowOf(jobs, id), JobsModel::StateColumn).data().toString() == QStringLiteral("Running"), 30000);

        // Open logs from the row's context menu (its L accelerator): the Logs dock comes forward.
        const QPoint at = jobs->visualRect(jobs->model()->index(rowOf(jobs, id), JobsModel::NameColumn)).center();
        QContextMenuEvent menuEvent(QContextMenuEvent::Mouse, at, jobs->viewport()->mapToGlobal(at));
        QApplication::sendEvent(jobs->viewport(), &menuEvent);
        QMenu *menu = nullptr;
        QTRY_VERIFY((menu = window.findChild<QMenu *>(QStringLiteral("jobsContextMenu"))) && menu->isVisible());
        QTest::keyClick(menu, Qt::Key_L);
        auto *dock = window.findChild<QDockWidget *>(QStringLiteral("logsDock"));
        Gui::LogsPanel *logs = window.logsPanel();
        QTRY_VERIFY(!dock->visibleRegion().isEmpty());
        QTRY_COMPARE(logs->jobId(), id);
        // The driver's log first, growing as it is printed.
        QTRY_VERIFY_WITH_TIMEOUT(logs->sourceCombo()->count() >= 2, 20000);
        QVERIFY2(logs->sourceCombo()->itemText(0).startsWith(QStringLiteral("submitter: ")), qPrintable(logs->sourceCombo()->itemText(0)));
        auto *lines = logs->linesModel();
        // The driver's lines come after what `ray job submit` prints first.
        const auto rowOfText = [&](const QString &text) {
            const QModelIndexList found = lines->match(lines->index(0), Qt::DisplayRole, text, 1, Qt::MatchExactly);
            return found.isEmpty() ? -1 : found.first().row();
        };
        const auto dump = [&] {
            QStringList shown;
            for (int r = 0; r < lines->rowCount(); ++r) shown << lines->index(r).data().toString();
            return (logs->sourceCombo()->currentText() + QStringLiteral(" | ") + logs->statusLabel()->text() + QStringLiteral(" | ") + shown.join(QStringLiteral(" / "))).toUtf8();
        };
        QTRY_VERIFY2_WITH_TIMEOUT(rowOfText(QStringLiteral("ERROR second failure")) >= 0, dump().constData(), 20000);
        const qint64 b = rowOfText(QStringLiteral("alpha 1"));
        QVERIFY(b >= 0);
        QCOMPARE(lines->index(int(b + 2)).data().toString(), QStringLiteral("⏵ step 1/2"));
        QCOMPARE(lines->index(int(b + 3)).data(Models::LogLinesModel::SeverityRole).value<Models::LogLinesModel::Severity>(), Models::LogLinesModel::Severity::Error);

        // Search as typed; F3 and Shift+F3 move between the matches.
        window.activateWindow();
        QTRY_VERIFY(window.isActiveWindow());
        logs->searchEdit()->setFocus();
        QTest::keyClicks(logs->searchEdit(), QStringLiteral("ERROR"));
        QTRY_COMPARE(logs->matches(), (QList<qint64>{b + 3, b + 7}));
        QVERIFY2(logs->statusLabel()->text().startsWith(QStringLiteral("2 matching line(s)")), qPrintable(logs->statusLabel()->text()));
        QTest::keyClick(logs->searchEdit(), Qt::Key_F3);
        QCOMPARE(logs->currentLine(), b + 3);
        QTest::keyClick(logs->searchEdit(), Qt::Key_F3);
        QCOMPARE(logs->currentLine(), b + 7);
        QTest::keyClick(logs->searchEdit(), Qt::Key_F3, Qt::ShiftModifier);
        QCOMPARE(logs->currentLine(), b + 3);
        // An expression, in any case; then only the matching lines.
        QTest::mouseClick(logs->regexCheck(), Qt::LeftButton);
        QTest::mouseClick(logs->caseCheck(), Qt::LeftButton);
        logs->searchEdit()->setFocus();
        QTest::keyClick(logs->searchEdit(), Qt::Key_A, Qt::ControlModifier);
        QTest::keyClicks(logs->searchEdit(), QStringLiteral("^(alpha [13]|warning)"));
        QTRY_VERIFY2(logs->matches() == (QList<qint64>{b, b + 1, b + 6}), dump().constData());
        QTest::mouseClick(logs->onlyMatchingCheck(), Qt::LeftButton);
        QCOMPARE(logs->view()->model()->rowCount(), 3);
        QCOMPARE(logs->view()->model()->index(2, 0).data().toString(), QStringLiteral("alpha 3"));
        // The first traceback: back to all lines, there.
        QTest::mouseClick(window.findChild<QPushButton *>(QStringLiteral("logsTracebackButton")), Qt::LeftButton);
        QCOMPARE(logs->view()->model(), lines);
        QCOMPARE(logs->currentLine(), b + 4);
        // Save…
        const QString saved = m_dir.filePath(QStringLiteral("saved.log"));
        logs->chooseSaveFile = [&](QWidget *) { return saved; };
        QTest::mouseClick(window.findChild<QPushButton *>(QStringLiteral("logsSaveButton")), Qt::LeftButton);
        QFile file(saved);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.readAll().contains("alpha 1\nWARNING: the GCS is slow\n"));

        // Once the job has ended and is archived: its archived logs.
        QFile(gate).open(QIODevice::WriteOnly);
        QTRY_VERIFY_WITH_TIMEOUT(jobs->model()->index(rowOf(jobs, id), JobsModel::StateColumn).data().toString() == QStringLiteral("Archived (Succeeded)"), 60000);
        logs->showJob(QString());
        logs->showJob(id);
        QTRY_VERIFY_WITH_TIMEOUT(logs->sourceCombo()->count() >= 1, 20000);
        QVERIFY2(logs->sourceCombo()->itemText(0).contains(QStringLiteral("archived")), qPrintable(logs->sourceCombo()->itemText(0)));
        const int submitter = logs->sourceCombo()->findText(QStringLiteral("submitter"), Qt::MatchStartsWith);
        QVERIFY(submitter >= 0);
        logs->sourceCombo()->setFocus();
        logs->sourceCombo()->setCurrentIndex(-1);
        QTest::keyClick(logs->sourceCombo(), Qt::Key_Home);
        for (int i = 0; i < submitter; ++i) QTest::keyClick(logs->sourceCombo(), Qt::Key_Down);
        QTRY_VERIFY_WITH_TIMEOUT(rowOfText(QStringLiteral("the end")) >= 0, 20000);
        QVERIFY(rowOfText(QStringLiteral("alpha 1")) >= 0);
    }
};

QTEST_MAIN(TestLogsPanel)
#include "tst_logspanel.moc"
