#include "sandbox/cluster/kubelet.h"

#include "sandbox/api/status.h"
#include "sandbox/cluster/podproxy.h"
#include "sandbox/cluster/eventrecorder.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTimer>
#include <QUrl>

Q_LOGGING_CATEGORY(lcKubelet, "starforge.sandbox.kubelet")

namespace Starforge::Sandbox {

namespace {

const ResourceType &podType()
{
    return *ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("pods"));
}

QString rfc3339(const QDateTime &t)
{
    return t.toUTC().toString(Qt::ISODate);
}

QString rfc3339Nano(const QDateTime &t)
{
    return t.toUTC().toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss.zzz000000Z"));
}

QString quoted(const QString &s)
{
    return u'"' + s + u'"';
}

const ResourceType &secretType()
{
    return *ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("secrets"));
}

// "host/path/name:tag" or "…@sha256:…" → "host/path/name".
QString repositoryOf(const QString &ref)
{
    QString repository = ref;
    if (const qsizetype at = repository.indexOf(u'@'); at >= 0) {
        repository.truncate(at);
    } else if (const qsizetype colon = repository.lastIndexOf(u':'); colon > repository.lastIndexOf(u'/')) {
        repository.truncate(colon);
    }
    return repository;
}

// A docker config "auths" key against a repository ("host/path/name"), as the kubelet's keyring
// matches them: the scheme and a /v1/ or /v2/ path prefix dropped, the host equal part by part
// (a part may be a glob such as "*"), the port equal, and the key's path a prefix of the
// repository's path.
bool authsKeyMatches(const QString &key, const QString &repository)
{
    QString k = key;
    for (const char *scheme : {"https://", "http://"}) {
        if (k.startsWith(QLatin1String(scheme))) k = k.mid(qstrlen(scheme));
    }
    const qsizetype slash = k.indexOf(u'/');
    const QString keyHost = slash < 0 ? k : k.left(slash);
    QString keyPath = slash < 0 ? QString() : k.mid(slash);
    if (keyPath.startsWith(QLatin1String("/v1/")) || keyPath.startsWith(QLatin1String("/v2/"))) keyPath = keyPath.mid(3);
    if (keyPath == QLatin1String("/")) keyPath.clear();
    const QString host = repository.section(u'/', 0, 0);
    const QString path = repository.mid(host.size());
    if (!path.startsWith(keyPath) || keyHost.section(u':', 1) != host.section(u':', 1)) {
        return false;
    }
    const QStringList globParts = keyHost.section(u':', 0, 0).toLower().split(u'.');
    const QStringList parts = host.section(u':', 0, 0).toLower().split(u'.');
    if (globParts.size() != parts.size()) {
        return false;
    }
    for (qsizetype i = 0; i < parts.size(); ++i) {
        const QRegularExpression glob(QRegularExpression::anchoredPattern(
            QRegularExpression::wildcardToRegularExpression(globParts[i], QRegularExpression::UnanchoredWildcardConversion)));
        if (!glob.match(parts[i]).hasMatch()) return false;
    }
    return true;
}

struct Follower
{
    QPointer<Http::Responder> responder;
    bool timestamps = false;
    qint64 remaining = -1; // limitBytes left, -1 unlimited
};

} // namespace

struct Kubelet::Container
{
    QString name;
    bool init = false;
    QJsonObject spec;
    enum class State { Waiting, Running, Terminated } state = State::Waiting;
    QString waitingReason;
    QString waitingMessage;
    int restarts = 0;
    int runs = 0; // process starts so far; log file index
    QDateTime startedAt;
    QDateTime finishedAt;
    int exitCode = 0;
    QString terminatedReason;
    QString terminatedMessage;
    QJsonObject lastTerminated;
    bool pulled = false;
    int pullFailures = 0;
    bool restartPending = false;
    QProcess *process = nullptr;
    QByteArray partial[2];
    QList<Follower> followers;
    QString dir;

    QString image() const { return spec.value(QStringLiteral("image")).toString(); }
    QString logPath(int run) const { return dir + QStringLiteral("/%1.log").arg(run); }
};

struct Kubelet::Pod
{
    QString uid;
    QString ns;
    QString name;
    QString node;
    QJsonObject object;
    QString dir;
    std::vector<std::unique_ptr<Container>> inits;
    std::vector<std::unique_ptr<Container>> containers;
    std::size_t initIndex = 0;
    bool initsDone = false;
    bool containersStarted = false;
    QString failedReason;
    QString failedMessage;
    QDateTime startTime;
    QString ip; // each pod its own loopback address, so two pods can both listen on :8000
    std::unique_ptr<QObject> context = std::make_unique<QObject>(); // timers and processes die with it

    QString restartPolicy() const
    {
        return object.value(QStringLiteral("spec")).toObject().value(QStringLiteral("restartPolicy")).toString(QStringLiteral("Always"));
    }
    QString podRef() const { return QStringLiteral("%1_%2(%3)").arg(name, ns, uid); }
    Container *find(const QString &containerName) const
    {
        for (const auto &c : containers) {
            if (c->name == containerName) return c.get();
        }
        for (const auto &c : inits) {
            if (c->name == containerName) return c.get();
        }
        return nullptr;
    }
};

Kubelet::Kubelet(ObjectStore *store, EventRecorder *events, Options options, QObject *parent)
    : QObject(parent)
    , m_store(store)
    , m_events(events)
    , m_options(std::move(options))
{
    QDir().mkpath(m_options.stateDir);
    connect(store, &ObjectStore::changed, this, &Kubelet::onChange);
    // Pods bound before the kubelet started (none today, but a restart must not lose them).
    for (const ObjectPtr &pod : store->list(podType().storage)) {
        QTimer::singleShot(0, this, [this, ns = pod->ns, name = pod->name] { adopt(ns, name); });
    }
}

Kubelet::~Kubelet()
{
    const QStringList uids = m_pods.keys();
    for (const QString &uid : uids) {
        stopPod(uid, false);
    }
}

