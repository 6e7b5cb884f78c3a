#pragma once

// KubeRay's RayCluster controller as the app sees it: a head pod (<cluster>-head-<5>) and the
// worker pods of each group (<cluster>-<group>-worker-<5>, replicas clamped to [min, max] ×
// numOfHosts) with KubeRay's labels and its generated `ray start` command, the headless
// <cluster>-head-svc Service, the operator's events, and a status whose state is "ready" once
// the head and every worker are Running and Ready. Like KubeRay it injects a `wait-gcs-ready`
// init container into every worker and liveness/readiness probes into every Ray container
// that has none (docs/kuberay.md, "What the operator adds to pods").

#include "sandbox/controllers/controllerutil.h"

#include <QHash>
#include <QObject>

namespace Starforge::Sandbox {

class ObjectStore;
class EventRecorder;
struct Change;

class RayClusterController final : public QObject
{
    Q_OBJECT
public:
    // The operator's ENABLE_INIT_CONTAINER_INJECTION and ENABLE_PROBES_INJECTION, both on
    // unless set to "false".
    struct Options
    {
        bool injectInitContainer = true;
        bool injectProbes = true;
    };

    RayClusterController(ObjectStore *store, EventRecorder *events, quint32 seed, Options options, QObject *parent = nullptr);

private:
    void onChange(const Change &change);
    void reconcile(const QString &ns, const QString &name);

    ObjectStore *m_store;
    EventRecorder *m_events;
    Options m_options;
    QRandomGenerator m_random;
    ReconcileQueue m_queue;
    QHash<QString, int> m_refusals;   // "ns/name" -> pod creates refused in a row (the retry's back-off)
};

} // namespace Starforge::Sandbox
