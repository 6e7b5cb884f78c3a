#include "core/playground/playgroundclient.h"

#include "core/job/ownership.h"
#include "core/kube/kubeclient.h"
#include "core/kube/resourcekind.h"
#include "core/kube/resources.h"
#include "core/playground/playgroundpod.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>
#include <memory>

namespace Starforge::Playground {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(PlaygroundClient)
};

// The value after a flag in vLLM's arguments, or empty.
QString argAfter(const QJsonArray &args, const QString &flag)
{
    for (qsizetype i = 0; i + 1 < args.size(); ++i) {
        if (args.at(i).toString() == flag) return args.at(i + 1).toString();
    }
    return {};
}

} // namespace

LaunchRequest PlaygroundInstance::launchRequest() const
{
    LaunchRequest request;
    request.model = model;
    request.tokenizer = tokenizer;
    request.servedName = jobId.isEmpty() ? servedName : QString();   // a job's is made from it again
    request.jobId = jobId;
    request.step = step;
    request.series = series;
    request.gpus = std::max(1, gpus);
    if (ttlSeconds > 0) request.ttlSeconds = ttlSeconds;
    request.maxModelLen = maxModelLen;
    return request;
}

QString PlaygroundInstance::stateText() const
{
    if (ended()) return reason.isEmpty() ? Text::tr("ended") : Text::tr("ended: %1").arg(reason);
    if (ready) return Text::tr("ready");
    if (phase == QLatin1String("Pending") && !reason.isEmpty()) return Text::tr("waiting: %1").arg(reason);
    return Text::tr("starting");
}

PlaygroundInstance PlaygroundInstance::fromPod(const QJsonObject &pod)
{
    PlaygroundInstance out;
    const QJsonObject meta = pod.value(QStringLiteral("metadata")).toObject();
    const QJsonObject annotations = meta.value(QStringLiteral("annotations")).toObject();
    const QJsonObject labels = meta.value(QStringLiteral("labels")).toObject();
    const QJsonObject spec = pod.value(QStringLiteral("spec")).toObject();
    const QJsonObject status = pod.value(QStringLiteral("status")).toObject();
    out.name = meta.value(QStringLiteral("name")).toString();
    out.uid = meta.value(QStringLiteral("uid")).toString();
    out.created = QDateTime::fromString(meta.value(QStringLiteral("creationTimestamp")).toString(), Qt::ISODate);
    out.owner = annotations.value(QStringLiteral("starforge.dev/owner")).toString();
    out.model = annotations.value(QLatin1String(ModelAnnotation)).toString();
    out.expiresAt = QDateTime::fromString(annotations.value(QLatin1String(ExpiresAnnotation)).toString(), Qt::ISODate);
    out.jobId = labels.value(QStringLiteral("starforge.dev/job-id")).toString();
    out.step = annotations.value(QLatin1String(StepAnnotation)).toString().toInt();
    const QJsonObject container = spec.value(QStringLiteral("containers")).toArray().first().toObject();
    const QJsonArray args = container.value(QStringLiteral("args")).toArray();
    out.servedName = argAfter(args, QStringLiteral("--served-model-name"));
    out.gpus = argAfter(args, QStringLiteral("--tensor-parallel-size")).toInt();
    out.tokenizer = argAfter(args, QStringLiteral("--tokenizer"));
    out.maxModelLen = argAfter(args, QStringLiteral("--max-model-len")).toInt();
    out.ttlSeconds = spec.value(QStringLiteral("activeDeadlineSeconds")).toInt();
    const QJsonObject selector = spec.value(QStringLiteral("nodeSelector")).toObject();
    out.series = selector.isEmpty() ? QString() : selector.begin()->toString();
    out.phase = status.value(QStringLiteral("phase")).toString(QStringLiteral("Pending"));
    out.reason = status.value(QStringLiteral("reason")).toString();
    for (const QJsonValue &c : status.value(QStringLiteral("conditions")).toArray()) {
        const QString type = c[QStringLiteral("type")].toString();
        if (type == QLatin1String("Ready")) out.ready = c[QStringLiteral("status")].toString() == QLatin1String("True");
        if (type == QLatin1String("PodScheduled") && c[QStringLiteral("status")].toString() == QLatin1String("False") && out.reason.isEmpty())
            out.reason = c[QStringLiteral("reason")].toString();
    }
    for (const QJsonValue &cs : status.value(QStringLiteral("containerStatuses")).toArray()) {
        const QString waiting = cs[QStringLiteral("state")][QStringLiteral("waiting")][QStringLiteral("reason")].toString();
        if (!waiting.isEmpty() && waiting != QLatin1String("ContainerCreating") && out.reason.isEmpty()) out.reason = waiting;
    }
    return out;
}