QString Kubelet::normalizeImage(const QString &image)
{
    QString name = image;
    QString digestOrTag;
    const qsizetype at = name.indexOf(u'@');
    if (at >= 0) {
        digestOrTag = name.mid(at);
        name.truncate(at);
    } else {
        const qsizetype colon = name.lastIndexOf(u':');
        if (colon > name.lastIndexOf(u'/')) {
            digestOrTag = name.mid(colon);
            name.truncate(colon);
        } else {
            digestOrTag = QStringLiteral(":latest");
        }
    }
    const QString first = name.section(u'/', 0, 0);
    const bool hasRegistry = name.contains(u'/') && (first.contains(u'.') || first.contains(u':') || first == QLatin1String("localhost"));
    if (!hasRegistry) {
        name = QStringLiteral("docker.io/") + (name.contains(u'/') ? name : QStringLiteral("library/") + name);
    }
    return name + digestOrTag;
}

Kubelet::Pod *Kubelet::podFor(const QString &ns, const QString &name)
{
    for (const auto &pod : std::as_const(m_pods)) {
        if (pod->ns == ns && pod->name == name) {
            return pod.get();
        }
    }
    return nullptr;
}

void Kubelet::onChange(const Change &change)
{
    if (change.storage != podType().storage) {
        return;
    }
    if (change.type == ChangeType::Deleted) {
        if (m_pods.contains(change.object->uid)) {
            stopPod(change.object->uid, true);
        }
        return;
    }
    if (!m_pods.contains(change.object->uid)
        && !change.object->object.value(QStringLiteral("spec")).toObject().value(QStringLiteral("nodeName")).toString().isEmpty()) {
        // Later, outside the store's signal: adopting writes the pod's status.
        QTimer::singleShot(0, this, [this, ns = change.object->ns, name = change.object->name] { adopt(ns, name); });
    }
}

void Kubelet::adopt(const QString &ns, const QString &name)
{
    const ObjectPtr object = m_store->get(podType().storage, ns, name);
    if (!object || m_pods.contains(object->uid)) {
        return;
    }
    const QJsonObject spec = object->object.value(QStringLiteral("spec")).toObject();
    const QString node = spec.value(QStringLiteral("nodeName")).toString();
    const QString phase = object->object.value(QStringLiteral("status")).toObject().value(QStringLiteral("phase")).toString();
    if (node.isEmpty() || phase == QLatin1String("Running") || phase == QLatin1String("Succeeded") || phase == QLatin1String("Failed")) {
        return; // unbound, or a pod whose status someone else owns (the fleet's background pods)
    }
    auto pod = std::make_shared<Pod>();
    pod->uid = object->uid;
    pod->ns = ns;
    pod->name = name;
    pod->node = node;
    pod->object = object->object;
    pod->dir = m_options.stateDir + QStringLiteral("/pods/") + pod->uid;
    pod->startTime = QDateTime::currentDateTimeUtc();
    ++m_nextPodIp;
    pod->ip = QStringLiteral("127.1.%1.%2").arg((m_nextPodIp / 250) % 250).arg(m_nextPodIp % 250 + 1);
    const auto makeContainers = [&](const QString &key, bool init, std::vector<std::unique_ptr<Container>> &into) {
        for (const QJsonValue &v : spec.value(key).toArray()) {
            auto c = std::make_unique<Container>();
            c->spec = v.toObject();
            c->name = c->spec.value(QStringLiteral("name")).toString();
            c->init = init;
            c->waitingReason = init || spec.value(QStringLiteral("initContainers")).toArray().isEmpty()
                ? QStringLiteral("ContainerCreating") : QStringLiteral("PodInitializing");
            if (init) {
                c->waitingReason = QStringLiteral("PodInitializing");
            }
            c->dir = pod->dir + QStringLiteral("/logs/") + c->name;
            QDir().mkpath(c->dir);
            into.push_back(std::move(c));
        }
    };
    makeContainers(QStringLiteral("initContainers"), true, pod->inits);
    makeContainers(QStringLiteral("containers"), false, pod->containers);
    QDir().mkpath(pod->dir + QStringLiteral("/root"));
    m_pods.insert(pod->uid, pod);

    if (const int deadline = spec.value(QStringLiteral("activeDeadlineSeconds")).toInt(); deadline > 0) {
        QTimer::singleShot(deadline * 1000, pod->context.get(), [this, uid = pod->uid] {
            if (const auto p = m_pods.value(uid)) {
                failPod(*p, QStringLiteral("DeadlineExceeded"),
                        QStringLiteral("Pod was active on the node longer than the specified deadline"));
            }
        });
    }
    syncStatus(*pod);
    advance(*pod);
}

void Kubelet::stopPod(const QString &uid, bool removeFiles)
{
    const auto pod = m_pods.take(uid);
    if (!pod) {
        return;
    }
    const auto release = [this](Container &c) {
        for (Follower &f : c.followers) {
            if (f.responder) {
                f.responder->end();
            }
        }
        c.followers.clear();
        if (QProcess *p = c.process) {
            c.process = nullptr;
            p->disconnect(this);
            p->setParent(this);
            // SIGTERM first, SIGKILL after the grace period, as a pod deletion does.
            connect(p, &QProcess::finished, p, &QObject::deleteLater);
            p->terminate();
            QTimer::singleShot(m_options.terminationGraceMs, p, &QProcess::kill);
        }
    };
    for (auto &c : pod->inits) release(*c);
    for (auto &c : pod->containers) release(*c);
    pod->context.reset();
    if (removeFiles) {
        QDir(pod->dir).removeRecursively();
    }
}

void Kubelet::advance(Pod &pod)
{
    if (!pod.failedReason.isEmpty()) {
        return;
    }
    if (!pod.initsDone) {
        if (pod.initIndex < pod.inits.size()) {
            Container &c = *pod.inits[pod.initIndex];
            if (c.state != Container::State::Running && !c.restartPending) {
                pull(pod, c);
            }
            return;
        }
        pod.initsDone = true;
    }
    if (!pod.containersStarted) {
        pod.containersStarted = true;
        for (auto &c : pod.containers) {
            pull(pod, *c);
        }
    }
}

void Kubelet::record(const Pod &pod, const QString &type, const QString &reason, const QString &message, const QString &fieldPath)
{
    if (const ObjectPtr object = m_store->get(podType().storage, pod.ns, pod.name)) {
        m_events->record(object->object, type, reason, message, QStringLiteral("kubelet"), EventRecorder::Api::Legacy, {}, pod.node, fieldPath);
    }
}

