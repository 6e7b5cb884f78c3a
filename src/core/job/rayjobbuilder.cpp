#include "core/job/rayjobbuilder.h"

#include "core/cluster/capacity.h"
#include "core/cluster/diagnosis.h"
#include "core/config/effectiveconfig.h"
#include "core/job/ownership.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QRegularExpression>

#include <algorithm>

namespace Starforge::Job {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(RayJobBuilder)
};

// Downloads the Capsule on HTTP-only storage: URL, expected SHA-256 and destination arrive as
// argv, never through a shell, so nothing in them is interpreted. A mismatch leaves no file.
const char FetchScript[] =
    // untranslated: a Python program the init container runs
    "import hashlib, os, sys, urllib.request\n"
    "url, want, dest = sys.argv[1:4]\n"
    "tmp = dest + '.part'\n"
    "digest = hashlib.sha256()\n"
    "with urllib.request.urlopen(url, timeout=120) as answer, open(tmp, 'wb') as out:\n"
    "    while True:\n"
    "        block = answer.read(1 << 20)\n"
    "        if not block:\n"
    "            break\n"
    "        digest.update(block)\n"
    "        out.write(block)\n"
    "if digest.hexdigest() != want:\n"
    "    os.remove(tmp)\n"
    "    sys.exit('capsule download corrupted: expected sha256 %s, got %s' % (want, digest.hexdigest()))\n"
    "os.replace(tmp, dest)\n"
    "print('capsule %s fetched' % want)\n";

QJsonObject nameValue(const QString &name, const QString &value)
{
    return QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("value"), value}};
}

struct Shape
{
    const RayJobInput &in;
    bool httpOnly;
    QString capsuleFile;   // file:// target on HTTP-only storage

    QJsonArray env(const Pool &pool) const
    {
        QJsonArray out;
        // The JobSpec's env in every Ray container, not runtimeEnvYAML.env_vars: NeMo-RL forwards
        // the driver's environment to its workers and a job-level env_vars then fails to merge.
        for (auto it = in.spec.env.cbegin(); it != in.spec.env.cend(); ++it) {
            out.append(nameValue(it.key(), it.value()));
        }
        // Values from Secrets, resolved by the kubelet: the app never holds them.
        for (auto it = in.spec.secretEnv.cbegin(); it != in.spec.secretEnv.cend(); ++it) {
            out.append(QJsonObject{{QStringLiteral("name"), it.key()},
                                   {QStringLiteral("valueFrom"),
                                    QJsonObject{{QStringLiteral("secretKeyRef"),
                                                 QJsonObject{{QStringLiteral("name"), it->secret}, {QStringLiteral("key"), it->key}}}}}});
        }
        // Hugging Face's cache on the storage volume unless the spec says otherwise: NeMo-RL
        // converts a Megatron job's model into $HF_HOME/nemo_rl, which every node must see, and
        // the driver forwards the head's value to every actor anyway (docs/jobspec.md, "Environment").
        if (in.spec.storage && !in.spec.env.contains(QStringLiteral("HF_HOME")) && !in.spec.secretEnv.contains(QStringLiteral("HF_HOME"))) {
            out.append(nameValue(QStringLiteral("HF_HOME"), storageMount() + QStringLiteral("/cache/huggingface")));
        }
        out.append(nameValue(QStringLiteral("FORGE_JOB_ID"), in.jobId));
        out.append(nameValue(QStringLiteral("FORGE_JOB_NAME"), in.spec.name));
        out.append(nameValue(QStringLiteral("FORGE_POOL"), pool.name));
        out.append(nameValue(QStringLiteral("FORGE_NEMO_RL_DIR"), in.settings.nemoRlDir));
        out.append(nameValue(QStringLiteral("FORGE_STORAGE_ROOT"), storageMount()));
        out.append(nameValue(QStringLiteral("FORGE_CAPSULE_SHA256"), in.capsule.sha256));
        // The runner checks manifest.json against it before anything runs: on HTTPS storage Ray
        // downloads the object itself, and only this digest, which the bucket cannot change,
        // tells the Capsule that was built from another one put in its place.
        out.append(nameValue(QStringLiteral("FORGE_MANIFEST_SHA256"), in.capsule.manifestSha256));
        return out;
    }

