// The Events dock on the sandbox, from the main window as a person uses it:
//  - a job that cannot be scheduled: its lanes (RayJob, RayCluster, head), the FailedScheduling
//    warning as a span once repeated, the banner with the diagnosis' cause and its link to the
//    evidence, which is ringed on the timeline and selected in the list beside it; a click on a
//    mark selects the event in the list, the keyboard walks and zooms, the filter narrows the
//    list, and assistive technology reads one child per event;
//    When Kubernetes drops the job's events, the timeline keeps them from the session's journal;
//  - a job that runs: no banner, a submitter lane, the Running phase; once it ends and is
//    archived (its RayCluster deleted) the timeline is read from the archived events.json,
//    merged with the journal without duplicates, its phases from the states the journal saw.

#include "core/config/embeddedsandbox.h"
#include "core/config/profilemanager.h"
#include "core/job/tracker.h"
#include "core/session/session.h"
#include "gui/events/eventspanel.h"
#include "gui/events/timelineview.h"
#include "gui/jobs/jobspanel.h"
#include "gui/mainwindow.h"
#include "models/jobsmodel.h"
#include "models/timelinemodel.h"
#include "support/memorysecretstore.h"
#include "support/sandboxfixture.h"
#include "support/sandboxjobs.h"

#include <QAbstractItemModelTester>
#include <QAccessible>
#include <QDockWidget>
#include <QFile>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QJsonArray>
#include <QSet>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include "scriptedprompts.h"

using namespace Starforge;
using Models::JobsModel;
using Models::TimelineModel;

