#pragma once

// A job as the user sees it (docs/design.md, "Tracking"):
//   Submitting -> Pending -> Running -> Succeeded / Failed / Stopped -> Archived.
// The live states are read off the RayJob's status; Archived means the job's logs, events and
// final objects are in the bucket under jobs/<id>/ and the RayJob is gone. An archived job
// keeps its outcome (Succeeded, Failed or Stopped) beside the archived flag, and
// jobs/<id>/status.json is this record as JSON: job history is that prefix.

#include "core/job/progress.h"
#include "core/kube/resources.h"
#include "core/util/result.h"

#include <QDateTime>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>

namespace Starforge::Job {

enum class JobState { Submitting, Pending, Running, Succeeded, Failed, Stopped };

QString jobStateName(JobState state);
std::optional<JobState> jobStateFromName(const QString &name);
inline bool isTerminal(JobState state)
{
    return state == JobState::Succeeded || state == JobState::Failed || state == JobState::Stopped;
}

// The state a RayJob's status stands for. Running means Ray runs the driver (jobStatus RUNNING),
// not only that the cluster is up: a submitter pod that cannot start keeps a KubeRay job
// "Running" with an empty jobStatus, and for the user that job is still Pending. Complete is
// Succeeded only with jobStatus SUCCEEDED (STOPPED also completes); ValidationFailed never
// moves again, so it counts as Failed.
JobState stateOfRayJob(const Kube::RayJob &rayJob);

// Object keys of a job's archive in the bucket.
namespace ArchiveKeys {
QString prefix(const QString &jobId);                  // "jobs/<id>/"
QString status(const QString &jobId);                  // written last: the archive is complete
QString events(const QString &jobId);
QString objects(const QString &jobId);                 // final RayJob, RayCluster, pods
QString log(const QString &jobId, const QString &pod, const QString &container);
// "jobs/<id>/status.json" -> "<id>"; empty for any other key.
QString jobIdOfStatusKey(const QString &key);
} // namespace ArchiveKeys

struct ArchivedLog
{
    QString pod;
    QString container;
    QString role;          // "submitter", "head", "worker <group>", "pod"
    QString key;           // object key in the bucket
    qint64 size = 0;
};

struct JobRecord
{
    QString id;                 // starforge.dev/job-id
    QString name;               // the JobSpec's name
    QString rayJobName;
    QString ns;
    JobState state = JobState::Pending;
    bool archived = false;
    QString reason;             // KubeRay's status.reason, or the app's (PreRunningDeadlineExceeded, StoppedByUser)
    QString message;            // KubeRay's status.message, or the app's sentence
    QString cause;              // the diagnosis cause id for a job that failed before running
    QDateTime created;
    QDateTime started;          // when Ray accepted the job (rayJobInfo.startTime), else status.startTime; only once it ran
    QDateTime ended;
    QDateTime archivedAt;
    QString capsuleSha256;
    QJsonObject jobSpec;        // the JobSpec as submitted (from the RayJob's annotation)
    QList<ArchivedLog> logs;    // archived only
    QStringList lost;           // what the archive could not keep, one sentence each
    // Archived only: the runner's whole list of servable checkpoints (its servable_checkpoints
    // record) from the end of the driver's log, so the history has them without reading the
    // log; empty when the log has none (nothing saved, or a runner from before the list).
    QList<ServableCheckpoint> servableCheckpoints;
    QString owner;              // the starforge.dev/owner annotation; empty on jobs made before owners
    QString archiveBucket;      // where its owner archives it (archiveBucketAddress())
    // The deadline the job was submitted with (0: none known), and whether the operator
    // enforces it too (spec.preRunningDeadlineSeconds is set).
    int preRunningDeadlineSeconds = 0;
    bool deadlineInSpec = false;
    // The RayJob is being deleted (its deletionTimestamp; live records only, never archived): it
    // is going, not live. The operator's finalizer stops a Ray job that still runs, and the
    // tracker no longer acts on it except to archive it.
    QDateTime deleting;

    bool isDeleting() const { return deleting.isValid() && !archived; }

    // The record of a live RayJob: labels, annotations and status.
    static JobRecord fromRayJob(const QJsonObject &rayJob);
    // "Running", "Archived (Failed)" for an archived job, and for a RayJob being deleted
    // "Stopping (being deleted)" or "Succeeded (being deleted)".
    QString displayState() const;

    QJsonObject toJson() const;
    static Result<JobRecord> fromJson(const QJsonObject &json);
};

} // namespace Starforge::Job