void Kubelet::pull(Pod &pod, Container &container)
{
    // The kubelet reads the pod's pull secrets on every sync and says which it could not get.
    if (const QStringList missing = missingPullSecrets(pod); !missing.isEmpty()) {
        record(pod, QStringLiteral("Warning"), QStringLiteral("FailedToRetrieveImagePullSecret"),
               QStringLiteral("Unable to retrieve some image pull secrets (%1); attempting to pull the image may not succeed.")
                   .arg(missing.join(QStringLiteral(", "))), {});
    }
    const QString image = container.image();
    const QString policy = container.spec.value(QStringLiteral("imagePullPolicy")).toString(
        image.endsWith(QLatin1String(":latest")) || !normalizeImage(image).section(u'/', -1).contains(u':') || !image.contains(u':')
            ? QStringLiteral("Always") : QStringLiteral("IfNotPresent"));
    const bool present = m_options.presentImages.contains(image) || m_options.presentImages.contains(normalizeImage(image));
    const QString field = QStringLiteral("spec.%1{%2}").arg(container.init ? QStringLiteral("initContainers") : QStringLiteral("containers"), container.name);
    if (present && policy != QLatin1String("Always")) {
        record(pod, QStringLiteral("Normal"), QStringLiteral("Pulled"),
               QStringLiteral("Container image %1 already present on machine").arg(quoted(image)), field);
        container.pulled = true;
        run(pod, container);
        return;
    }
    if (!present && policy == QLatin1String("Never")) {
        container.waitingReason = QStringLiteral("ErrImageNeverPull");
        container.waitingMessage = QStringLiteral("Container image %1 is not present with pull policy of Never").arg(quoted(image));
        record(pod, QStringLiteral("Warning"), QStringLiteral("ErrImageNeverPull"), container.waitingMessage, field);
        syncStatus(pod);
        return;
    }
    record(pod, QStringLiteral("Normal"), QStringLiteral("Pulling"), QStringLiteral("Pulling image %1").arg(quoted(image)), field);
    const QString ref = normalizeImage(image);
    const bool privateImage = isPrivate(ref);
    if (present || (privateImage && hasPullCredentials(pod, ref))) {
        record(pod, QStringLiteral("Normal"), QStringLiteral("Pulled"),
               QStringLiteral("Successfully pulled image %1 in 412ms (412ms including waiting). Image size: 52428800 bytes.").arg(quoted(image)), field);
        container.pulled = true;
        run(pod, container);
        return;
    }
    if (privateImage) {
        // The registry's 401 as containerd reports it: its bearer challenge sends containerd to
        // the token endpoint, which refuses an anonymous token (kubernetes-api.md §3.2).
        const QString host = ref.section(u'/', 0, 0);
        const QString repository = repositoryOf(ref).section(u'/', 1);
        const QString tokenUrl = QStringLiteral("https://%1/token?scope=%2&service=%3")
                                     .arg(host, QString::fromLatin1(QUrl::toPercentEncoding(QStringLiteral("repository:%1:pull").arg(repository))),
                                          QString::fromLatin1(QUrl::toPercentEncoding(host)));
        pullFailed(pod, container,
                   QStringLiteral("rpc error: code = Unknown desc = failed to pull and unpack image %1: failed to resolve reference %1: "
                                  "failed to authorize: failed to fetch anonymous token: unexpected status from GET request to %2: 401 Unauthorized")
                       .arg(quoted(ref), tokenUrl),
                   field);
        return;
    }
    pullFailed(pod, container,
               QStringLiteral("rpc error: code = NotFound desc = failed to pull and unpack image %1: failed to resolve reference %1: %2: not found")
                   .arg(quoted(ref), ref),
               field);
}

void Kubelet::pullFailed(Pod &pod, Container &container, const QString &error, const QString &field)
{
    const QString image = container.image();
    record(pod, QStringLiteral("Warning"), QStringLiteral("Failed"), QStringLiteral("Failed to pull image %1: %2").arg(quoted(image), error), field);
    record(pod, QStringLiteral("Warning"), QStringLiteral("Failed"), QStringLiteral("Error: ErrImagePull"), field);
    container.waitingReason = QStringLiteral("ErrImagePull");
    container.waitingMessage = error;
    ++container.pullFailures;
    syncStatus(pod);
    // Then the back-off, doubling up to five minutes, with a new pull attempt after each.
    const int backoff = std::min(m_options.imagePullBackoffMs << std::min(container.pullFailures - 1, 5), 300000);
    QTimer::singleShot(std::min(1000, backoff / 2), pod.context.get(), [this, uid = pod.uid, c = &container, image, field] {
        const auto p = m_pods.value(uid);
        if (!p) return;
        c->waitingReason = QStringLiteral("ImagePullBackOff");
        c->waitingMessage = QStringLiteral("Back-off pulling image %1").arg(quoted(image));
        record(*p, QStringLiteral("Normal"), QStringLiteral("BackOff"), c->waitingMessage, field);
        record(*p, QStringLiteral("Warning"), QStringLiteral("Failed"), QStringLiteral("Error: ImagePullBackOff"), field);
        syncStatus(*p);
    });
    QTimer::singleShot(backoff, pod.context.get(), [this, uid = pod.uid, c = &container] {
        if (const auto p = m_pods.value(uid)) {
            pull(*p, *c);
        }
    });
}

bool Kubelet::isPrivate(const QString &ref) const
{
    return !m_options.privateRegistry.isEmpty() && ref.startsWith(m_options.privateRegistry);
}

QStringList Kubelet::missingPullSecrets(const Pod &pod) const
{
    QStringList missing;
    for (const QJsonValue &v : pod.object.value(QStringLiteral("spec")).toObject().value(QStringLiteral("imagePullSecrets")).toArray()) {
        const QString name = v.toObject().value(QStringLiteral("name")).toString();
        if (!name.isEmpty() && !m_store->get(secretType().storage, pod.ns, name)) {
            missing << name;
        }
    }
    return missing;
}

