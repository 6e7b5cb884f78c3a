#pragma once

// The kubelet of every sandbox node: for each pod bound to a node it pulls images (an image
// outside the present set fails with the real Pulling / ErrImagePull / ImagePullBackOff events
// and waiting reasons; an image of the private registry is pulled only with an imagePullSecrets
// Secret holding credentials for its host, else it fails as containerd does on a 401), resolves
// env references to Secrets, runs init containers in order and then the containers as local
// processes, keeps their output as CRI-format logs, restarts them by the pod's restartPolicy
// with CrashLoopBackOff, drives container statuses, conditions and the pod phase from exit
// codes, enforces activeDeadlineSeconds, and stops the processes when the pod is deleted. It
// serves pods/log with follow, tailLines, sinceSeconds, sinceTime, timestamps, limitBytes,
// previous and container.
//
// A container's command runs on the host: the sandbox is a local test cluster reachable only
// on loopback with its token. A container without a command (the image's own entrypoint, which
// the sandbox cannot know) runs an idle stand-in process; `ray` resolves to the sandbox's Ray
// CLI stand-in (src/sandbox/tools/ray).
//
// Every container run is started through starforge-sandbox-shim (src/sandbox/shim/main.cpp): its
// own session and process group, a subreaper that kills all the container's processes when the
// main one ends or the pod goes, SIGHUP as its parent-death signal so a sandbox that dies (even
// by SIGKILL) leaves no container process behind, and the pod's volumes (emptyDir,
// persistentVolumeClaim, hostPath) bound at their mountPaths in a private mount namespace.
//
// The implementation is split by concern over kubelet*.cpp; kubeletpod.h lists them.

#include "sandbox/api/apiserver.h"

#include <QDateTime>
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRandomGenerator>
#include <QSet>
#include <QString>
#include <QStringList>

#include <memory>

namespace Starforge::Sandbox {

class ObjectStore;
class EventRecorder;
struct Change;

class Kubelet final : public QObject
{
    Q_OBJECT
public:
    struct Options
    {
        QString stateDir;              // pod working directories and logs
        QSet<QString> presentImages;   // images "already on the machine"
        int imagePullBackoffMs = 10000;
        int crashLoopBackoffMs = 10000;
        int terminationGraceMs = 2000;
        QString toolsDir;              // first on every container's PATH (the `ray` stand-in)
        QString caFile;                // the sandbox CA, for containers that fetch from its S3
        QSet<QString> vllmImages;      // images whose entrypoint is `vllm serve`
        double tokenRate = 50;         // the vLLM stand-in's tokens per second
        QString nemoRlStepSeconds;     // the NeMo-RL stand-in's STARFORGE_FAKE_STEP_SECONDS; empty: its default
        // Images under this prefix ("registry.sandbox.internal/private/") live in a registry that
        // answers 401 without credentials for its host; empty: no private registry.
        QString privateRegistry;
        QString shim; // the starforge-sandbox-shim executable every container runs under
        // Claims with a directory of their own (the storage claim: FORGE_STORAGE_ROOT; the corpus
        // claim); any other claim is provisioned on first use under stateDir/claims/<namespace>/<claim>.
        QHash<QString, QString> claimDirs;
    };

    Kubelet(ObjectStore *store, EventRecorder *events, Options options, QObject *parent = nullptr);
    ~Kubelet() override;

    void serveLogs(const RequestInfo &info, const Http::Request &request, Http::Responder *responder);
    void serveProxy(const RequestInfo &info, const Http::Request &request, Http::Responder *responder);

    // "busybox" → "docker.io/library/busybox:latest", as the runtime resolves references.
    static QString normalizeImage(const QString &image);

private:
    // Defined in kubeletpod.h, which only the kubelet's own files include.
    struct Container;
    struct Pod;

    // kubelet.cpp: the pod lifecycle.
    void onChange(const Change &change);
    void adopt(const QString &ns, const QString &name);
    void stopPod(const QString &uid, bool removeFiles);
    void advance(Pod &pod);
    void failPod(Pod &pod, const QString &reason, const QString &message);
    void record(const Pod &pod, const QString &type, const QString &reason, const QString &message, const QString &fieldPath);
    Pod *podFor(const QString &ns, const QString &name);

    // kubeletregistry.cpp: image pulls and registry credentials.
    void pull(Pod &pod, Container &container);
    void pullFailed(Pod &pod, Container &container, const QString &error, const QString &field);
    // The pod's imagePullSecrets that do not exist, and whether the ones that do hold
    // credentials for the image's registry (kubernetes.io/dockerconfigjson, "auths").
    QStringList missingPullSecrets(const Pod &pod) const;
    bool hasPullCredentials(const Pod &pod, const QString &ref) const;
    bool isPrivate(const QString &ref) const;

    // kubeletprocesses.cpp: container processes, exits and restarts.
    void run(Pod &pod, Container &container);
    // The container's environment into `env`; the CreateContainerConfigError message for the
    // first reference it cannot resolve, or empty.
    QString resolveEnvironment(const Pod &pod, const Container &container, QProcessEnvironment &env) const;
    void holdForConfig(Pod &pod, Container &container, const QString &error);
    void failToStart(Pod &pod, Container &container, const QString &program);
    void startProcess(Pod &pod, Container &container, const QString &program, const QStringList &arguments,
                      const QProcessEnvironment &env, const QString &workDir);
    void onExit(const QString &uid, Container *container, int exitCode);
    // SIGTERM to the container's shim, which passes it on and kills what is left after the grace
    // period; SIGKILL to the whole process group should the shim itself not end.
    void terminate(QProcess *process) const;
    void restartAfterBackOff(Pod &pod, Container &container);

    // kubeletstatus.cpp
    void syncStatus(Pod &pod);

    // kubeletlogs.cpp
    void appendOutput(Container &container, const QByteArray &data, const char *stream, bool flush);

    ObjectStore *m_store;
    EventRecorder *m_events;
    Options m_options;
    QHash<QString, std::shared_ptr<Pod>> m_pods; // by uid
    quint32 m_nextPodIp = 0;
    // The second octet of this sandbox's pod addresses (127.<octet>.x.y), drawn at random so that
    // sandboxes running side by side on one machine (tests in parallel) do not hand two pods the
    // same address and port; never 0, where the API server listens.
    quint32 m_podIpOctet = 1 + QRandomGenerator::system()->bounded(254u);
};

} // namespace Starforge::Sandbox
