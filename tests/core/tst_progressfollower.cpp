// The progress follower on the sandbox: real RayJobs whose drivers print the runner's
// STARFORGE_PROGRESS lines, their submitter pods' logs followed over pods/log while they run,
// and the same progress read back from the archived driver log once the tracker has archived
// the job. Also: the viewer's own jobs take the place of others' when the follower is full.

#include "core/job/jobrecord.h"
#include "core/job/progressfollower.h"
#include "core/job/tracker.h"
#include "core/kube/kubeclient.h"
#include "core/s3/s3client.h"
#include "sandbox/sandbox.h"
#include "support/sandboxfixture.h"
#include "support/sandboxjobs.h"

#include <QFile>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Job;

namespace {

// A driver that prints what runner.pex prints for `steps` steps, with a Loss of 1/step, waiting
// `pause` seconds after each; with a gate file it then waits for that file before its exit.
QString progressDriver(int steps, double pause, const QString &gate = {})
{
    QString code = QStringLiteral("import json, os, time\n"
                                  "def p(o): print('STARFORGE_PROGRESS ' + json.dumps(o, sort_keys=True), flush=True)\n"
                                  "p({'kind': 'start', 'job': 'x', 'files': 1, 'argv': []})\n"
                                  "print('NeMo-RL output between progress lines', flush=True)\n"
                                  "for s in range(1, %1 + 1):\n"
                                  "    p({'kind': 'step', 'step': s, 'total': %1})\n"
                                  "    p({'kind': 'metric', 'name': 'Loss', 'value': 1.0 / s})\n"
                                  "    time.sleep(%2)\n")
                       .arg(steps)
                       .arg(pause);
    if (!gate.isEmpty()) code += QStringLiteral("while not os.path.exists(r'%1'): time.sleep(0.1)\n").arg(gate);
    code += QStringLiteral("p({'kind': 'checkpoint', 'step': %1})\np({'kind': 'exit', 'code': 0})\n").arg(steps);
    return code;
}

} // namespace