bool Kubelet::hasPullCredentials(const Pod &pod, const QString &ref) const
{
    // The kubelet looks credentials up for the repository: the reference without tag or digest.
    const QString repository = repositoryOf(ref);
    for (const QJsonValue &v : pod.object.value(QStringLiteral("spec")).toObject().value(QStringLiteral("imagePullSecrets")).toArray()) {
        const ObjectPtr secret = m_store->get(secretType().storage, pod.ns, v.toObject().value(QStringLiteral("name")).toString());
        // Only kubernetes.io/dockerconfigjson Secrets with a .dockerconfigjson key count.
        if (!secret || secret->object.value(QStringLiteral("type")).toString() != QLatin1String("kubernetes.io/dockerconfigjson")) {
            continue;
        }
        const QByteArray config = QByteArray::fromBase64(
            secret->object.value(QStringLiteral("data")).toObject().value(QStringLiteral(".dockerconfigjson")).toString().toLatin1());
        const QJsonObject auths = QJsonDocument::fromJson(config).object().value(QStringLiteral("auths")).toObject();
        for (auto it = auths.begin(); it != auths.end(); ++it) {
            const QJsonObject entry = it.value().toObject();
            QString username = entry.value(QStringLiteral("username")).toString();
            QString password = entry.value(QStringLiteral("password")).toString();
            if (const QString auth = entry.value(QStringLiteral("auth")).toString(); !auth.isEmpty()) {
                const QString decoded = QString::fromUtf8(QByteArray::fromBase64(auth.toLatin1()));
                username = decoded.section(u':', 0, 0);
                password = decoded.section(u':', 1);
            }
            if (!username.isEmpty() && !password.isEmpty() && authsKeyMatches(it.key(), repository)) {
                return true; // the sandbox's registry takes any user name and password
            }
        }
    }
    return false;
}

void Kubelet::run(Pod &pod, Container &container)
{
    const QString field = QStringLiteral("spec.%1{%2}").arg(container.init ? QStringLiteral("initContainers") : QStringLiteral("containers"), container.name);
    QStringList command;
    for (const QJsonValue &v : container.spec.value(QStringLiteral("command")).toArray()) command << v.toString();
    QStringList args;
    for (const QJsonValue &v : container.spec.value(QStringLiteral("args")).toArray()) args << v.toString();
    // Without a command the image's entrypoint runs: `vllm serve` for vLLM images, which the
    // sandbox knows; for any other image an idle process stands in.
    const bool vllm = command.isEmpty() && m_options.vllmImages.contains(container.image());
    const bool standIn = command.isEmpty() && !vllm;
    QString program = vllm ? QStringLiteral("vllm") : standIn ? QStringLiteral("sleep") : command.first();
    QStringList arguments = vllm ? QStringList{QStringLiteral("serve")} + args
                          : standIn ? QStringList{QStringLiteral("infinity")} : command.mid(1) + args;

    // Environment: the container's own, with the downward-API fields the sandbox knows.
    QProcessEnvironment env;
    const QString hostPath = qEnvironmentVariable("PATH", QStringLiteral("/usr/local/bin:/usr/bin:/bin"));
    env.insert(QStringLiteral("PATH"), m_options.toolsDir.isEmpty() ? hostPath : m_options.toolsDir + u':' + hostPath);
    env.insert(QStringLiteral("STARFORGE_SANDBOX_RAY_STATE"), m_options.stateDir + QStringLiteral("/ray"));
    // The Ray stand-in names a head by namespace and cluster, as the head Service's DNS name does.
    env.insert(QStringLiteral("STARFORGE_SANDBOX_POD_NAMESPACE"), pod.ns);
    if (!m_options.caFile.isEmpty()) {
        env.insert(QStringLiteral("STARFORGE_SANDBOX_CA"), m_options.caFile);
    }
    env.insert(QStringLiteral("HOME"), pod.dir + QStringLiteral("/root"));
    env.insert(QStringLiteral("HOSTNAME"), pod.name);
    env.insert(QStringLiteral("POD_IP"), pod.ip);
    env.insert(QStringLiteral("STARFORGE_SANDBOX_TOKEN_RATE"), QString::number(m_options.tokenRate));
    for (const QJsonValue &v : container.spec.value(QStringLiteral("env")).toArray()) {
        const QJsonObject e = v.toObject();
        const QString key = e.value(QStringLiteral("name")).toString();
        if (e.contains(QStringLiteral("value"))) {
            env.insert(key, e.value(QStringLiteral("value")).toString());
            continue;
        }
        const QJsonObject from = e.value(QStringLiteral("valueFrom")).toObject();
        const QString fieldRef = from.value(QStringLiteral("fieldRef")).toObject().value(QStringLiteral("fieldPath")).toString();
        if (fieldRef == QLatin1String("metadata.name")) env.insert(key, pod.name);
        else if (fieldRef == QLatin1String("metadata.namespace")) env.insert(key, pod.ns);
        else if (fieldRef == QLatin1String("metadata.uid")) env.insert(key, pod.uid);
        else if (fieldRef == QLatin1String("spec.nodeName")) env.insert(key, pod.node);
        else if (fieldRef == QLatin1String("status.podIP")) env.insert(key, pod.ip);
        else if (fieldRef == QLatin1String("status.hostIP")) env.insert(key, QStringLiteral("127.0.0.1"));
        // The kubelet's own errors for what it cannot resolve: CreateContainerConfigError.
        QString configError;
        if (const QJsonObject keyRef = from.value(QStringLiteral("secretKeyRef")).toObject(); !keyRef.isEmpty()) {
            const bool optional = keyRef.value(QStringLiteral("optional")).toBool();
            const QString name = keyRef.value(QStringLiteral("name")).toString();
            const QString dataKey = keyRef.value(QStringLiteral("key")).toString();
            const ObjectPtr secret = m_store->get(secretType().storage, pod.ns, name);
            const QJsonObject data = secret ? secret->object.value(QStringLiteral("data")).toObject() : QJsonObject();
            if (!secret) {
                if (!optional) configError = QStringLiteral("secret %1 not found").arg(quoted(name));
            } else if (!data.contains(dataKey)) {
                if (!optional) configError = QStringLiteral("couldn't find key %1 in Secret %2/%3").arg(dataKey, pod.ns, name);
            } else {
                env.insert(key, QString::fromUtf8(QByteArray::fromBase64(data.value(dataKey).toString().toLatin1())));
            }
        }
        if (const QJsonObject keyRef = from.value(QStringLiteral("configMapKeyRef")).toObject();
            !keyRef.isEmpty() && !keyRef.value(QStringLiteral("optional")).toBool()) {
            // The sandbox serves no ConfigMaps.
            configError = QStringLiteral("configmap %1 not found").arg(quoted(keyRef.value(QStringLiteral("name")).toString()));
        }
        if (!configError.isEmpty()) {
            container.waitingReason = QStringLiteral("CreateContainerConfigError");
            container.waitingMessage = configError;
            record(pod, QStringLiteral("Warning"), QStringLiteral("Failed"), QStringLiteral("Error: ") + container.waitingMessage, field);
            syncStatus(pod);
            // The pod worker syncs again after its back-off (10 s): a Secret created meanwhile is used.
            QTimer::singleShot(m_options.crashLoopBackoffMs, pod.context.get(), [this, uid = pod.uid, c = &container] {
                if (const auto p = m_pods.value(uid); p && p->failedReason.isEmpty() && c->waitingReason == QLatin1String("CreateContainerConfigError")) {
                    run(*p, *c);
                }
            });
            return;
        }
    }
    QString workDir = pod.dir + QStringLiteral("/root");
    if (const QString wd = container.spec.value(QStringLiteral("workingDir")).toString(); !wd.isEmpty()) {
        workDir += QDir::cleanPath(u'/' + wd);
        QDir().mkpath(workDir);
    }

    const QString resolved = program.contains(u'/') ? program : QStandardPaths::findExecutable(program, {env.value(QStringLiteral("PATH")).split(u':')});
    if (resolved.isEmpty() || !QFileInfo(resolved).isExecutable()) {
        const QString message = QStringLiteral("failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: "
                                               "unable to start container process: exec: %1: executable file not found in $PATH: unknown").arg(quoted(program));
        container.startedAt = container.finishedAt = QDateTime::currentDateTimeUtc();
        record(pod, QStringLiteral("Normal"), QStringLiteral("Created"), QStringLiteral("Created container: %1").arg(container.name), field);
        record(pod, QStringLiteral("Warning"), QStringLiteral("Failed"), QStringLiteral("Error: ") + message, field);
        container.terminatedReason = QStringLiteral("StartError");
        container.terminatedMessage = message;
        ++container.runs;
        onExit(pod.uid, &container, 128);
        return;
    }

    auto *process = new QProcess(pod.context.get());
    process->setProcessEnvironment(env);
    process->setWorkingDirectory(workDir);
    process->setProgram(resolved);
    process->setArguments(arguments);
    container.process = process;
    container.state = Container::State::Running;
    container.restartPending = false;
    container.startedAt = QDateTime::currentDateTimeUtc();
    container.waitingReason.clear();
    container.waitingMessage.clear();
    container.terminatedReason.clear();
    container.terminatedMessage.clear();
    ++container.runs;
    QFile::remove(container.logPath(container.runs));
    const QString uid = pod.uid;
    Container *c = &container;
    connect(process, &QProcess::readyReadStandardOutput, this, [this, uid, c, process] {
        if (m_pods.contains(uid)) appendOutput(*c, process->readAllStandardOutput(), "stdout", false);
    });
    connect(process, &QProcess::readyReadStandardError, this, [this, uid, c, process] {
        if (m_pods.contains(uid)) appendOutput(*c, process->readAllStandardError(), "stderr", false);
    });
    connect(process, &QProcess::finished, this, [this, uid, c, process](int code, QProcess::ExitStatus status) {
        if (m_pods.contains(uid)) {
            appendOutput(*c, process->readAllStandardOutput(), "stdout", true);
            appendOutput(*c, process->readAllStandardError(), "stderr", true);
        }
        c->process = nullptr;
        process->deleteLater();
        // A signal death is 128 + signal, as a container runtime reports it.
        onExit(uid, c, status == QProcess::CrashExit ? 137 : code);
    });
    connect(process, &QProcess::errorOccurred, this, [this, uid, c, process](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) {
            c->process = nullptr;
            process->deleteLater();
            c->terminatedReason = QStringLiteral("StartError");
            c->terminatedMessage = process->errorString();
            onExit(uid, c, 128);
        }
    });
    record(pod, QStringLiteral("Normal"), QStringLiteral("Created"), QStringLiteral("Created container: %1").arg(container.name), field);
    record(pod, QStringLiteral("Normal"), QStringLiteral("Started"), QStringLiteral("Started container %1").arg(container.name), field);
    process->start();
    syncStatus(pod);
}

