// Code integrity on both storage paths (docs/capsule.md, "Code integrity"), with real jobs on the
// sandbox and two real stores: the sandbox's S3 over HTTPS and Ceph radosgw over plain HTTP
// (started around the test by scripts/lib/with-radosgw.sh).
// - The submitter skips an upload only when the object at the Capsule's address carries the
//   Capsule's SHA-256; another zip of the same size is uploaded over.
// - HTTPS: Ray downloads the presigned URL itself. A whole other Capsule of the same size put at
//   the address (with a SHA-256 claim that fools the submitter) reaches the runner, which
//   refuses it by the digest of manifest.json the RayJob carries: the job fails with its words.
// - HTTP-only: the fetch-capsule init container downloads the Capsule into /starforge-capsule,
//   checks its SHA-256, and the job succeeds; the same impostor fails the init container, which
//   the diagnosis names CapsuleDownloadFailed.

#include "core/cluster/diagnosis.h"
#include "core/crypto/digest.h"
#include "core/job/jobsnapshot.h"
#include "core/job/submitter.h"
#include "core/kube/kubeclient.h"
#include "core/s3/multipartupload.h"
#include "core/s3/s3client.h"
#include "support/sandboxfixture.h"
#include "support/sandboxjobs.h"
#include "support/testutil.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcessEnvironment>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Job;

namespace {

const QString RunnerPex = QStringLiteral(SF_BIN_DIR "/../share/starforge/runner.pex");
const QString Namespace = QStringLiteral("starforge");

QByteArray randomBytes(qsizetype size)
{
    QByteArray bytes(size, Qt::Uninitialized);
    for (qsizetype i = 0; i < size; ++i) bytes[i] = static_cast<char>(QRandomGenerator::global()->generate());
    return bytes;
}

// A job's code folder and a second one that differs only in the content of weights.gz, giving
// another Capsule of exactly the same size: the file is stored (by its type) and every name,
// size and header is the same. manifest.json is deflated and its hashes differ, so its
// compressed size can differ by a few bytes: other contents are drawn until the sizes agree.
struct Twins
{
    JobSpec spec;
    CapsuleResult built;      // what the job is submitted with
    CapsuleResult impostor;   // another zip of the same size
};

} // namespace

