#include "cli/commands/jobcommand.h"

#include "core/cluster/capacity.h"
#include "core/job/history.h"
#include "core/job/jobactions.h"
#include "core/job/jobrecord.h"

namespace Starforge::Cli {

void JobCommand::readArchived(const QString &jobId, QString (*keyOf)(const QString &), std::function<void(const QByteArray &)> then)
{
    auto s3 = m_session->bucket();
    if (!s3) {
        fail(Error::notFound(tr("job %1 is not on the cluster, and the archive cannot be read: %2").arg(jobId, s3.error().message)));
        return;
    }
    Job::readArchivedObject(*s3, keyOf(jobId), this, [this, jobId, then = std::move(then)](Result<QByteArray> data) {
        if (!data) {
            fail(data.error().code == Error::Code::NotFound ? Error::notFound(tr("job %1 is neither on the cluster nor in the job history").arg(jobId))
                                                            : data.error());
            return;
        }
        then(*data);
    });
}

void JobCommand::withCapacity(std::function<void(const Cluster::CapacityModel *)> then)
{
    openSession(capacityOnly(), [this, then] {
        const Cluster::CapacityTracker *capacity = m_session->capacity();
        then(capacity && capacity->isSynced() ? &capacity->model() : nullptr);
    });
}

void JobCommand::withSnapshot(const QString &job, bool withSubmitterLog, std::function<void(const Job::JobSnapshot &)> then)
{
    const auto request = Job::SnapshotRequest::of(m_session->ns(), job, withSubmitterLog);
    Job::fetchCheckedSnapshot(m_session->kube(), request, this, [this, then = std::move(then)](Result<Job::JobSnapshot> snapshot) {
        if (!snapshot) {
            fail(snapshot.error());
            return;
        }
        then(*snapshot);
    });
}

void JobCommand::withOwnJob(const QString &job, const QString &verb, std::function<void(const Job::JobSnapshot &)> then)
{
    openSession(clientsOnly(), [this, job, verb, then] {
        if (auto s3 = m_session->bucket(); !s3) {
            fail(s3.error());
            return;
        }
        withSnapshot(job, false, [this, verb, then](const Job::JobSnapshot &snapshot) {
            if (snapshot.rayJob) {
                if (auto allowed = Job::checkMayActOn(*snapshot.rayJob, m_session->viewer(), m_session->ns(), verb); !allowed) {
                    fail(allowed.error());
                    return;
                }
            }
            then(snapshot);
        });
    });
}

} // namespace Starforge::Cli
