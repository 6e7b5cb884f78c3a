#pragma once

// The playground's pods on the cluster: launch one (PlaygroundPod), read the owner's back as
// PlaygroundInstances, and reap them. The reaper deletes the owner's playground pods whose time
// is up (the expiry annotation has passed) or that have ended (Succeeded, or Failed, which is
// how activeDeadlineSeconds ends them: DeadlineExceeded); it runs when the app starts and
// periodically after (Session). It only ever touches pods that carry both the owner's label
// and, in the annotation, the owner's name itself: another researcher's pods in the shared
// namespace are left alone, whatever their state. Deletes carry the pod's uid as a
// precondition, so a pod made again under the same name since the list is not deleted.

#include "core/cluster/diagnosis.h"
#include "core/playground/playgroundpod.h"
#include "core/util/result.h"

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>

#include <functional>

namespace Starforge::Kube {
class KubeClient;
}

namespace Starforge::Playground {

struct PlaygroundInstance
{
    QString name;           // the pod
    QString uid;
    QString owner;
    QString model;
    QString servedName;
    QString jobId;
    int step = 0;
    QString series;
    int gpus = 0;
    QString tokenizer;      // --tokenizer, when it was given
    int maxModelLen = 0;    // --max-model-len, 0 when not given
    int ttlSeconds = 0;     // activeDeadlineSeconds
    QString phase;          // Pending, Running, Succeeded, Failed
    QString reason;         // DeadlineExceeded, Unschedulable, ImagePullBackOff, ...
    bool ready = false;     // the Ready condition: /health answers
    QDateTime expiresAt;
    QDateTime created;

    bool ended() const { return phase == QLatin1String("Succeeded") || phase == QLatin1String("Failed"); }
    bool expired(const QDateTime &now) const { return expiresAt.isValid() && expiresAt <= now; }
    // What launches the same model again (the panel's Extend: a pod's deadline cannot be raised).
    LaunchRequest launchRequest() const;
    // "ready", "starting", "waiting: Unschedulable", "ended: DeadlineExceeded".
    QString stateText() const;
    static PlaygroundInstance fromPod(const QJsonObject &pod);
};

class PlaygroundClient final : public QObject
{
    Q_OBJECT
public:
    PlaygroundClient(Kube::KubeClient *client, QString ns, QString owner, QObject *parent = nullptr);

    // Creates the pod (PlaygroundPod::build's); done gets the instance made.
    void launch(const QJsonObject &pod, std::function<void(Result<PlaygroundInstance>)> done);
    // The owner's playground pods, newest first.
    void list(std::function<void(Result<QList<PlaygroundInstance>>)> done);
    // Deletes one of the owner's pods; another's is refused with a message that says whose.
    void stop(const QString &name, std::function<void(Result<void>)> done);
    // Why a pod is not ready, by the diagnosis engine that explains pending jobs: the pod and
    // its events (Unschedulable with the scheduler's numbers, an image that cannot be pulled,
    // a crash with its exit code). capacity may be null.
    void diagnose(const QString &name, const Cluster::CapacityModel *capacity, const QString &seriesLabel,
                  std::function<void(Result<Cluster::Diagnosis>)> done);
    // Deletes every one of the owner's pods that has expired or ended by now; done gets the names.
    void reap(const QDateTime &now, std::function<void(Result<QStringList>)> done);

private:
    void remove(const PlaygroundInstance &instance, std::function<void(Result<void>)> done);

    Kube::KubeClient *m_client;
    QString m_ns;
    QString m_owner;
};

} // namespace Starforge::Playground