void Kubelet::appendOutput(Container &container, const QByteArray &data, const char *stream, bool flush)
{
    const int which = qstrcmp(stream, "stdout") == 0 ? 0 : 1;
    QByteArray &partial = container.partial[which];
    partial += data;
    QFile log(container.logPath(container.runs));
    if (!log.open(QIODevice::Append)) {
        return;
    }
    const auto emitLine = [&](const QByteArray &line) {
        const QString ts = rfc3339Nano(QDateTime::currentDateTimeUtc());
        log.write(ts.toLatin1() + ' ' + stream + " F " + line + '\n');
        for (Follower &f : container.followers) {
            if (!f.responder || f.remaining == 0) continue;
            QByteArray out = (f.timestamps ? ts.toLatin1() + ' ' : QByteArray()) + line + '\n';
            if (f.remaining > 0) {
                out.truncate(std::min<qint64>(out.size(), f.remaining));
                f.remaining -= out.size();
            }
            f.responder->write(out);
            if (f.remaining == 0) {
                f.responder->end();
            }
        }
    };
    qsizetype nl;
    while ((nl = partial.indexOf('\n')) >= 0) {
        emitLine(partial.left(nl));
        partial.remove(0, nl + 1);
    }
    if (flush && !partial.isEmpty()) {
        emitLine(partial);
        partial.clear();
    }
}