    QString storageMount() const
    {
        return in.settings.storageMount.isEmpty() ? in.settings.storageRoot : in.settings.storageMount;
    }

    QJsonObject resources(const Pool &pool) const
    {
        if (!in.settings.gpuPassthrough) {
            // No device plugin request: the pods land on GPU nodes by the selector alone, and
            // Ray still advertises the GPUs through num-gpus.
            return {};
        }
        const QJsonObject gpus{{QStringLiteral("nvidia.com/gpu"), QString::number(pool.gpusPerNode)}};
        return QJsonObject{{QStringLiteral("limits"), gpus}, {QStringLiteral("requests"), gpus}};
    }

    QJsonObject podTemplate(const Pool &pool, const QString &containerName) const
    {
        QJsonArray mounts{QJsonObject{{QStringLiteral("name"), QStringLiteral("dshm")}, {QStringLiteral("mountPath"), QStringLiteral("/dev/shm")}}};
        QJsonArray volumes{QJsonObject{{QStringLiteral("name"), QStringLiteral("dshm")},
                                       {QStringLiteral("emptyDir"), QJsonObject{{QStringLiteral("medium"), QStringLiteral("Memory")},
                                                                                {QStringLiteral("sizeLimit"), in.settings.shmSize}}}}};
        if (in.spec.storage) {
            mounts.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("storage")}, {QStringLiteral("mountPath"), storageMount()}});
            volumes.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("storage")},
                                       {QStringLiteral("persistentVolumeClaim"), QJsonObject{{QStringLiteral("claimName"), in.settings.storagePvc}}}});
        }
        if (in.spec.corpus) {
            mounts.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("corpus")}, {QStringLiteral("mountPath"), QStringLiteral("/corpus")},
                                      {QStringLiteral("readOnly"), true}});
            volumes.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("corpus")},
                                       {QStringLiteral("persistentVolumeClaim"), QJsonObject{{QStringLiteral("claimName"), in.settings.corpusPvc},
                                                                                             {QStringLiteral("readOnly"), true}}}});
        }
        QJsonObject container{{QStringLiteral("name"), containerName},
                              {QStringLiteral("image"), in.spec.image.isEmpty() ? in.settings.image : in.spec.image},
                              {QStringLiteral("env"), env(pool)},
                              {QStringLiteral("volumeMounts"), mounts}};
        if (const QJsonObject r = resources(pool); !r.isEmpty()) {
            container.insert(QStringLiteral("resources"), r);
        }
        // The tolerations the capacity engine assumes (GPU nodes' nvidia.com/gpu taint), so that
        // its fit verdict and the scheduler agree.
        QJsonArray tolerations;
        for (const Cluster::Toleration &t : Cluster::defaultTolerations()) {
            tolerations.append(t.toJson());
        }
        QJsonObject spec{{QStringLiteral("containers"), QJsonArray{container}},
                         {QStringLiteral("volumes"), volumes},
                         {QStringLiteral("nodeSelector"), QJsonObject{{in.settings.gpuNodeLabel, pool.series}}},
                         {QStringLiteral("tolerations"), tolerations}};
        if (httpOnly) {
            const QJsonObject capsuleMount{{QStringLiteral("name"), QStringLiteral("capsule")},
                                           {QStringLiteral("mountPath"), RayJobBuilder::capsuleMountPath()}};
            QJsonArray withCapsule = container.value(QStringLiteral("volumeMounts")).toArray();
            withCapsule.append(capsuleMount);
            container.insert(QStringLiteral("volumeMounts"), withCapsule);
            spec.insert(QStringLiteral("containers"), QJsonArray{container});
            volumes.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("capsule")}, {QStringLiteral("emptyDir"), QJsonObject{}}});
            spec.insert(QStringLiteral("volumes"), volumes);
            spec.insert(QStringLiteral("initContainers"),
                        QJsonArray{QJsonObject{{QStringLiteral("name"), QLatin1String(Cluster::CapsuleInitContainerName)},
                                               {QStringLiteral("image"), container.value(QStringLiteral("image"))},
                                               {QStringLiteral("command"), QJsonArray{QStringLiteral("python3"), QStringLiteral("-c"),
                                                                                      QString::fromLatin1(FetchScript), in.capsule.url.toString(QUrl::FullyEncoded),
                                                                                      in.capsule.sha256, capsuleFile}},
                                               {QStringLiteral("volumeMounts"), QJsonArray{capsuleMount}}}});
        }
        return QJsonObject{{QStringLiteral("metadata"), QJsonObject{{QStringLiteral("labels"), QJsonObject{
                               {QLatin1String(Labels::ManagedBy), QLatin1String(Labels::ManagedByValue)},
                               {QLatin1String(Labels::JobId), in.jobId},
                               {QLatin1String(Labels::Pool), pool.name}}}}},
                           {QStringLiteral("spec"), spec}};
    }

    QJsonObject rayStartParams(const Pool &pool) const
    {
        // num-gpus always, so Ray keeps its logical GPUs when passthrough is off; the pool's
        // resource in the operator's single-quoted JSON form (docs/kuberay.md, "Head and worker
        // groups").
        return QJsonObject{{QStringLiteral("num-gpus"), QString::number(pool.gpusPerNode)},
                           {QStringLiteral("resources"),
                            QStringLiteral("'{\"%1\": %2}'").arg(RayJobBuilder::poolResource(pool)).arg(pool.gpusPerNode)}};
    }
};

} // namespace

