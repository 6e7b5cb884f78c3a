// The Logs dock on the sandbox, as a person uses it from the window: Open logs on a running
// job shows its driver's log as it grows; the search (typed, F3 and Shift+F3, an expression,
// only the matching lines), the jump to the first traceback and Save; once the job is archived,
// its archived log from the bucket. Then, on a job whose head has a sidecar that crashed once:
// following the driver's log while the sandbox cuts every log stream (no line lost or
// repeated), Wrap lines, Copy (Ctrl+C and the context menu), the matches marked in the scroll
// bar, the sidecar's previous container, and All pods (merged) in time order, tagged.

#include "core/config/embeddedsandbox.h"
#include "core/config/profilemanager.h"
#include "core/job/tracker.h"
#include "core/logs/logmerge.h"
#include "core/session/session.h"
#include "gui/jobs/jobspanel.h"
#include "gui/logs/logspanel.h"
#include "gui/logs/matchscrollbar.h"
#include "gui/mainwindow.h"
#include "models/jobsmodel.h"
#include "models/loglinesmodel.h"
#include "support/memorysecretstore.h"
#include "support/sandboxfixture.h"
#include "support/sandboxjobs.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QContextMenuEvent>
#include <QDockWidget>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QAbstractItemView>
#include <QMenu>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSettings>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include <limits>

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
        options.crashLoopBackoffMs = 300;   // the sidecar that crashes once is back at once
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
        QCOMPARE(lines->index(int(b + 2)).data().toString(), QStringLiteral("▸ step 1/2"));
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

    void followsMergesWrapsAndCopies()
    {
        Config::ProfileStore store(m_dir.filePath(QStringLiteral("p2.ini")));
        Testing::MemorySecretStore secrets;
        Config::ProfileManager manager(&store, &secrets);
        Testing::ScriptedPrompts prompts;
        QVERIFY(store.addProfile(QStringLiteral("sandbox")).ok());
        for (auto it = m_connection.settings.cbegin(); it != m_connection.settings.cend(); ++it)
            QVERIFY(store.setValue(QStringLiteral("sandbox"), it.key(), it.value()).ok());
        QProcessEnvironment environment;
        for (auto it = m_connection.secrets.cbegin(); it != m_connection.secrets.cend(); ++it) environment.insert(it.key(), it.value());
        QVERIFY(manager.setActiveProfile(QStringLiteral("sandbox")).ok());
        QSettings().remove(QStringLiteral("logs/wrapLines"));
        Gui::MainWindow window(&manager, &prompts, environment);
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QTRY_VERIFY_WITH_TIMEOUT(window.jobTracker() && window.jobTracker()->hasSynced(), 20000);

        // The driver: a long line of words, a progress line, then 400 numbered lines over about
        // four seconds; then it waits. The head has a sidecar that crashes on its first run.
        const QString gate = m_dir.filePath(QStringLiteral("gate2"));
        const QString mark = m_dir.filePath(QStringLiteral("sidecar-ran"));
        const QString code = QStringLiteral("import os, time\n"
                                            "print(' '.join('word%d' % i for i in range(150)), flush=True)\n"
                                            "print('STARFORGE_PROGRESS {\"kind\": \"step\", \"step\": 1, \"total\": 2}', flush=True)\n"
                                            "for i in range(400):\n"
                                            "    print('n-%03d' % i, flush=True)\n"
                                            "    if i % 10 == 9: time.sleep(0.1)\n"
                                            "while not os.path.exists(r'%1'): time.sleep(0.1)\n")
                                 .arg(gate);
        const QString sidecar = QStringLiteral("if [ -e '%1' ]; then echo sidecar second run; exec sleep 600; fi; touch '%1'; echo sidecar first run; exit 3")
                                    .arg(mark);
        const QJsonObject head{
            {QStringLiteral("containers"),
             QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("ray-head")}, {QStringLiteral("image"), Testing::jobTestImage()}},
                        QJsonObject{{QStringLiteral("name"), QStringLiteral("sidecar")},
                                    {QStringLiteral("image"), Testing::jobTestImage()},
                                    {QStringLiteral("command"), QJsonArray{QStringLiteral("sh"), QStringLiteral("-c"), sidecar}}}}}};
        const QString id = QStringLiteral("lgmr44");
        const QJsonObject job = Testing::starforgeRayJob(QStringLiteral("merge"), id, Testing::driverEntrypoint(m_dir.path(), code), head);
        // Every log stream is cut after 300 ms from here on, until the follow is checked.
        m_sandbox->api()->setFaults(Sandbox::Faults{.dropLogsAfterMs = 300});
        QCOMPARE(m_http->send("POST", QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs"), QJsonDocument(job).toJson()).status, 201);
        QTableView *jobs = window.jobsPanel()->view();
        QTRY_VERIFY_WITH_TIMEOUT(rowOf(jobs, id) >= 0 && jobs->model()->index(rowOf(jobs, id), JobsModel::StateColumn).data().toString() == QStringLiteral("Running"), 30000);
        // The sidecar has crashed once and runs again before the logs are opened.
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(mark), 20000);
        const QString pods = QStringLiteral("/api/v1/namespaces/starforge/pods");
        const auto sidecarRestarted = [&] {
            for (const QJsonValue &pod : m_http->get(pods).json().value(QStringLiteral("items")).toArray()) {
                for (const QJsonValue &c : pod[QStringLiteral("status")][QStringLiteral("containerStatuses")].toArray()) {
                    if (c[QStringLiteral("name")].toString() == QStringLiteral("sidecar") && c[QStringLiteral("restartCount")].toInt() >= 1
                        && c[QStringLiteral("state")].toObject().contains(QStringLiteral("running")))
                        return true;
                }
            }
            return false;
        };
        QTRY_VERIFY_WITH_TIMEOUT(sidecarRestarted(), 20000);

        Gui::LogsPanel *logs = window.logsPanel();
        Net::Backoff::Params quick;
        quick.initialMs = 20;
        quick.maxMs = 200;
        logs->setStreamBackoff(quick);
        const QPoint at = jobs->visualRect(jobs->model()->index(rowOf(jobs, id), JobsModel::NameColumn)).center();
        QContextMenuEvent menuEvent(QContextMenuEvent::Mouse, at, jobs->viewport()->mapToGlobal(at));
        QApplication::sendEvent(jobs->viewport(), &menuEvent);
        QMenu *menu = nullptr;
        QTRY_VERIFY((menu = window.findChild<QMenu *>(QStringLiteral("jobsContextMenu"))) && menu->isVisible());
        QTest::keyClick(menu, Qt::Key_L);
        QTRY_COMPARE(logs->jobId(), id);
        QComboBox *sources = logs->sourceCombo();
        QTRY_VERIFY_WITH_TIMEOUT(sources->count() >= 5, 20000);
        QStringList labels;
        for (int i = 0; i < sources->count(); ++i) labels << sources->itemText(i);
        // The driver's, the head's two containers, the sidecar's previous one, and all merged.
        QVERIFY2(labels.at(0).startsWith(QStringLiteral("submitter: ")), qPrintable(labels.join(u'|')));
        const int previous = int(labels.indexOf(QRegularExpression(QStringLiteral("^head: .*/sidecar \\(previous container\\)$"))));
        const int merged = int(labels.indexOf(QStringLiteral("All pods (merged)")));
        QVERIFY2(previous > 0 && merged == labels.size() - 1, qPrintable(labels.join(u'|')));
        QCOMPARE(labels.filter(QStringLiteral("(previous container)")).size(), 1);   // not the ray-head, which never restarted

        // The driver's log, followed while every stream is cut: each numbered line once, in order.
        auto *lines = logs->linesModel();
        const auto rawRows = [&] {
            QStringList shown;
            for (int r = 0; r < lines->rowCount(); ++r) shown << lines->index(r).data(Models::LogLinesModel::RawTextRole).toString();
            return shown;
        };
        QTRY_VERIFY2_WITH_TIMEOUT(rawRows().contains(QStringLiteral("n-399")), qPrintable(rawRows().join(u'|').right(2000)), 30000);
        QStringList numbered = rawRows().filter(QRegularExpression(QStringLiteral("^n-\\d+$")));
        QStringList expected;
        for (int i = 0; i < 400; ++i) expected << QStringLiteral("n-%1").arg(i, 3, 10, QLatin1Char('0'));
        QCOMPARE(numbered, expected);
        QVERIFY2(logs->follower()->reconnects() >= 3, qPrintable(QString::number(logs->follower()->reconnects())));
        m_sandbox->api()->setFaults(Sandbox::Faults{});

        // Wrap lines, from the keyboard (Alt+W) and the tool button; remembered.
        QAbstractItemView *view = logs->view();
        const int longRow = int(rawRows().indexOf(QRegularExpression(QStringLiteral("word0 word1 .*"))));
        const int progressRow = int(rawRows().indexOf(QRegularExpression(QStringLiteral("STARFORGE_PROGRESS .*"))));
        QVERIFY(longRow >= 0 && progressRow == longRow + 1);
        window.activateWindow();
        QTRY_VERIFY(window.isActiveWindow());
        QTest::mouseClick(logs->followCheck(), Qt::LeftButton);   // the reader stays where they scroll
        QVERIFY(!logs->followCheck()->isChecked());
        view->scrollTo(lines->index(longRow), QAbstractItemView::PositionAtTop);
        view->setFocus();
        QCOMPARE(view->visualRect(lines->index(longRow)).height(), view->visualRect(lines->index(progressRow)).height());
        QVERIFY(!logs->wrapAction()->isChecked());
        QTest::keyClick(view, Qt::Key_W, Qt::AltModifier);
        QVERIFY(logs->wrapAction()->isChecked());
        QVERIFY(qobject_cast<QTableView *>(view)->wordWrap());
        QCOMPARE(QSettings().value(QStringLiteral("logs/wrapLines")).toBool(), true);
        QTRY_VERIFY(view->visualRect(lines->index(longRow)).height() > 2 * view->visualRect(lines->index(progressRow)).height());
        {
            Gui::LogsPanel fresh;
            QVERIFY(fresh.wrapAction()->isChecked());
        }
        QTest::mouseClick(logs->wrapButton(), Qt::LeftButton);
        QVERIFY(!logs->wrapAction()->isChecked());
        QCOMPARE(QSettings().value(QStringLiteral("logs/wrapLines")).toBool(), false);
        QTRY_COMPARE(view->visualRect(lines->index(longRow)).height(), view->visualRect(lines->index(progressRow)).height());

        // Copy: a click, a shift-click two rows down, Ctrl+C: the lines as written.
        QGuiApplication::clipboard()->clear();
        view->scrollTo(lines->index(progressRow), QAbstractItemView::PositionAtTop);
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(lines->index(progressRow)).center());
        QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::ShiftModifier, view->visualRect(lines->index(progressRow + 2)).center());
        QTest::keyClick(view, Qt::Key_C, Qt::ControlModifier);
        const QString copied = QStringLiteral("STARFORGE_PROGRESS {\"kind\": \"step\", \"step\": 1, \"total\": 2}\nn-000\nn-001\n");
        QCOMPARE(QGuiApplication::clipboard()->text(), copied);
        // The context menu: Copy (C) and Save (S).
        QGuiApplication::clipboard()->clear();
        const QPoint row = view->visualRect(lines->index(progressRow + 1)).center();
        QContextMenuEvent viewMenuEvent(QContextMenuEvent::Mouse, row, view->viewport()->mapToGlobal(row));
        QApplication::sendEvent(view->viewport(), &viewMenuEvent);
        QMenu *viewMenu = nullptr;
        QTRY_VERIFY((viewMenu = logs->findChild<QMenu *>(QStringLiteral("logsContextMenu"))) && viewMenu->isVisible());
        QTest::keyClick(viewMenu, Qt::Key_C);
        QCOMPARE(QGuiApplication::clipboard()->text(), copied);
        const QString saved = m_dir.filePath(QStringLiteral("saved2.log"));
        logs->chooseSaveFile = [&](QWidget *) { return saved; };
        QApplication::sendEvent(view->viewport(), &viewMenuEvent);
        QTRY_VERIFY(viewMenu->isVisible());
        QTest::keyClick(viewMenu, Qt::Key_S);
        QTRY_VERIFY(!viewMenu->isVisible());
        QFile savedFile(saved);
        QVERIFY(savedFile.open(QIODevice::ReadOnly));
        QVERIFY(savedFile.readAll().contains("n-398\nn-399\n"));
        // From the keyboard: Shift+F10 opens the same menu.
        view->setFocus();
        QTest::keyClick(view, Qt::Key_F10, Qt::ShiftModifier);
        QTRY_VERIFY(viewMenu->isVisible());
        QTest::keyClick(viewMenu, Qt::Key_Escape);
        QTRY_VERIFY(!viewMenu->isVisible());

        // The scroll bar marks the matches: n-100 to n-199, in the band of rows they are in.
        logs->searchEdit()->setFocus();
        QTest::keyClicks(logs->searchEdit(), QStringLiteral("n-1"));
        QTRY_COMPARE(logs->matches().size(), 100);
        Gui::MatchScrollBar *bar = logs->matchScrollBar();
        QCOMPARE(view->verticalScrollBar(), bar);
        QVERIFY(bar->isVisible() && bar->grooveHeight() > 20);
        const QList<int> marks = bar->marks();
        const qint64 total = lines->rowCount();
        const int height = bar->grooveHeight();
        QVERIFY(!marks.isEmpty());
        QCOMPARE(marks.first(), int(logs->matches().first() * height / total));
        QCOMPARE(marks.last(), int(logs->matches().last() * height / total));
        QCOMPARE(marks, Gui::MatchScrollBar::markRows(logs->matches(), total, height));
        QVERIFY(marks.size() >= 2 && marks.size() < height);   // a band, not the whole groove
        QVERIFY2(bar->accessibleDescription().contains(QStringLiteral("100 search match")), qPrintable(bar->accessibleDescription()));
        QTest::keyClick(logs->searchEdit(), Qt::Key_A, Qt::ControlModifier);
        QTest::keyClick(logs->searchEdit(), Qt::Key_Delete);
        QTRY_VERIFY(bar->marks().isEmpty());

        // The sidecar's previous container: its first run's line alone.
        sources->setFocus();
        QTest::keyClick(sources, Qt::Key_Home);
        for (int i = 0; i < previous; ++i) QTest::keyClick(sources, Qt::Key_Down);
        QCOMPARE(sources->currentIndex(), previous);
        QTRY_COMPARE_WITH_TIMEOUT(rawRows(), QStringList{QStringLiteral("sidecar first run")}, 20000);
        // A container that never restarted has no previous log: the API's refusal is shown.
        const QString headPod = labels.at(1).section(u' ', 1).section(u'/', 0, 0);
        logs->followLive(window.session()->kube(), QStringLiteral("starforge"), {{headPod, QStringLiteral("ray-head"), "head", true}}, QStringLiteral("previous"));
        const QString refusal = QStringLiteral("previous terminated container \"ray-head\" in pod \"%1\" not found").arg(headPod);
        QTRY_VERIFY2_WITH_TIMEOUT(logs->statusLabel()->text().contains(refusal), qPrintable(logs->statusLabel()->text()), 20000);
        QCOMPARE(lines->rowCount(), 0);
        logs->showJob(QString());
        logs->showJob(id);
        QTRY_COMPARE_WITH_TIMEOUT(sources->count(), labels.size(), 20000);

        // All pods (merged): every container's current log, ordered as their timestamps say
        // (ties in the sources' order), each line tagged.
        sources->setFocus();
        QTest::keyClick(sources, Qt::Key_End);
        QCOMPARE(sources->currentText(), QStringLiteral("All pods (merged)"));
        struct Stamped
        {
            qint64 time;
            int source;
            QString text;
        };
        const auto expectedMerge = [&] {
            QList<Stamped> all;
            int index = 0;
            for (const QString &label : std::as_const(labels)) {
                if (label.contains(QStringLiteral("(previous container)")) || label == QStringLiteral("All pods (merged)")) continue;
                // "submitter: pod" or "head: pod/container"
                const QString role = label.section(QStringLiteral(": "), 0, 0);
                const QString pod = label.section(QStringLiteral(": "), 1).section(u'/', 0, 0);
                const QString container = label.section(QStringLiteral(": "), 1).section(u'/', 1);
                const QString tag = container.isEmpty() ? role : role + u'/' + container;
                QString path = pods + u'/' + pod + QStringLiteral("/log?timestamps=true");
                if (!container.isEmpty()) path += QStringLiteral("&container=") + container;
                qint64 last = std::numeric_limits<qint64>::min();
                for (const QByteArray &line : m_http->get(path).body.split('\n')) {
                    if (line.isEmpty()) continue;
                    const qsizetype space = line.indexOf(' ');
                    last = std::max(last, Logs::parseRfc3339Nanos(line.left(space)).value_or(last));
                    all.append({last, index, QStringLiteral("[%1] %2").arg(tag, QString::fromUtf8(line.mid(space + 1)))});
                }
                ++index;
            }
            std::stable_sort(all.begin(), all.end(), [](const Stamped &a, const Stamped &b) { return std::tie(a.time, a.source) < std::tie(b.time, b.source); });
            QStringList out;
            for (const Stamped &s : std::as_const(all)) out << s.text;
            return out;
        };
        QTRY_VERIFY_WITH_TIMEOUT(rawRows().contains(QStringLiteral("[submitter] n-399")), 20000);
        const auto mergeDifference = [&] {
            const QStringList shown = rawRows();
            const QStringList wanted = expectedMerge();
            QStringList out;
            for (const QString &l : wanted)
                if (!shown.contains(l)) out << QStringLiteral("missing: ") + l;
            for (const QString &l : shown)
                if (!wanted.contains(l)) out << QStringLiteral("extra: ") + l;
            for (qsizetype i = 0; out.isEmpty() && i < wanted.size(); ++i)
                if (shown.value(i) != wanted.at(i)) out << QStringLiteral("row %1: %2 where %3 was due").arg(i).arg(shown.value(i), wanted.at(i));
            return QString(logs->statusLabel()->text() + u'\n' + out.mid(0, 10).join(u'\n'));
        };
        QTRY_VERIFY2_WITH_TIMEOUT(rawRows() == expectedMerge(), qPrintable(mergeDifference()), 20000);
        const QStringList mergedRows = rawRows();
        QVERIFY(mergedRows.contains(QStringLiteral("[head/sidecar] sidecar second run")));
        QVERIFY(!mergedRows.contains(QStringLiteral("[head/sidecar] sidecar first run")));   // the current container's only
        QCOMPARE(mergedRows.filter(QRegularExpression(QStringLiteral("^\\[submitter\\] n-\\d+$"))).size(), 400);
        QFile(gate).open(QIODevice::WriteOnly);
    }
};

QTEST_MAIN(TestLogsPanel)
#include "tst_logspanel.moc"
