#pragma once

// What a person does to one job, for every front end: find it (by id or RayJob name), check it
// is Starforge's, pick one of its pods or archived logs by role, and delete it. The GUI's jobs
// panel and starforge-cli's commands call these, so a rule is written once.

#include "core/job/jobrecord.h"
#include "core/job/jobsnapshot.h"
#include "core/job/ownership.h"
#include "core/util/result.h"

#include <QJsonObject>
#include <QObject>
#include <QString>

#include <functional>

namespace Starforge::Kube {
class KubeClient;
}
namespace Starforge::S3 {
class S3Client;
}

namespace Starforge::Job {

// Whether a RayJob is one of Starforge's: made by it (managed-by label) with a job id. Only
// those are stopped or deleted; anyone else's RayJob in the namespace is left alone.
bool isStarforgeRayJob(const QJsonObject &rayJob);
// "RayJob x was not made by Starforge …; Starforge does not <verb> it (kubectl … would)".
Error notStarforgeRayJob(const QString &name, const QString &ns, const QString &verb);

// fetchJobSnapshot, and a RayJob without a name taken for what it is: a 200 that is not a
// Kubernetes object (FORGE_K8S_API_SERVER pointing at a web UI or a proxy's login page), which
// would otherwise read as an empty Pending job.
void fetchCheckedSnapshot(Kube::KubeClient *kube, const SnapshotRequest &request, QObject *context,
                          std::function<void(Result<JobSnapshot>)> done);

// Pods and archived logs by role. want: a pod's name, or a role ("submitter", "head",
// "worker", "worker <group>"); empty: the driver's (the submitter's), else the head's.
bool podMatches(const QString &podName, const QString &role, const QString &want);
QStringList rolesToTry(const QString &want);
// The first of snapshot's pods that matches; empty when none does.
QString pickPod(const JobSnapshot &snapshot, const QString &want);
// The first archived log that matches (and is of container, when given); null when none does.
const ArchivedLog *pickArchivedLog(const JobRecord &record, const QString &want, const QString &container);

struct DeletedJob
{
    QString id;
    bool rayJobDeleted = false;
    int archiveObjectsDeleted = 0;
};

// Removes a job for good: a live RayJob is marked (so trackers let it go without an archive)
// and deleted, then every object of its archive goes, status.json last so a history reader
// never sees a record without its logs. The Capsule stays (another job may use it). job: the
// id or name asked for, used when snapshot has no id. NotFound when the job is neither on the
// cluster nor in the bucket. Only the viewer's own job is deleted: a live one someone else owns
// (or not shaped as the app makes them), or an archive whose record names another owner, is
// refused before anything is touched (notYours).
void deleteJob(Kube::KubeClient *kube, S3::S3Client *s3, const QString &ns, const Viewer &viewer, const JobSnapshot &snapshot,
               const QString &job, QObject *context, std::function<void(Result<DeletedJob>)> done);

// Whether the viewer may stop or delete this live RayJob: Starforge's, shaped as the app makes
// them, and the viewer's own. verb names the action in the refusal.
Result<void> checkMayActOn(const QJsonObject &rayJob, const Viewer &viewer, const QString &ns, const QString &verb);

} // namespace Starforge::Job