void Kubelet::onExit(const QString &uid, Container *container, int exitCode)
{
    const auto pod = m_pods.value(uid);
    if (!pod) {
        return;
    }
    Container &c = *container;
    c.state = Container::State::Terminated;
    c.exitCode = exitCode;
    c.finishedAt = QDateTime::currentDateTimeUtc();
    if (c.terminatedReason.isEmpty()) {
        c.terminatedReason = exitCode == 0 ? QStringLiteral("Completed") : QStringLiteral("Error");
    }
    for (Follower &f : c.followers) {
        if (f.responder) f.responder->end();
    }
    c.followers.clear();
    const QString policy = pod->restartPolicy();
    if (c.init) {
        if (exitCode == 0) {
            ++pod->initIndex;
            syncStatus(*pod);
            advance(*pod);
            return;
        }
        if (policy == QLatin1String("Never")) {
            pod->failedReason = QStringLiteral("Init:Error");
            syncStatus(*pod);
            return;
        }
    }
    const bool restart = policy == QLatin1String("Always") || (policy == QLatin1String("OnFailure") && exitCode != 0);
    if (!restart) {
        syncStatus(*pod);
        return;
    }
    // CrashLoopBackOff: 10 s doubling to five minutes.
    const int delay = std::min(m_options.crashLoopBackoffMs << std::min(c.restarts, 5), 300000);
    c.restartPending = true;
    c.lastTerminated = QJsonObject{{QStringLiteral("terminated"),
                                    QJsonObject{{QStringLiteral("exitCode"), exitCode}, {QStringLiteral("reason"), c.terminatedReason},
                                                {QStringLiteral("startedAt"), rfc3339(c.startedAt)}, {QStringLiteral("finishedAt"), rfc3339(c.finishedAt)},
                                                {QStringLiteral("containerID"), QStringLiteral("containerd://%1").arg(QString::fromLatin1(
                                                    QCryptographicHash::hash((uid + c.name + QString::number(c.runs)).toUtf8(), QCryptographicHash::Sha256).toHex()))}}}};
    ++c.restarts;
    const QString field = QStringLiteral("spec.%1{%2}").arg(c.init ? QStringLiteral("initContainers") : QStringLiteral("containers"), c.name);
    c.state = Container::State::Waiting;
    c.waitingReason = QStringLiteral("CrashLoopBackOff");
    const QString delayText = delay % 60000 == 0 ? QStringLiteral("%1m0s").arg(delay / 60000)
                            : delay >= 60000 ? QStringLiteral("%1m%2s").arg(delay / 60000).arg((delay % 60000) / 1000)
                                             : QStringLiteral("%1s").arg(delay / 1000);
    c.waitingMessage = QStringLiteral("back-off %1 restarting failed container=%2 pod=%3").arg(delayText, c.name, pod->podRef());
    record(*pod, QStringLiteral("Warning"), QStringLiteral("BackOff"),
           QStringLiteral("Back-off restarting failed container %1 in pod %2").arg(c.name, pod->podRef()), field);
    syncStatus(*pod);
    QTimer::singleShot(delay, pod->context.get(), [this, uid, container] {
        if (const auto p = m_pods.value(uid)) {
            run(*p, *container);
        }
    });
}

void Kubelet::failPod(Pod &pod, const QString &reason, const QString &message)
{
    pod.failedReason = reason;
    pod.failedMessage = message;
    record(pod, QStringLiteral("Normal"), reason, message, {});
    for (auto *list : {&pod.inits, &pod.containers}) {
        for (auto &c : *list) {
            if (QProcess *p = c->process) {
                p->terminate();
                QTimer::singleShot(m_options.terminationGraceMs, p, &QProcess::kill);
            }
            c->restartPending = false;
        }
    }
    syncStatus(pod);
}

void Kubelet::syncStatus(Pod &pod)
{
    const QString now = rfc3339(QDateTime::currentDateTimeUtc());
    const auto statusOf = [&](const Container &c) {
        QJsonObject state;
        if (c.state == Container::State::Running) {
            state.insert(QStringLiteral("running"), QJsonObject{{QStringLiteral("startedAt"), rfc3339(c.startedAt)}});
        } else if (c.state == Container::State::Terminated) {
            QJsonObject t{{QStringLiteral("exitCode"), c.exitCode}, {QStringLiteral("reason"), c.terminatedReason},
                          {QStringLiteral("startedAt"), rfc3339(c.startedAt)}, {QStringLiteral("finishedAt"), rfc3339(c.finishedAt)}};
            if (!c.terminatedMessage.isEmpty()) t.insert(QStringLiteral("message"), c.terminatedMessage);
            state.insert(QStringLiteral("terminated"), t);
        } else {
            QJsonObject w{{QStringLiteral("reason"), c.waitingReason}};
            if (!c.waitingMessage.isEmpty()) w.insert(QStringLiteral("message"), c.waitingMessage);
            state.insert(QStringLiteral("waiting"), w);
        }
        QJsonObject s{{QStringLiteral("name"), c.name}, {QStringLiteral("image"), c.image()},
                      {QStringLiteral("imageID"), c.pulled ? QStringLiteral("%1@sha256:%2").arg(normalizeImage(c.image()).section(u':', 0, -2),
                           QString::fromLatin1(QCryptographicHash::hash(c.image().toUtf8(), QCryptographicHash::Sha256).toHex())) : QString()},
                      {QStringLiteral("ready"), c.state == Container::State::Running && !c.init},
                      {QStringLiteral("restartCount"), c.restarts},
                      {QStringLiteral("started"), c.state == Container::State::Running},
                      {QStringLiteral("state"), state},
                      {QStringLiteral("lastState"), c.lastTerminated}};
        if (c.runs > 0) {
            s.insert(QStringLiteral("containerID"), QStringLiteral("containerd://%1").arg(QString::fromLatin1(
                QCryptographicHash::hash((pod.uid + c.name + QString::number(c.runs)).toUtf8(), QCryptographicHash::Sha256).toHex())));
        }
        return s;
    };
    QJsonArray initStatuses;
    for (const auto &c : pod.inits) initStatuses.append(statusOf(*c));
    QJsonArray statuses;
    bool anyRunning = false;
    bool allTerminated = !pod.containers.empty();
    bool anyFailed = false;
    bool allReady = !pod.containers.empty();
    bool restarting = false;
    for (const auto &c : pod.containers) {
        statuses.append(statusOf(*c));
        anyRunning = anyRunning || c->state == Container::State::Running;
        allTerminated = allTerminated && c->state == Container::State::Terminated && !c->restartPending;
        anyFailed = anyFailed || (c->state == Container::State::Terminated && c->exitCode != 0);
        allReady = allReady && c->state == Container::State::Running;
        restarting = restarting || c->restartPending;
    }
    QString phase = QStringLiteral("Pending");
    if (!pod.failedReason.isEmpty()) {
        phase = QStringLiteral("Failed");
    } else if (pod.initsDone && allTerminated) {
        phase = anyFailed ? QStringLiteral("Failed") : QStringLiteral("Succeeded");
    } else if (pod.initsDone && (anyRunning || restarting)) {
        phase = QStringLiteral("Running");
    }
    const bool initialized = pod.initIndex >= pod.inits.size();
    const auto cond = [&](const QString &type, bool value, const QString &reason = {}) {
        QJsonObject c{{QStringLiteral("type"), type}, {QStringLiteral("status"), value ? QStringLiteral("True") : QStringLiteral("False")},
                      {QStringLiteral("lastProbeTime"), QJsonValue::Null}, {QStringLiteral("lastTransitionTime"), now}};
        if (!reason.isEmpty() && !value) c.insert(QStringLiteral("reason"), reason);
        return c;
    };
    const bool ready = allReady && phase == QLatin1String("Running");
    const bool deadline = pod.failedReason == QLatin1String("DeadlineExceeded");
    m_store->modify(podType(), pod.ns, pod.name, [&](QJsonObject &p) {
        QJsonObject status = p.value(QStringLiteral("status")).toObject();
        const QJsonArray old = status.value(QStringLiteral("conditions")).toArray();
        QJsonArray conditions;
        QJsonObject scheduled;
        for (const QJsonValue &c : old) {
            if (c.toObject().value(QStringLiteral("type")).toString() == QLatin1String("PodScheduled")) scheduled = c.toObject();
        }
        const QJsonArray fresh{cond(QStringLiteral("PodReadyToStartContainers"), true),
                               cond(QStringLiteral("Initialized"), initialized, QStringLiteral("ContainersNotInitialized")),
                               cond(QStringLiteral("Ready"), ready, phase == QLatin1String("Succeeded") || phase == QLatin1String("Failed") ? QStringLiteral("PodCompleted") : QStringLiteral("ContainersNotReady")),
                               cond(QStringLiteral("ContainersReady"), ready, phase == QLatin1String("Succeeded") || phase == QLatin1String("Failed") ? QStringLiteral("PodCompleted") : QStringLiteral("ContainersNotReady"))};
        // Keep transition times of conditions whose status did not change.
        for (const QJsonValue &f : fresh) {
            QJsonObject c = f.toObject();
            for (const QJsonValue &o : old) {
                const QJsonObject oc = o.toObject();
                if (oc.value(QStringLiteral("type")) == c.value(QStringLiteral("type")) && oc.value(QStringLiteral("status")) == c.value(QStringLiteral("status"))) {
                    c.insert(QStringLiteral("lastTransitionTime"), oc.value(QStringLiteral("lastTransitionTime")));
                }
            }
            conditions.append(c);
        }
        if (!scheduled.isEmpty()) conditions.append(scheduled);
        status.insert(QStringLiteral("conditions"), conditions);
        status.insert(QStringLiteral("phase"), phase);
        status.insert(QStringLiteral("hostIP"), QStringLiteral("127.0.0.1"));
        status.insert(QStringLiteral("hostIPs"), QJsonArray{QJsonObject{{QStringLiteral("ip"), QStringLiteral("127.0.0.1")}}});
        status.insert(QStringLiteral("podIP"), pod.ip);
        status.insert(QStringLiteral("podIPs"), QJsonArray{QJsonObject{{QStringLiteral("ip"), pod.ip}}});
        status.insert(QStringLiteral("startTime"), rfc3339(pod.startTime));
        status.insert(QStringLiteral("containerStatuses"), statuses);
        if (!pod.inits.empty()) status.insert(QStringLiteral("initContainerStatuses"), initStatuses);
        status.insert(QStringLiteral("qosClass"), QStringLiteral("BestEffort"));
        if (deadline) {
            status.insert(QStringLiteral("reason"), pod.failedReason);
            status.insert(QStringLiteral("message"), pod.failedMessage);
        }
        p.insert(QStringLiteral("status"), status);
        return true;
    });
}

