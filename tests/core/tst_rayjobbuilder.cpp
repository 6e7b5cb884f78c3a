// RayJob manifests for single-pool, multi-pool, HTTP-only, passthrough-off and corpus jobs:
// each is admitted by the sandbox's KubeRay v1.7 CRD check with fieldValidation=Strict (so no
// field is unknown or pruned) and has the shape docs/design.md asks for. The HTTP-only init
// container's command is run for real: it fetches, verifies, and interprets nothing in the URL.

#include "core/cluster/diagnosis.h"
#include "core/crypto/digest.h"
#include "core/job/jobrecord.h"
#include "core/job/ownership.h"
#include "core/job/rayjobbuilder.h"
#include "support/sandboxfixture.h"
#include "support/testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Job;

namespace {

const QString Sha = QStringLiteral("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
const QString ManifestSha = QStringLiteral("fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210");

JobSpec spec(QList<Pool> pools)
{
    JobSpec s;
    s.name = QStringLiteral("grpo-math");
    s.recipe.algorithm = QStringLiteral("grpo");
    s.recipe.config = QStringLiteral("configs/grpo.yaml");
    s.env.insert(QStringLiteral("WANDB_MODE"), QStringLiteral("offline"));
    s.pools = std::move(pools);
    return s;
}

RayJobInput input(QList<Pool> pools)
{
    RayJobInput in;
    in.spec = spec(std::move(pools));
    in.jobId = QStringLiteral("x7k2pq");
    in.capsule = {Sha, QUrl(QStringLiteral("https://s3.example/starforge/capsules/%1.zip?X-Amz-Signature=abc").arg(Sha)), ManifestSha};
    in.settings.owner = QStringLiteral("alice@lab.example");
    in.settings.archiveBucket = QStringLiteral("s3.example/starforge");
    return in;
}

QJsonObject at(const QJsonObject &o, const QString &path)
{
    QJsonValue v = o;
    for (const QString &part : path.split(u'.')) {
        bool isIndex = false;
        const int index = part.toInt(&isIndex);
        v = isIndex ? v.toArray().at(index) : v.toObject().value(part);
    }
    return v.toObject();
}

QJsonValue value(const QJsonObject &o, const QString &path)
{
    const qsizetype dot = path.lastIndexOf(u'.');
    return at(o, path.left(dot)).value(path.mid(dot + 1));
}

} // namespace

class TestRayJobBuilder : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<Testing::SandboxHttp> m_http;
    const QString m_rayjobs = QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs");

