// `starforge-cli manifest SPEC` (the RayJob SPEC would make, nothing submitted) and
// `starforge-cli submit SPEC [--wait]` (build, upload, create; --wait follows the job until it
// is archived, as the app's tracker does, and the exit code says how it ended). While the job
// cannot start, --wait prints why (the diagnosis `starforge-cli diagnose` gives) as soon as it is
// known and again whenever it changes.

#include "cli/commands/commands.h"
#include "cli/output.h"
#include "core/cluster/capacity.h"
#include "core/cluster/diagnosis.h"
#include "core/job/capsule.h"
#include "core/job/history.h"
#include "core/job/jobsnapshot.h"
#include "core/job/checkpointforecast.h"
#include "core/job/jobspec.h"
#include "core/job/rayjobbuilder.h"
#include "core/job/submitter.h"
#include "core/job/tracker.h"
#include "core/s3/s3client.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonObject>
#include <QPointer>
#include <QTemporaryDir>
#include <QTimer>

#include <limits>

namespace Starforge::Cli {

namespace {

// The translation context of the messages outside the commands (lupdate reads it from the macro).
struct Text
{
    Q_DECLARE_TR_FUNCTIONS(SubmitCommand)
};

QString stageName(Job::Submitter::Stage stage)
{
    switch (stage) {
    case Job::Submitter::Stage::Building: return Text::tr("building the Capsule...");
    case Job::Submitter::Stage::Checking: return Text::tr("checking the bucket...");
    case Job::Submitter::Stage::Uploading: return Text::tr("uploading...");
    case Job::Submitter::Stage::Creating: return Text::tr("creating the RayJob...");
    default: return {};
    }
}

// The KubeRay release RayJobs are built for: --kuberay-version, else the cluster's CRD (the
// session asks). Shared by manifest and submit.
class BuildCommand : public Command
{
    Q_OBJECT
public:
    using Command::Command;

protected:
    // Opens a clients-only session that knows the operator; then(version) once it does. With
    // capacity, the session also reads the nodes and pods the fit verdict is made of.
    void withOperatorVersion(std::function<void(const QVersionNumber &)> then, bool capacity = false)
    {
        SessionOptions options = clientsOnly();
        options.probeOperator = true;
        if (capacity) {
            options.followCapacity = true;
            options.failOnFirstListError = true;   // a 403 switches the check off; anything else says so
        }
        if (m_args.values.contains(QStringLiteral("kuberay-version"))) {
            const auto version = QVersionNumber::fromString(m_args.value(QStringLiteral("kuberay-version")));
            if (version.isNull() || version.majorVersion() < 1) {
                fail(Error::invalid(tr("--kuberay-version takes a KubeRay release, e.g. --kuberay-version 1.7")));
                return;
            }
            options.operatorVersion = version;
        }
        openSession(options, [this, then] {
            const Kube::OperatorVersion &found = m_session->operatorVersion();
            using Outcome = Kube::OperatorVersion::Outcome;
            if (found.outcome == Outcome::NotInstalled || found.outcome == Outcome::Unsupported) {
                fail(Error::unavailable(found.message));
                return;
            }
            then(found.assumed());
        });
    }
};

class ManifestCommand final : public BuildCommand
{
    Q_OBJECT
public:
    using BuildCommand::BuildCommand;

    void run() override
    {
        const auto spec = specArgument(QStringLiteral("manifest SPEC [--kuberay-version X.Y]"));
        if (!spec) return;
        withOperatorVersion([this, spec = *spec](const QVersionNumber &version) {
            auto s3 = m_session->bucket();
            if (!s3) {
                fail(s3.error());
                return;
            }
            // The Capsule is built to show its true content address; nothing is uploaded.
            QTemporaryDir work(Job::temporaryCapsuleFolderTemplate());
            const auto built = Job::CapsuleBuilder::build(Job::capsuleOptionsFor(spec, work.filePath(QStringLiteral("capsule.zip")), Job::defaultRunnerPexPath()));
            if (!built) {
                fail(built.error());
                return;
            }
            Job::RayJobInput input;
            input.spec = spec;
            input.jobId = Job::RayJobBuilder::newJobId();
            input.settings = m_session->settings();
            input.operatorVersion = version;
            input.capsule.sha256 = QString::fromLatin1(built->sha256);
            input.capsule.manifestSha256 = QString::fromLatin1(built->manifestSha256());
            auto url = (*s3)->presignedGetUrl(built->objectKey(), Job::capsuleUrlLifetimeSeconds(m_session->settings()));
            if (!url) {
                fail(url.error());
                return;
            }
            input.capsule.url = *url;
            const auto rayJob = Job::RayJobBuilder::build(input);
            if (!rayJob) {
                fail(rayJob.error());
                return;
            }
            printJson(m_out, *rayJob);
            finish(Ok);
        });
    }
};

// "3 days", "1 day", else the table's compact form ("12h00m").
QString ttlInWords(qint64 seconds)
{
    if (seconds > 0 && seconds % 86400 == 0 && seconds / 86400 <= std::numeric_limits<int>::max()) {
        return Text::tr("%n day(s)", nullptr, int(seconds / 86400));
    }
    return formatAge(seconds);
}

class SubmitCommand final : public BuildCommand
{
    Q_OBJECT
public:
    using BuildCommand::BuildCommand;

