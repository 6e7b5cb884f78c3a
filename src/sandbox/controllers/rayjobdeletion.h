#pragma once

// How KubeRay v1.7's RayJob controller lets go of a RayJob (docs/kuberay.md, "Deletion"):
// - its finalizer `ray.io/rayjob-finalizer`: when the RayJob is being deleted and its Ray job is
//   not terminal, the Ray job is stopped first, then the finalizer is removed whatever came of
//   the stop (the store deletes the RayJob once no finalizer is left);
// - after the job finished, at the TTL: deletionStrategy (the RayJobDeletionPolicy feature gate,
//   on by default since 1.6) with deletionRules (DeleteWorkers, DeleteCluster, DeleteSelf,
//   DeleteNone per jobStatus or jobDeploymentStatus, each with its own ttlSeconds; the most
//   destructive overdue rule first) or the legacy onSuccess/onFailure policies with
//   ttlSecondsAfterFinished; else shutdownAfterJobFinishes, which deletes the RayCluster, or the
//   RayJob itself when the operator runs with DELETE_RAYJOB_CR_AFTER_JOB_FINISHES=true.
// The Ray job is stopped where the operator stops it, at the head (the dashboard's StopJob): the
// driver runs under the head's job supervisor (the Ray stand-in), not in the submitter's pod. The
// submitter Job is left to the garbage collector with the RayJob that owns it.

#include <QJsonObject>
#include <QString>

#include <functional>

namespace Starforge::Sandbox {

class ObjectStore;

namespace RayJobDeletion {

inline constexpr char Finalizer[] = "ray.io/rayjob-finalizer";

// The operator's start options that decide deletion.
struct OperatorOptions
{
    bool deleteRayJobAfterJobFinishes = false;  // DELETE_RAYJOB_CR_AFTER_JOB_FINISHES=true
    bool deletionPolicyGate = true;             // the RayJobDeletionPolicy feature gate
};

// validateDeletionConfiguration's checks of spec.deletionStrategy, with the operator's texts;
// empty when valid.
QString validate(const QJsonObject &spec, bool deletionPolicyGate);

// The dashboard's StopJob: asks the head of the RayJob's cluster to stop its Ray job. Whether the
// head answered does not matter to the finalizer.
using StopJob = std::function<void(const QJsonObject &rayJob)>;

// For a RayJob being deleted: stops its Ray job if it is not terminal and removes the
// finalizer. False when the RayJob is not being deleted (the caller reconciles it as usual).
bool finalize(ObjectStore &store, const QJsonObject &rayJob, const StopJob &stopJob);

using Record = std::function<void(const QString &reason, const QString &message, const QString &action)>;

// The clean-up of a finished RayJob at its TTLs. Returns the milliseconds after which to look
// again, or -1 when nothing is left to do.
int afterFinished(ObjectStore &store, const QJsonObject &rayJob, const OperatorOptions &options, const Record &record);

} // namespace RayJobDeletion

} // namespace Starforge::Sandbox
