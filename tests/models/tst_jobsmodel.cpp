// JobsModel under QAbstractItemModelTester on the sandbox: real RayJobs followed by a real
// JobTracker and archived to the sandbox's S3, and the history read back from that bucket. Each
// case checks what a view sees: the states a row goes through, that a job's row turns into its
// archived record in place (no removal, no reset), and how history and live rows merge.

#include "core/job/jobrecord.h"
#include "core/job/rayjobbuilder.h"
#include "core/job/tracker.h"
#include "core/kube/kubeclient.h"
#include "core/s3/s3client.h"
#include "models/jobsmodel.h"
#include "support/sandboxfixture.h"
#include "support/sandboxjobs.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "sandbox/sandbox.h"

using namespace Starforge;
using Job::JobState;
using Models::JobsModel;

namespace {

// A RayJob as the app makes them, named model-<id>.
QJsonObject rayJob(const QString &id, const QString &entrypoint, const QJsonObject &headExtra = {})
{
    return Testing::starforgeRayJob(QStringLiteral("model"), id, entrypoint, headExtra);
}

const QJsonObject StuckHead = Testing::unschedulableHead();

// What a row shows, as "State" or "Archived (State)", for following a row's life.
QString shown(const JobsModel &model, const QString &id)
{
    const int row = model.rowOf(id);
    return row < 0 ? QString() : model.index(row, JobsModel::StateColumn).data().toString();
}

} // namespace