class TestProgressFollower : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<Testing::SandboxHttp> m_http;
    std::unique_ptr<Kube::KubeClient> m_kube;
    std::unique_ptr<S3::S3Client> m_s3;
    const QString m_rayjobs = QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs");

    void create(const QString &id, const QString &code, const QString &owner = Testing::sandboxOwner())
    {
        const QJsonObject job = Testing::starforgeRayJob(QStringLiteral("prog"), id, Testing::driverEntrypoint(m_dir.path(), code), {}, 30, owner);
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(job).toJson()).status, 201);
    }

    std::unique_ptr<JobTracker> tracker()
    {
        TrackerOptions options;
        options.ns = QStringLiteral("starforge");
        options.viewer.owner = Testing::sandboxOwner();
        options.checkIntervalMs = 200;
        auto t = std::make_unique<JobTracker>(m_kube.get(), m_s3.get(), options);
        t->start();
        return t;
    }

    std::unique_ptr<ProgressFollower> follower(JobTracker *tracker, int maxFollowed = 16)
    {
        ProgressFollowerOptions options;
        options.ns = QStringLiteral("starforge");
        options.maxFollowed = maxFollowed;
        options.podRecheckMs = 300;
        auto f = std::make_unique<ProgressFollower>(m_kube.get(), tracker, options);
        f->start();
        return f;
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

    // Steps arrive while the job runs, each with its metric; the exit and the checkpoint arrive
    // before the job is archived, and the archived log reads back to the same progress.
    void followsARunningJobThenReadsItsArchive()
    {
        auto t = tracker();
        auto f = follower(t.get());
        QSignalSpy changed(f.get(), &ProgressFollower::progressChanged);
        QHash<QString, JobRecord> archived;
        connect(t.get(), &JobTracker::jobArchived, this, [&](const JobRecord &r) { archived.insert(r.id, r); });
        QTRY_VERIFY(t->hasSynced());
        const QString id = QStringLiteral("pgbd22");
        const QString gate = m_dir.filePath(QStringLiteral("gate-pgbd22"));
        create(id, progressDriver(4, 0.2, gate));
        // Followed while it runs: every step seen before the driver is let go.
        QTRY_VERIFY_WITH_TIMEOUT(f->progress(id) && f->progress(id)->step() == 4, 30000);
        QVERIFY(f->followed().contains(id));
        const JobProgress &live = *f->progress(id);
        QCOMPARE(live.totalSteps(), 4);
        QVERIFY(live.started());
        QCOMPARE(live.points().size(), 4);
        QCOMPARE(live.points().at(1).metrics.value(QStringLiteral("Loss")), 0.5);
        QCOMPARE(live.summary(), QStringLiteral("step 4/4"));
        QVERIFY(!live.exitCode());
        QVERIFY(changed.count() >= 2);   // lines arrive as they are printed, not at the end
        QVERIFY(!changed.isEmpty() && changed.last().at(0).toString() == id);

        QFile(gate).open(QIODevice::WriteOnly);
        QTRY_VERIFY_WITH_TIMEOUT(archived.contains(id), 60000);
        // The last lines were read before the follower let go of the log.
        QVERIFY(f->progress(id));
        QCOMPARE(f->progress(id)->exitCode(), std::optional<int>(0));
        QCOMPARE(f->progress(id)->lastCheckpoint(), 4);
        QTRY_VERIFY(!f->followed().contains(id));

        std::optional<JobProgress> fromArchive;
        bool done = false;
        readArchivedProgress(m_s3.get(), archived.value(id), this, [&](std::optional<JobProgress> p) {
            fromArchive = std::move(p);
            done = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(done, 20000);
        QVERIFY(fromArchive);
        QCOMPARE(fromArchive->step(), 4);
        QCOMPARE(fromArchive->points().size(), 4);
        QCOMPARE(fromArchive->points().at(3).metrics.value(QStringLiteral("Loss")), 0.25);
        QCOMPARE(fromArchive->exitCode(), std::optional<int>(0));

        // A record without an archived driver log has no progress to read, and says so at once.
        JobRecord none;
        none.id = QStringLiteral("pgbd99");
        done = false;
        readArchivedProgress(m_s3.get(), none, this, [&](std::optional<JobProgress> p) {
            fromArchive = std::move(p);
            done = true;
        });
        QVERIFY(done);
        QVERIFY(!fromArchive);
    }

    // With room for one log, someone else's running job gives way to one of the viewer's own;
    // another's job never pushes out the viewer's.
    void theViewersOwnJobsGoFirst()
    {
        auto t = tracker();
        auto f = follower(t.get(), 1);
        QTRY_VERIFY(t->hasSynced());
        const QString gate = m_dir.filePath(QStringLiteral("gate-own"));
        create(QStringLiteral("pgbd66"), progressDriver(1, 0, gate), QStringLiteral("someone-else"));
        QTRY_VERIFY_WITH_TIMEOUT(f->followed() == QStringList{QStringLiteral("pgbd66")}, 30000);
        QTRY_VERIFY_WITH_TIMEOUT(f->progress(QStringLiteral("pgbd66")) && f->progress(QStringLiteral("pgbd66"))->step() == 1, 30000);
        create(QStringLiteral("pgbd77"), progressDriver(2, 0, gate));
        QTRY_VERIFY_WITH_TIMEOUT(f->followed() == QStringList{QStringLiteral("pgbd77")}, 30000);
        QTRY_VERIFY_WITH_TIMEOUT(f->progress(QStringLiteral("pgbd77")) && f->progress(QStringLiteral("pgbd77"))->step() == 2, 30000);
        // The other's last known progress stays readable.
        QCOMPARE(f->progress(QStringLiteral("pgbd66"))->step(), 1);
        create(QStringLiteral("pgbd88"), progressDriver(1, 0, gate), QStringLiteral("someone-else"));
        QTRY_VERIFY_WITH_TIMEOUT(t->job(QStringLiteral("pgbd88")) && t->job(QStringLiteral("pgbd88"))->state == JobState::Running, 30000);
        QTest::qWait(500);
        QCOMPARE(f->followed(), QStringList{QStringLiteral("pgbd77")});
        QFile(gate).open(QIODevice::WriteOnly);
        QTRY_VERIFY_WITH_TIMEOUT(f->followed().isEmpty(), 60000);
    }
};

QTEST_GUILESS_MAIN(TestProgressFollower)
#include "tst_progressfollower.moc"