void Kubelet::serveLogs(const RequestInfo &info, const Http::Request &request, Http::Responder *responder)
{
    const ObjectPtr object = m_store->get(podType().storage, info.ns, info.name);
    if (!object) {
        ApiServer::respondStatus(responder, Status::notFound(QStringLiteral("pods"), info.name, QString(), QStringLiteral("pods")));
        return;
    }
    const QJsonObject spec = object->object.value(QStringLiteral("spec")).toObject();
    QStringList names;
    for (const QJsonValue &c : spec.value(QStringLiteral("containers")).toArray()) names << c.toObject().value(QStringLiteral("name")).toString();
    QStringList initNames;
    for (const QJsonValue &c : spec.value(QStringLiteral("initContainers")).toArray()) initNames << c.toObject().value(QStringLiteral("name")).toString();
    QString containerName = request.queryValue(QStringLiteral("container"));
    const auto bad = [&](const QString &message) { ApiServer::respondStatus(responder, Status::badRequest(message)); };
    if (containerName.isEmpty()) {
        if (names.size() != 1) {
            QString message = QStringLiteral("a container name must be specified for pod %1, choose one of: [%2]").arg(info.name, names.join(u' '));
            if (!initNames.isEmpty()) message += QStringLiteral(" or one of the init containers: [%1]").arg(initNames.join(u' '));
            bad(message);
            return;
        }
        containerName = names.first();
    }
    if (!names.contains(containerName) && !initNames.contains(containerName)) {
        bad(QStringLiteral("container %1 is not valid for pod %2").arg(containerName, info.name));
        return;
    }
    bool ok = true;
    const auto intParam = [&](const QString &key, qint64 min, const QString &rule) -> std::optional<qint64> {
        const QString v = request.queryValue(key);
        if (v.isEmpty()) return std::nullopt;
        bool parsed = false;
        const qint64 n = v.toLongLong(&parsed);
        if (!parsed || n < min) {
            bad(QStringLiteral("PodLogOptions \"%1\" is invalid: %2: Invalid value: %3: %4").arg(info.name, key, v, rule));
            ok = false;
        }
        return n;
    };
    const auto tailLines = intParam(QStringLiteral("tailLines"), 0, QStringLiteral("must be greater than or equal to 0"));
    if (!ok) return;
    const auto limitBytes = intParam(QStringLiteral("limitBytes"), 1, QStringLiteral("must be greater than 0"));
    if (!ok) return;
    const auto sinceSeconds = intParam(QStringLiteral("sinceSeconds"), 1, QStringLiteral("must be greater than 0"));
    if (!ok) return;
    const QString sinceTimeText = request.queryValue(QStringLiteral("sinceTime"));
    if (sinceSeconds && !sinceTimeText.isEmpty()) {
        bad(QStringLiteral("PodLogOptions \"%1\" is invalid: : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified").arg(info.name));
        return;
    }
    const bool follow = request.queryValue(QStringLiteral("follow")) == QLatin1String("true") || request.queryValue(QStringLiteral("follow")) == QLatin1String("1");
    const bool timestamps = request.queryValue(QStringLiteral("timestamps")) == QLatin1String("true") || request.queryValue(QStringLiteral("timestamps")) == QLatin1String("1");
    const bool previous = request.queryValue(QStringLiteral("previous")) == QLatin1String("true") || request.queryValue(QStringLiteral("previous")) == QLatin1String("1");

    if (spec.value(QStringLiteral("nodeName")).toString().isEmpty()) {
        bad(QStringLiteral("pod %1 does not have a host assigned").arg(info.name));
        return;
    }
    Pod *pod = podFor(info.ns, info.name);
    Container *c = pod ? pod->find(containerName) : nullptr;
    const QString quotedContainer = quoted(containerName);
    const QString quotedPod = quoted(info.name);
    if (!c || c->runs == 0) {
        const QString reason = c ? c->waitingReason : QStringLiteral("ContainerCreating");
        const QString why = reason == QLatin1String("ErrImagePull") ? QStringLiteral("image can't be pulled")
                          : reason == QLatin1String("ImagePullBackOff") ? QStringLiteral("trying and failing to pull image")
                                                                         : reason;
        bad(QStringLiteral("container %1 in pod %2 is waiting to start: %3").arg(quotedContainer, quotedPod, why));
        return;
    }
    int run = c->runs;
    if (previous) {
        // The last terminated instance: the latest run while a restart is pending, else the one before.
        const int last = c->restartPending ? c->runs : c->runs - 1;
        if (c->restarts == 0 || last < 1) {
            bad(QStringLiteral("previous terminated container %1 in pod %2 not found").arg(quotedContainer, quotedPod));
            return;
        }
        run = last;
    }
    QFile log(c->logPath(run));
    QList<QByteArray> lines;
    if (log.open(QIODevice::ReadOnly)) {
        lines = log.readAll().split('\n');
        if (!lines.isEmpty() && lines.last().isEmpty()) lines.removeLast();
    }
    QDateTime since;
    if (sinceSeconds) since = QDateTime::currentDateTimeUtc().addSecs(-*sinceSeconds);
    if (!sinceTimeText.isEmpty()) {
        since = QDateTime::fromString(sinceTimeText, Qt::ISODateWithMs);
        if (!since.isValid()) since = QDateTime::fromString(sinceTimeText, Qt::ISODate);
    }
    QList<QByteArray> selected;
    for (const QByteArray &line : std::as_const(lines)) {
        // CRI format: "<RFC 3339 nano> <stream> <F|P> <text>".
        const QList<QByteArray> parts = line.split(' ');
        if (parts.size() < 3) continue;
        if (since.isValid()) {
            const QDateTime at = QDateTime::fromString(QString::fromLatin1(parts[0]).left(23) + u'Z', Qt::ISODateWithMs);
            if (at.isValid() && at < since) continue;
        }
        const qsizetype textStart = parts[0].size() + parts[1].size() + parts[2].size() + 3;
        const QByteArray text = line.mid(std::min(textStart, line.size()));
        selected << ((timestamps ? parts[0] + ' ' : QByteArray()) + text + '\n');
    }
    if (tailLines && selected.size() > *tailLines) selected = selected.mid(selected.size() - *tailLines);
    QByteArray body = selected.join();
    qint64 remaining = limitBytes.value_or(-1);
    if (remaining > 0 && body.size() > remaining) {
        body.truncate(remaining);
    }
    if (remaining > 0) remaining -= body.size();
    const bool live = !previous && c->state == Container::State::Running && c->runs == run;
    if (!follow || !live || remaining == 0) {
        responder->respond(200, "text/plain", body);
        return;
    }
    responder->beginStream(200, "text/plain");
    responder->write(body);
    c->followers.append(Follower{responder, timestamps, remaining});
}