    // Admitted as it is: Strict refuses unknown fields, and what is stored equals what was sent
    // (apart from the defaults the schema adds).
    void admit(const QJsonObject &job)
    {
        const QString name = job.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString();
        const Testing::HttpReply created = m_http->send("POST", m_rayjobs + QStringLiteral("?fieldValidation=Strict"), QJsonDocument(job).toJson());
        QVERIFY2(created.status == 201, created.body.constData());
        const QJsonObject stored = created.json();
        QCOMPARE(value(stored, QStringLiteral("spec.entrypoint")), value(job, QStringLiteral("spec.entrypoint")));
        QCOMPARE(at(stored, QStringLiteral("spec.rayClusterSpec.headGroupSpec")), at(job, QStringLiteral("spec.rayClusterSpec.headGroupSpec")));
        QCOMPARE(m_http->send("DELETE", m_rayjobs + u'/' + name).status, 200);
    }

private Q_SLOTS:
    void initTestCase()
    {
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("cpu:1x0");
        QString error;
        QVERIFY2(Testing::startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
    }
    void cleanupTestCase()
    {
        m_http.reset();
        m_sandbox.reset();
    }

    void singlePool()
    {
        const auto built = RayJobBuilder::build(input({{QStringLiteral("train"), QStringLiteral("h200"), 1, 8}}));
        QVERIFY2(built, built ? "" : qPrintable(built.error().message));
        const QJsonObject job = *built;
        admit(job);
        QCOMPARE(value(job, QStringLiteral("metadata.name")).toString(), QStringLiteral("grpo-math-x7k2pq"));
        QCOMPARE(at(job, QStringLiteral("metadata.labels")).value(QStringLiteral("starforge.dev/job-id")).toString(), QStringLiteral("x7k2pq"));
        QCOMPARE(at(job, QStringLiteral("metadata.annotations")).value(QStringLiteral("starforge.dev/capsule-sha256")).toString(), Sha);
        QCOMPARE(value(job, QStringLiteral("spec.shutdownAfterJobFinishes")).toBool(), true);
        QCOMPARE(value(job, QStringLiteral("spec.backoffLimit")).toInt(-1), 0);
        QCOMPARE(value(job, QStringLiteral("spec.ttlSecondsAfterFinished")).toInt(), 3 * 24 * 3600);
        QCOMPARE(value(job, QStringLiteral("spec.preRunningDeadlineSeconds")).toInt(), 1800);
        // Whose it is, where it is archived, and its deadline for any KubeRay (ownership.h).
        const QJsonObject annotations = at(job, QStringLiteral("metadata.annotations"));
        QCOMPARE(annotations.value(QStringLiteral("starforge.dev/owner")).toString(), QStringLiteral("alice@lab.example"));
        QCOMPARE(annotations.value(QStringLiteral("starforge.dev/archive-bucket")).toString(), QStringLiteral("s3.example/starforge"));
        QCOMPARE(annotations.value(QStringLiteral("starforge.dev/prerunning-deadline-seconds")).toString(), QStringLiteral("1800"));
        const QString ownerLabel = at(job, QStringLiteral("metadata.labels")).value(QStringLiteral("starforge.dev/owner")).toString();
        QVERIFY2(ownerLabel.startsWith(QStringLiteral("alice-lab.example.")), qPrintable(ownerLabel));
        QCOMPARE(ownerLabel, ownerLabelValue(QStringLiteral("alice@lab.example")));
        const JobRecord record = JobRecord::fromRayJob(job);
        QCOMPARE(record.owner, QStringLiteral("alice@lab.example"));
        QCOMPARE(record.preRunningDeadlineSeconds, 1800);
        QVERIFY(record.deadlineInSpec);
        QCOMPARE(value(job, QStringLiteral("spec.rayClusterSpec.rayVersion")).toString(), QStringLiteral("2.55.1"));
        const QJsonObject runtimeEnv = QJsonDocument::fromJson(value(job, QStringLiteral("spec.runtimeEnvYAML")).toString().toUtf8()).object();
        QCOMPARE(runtimeEnv.value(QStringLiteral("working_dir")).toString(), input({}).capsule.url.toString());
        QVERIFY(!runtimeEnv.contains(QStringLiteral("env_vars")));   // env goes into the containers
        QVERIFY(!at(job, QStringLiteral("spec.rayClusterSpec")).contains(QStringLiteral("workerGroupSpecs")));   // one machine: the head

        const QJsonObject head = at(job, QStringLiteral("spec.rayClusterSpec.headGroupSpec"));
        QCOMPARE(at(head, QStringLiteral("rayStartParams")).value(QStringLiteral("num-gpus")).toString(), QStringLiteral("8"));
        QCOMPARE(at(head, QStringLiteral("rayStartParams")).value(QStringLiteral("resources")).toString(), QStringLiteral("'{\"starforge_pool_train\": 8}'"));
        QCOMPARE(at(head, QStringLiteral("template.spec.nodeSelector")), (QJsonObject{{QStringLiteral("starforge/gpu-series"), QStringLiteral("h200")}}));
        const QJsonObject container = at(head, QStringLiteral("template.spec.containers.0"));
        QCOMPARE(container.value(QStringLiteral("image")).toString(), QStringLiteral("nvcr.io/nvidia/nemo-rl:v0.7.0"));
        QCOMPARE(at(container, QStringLiteral("resources.limits")).value(QStringLiteral("nvidia.com/gpu")).toString(), QStringLiteral("8"));
        QCOMPARE(at(container, QStringLiteral("resources.requests")).value(QStringLiteral("nvidia.com/gpu")).toString(), QStringLiteral("8"));
        const QJsonArray env = container.value(QStringLiteral("env")).toArray();
        QVERIFY(env.contains(QJsonObject{{QStringLiteral("name"), QStringLiteral("WANDB_MODE")}, {QStringLiteral("value"), QStringLiteral("offline")}}));
        QVERIFY(env.contains(QJsonObject{{QStringLiteral("name"), QStringLiteral("FORGE_JOB_ID")}, {QStringLiteral("value"), QStringLiteral("x7k2pq")}}));
        // Hugging Face's cache (Megatron's conversion cache too) on the volume every node mounts.
        QVERIFY(env.contains(QJsonObject{{QStringLiteral("name"), QStringLiteral("HF_HOME")}, {QStringLiteral("value"), QStringLiteral("/starforge/cache/huggingface")}}));
        const QJsonArray volumes = at(head, QStringLiteral("template.spec")).value(QStringLiteral("volumes")).toArray();
        QCOMPARE(at(head, QStringLiteral("template.spec.volumes.0.emptyDir")),
                 (QJsonObject{{QStringLiteral("medium"), QStringLiteral("Memory")}, {QStringLiteral("sizeLimit"), QStringLiteral("64Gi")}}));
        QCOMPARE(at(head, QStringLiteral("template.spec.volumes.1.persistentVolumeClaim")).value(QStringLiteral("claimName")).toString(),
                 QStringLiteral("starforge-storage"));
        QCOMPARE(volumes.size(), 2);   // no corpus, no capsule volume on HTTPS
        QCOMPARE(at(container, QStringLiteral("volumeMounts.1")).value(QStringLiteral("mountPath")).toString(), QStringLiteral("/starforge"));
        QVERIFY(!at(head, QStringLiteral("template.spec")).contains(QStringLiteral("initContainers")));
        QCOMPARE(at(head, QStringLiteral("template.spec.tolerations.0")),
                 (QJsonObject{{QStringLiteral("key"), QStringLiteral("nvidia.com/gpu")}, {QStringLiteral("operator"), QStringLiteral("Exists")},
                              {QStringLiteral("effect"), QStringLiteral("NoSchedule")}}));
    }

    // HF_HOME is the spec's when it sets one, and not set at all without the storage volume.
    void hfHomeFollowsTheSpec()
    {
        const auto hfHomes = [](const RayJobInput &in) {
            const auto built = RayJobBuilder::build(in);
            QStringList values;
            if (!built) return QStringList{built.error().message};
            for (const QJsonValue &e : at(*built, QStringLiteral("spec.rayClusterSpec.headGroupSpec.template.spec.containers.0")).value(QStringLiteral("env")).toArray()) {
                if (e[QStringLiteral("name")].toString() == QLatin1String("HF_HOME")) values << e[QStringLiteral("value")].toString();
            }
            return values;
        };
        RayJobInput in = input({{QStringLiteral("train"), QStringLiteral("h200"), 1, 8}});
        in.spec.env.insert(QStringLiteral("HF_HOME"), QStringLiteral("/models/hf"));
        QCOMPARE(hfHomes(in), QStringList{QStringLiteral("/models/hf")});
        in = input({{QStringLiteral("train"), QStringLiteral("h200"), 1, 8}});
        in.spec.storage = false;
        QCOMPARE(hfHomes(in), QStringList());
    }

    void multiPool()
    {
        const auto built = RayJobBuilder::build(input({{QStringLiteral("train"), QStringLiteral("h200"), 3, 8},
                                                       {QStringLiteral("gen"), QStringLiteral("h100"), 2, 8}}));
        QVERIFY2(built, built ? "" : qPrintable(built.error().message));
        admit(*built);
        const QJsonArray workers = at(*built, QStringLiteral("spec.rayClusterSpec")).value(QStringLiteral("workerGroupSpecs")).toArray();
        QCOMPARE(workers.size(), 2);
        const QJsonObject train = workers.at(0).toObject();
        const QJsonObject gen = workers.at(1).toObject();
        QCOMPARE(train.value(QStringLiteral("groupName")).toString(), QStringLiteral("train"));
        QCOMPARE(train.value(QStringLiteral("replicas")).toInt(), 2);   // machine zero is the head
        QCOMPARE(train.value(QStringLiteral("minReplicas")).toInt(), 2);
        QCOMPARE(train.value(QStringLiteral("maxReplicas")).toInt(), 2);
        QCOMPARE(gen.value(QStringLiteral("replicas")).toInt(), 2);
        QCOMPARE(at(gen, QStringLiteral("template.spec.nodeSelector")).value(QStringLiteral("starforge/gpu-series")).toString(), QStringLiteral("h100"));
        QCOMPARE(at(gen, QStringLiteral("rayStartParams")).value(QStringLiteral("resources")).toString(), QStringLiteral("'{\"starforge_pool_gen\": 8}'"));
        QCOMPARE(at(gen, QStringLiteral("template.metadata.labels")).value(QStringLiteral("starforge.dev/pool")).toString(), QStringLiteral("gen"));
        // Every Ray pod asks for its GPUs.
        int gpus = at(*built, QStringLiteral("spec.rayClusterSpec.headGroupSpec.template.spec.containers.0.resources.limits")).value(QStringLiteral("nvidia.com/gpu")).toString().toInt();
        for (const QJsonValue &w : workers) {
            gpus += w.toObject().value(QStringLiteral("replicas")).toInt()
                  * at(w.toObject(), QStringLiteral("template.spec.containers.0.resources.limits")).value(QStringLiteral("nvidia.com/gpu")).toString().toInt();
        }
        QCOMPARE(gpus, 40);
    }

    void passthroughOffKeepsRayGpus()
    {
        RayJobInput in = input({{QStringLiteral("train"), QStringLiteral("h200"), 2, 4}});
        in.settings.gpuPassthrough = false;
        const auto built = RayJobBuilder::build(in);
        QVERIFY(built);
        admit(*built);
        const QJsonObject worker = at(*built, QStringLiteral("spec.rayClusterSpec.workerGroupSpecs.0"));
        QVERIFY(!at(worker, QStringLiteral("template.spec.containers.0")).contains(QStringLiteral("resources")));
        QCOMPARE(at(worker, QStringLiteral("rayStartParams")).value(QStringLiteral("num-gpus")).toString(), QStringLiteral("4"));
        QCOMPARE(at(worker, QStringLiteral("template.spec.nodeSelector")).value(QStringLiteral("starforge/gpu-series")).toString(), QStringLiteral("h200"));
    }

    void corpusIsReadOnly()
    {
        RayJobInput in = input({{QStringLiteral("train"), QStringLiteral("h200"), 1, 8}});
        in.spec.corpus = true;
        QVERIFY(!RayJobBuilder::build(in));   // no corpus volume in the settings
        in.settings.corpusPvc = QStringLiteral("datasets");
        in.settings.storageMount = QStringLiteral("/mnt/shared");
        const auto built = RayJobBuilder::build(in);
        QVERIFY(built);
        admit(*built);
        const QJsonObject podSpec = at(*built, QStringLiteral("spec.rayClusterSpec.headGroupSpec.template.spec"));
        QCOMPARE(at(podSpec, QStringLiteral("volumes.2.persistentVolumeClaim")),
                 (QJsonObject{{QStringLiteral("claimName"), QStringLiteral("datasets")}, {QStringLiteral("readOnly"), true}}));
        QCOMPARE(at(podSpec, QStringLiteral("containers.0.volumeMounts.2")).value(QStringLiteral("readOnly")).toBool(), true);
        QCOMPARE(at(podSpec, QStringLiteral("containers.0.volumeMounts.1")).value(QStringLiteral("mountPath")).toString(), QStringLiteral("/mnt/shared"));
    }

    // secretEnv: a secretKeyRef in every Ray container; the reference, never a value, in the
    // JobSpec annotation.
    void secretEnvBecomesSecretKeyRef()
    {
        RayJobInput in = input({{QStringLiteral("train"), QStringLiteral("h200"), 2, 8}});
        in.spec.secretEnv.insert(QStringLiteral("HF_TOKEN"), SecretRef{QStringLiteral("hf"), QStringLiteral("token")});
        const auto built = RayJobBuilder::build(in);
        QVERIFY2(built, built ? "" : qPrintable(built.error().message));
        const QJsonObject expected{{QStringLiteral("name"), QStringLiteral("HF_TOKEN")},
                                   {QStringLiteral("valueFrom"), QJsonObject{{QStringLiteral("secretKeyRef"),
                                                                              QJsonObject{{QStringLiteral("name"), QStringLiteral("hf")},
                                                                                          {QStringLiteral("key"), QStringLiteral("token")}}}}}};
        for (const QString &containers : {QStringLiteral("spec.rayClusterSpec.headGroupSpec.template.spec.containers"),
                                          QStringLiteral("spec.rayClusterSpec.workerGroupSpecs.0.template.spec.containers")}) {
            const QJsonArray env = value(*built, containers).toArray().at(0).toObject().value(QStringLiteral("env")).toArray();
            QVERIFY2(env.contains(expected), qPrintable(containers));
        }
        const QString annotation = at(*built, QStringLiteral("metadata.annotations")).value(QStringLiteral("starforge.dev/jobspec")).toString();
        QVERIFY2(annotation.contains(QStringLiteral("\"secretEnv\":{\"HF_TOKEN\":{\"key\":\"token\",\"secret\":\"hf\"}}")), qPrintable(annotation));
        admit(*built);
    }

    void olderOperatorGetsNoPreRunningDeadline()
    {
        RayJobInput in = input({{QStringLiteral("train"), QStringLiteral("h200"), 1, 8}});
        in.operatorVersion = QVersionNumber(1, 5, 1);
        const auto built = RayJobBuilder::build(in);
        QVERIFY(built);
        QVERIFY(!at(*built, QStringLiteral("spec")).contains(QStringLiteral("preRunningDeadlineSeconds")));
        // The owner's tracker still knows the deadline the job was submitted with.
        const JobRecord record = JobRecord::fromRayJob(*built);
        QCOMPARE(record.preRunningDeadlineSeconds, 1800);
        QVERIFY(!record.deadlineInSpec);
        admit(*built);
    }

    void refusesWhatCannotRun()
    {
        RayJobInput in = input({{QStringLiteral("train"), QStringLiteral("h200"), 2, 8}});
        in.settings.storageShared = false;
        const auto unshared = RayJobBuilder::build(in);
        QVERIFY(!unshared);
        QVERIFY2(unshared.error().message.contains(QStringLiteral("not shared between nodes")), qPrintable(unshared.error().message));
        in = input({{QStringLiteral("train"), QStringLiteral("h200"), 1, 8}});
        in.jobId = QStringLiteral("X!");
        in.capsule.sha256 = QStringLiteral("abc");
        in.capsule.url = QUrl(QStringLiteral("ftp://host/x.zip"));
        const auto bad = RayJobBuilder::build(in);
        QVERIFY(!bad);
        QCOMPARE(bad.error().message.count(u'\n'), 2);   // all three problems at once
        // No owner, no job: every job records whose it is.
        in = input({{QStringLiteral("train"), QStringLiteral("h200"), 1, 8}});
        in.settings.owner.clear();
        const auto ownerless = RayJobBuilder::build(in);
        QVERIFY(!ownerless);
        QVERIFY2(ownerless.error().message.contains(QStringLiteral("FORGE_OWNER")), qPrintable(ownerless.error().message));
        // The longest name the JobSpec allows still makes a valid RayJob name (47 characters).
        in = input({{QStringLiteral("train"), QStringLiteral("h200"), 1, 8}});
        in.spec.name = QStringLiteral("a").repeated(JobSpec::MaxNameLength);
        const auto longest = RayJobBuilder::build(in);
        QVERIFY(longest);
        QCOMPARE(RayJobBuilder::rayJobName(in.spec, in.jobId).size(), 47);
        admit(*longest);
        for (int i = 0; i < 200; ++i) {
            const QString id = RayJobBuilder::newJobId();
            QVERIFY2(QRegularExpression(QStringLiteral("^[a-z0-9]{6}$")).match(id).hasMatch() && RayJobBuilder::isJobId(id), qPrintable(id));
        }
        // What the CLI and the snapshot take for a job id rather than a RayJob name.
        for (const char *notAnId : {"", "k2x7p", "k2x7pqq", "a2x7pq", "k2x7p3", "K2X7PQ", "k2x7p-", "k2x7p\xc3\xa9"}) {
            QVERIFY2(!RayJobBuilder::isJobId(QString::fromUtf8(notAnId)), notAnId);
        }
    }

    // Code integrity (docs/capsule.md): every Ray container, on either storage path, gets the
    // digest of manifest.json the runner checks, and the RayJob shows it; a job without it is
    // not built.
    void manifestDigestReachesEveryRayContainer()
    {
        for (const QString &url : {QStringLiteral("https://s3.example/starforge/capsules/%1.zip?X-Amz-Signature=abc").arg(Sha),
                                   QStringLiteral("http://s3.example/starforge/capsules/%1.zip?X-Amz-Signature=abc").arg(Sha)}) {
            RayJobInput in = input({{QStringLiteral("train"), QStringLiteral("h200"), 2, 8}, {QStringLiteral("gen"), QStringLiteral("h100"), 1, 8}});
            in.capsule.url = QUrl(url);
            in.jobId = url.startsWith(QLatin1String("https")) ? QStringLiteral("m4nfst") : QStringLiteral("m4nfhp");
            const auto built = RayJobBuilder::build(in);
            QVERIFY2(built, built ? "" : qPrintable(built.error().message));
            const QJsonObject expected{{QStringLiteral("name"), QStringLiteral("FORGE_MANIFEST_SHA256")}, {QStringLiteral("value"), ManifestSha}};
            for (const QString &group : {QStringLiteral("spec.rayClusterSpec.headGroupSpec"), QStringLiteral("spec.rayClusterSpec.workerGroupSpecs.0"),
                                         QStringLiteral("spec.rayClusterSpec.workerGroupSpecs.1")}) {
                const QJsonArray env = at(*built, group + QStringLiteral(".template.spec.containers.0")).value(QStringLiteral("env")).toArray();
                QVERIFY2(env.contains(expected), qPrintable(url + u' ' + group));
            }
            QCOMPARE(at(*built, QStringLiteral("metadata.annotations")).value(QLatin1String(Labels::ManifestSha256)).toString(), ManifestSha);
            admit(*built);
        }
        RayJobInput in = input({{QStringLiteral("train"), QStringLiteral("h200"), 1, 8}});
        in.capsule.manifestSha256.clear();
        const auto refused = RayJobBuilder::build(in);
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.contains(QStringLiteral("manifest.json")), qPrintable(refused.error().message));
    }