ClusterSettings ClusterSettings::fromConfig(const Config::EffectiveConfig &config)
{
    ClusterSettings s;
    s.ns = config.value(QStringLiteral("FORGE_K8S_NAMESPACE"));
    s.image = config.value(QStringLiteral("FORGE_IMAGE_NEMO_RL"));
    s.vllmImage = config.value(QStringLiteral("FORGE_IMAGE_VLLM"));
    s.nemoRlDir = config.value(QStringLiteral("FORGE_NEMO_RL_DIR"));
    s.gpuNodeLabel = config.value(QStringLiteral("FORGE_K8S_GPU_NODE_LABEL"));
    s.shmSize = config.value(QStringLiteral("FORGE_K8S_SHM_SIZE"));
    s.storageRoot = config.value(QStringLiteral("FORGE_STORAGE_ROOT"));
    s.storagePvc = config.value(QStringLiteral("FORGE_K8S_STORAGE_PVC"));
    s.storageMount = config.value(QStringLiteral("FORGE_K8S_STORAGE_MOUNT"));
    s.storageShared = config.boolean(QStringLiteral("FORGE_K8S_STORAGE_SHARED"));
    s.corpusPvc = config.value(QStringLiteral("FORGE_K8S_CORPUS_PVC"));
    s.rayVersion = config.value(QStringLiteral("FORGE_KUBERAY_RAY_VERSION"));
    s.ttlSeconds = static_cast<int>(config.integer(QStringLiteral("FORGE_KUBERAY_TTL_SECONDS")));
    s.preRunningDeadlineSeconds = static_cast<int>(config.integer(QStringLiteral("FORGE_KUBERAY_PRERUNNING_DEADLINE_S")));
    s.gpuPassthrough = config.boolean(QStringLiteral("FORGE_K8S_GPU_PASSTHROUGH"));
    s.owner = config.value(QStringLiteral("FORGE_OWNER")).trimmed();
    s.archiveBucket = archiveBucketAddress(QUrl(config.value(QStringLiteral("FORGE_S3_ENDPOINT"))), config.value(QStringLiteral("FORGE_S3_BUCKET")));
    return s;
}

