#pragma once

// What the commands on one job share: reading a part of an ended job's archive, and finding a
// job Starforge owns before stopping or deleting it.

#include "cli/command.h"
#include "core/job/jobsnapshot.h"

#include <functional>

namespace Starforge::Cluster {
class CapacityModel;
}

namespace Starforge::Cli {

class JobCommand : public Command
{
    Q_OBJECT
public:
    using Command::Command;

protected:
    // One object of a job's archive (keyOf: an ArchiveKeys function), or fails saying the job
    // is neither on the cluster nor in the history.
    void readArchived(const QString &jobId, QString (*keyOf)(const QString &), std::function<void(const QByteArray &)> then);
    // Opens a clients-only session, finds JOB and refuses a RayJob Starforge did not make;
    // then(snapshot), its RayJob absent when the cluster no longer has the job.
    void withOwnJob(const QString &job, const QString &verb, std::function<void(const Job::JobSnapshot &)> then);
    // The cluster's capacity, from a session that lists its nodes and pods: the computation the
    // app's tracker and heatmap use. Null when the token may not list them.
    void withCapacity(std::function<void(const Cluster::CapacityModel *)> then);
    // The snapshot of JOB on the session's cluster (a RayJob that is not one is an error).
    void withSnapshot(const QString &job, bool withSubmitterLog, std::function<void(const Job::JobSnapshot &)> then);
};

} // namespace Starforge::Cli