PlaygroundClient::PlaygroundClient(Kube::KubeClient *client, QString ns, QString owner, QObject *parent)
    : QObject(parent)
    , m_client(client)
    , m_ns(std::move(ns))
    , m_owner(std::move(owner))
{
}

void PlaygroundClient::launch(const QJsonObject &pod, std::function<void(Result<PlaygroundInstance>)> done)
{
    Kube::ApiRequest create;
    create.method = "POST";
    create.path = Kube::ResourceKind::pods().path(m_ns);
    create.body = QJsonDocument(pod).toJson(QJsonDocument::Compact);
    create.what = Text::tr("create the playground pod in namespace %1").arg(m_ns);
    m_client->send(create, this, [done = std::move(done)](const Kube::ApiResult &result) {
        if (!result.ok()) {
            done(result.error->toError());
            return;
        }
        done(PlaygroundInstance::fromPod(result.json()));
    });
}

void PlaygroundClient::list(std::function<void(Result<QList<PlaygroundInstance>>)> done)
{
    Kube::ApiRequest request;
    request.path = Kube::ResourceKind::pods().path(m_ns);
    request.query.addQueryItem(QStringLiteral("labelSelector"), PlaygroundPod::ownerSelector(m_owner));
    request.what = Text::tr("list the playground pods in namespace %1").arg(m_ns);
    m_client->send(request, this, [this, done = std::move(done)](const Kube::ApiResult &result) {
        if (!result.ok()) {
            done(result.error->toError());
            return;
        }
        QList<PlaygroundInstance> out;
        for (const QJsonValue &item : result.json().value(QStringLiteral("items")).toArray()) {
            PlaygroundInstance instance = PlaygroundInstance::fromPod(item.toObject());
            // The label is a hash-suffixed form of the name; the annotation is the name itself.
            if (instance.owner == m_owner) out.append(instance);
        }
        std::sort(out.begin(), out.end(), [](const PlaygroundInstance &a, const PlaygroundInstance &b) { return a.created > b.created; });
        done(out);
    });
}

void PlaygroundClient::stop(const QString &name, std::function<void(Result<void>)> done)
{
    Kube::ApiRequest get;
    get.path = Kube::ResourceKind::pods().path(m_ns, name);
    get.what = Text::tr("read the playground pod %1").arg(name);
    m_client->send(get, this, [this, name, done = std::move(done)](const Kube::ApiResult &result) mutable {
        if (!result.ok()) {
            done(result.error->toError());
            return;
        }
        const QJsonObject pod = result.json();
        const PlaygroundInstance instance = PlaygroundInstance::fromPod(pod);
        const bool playground = pod[QStringLiteral("metadata")][QStringLiteral("labels")][QLatin1String(ComponentLabel)].toString() == QLatin1String(ComponentValue);
        if (!playground) {
            done(Error::invalid(Text::tr("%1 is not a playground pod; Starforge stops only the playground pods it made.").arg(name)));
            return;
        }
        if (instance.owner != m_owner) {
            done(Error::invalid(Text::tr("The playground pod %1 belongs to %2; Starforge stops only your own.")
                                    .arg(name, instance.owner.isEmpty() ? Text::tr("nobody recorded") : instance.owner)));
            return;
        }
        remove(instance, std::move(done));
    });
}