class TestCapsuleIntegrity : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<Testing::SandboxHttp> m_http;
    std::unique_ptr<Kube::KubeClient> m_kube;
    std::unique_ptr<S3::S3Client> m_sandboxS3;    // https
    std::unique_ptr<S3::S3Client> m_radosgw;      // http: the HTTP-only path
    int m_count = 0;

    JobSpec writeCode(const QString &folder, const QString &series, const QByteArray &weights)
    {
        QDir().mkpath(folder + QStringLiteral("/configs"));
        Testing::writeFile(folder + QStringLiteral("/configs/grpo.yaml"),
                           "grpo:\n  max_num_steps: 100\ncheckpointing:\n  enabled: true\n  save_period: 2\ncluster:\n  gpus_per_node: 1\n  num_nodes: 1\n");
        Testing::writeFile(folder + QStringLiteral("/weights.gz"), weights);
        // Built as JSON, not written as raw string literals, which moc cannot read.
        const QJsonObject recipe{{QStringLiteral("algorithm"), QStringLiteral("grpo")},
                                 {QStringLiteral("config"), QStringLiteral("configs/grpo.yaml")},
                                 {QStringLiteral("overrides"), QJsonArray{QStringLiteral("grpo.max_num_steps=2")}}};
        const QJsonObject pool{{QStringLiteral("name"), QStringLiteral("train")}, {QStringLiteral("series"), series},
                               {QStringLiteral("nodes"), 1}, {QStringLiteral("gpusPerNode"), 1}};
        const QJsonObject spec{{QStringLiteral("version"), 1}, {QStringLiteral("name"), QStringLiteral("integrity")},
                               {QStringLiteral("code"), QStringLiteral(".")}, {QStringLiteral("recipe"), recipe},
                               {QStringLiteral("env"), QJsonObject{{QStringLiteral("WANDB_MODE"), QStringLiteral("offline")}}},
                               {QStringLiteral("storage"), true}, {QStringLiteral("pools"), QJsonArray{pool}}};
        Testing::writeFile(folder + QStringLiteral("/jobspec.json"), QJsonDocument(spec).toJson());
        return JobSpec::load(folder + QStringLiteral("/jobspec.json")).value();
    }

    // series: h100 runs on the sandbox's node; b200 stays Pending (for checks of the upload alone).
    Twins twins(const QString &series)
    {
        const QString base = m_dir.filePath(QStringLiteral("code-%1").arg(++m_count));
        const QByteArray weights = randomBytes(64 * 1024);
        Twins t;
        t.spec = writeCode(base + QStringLiteral("/job"), series, weights);
        t.built = CapsuleBuilder::build(capsuleOptionsFor(t.spec, base + QStringLiteral("/job.zip"), RunnerPex)).value();
        for (int attempt = 0; attempt < 200 && t.impostor.size != t.built.size; ++attempt) {
            const JobSpec other = writeCode(base + QStringLiteral("/impostor"), series, randomBytes(weights.size()));
            t.impostor = CapsuleBuilder::build(capsuleOptionsFor(other, base + QStringLiteral("/impostor.zip"), RunnerPex)).value();
        }
        return t;
    }

    ClusterSettings settings() const
    {
        ClusterSettings s;
        s.nemoRlDir = m_sandbox->nemoRlDir();
        s.owner = Testing::sandboxOwner();
        return s;
    }

    std::unique_ptr<Submitter> submit(S3::S3Client *s3, const JobSpec &spec)
    {
        SubmitOptions o;
        o.spec = spec;
        o.settings = settings();
        o.runnerPexPath = RunnerPex;
        auto submitter = std::make_unique<Submitter>(m_kube.get(), s3, std::move(o));
        submitter->start();
        if (!QTest::qWaitFor([&] { return submitter->stage() == Submitter::Stage::Done || submitter->stage() == Submitter::Stage::Failed; }, 60000)) {
            qWarning("the submission did not end");
        }
        return submitter;
    }

    // Puts bytes at key with a multipart upload that records sha256Hex as the object's SHA-256,
    // whatever the bytes are: what a careless or hostile writer of the bucket can do.
    bool putClaiming(S3::S3Client *s3, const QString &key, const QString &file, const QByteArray &sha256Hex)
    {
        S3::MultipartOptions options;
        options.sha256Hex = sha256Hex;
        std::unique_ptr<S3::MultipartUpload> upload(s3->uploadFile(key, file, options));
        (void)QTest::qWaitFor([&] { return upload->isFinished(); }, 60000);
        return upload->isFinished() && upload->result();
    }

    std::optional<S3::ObjectHead> head(S3::S3Client *s3, const QString &key)
    {
        std::optional<Result<S3::ObjectHead>> answer;
        QObject context;
        s3->headObject(key, &context, [&](Result<S3::ObjectHead> r) { answer = std::move(r); });
        (void)QTest::qWaitFor([&] { return answer.has_value(); }, 30000);
        if (!answer || !*answer) return std::nullopt;
        return **answer;
    }

    QByteArray objectSha256(S3::S3Client *s3, const QString &key)
    {
        std::optional<Result<QByteArray>> answer;
        QObject context;
        s3->getObject(key, &context, [&](Result<QByteArray> r) { answer = std::move(r); });
        (void)QTest::qWaitFor([&] { return answer.has_value(); }, 30000);
        return answer && *answer ? Crypto::Digest::sha256(**answer).toHex() : QByteArray();
    }

    QJsonObject rayJobStatus(const QString &name)
    {
        return m_http->get(QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs/") + name).json().value(QStringLiteral("status")).toObject();
    }

    QString endOf(const QString &name)
    {
        const QString state = rayJobStatus(name).value(QStringLiteral("jobDeploymentStatus")).toString();
        return state == QLatin1String("Complete") || state == QLatin1String("Failed") ? state : QString();
    }

    // The log of the first pod matching selector (container: empty for the only one).
    QByteArray podLog(const QString &selector, const QString &container = {})
    {
        const QJsonArray pods = m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=") + QString::fromLatin1(QUrl::toPercentEncoding(selector)))
                                    .json().value(QStringLiteral("items")).toArray();
        if (pods.isEmpty()) return {};
        const QString pod = pods.first().toObject().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString();
        return m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods/") + pod + QStringLiteral("/log")
                           + (container.isEmpty() ? QString() : QStringLiteral("?container=") + container)).body;
    }

    QByteArray driverLog(const QString &rayJobName) { return podLog(QStringLiteral("job-name=") + rayJobName); }

    Cluster::Diagnosis diagnoseJob(const QString &name)
    {
        SnapshotRequest request = SnapshotRequest::of(Namespace, name, true);
        request.rayJobName = name;
        std::optional<Result<JobSnapshot>> snapshot;
        fetchJobSnapshot(m_kube.get(), request, this, [&snapshot](Result<JobSnapshot> s) { snapshot = std::move(s); });
        if (!QTest::qWaitFor([&] { return snapshot.has_value(); }, 10000) || !*snapshot) return {};
        return Cluster::diagnose((*snapshot)->diagnosisInput(nullptr, QStringLiteral("starforge/gpu-series")));
    }

    void remove(const QString &rayJobName)
    {
        m_http->send("DELETE", QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs/") + rayJobName, R"({"propagationPolicy":"Background"})");
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFile::exists(RunnerPex), qPrintable(RunnerPex));
        const QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        // Run through with-radosgw.sh (ctest does); without it this is a setup error, not a skip.
        QVERIFY2(env.contains(QStringLiteral("STARFORGE_TEST_S3_ENDPOINT")),
                 "STARFORGE_TEST_S3_ENDPOINT is not set: run this test as sh scripts/lib/with-radosgw.sh tst_capsule_integrity");
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("h100:1x8,cpu:1x0");
        options.crashLoopBackoffMs = 500;
        QString error;
        QVERIFY2(Testing::startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
        m_kube = std::make_unique<Kube::KubeClient>(Testing::kubeClientConfig(*m_sandbox));
        m_sandboxS3 = std::make_unique<S3::S3Client>(Testing::s3ClientConfig(*m_sandbox));

        S3::ClientConfig radosgw;
        radosgw.endpoint = QUrl(env.value(QStringLiteral("STARFORGE_TEST_S3_ENDPOINT")));
        QCOMPARE(radosgw.endpoint.scheme(), QStringLiteral("http"));
        radosgw.region = env.value(QStringLiteral("STARFORGE_TEST_S3_REGION"), QStringLiteral("us-east-1"));
        radosgw.bucket = QStringLiteral("starforge-integrity");
        radosgw.credentials.accessKeyId = env.value(QStringLiteral("STARFORGE_TEST_S3_ACCESS_KEY")).toUtf8();
        radosgw.credentials.secretAccessKey = env.value(QStringLiteral("STARFORGE_TEST_S3_SECRET_KEY")).toUtf8();
        m_radosgw = std::make_unique<S3::S3Client>(radosgw);
        std::unique_ptr<S3::S3Reply> created(m_radosgw->createBucket());
        QTRY_VERIFY_WITH_TIMEOUT(created->isFinished(), 30000);
        QVERIFY2(created->result(), qPrintable(created->result() ? QString() : created->result().error().message));
    }

    void cleanupTestCase()
    {
        m_radosgw.reset();
        m_sandboxS3.reset();
        m_kube.reset();
        m_http.reset();
        m_sandbox.reset();
    }

    void sameSizeIsNotTheSameCapsule_data()
    {
        QTest::addColumn<bool>("sandbox");
        QTest::newRow("sandbox S3 (https)") << true;
        QTest::newRow("radosgw (http)") << false;
    }
    void sameSizeIsNotTheSameCapsule()
    {
        QFETCH(bool, sandbox);
        S3::S3Client *s3 = sandbox ? m_sandboxS3.get() : m_radosgw.get();
        const Twins t = twins(QStringLiteral("b200"));
        QCOMPARE(t.impostor.size, t.built.size);
        QVERIFY(t.impostor.sha256 != t.built.sha256);
        const QString key = t.built.objectKey();

        // Another zip of the same size at the address, with its own SHA-256 recorded: uploaded over.
        QVERIFY(putClaiming(s3, key, t.impostor.zipPath, t.impostor.sha256));
        auto first = submit(s3, t.spec);
        QVERIFY2(first->result(), first->result() ? "" : qPrintable(first->result().error().message));
        QCOMPARE(first->result()->uploadedBytes, t.built.size);
        QCOMPARE(objectSha256(s3, key), t.built.sha256);
        QCOMPARE(head(s3, key).value_or(S3::ObjectHead{}).sha256, t.built.sha256);
        remove(first->result()->rayJobName);

        // Now the bucket holds it, with its SHA-256: nothing to upload.
        auto again = submit(s3, t.spec);
        QVERIFY(again->result());
        QCOMPARE(again->result()->uploadedBytes, 0);
        remove(again->result()->rayJobName);

        // The same size with no SHA-256 recorded (another tool's upload): uploaded over.
        QVERIFY(putClaiming(s3, key, t.impostor.zipPath, {}));
        QVERIFY(head(s3, key).value_or(S3::ObjectHead{}).sha256.isEmpty());
        auto third = submit(s3, t.spec);
        QVERIFY(third->result());
        QCOMPARE(third->result()->uploadedBytes, t.built.size);
        QCOMPARE(objectSha256(s3, key), t.built.sha256);
        remove(third->result()->rayJobName);
    }

    void httpsRunnerRefusesASwappedCapsule()
    {
        const Twins t = twins(QStringLiteral("h100"));
        QCOMPARE(t.impostor.size, t.built.size);
        // The impostor at the address, claiming the built Capsule's SHA-256: the submitter is
        // fooled (nothing uploaded), Ray downloads the impostor from the presigned https URL.
        QVERIFY(putClaiming(m_sandboxS3.get(), t.built.objectKey(), t.impostor.zipPath, t.built.sha256));
        auto submitted = submit(m_sandboxS3.get(), t.spec);
        QVERIFY2(submitted->result(), submitted->result() ? "" : qPrintable(submitted->result().error().message));
        QCOMPARE(submitted->result()->uploadedBytes, 0);
        const QString name = submitted->result()->rayJobName;
        QVERIFY(submitted->result()->rayJob.value(QStringLiteral("spec")).toObject().value(QStringLiteral("runtimeEnvYAML")).toString()
                    .contains(QStringLiteral("https://")));

        QTRY_VERIFY_WITH_TIMEOUT(!endOf(name).isEmpty(), 90000);
        const QByteArray log = driverLog(name);
        QCOMPARE(endOf(name), QStringLiteral("Failed"));
        const QByteArray expected = "starforge-runner: manifest.json has SHA-256 " + t.impostor.manifestSha256() + ", but the job was submitted with "
                                  + t.built.manifestSha256();
        QVERIFY2(log.contains(expected), log.constData());
        QVERIFY2(!log.contains("Step 1/2"), log.constData());   // nothing of the impostor ran
        remove(name);
    }

    void httpOnlyJobRunsFromTheInitContainersCopy()
    {
        const Twins t = twins(QStringLiteral("h100"));
        auto submitted = submit(m_radosgw.get(), t.spec);
        QVERIFY2(submitted->result(), submitted->result() ? "" : qPrintable(submitted->result().error().message));
        QCOMPARE(submitted->result()->uploadedBytes, t.built.size);
        const QString name = submitted->result()->rayJobName;
        const QString runtimeEnv = submitted->result()->rayJob.value(QStringLiteral("spec")).toObject().value(QStringLiteral("runtimeEnvYAML")).toString();
        QVERIFY2(runtimeEnv.contains(QStringLiteral("file:///starforge-capsule/capsule-") + QString::fromLatin1(t.built.sha256)), qPrintable(runtimeEnv));

        QTRY_VERIFY_WITH_TIMEOUT(!endOf(name).isEmpty(), 90000);
        const QByteArray log = driverLog(name);
        QVERIFY2(endOf(name) == QLatin1String("Complete") && rayJobStatus(name).value(QStringLiteral("jobStatus")).toString() == QLatin1String("SUCCEEDED"),
                 log.constData());
        QVERIFY2(log.contains("Step 2/2"), log.constData());
        const QByteArray init = podLog(QStringLiteral("starforge.dev/job-id=") + submitted->result()->jobId + QStringLiteral(",ray.io/node-type=head"),
                                       QString::fromLatin1(Cluster::CapsuleInitContainerName));
        QVERIFY2(init.contains(QByteArray("capsule " + t.built.sha256 + " fetched")), init.constData());
        remove(name);
    }

    void httpOnlyTamperedCapsuleIsCapsuleDownloadFailed()
    {
        const Twins t = twins(QStringLiteral("h100"));
        QCOMPARE(t.impostor.size, t.built.size);
        QVERIFY(putClaiming(m_radosgw.get(), t.built.objectKey(), t.impostor.zipPath, t.built.sha256));
        auto submitted = submit(m_radosgw.get(), t.spec);
        QVERIFY2(submitted->result(), submitted->result() ? "" : qPrintable(submitted->result().error().message));
        QCOMPARE(submitted->result()->uploadedBytes, 0);
        const QString name = submitted->result()->rayJobName;
        QTRY_COMPARE_WITH_TIMEOUT(diagnoseJob(name).cause, Cluster::Cause::CapsuleDownloadFailed, 60000);
        const Cluster::Diagnosis d = diagnoseJob(name);
        QVERIFY2(d.message.contains(QStringLiteral("init container %1 of").arg(QLatin1String(Cluster::CapsuleInitContainerName))), qPrintable(d.message));
        // Its own words say why: the bytes are not the Capsule's (the check in rayjobbuilder.cpp).
        const QString head = QStringLiteral("starforge.dev/job-id=") + submitted->result()->jobId + QStringLiteral(",ray.io/node-type=head");
        const QByteArray refusal = "capsule download corrupted: expected sha256 " + t.built.sha256;
        const QString init = QString::fromLatin1(Cluster::CapsuleInitContainerName);
        QTRY_VERIFY_WITH_TIMEOUT(podLog(head, init).contains(refusal) || podLog(head, init + QStringLiteral("&previous=true")).contains(refusal), 20000);
        QVERIFY(rayJobStatus(name).value(QStringLiteral("jobStatus")).toString() != QLatin1String("SUCCEEDED"));
        remove(name);
    }
};

QTEST_GUILESS_MAIN(TestCapsuleIntegrity)
#include "tst_capsule_integrity.moc"
