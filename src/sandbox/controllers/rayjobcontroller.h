#pragma once

// KubeRay v1.7's RayJob controller in K8sJobMode: validation with the operator's messages
// (ValidationFailed), New → Initializing (jobId, rayClusterName, startTime; the RayCluster and
// <rayjob>-head-svc), the submitter Job (the operator's bash script) once the cluster is ready
// → Running, jobStatus, message and rayJobInfo from the head's "dashboard" (the Ray stand-in's
// job records) → Complete or Failed with the operator's reasons (AppFailed, SubmissionFailed
// when the submitter Job fails, the grace periods, JobStatusCheckTimeoutExceeded),
// activeDeadlineSeconds and preRunningDeadlineSeconds where the operator checks them, suspend
// and resume, backoffLimit retries, and shutdownAfterJobFinishes with ttlSecondsAfterFinished.
// Events as the operator records them.

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
    struct Options
    {
        QString rayStateDir;                  // the Ray stand-in's state ($STARFORGE_SANDBOX_RAY_STATE)
        int statusCheckTimeoutSeconds = 300;  // RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS
        int transitionGraceSeconds = 300;     // RAYJOB_DEPLOYMENT_STATUS_TRANSITION_GRACE_PERIOD_SECONDS
        int submitterFinishedTimeoutSeconds = 30;  // DefaultSubmitterFinishedTimeout
    };
    RayJobController(ObjectStore *store, EventRecorder *events, quint32 seed, Options options, QObject *parent = nullptr);

    // The operator's validation of metadata and spec; empty when valid.
    static QString validate(const QJsonObject &rayJob, QString *eventReason = nullptr);
    // runtimeEnvYAML as the JSON passed to `ray job submit --runtime-env-json`.
    static std::optional<QJsonObject> runtimeEnvJson(const QString &yaml, QString *error = nullptr);
    // The operator's start options that decide what goes at the TTL (rayjobdeletion.h).
    void setOperatorOptions(const RayJobDeletion::OperatorOptions &options) { m_operator = options; }

    // The submitter's bash script, word for word as common/job.go builds it in K8sJobMode.
    static QString submitterScript(const QString &address, const QString &jobId, const QString &entrypoint, const QJsonObject &runtimeEnv);
    // Go's formatting of a time read from the API: time.Time.String() and the time.DateTime layout.
    static QString goTimeString(const QString &rfc3339);
    static QString goDateTime(const QString &rfc3339);

private:
    struct DashboardJob
    {
        bool unreachable = false;   // no head answers
        QString status;             // empty: no such job (yet)
        QString message;
        QString startTime;          // when Ray accepted the job
        QString endTime;
    };
    DashboardJob dashboardJob(const QString &ns, const QString &cluster, const QString &jobId) const;
    // The dashboard's StopJob for the RayJob's Ray job (the finalizer's).
    void stopJob(const QJsonObject &rayJob) const;
    // Leaves a RayJob the controller just moved back to New alone for a while before the
    // reconcile that starts it again.
    void holdInNew(const QString &ns, const QString &name);
    void onChange(const Change &change);
    void reconcile(const QString &ns, const QString &name);
    void record(const QJsonObject &rayJob, const QString &type, const QString &reason, const QString &message, const QString &action);

    Options m_options;
    ObjectStore *m_store;
    EventRecorder *m_events;
    QRandomGenerator m_random;
    ReconcileQueue m_queue;
    RayJobDeletion::OperatorOptions m_operator;
    QSet<QString> m_heldInNew;   // ObjectStore::keyOf of RayJobs in holdInNew
};

} // namespace Starforge::Sandbox
