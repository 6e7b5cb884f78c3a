// The commands that end a job: `starforge-cli stop JOB` (archived as Stopped, then its RayJob
// deleted, as the app's Stop does) and `starforge-cli delete JOB` (gone for good, archive
// included; Job::deleteJob). Both refuse RayJobs Starforge did not make and other people's jobs.

#include "cli/commands/commands.h"
#include "cli/commands/jobcommand.h"
#include "cli/output.h"
#include "core/job/history.h"
#include "core/job/jobactions.h"
#include "core/job/tracker.h"

#include <QJsonObject>

namespace Starforge::Cli {

namespace {

class StopCommand final : public JobCommand
{
    Q_OBJECT
public:
    using JobCommand::JobCommand;

    void run() override
    {
        const auto job = jobArgument(QStringLiteral("stop JOB"));
        if (!job) return;
        // The job's id first (JOB may be its RayJob name), then a tracker on that job alone.
        withOwnJob(*job, QStringLiteral("stop"), [this, job = *job](const Job::JobSnapshot &snapshot) {
            const QString id = snapshot.jobId.isEmpty() ? job : snapshot.jobId;
            if (!snapshot.rayJob) {
                alreadyEnded(id);
                return;
            }
            SessionOptions options;
            options.verifyAccess = false;
            options.probeOperator = false;
            options.followCapacity = false;
            options.followEvents = false;
            options.onlyJobId = id;
            options.giveUpAfterSeconds = LostClusterSeconds;
            options.giveUpWhenSourceStops = true;
            openSession(
                options, [this, id] { stop(id); },
                [id](const Error &error) { return Error{error.code, tr("lost the cluster while stopping job %1: %2").arg(id, error.message)}; });
        });
    }

private:
    // Not on the cluster: ended and archived already, or no such job at all.
    void alreadyEnded(const QString &id)
    {
        Job::readArchivedJob(m_session->s3(), id, this, [this, id](Result<Job::JobRecord> record) {
            if (!record) {
                fail(record.error());   // "neither on the cluster nor in the job history"
                return;
            }
            fail(Error::invalid(tr("job %1 has already ended: it is %2 (see `starforge-cli status %1`); there is nothing to stop").arg(id, record->displayState())));
        });
    }

    void stop(const QString &id)
    {
        Job::JobTracker *tracker = m_session->jobs();
        if (!tracker) {
            fail(Error::unavailable(m_session->feature(QStringLiteral("jobs")).value_or(FeatureStatus{}).reason));
            return;
        }
        tracker->stopJob(id, [this](Result<Job::JobRecord> stopped) {
            if (!stopped) {
                fail(stopped.error());
                return;
            }
            if (json()) {
                printJson(m_out, recordSummary(*stopped));
            } else {
                m_out << tr("job %1 %2; its logs and events are in jobs/%1/").arg(stopped->id, stopped->displayState()) << Qt::endl;
            }
            finish(Ok);
        });
    }
};

class DeleteCommand final : public JobCommand
{
    Q_OBJECT
public:
    using JobCommand::JobCommand;

    void run() override
    {
        const auto job = jobArgument(QStringLiteral("delete JOB"));
        if (!job) return;
        withOwnJob(*job, QStringLiteral("delete"), [this, job = *job](const Job::JobSnapshot &snapshot) {
            Job::deleteJob(m_session->kube(), m_session->s3(), m_session->ns(), m_session->viewer(), snapshot, job, this, [this](Result<Job::DeletedJob> deleted) {
                if (!deleted) {
                    fail(deleted.error());
                    return;
                }
                if (json()) {
                    printJson(m_out, QJsonObject{{QStringLiteral("id"), deleted->id},
                                                 {QStringLiteral("rayJobDeleted"), deleted->rayJobDeleted},
                                                 {QStringLiteral("archiveObjectsDeleted"), deleted->archiveObjectsDeleted}});
                } else {
                    // One sentence per case: word order differs between languages.
                    const int objects = deleted->archiveObjectsDeleted;
                    if (deleted->rayJobDeleted && objects > 0) {
                        m_out << tr("deleted job %1: its RayJob and its archive (%n object(s))", nullptr, objects).arg(deleted->id);
                    } else if (deleted->rayJobDeleted) {
                        m_out << tr("deleted job %1: its RayJob").arg(deleted->id);
                    } else if (objects > 0) {
                        m_out << tr("deleted job %1: its archive (%n object(s))", nullptr, objects).arg(deleted->id);
                    } else {
                        m_out << tr("deleted job %1: ").arg(deleted->id);
                    }
                    m_out << Qt::endl;
                }
                finish(Ok);
            });
        });
    }
};

} // namespace

std::unique_ptr<Command> makeStopCommand(const CommandContext &context)
{
    return std::make_unique<StopCommand>(context);
}

std::unique_ptr<Command> makeDeleteCommand(const CommandContext &context)
{
    return std::make_unique<DeleteCommand>(context);
}

} // namespace Starforge::Cli

#include "endcommands.moc"
