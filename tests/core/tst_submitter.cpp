// The submit path against the sandbox (its API server and its S3, over TLS): a JobSpec becomes
// a Capsule in the bucket and a RayJob; the same tree again uploads nothing; a create that may
// already have landed is checked instead of repeated; cancel at every step leaves no RayJob,
// no unfinished multipart upload and no local zip.

#include "core/job/submitter.h"
#include "core/kube/kubeclient.h"
#include "core/kube/resourcekind.h"
#include "core/net/requestpolicy.h"
#include "core/s3/s3client.h"
#include "support/sandboxfixture.h"
#include "support/sandboxjobs.h"
#include "support/testutil.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Job;

namespace {

const QString RunnerPex = QStringLiteral(SF_BIN_DIR "/../share/starforge/runner.pex");

} // namespace

class TestSubmitter : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<Testing::SandboxHttp> m_http;
    std::unique_ptr<Kube::KubeClient> m_kube;
    std::unique_ptr<S3::S3Client> m_s3;
    const QString m_rayjobs = QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs");

    // A code folder with its own content, so that its Capsule is new to the bucket.
    JobSpec freshSpec(qint64 payloadBytes = 4096)
    {
        const QString code = m_dir.filePath(QStringLiteral("code-%1").arg(QRandomGenerator::global()->generate()));
        QDir().mkpath(code + QStringLiteral("/configs"));
        Testing::writeFile(code + QStringLiteral("/configs/run.yaml"), "defaults: /opt/nemo-rl/examples/configs/grpo_math_1B.yaml\n");
        QByteArray payload(payloadBytes, Qt::Uninitialized);
        for (qsizetype i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(QRandomGenerator::global()->generate());
        Testing::writeFile(code + QStringLiteral("/weights.bin"), payload);
        const QByteArray json = R"({"version":1,"name":"demo","recipe":{"algorithm":"grpo","config":"configs/run.yaml"},"pools":[{"name":"train","series":"h200","nodes":1,"gpusPerNode":8}]})";
        Testing::writeFile(code + QStringLiteral("/jobspec.json"), json);
        return JobSpec::load(code + QStringLiteral("/jobspec.json")).value();
    }

    SubmitOptions options(const JobSpec &spec)
    {
        SubmitOptions o;
        o.spec = spec;
        o.settings.owner = Testing::sandboxOwner();
        o.runnerPexPath = RunnerPex;
        o.createTimeoutMs = 5000;
        return o;
    }

    std::unique_ptr<Submitter> run(SubmitOptions o)
    {
        auto submitter = std::make_unique<Submitter>(m_kube.get(), m_s3.get(), std::move(o));
        submitter->start();
        if (!QTest::qWaitFor([&] { return submitter->stage() == Submitter::Stage::Done || submitter->stage() == Submitter::Stage::Failed
                                              || submitter->stage() == Submitter::Stage::Cancelled; }, 60000)) {
            qWarning("the submission did not end");
        }
        return submitter;
    }

    QStringList rayJobsOf(const QString &jobId)
    {
        QStringList names;
        const auto items = m_http->get(m_rayjobs + QStringLiteral("?labelSelector=starforge.dev%2Fjob-id%3D") + jobId).json()
                               .value(QStringLiteral("items")).toArray();
        for (const QJsonValue &item : items) names << item.toObject().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString();
        return names;
    }

    // The creates of RayJobs and the looks at `name` the API server received, in order, with
    // their answers ("POST 500", "GET 404", …).
    QStringList createCalls(const QString &name)
    {
        QStringList calls;
        for (const Sandbox::RecordedRequest &r : m_sandbox->api()->requestRecord()) {
            if ((r.method == "POST" && r.path == m_rayjobs) || (r.method == "GET" && r.path == m_rayjobs + u'/' + name)) {
                calls << QStringLiteral("%1 %2").arg(QString::fromLatin1(r.method)).arg(r.code);
            }
        }
        return calls;
    }

    int unfinishedUploads()
    {
        std::unique_ptr<S3::S3Reply> reply(m_s3->listMultipartUploads());
        (void)QTest::qWaitFor([&] { return reply->isFinished(); }, 10000);
        if (!reply->isFinished() || !reply->result()) {
            qWarning() << "listing multipart uploads failed:" << (reply->isFinished() ? reply->result().error().message : QStringLiteral("no answer"));
            return -1;
        }
        return static_cast<int>(reply->uploads().uploads.size());
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFile::exists(RunnerPex), qPrintable(RunnerPex));
        Sandbox::SandboxOptions sandboxOptions;
        sandboxOptions.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        sandboxOptions.fleet = QStringLiteral("cpu:1x0");
        QString error;
        QVERIFY2(Testing::startSandbox(m_sandbox, m_http, sandboxOptions, &error), qPrintable(error));
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

    void submitsThenReusesTheCapsule()
    {
        const JobSpec spec = freshSpec();
        QList<Submitter::Stage> stages;
        auto first = std::make_unique<Submitter>(m_kube.get(), m_s3.get(), options(spec));
        connect(first.get(), &Submitter::stageChanged, this, [&](Submitter::Stage s) { stages << s; });
        first->start();
        QTRY_VERIFY_WITH_TIMEOUT(first->stage() == Submitter::Stage::Done || first->stage() == Submitter::Stage::Failed, 60000);
        QVERIFY2(first->result(), first->result() ? "" : qPrintable(first->result().error().message));
        QCOMPARE(stages, (QList<Submitter::Stage>{Submitter::Stage::Building, Submitter::Stage::Checking, Submitter::Stage::Uploading,
                                                  Submitter::Stage::Creating, Submitter::Stage::Done}));
        const Submission one = *first->result();
        QCOMPARE(one.uploadedBytes, one.capsuleSize);
        QCOMPARE(rayJobsOf(one.jobId), QStringList{one.rayJobName});
        // The bucket holds the Capsule under its content address, and the RayJob points at it.
        std::unique_ptr<S3::S3Reply> head(m_s3->headObject(QStringLiteral("capsules/%1.zip").arg(one.capsuleSha256)));
        QTRY_VERIFY(head->isFinished());
        QCOMPARE(head->contentLength(), one.capsuleSize);
        const QJsonObject stored = m_http->get(m_rayjobs + u'/' + one.rayJobName).json();
        const QString runtimeEnv = stored.value(QStringLiteral("spec")).toObject().value(QStringLiteral("runtimeEnvYAML")).toString();
        QVERIFY2(runtimeEnv.contains(QStringLiteral("capsules/%1.zip").arg(one.capsuleSha256)), qPrintable(runtimeEnv));
        QVERIFY(runtimeEnv.contains(QStringLiteral("X-Amz-Signature")));

        // The same tree again: same bytes, nothing uploaded, a second job.
        const auto second = run(options(spec));
        QVERIFY2(second->result(), second->result() ? "" : qPrintable(second->result().error().message));
        QCOMPARE(second->result()->capsuleSha256, one.capsuleSha256);
        QCOMPARE(second->result()->uploadedBytes, 0);
        QVERIFY(second->result()->jobId != one.jobId);
        QCOMPARE(unfinishedUploads(), 0);
    }

    // A Capsule built before (the wizard's review) is sent as it is, even when the folder has
    // changed since: what was reviewed is what runs. Without its zip, the Capsule is built.
    void aPrebuiltCapsuleIsSentAsItIs()
    {
        const JobSpec spec = freshSpec();
        QTemporaryDir work;
        CapsuleBuilder builder;
        builder.start(capsuleOptionsFor(spec, work.filePath(QStringLiteral("capsule.zip")), RunnerPex));
        QTRY_VERIFY_WITH_TIMEOUT(!builder.isRunning(), 30000);
        QVERIFY(builder.result());
        const CapsuleResult reviewed = *builder.result();
        QVERIFY(Testing::writeFile(spec.codePath() + QStringLiteral("/changed-after-review.txt"), "x"));

        SubmitOptions o = options(spec);
        o.prebuiltCapsule = reviewed;
        QList<Submitter::Stage> stages;
        auto submitter = std::make_unique<Submitter>(m_kube.get(), m_s3.get(), o);
        connect(submitter.get(), &Submitter::stageChanged, this, [&](Submitter::Stage st) { stages << st; });
        submitter->start();
        QTRY_VERIFY_WITH_TIMEOUT(submitter->stage() == Submitter::Stage::Done || submitter->stage() == Submitter::Stage::Failed, 60000);
        QVERIFY2(submitter->result(), submitter->result() ? "" : qPrintable(submitter->result().error().message));
        QCOMPARE(stages.first(), Submitter::Stage::Building);
        QCOMPARE(submitter->result()->capsuleSha256, QString::fromLatin1(reviewed.sha256));
        QCOMPARE(submitter->result()->uploadedBytes, reviewed.size);

        // The zip gone: built again, from the folder as it is now (another address).
        QVERIFY(QFile::remove(reviewed.zipPath));
        const auto rebuilt = run(o);
        QVERIFY2(rebuilt->result(), rebuilt->result() ? "" : qPrintable(rebuilt->result().error().message));
        QVERIFY(rebuilt->result()->capsuleSha256 != QString::fromLatin1(reviewed.sha256));
    }

    void aCreateThatLandedIsNotRepeated()
    {
        // An earlier attempt with this job id got through (its answer was lost): the retry finds
        // it and takes it instead of creating a second job.
        const JobSpec spec = freshSpec();
        SubmitOptions o = options(spec);
        o.jobId = QStringLiteral("k2x7pq");
        const auto first = run(o);
        QVERIFY(first->result());
        const auto retried = run(o);
        QVERIFY2(retried->result(), retried->result() ? "" : qPrintable(retried->result().error().message));
        QCOMPARE(retried->result()->rayJobName, first->result()->rayJobName);
        QCOMPARE(rayJobsOf(QStringLiteral("k2x7pq")).size(), 1);

        // A RayJob of that name that is not ours is left alone, with a clear message.
        QJsonObject foreign = first->result()->rayJob;
        QJsonObject meta{{QStringLiteral("name"), QStringLiteral("demo-zzzzzz")}, {QStringLiteral("namespace"), QStringLiteral("starforge")}};
        foreign.insert(QStringLiteral("metadata"), meta);
        foreign.remove(QStringLiteral("status"));
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(foreign).toJson()).status, 201);
        o.jobId = QStringLiteral("zzzzzz");
        const auto clash = run(o);
        QVERIFY(!clash->result());
        QVERIFY2(clash->result().error().message.contains(QStringLiteral("already exists and is not this submission")),
                 qPrintable(clash->result().error().message));

        // Server errors on create, counted so that the outcome is known: fewer than the attempts
        // and the submission goes through with one RayJob, each failed POST followed by a look
        // (GET, 404) before the next; as many as the attempts and it gives up, with no RayJob.
        o.jobId = QStringLiteral("p7q2kx");
        m_sandbox->api()->clearRequestRecord();
        m_sandbox->api()->setFaults(Sandbox::Faults{.next500Creates = o.createAttempts - 2});
        const auto flaky = run(o);
        QVERIFY2(flaky->result(), flaky->result() ? "" : qPrintable(flaky->result().error().message));
        QCOMPARE(rayJobsOf(QStringLiteral("p7q2kx")), QStringList{flaky->result()->rayJobName});
        QCOMPARE(m_sandbox->api()->faults().next500Creates, 0);
        QCOMPARE(createCalls(flaky->result()->rayJobName),
                 (QStringList{QStringLiteral("POST 500"), QStringLiteral("GET 404"), QStringLiteral("POST 500"), QStringLiteral("GET 404"),
                              QStringLiteral("POST 201")}));

        o.jobId = QStringLiteral("p7q2kz");
        m_sandbox->api()->clearRequestRecord();
        m_sandbox->api()->setFaults(Sandbox::Faults{.next500Creates = o.createAttempts});
        const auto exhausted = run(o);
        m_sandbox->api()->setFaults(Sandbox::Faults{});
        QVERIFY(!exhausted->result());
        QVERIFY2(exhausted->result().error().message.contains(QStringLiteral("after %1 attempts").arg(o.createAttempts)),
                 qPrintable(exhausted->result().error().message));
        QCOMPARE(rayJobsOf(QStringLiteral("p7q2kz")).size(), 0);
        QStringList expected;
        for (int i = 0; i < o.createAttempts; ++i) expected << QStringLiteral("POST 500") << QStringLiteral("GET 404");
        QCOMPARE(createCalls(QStringLiteral("demo-p7q2kz")), expected);
    }

    void cancelAtEveryStepLeavesNothing_data()
    {
        QTest::addColumn<Submitter::Stage>("at");
        QTest::addColumn<bool>("inFlight");   // cancel while the create is on its way (slow server)
        QTest::newRow("building") << Submitter::Stage::Building << false;
        QTest::newRow("checking") << Submitter::Stage::Checking << false;
        QTest::newRow("uploading") << Submitter::Stage::Uploading << false;
        QTest::newRow("creating") << Submitter::Stage::Creating << false;
        QTest::newRow("create sent") << Submitter::Stage::Creating << true;
    }
    void cancelAtEveryStepLeavesNothing()
    {
        QFETCH(Submitter::Stage, at);
        QFETCH(bool, inFlight);
        // Big enough that the upload is multipart and takes a moment.
        const JobSpec spec = freshSpec(40 * 1024 * 1024);
        Submitter submitter(m_kube.get(), m_s3.get(), options(spec));
        bool cancelled = false;
        bool createUnansweredAtCancel = false;
        connect(&submitter, &Submitter::stageChanged, this, [&](Submitter::Stage s) {
            if (s == at && !cancelled) {
                cancelled = true;
                if (inFlight) {
                    // The delay holds the create on the server; cancel once the record shows it
                    // arrived, while it is still unanswered (checked, not assumed from timings).
                    m_sandbox->api()->setFaults(Sandbox::Faults{.delayMs = 1000});
                    connect(m_sandbox->api(), &Sandbox::ApiServer::requestRecorded, &submitter, [&](const Sandbox::RecordedRequest &r) {
                        if (r.method != "POST" || r.path != m_rayjobs) return;
                        const quint64 create = r.sequence;
                        QMetaObject::invokeMethod(&submitter, [&, create] {
                            for (const Sandbox::RecordedRequest &seen : m_sandbox->api()->requestRecord()) {
                                if (seen.sequence == create) createUnansweredAtCancel = seen.code == 0;
                            }
                            submitter.cancel();
                        }, Qt::QueuedConnection);
                    });
                } else if (at == Submitter::Stage::Uploading) {
                    // Once the upload is under way on the server.
                    connect(&submitter, &Submitter::progress, this, [&](qint64 done, qint64) {
                        if (done > 0) submitter.cancel();
                    });
                } else {
                    submitter.cancel();
                }
            }
        });
        submitter.start();
        QTRY_VERIFY_WITH_TIMEOUT(submitter.stage() == Submitter::Stage::Cancelled || submitter.stage() == Submitter::Stage::Done
                                     || submitter.stage() == Submitter::Stage::Failed, 60000);
        m_sandbox->api()->setFaults(Sandbox::Faults{});
        QCOMPARE(submitter.stage(), Submitter::Stage::Cancelled);
        QVERIFY(!submitter.result());
        if (inFlight) {
            QVERIFY(createUnansweredAtCancel);
            QVERIFY2(submitter.result().error().message.contains(QStringLiteral("was deleted")), qPrintable(submitter.result().error().message));
        }
        QVERIFY(rayJobsOf(submitter.jobId()).isEmpty());
        QCOMPARE(unfinishedUploads(), 0);
        // No local zip is left either: the submitter's temporary folder went with it.
        QVERIFY(QDir(QDir::tempPath()).entryList({QStringLiteral("*capsule*.zip")}, QDir::Files).isEmpty());
    }

    void refusesBeforeSending()
    {
        JobSpec spec = freshSpec();
        spec.pools[0].nodes = 2;
        SubmitOptions o = options(spec);
        o.settings.storageShared = false;
        const auto refused = run(o);
        QCOMPARE(refused->stage(), Submitter::Stage::Failed);
        QVERIFY(refused->result().error().message.contains(QStringLiteral("FORGE_K8S_STORAGE_SHARED")));
        QVERIFY(refused->jobId().isEmpty());   // nothing was started, not even an id
    }
};

QTEST_GUILESS_MAIN(TestSubmitter)
#include "tst_submitter.moc"
