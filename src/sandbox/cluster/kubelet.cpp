// The kubelet's pod lifecycle: adopting a pod bound to a node, walking it through its init
// containers to its containers, failing it (activeDeadlineSeconds), and stopping its processes
// when it is deleted. The other concerns live beside this file (see kubeletpod.h).

#include "sandbox/cluster/kubelet.h"

#include "sandbox/cluster/eventrecorder.h"
#include "sandbox/cluster/kubeletpod.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"
#include "sandbox/util/ownerfiles.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QLoggingCategory>
#include <QTimer>

#include <csignal>

Q_LOGGING_CATEGORY(lcKubelet, "starforge.sandbox.kubelet")

namespace Starforge::Sandbox {

namespace KubeletCommon {

const ResourceType &podType()
{
    return *ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("pods"));
}

const ResourceType &secretType()
{
    return *ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("secrets"));
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

} // namespace KubeletCommon

using namespace KubeletCommon;

QString Kubelet::Container::fieldPath() const
{
    return QStringLiteral("spec.%1{%2}").arg(init ? QStringLiteral("initContainers") : QStringLiteral("containers"), name);
}

QString Kubelet::Container::containerId(const QString &podUid, int run) const
{
    return QStringLiteral("containerd://%1").arg(QString::fromLatin1(
        QCryptographicHash::hash((podUid + name + QString::number(run)).toUtf8(), QCryptographicHash::Sha256).toHex()));
}

void Kubelet::Container::endFollowers()
{
    for (Follower &f : followers) {
        if (f.responder) {
            f.responder->end();
        }
    }
    followers.clear();
}

Kubelet::Kubelet(ObjectStore *store, EventRecorder *events, Options options, QObject *parent)
    : QObject(parent)
    , m_store(store)
    , m_events(events)
    , m_options(std::move(options))
{
    makeOwnerOnlyPath(m_options.stateDir);
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
    // The sandbox stops now: every shim kills its container at once (SIGHUP), before QProcess's
    // destructor would SIGKILL the shim alone and leave the container's processes behind.
    const QList<QProcess *> processes = findChildren<QProcess *>();
    for (QProcess *p : processes) {
        if (p->state() != QProcess::NotRunning) {
            ::kill(static_cast<pid_t>(p->processId()), SIGHUP);
        }
    }
    for (QProcess *p : processes) {
        if (p->state() != QProcess::NotRunning && !p->waitForFinished(m_options.terminationGraceMs)) {
            ::kill(-static_cast<pid_t>(p->processId()), SIGKILL);
            p->waitForFinished(1000);
        }
    }
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
    pod->ip = QStringLiteral("127.%1.%2.%3").arg(m_podIpOctet).arg((m_nextPodIp / 250) % 250).arg(m_nextPodIp % 250 + 1);
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
            makeOwnerOnlyPath(c->dir);
            into.push_back(std::move(c));
        }
    };
    makeContainers(QStringLiteral("initContainers"), true, pod->inits);
    makeContainers(QStringLiteral("containers"), false, pod->containers);
    makeOwnerOnlyPath(pod->dir + QStringLiteral("/root"));
    for (const QJsonValue &v : spec.value(QStringLiteral("volumes")).toArray()) {
        const QJsonObject volume = v.toObject();
        const QString volumeName = volume.value(QStringLiteral("name")).toString();
        Pod::Volume backing;
        if (volume.contains(QStringLiteral("emptyDir"))) {
            // On disk even for medium Memory; shared by the pod's containers, gone with the pod.
            backing.hostDir = pod->dir + QStringLiteral("/volumes/") + volumeName;
            backing.owned = true;
        } else if (const QJsonObject claim = volume.value(QStringLiteral("persistentVolumeClaim")).toObject(); !claim.isEmpty()) {
            const QString claimName = claim.value(QStringLiteral("claimName")).toString();
            backing.hostDir = m_options.claimDirs.value(claimName, m_options.stateDir + QStringLiteral("/claims/%1/%2").arg(ns, claimName));
            backing.readOnly = claim.value(QStringLiteral("readOnly")).toBool();
            backing.owned = true;
        } else if (const QJsonObject host = volume.value(QStringLiteral("hostPath")).toObject(); !host.isEmpty()) {
            backing.hostDir = QDir::cleanPath(host.value(QStringLiteral("path")).toString());
            if (!QFileInfo(backing.hostDir).isDir()) {
                pod->volumeError = QStringLiteral("MountVolume.SetUp failed for volume %1 : hostPath type check failed: %2 is not a directory")
                                       .arg(quoted(volumeName), backing.hostDir);
            }
        } else {
            pod->volumeError = QStringLiteral("MountVolume.SetUp failed for volume %1 : the sandbox provides emptyDir, "
                                              "persistentVolumeClaim and hostPath volumes only").arg(quoted(volumeName));
        }
        if (backing.owned && !makeOwnerOnlyPath(backing.hostDir)) {
            pod->volumeError = QStringLiteral("MountVolume.SetUp failed for volume %1 : cannot create %2").arg(quoted(volumeName), backing.hostDir);
        }
        pod->volumes.insert(volumeName, backing);
    }
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
        c.endFollowers();
        if (QProcess *p = c.process) {
            c.process = nullptr;
            p->disconnect(this);
            p->setParent(this);
            // SIGTERM first, SIGKILL after the grace period, as a pod deletion does.
            connect(p, &QProcess::finished, p, &QObject::deleteLater);
            terminate(p);
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

void Kubelet::failPod(Pod &pod, const QString &reason, const QString &message)
{
    pod.failedReason = reason;
    pod.failedMessage = message;
    record(pod, QStringLiteral("Normal"), reason, message, {});
    for (auto *list : {&pod.inits, &pod.containers}) {
        for (auto &c : *list) {
            if (QProcess *p = c->process) {
                terminate(p);
            }
            c->restartPending = false;
        }
    }
    syncStatus(pod);
}

} // namespace Starforge::Sandbox
