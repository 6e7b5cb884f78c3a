#pragma once

// KubeRay v1.7's RayJob controller in K8sJobMode: validation with the operator's messages
// (ValidationFailed), New → Initializing (jobId, rayClusterName, startTime; the RayCluster and
// <rayjob>-head-svc), the submitter Job once the cluster is ready → Running, jobStatus from
// the submitter (PENDING, RUNNING, SUCCEEDED, FAILED) → Complete or Failed with the operator's
// reasons, activeDeadlineSeconds and preRunningDeadlineSeconds, backoffLimit retries, and
// shutdownAfterJobFinishes with ttlSecondsAfterFinished. Events as the operator records them.

#include "sandbox/controllers/controllerutil.h"
#include "sandbox/controllers/rayjobdeletion.h"

#include <QObject>

namespace Starforge::Sandbox {

class ObjectStore;
class EventRecorder;
struct Change;

class RayJobController final : public QObject
{
    Q_OBJECT
public:
    RayJobController(ObjectStore *store, EventRecorder *events, quint32 seed, QObject *parent = nullptr);

    // The operator's validation of metadata and spec; empty when valid.
    static QString validate(const QJsonObject &rayJob, QString *eventReason = nullptr);
    // runtimeEnvYAML as the JSON passed to `ray job submit --runtime-env-json`.
    static std::optional<QJsonObject> runtimeEnvJson(const QString &yaml, QString *error = nullptr);
    // The operator's start options that decide what goes at the TTL (rayjobdeletion.h).
    void setOperatorOptions(const RayJobDeletion::OperatorOptions &options) { m_operator = options; }

private:
    void onChange(const Change &change);
    void reconcile(const QString &ns, const QString &name);
    void record(const QJsonObject &rayJob, const QString &type, const QString &reason, const QString &message, const QString &action);

    ObjectStore *m_store;
    EventRecorder *m_events;
    QRandomGenerator m_random;
    ReconcileQueue m_queue;
    RayJobDeletion::OperatorOptions m_operator;
};

} // namespace Starforge::Sandbox
