// The tracker and its archive on the sandbox: real RayJobs run by the sandbox's KubeRay
// controller and kubelet, logs read over pods/log, the archive written to the sandbox's S3.
// Each case checks the states the user sees, what lands under jobs/<id>/ in the bucket, and
// that the RayJob is gone afterwards (or kept, when the archive could not be written).

#include "core/job/archiver.h"
#include "core/job/history.h"
#include "core/job/jobrecord.h"
#include "core/job/jobsnapshot.h"
#include "core/job/rayjobbuilder.h"
#include "core/job/tracker.h"
#include "core/kube/kubeclient.h"
#include "core/s3/s3client.h"
#include "sandbox/s3/s3server.h"
#include "sandbox/sandbox.h"
#include "support/sandboxfixture.h"
#include "support/sandboxjobs.h"
#include "support/testutil.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Job;

namespace {

// A RayJob as the app makes them, named track-<id>.
QJsonObject rayJob(const QString &id, const QString &entrypoint, const QJsonObject &headExtra = {}, int ttlSeconds = 30,
                   const QString &owner = Testing::sandboxOwner())
{
    return Testing::starforgeRayJob(QStringLiteral("track"), id, entrypoint, headExtra, ttlSeconds, owner);
}

} // namespace

class TestTracker : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<Testing::SandboxHttp> m_http;
    std::unique_ptr<Kube::KubeClient> m_kube;
    std::unique_ptr<S3::S3Client> m_s3;
    const QString m_rayjobs = QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs");
    QHash<QString, JobRecord> m_archived;   // by job id, from every tracker a test made

    QString script(const QString &code) { return Testing::driverEntrypoint(m_dir.path(), code); }

    void create(const QJsonObject &job) { QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(job).toJson()).status, 201); }
    int rayJobStatus(const QString &id) { return m_http->get(m_rayjobs + QStringLiteral("/track-") + id).status; }

    // A tracker for the sandbox's own user unless options name another viewer.
    std::unique_ptr<JobTracker> tracker(TrackerOptions options = {}, S3::S3Client *s3 = nullptr)
    {
        options.ns = QStringLiteral("starforge");
        if (options.viewer.owner.isEmpty()) options.viewer.owner = Testing::sandboxOwner();
        options.checkIntervalMs = 200;
        auto t = std::make_unique<JobTracker>(m_kube.get(), s3 ? s3 : m_s3.get(), options);
        // Every archive is kept from the start: one may land while a test waits for something else.
        connect(t.get(), &JobTracker::jobArchived, this, [this](const JobRecord &r) { m_archived.insert(r.id, r); });
        t->start();
        return t;
    }

    QByteArray object(const QString &key)
    {
        std::unique_ptr<S3::S3Reply> reply(m_s3->getObject(key));
        (void)QTest::qWaitFor([&] { return reply->isFinished(); }, 10000);
        return reply->isFinished() && reply->result() ? reply->data() : QByteArray();
    }

    JobRecord archivedRecord(const QString &id)
    {
        const auto record = JobRecord::fromJson(QJsonDocument::fromJson(object(ArchiveKeys::status(id))).object());
        return record ? *record : JobRecord{};
    }

    // An archive's status.json, put straight into the bucket: each test makes the archives it
    // reads instead of relying on an earlier test's.
    void putArchived(const QString &id, JobState state, const QDateTime &ended)
    {
        JobRecord r;
        r.id = id;
        r.name = QStringLiteral("track");
        r.rayJobName = QStringLiteral("track-") + id;
        r.ns = QStringLiteral("starforge");
        r.state = state;
        r.archived = true;
        r.created = ended.addSecs(-60);
        r.ended = ended;
        r.archivedAt = ended.addSecs(2);
        r.owner = Testing::sandboxOwner();
        std::unique_ptr<S3::S3Reply> put(m_s3->putObject(ArchiveKeys::status(id), QJsonDocument(r.toJson()).toJson()));
        QTRY_VERIFY(put->isFinished());
        QVERIFY(put->result());
    }

    // Waits for a tracker to archive id; the record from its jobArchived.
    JobRecord waitArchived(const QString &id, int timeoutMs = 60000)
    {
        (void)QTest::qWaitFor([&] { return m_archived.contains(id); }, timeoutMs);
        const JobRecord archived = m_archived.value(id);
        qInfo().noquote() << id << QJsonDocument(archived.toJson()).toJson(QJsonDocument::Compact).left(1500);
        return archived;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(Testing::installEnglishPlurals());   // the diagnoses' English as the apps show it
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

    void stateNames()
    {
        Kube::RayJob j;
        QCOMPARE(stateOfRayJob(j), JobState::Pending);
        j.jobDeploymentStatus = QStringLiteral("Initializing");
        QCOMPARE(stateOfRayJob(j), JobState::Pending);
        j.jobDeploymentStatus = QStringLiteral("Running");
        QCOMPARE(stateOfRayJob(j), JobState::Pending);   // the submitter has not started the driver
        j.jobStatus = QStringLiteral("RUNNING");
        QCOMPARE(stateOfRayJob(j), JobState::Running);
        j.jobDeploymentStatus = QStringLiteral("Complete");
        j.jobStatus = QStringLiteral("SUCCEEDED");
        QCOMPARE(stateOfRayJob(j), JobState::Succeeded);
        j.jobStatus = QStringLiteral("STOPPED");
        QCOMPARE(stateOfRayJob(j), JobState::Stopped);
        j.jobDeploymentStatus = QStringLiteral("ValidationFailed");
        QCOMPARE(stateOfRayJob(j), JobState::Failed);
        for (JobState s : {JobState::Submitting, JobState::Pending, JobState::Running, JobState::Succeeded, JobState::Failed, JobState::Stopped}) {
            QCOMPARE(jobStateFromName(jobStateName(s)), s);
        }
        QCOMPARE(ArchiveKeys::jobIdOfStatusKey(QStringLiteral("jobs/k2x7pq/status.json")), QStringLiteral("k2x7pq"));
        QVERIFY(ArchiveKeys::jobIdOfStatusKey(QStringLiteral("jobs/k2x7pq/logs/status.json")).isEmpty());
        QVERIFY(ArchiveKeys::jobIdOfStatusKey(QStringLiteral("capsules/x.zip")).isEmpty());
        // A record survives its JSON form, and garbage is refused with a reason.
        JobRecord r;
        r.id = QStringLiteral("k2x7pq");
        r.state = JobState::Failed;
        r.archived = true;
        r.created = QDateTime::fromString(QStringLiteral("2026-12-03T10:00:00Z"), Qt::ISODate);
        r.logs.append({QStringLiteral("p"), QStringLiteral("c"), QStringLiteral("head"), QStringLiteral("jobs/k2x7pq/logs/p/c.log"), 12});
        r.lost << QStringLiteral("something");
        const auto back = JobRecord::fromJson(r.toJson());
        QVERIFY(back);
        QCOMPARE(back->toJson(), r.toJson());
        QVERIFY(!JobRecord::fromJson(QJsonObject{{QStringLiteral("format"), QStringLiteral("other")}}));
        QVERIFY(!JobRecord::fromJson(QJsonObject{{QStringLiteral("format"), QStringLiteral("starforge-job/1")}, {QStringLiteral("state"), QStringLiteral("Bogus")}}));

        // A RayJob being deleted is going: "Stopping", or its outcome while it goes.
        JobRecord deleting = JobRecord::fromRayJob(QJsonObject{
            {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), QStringLiteral("x-k2x7pq")},
                                                     {QStringLiteral("deletionTimestamp"), QStringLiteral("2026-12-03T10:05:00Z")}}},
            {QStringLiteral("status"), QJsonObject{{QStringLiteral("jobDeploymentStatus"), QStringLiteral("Running")}, {QStringLiteral("jobStatus"), QStringLiteral("RUNNING")}}}});
        QVERIFY(deleting.isDeleting());
        QCOMPARE(deleting.deleting, QDateTime::fromString(QStringLiteral("2026-12-03T10:05:00Z"), Qt::ISODate));
        QCOMPARE(deleting.displayState(), QStringLiteral("Stopping (being deleted)"));
        deleting.state = JobState::Succeeded;
        QCOMPARE(deleting.displayState(), QStringLiteral("Succeeded (being deleted)"));
        deleting.archived = true;
        QCOMPARE(deleting.displayState(), QStringLiteral("Archived (Succeeded)"));
    }

    // The Capsule's presigned URL is in the RayJob; its archived copy has no signature.
    void archivedObjectsLoseUrlSignatures()
    {
        const QString url = QStringLiteral("https://s3.lab/rl/capsules/ab.zip?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEXAMPLE%2F20261204"
                                           "%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261204T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
                                           "&X-Amz-Signature=0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0");
        JobSnapshot snapshot;
        snapshot.rayJob = QJsonObject{{QStringLiteral("spec"), QJsonObject{{QStringLiteral("runtimeEnvYAML"),
                                                                            QStringLiteral("{\"working_dir\":\"%1\"}").arg(url)}}}};
        const QByteArray archived = QJsonDocument(archivedObjects(snapshot)).toJson();
        QVERIFY2(!archived.contains("0f1e2d3c4b5a6978"), archived.constData());
        QVERIFY2(!archived.contains("AKIAEXAMPLE"), archived.constData());
        QVERIFY2(archived.contains("X-Amz-Signature=REDACTED") && archived.contains("X-Amz-Expires=86400"), archived.constData());
    }

    void succeededJobIsArchivedAndDeleted()
    {
        auto t = tracker();
        QList<JobState> seen;
        connect(t.get(), &JobTracker::jobChanged, this, [&](const JobRecord &r) {
            if (r.id == u"bcdf22" && (seen.isEmpty() || seen.last() != r.state)) seen << r.state;
        });
        QTRY_VERIFY(t->hasSynced());
        create(rayJob(QStringLiteral("bcdf22"), script(QStringLiteral("import time\nprint('step 1', flush=True)\ntime.sleep(1.5)\nprint('the end')\n"))));
        const JobRecord archived = waitArchived(QStringLiteral("bcdf22"));
        QVERIFY2(archived.archived, "the job was not archived");
        QCOMPARE(archived.state, JobState::Succeeded);
        QVERIFY2(seen.mid(0, 2) == (QList<JobState>{JobState::Pending, JobState::Running}), qPrintable(QString::number(seen.size())));
        QCOMPARE(seen.last(), JobState::Succeeded);
        QCOMPARE(archived.name, QStringLiteral("track"));
        QCOMPARE(archived.capsuleSha256, QStringLiteral("ab").repeated(32));
        QVERIFY(archived.started.isValid());
        QVERIFY(archived.ended >= archived.started);
        // The driver's output and the head's log are in the bucket, the record last.
        QStringList roles;
        QString submitterKey;
        for (const ArchivedLog &l : archived.logs) {
            roles << l.role;
            if (l.role == u"submitter") submitterKey = l.key;
        }
        QVERIFY2(roles.contains(QStringLiteral("head")) && roles.contains(QStringLiteral("submitter")), qPrintable(roles.join(u',')));
        const QByteArray driver = object(submitterKey);
        QVERIFY2(driver.contains("step 1") && driver.contains("the end"), driver.constData());
        QCOMPARE(archivedRecord(QStringLiteral("bcdf22")).state, JobState::Succeeded);
        const QJsonArray events = QJsonDocument::fromJson(object(ArchiveKeys::events(QStringLiteral("bcdf22")))).array();
        QStringList reasons;
        for (const QJsonValue &e : events) reasons << e[QStringLiteral("reason")].toString();
        QVERIFY2(reasons.contains(QStringLiteral("CreatedRayCluster")), qPrintable(reasons.join(u',')));
        const QJsonObject objects = QJsonDocument::fromJson(object(ArchiveKeys::objects(QStringLiteral("bcdf22")))).object();
        QCOMPARE(objects[QStringLiteral("rayJob")][QStringLiteral("status")][QStringLiteral("jobStatus")].toString(), QStringLiteral("SUCCEEDED"));
        // And the RayJob is gone, with the tracker's list.
        QTRY_COMPARE(rayJobStatus(QStringLiteral("bcdf22")), 404);
        QVERIFY(!t->job(QStringLiteral("bcdf22")));
    }

    void failedJobKeepsItsTraceback()
    {
        auto t = tracker();
        QTRY_VERIFY(t->hasSynced());
        create(rayJob(QStringLiteral("bcdf45"), script(QStringLiteral("raise SystemExit('loss is nan at step 2')\n"))));
        const JobRecord archived = waitArchived(QStringLiteral("bcdf45"));
        QCOMPARE(archived.state, JobState::Failed);
        QCOMPARE(archived.reason, QStringLiteral("AppFailed"));
        QString submitterKey;
        for (const ArchivedLog &l : archived.logs) {
            if (l.role == u"submitter") submitterKey = l.key;
        }
        QVERIFY(object(submitterKey).contains("loss is nan at step 2"));
        QTRY_COMPARE(rayJobStatus(QStringLiteral("bcdf45")), 404);
    }

    // Ray's own verdict on a failed driver (exit code 7, a long last output) is the record's
    // message, kept whole in the archive: the last 10 lines of the log cut to 20,000 characters.
    void failedAppMessageIsArchivedWhole()
    {
        auto t = tracker();
        QTRY_VERIFY(t->hasSynced());
        create(rayJob(QStringLiteral("bcdf48"), script(QStringLiteral(
            "import sys\nfor i in range(12):\n    print(str(i % 10) * 2300, flush=True)\nprint('the end', flush=True)\nsys.exit(7)\n"))));
        const JobRecord archived = waitArchived(QStringLiteral("bcdf48"));
        QCOMPARE(archived.state, JobState::Failed);
        QCOMPARE(archived.reason, QStringLiteral("AppFailed"));
        const QString prefix = QStringLiteral("Job entrypoint command failed with exit code 7, last available logs (truncated to 20,000 chars):\n");
        QVERIFY2(archived.message.startsWith(prefix), qPrintable(archived.message.left(200)));
        QCOMPARE(archived.message.size(), prefix.size() + 20000);
        QVERIFY(archived.message.endsWith(QStringLiteral("the end\n")));
        QVERIFY(archived.message.contains(QString(QStringLiteral("9").repeated(2300) + u'\n')));
        // The bucket's record has it whole too.
        QCOMPARE(archivedRecord(QStringLiteral("bcdf48")).message, archived.message);
        QTRY_COMPARE(rayJobStatus(QStringLiteral("bcdf48")), 404);
    }

    // A submitter that never gets the job to Ray: the operator's SubmissionFailed, diagnosed
    // with the submitter pods' exits.
    void submissionFailedIsDiagnosed()
    {
        auto t = tracker();
        QTRY_VERIFY(t->hasSynced());
        QJsonObject job = rayJob(QStringLiteral("bcdf49"), script(QStringLiteral("pass\n")));
        QJsonObject spec = job.value(QStringLiteral("spec")).toObject();
        const QJsonObject submitter{{QStringLiteral("name"), QStringLiteral("ray-job-submitter")},
                                    {QStringLiteral("image"), Testing::jobTestImage()},
                                    {QStringLiteral("command"), QJsonArray{QStringLiteral("/bin/sh"), QStringLiteral("-c"),
                                                                           QStringLiteral("echo cannot reach the dashboard; exit 4")}}};
        spec.insert(QStringLiteral("submitterPodTemplate"),
                    QJsonObject{{QStringLiteral("spec"), QJsonObject{{QStringLiteral("restartPolicy"), QStringLiteral("Never")},
                                                                     {QStringLiteral("containers"), QJsonArray{submitter}}}}});
        spec.insert(QStringLiteral("submitterConfig"), QJsonObject{{QStringLiteral("backoffLimit"), 0}});
        job.insert(QStringLiteral("spec"), spec);
        create(job);
        const JobRecord archived = waitArchived(QStringLiteral("bcdf49"));
        QCOMPARE(archived.state, JobState::Failed);
        QCOMPARE(archived.reason, QStringLiteral("SubmissionFailed"));
        QCOMPARE(archived.cause, QStringLiteral("SubmissionFailed"));
        QVERIFY2(archived.message.startsWith(QStringLiteral("Job submission has failed. Reason: BackoffLimitExceeded. Message: Job has reached the specified backoff limit")),
                 qPrintable(archived.message));
        QVERIFY2(archived.message.contains(QStringLiteral("its submitter gave up after 1 failed pod, the last exiting with code 4")), qPrintable(archived.message));
        QVERIFY(!archived.started.isValid());
        QTRY_COMPARE(rayJobStatus(QStringLiteral("bcdf49")), 404);
    }

    // A job parked by suspend (a queue such as Kueue holding it) is not failed by the app's
    // deadline; after the resume the deadline counts from the operator's new startTime. The
    // resume goes through New with the old startTime, long past the deadline, until the
    // operator's next reconcile (the sandbox holds that window a second): not counted either.
    void aSuspendedJobKeepsItsDeadlineRight()
    {
        TrackerOptions options;
        options.operatorEnforcesDeadline = false;
        auto t = tracker(options);
        QTRY_VERIFY(t->hasSynced());
        QJsonObject job = Testing::withAnnotation(rayJob(QStringLiteral("bcdf4b"), script(QStringLiteral("pass\n")), Testing::unschedulableHead()),
                                                  Labels::PreRunningDeadline, QStringLiteral("3"));
        QJsonObject spec = job.value(QStringLiteral("spec")).toObject();
        spec.insert(QStringLiteral("suspend"), true);
        job.insert(QStringLiteral("spec"), spec);
        create(job);
        const QString path = m_rayjobs + QStringLiteral("/track-bcdf4b");
        QTRY_COMPARE(m_http->get(path).json()[QStringLiteral("status")][QStringLiteral("jobDeploymentStatus")].toString(), QStringLiteral("Suspended"));
        QTest::qWait(4500);   // past the deadline, counted from the creation
        QVERIFY(!m_archived.contains(QStringLiteral("bcdf4b")));
        QVERIFY(t->job(QStringLiteral("bcdf4b")));
        QCOMPARE(t->job(QStringLiteral("bcdf4b"))->state, JobState::Pending);
        const QDateTime resumed = QDateTime::currentDateTimeUtc();
        QCOMPARE(m_http->send("PATCH", path, R"({"spec":{"suspend":false}})", "application/merge-patch+json").status, 200);
        const JobRecord archived = waitArchived(QStringLiteral("bcdf4b"), 30000);
        QCOMPARE(archived.state, JobState::Failed);
        QCOMPARE(archived.reason, QStringLiteral("PreRunningDeadlineExceeded"));
        // Not before 3 s after the resume (the operator's startTime has whole seconds).
        QVERIFY2(archived.ended >= resumed.addSecs(2), qPrintable(resumed.toString(Qt::ISODateWithMs) + u' ' + archived.ended.toString(Qt::ISODateWithMs)));
        QTRY_COMPARE(rayJobStatus(QStringLiteral("bcdf4b")), 404);
    }

    void preRunningDeadlineFailsDiagnosesAndDeletes()
    {
        // The operator is taken to be older than 1.6: the app enforces the deadline alone, the
        // one the job was submitted with (its annotation), whatever the viewer's setting.
        TrackerOptions options;
        options.operatorEnforcesDeadline = false;
        auto t = tracker(options);
        QTRY_VERIFY(t->hasSynced());
        create(Testing::withAnnotation(rayJob(QStringLiteral("bcdf44"), script(QStringLiteral("pass\n")), Testing::unschedulableHead()),
                                       Labels::PreRunningDeadline, QStringLiteral("3")));
        const JobRecord archived = waitArchived(QStringLiteral("bcdf44"), 30000);
        QCOMPARE(archived.state, JobState::Failed);
        QCOMPARE(archived.reason, QStringLiteral("PreRunningDeadlineExceeded"));
        QCOMPARE(archived.cause, QStringLiteral("NoNodeMatchesSelector"));
        QVERIFY2(archived.message.contains(QStringLiteral("pre-running deadline")) && archived.message.contains(QStringLiteral("b200")), qPrintable(archived.message));
        // The events that explain it are kept; the head never started, which is recorded.
        const QByteArray events = object(ArchiveKeys::events(QStringLiteral("bcdf44")));
        QVERIFY2(events.contains("FailedScheduling"), events.left(400).constData());
        QVERIFY2(archived.lost.join(u' ').contains(QStringLiteral("never scheduled (Unschedulable)")), qPrintable(archived.lost.join(u'\n')));
        QTRY_COMPARE(rayJobStatus(QStringLiteral("bcdf44")), 404);
    }

    void stopArchivesWhatRan()
    {
        auto t = tracker();
        QTRY_VERIFY(t->hasSynced());
        create(rayJob(QStringLiteral("bcdf55"), script(QStringLiteral("import time\nprint('started', flush=True)\ntime.sleep(60)\n"))));
        QTRY_VERIFY_WITH_TIMEOUT(t->job(QStringLiteral("bcdf55")) && t->job(QStringLiteral("bcdf55"))->state == JobState::Running, 30000);
        // Running means the driver was started; wait until it has said something.
        const QString pods = QStringLiteral("/api/v1/namespaces/starforge/pods");
        QTRY_VERIFY_WITH_TIMEOUT(!m_http->get(pods + QStringLiteral("?labelSelector=job-name%3Dtrack-bcdf55")).json()[QStringLiteral("items")].toArray().isEmpty(), 10000);
        const QString submitter = m_http->get(pods + QStringLiteral("?labelSelector=job-name%3Dtrack-bcdf55")).json()[QStringLiteral("items")][0][QStringLiteral("metadata")][QStringLiteral("name")].toString();
        QTRY_VERIFY_WITH_TIMEOUT(m_http->get(pods + u'/' + submitter + QStringLiteral("/log")).body.contains("started"), 10000);
        std::optional<Result<JobRecord>> stopped;
        t->stopJob(QStringLiteral("bcdf55"), [&](Result<JobRecord> r) { stopped = std::move(r); });
        QTRY_VERIFY_WITH_TIMEOUT(stopped.has_value(), 30000);
        QVERIFY2(*stopped, stopped->ok() ? "" : qPrintable(stopped->error().message));
        QCOMPARE((*stopped)->state, JobState::Stopped);
        QCOMPARE((*stopped)->reason, QStringLiteral("StoppedByUser"));
        QCOMPARE(archivedRecord(QStringLiteral("bcdf55")).state, JobState::Stopped);
        QString submitterKey;
        for (const ArchivedLog &l : (*stopped)->logs) {
            if (l.role == u"submitter") submitterKey = l.key;
        }
        QVERIFY(object(submitterKey).contains("started"));
        QTRY_COMPARE(rayJobStatus(QStringLiteral("bcdf55")), 404);
        // Stopping what is not there says so.
        std::optional<Result<JobRecord>> missing;
        t->stopJob(QStringLiteral("zzzzzz"), [&](Result<JobRecord> r) { missing = std::move(r); });
        QVERIFY(missing && !*missing);
    }

    void jobsThatEndedWhileClosedAreArchivedWithTheLoss()
    {
        // Nobody watches: the job ends and its cluster is shut down a second later.
        create(rayJob(QStringLiteral("bcdf66"), script(QStringLiteral("print('done while closed')\n")), {}, 1));
        QTRY_VERIFY_WITH_TIMEOUT(m_http->get(m_rayjobs + QStringLiteral("/track-bcdf66")).json()[QStringLiteral("status")][QStringLiteral("jobDeploymentStatus")]
                                         .toString() == u"Complete",
                                 30000);
        QTRY_VERIFY_WITH_TIMEOUT(m_http->get(QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayclusters")).json()[QStringLiteral("items")].toArray().isEmpty(), 30000);
        // The app starts: the job is archived from what is left, and the loss is named.
        auto t = tracker();
        const JobRecord archived = waitArchived(QStringLiteral("bcdf66"));
        QCOMPARE(archived.state, JobState::Succeeded);
        QVERIFY2(archived.lost.join(u' ').contains(QStringLiteral("Head and worker logs")), qPrintable(archived.lost.join(u'\n')));
        QString submitterKey;
        for (const ArchivedLog &l : archived.logs) {
            if (l.role == u"submitter") submitterKey = l.key;
        }
        QVERIFY2(object(submitterKey).contains("done while closed"), "the submitter's log outlives the cluster");
        QTRY_COMPARE(rayJobStatus(QStringLiteral("bcdf66")), 404);
    }

    void deletedBehindTheAppsBackIsRecorded()
    {
        auto t = tracker();
        QTRY_VERIFY(t->hasSynced());
        create(rayJob(QStringLiteral("bcdf77"), script(QStringLiteral("pass\n")),
                      Testing::unschedulableHead()));
        QTRY_VERIFY(t->job(QStringLiteral("bcdf77")).has_value());
        QCOMPARE(m_http->send("DELETE", m_rayjobs + QStringLiteral("/track-bcdf77")).status, 200);
        const JobRecord archived = waitArchived(QStringLiteral("bcdf77"));
        QCOMPARE(archived.state, JobState::Stopped);
        QCOMPARE(archived.reason, QStringLiteral("DeletedOutsideStarforge"));
        QVERIFY2(archived.lost.join(u' ').contains(QStringLiteral("deleted outside Starforge")), qPrintable(archived.lost.join(u'\n')));
    }

    // A RayJob being deleted (a finalizer of someone else's holds it) is going: the record says
    // so, the tracker archives it at once as Stopped from what is left, never as running.
    void aDeletingRayJobIsGoingNotLive()
    {
        auto t = tracker();
        QTRY_VERIFY(t->hasSynced());
        QJsonObject job = rayJob(QStringLiteral("bcdg44"), script(QStringLiteral("import time\ntime.sleep(60)\n")));
        QJsonObject meta = job.value(QStringLiteral("metadata")).toObject();
        meta.insert(QStringLiteral("finalizers"), QJsonArray{QStringLiteral("example.com/hold")});
        job.insert(QStringLiteral("metadata"), meta);
        create(job);
        QTRY_VERIFY_WITH_TIMEOUT(t->job(QStringLiteral("bcdg44")) && t->job(QStringLiteral("bcdg44"))->state == JobState::Running, 30000);
        QList<JobRecord> changed;
        connect(t.get(), &JobTracker::jobChanged, this, [&changed](const JobRecord &r) { changed << r; });
        QCOMPARE(m_http->send("DELETE", m_rayjobs + QStringLiteral("/track-bcdg44")).status, 200);
        const JobRecord archived = waitArchived(QStringLiteral("bcdg44"));
        QCOMPARE(archived.state, JobState::Stopped);
        QCOMPARE(archived.reason, QStringLiteral("DeletedOutsideStarforge"));
        QVERIFY(!archived.deleting.isValid() || archived.archived);
        bool sawStopping = false;
        for (const JobRecord &r : std::as_const(changed)) {
            if (r.isDeleting() && !isTerminal(r.state)) {
                QCOMPARE(r.displayState(), QStringLiteral("Stopping (being deleted)"));
                sawStopping = true;
            }
        }
        QVERIFY2(sawStopping || changed.isEmpty() || changed.last().state == JobState::Stopped, "a deleting job is never shown as running");
        // Still held by the other finalizer: the app's own delete does not remove it either.
        QCOMPARE(rayJobStatus(QStringLiteral("bcdg44")), 200);
        QCOMPARE(m_http->send("PATCH", m_rayjobs + QStringLiteral("/track-bcdg44"), R"({"metadata":{"finalizers":null}})", "application/merge-patch+json").status, 200);
        QTRY_COMPARE(rayJobStatus(QStringLiteral("bcdg44")), 404);
    }

    // The operator's DeleteSelf removes the RayJob at its TTL while no tracker runs; the next
    // tracker finds the job in its seen-jobs file, archives it from the last state seen, and
    // names what was lost.
    void operatorDeleteSelfWhileClosedIsRecorded()
    {
        const QString seen = m_dir.filePath(QStringLiteral("seen-jobs.json"));
        QJsonObject job = rayJob(QStringLiteral("bcdg55"), script(QStringLiteral("import time\ntime.sleep(2)\nprint('ended while closed')\n")));
        QJsonObject spec = job.value(QStringLiteral("spec")).toObject();
        spec.insert(QStringLiteral("shutdownAfterJobFinishes"), false);
        spec.insert(QStringLiteral("ttlSecondsAfterFinished"), 0);
        spec.insert(QStringLiteral("deletionStrategy"),
                    QJsonObject{{QStringLiteral("deletionRules"),
                                 QJsonArray{QJsonObject{{QStringLiteral("policy"), QStringLiteral("DeleteSelf")},
                                                        {QStringLiteral("condition"), QJsonObject{{QStringLiteral("jobStatus"), QStringLiteral("SUCCEEDED")},
                                                                                                  {QStringLiteral("ttlSeconds"), 1}}}}}}});
        job.insert(QStringLiteral("spec"), spec);
        {
            TrackerOptions options;
            options.seenJobsFile = seen;
            auto t = tracker(options);
            create(job);
            QTRY_VERIFY_WITH_TIMEOUT(t->job(QStringLiteral("bcdg55")) && t->job(QStringLiteral("bcdg55"))->state == JobState::Running, 30000);
        }   // the app closes while the job runs
        QVERIFY(QFileInfo::exists(seen));
        QTRY_COMPARE_WITH_TIMEOUT(rayJobStatus(QStringLiteral("bcdg55")), 404, 30000);
        QVERIFY(!m_archived.contains(QStringLiteral("bcdg55")));

        TrackerOptions options;
        options.seenJobsFile = seen;
        auto t = tracker(options);
        const JobRecord archived = waitArchived(QStringLiteral("bcdg55"));
        QVERIFY(archived.archived);
        QCOMPARE(archived.state, JobState::Stopped);
        QCOMPARE(archived.reason, QStringLiteral("RayJobLost"));
        QVERIFY2(archived.message.contains(QStringLiteral("last seen running")), qPrintable(archived.message));
        const QString lost = archived.lost.join(u'\n');
        QVERIFY2(lost.contains(QStringLiteral("The RayJob track-bcdg55 itself: the operator deleted it (deletionRules DeleteSelf, 1 s after the job ended)")),
                 qPrintable(lost));
        QCOMPARE(archivedRecord(QStringLiteral("bcdg55")).reason, QStringLiteral("RayJobLost"));
        // Recorded once: the file forgets it.
        const auto seenText = [&seen] {
            QFile f(seen);
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        };
        QTRY_VERIFY(!seenText().contains("bcdg55"));
    }

    void aJobArchivedElsewhereIsNotOverwritten()
    {
        // This tracker holds a waiting job; another (the GUI on another workstation) archives
        // and deletes it. This one must take that archive, not write a poorer one over it.
        auto t = tracker();
        QTRY_VERIFY(t->hasSynced());
        create(rayJob(QStringLiteral("bcdf9k"), script(QStringLiteral("pass\n")),
                      Testing::unschedulableHead()));
        QTRY_VERIFY(t->job(QStringLiteral("bcdf9k")).has_value());
        std::optional<Result<JobSnapshot>> snapshot;
        fetchJobSnapshot(m_kube.get(), SnapshotRequest::of(QStringLiteral("starforge"), QStringLiteral("bcdf9k"), true), this,
                         [&](Result<JobSnapshot> s) { snapshot = std::move(s); });
        QTRY_VERIFY(snapshot.has_value());
        QVERIFY(*snapshot && (*snapshot)->rayJob);
        ArchiveRequest elsewhere;
        elsewhere.record = JobRecord::fromRayJob(*(*snapshot)->rayJob);
        elsewhere.record.state = JobState::Stopped;
        elsewhere.record.reason = QStringLiteral("StoppedByUser");
        elsewhere.record.message = QStringLiteral("stopped on another workstation");
        elsewhere.snapshot = **snapshot;
        elsewhere.ns = QStringLiteral("starforge");
            JobArchiver other(m_kube.get(), m_s3.get(), elsewhere);
        QSignalSpy done(&other, &JobArchiver::finished);
        other.start();
        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 1, 20000);
        QVERIFY(other.result());
        const JobRecord archived = waitArchived(QStringLiteral("bcdf9k"), 20000);
        QCOMPARE(archived.reason, QStringLiteral("StoppedByUser"));
        QCOMPARE(archivedRecord(QStringLiteral("bcdf9k")).message, QStringLiteral("stopped on another workstation"));
        QVERIFY(archivedRecord(QStringLiteral("bcdf9k")).lost.join(u' ').indexOf(QStringLiteral("deleted outside")) < 0);
    }

    void aRayJobMadeAgainUnderTheSameNameIsNotDeleted()
    {
        // The archiver snapshots a job, then (its archive writes held by the sandbox's S3) the
        // RayJob is deleted and made again under the same name: a resubmission with this id. Its
        // delete names the old uid, so the API server refuses it (409) and the new job stays.
        create(rayJob(QStringLiteral("bcdfr4"), script(QStringLiteral("pass\n")), Testing::unschedulableHead()));
        std::optional<Result<JobSnapshot>> snapshot;
        fetchJobSnapshot(m_kube.get(), SnapshotRequest::of(QStringLiteral("starforge"), QStringLiteral("bcdfr4"), true), this,
                         [&](Result<JobSnapshot> s) { snapshot = std::move(s); });
        QTRY_VERIFY(snapshot.has_value());
        QVERIFY(*snapshot && (*snapshot)->rayJob);
        const QString oldUid = (*(*snapshot)->rayJob)[QStringLiteral("metadata")][QStringLiteral("uid")].toString();
        QVERIFY(!oldUid.isEmpty());
        ArchiveRequest request;
        request.record = JobRecord::fromRayJob(*(*snapshot)->rayJob);
        request.record.state = JobState::Stopped;
        request.record.reason = QStringLiteral("StoppedByUser");
        request.snapshot = **snapshot;
        request.ns = QStringLiteral("starforge");

        m_sandbox->api()->setFaults(Sandbox::Faults{.holdS3Uploads = true});
        JobArchiver archiver(m_kube.get(), m_s3.get(), request);
        QSignalSpy done(&archiver, &JobArchiver::finished);
        archiver.start();
        QTRY_VERIFY_WITH_TIMEOUT(m_sandbox->s3()->heldUploadCount() > 0, 20000);   // mid-archive, before its delete
        QVERIFY(done.isEmpty());
        QCOMPARE(m_http->send("DELETE", m_rayjobs + QStringLiteral("/track-bcdfr4")).status, 200);
        QTRY_COMPARE(rayJobStatus(QStringLiteral("bcdfr4")), 404);
        create(rayJob(QStringLiteral("bcdfr4"), script(QStringLiteral("pass\n")), Testing::unschedulableHead()));
        const QString newUid = m_http->get(m_rayjobs + QStringLiteral("/track-bcdfr4")).json()[QStringLiteral("metadata")][QStringLiteral("uid")].toString();
        QVERIFY(!newUid.isEmpty() && newUid != oldUid);
        m_sandbox->api()->clearRequestRecord();
        m_sandbox->api()->setFaults(Sandbox::Faults{});   // the held writes go on, then the delete

        QTRY_COMPARE_WITH_TIMEOUT(done.size(), 1, 20000);
        QVERIFY2(archiver.result(), archiver.result() ? "" : qPrintable(archiver.result().error().message));
        // The delete reached the server and was refused there; the job made since is untouched.
        QList<int> deletes;
        for (const Sandbox::RecordedRequest &r : m_sandbox->api()->requestRecord()) {
            if (r.method == "DELETE" && r.path.endsWith(QLatin1String("/rayjobs/track-bcdfr4"))) deletes << r.code;
        }
        QCOMPARE(deletes, QList<int>{409});
        const Testing::HttpReply after = m_http->get(m_rayjobs + QStringLiteral("/track-bcdfr4"));
        QCOMPARE(after.status, 200);
        QCOMPARE(after.json()[QStringLiteral("metadata")][QStringLiteral("uid")].toString(), newUid);
        QCOMPARE(m_http->send("DELETE", m_rayjobs + QStringLiteral("/track-bcdfr4")).status, 200);
    }

    void aStoreThatFailsKeepsTheRayJobAndRetries()
    {
        // A bucket that does not exist yet: every archive write fails.
        S3::ClientConfig config = m_s3->config();
        config.bucket = QStringLiteral("late-bucket");
        S3::S3Client late(config);
        TrackerOptions options;
        options.archiveRetryMs = 300;
        auto t = tracker(options, &late);
        QSignalSpy failures(t.get(), &JobTracker::archiveFailed);
        create(rayJob(QStringLiteral("bcdf88"), script(QStringLiteral("print('kept')\n"))));
        QTRY_VERIFY_WITH_TIMEOUT(failures.size() >= 2, 60000);
        QVERIFY2(failures.first().at(1).toString().contains(QStringLiteral("jobs/bcdf88/")), qPrintable(failures.first().at(1).toString()));
        QCOMPARE(rayJobStatus(QStringLiteral("bcdf88")), 200);   // nothing deleted
        std::unique_ptr<S3::S3Reply> made(late.createBucket());
        QTRY_VERIFY(made->isFinished());
        QVERIFY(made->result());
        const JobRecord archived = waitArchived(QStringLiteral("bcdf88"));
        QCOMPARE(archived.state, JobState::Succeeded);
        QTRY_COMPARE(rayJobStatus(QStringLiteral("bcdf88")), 404);
    }

    // Two people share the namespace and the bucket. Bob's finished job and his Pending one,
    // past the deadline the viewer would use, are shown to Alice's tracker read-only: it does not
    // fail, archive or delete them, and refuses to stop them. Bob's own tracker archives his.
    void someoneElsesJobsAreReadOnly()
    {
        TrackerOptions alice;
        alice.viewer.owner = QStringLiteral("alice@lab");
        alice.operatorEnforcesDeadline = false;
        auto a = tracker(alice);
        QTRY_VERIFY(a->hasSynced());
        const QString bob = QStringLiteral("bob@lab");
        create(rayJob(QStringLiteral("bcdfb4"), script(QStringLiteral("print('bob was here')\n")), {}, 30, bob));
        create(Testing::withAnnotation(
            Testing::starforgeRayJob(QStringLiteral("track"), QStringLiteral("bcdfb5"), script(QStringLiteral("pass\n")), Testing::unschedulableHead(), 30, bob),
            Labels::PreRunningDeadline, QStringLiteral("1")));
        QTRY_VERIFY_WITH_TIMEOUT(a->job(QStringLiteral("bcdfb4")) && a->job(QStringLiteral("bcdfb4"))->state == JobState::Succeeded, 30000);
        QCOMPARE(a->job(QStringLiteral("bcdfb4"))->owner, bob);
        QCOMPARE(a->ownershipOf(*a->job(QStringLiteral("bcdfb4"))), Ownership::Others);
        QVERIFY(a->job(QStringLiteral("bcdfb5")).has_value());
        QTest::qWait(3000);   // well past bob's 1 s deadline, and several tracker checks
        QCOMPARE(rayJobStatus(QStringLiteral("bcdfb4")), 200);
        QCOMPARE(rayJobStatus(QStringLiteral("bcdfb5")), 200);
        QCOMPARE(a->job(QStringLiteral("bcdfb5"))->state, JobState::Pending);
        QVERIFY(!m_archived.contains(QStringLiteral("bcdfb4")) && !m_archived.contains(QStringLiteral("bcdfb5")));
        QVERIFY(object(ArchiveKeys::status(QStringLiteral("bcdfb4"))).isEmpty());
        std::optional<Result<JobRecord>> refused;
        a->stopJob(QStringLiteral("bcdfb5"), [&](Result<JobRecord> r) { refused = std::move(r); });
        QTRY_VERIFY(refused.has_value());
        QVERIFY(!*refused);
        QVERIFY2(refused->error().message.contains(QStringLiteral("belongs to bob@lab")), qPrintable(refused->error().message));
        QCOMPARE(rayJobStatus(QStringLiteral("bcdfb5")), 200);

        // Bob's app: his finished job is archived into the bucket, his Pending one failed on his
        // own deadline; Alice's tracker lets both go.
        TrackerOptions bobs;
        bobs.viewer.owner = bob;
        bobs.operatorEnforcesDeadline = false;
        auto b = tracker(bobs);
        const JobRecord done = waitArchived(QStringLiteral("bcdfb4"));
        QCOMPARE(done.state, JobState::Succeeded);
        QCOMPARE(done.owner, bob);
        QCOMPARE(archivedRecord(QStringLiteral("bcdfb4")).owner, bob);
        QCOMPARE(waitArchived(QStringLiteral("bcdfb5")).reason, QStringLiteral("PreRunningDeadlineExceeded"));
        QTRY_VERIFY(!a->job(QStringLiteral("bcdfb4")) && !a->job(QStringLiteral("bcdfb5")));
    }

    // A RayJob that carries a job id but is not named <job name>-<id>, or whose id is not one
    // the app makes, is not followed: it would otherwise be archived over jobs/<id>/.
    void aRayJobNotShapedAsOursIsIgnored()
    {
        auto t = tracker();
        QTRY_VERIFY(t->hasSynced());
        // The real bcdg22 was archived earlier; an impostor must not overwrite its archive.
        putArchived(QStringLiteral("bcdg22"), JobState::Succeeded, QDateTime::currentDateTimeUtc().addSecs(-3600));
        QJsonObject impostor = rayJob(QStringLiteral("bcdg22"), script(QStringLiteral("print('impostor')\n")));
        QJsonObject metadata = impostor[QStringLiteral("metadata")].toObject();
        metadata.insert(QStringLiteral("name"), QStringLiteral("evil-bcdg22"));
        impostor.insert(QStringLiteral("metadata"), metadata);
        create(impostor);
        // "bad-id-1" is a fine label value but no job id of the app's: six characters of its alphabet.
        create(rayJob(QStringLiteral("bad-id-1"), script(QStringLiteral("pass\n"))));
        const QByteArray before = object(ArchiveKeys::status(QStringLiteral("bcdg22")));
        QVERIFY(!before.isEmpty());   // the real bcdg22's archive, put there above
        QTRY_VERIFY_WITH_TIMEOUT(m_http->get(m_rayjobs + QStringLiteral("/evil-bcdg22")).json()[QStringLiteral("status")][QStringLiteral("jobDeploymentStatus")]
                                         .toString() == u"Complete",
                                 30000);
        QTest::qWait(1500);
        QVERIFY(!t->job(QStringLiteral("bcdg22")));
        QCOMPARE(m_http->get(m_rayjobs + QStringLiteral("/evil-bcdg22")).status, 200);
        QCOMPARE(object(ArchiveKeys::status(QStringLiteral("bcdg22"))), before);
        QCOMPARE(m_http->send("DELETE", m_rayjobs + QStringLiteral("/evil-bcdg22")).status, 200);
        QVERIFY(!t->job(QStringLiteral("bad-id-1")));
        QCOMPARE(m_http->send("DELETE", m_rayjobs + QStringLiteral("/track-bad-id-1")).status, 200);
    }

    void historyListsTheArchives()
    {
        // Its own archives, ended an hour apart (other tests' archives share the bucket).
        const QDateTime now = QDateTime::currentDateTimeUtc();
        const QStringList mine{QStringLiteral("hst222"), QStringLiteral("hst444"), QStringLiteral("hst555")};
        putArchived(mine.at(0), JobState::Succeeded, now.addSecs(-3 * 3600));
        putArchived(mine.at(1), JobState::Failed, now.addSecs(-1 * 3600));
        putArchived(mine.at(2), JobState::Stopped, now.addSecs(-2 * 3600));
        std::optional<Result<History>> read;
        readHistory(m_s3.get(), this, [&](Result<History> h) { read = std::move(h); });
        QTRY_VERIFY(read.has_value());
        QVERIFY2(*read, read->ok() ? "" : qPrintable(read->error().message));
        QStringList ids;
        for (const JobRecord &r : (*read)->jobs) {
            if (mine.contains(r.id)) ids << r.id;
        }
        // Newest end first, whatever order they were written in.
        QCOMPARE(ids, (QStringList{QStringLiteral("hst444"), QStringLiteral("hst555"), QStringLiteral("hst222")}));
        for (qsizetype i = 1; i < (*read)->jobs.size(); ++i) QVERIFY((*read)->jobs.at(i - 1).ended >= (*read)->jobs.at(i).ended);
        // A damaged record is reported, not fatal.
        std::unique_ptr<S3::S3Reply> put(m_s3->putObject(QStringLiteral("jobs/zzzzzz/status.json"), "{not json"));
        QTRY_VERIFY(put->isFinished());
        read.reset();
        readHistory(m_s3.get(), this, [&](Result<History> h) { read = std::move(h); });
        QTRY_VERIFY(read.has_value());
        QVERIFY(*read);
        QCOMPARE((*read)->unreadable.size(), 1);
        QVERIFY((*read)->unreadable.first().startsWith(QStringLiteral("jobs/zzzzzz/status.json")));
        std::optional<Result<JobRecord>> one;
        readArchivedJob(m_s3.get(), QStringLiteral("hst555"), this, [&](Result<JobRecord> r) { one = std::move(r); });
        QTRY_VERIFY(one.has_value());
        QVERIFY(*one);
        QCOMPARE((*one)->state, JobState::Stopped);
        one.reset();
        readArchivedJob(m_s3.get(), QStringLiteral("xxxxxx"), this, [&](Result<JobRecord> r) { one = std::move(r); });
        QTRY_VERIFY(one.has_value());
        QVERIFY(!*one);
        QCOMPARE(one->error().code, Error::Code::NotFound);
    }
};

QTEST_GUILESS_MAIN(TestTracker)
#include "tst_tracker.moc"
