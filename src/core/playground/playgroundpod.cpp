#include "core/playground/playgroundpod.h"

#include "core/cluster/capacity.h"
#include "core/job/ownership.h"

#include <QCoreApplication>
#include <QDir>
#include <QJsonArray>
#include <QRegularExpression>

namespace Starforge::Playground {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(PlaygroundPod)
};

QString storageMount(const Job::ClusterSettings &settings)
{
    return settings.storageMount.isEmpty() ? settings.storageRoot : settings.storageMount;
}

bool underStorage(const QString &path, const Job::ClusterSettings &settings)
{
    const QString root = QDir::cleanPath(storageMount(settings));
    return !root.isEmpty() && QDir::cleanPath(path).startsWith(root + u'/');
}

// A Hugging Face model name: "name" or "org/name".
bool isModelName(const QString &model)
{
    static const QRegularExpression name(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$"));
    return name.match(model).hasMatch();
}

} // namespace

QString PlaygroundPod::servedNameFor(const LaunchRequest &request)
{
    if (!request.servedName.isEmpty()) return request.servedName;
    if (!request.jobId.isEmpty() && request.step > 0) return QStringLiteral("%1-step-%2").arg(request.jobId).arg(request.step);
    const QString model = QDir::cleanPath(request.model);
    return model.section(u'/', -1);
}

QString PlaygroundPod::ownerSelector(const QString &owner)
{
    return Text::tr("%1=%2,app.kubernetes.io/managed-by=starforge,starforge.dev/owner=%3")
        .arg(QLatin1String(ComponentLabel), QLatin1String(ComponentValue), Job::ownerLabelValue(owner));
}

