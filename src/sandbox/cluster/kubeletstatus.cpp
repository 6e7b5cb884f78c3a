// The pod status the kubelet writes after every change it sees: container statuses, the phase
// derived from them, the conditions (keeping a condition's transition time while its status
// holds), and the pod's addresses.

#include "sandbox/cluster/kubelet.h"

#include "sandbox/cluster/kubeletpod.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

#include <QCryptographicHash>
#include <QJsonArray>

namespace Starforge::Sandbox {

using namespace KubeletCommon;

namespace {

// What the containers (not the init containers) say about the pod as a whole.
struct ContainersSummary
{
    bool anyRunning = false;
    bool allTerminated = false;
    bool anyFailed = false;
    bool allReady = false;
    bool restarting = false;
};

QString phaseOf(bool podFailed, bool initsDone, const ContainersSummary &containers)
{
    if (podFailed) {
        return QStringLiteral("Failed");
    }
    if (initsDone && containers.allTerminated) {
        return containers.anyFailed ? QStringLiteral("Failed") : QStringLiteral("Succeeded");
    }
    if (initsDone && (containers.anyRunning || containers.restarting)) {
        return QStringLiteral("Running");
    }
    return QStringLiteral("Pending");
}

QJsonObject condition(const QString &type, bool value, const QString &now, const QString &reason = {})
{
    QJsonObject c{{QStringLiteral("type"), type}, {QStringLiteral("status"), value ? QStringLiteral("True") : QStringLiteral("False")},
                  {QStringLiteral("lastProbeTime"), QJsonValue::Null}, {QStringLiteral("lastTransitionTime"), now}};
    if (!reason.isEmpty() && !value) c.insert(QStringLiteral("reason"), reason);
    return c;
}

// The kubelet's conditions, each keeping its old transition time when its status did not
// change, then PodScheduled as the scheduler left it.
QJsonArray conditionsFor(const QJsonArray &old, bool initialized, bool ready, const QString &phase, const QString &now)
{
    const bool completed = phase == QLatin1String("Succeeded") || phase == QLatin1String("Failed");
    const QString notReady = completed ? QStringLiteral("PodCompleted") : QStringLiteral("ContainersNotReady");
    const QJsonArray fresh{condition(QStringLiteral("PodReadyToStartContainers"), true, now),
                           condition(QStringLiteral("Initialized"), initialized, now, QStringLiteral("ContainersNotInitialized")),
                           condition(QStringLiteral("Ready"), ready, now, notReady),
                           condition(QStringLiteral("ContainersReady"), ready, now, notReady)};
    QJsonArray conditions;
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
    QJsonObject scheduled;
    for (const QJsonValue &c : old) {
        if (c.toObject().value(QStringLiteral("type")).toString() == QLatin1String("PodScheduled")) scheduled = c.toObject();
    }
    if (!scheduled.isEmpty()) conditions.append(scheduled);
    return conditions;
}

} // namespace

QJsonObject Kubelet::Container::status(const QString &podUid) const
{
    QJsonObject stateObject;
    if (state == State::Running) {
        stateObject.insert(QStringLiteral("running"), QJsonObject{{QStringLiteral("startedAt"), rfc3339(startedAt)}});
    } else if (state == State::Terminated) {
        QJsonObject t{{QStringLiteral("exitCode"), exitCode}, {QStringLiteral("reason"), terminatedReason},
                      {QStringLiteral("startedAt"), rfc3339(startedAt)}, {QStringLiteral("finishedAt"), rfc3339(finishedAt)}};
        if (!terminatedMessage.isEmpty()) t.insert(QStringLiteral("message"), terminatedMessage);
        stateObject.insert(QStringLiteral("terminated"), t);
    } else {
        QJsonObject w{{QStringLiteral("reason"), waitingReason}};
        if (!waitingMessage.isEmpty()) w.insert(QStringLiteral("message"), waitingMessage);
        stateObject.insert(QStringLiteral("waiting"), w);
    }
    // A pulled image gets a digest derived from its reference: stable, and looks like one.
    const QString imageId = pulled ? QStringLiteral("%1@sha256:%2").arg(normalizeImage(image()).section(u':', 0, -2),
                                                                        QString::fromLatin1(QCryptographicHash::hash(image().toUtf8(), QCryptographicHash::Sha256).toHex()))
                                   : QString();
    QJsonObject s{{QStringLiteral("name"), name}, {QStringLiteral("image"), image()},
                  {QStringLiteral("imageID"), imageId},
                  {QStringLiteral("ready"), state == State::Running && !init},
                  {QStringLiteral("restartCount"), restarts},
                  {QStringLiteral("started"), state == State::Running},
                  {QStringLiteral("state"), stateObject},
                  {QStringLiteral("lastState"), lastTerminated}};
    if (runs > 0) {
        s.insert(QStringLiteral("containerID"), containerId(podUid, runs));
    }
    return s;
}

void Kubelet::syncStatus(Pod &pod)
{
    const QString now = rfc3339(QDateTime::currentDateTimeUtc());
    QJsonArray initStatuses;
    for (const auto &c : pod.inits) initStatuses.append(c->status(pod.uid));
    QJsonArray statuses;
    ContainersSummary summary;
    summary.allTerminated = !pod.containers.empty();
    summary.allReady = !pod.containers.empty();
    for (const auto &c : pod.containers) {
        statuses.append(c->status(pod.uid));
        summary.anyRunning = summary.anyRunning || c->state == Container::State::Running;
        summary.allTerminated = summary.allTerminated && c->state == Container::State::Terminated && !c->restartPending;
        summary.anyFailed = summary.anyFailed || (c->state == Container::State::Terminated && c->exitCode != 0);
        summary.allReady = summary.allReady && c->state == Container::State::Running;
        summary.restarting = summary.restarting || c->restartPending;
    }
    const QString phase = phaseOf(!pod.failedReason.isEmpty(), pod.initsDone, summary);
    const bool initialized = pod.initIndex >= pod.inits.size();
    const bool ready = summary.allReady && phase == QLatin1String("Running");
    const bool deadline = pod.failedReason == QLatin1String("DeadlineExceeded");
    m_store->modify(podType(), pod.ns, pod.name, [&](QJsonObject &p) {
        QJsonObject status = p.value(QStringLiteral("status")).toObject();
        status.insert(QStringLiteral("conditions"), conditionsFor(status.value(QStringLiteral("conditions")).toArray(), initialized, ready, phase, now));
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

} // namespace Starforge::Sandbox
