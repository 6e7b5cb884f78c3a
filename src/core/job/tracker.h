#pragma once

// Follows the app's jobs on the cluster and ends them properly (docs/design.md, "Tracking"):
//  - an informer on the namespace's RayJobs that Starforge made (managed-by label) gives each
//    job's state as the user sees it (JobRecord, stateOfRayJob);
//  - only the viewer's own jobs are acted on (ownership.h); others' are shown read-only, and a
//    RayJob whose id or name is not shaped as the app makes them is not followed at all;
//  - a job that reaches Succeeded, Failed or Stopped is archived to jobs/<id>/ in the bucket
//    and its RayJob deleted (JobArchiver); a job that failed before it ran gets the diagnosis
//    of why in its record;
//  - the pre-running deadline the job was submitted with (read off the RayJob) is enforced here
//    as well: a job still Pending that long after it was submitted is failed, diagnosed,
//    archived and deleted. When the operator enforces it too (KubeRay >= 1.6 and the field
//    set), the app waits a grace period so the operator's own verdict usually comes first;
//  - on start, jobs that ended while nobody watched are archived as far as the cluster still
//    has them (the record names what was lost); a RayJob deleted behind the app's back is
//    archived from its last known state, with the loss recorded;
//  - a failed archive keeps the RayJob and is tried again later, backing off.
// Several trackers (the GUI and a `starforge-cli submit --wait`) may archive the same job: the
// keys are the same and the delete tolerates a job already gone.

#include "core/job/jobrecord.h"
#include "core/job/jobsnapshot.h"
#include "core/job/ownership.h"

#include <QDateTime>
#include <QHash>
#include <QObject>
#include <QSet>
#include <QTimer>

#include <functional>
#include <memory>

namespace Starforge::Kube {
class Informer;
class KubeClient;
}
namespace Starforge::S3 {
class S3Client;
}
namespace Starforge::Cluster {
class CapacityTracker;
}

namespace Starforge::Job {

class JobArchiver;

struct TrackerOptions
{
    QString ns;
    QString onlyJobId;                     // follow one job only (`submit --wait`)
    // Whose jobs this tracker acts on (ownership.h): it fails, archives and deletes only the
    // viewer's own, with the deadline each was submitted with (JobRecord). Everyone else's are
    // followed for display only.
    Viewer viewer;
    bool operatorEnforcesDeadline = true;  // KubeRay >= 1.6 sets Failed itself (when the spec has the field)
    int deadlineGraceSeconds = 30;         // the operator's turn first, when it enforces it
    int checkIntervalMs = 2000;            // deadline checks and archive retries
    int maxParallelArchives = 2;
    int archiveRetryMs = 5000;             // doubling after each failed archive ...
    int archiveRetryMaxMs = 300000;        // ... up to this
    QString seriesLabel;                   // for the diagnosis' numbers
    // The cluster's capacity, for the diagnosis of a job that never ran; used once synced, so
    // the archived cause has the numbers `starforge-cli status` and `diagnose` show.
    const Cluster::CapacityTracker *capacity = nullptr;
    // The Session's RayJob informer (labelSelector(onlyJobId)), started by its owner; null: the
    // tracker makes and starts its own.
    Kube::Informer *rayJobs = nullptr;
    // Where the tracker keeps the last state of each of the viewer's jobs it saw and has not
    // archived yet (JSON, rewritten on every change). At the next start, a job in it whose
    // RayJob is gone and that nobody archived (the operator deleted it at its TTL while no
    // tracker ran: DeleteSelf, DELETE_RAYJOB_CR_AFTER_JOB_FINISHES) is archived from that state,
    // with what was lost named. Empty: nothing is kept, and such a job leaves no record.
    QString seenJobsFile;
};

class JobTracker final : public QObject
{
    Q_OBJECT
public:
    JobTracker(Kube::KubeClient *kube, S3::S3Client *s3, TrackerOptions options, QObject *parent = nullptr);
    ~JobTracker() override;

    void start();
    bool hasSynced() const;

    const Viewer &viewer() const { return m_options.viewer; }
    Ownership ownershipOf(const JobRecord &record) const { return Job::ownershipOf(record, m_options.viewer); }

    // The label selector of the RayJobs a tracker follows: Starforge's, or one job's.
    static QString labelSelector(const QString &onlyJobId = {});

    // The jobs on the cluster (and those being submitted), newest first.
    QList<JobRecord> jobs() const;
    std::optional<JobRecord> job(const QString &id) const;

    // A submission in progress, shown as Submitting until its RayJob appears.
    void addSubmitting(const JobRecord &record);
    void removeSubmitting(const QString &id);

    // The user's stop: the job's logs are archived as Stopped, then its RayJob is deleted (the
    // operator stops the Ray job on deletion). done reports the archive's outcome; someone
    // else's job is refused (notYours).
    void stopJob(const QString &id, std::function<void(Result<JobRecord>)> done = {});

Q_SIGNALS:
    void synced();
    void jobChanged(const Starforge::Job::JobRecord &record);   // added, or its state changed
    void jobArchived(const Starforge::Job::JobRecord &record);   // in the bucket, RayJob deleted
    void jobRemoved(const QString &id);                         // no longer on the cluster
    void archiveFailed(const QString &id, const QString &message);
    // stopJob() acts on this job: its Stopped state is this app's doing, not news from elsewhere.
    void stopRequested(const QString &id);

private:
    struct Live
    {
        JobRecord record;
        QJsonObject rayJob;
        bool archiving = false;
        bool archived = false;
        int failedArchives = 0;
        QDateTime retryAt;
        std::function<void(Result<JobRecord>)> onArchived;
    };

    void onRayJob(const QJsonObject &rayJob);
    void onRayJobDeleted(const QJsonObject &rayJob);
    void check();
    // outcome: the record to archive (state, reason, message set by the caller).
    void archive(const QString &id, JobRecord outcome, bool rayJobGone);
    void snapshotAndArchive(const QString &id, JobRecord outcome, bool rayJobGone);
    void startArchiver(const QString &id, JobRecord outcome, JobSnapshot snapshot, bool rayJobGone);
    // Another tracker archived the job first: take its record as this one's outcome.
    void adoptArchive(const QString &id, const JobRecord &existing);
    void archiveFinished(const QString &id, JobArchiver *archiver);
    void pumpArchives();
    void scheduleRetry(Live &live);
    // The seen-jobs file (TrackerOptions::seenJobsFile).
    void loadSeen();
    void remember(const QString &id, const QJsonObject &rayJob);
    void forget(const QString &id);
    void saveSeen();
    void archiveLostWhileClosed();

    Kube::KubeClient *m_kube;
    S3::S3Client *m_s3;
    TrackerOptions m_options;
    std::unique_ptr<Kube::Informer> m_ownInformer;   // when no informer was given
    Kube::Informer *m_informer;
    QHash<QString, Live> m_live;                 // by job id
    QHash<QString, JobRecord> m_submitting;
    QSet<QString> m_done;                        // archived by this tracker (their delete echoes back)
    QSet<QString> m_refused;                     // RayJobs not shaped as the app makes them, warned about once
    QHash<QString, QJsonObject> m_seen;          // own jobs seen and not archived: id -> last RayJob
    bool m_seenChecked = false;                  // the jobs lost while closed were looked for
    QList<std::function<void()>> m_archiveQueue;
    int m_archivesRunning = 0;
    QTimer m_timer;
};

} // namespace Starforge::Job