void Kubelet::serveProxy(const RequestInfo &info, const Http::Request &request, Http::Responder *responder)
{
    // "name", "name:port" or "scheme:name:port", as the API server splits a proxy ID.
    const QStringList parts = info.name.split(u':');
    QString scheme;
    QString name;
    QString portText;
    if (parts.size() == 3) {
        scheme = parts[0]; name = parts[1]; portText = parts[2];
    } else if (parts.size() == 2) {
        name = parts[0]; portText = parts[1];
    } else {
        name = parts.value(0);
    }
    if (scheme == QLatin1String("https")) {
        ApiServer::respondStatus(responder, Status::badRequest(QStringLiteral("the sandbox proxies to pods over http only")));
        return;
    }
    const ObjectPtr object = m_store->get(podType().storage, info.ns, name);
    if (!object) {
        ApiServer::respondStatus(responder, Status::notFound(QStringLiteral("pods"), name, QString(), QStringLiteral("pods")));
        return;
    }
    const QJsonObject status = object->object.value(QStringLiteral("status")).toObject();
    const QString ip = status.value(QStringLiteral("podIP")).toString();
    if (ip.isEmpty()) {
        ApiServer::respondStatus(responder, Status::make(503, QStringLiteral("ServiceUnavailable"),
                                                         QStringLiteral("pod %1 has no IP address yet").arg(name)));
        return;
    }
    quint16 port = 80;
    if (!portText.isEmpty()) {
        bool ok = false;
        port = portText.toUShort(&ok);
        if (!ok) {
            // A named port: the first container port of that name.
            for (const QJsonValue &c : object->object.value(QStringLiteral("spec")).toObject().value(QStringLiteral("containers")).toArray()) {
                for (const QJsonValue &p : c.toObject().value(QStringLiteral("ports")).toArray()) {
                    if (p.toObject().value(QStringLiteral("name")).toString() == portText) {
                        port = static_cast<quint16>(p.toObject().value(QStringLiteral("containerPort")).toInt());
                        ok = true;
                    }
                }
            }
            if (!ok) {
                ApiServer::respondStatus(responder, Status::badRequest(QStringLiteral("no port named %1 on pod %2").arg(portText, name)));
                return;
            }
        }
    } else {
        for (const QJsonValue &c : object->object.value(QStringLiteral("spec")).toObject().value(QStringLiteral("containers")).toArray()) {
            const QJsonArray ports = c.toObject().value(QStringLiteral("ports")).toArray();
            if (!ports.isEmpty()) {
                port = static_cast<quint16>(ports.first().toObject().value(QStringLiteral("containerPort")).toInt(80));
                break;
            }
        }
    }
    PodProxy::forward(ip, port, info.rest, request, responder);
}

} // namespace Starforge::Sandbox
