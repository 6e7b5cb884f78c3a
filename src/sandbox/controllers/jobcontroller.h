#pragma once

// Kubernetes' Job controller for the one shape KubeRay's submitter uses (one completion, one
// pod at a time): pods named <job>-<5 chars> with the job-name, batch.kubernetes.io/job-name
// and controller-uid labels, a new pod after a failure until backoffLimit, then the Failed
// condition with BackoffLimitExceeded; Complete when a pod succeeds. A pod a ResourceQuota
// refuses is a Warning FailedCreate ("Error creating: pods \"x\" is forbidden: exceeded quota:
// ..."), not a failure: it is tried again after a back-off, and at once when a quota changes.
// A pod deleted before it succeeded (an eviction, a drain, someone's kubectl delete) counts as
// failed, as it does for a Job without podFailurePolicy (KubeRay sets none), and is replaced.

#include "sandbox/controllers/controllerutil.h"

#include <QDateTime>
#include <QHash>
#include <QObject>

namespace Starforge::Sandbox {

class ObjectStore;
class EventRecorder;
struct Change;

class JobController final : public QObject
{
    Q_OBJECT
public:
    JobController(ObjectStore *store, EventRecorder *events, quint32 seed, int retryBackoffMs, QObject *parent = nullptr);

private:
    void onChange(const Change &change);
    void reconcile(const QString &ns, const QString &name);

    ObjectStore *m_store;
    EventRecorder *m_events;
    QRandomGenerator m_random;
    int m_retryBackoffMs;
    ReconcileQueue m_queue;
    QHash<QString, QDateTime> m_retryAt; // "<job uid>/<failures>" -> when the next pod may start
    QHash<QString, int> m_refusals;      // job uid -> pod creates the quota refused in a row
    QHash<QString, int> m_deletedFailures; // job uid -> its pods deleted before they succeeded
};

} // namespace Starforge::Sandbox