    void run() override
    {
        const auto spec = specArgument(QStringLiteral("submit SPEC [--wait] [--force] [--json]"));
        if (!spec) return;
        // --force skips the fit check, and with it the reading of every node and pod.
        withOperatorVersion([this, spec = *spec](const QVersionNumber &version) { submit(spec, version); }, !m_args.flag(QStringLiteral("force")));
    }

    // Ctrl-C: a submission is cancelled and cleaned up (finished() follows when it is); a wait
    // stops, leaving the job as it is. A second interrupt quits at once.
    void interrupt() override
    {
        if (isFinished()) return;
        if (m_interrupted) {
            note(tr("interrupted again; quitting without cleaning up"));
            finish(Interrupted);
            return;
        }
        m_interrupted = true;
        if (m_submitter && m_submitter->stage() != Job::Submitter::Stage::Done) {
            note(tr("cancelling the submission (Ctrl-C again to quit at once)..."));
            m_submitter->cancel();   // its finished() reports Cancelled once the leftovers are removed
            return;
        }
        if (m_waiting) note(tr("stopped waiting; the job goes on (see starforge-cli status)"));
        finish(Interrupted);
    }

private:
    // A job that can never run here is refused before anything is built or uploaded, naming the
    // pool and the numbers; one that waits for busy GPUs gets a warning. False when refused.
    bool checkFit(const Job::JobSpec &spec)
    {
        if (m_args.flag(QStringLiteral("force"))) return true;
        const Cluster::CapacityTracker *tracker = m_session->capacity();
        if (!tracker || !tracker->isSynced()) {
            const QString why = m_session->feature(QStringLiteral("capacity")).value_or(FeatureStatus{}).reason;
            if (!json()) note(why.isEmpty() ? tr("whether the job fits was not checked: the capacity is unknown") : tr("whether the job fits was not checked: %1").arg(why));
            return true;
        }
        Cluster::FitRequest request;
        for (const Job::Pool &pool : spec.pools) request.pools.append({pool.name, pool.series, pool.nodes, pool.gpusPerNode});
        const Cluster::FitVerdict verdict = tracker->model().fit(request);
        QStringList never;
        QStringList waits;
        for (const Cluster::PoolVerdict &pool : verdict.pools) {
            if (pool.fit == Cluster::Fit::NeverFits) never << tr("pool %1: %2").arg(pool.request.name, pool.sentence);
            if (pool.fit == Cluster::Fit::FitsWhenFree) waits << tr("pool %1: %2").arg(pool.request.name, pool.sentence);
        }
        if (!never.isEmpty()) {
            fail(Error::invalid(tr("the job can never run on this cluster as it is, so nothing was built or uploaded:\n  %1\n"
                                   "Change the pools (see starforge-cli capacity), or submit it anyway with --force: it then waits "
                                   "as Pending until the cluster has the nodes.")
                                    .arg(never.join(QStringLiteral("\n  ")))));
            return false;
        }
        if (!waits.isEmpty() && !json()) {
            for (const QString &w : std::as_const(waits)) m_err << tr("warning: it waits for busy GPUs: %1").arg(w) << Qt::endl;
        }
        return true;
    }

    void submit(const Job::JobSpec &spec, const QVersionNumber &version)
    {
        auto s3 = m_session->bucket();
        if (!s3) {
            fail(s3.error());
            return;
        }
        if (!checkFit(spec)) return;
        // What is valid but may not do what the spec seems to ask goes to stderr, before the work;
        // with --json, into the submission's line, where a script reads it.
        m_warnings = spec.warnings();
        if (const QString checkpoints = Job::CheckpointForecast::forSpec(spec).warning(); !checkpoints.isEmpty()) m_warnings << checkpoints;
        if (!json()) {
            for (const QString &warning : std::as_const(m_warnings)) m_err << tr("warning: %1").arg(warning) << Qt::endl;
        }
        Job::SubmitOptions options;
        options.spec = spec;
        options.settings = m_session->settings();
        options.runnerPexPath = Job::defaultRunnerPexPath();
        options.operatorVersion = version;
        m_submitter = new Job::Submitter(m_session->kube(), *s3, options, work());
        connect(m_submitter, &Job::Submitter::stageChanged, this, [this](Job::Submitter::Stage stage) {
            if (!json() && !stageName(stage).isEmpty()) m_err << stageName(stage) << Qt::endl;
        });
        connect(m_submitter, &Job::Submitter::finished, this, [this] { submitted(); });
        m_submitter->start();
    }