class TestJobsModel : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<Testing::SandboxHttp> m_http;
    std::unique_ptr<Kube::KubeClient> m_kube;
    std::unique_ptr<S3::S3Client> m_s3;
    const QString m_rayjobs = QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs");

    QString script(const QString &code) { return Testing::driverEntrypoint(m_dir.path(), code); }

    void create(const QJsonObject &job) { QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(job).toJson()).status, 201); }

    std::unique_ptr<Job::JobTracker> tracker()
    {
        Job::TrackerOptions options;
        options.ns = QStringLiteral("starforge");
        options.checkIntervalMs = 200;
        options.seriesLabel = QStringLiteral("starforge/gpu-series");
        options.viewer.owner = Testing::sandboxOwner();
        auto t = std::make_unique<Job::JobTracker>(m_kube.get(), m_s3.get(), options);
        t->start();
        return t;
    }

    bool put(const QString &key, const QByteArray &data)
    {
        std::unique_ptr<S3::S3Reply> reply(m_s3->putObject(key, data));
        return QTest::qWaitFor([&] { return reply->isFinished(); }, 10000) && reply->result().ok();
    }
    bool remove(const QString &key)
    {
        std::unique_ptr<S3::S3Reply> reply(m_s3->deleteObject(key));
        return QTest::qWaitFor([&] { return reply->isFinished(); }, 10000) && reply->result().ok();
    }

    // An archived record as the archiver writes it.
    static QByteArray statusJson(const QString &id, JobState state, const QString &created, const QString &ended, const QString &message)
    {
        Job::JobRecord r;
        r.id = id;
        r.name = QStringLiteral("old");
        r.rayJobName = QStringLiteral("old-") + id;
        r.ns = QStringLiteral("starforge");
        r.state = state;
        r.archived = true;
        r.message = message;
        r.created = QDateTime::fromString(created, Qt::ISODate);
        r.started = r.created.addSecs(30);
        r.ended = QDateTime::fromString(ended, Qt::ISODate);
        // Two pools, the second with the JobSpec's default of 8 GPUs per node.
        r.jobSpec = QJsonObject{{QStringLiteral("pools"), QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("train")}, {QStringLiteral("series"), QStringLiteral("h200")},
                                                                                 {QStringLiteral("nodes"), 2}, {QStringLiteral("gpusPerNode"), 8}},
                                                                     QJsonObject{{QStringLiteral("name"), QStringLiteral("gen")}, {QStringLiteral("series"), QStringLiteral("h100")}}}}};
        r.archivedAt = r.ended;
        r.lost << QStringLiteral("Head and worker logs: the RayCluster was already deleted.");
        return QJsonDocument(r.toJson()).toJson();
    }

    static bool refreshed(JobsModel &model)
    {
        QSignalSpy loaded(&model, &JobsModel::historyLoaded);
        QSignalSpy failed(&model, &JobsModel::historyFailed);
        model.refreshHistory();
        if (!QTest::qWaitFor([&] { return !loaded.isEmpty() || !failed.isEmpty(); }, 15000))
            return false;
        if (!failed.isEmpty())
            qWarning().noquote() << failed.first().first().toString();
        return !loaded.isEmpty();
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
        m_kube = std::make_unique<Kube::KubeClient>(Testing::kubeClientConfig(*m_sandbox));
        m_s3 = std::make_unique<S3::S3Client>(Testing::s3ClientConfig(*m_sandbox));
    }

    void cleanupTestCase()
    {
        m_s3.reset();
        m_kube.reset();
        m_http.reset();
        m_sandbox.reset();
    }

    void ageTexts()
    {
        QCOMPARE(JobsModel::ageText(5), QStringLiteral("just now"));
        QCOMPARE(JobsModel::ageText(4 * 60 + 10), QStringLiteral("4 min ago"));
        QCOMPARE(JobsModel::ageText(3 * 3600), QStringLiteral("3 h ago"));
        QCOMPARE(JobsModel::ageText(5 * 86400), QStringLiteral("5 d ago"));
        JobsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.columnCount(), int(JobsModel::ColumnCount));
        QCOMPARE(model.headerData(JobsModel::StateColumn, Qt::Horizontal).toString(), QStringLiteral("State"));
        model.refreshHistory(); // no store: nothing happens
        QVERIFY(!model.isHistoryLoading());
    }

    void aJobsRowGoesFromPendingToRunningToArchived()
    {
        JobsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        const QString id = QStringLiteral("cdfg22");
        QStringList seen;
        auto look = [&] {
            const QString now = shown(model, id);
            if (!now.isEmpty() && (seen.isEmpty() || seen.last() != now))
                seen << now;
        };
        connect(&model, &QAbstractItemModel::rowsInserted, this, look);
        connect(&model, &QAbstractItemModel::dataChanged, this, look);

        auto t = tracker();
        model.setTracker(t.get());
        QTRY_VERIFY(t->hasSynced());
        create(rayJob(id, script(QStringLiteral("import time\nprint('step 1', flush=True)\ntime.sleep(2)\nprint('the end')\n"))));
        QTRY_VERIFY_WITH_TIMEOUT(model.rowOf(id) >= 0, 10000);
        const QModelIndex first = model.index(model.rowOf(id), JobsModel::IdColumn);
        QCOMPARE(first.data().toString(), id);
        QCOMPARE(model.index(first.row(), JobsModel::NameColumn).data().toString(), QStringLiteral("model-") + id);
        QVERIFY(first.data(JobsModel::LiveRole).toBool());
        QTRY_VERIFY_WITH_TIMEOUT(first.data(JobsModel::ArchivedRole).toBool(), 60000);

        // Pending, Running, the outcome, then the archive: in place, the same row all along.
        QVERIFY2(seen.size() >= 3, qPrintable(seen.join(u',')));
        QCOMPARE(seen.mid(0, 2), (QStringList { QStringLiteral("Pending"), QStringLiteral("Running") }));
        QCOMPARE(seen.last(), QStringLiteral("Archived (Succeeded)"));
        QCOMPARE(first.data(JobsModel::StateRole).value<JobState>(), JobState::Succeeded);
        QVERIFY(!first.data(JobsModel::LiveRole).toBool());
        QVERIFY(!first.data(JobsModel::ActiveRole).toBool());
        const auto record = first.data(JobsModel::RecordRole).value<Job::JobRecord>();
        QCOMPARE(record.id, id);
        QVERIFY(record.archived);
        QVERIFY(!record.logs.isEmpty());
        QVERIFY(!model.index(first.row(), JobsModel::EndedColumn).data().toString().isEmpty());
        QCOMPARE(model.index(first.row(), JobsModel::SubmittedColumn).data().toString(), QStringLiteral("just now"));
        // The tracker's jobRemoved after the archive leaves the row.
        QTRY_VERIFY(!t->job(id));
        QTest::qWait(300);
        QCOMPARE(model.rowOf(id), first.row());
        QCOMPARE(removed.size(), 0);
        QCOMPARE(resets.size(), 0);

        // Ages follow the clock.
        model.setClock([created = record.created] { return created.addSecs(7 * 60); });
        QCOMPARE(model.index(first.row(), JobsModel::SubmittedColumn).data().toString(), QStringLiteral("7 min ago"));
    }

    void aStuckJobIsPendingAndStopTurnsItsRowIntoTheArchive()
    {
        JobsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        auto t = tracker();
        QTRY_VERIFY(t->hasSynced());
        const QString id = QStringLiteral("cdfg44");
        create(rayJob(id, script(QStringLiteral("pass\n")), StuckHead));
        // The model may be attached after the tracker knows the job: it takes the tracker's list.
        QTRY_VERIFY(t->job(id).has_value());
        model.setTracker(t.get());
        QVERIFY(model.rowOf(id) >= 0);
        QTest::qWait(2000); // nothing runs it: it stays Pending (the deadline is 30 min)
        const QModelIndex state = model.index(model.rowOf(id), JobsModel::StateColumn);
        QCOMPARE(state.data().toString(), QStringLiteral("Pending"));
        QCOMPARE(state.data(JobsModel::StateRole).value<JobState>(), JobState::Pending);
        QVERIFY(state.data(JobsModel::ActiveRole).toBool());
        QVERIFY(state.data(JobsModel::LiveRole).toBool());

        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        std::optional<Result<Job::JobRecord>> stopped;
        t->stopJob(id, [&](Result<Job::JobRecord> r) { stopped = std::move(r); });
        QTRY_VERIFY_WITH_TIMEOUT(stopped.has_value(), 30000);
        QVERIFY2(*stopped, stopped->ok() ? "" : qPrintable(stopped->error().message));
        QTRY_COMPARE(state.data().toString(), QStringLiteral("Archived (Stopped)"));
        QCOMPARE(state.data(JobsModel::StateRole).value<JobState>(), JobState::Stopped);
        QVERIFY(state.data(Qt::ToolTipRole).toString().contains(QStringLiteral("StoppedByUser")));
        QCOMPARE(removed.size(), 0);

        // Another stuck job; a tracker going away takes its live rows, the archived stay.
        const QString other = QStringLiteral("cdfg45");
        create(rayJob(other, script(QStringLiteral("pass\n")), StuckHead));
        QTRY_VERIFY(model.rowOf(other) >= 0);
        const int before = model.rowCount();
        model.setTracker(nullptr);
        QCOMPARE(model.rowCount(), before - 1);
        QCOMPARE(model.rowOf(other), -1);
        QVERIFY(model.rowOf(id) >= 0);
        // Deleting a tracker has the same effect.
        model.setTracker(t.get());
        QTRY_VERIFY(model.rowOf(other) >= 0);
        t.reset();
        QCOMPARE(model.rowOf(other), -1);
        QCOMPARE(resets.size(), 0);
        QCOMPARE(m_http->send("DELETE", m_rayjobs + QStringLiteral("/model-") + other).status, 200);
    }

    void historyRowsLoadFromTheBucket()
    {
        // Two recent archives and an old one from another workstation, made here (archives other
        // cases leave in the bucket may be listed too).
        const QDateTime now = QDateTime::currentDateTimeUtc();
        QVERIFY(put(Job::ArchiveKeys::status(QStringLiteral("hstb22")),
                    statusJson(QStringLiteral("hstb22"), JobState::Succeeded, now.addSecs(-7200).toString(Qt::ISODate),
                               now.addSecs(-3600).toString(Qt::ISODate), QStringLiteral("done"))));
        QVERIFY(put(Job::ArchiveKeys::status(QStringLiteral("hstb44")),
                    statusJson(QStringLiteral("hstb44"), JobState::Stopped, now.addSecs(-600).toString(Qt::ISODate),
                               now.addSecs(-60).toString(Qt::ISODate), QStringLiteral("stopped"))));
        QVERIFY(put(Job::ArchiveKeys::status(QStringLiteral("hstry1")),
                    statusJson(QStringLiteral("hstry1"), JobState::Failed, QStringLiteral("2025-06-01T10:00:00Z"),
                               QStringLiteral("2025-06-01T10:30:00Z"), QStringLiteral("loss is nan\nat step 2"))));
        JobsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy loading(&model, &JobsModel::historyLoadingChanged);
        model.setHistoryStore(m_s3.get());
        QCOMPARE(model.rowCount(), 0);
        QVERIFY(refreshed(model));
        QCOMPARE(loading.size(), 2); // on, then off
        for (const char *id : { "hstb22", "hstb44", "hstry1" })
            QVERIFY2(model.rowOf(QLatin1String(id)) >= 0, id);
        // Newest first: the old archive is last; every row is archived.
        QCOMPARE(model.rowOf(QStringLiteral("hstry1")), model.rowCount() - 1);
        QVERIFY(model.rowOf(QStringLiteral("hstb44")) < model.rowOf(QStringLiteral("hstb22")));
        QCOMPARE(model.index(model.rowOf(QStringLiteral("hstb44")), JobsModel::StateColumn).data().toString(), QStringLiteral("Archived (Stopped)"));
        // What each asked for, and how long Ray ran it (started 30 s after it was submitted).
        const int older = model.rowOf(QStringLiteral("hstb22"));
        QCOMPARE(model.index(older, JobsModel::PoolsColumn).data().toString(), QStringLiteral("2×8 h200 + 1×8 h100"));
        QCOMPARE(model.index(older, JobsModel::PoolsColumn).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("2×8 h200 + 1×8 h100: 24 GPU(s) in all (nodes × GPUs per node, series)"));
        QCOMPARE(model.index(older, JobsModel::PoolsColumn).data(JobsModel::SortRole).toLongLong(), 24);
        QCOMPARE(model.index(older, JobsModel::DurationColumn).data().toString(), QStringLiteral("59 min 30 s"));
        QCOMPARE(model.index(older, JobsModel::DurationColumn).data(JobsModel::SortRole).toLongLong(), 3570);
        QCOMPARE(model.headerData(JobsModel::PoolsColumn, Qt::Horizontal).toString(), QStringLiteral("Pools"));
        QCOMPARE(model.headerData(JobsModel::DurationColumn, Qt::Horizontal).toString(), QStringLiteral("Duration"));
        QCOMPARE(JobsModel::poolsText(QJsonObject{}), QString());
        for (int row = 0; row < model.rowCount(); ++row) {
            QVERIFY(model.index(row, 0).data(JobsModel::ArchivedRole).toBool());
            QVERIFY(!model.index(row, 0).data(JobsModel::LiveRole).toBool());
        }
        const int old = model.rowOf(QStringLiteral("hstry1"));
        QCOMPARE(model.index(old, JobsModel::StateColumn).data().toString(), QStringLiteral("Archived (Failed)"));
        QCOMPARE(model.index(old, JobsModel::NameColumn).data().toString(), QStringLiteral("old-hstry1"));
        QCOMPARE(model.index(old, JobsModel::MessageColumn).data().toString(), QStringLiteral("loss is nan at step 2"));
        QCOMPARE(model.index(old, JobsModel::MessageColumn).data(Qt::ToolTipRole).toString(), QStringLiteral("loss is nan\nat step 2"));
        QCOMPARE(model.index(old, JobsModel::SubmittedColumn).data(JobsModel::SortRole).toDateTime(),
                 QDateTime::fromString(QStringLiteral("2025-06-01T10:00:00Z"), Qt::ISODate));
        QVERIFY(model.index(old, JobsModel::SubmittedColumn).data().toString().endsWith(QStringLiteral(" d ago")));

        // A refresh with nothing new changes nothing; an archive deleted from the bucket goes.
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        const int rows = model.rowCount();
        QVERIFY(refreshed(model));
        QCOMPARE(model.rowCount(), rows);
        QCOMPARE(inserted.size(), 0);
        QCOMPARE(changed.size(), 0);
        QVERIFY(remove(Job::ArchiveKeys::status(QStringLiteral("hstry1"))));
        QVERIFY(refreshed(model));
        QCOMPARE(model.rowOf(QStringLiteral("hstry1")), -1);
        QCOMPARE(model.rowCount(), rows - 1);

        // Without a store the archived rows go.
        model.setHistoryStore(nullptr);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(resets.size(), 0);
    }

    void anArchiveWinsOverALiveRow()
    {
        // A job another machine's tracker archived while this one still sees its RayJob: the
        // history's record replaces the live row, and the tracker's updates no longer change it.
        JobsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto t = tracker();
        model.setTracker(t.get());
        model.setHistoryStore(m_s3.get());
        const QString id = QStringLiteral("cdfg55");
        // Another job's archive, to come in with the refresh below beside this one.
        QVERIFY(put(Job::ArchiveKeys::status(QStringLiteral("hstb66")),
                    statusJson(QStringLiteral("hstb66"), JobState::Succeeded, QStringLiteral("2026-01-05T10:00:00Z"),
                               QStringLiteral("2026-01-05T11:00:00Z"), QStringLiteral("done"))));
        create(rayJob(id, script(QStringLiteral("pass\n")), StuckHead));
        QTRY_VERIFY(model.rowOf(id) >= 0);
        QCOMPARE(shown(model, id), QStringLiteral("Pending"));
        QVERIFY(put(Job::ArchiveKeys::status(id),
                    statusJson(id, JobState::Failed, QDateTime::currentDateTimeUtc().toString(Qt::ISODate),
                               QDateTime::currentDateTimeUtc().toString(Qt::ISODate), QStringLiteral("failed elsewhere"))));
        const int rowsBefore = model.rowCount();
        QVERIFY(refreshed(model));
        QCOMPARE(shown(model, id), QStringLiteral("Archived (Failed)"));
        QVERIFY(!model.index(model.rowOf(id), 0).data(JobsModel::LiveRole).toBool());
        QVERIFY(model.rowCount() > rowsBefore); // the other archive came in too
        QVERIFY(model.rowOf(QStringLiteral("hstb66")) >= 0);
        QSet<QString> ids;   // once each: the live job's row became its archive's, not a second row
        for (int row = 0; row < model.rowCount(); ++row) ids.insert(model.index(row, JobsModel::IdColumn).data().toString());
        QCOMPARE(ids.size(), model.rowCount());
        // Dropping the tracker keeps the archived row.
        model.setTracker(nullptr);
        QCOMPARE(shown(model, id), QStringLiteral("Archived (Failed)"));
        t.reset();
        QCOMPARE(m_http->send("DELETE", m_rayjobs + QStringLiteral("/model-") + id).status, 200);
        QVERIFY(remove(Job::ArchiveKeys::status(id)));
    }
};

QTEST_GUILESS_MAIN(TestJobsModel)
#include "tst_jobsmodel.moc"
