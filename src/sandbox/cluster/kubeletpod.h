#pragma once

// The kubelet's own record of each pod it runs and of each container in it, shared by the
// kubelet's files (kubelet.cpp: the pod lifecycle; kubeletregistry.cpp: image pulls and registry
// credentials; kubeletprocesses.cpp: container processes and restarts; kubeletstatus.cpp: the
// pod status it writes; kubeletlogs.cpp: CRI logs and pods/log; kubeletproxy.cpp: pods/proxy).
// Nothing outside the kubelet includes it.

#include "sandbox/cluster/kubelet.h"

#include <QDateTime>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QPointer>
#include <QProcess>
#include <QString>

#include <memory>
#include <vector>

namespace Starforge::Sandbox {

struct ResourceType;

struct Kubelet::Container
{
    // A pods/log?follow=true reader, fed each line as the process writes it.
    struct Follower
    {
        QPointer<Http::Responder> responder;
        bool timestamps = false;
        qint64 remaining = -1; // limitBytes left, -1 unlimited
    };

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
    QByteArray partial[2]; // stdout, stderr: the unfinished last line of each
    QList<Follower> followers;
    QString dir;

    QString image() const { return spec.value(QStringLiteral("image")).toString(); }
    // Where the shim writes why a run could not start (a mount, the exec), as runc reports it.
    QString startErrorFile() const { return dir + QStringLiteral("/start-error"); }
    QString logPath(int run) const { return dir + QStringLiteral("/%1.log").arg(run); }
    // "spec.containers{name}": where events about the container point in the pod.
    QString fieldPath() const;
    // "containerd://<hex>": stable for one run of one container of one pod, new for each run.
    QString containerId(const QString &podUid, int run) const;
    // The entry of status.containerStatuses (kubeletstatus.cpp).
    QJsonObject status(const QString &podUid) const;
    // Ends every pods/log follow of the container.
    void endFollowers();
};

struct Kubelet::Pod
{
    // A volume of the pod's spec, by name: the host directory behind it.
    struct Volume
    {
        QString hostDir;
        bool readOnly = false;
        bool owned = false; // made by the kubelet (emptyDir, a claim), so a subPath may be created in it
    };

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
    QHash<QString, Volume> volumes;
    QString volumeError; // FailedMount: a volume the sandbox cannot provide
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

// Small pieces every kubelet file uses.
namespace KubeletCommon {

const ResourceType &podType();
const ResourceType &secretType();
// Status timestamps: seconds, as the API server writes them.
QString rfc3339(const QDateTime &t);
// CRI log timestamps: nanoseconds (the sandbox has milliseconds, padded).
QString rfc3339Nano(const QDateTime &t);
// "…", as the kubelet quotes images and names in its messages.
QString quoted(const QString &s);

} // namespace KubeletCommon

} // namespace Starforge::Sandbox