    void submitted()
    {
        const Result<Job::Submission> &result = m_submitter->result();
        if (!result) {
            if (m_submitter->stage() == Job::Submitter::Stage::Cancelled) {
                note(result.error().message);
                finish(Interrupted);
                return;
            }
            fail(result.error());
            return;
        }
        const Job::Submission &s = *result;
        if (json()) {
            printJsonLine(m_out, QJsonObject{{QStringLiteral("id"), s.jobId},
                                             {QStringLiteral("name"), s.rayJobName},
                                             {QStringLiteral("namespace"), m_session->ns()},
                                             {QStringLiteral("capsuleSha256"), s.capsuleSha256},
                                             {QStringLiteral("capsuleSize"), static_cast<double>(s.capsuleSize)},
                                             {QStringLiteral("uploadedBytes"), static_cast<double>(s.uploadedBytes)},
                                             {QStringLiteral("warnings"), QJsonArray::fromStringList(m_warnings)}});
        } else {
            m_out << tr("submitted job %1 (RayJob %2 in %3)").arg(s.jobId, s.rayJobName, m_session->ns()) << Qt::endl
                  << "capsule  "   // the label stays English, as `capsule build`'s
                  << (s.uploadedBytes == 0 ? tr("%1, %2, already in the bucket").arg(s.capsuleSha256, byteCount(s.capsuleSize))
                                           : tr("%1, %2, %3 uploaded").arg(s.capsuleSha256, byteCount(s.capsuleSize), byteCount(s.uploadedBytes)))
                  << Qt::endl;
        }
        if (m_args.flag(QStringLiteral("wait"))) {
            waitFor(s.jobId, m_session->operatorVersion());
        } else {
            // Nothing follows the job from here: say who archives its logs, and for how long
            // the cluster keeps them without that (docs/jobs.md, "Keeping logs while nobody watches").
            if (!json()) {
                note(tr("its logs are archived to the bucket while the Starforge app or `starforge-cli jobs --follow` runs; "
                        "without either, the cluster deletes the head and worker logs %1 after the job ends "
                        "(FORGE_KUBERAY_TTL_SECONDS)")
                         .arg(ttlInWords(m_session->settings().ttlSeconds)));
            }
            finish(Ok);
        }
    }

    // Follows one job until it is archived, printing its state changes. The session's tracker
    // enforces the pre-running deadline as the app's does, with the same capacity evidence.
    void waitFor(const QString &jobId, const Kube::OperatorVersion &found)
    {
        m_waiting = true;
        SessionOptions options;
        options.verifyAccess = false;
        options.operatorVersion = found.assumed();
        options.followEvents = false;
        options.onlyJobId = jobId;
        options.giveUpAfterSeconds = LostClusterSeconds;
        options.giveUpWhenSourceStops = true;
        openSession(
            options, [this, jobId] { checkStillThere(jobId); },
            [jobId](const Error &error) {
                return Error{error.code, tr("lost the cluster while waiting for job %1: %2 The job may still run; see `starforge-cli status %1` once the cluster answers.")
                                             .arg(jobId, error.message)};
            });
        // A rebuilt session (after the cluster came back) has a new tracker: follow that one.
        connect(m_session, &Session::partsChanged, this, [this, jobId] { follow(jobId); });
        follow(jobId);
        // Why the job does not start, looked at again every few seconds while it is Pending.
        m_diagnoseTimer.setInterval(DiagnoseIntervalMs);
        connect(&m_diagnoseTimer, &QTimer::timeout, this, [this, jobId] { diagnoseIfPending(jobId); });
        m_diagnoseTimer.start();
        diagnoseIfPending(jobId);
    }

    static constexpr int DiagnoseIntervalMs = 2000;