class TestEventsPanel : public QObject
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

    static QStringList laneTitles(const TimelineModel *model)
    {
        QStringList titles;
        for (const Events::Lane &lane : model->timeline().lanes)
            titles << lane.title;
        return titles;
    }

    static int rowWithReason(const TimelineModel *model, const QString &reason)
    {
        for (int row = 0; row < model->rowCount(); ++row) {
            if (model->itemAt(row).event.reason == reason)
                return row;
        }
        return -1;
    }

    static Gui::EventsPanel *showEventsDock(Gui::MainWindow &window)
    {
        auto *dock = window.findChild<QDockWidget *>(QStringLiteral("eventsDock"));
        dock->show();
        dock->raise();
        return window.eventsPanel();
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

    void aPendingJobExplained()
    {
        Gui::MainWindow window(m_manager.get(), &m_prompts, m_environment);
        window.resize(1500, 950);
        window.show();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QTRY_VERIFY(window.session()->isUp());
        QTRY_VERIFY(window.jobTracker() && window.jobTracker()->hasSynced());
        QTableView *jobs = window.jobsPanel()->view();
        Gui::EventsPanel *panel = showEventsDock(window);
        panel->setRefreshInterval(300);
        QAbstractItemModelTester tester(panel->timelineModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester proxyTester(panel->listModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(!panel->isShowingJob());

        const QString pending = QStringLiteral("vtbb44");
        QCOMPARE(m_http->send("POST", m_rayjobs,
                              QJsonDocument(Testing::starforgeRayJob(QStringLiteral("events"), pending, QStringLiteral("true"), Testing::unschedulableHead())).toJson())
                     .status,
                 201);
        QTRY_VERIFY_WITH_TIMEOUT(rowOf(jobs, pending) >= 0, 20000);
        clickRow(jobs, pending);
        QTRY_COMPARE(panel->jobId(), pending);
        QVERIFY(panel->isShowingJob());
        TimelineModel *model = panel->timelineModel();

        // The lanes: the RayJob, its RayCluster, the head group and its pod.
        QTRY_VERIFY_WITH_TIMEOUT(rowWithReason(model, QStringLiteral("FailedScheduling")) >= 0, 20000);
        const QStringList lanes = laneTitles(model);
        QVERIFY2(lanes.size() >= 4, qPrintable(lanes.join(u',')));
        QCOMPARE(lanes.at(0), QStringLiteral("RayJob events-vtbb44"));
        QVERIFY2(lanes.at(1).startsWith(QStringLiteral("RayCluster events-vtbb44-")), qPrintable(lanes.at(1)));
        QCOMPARE(lanes.at(2), QStringLiteral("head"));
        QVERIFY2(lanes.at(3).contains(QStringLiteral("-head-")), qPrintable(lanes.at(3)));
        int failed = rowWithReason(model, QStringLiteral("FailedScheduling"));
        QVERIFY(model->itemAt(failed).warning());
        QCOMPARE(model->itemAt(failed).lane, 3);
        QVERIFY(rowWithReason(model, QStringLiteral("CreatedRayCluster")) >= 0);
        QCOMPARE(model->timeline().lanes.at(model->itemAt(rowWithReason(model, QStringLiteral("CreatedRayCluster"))).lane).kind,
                 Events::LaneKind::RayJob);

        // The banner: the cause with the series asked, and the evidence ringed.
        QLabel *banner = panel->diagnosisBanner();
        QTRY_VERIFY_WITH_TIMEOUT(banner->isVisible(), 20000);
        QTRY_VERIFY2_WITH_TIMEOUT(banner->text().contains(QStringLiteral("NoNodeMatchesSelector")) && banner->text().contains(QStringLiteral("b200"))
                                      && banner->text().contains(QStringLiteral("#evidence")),
                                  qPrintable(banner->text()), 20000);
        failed = rowWithReason(model, QStringLiteral("FailedScheduling"));
        QVERIFY(model->index(failed, 0).data(TimelineModel::EvidenceRole).toBool());
        QVERIFY(!model->index(rowWithReason(model, QStringLiteral("CreatedRayCluster")), 0).data(TimelineModel::EvidenceRole).toBool());

        // The scheduler tries again: the event becomes a span with its count.
        QTRY_VERIFY_WITH_TIMEOUT(model->itemAt(rowWithReason(model, QStringLiteral("FailedScheduling"))).isSpan(), 40000);
        QVERIFY(model->itemAt(rowWithReason(model, QStringLiteral("FailedScheduling"))).event.count >= 2);

        // The link selects the evidence in both views.
        QVERIFY(QMetaObject::invokeMethod(banner, "linkActivated", Q_ARG(QString, QStringLiteral("#evidence"))));
        Gui::TimelineView *view = panel->timelineView();
        failed = rowWithReason(model, QStringLiteral("FailedScheduling"));
        QCOMPARE(view->currentIndex().row(), failed);
        QCOMPARE(panel->listModel()->mapToSource(panel->listView()->currentIndex()).row(), failed);
        QVERIFY(view->hasFocus());

        // A click on another mark selects it in the list too.
        const int created = rowWithReason(model, QStringLiteral("CreatedRayCluster"));
        view->zoomToFit();
        view->scrollTo(model->index(created, 0));
        const QRect mark = view->visualRect(model->index(created, 0));
        QVERIFY2(view->viewport()->rect().contains(mark.center()), qPrintable(QStringLiteral("%1,%2").arg(mark.x()).arg(mark.y())));
        QVERIFY2(view->indexAt(mark.center()).row() == created,
                 qPrintable(QStringLiteral("mark %1,%2 %3x%4 lane %5 gutter %6 viewport %7x%8 laneAt %9 item lane %10 rows %11")
                                .arg(mark.x()).arg(mark.y()).arg(mark.width()).arg(mark.height()).arg(model->itemAt(created).lane)
                                .arg(view->gutterWidth()).arg(view->viewport()->width()).arg(view->viewport()->height())
                                .arg(view->laneAt(mark.center().y())).arg(model->itemAt(created).lane).arg(model->rowCount())));
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, mark.center());
        QCOMPARE(view->currentIndex().row(), created);
        QCOMPARE(panel->listModel()->mapToSource(panel->listView()->currentIndex()).row(), created);
        // The tooltip is the whole event.
        QVERIFY(model->index(created, 0).data(Qt::ToolTipRole).toString().contains(QStringLiteral("Created RayCluster")));

        // The keyboard: Right goes to the next event in time, + zooms in, 0 fits again.
        view->setFocus();
        QTest::keyClick(view, Qt::Key_End);
        QCOMPARE(view->currentIndex().row(), model->rowCount() - 1);
        QTest::keyClick(view, Qt::Key_Home);
        QCOMPARE(view->currentIndex().row(), 0);
        QTest::keyClick(view, Qt::Key_Right);
        QCOMPARE(view->currentIndex().row(), 1);
        const double fitted = view->pixelsPerSecond();
        QVERIFY(view->isFitting());
        QTest::keyClick(view, Qt::Key_Plus);
        QVERIFY(view->pixelsPerSecond() > fitted * 1.2);
        QVERIFY(!view->isFitting());
        QTest::keyClick(view, Qt::Key_0);
        QVERIFY(view->isFitting());
        QCOMPARE(view->pixelsPerSecond(), fitted);

        // The filter narrows the list, not the timeline.
        QTest::keyClicks(panel->filterEdit(), QStringLiteral("failedsched"));
        QCOMPARE(panel->listModel()->rowCount(), 1);
        QVERIFY(model->rowCount() > 1);
        panel->filterEdit()->clear();
        QCOMPARE(panel->listModel()->rowCount(), model->rowCount());
        // Sorted by count, most first.
        panel->listView()->sortByColumn(TimelineModel::CountColumn, Qt::DescendingOrder);
        QCOMPARE(panel->listModel()->index(0, TimelineModel::ReasonColumn).data().toString(), QStringLiteral("FailedScheduling"));

        // Assistive technology: one child per event, named by type, reason and object.
        QAccessibleInterface *accessible = QAccessible::queryAccessibleInterface(view);
        QVERIFY(accessible);
        QCOMPARE(accessible->role(), QAccessible::List);
        QCOMPARE(accessible->childCount(), model->rowCount());
        failed = rowWithReason(model, QStringLiteral("FailedScheduling"));
        const QString name = accessible->child(failed)->text(QAccessible::Name);
        QVERIFY2(name.startsWith(QStringLiteral("Warning FailedScheduling on ")) && name.contains(QStringLiteral("evidence")), qPrintable(name));
        QVERIFY(accessible->child(failed)->text(QAccessible::Description).contains(QStringLiteral("node")));
        QCOMPARE(accessible->indexOfChild(accessible->child(failed)), failed);

        // Kubernetes drops the job's events (their hour is up): the timeline still has them,
        // from the session's journal.
        const QString droppedKey = model->itemAt(rowWithReason(model, QStringLiteral("FailedScheduling"))).key();
        const QString createdKey = model->itemAt(rowWithReason(model, QStringLiteral("CreatedRayCluster"))).key();
        const auto listed = m_http->send("GET", QStringLiteral("/api/v1/namespaces/starforge/events"));
        QCOMPARE(listed.status, 200);
        int dropped = 0;
        for (const QJsonValue &e : QJsonDocument::fromJson(listed.body).object().value(QStringLiteral("items")).toArray()) {
            const QString object = e[QStringLiteral("involvedObject")][QStringLiteral("name")].toString();
            if (!object.startsWith(QStringLiteral("events-vtbb44")))
                continue;
            const QString eventName = e[QStringLiteral("metadata")][QStringLiteral("name")].toString();
            QCOMPARE(m_http->send("DELETE", QStringLiteral("/api/v1/namespaces/starforge/events/") + eventName).status, 200);
            ++dropped;
        }
        QVERIFY(dropped >= 3);
        QCOMPARE(m_http->send("GET", QStringLiteral("/api/v1/namespaces/starforge/events/") + droppedKey.section(u'/', 1)).status, 404);
        QSignalSpy refreshed(model, &TimelineModel::layoutOfTimelineChanged);
        QTRY_VERIFY_WITH_TIMEOUT(refreshed.size() >= 3, 20000);
        QVERIFY2(model->rowOfKey(droppedKey) >= 0, qPrintable(droppedKey));
        QVERIFY2(model->rowOfKey(createdKey) >= 0, qPrintable(createdKey));

        QCOMPARE(m_http->send("DELETE", m_rayjobs + QStringLiteral("/events-") + pending).status, 200);
    }

    void aJobThatRunsThenIsArchived()
    {
        Gui::MainWindow window(m_manager.get(), &m_prompts, m_environment);
        window.resize(1500, 950);
        window.show();
        QTRY_VERIFY(window.session()->isUp());
        QTRY_VERIFY(window.jobTracker() && window.jobTracker()->hasSynced());
        QTableView *jobs = window.jobsPanel()->view();
        Gui::EventsPanel *panel = showEventsDock(window);
        panel->setRefreshInterval(300);
        TimelineModel *model = panel->timelineModel();

        const QString gate = m_dir.filePath(QStringLiteral("gate"));
        const QString running = QStringLiteral("vtbb22");
        const QJsonObject job = Testing::starforgeRayJob(
            QStringLiteral("events"), running,
            Testing::driverEntrypoint(m_dir.path(), QStringLiteral("import os, time\nprint('hello', flush=True)\nwhile not os.path.exists(r'%1'): time.sleep(0.1)\n").arg(gate)));
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(job).toJson()).status, 201);
        QTRY_VERIFY_WITH_TIMEOUT(rowOf(jobs, running) >= 0, 20000);
        clickRow(jobs, running);
        QTRY_COMPARE(panel->jobId(), running);
        QTRY_VERIFY_WITH_TIMEOUT(jobs->model()->index(rowOf(jobs, running), JobsModel::StateColumn).data().toString() == QStringLiteral("Running"), 30000);
        // Running: the phase band, the submitter's lane, no banner.
        QTRY_VERIFY_WITH_TIMEOUT(model->timeline().phaseAt(QDateTime::currentDateTimeUtc()) == Events::Phase::Running, 20000);
        QTRY_VERIFY2_WITH_TIMEOUT(laneTitles(model).contains(QStringLiteral("submitter")), qPrintable(laneTitles(model).join(u',')), 20000);
        QVERIFY(!panel->diagnosisBanner()->isVisible());
        const int liveEvents = model->rowCount();
        QVERIFY(liveEvents >= 3);

        // It ends; the tracker archives it and the operator deletes its cluster: the timeline
        // now comes from the archived events.json, with the same lanes.
        QFile(gate).open(QIODevice::WriteOnly);
        QTRY_VERIFY_WITH_TIMEOUT(jobs->model()->index(rowOf(jobs, running), JobsModel::StateColumn).data().toString() == QStringLiteral("Archived (Succeeded)"), 60000);
        QTRY_VERIFY2_WITH_TIMEOUT(model->timeline().phases.size() >= 2 && model->timeline().phases.last().phase == Events::Phase::Succeeded,
                                  qPrintable(QString::number(model->timeline().phases.size())), 20000);
        QVERIFY(laneTitles(model).contains(QStringLiteral("submitter")));
        QVERIFY(laneTitles(model).at(0) == QStringLiteral("RayJob events-vtbb22"));
        QVERIFY2(model->rowCount() >= liveEvents, qPrintable(QStringLiteral("%1 < %2").arg(model->rowCount()).arg(liveEvents)));
        // The archive's events.json and the journal merged: each event once.
        QSet<QString> keys;
        for (const Events::TimelineItem &item : model->timeline().items)
            keys.insert(item.key());
        QCOMPARE(keys.size(), model->timeline().items.size());
        // The phases from the states the journal recorded as the job went: it was seen Running.
        bool sawRunning = false;
        for (const Events::PhaseBand &band : model->timeline().phases)
            sawRunning = sawRunning || band.phase == Events::Phase::Running;
        QVERIFY(sawRunning);
        QVERIFY(!panel->diagnosisBanner()->isVisible());
    }
};

QTEST_MAIN(TestEventsPanel)
#include "tst_eventspanel.moc"
