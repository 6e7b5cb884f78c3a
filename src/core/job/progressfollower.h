#pragma once

// The training progress of running jobs, read live from their drivers' logs: the Jobs panel's
// Progress column ("step 120/500") and the job detail's plot (docs/jobs.md, "Progress").
//
// A ProgressFollower watches a JobTracker. Every job that becomes Running is followed: its
// newest submitter pod is found (the pods of the submitter Job carry the RayJob's name in
// `job-name`), and that pod's log is followed from its first line with a LogStream, each line
// fed to the job's JobProgress. A retried submission makes a new submitter pod, whose
// `ray job logs --follow` replays the driver's log from the start: the progress starts again
// from it. When the log ends while the job still runs, the pods are looked at again later.
//
// One log connection per followed job, so at most maxFollowed jobs are followed at once; the
// viewer's own jobs go first (another's makes room for one of the viewer's). A job that ends
// keeps its last progress here until forgotten (the oldest ended jobs beyond keepEnded go); an
// archived job's progress is read from its archived driver log (readArchivedProgress).

#include "core/job/jobrecord.h"
#include "core/job/progress.h"

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>

namespace Starforge::Kube {
class KubeClient;
class LogStream;
}
namespace Starforge::S3 {
class S3Client;
}

namespace Starforge::Job {

class JobTracker;

struct ProgressFollowerOptions
{
    QString ns;
    int maxFollowed = 16;          // log connections at once
    int podRecheckMs = 5000;       // no submitter pod yet, or its log ended while the job runs
    int keepEnded = 200;           // ended jobs whose last progress is kept
};

class ProgressFollower final : public QObject
{
    Q_OBJECT
public:
    ProgressFollower(Kube::KubeClient *kube, JobTracker *tracker, ProgressFollowerOptions options, QObject *parent = nullptr);
    ~ProgressFollower() override;

    // Follows the tracker's running jobs, now and as they come.
    void start();

    // The job's progress as far as its log has been read; null when it is not known (never
    // followed, or nothing read yet).
    const JobProgress *progress(const QString &jobId) const;
    // The jobs whose logs are being followed now.
    QStringList followed() const;

Q_SIGNALS:
    // The job's progress changed (once per batch of log lines).
    void progressChanged(const QString &jobId);

private:
    struct Followed;

    void onJob(const JobRecord &record);
    void onRemoved(const QString &id);
    void follow(const JobRecord &record);
    void unfollow(const QString &id);
    // Running jobs not followed yet (the follower was full) take the room there is now.
    void fillFreeSlots();
    void retire(std::unique_ptr<Kube::LogStream> stream);
    void findPod(const QString &id);
    void startStream(const QString &id, const QString &pod);
    void scheduleRecheck(const QString &id);
    bool isViewersOwn(const JobRecord &record) const;
    void forgetOldEnded();

    Kube::KubeClient *m_kube;
    QPointer<JobTracker> m_tracker;
    ProgressFollowerOptions m_options;
    QHash<QString, std::shared_ptr<Followed>> m_followed;   // by job id
    QHash<QString, JobProgress> m_progress;                 // every job known, followed or ended
    QStringList m_ended;                                    // ids of ended jobs, oldest first
};

// The progress an archived job's driver log records (read into a temporary file, which may be
// gigabytes, and parsed off the calling thread). done runs once on context's thread, with
// nullopt when the job has no archived driver log or it cannot be read.
void readArchivedProgress(S3::S3Client *s3, const JobRecord &record, QObject *context,
                          std::function<void(std::optional<JobProgress>)> done);

} // namespace Starforge::Job