    // A Pending job's snapshot diagnosed with the session's capacity, the evidence `starforge-cli
    // diagnose` uses. Printed when the cause or its sentence differs from the last one printed;
    // nothing while the cause is unknown and unexplained (the pods are being made).
    void diagnoseIfPending(const QString &jobId)
    {
        if (isFinished() || m_diagnosing || !m_session->kube()) return;
        const auto record = m_session->jobs() ? m_session->jobs()->job(jobId) : std::nullopt;
        if (!record) return;
        if (record->state == Job::JobState::Submitting) return;
        if (record->state != Job::JobState::Pending) {
            m_diagnoseTimer.stop();   // running or ended: the tracker's lines say the rest
            return;
        }
        m_diagnosing = true;
        Job::fetchJobSnapshot(m_session->kube(), Job::SnapshotRequest::of(m_session->ns(), jobId), this, [this, jobId](Result<Job::JobSnapshot> snapshot) {
            m_diagnosing = false;
            if (isFinished() || !snapshot || !snapshot->rayJob) return;   // a failed read is tried again at the next tick
            if (Job::JobRecord::fromRayJob(*snapshot->rayJob).state != Job::JobState::Pending) return;
            const Cluster::CapacityTracker *capacity = m_session->capacity();
            const Cluster::CapacityModel *model = capacity && capacity->isSynced() ? &capacity->model() : nullptr;
            const Cluster::Diagnosis d = Cluster::diagnose(snapshot->diagnosisInput(model, m_session->settings().gpuNodeLabel));
            if (d.cause == Cluster::Cause::Unknown && d.message.isEmpty()) return;
            const QString shown = d.causeId() + u'\n' + d.message;
            if (shown == m_lastDiagnosis) return;
            m_lastDiagnosis = shown;
            if (json()) {
                QJsonObject line = d.toJson();
                line.remove(QStringLiteral("evidence"));   // `starforge-cli diagnose --json` has it
                printJsonLine(m_out, QJsonObject{{QStringLiteral("id"), jobId}, {QStringLiteral("diagnosis"), line}});
            } else {
                m_err << tr("%1: why %2: %3").arg(jobId, d.causeId(), d.message) << Qt::endl;
            }
        });
    }

    void follow(const QString &jobId)
    {
        Job::JobTracker *tracker = m_session->jobs();
        if (!tracker || tracker == m_followed) return;
        m_followed = tracker;
        connect(tracker, &Job::JobTracker::jobChanged, this, [this](const Job::JobRecord &record) {
            if (!json()) m_err << record.id << ": " << Job::jobStateName(record.state) << (record.message.isEmpty() ? QString() : QStringLiteral(" - ") + record.message) << Qt::endl;
        });
        connect(tracker, &Job::JobTracker::archiveFailed, this, [this](const QString &id, const QString &message) { note(id + QStringLiteral(": ") + message); });
        connect(tracker, &Job::JobTracker::jobArchived, this, [this](const Job::JobRecord &record) { report(record); });
        connect(tracker, &Job::JobTracker::jobRemoved, this, [this, jobId](const QString &id) {
            if (id == jobId) endedElsewhere(jobId);   // after jobArchived this does nothing: the wait has finished
        });
    }

    void checkStillThere(const QString &jobId)
    {
        if (m_session->jobs() && !m_session->jobs()->job(jobId)) endedElsewhere(jobId);
    }

    void report(const Job::JobRecord &record)
    {
        if (isFinished()) return;
        if (json()) {
            printJsonLine(m_out, recordSummary(record));
        } else {
            m_out << record.id << " " << record.displayState() << (record.message.isEmpty() ? QString() : QStringLiteral(": ") + record.message) << Qt::endl;
            for (const QString &lost : record.lost) m_out << tr("  not archived: %1").arg(lost) << Qt::endl;
        }
        finish(record.state == Job::JobState::Succeeded ? Ok : JobFailed);
    }

    // The job left the cluster without this tracker archiving it: another tracker (the GUI's,
    // another submit --wait) archived it first, or `starforge-cli delete` removed it. Its
    // archive, if any, says how it ended; without this check the wait would never end.
    void endedElsewhere(const QString &jobId)
    {
        if (isFinished()) return;
        Job::readArchivedJob(m_session->s3(), jobId, this, [this, jobId](Result<Job::JobRecord> record) {
            if (record) {
                report(*record);
            } else if (record.error().code != Error::Code::NotFound) {
                fail(record.error());
            } else if (!isFinished()) {
                const QString message = tr("job %1 was deleted before it ended (starforge-cli delete); nothing was archived").arg(jobId);
                if (json()) {
                    printJson(m_err, QJsonObject{{QStringLiteral("error"), message}});
                } else {
                    note(message);
                }
                finish(JobFailed);
            }
        });
    }

    QPointer<Job::Submitter> m_submitter;
    QStringList m_warnings;   // the spec's and the checkpoint forecast's, for --json's line
    QPointer<Job::JobTracker> m_followed;
    QTimer m_diagnoseTimer;
    bool m_diagnosing = false;
    QString m_lastDiagnosis;
    bool m_waiting = false;
    bool m_interrupted = false;
};

} // namespace

std::unique_ptr<Command> makeManifestCommand(const CommandContext &context)
{
    return std::make_unique<ManifestCommand>(context);
}

std::unique_ptr<Command> makeSubmitCommand(const CommandContext &context)
{
    return std::make_unique<SubmitCommand>(context);
}

} // namespace Starforge::Cli

#include "submitcommand.moc"