void PlaygroundClient::remove(const PlaygroundInstance &instance, std::function<void(Result<void>)> done)
{
    Kube::ApiRequest request;
    request.method = "DELETE";
    request.path = Kube::ResourceKind::pods().path(m_ns, instance.name);
    request.body = QJsonDocument(QJsonObject{{QStringLiteral("kind"), QStringLiteral("DeleteOptions")}, {QStringLiteral("apiVersion"), QStringLiteral("v1")},
                                             {QStringLiteral("preconditions"), QJsonObject{{QStringLiteral("uid"), instance.uid}}}})
                       .toJson(QJsonDocument::Compact);
    request.what = Text::tr("delete the playground pod %1").arg(instance.name);
    m_client->send(request, this, [done = std::move(done)](const Kube::ApiResult &result) {
        // Gone already is what was wanted.
        if (!result.ok() && result.status != 404) {
            done(result.error->toError());
            return;
        }
        done({});
    });
}

void PlaygroundClient::diagnose(const QString &name, const Cluster::CapacityModel *capacity, const QString &seriesLabel,
                                std::function<void(Result<Cluster::Diagnosis>)> done)
{
    Kube::ApiRequest get;
    get.path = Kube::ResourceKind::pods().path(m_ns, name);
    get.what = Text::tr("read the playground pod %1").arg(name);
    m_client->send(get, this, [this, name, capacity, seriesLabel, done = std::move(done)](const Kube::ApiResult &pod) mutable {
        if (!pod.ok()) {
            done(pod.error->toError());
            return;
        }
        Kube::ApiRequest events;
        events.path = Kube::ResourceKind::events().path(m_ns);
        events.query.addQueryItem(QStringLiteral("fieldSelector"), QStringLiteral("involvedObject.name=%1").arg(name));
        events.what = Text::tr("read the events of %1").arg(name);
        const QJsonObject object = pod.json();
        m_client->send(events, this, [object, capacity, seriesLabel, done = std::move(done)](const Kube::ApiResult &listed) {
            Cluster::DiagnosisInput input;
            input.pods.append(Cluster::PodInfo::fromJson(object));
            input.capacity = capacity;
            input.seriesLabel = seriesLabel;
            // Without its events the pod's own status still says a good deal.
            if (listed.ok()) {
                for (const QJsonValue &e : listed.json().value(QStringLiteral("items")).toArray()) input.events.append(Kube::Event::fromJson(e.toObject()));
            }
            done(Cluster::diagnose(input));
        });
    });
}

void PlaygroundClient::reap(const QDateTime &now, std::function<void(Result<QStringList>)> done)
{
    list([this, now, done = std::move(done)](Result<QList<PlaygroundInstance>> listed) mutable {
        if (!listed) {
            done(listed.error());
            return;
        }
        QList<PlaygroundInstance> due;
        for (const PlaygroundInstance &instance : *listed) {
            if (instance.ended() || instance.expired(now)) due.append(instance);
        }
        if (due.isEmpty()) {
            done(QStringList());
            return;
        }
        struct Pending
        {
            int left = 0;
            QStringList reaped;
            std::optional<Error> error;
            std::function<void(Result<QStringList>)> done;
        };
        auto pending = std::make_shared<Pending>();
        pending->left = int(due.size());
        pending->done = std::move(done);
        for (const PlaygroundInstance &instance : due) {
            remove(instance, [pending, name = instance.name](Result<void> removed) {
                if (removed) pending->reaped << name;
                else if (!pending->error) pending->error = removed.error();
                if (--pending->left > 0) return;
                if (pending->error) pending->done(*pending->error);
                else pending->done(pending->reaped);
            });
        }
    });
}

} // namespace Starforge::Playground