    void httpOnlyFetchesInAnInitContainer()
    {
        // A real HTTP server with the Capsule, and a URL whose query would do harm in a shell.
        QTemporaryDir served;
        const QByteArray capsule = QByteArray("PK capsule bytes ").repeated(1000);
        QVERIFY(Testing::writeFile(served.filePath(QStringLiteral("capsule.zip")), capsule));
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost));
        const quint16 port = probe.serverPort();
        probe.close();
        QProcess server;
        server.setWorkingDirectory(served.path());
        server.start(QStringLiteral("python3"), {QStringLiteral("-m"), QStringLiteral("http.server"), QString::number(port), QStringLiteral("--bind"), QStringLiteral("127.0.0.1")});
        QVERIFY(server.waitForStarted());
        const QString sha = QString::fromLatin1(Crypto::Digest::sha256(capsule).toHex());
        RayJobInput in = input({{QStringLiteral("train"), QStringLiteral("h200"), 2, 8}});
        in.capsule = {sha, QUrl(QStringLiteral("http://127.0.0.1:%1/capsule.zip?x=$(touch%20pwned)&y=`touch%20pwned`").arg(port)), ManifestSha};
        const auto built = RayJobBuilder::build(in);
        QVERIFY2(built, built ? "" : qPrintable(built.error().message));
        admit(*built);
        const QString file = QStringLiteral("/starforge-capsule/capsule-") + sha + QStringLiteral(".zip");
        const QJsonObject runtimeEnv = QJsonDocument::fromJson(value(*built, QStringLiteral("spec.runtimeEnvYAML")).toString().toUtf8()).object();
        QCOMPARE(runtimeEnv.value(QStringLiteral("working_dir")).toString(), QStringLiteral("file://") + file);
        for (const QString &group : {QStringLiteral("spec.rayClusterSpec.headGroupSpec"), QStringLiteral("spec.rayClusterSpec.workerGroupSpecs.0")}) {
            const QJsonObject podSpec = at(*built, group + QStringLiteral(".template.spec"));
            const QJsonObject init = at(podSpec, QStringLiteral("initContainers.0"));
            QCOMPARE(init.value(QStringLiteral("name")).toString(), QLatin1String(Cluster::CapsuleInitContainerName));
            QCOMPARE(at(podSpec, QStringLiteral("containers.0.volumeMounts.2")).value(QStringLiteral("mountPath")).toString(), QStringLiteral("/starforge-capsule"));
            QCOMPARE(at(init, QStringLiteral("volumeMounts.0")).value(QStringLiteral("mountPath")).toString(), QStringLiteral("/starforge-capsule"));
        }
        // Run the init container's command as the kubelet would: argv as given, no shell, with
        // the destination moved into a scratch folder.
        const QJsonArray command = at(*built, QStringLiteral("spec.rayClusterSpec.headGroupSpec.template.spec.initContainers.0"))
                                       .value(QStringLiteral("command")).toArray();
        QCOMPARE(command.size(), 6);
        QCOMPARE(command.at(0).toString(), QStringLiteral("python3"));
        QCOMPARE(command.at(3).toString(), in.capsule.url.toString(QUrl::FullyEncoded));
        QCOMPARE(command.at(4).toString(), sha);
        QCOMPARE(command.at(5).toString(), file);
        QTemporaryDir scratch;
        const auto run = [&](const QString &expectedSha) {
            QProcess fetch;
            fetch.setWorkingDirectory(scratch.path());
            fetch.start(command.at(0).toString(), {command.at(1).toString(), command.at(2).toString(), command.at(3).toString(),
                                                   expectedSha, scratch.filePath(QStringLiteral("capsule.zip"))});
            fetch.waitForFinished(30000);
            return std::make_pair(fetch.exitCode(), QString::fromUtf8(fetch.readAllStandardError()));
        };
        QTRY_VERIFY_WITH_TIMEOUT(run(sha).first == 0, 10000);   // once the server answers
        QCOMPARE(Testing::readAll(scratch.filePath(QStringLiteral("capsule.zip"))), capsule);
        QVERIFY(!QFile::exists(scratch.filePath(QStringLiteral("pwned"))));
        QVERIFY(!QFile::exists(served.filePath(QStringLiteral("pwned"))));
        QFile::remove(scratch.filePath(QStringLiteral("capsule.zip")));
        const auto [code, error] = run(QString(64, u'0'));
        QVERIFY(code != 0);
        QVERIFY2(error.contains(QStringLiteral("capsule download corrupted")), qPrintable(error));
        QVERIFY(QDir(scratch.path()).entryList(QDir::Files).isEmpty());   // nothing half-written is left
        server.kill();
        server.waitForFinished();
    }
};

QTEST_GUILESS_MAIN(TestRayJobBuilder)
#include "tst_rayjobbuilder.moc"