QStringList PlaygroundPod::problems(const LaunchRequest &request, const Job::ClusterSettings &settings)
{
    QStringList out;
    const QString root = storageMount(settings);
    if (request.model.isEmpty()) {
        out << Text::tr("model: required: a checkpoint's path under %1, or a model name such as Qwen/Qwen3-0.6B.").arg(root);
    } else if (request.model.startsWith(u'/')) {
        if (request.model.split(u'/').contains(QStringLiteral(".."))) {
            out << Text::tr("model: \"%1\" must not contain \"..\".").arg(request.model);
        } else if (!underStorage(request.model, settings)) {
            out << Text::tr("model: %1 is not under the storage root %2, the only storage a playground pod mounts.").arg(request.model, root);
        } else if (settings.storagePvc.isEmpty()) {
            out << Text::tr("model: a checkpoint is served from the storage volume, but the profile has none; set FORGE_K8S_STORAGE_PVC.");
        }
    } else if (!isModelName(request.model)) {
        out << Text::tr("model: \"%1\" is neither a path under %2 nor a model name such as Qwen/Qwen3-0.6B.").arg(request.model, root);
    }
    if (!request.tokenizer.isEmpty() && (!request.tokenizer.startsWith(u'/') || !underStorage(request.tokenizer, settings)
                                         || request.tokenizer.split(u'/').contains(QStringLiteral("..")))) {
        out << Text::tr("tokenizer: %1 must be a path under the storage root %2.").arg(request.tokenizer, root);
    }
    static const QRegularExpression served(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$"));
    if (!served.match(servedNameFor(request)).hasMatch()) {
        out << Text::tr("servedName: \"%1\" must be 1-128 letters, digits, '.', '_', '-' or '/'.").arg(servedNameFor(request));
    }
    static const QRegularExpression labelValue(QStringLiteral("^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"));
    if (!labelValue.match(request.series).hasMatch()) {
        out << Text::tr("series: \"%1\" is not a GPU series of the cluster (a node label value).").arg(request.series);
    }
    if (request.gpus < 1 || request.gpus > 64) {
        out << Text::tr("gpus: the tensor parallel size must be between 1 and 64, not %1.").arg(request.gpus);
    }
    if (request.ttlSeconds < 60 || request.ttlSeconds > 7 * 24 * 3600) {
        out << Text::tr("ttl: must be between 1 minute and 7 days, not %1 s.").arg(request.ttlSeconds);
    }
    if (request.maxModelLen != 0 && request.maxModelLen < 16) {
        out << Text::tr("maxModelLen: must be at least 16 tokens, or 0 for the model's own, not %1.").arg(request.maxModelLen);
    }
    if (!request.jobId.isEmpty() && !Job::RayJobBuilder::isJobId(request.jobId)) {
        out << Text::tr("job: \"%1\" is not a Starforge job id.").arg(request.jobId);
    }
    if (settings.owner.isEmpty()) {
        out << Text::tr("owner: unknown; set FORGE_OWNER, or sign in so the cluster names you.");
    }
    if (settings.vllmImage.isEmpty()) {
        out << Text::tr("image: FORGE_IMAGE_VLLM is empty; set the vLLM image to run.");
    }
    return out;
}

Result<QJsonObject> PlaygroundPod::build(const LaunchRequest &request, const Job::ClusterSettings &settings, const QString &id, const QDateTime &now)
{
    if (const QStringList problems = PlaygroundPod::problems(request, settings); !problems.isEmpty()) {
        return Error::invalid(problems.join(u'\n'));
    }
    const QString name = servedNameFor(request);
    const bool fromStorage = request.model.startsWith(u'/');
    QJsonObject labels{{QStringLiteral("app.kubernetes.io/managed-by"), QStringLiteral("starforge")},
                       {QLatin1String(ComponentLabel), QLatin1String(ComponentValue)},
                       {QStringLiteral("starforge.dev/owner"), Job::ownerLabelValue(settings.owner)}};
    QJsonObject annotations{{QStringLiteral("starforge.dev/owner"), settings.owner},
                            {QLatin1String(ModelAnnotation), request.model},
                            {QLatin1String(ExpiresAnnotation), now.toUTC().addSecs(request.ttlSeconds).toString(Qt::ISODate)}};
    if (!request.jobId.isEmpty()) {
        labels.insert(QStringLiteral("starforge.dev/job-id"), request.jobId);
        annotations.insert(QLatin1String(StepAnnotation), QString::number(request.step));
    }
    QJsonArray args{request.model, QStringLiteral("--served-model-name"), name, QStringLiteral("--tensor-parallel-size"),
                    QString::number(request.gpus), QStringLiteral("--port"), QString::number(VllmPort)};
    if (!request.tokenizer.isEmpty()) {
        args.append(QStringLiteral("--tokenizer"));
        args.append(request.tokenizer);
    }
    if (request.maxModelLen > 0) {
        args.append(QStringLiteral("--max-model-len"));
        args.append(QString::number(request.maxModelLen));
    }
    // vLLM's tensor-parallel workers share memory through /dev/shm, which a container's default
    // 64 MiB does not hold.
    QJsonArray mounts{QJsonObject{{QStringLiteral("name"), QStringLiteral("dshm")}, {QStringLiteral("mountPath"), QStringLiteral("/dev/shm")}}};
    QJsonArray volumes{QJsonObject{{QStringLiteral("name"), QStringLiteral("dshm")},
                                   {QStringLiteral("emptyDir"), QJsonObject{{QStringLiteral("medium"), QStringLiteral("Memory")},
                                                                            {QStringLiteral("sizeLimit"), settings.shmSize}}}}};
    if (fromStorage || !request.tokenizer.isEmpty()) {
        mounts.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("storage")}, {QStringLiteral("mountPath"), storageMount(settings)},
                                  {QStringLiteral("readOnly"), true}});
        volumes.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("storage")},
                                   {QStringLiteral("persistentVolumeClaim"),
                                    QJsonObject{{QStringLiteral("claimName"), settings.storagePvc}, {QStringLiteral("readOnly"), true}}}});
    }
    QJsonObject container{{QStringLiteral("name"), QStringLiteral("vllm")},
                          {QStringLiteral("image"), settings.vllmImage},
                          {QStringLiteral("args"), args},
                          {QStringLiteral("ports"), QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("http")}, {QStringLiteral("containerPort"), VllmPort}}}},
                          {QStringLiteral("readinessProbe"),
                           QJsonObject{{QStringLiteral("httpGet"), QJsonObject{{QStringLiteral("path"), QStringLiteral("/health")}, {QStringLiteral("port"), VllmPort}}},
                                       {QStringLiteral("periodSeconds"), 5}, {QStringLiteral("failureThreshold"), 3}}},
                          {QStringLiteral("volumeMounts"), mounts}};
    if (settings.gpuPassthrough) {
        const QJsonObject gpus{{QStringLiteral("nvidia.com/gpu"), QString::number(request.gpus)}};
        container.insert(QStringLiteral("resources"), QJsonObject{{QStringLiteral("limits"), gpus}, {QStringLiteral("requests"), gpus}});
    }
    QJsonArray tolerations;
    for (const Cluster::Toleration &t : Cluster::defaultTolerations()) tolerations.append(t.toJson());
    const QJsonObject spec{{QStringLiteral("restartPolicy"), QStringLiteral("Never")},
                           {QStringLiteral("activeDeadlineSeconds"), request.ttlSeconds},
                           {QStringLiteral("nodeSelector"), QJsonObject{{settings.gpuNodeLabel, request.series}}},
                           {QStringLiteral("tolerations"), tolerations},
                           {QStringLiteral("containers"), QJsonArray{container}},
                           {QStringLiteral("volumes"), volumes}};
    return QJsonObject{{QStringLiteral("apiVersion"), QStringLiteral("v1")},
                       {QStringLiteral("kind"), QStringLiteral("Pod")},
                       {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), podName(id)}, {QStringLiteral("namespace"), settings.ns},
                                                                {QStringLiteral("labels"), labels}, {QStringLiteral("annotations"), annotations}}},
                       {QStringLiteral("spec"), spec}};
}

} // namespace Starforge::Playground