QString RayJobBuilder::rayJobName(const JobSpec &spec, const QString &jobId)
{
    return spec.name + QLatin1Char('-') + jobId;
}

QString RayJobBuilder::poolResource(const Pool &pool)
{
    QString name = pool.name;
    return QStringLiteral("starforge_pool_") + name.replace(QLatin1Char('-'), QLatin1Char('_'));
}

// Kubernetes' own alphabet for generated names: no vowels, no look-alikes.
constexpr char JobIdAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
constexpr int JobIdLength = 6;

QString RayJobBuilder::newJobId()
{
    QString id;
    for (int i = 0; i < JobIdLength; ++i) {
        id += QLatin1Char(JobIdAlphabet[QRandomGenerator::global()->bounded(static_cast<int>(sizeof(JobIdAlphabet) - 1))]);
    }
    return id;
}

bool RayJobBuilder::isJobId(const QString &text)
{
    return text.size() == JobIdLength
        && std::all_of(text.cbegin(), text.cend(), [](QChar c) { return QLatin1String(JobIdAlphabet).contains(c); });
}

Result<QJsonObject> RayJobBuilder::build(const RayJobInput &in)
{
    QStringList problems = in.spec.problems();
    problems += in.spec.problemsWith(in.settings.storageShared, !in.settings.corpusPvc.isEmpty());
    static const QRegularExpression jobId(QStringLiteral("^[a-z0-9]{6}$"));
    if (!jobId.match(in.jobId).hasMatch()) {
        problems << Text::tr("The job id \"%1\" must be six lowercase letters or digits.").arg(in.jobId);
    }
    static const QRegularExpression sha(QStringLiteral("^[0-9a-f]{64}$"));
    if (!sha.match(in.capsule.sha256).hasMatch()) {
        problems << Text::tr("The Capsule's SHA-256 \"%1\" is not 64 hex digits.").arg(in.capsule.sha256);
    }
    if (!sha.match(in.capsule.manifestSha256).hasMatch()) {
        problems << Text::tr("The SHA-256 of the Capsule's manifest.json \"%1\" is not 64 hex digits.").arg(in.capsule.manifestSha256);
    }
    const QString scheme = in.capsule.url.scheme();
    if (!in.capsule.url.isValid() || (scheme != QLatin1String("https") && scheme != QLatin1String("http")) || in.capsule.url.host().isEmpty()) {
        problems << Text::tr("The Capsule URL \"%1\" is not an http(s) URL.").arg(in.capsule.url.toString());
    }
    if (in.settings.owner.isEmpty()) {
        problems << Text::tr("The job has no owner: set FORGE_OWNER in the profile, or connect so the cluster can say who you are.");
    }
    if (!problems.isEmpty()) {
        return Error::invalid(problems.join(QLatin1Char('\n')));
    }

    const bool httpOnly = scheme == QLatin1String("http");
    const Shape shape{in, httpOnly, capsuleMountPath() + QStringLiteral("/capsule-") + in.capsule.sha256 + QStringLiteral(".zip")};
    // HTTPS: Ray downloads the presigned URL itself. HTTP-only: Ray's https download would refuse
    // or leak, so the init container fetched it to one file:// path in every Ray pod. The
    // content hash in the file name keeps Ray's per-node cache honest.
    const QString workingDir = httpOnly ? QStringLiteral("file://") + shape.capsuleFile : in.capsule.url.toString(QUrl::FullyEncoded);
    const QJsonObject runtimeEnv{{QStringLiteral("working_dir"), workingDir}};

    const Pool &primary = in.spec.pools.first();
    QJsonArray workers;
    for (qsizetype i = 0; i < in.spec.pools.size(); ++i) {
        const Pool &pool = in.spec.pools.at(i);
        // Machine zero of the primary pool is the head; the rest of that pool are its workers.
        const int replicas = i == 0 ? pool.nodes - 1 : pool.nodes;
        if (replicas == 0) {
            continue;
        }
        workers.append(QJsonObject{{QStringLiteral("groupName"), pool.name},
                                   {QStringLiteral("replicas"), replicas},
                                   {QStringLiteral("minReplicas"), replicas},
                                   {QStringLiteral("maxReplicas"), replicas},
                                   {QStringLiteral("rayStartParams"), shape.rayStartParams(pool)},
                                   {QStringLiteral("template"), shape.podTemplate(pool, QStringLiteral("ray-worker"))}});
    }
    QJsonObject head{{QStringLiteral("rayStartParams"), shape.rayStartParams(primary)},
                     {QStringLiteral("template"), shape.podTemplate(primary, QStringLiteral("ray-head"))}};
    QJsonObject clusterSpec{{QStringLiteral("rayVersion"), in.settings.rayVersion}, {QStringLiteral("headGroupSpec"), head}};
    if (!workers.isEmpty()) {
        clusterSpec.insert(QStringLiteral("workerGroupSpecs"), workers);
    }

    // untranslated: a command line
    QJsonObject spec{{QStringLiteral("entrypoint"), QStringLiteral("python runner.pex")},
                     {QStringLiteral("runtimeEnvYAML"), QString::fromUtf8(QJsonDocument(runtimeEnv).toJson(QJsonDocument::Compact))},
                     {QStringLiteral("submissionMode"), QStringLiteral("K8sJobMode")},
                     {QStringLiteral("shutdownAfterJobFinishes"), true},
                     {QStringLiteral("ttlSecondsAfterFinished"), in.settings.ttlSeconds},
                     {QStringLiteral("backoffLimit"), 0},
                     {QStringLiteral("rayClusterSpec"), clusterSpec}};
    // The field arrived in KubeRay 1.6; an older operator would prune it, and the app enforces
    // the same deadline itself there.
    if (in.operatorVersion >= QVersionNumber(1, 6) && in.settings.preRunningDeadlineSeconds > 0) {
        spec.insert(QStringLiteral("preRunningDeadlineSeconds"), in.settings.preRunningDeadlineSeconds);
    }
    QJsonObject annotations{{QLatin1String(Labels::CapsuleSha256), in.capsule.sha256},
                            {QLatin1String(Labels::ManifestSha256), in.capsule.manifestSha256},
                            {QLatin1String(Labels::JobSpec), QString::fromUtf8(in.spec.canonicalJson())},
                            {QLatin1String(Labels::Owner), in.settings.owner}};
    if (!in.settings.archiveBucket.isEmpty()) annotations.insert(QLatin1String(Labels::ArchiveBucket), in.settings.archiveBucket);
    if (in.settings.preRunningDeadlineSeconds > 0) {
        annotations.insert(QLatin1String(Labels::PreRunningDeadline), QString::number(in.settings.preRunningDeadlineSeconds));
    }
    const QJsonObject metadata{
        {QStringLiteral("name"), rayJobName(in.spec, in.jobId)},
        {QStringLiteral("namespace"), in.settings.ns},
        {QStringLiteral("labels"), QJsonObject{{QLatin1String(Labels::ManagedBy), QLatin1String(Labels::ManagedByValue)},
                                               {QLatin1String(Labels::JobId), in.jobId},
                                               {QLatin1String(Labels::JobName), in.spec.name},
                                               {QLatin1String(Labels::Owner), ownerLabelValue(in.settings.owner)}}},
        {QStringLiteral("annotations"), annotations}};
    return QJsonObject{{QStringLiteral("apiVersion"), QStringLiteral("ray.io/v1")},
                       {QStringLiteral("kind"), QStringLiteral("RayJob")},
                       {QStringLiteral("metadata"), metadata},
                       {QStringLiteral("spec"), spec}};
}

} // namespace Starforge::Job
