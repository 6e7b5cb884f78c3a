// starforge-cli's commands that make or end jobs: capsule build, manifest, submit [--wait],
// stop, delete; and the session they share with the read-only commands (clustercommands.cpp).

#include "cli/cliapplication.h"
#include "cli/clustersession.h"
#include "cli/output.h"
#include "core/config/embeddedsandbox.h"
#include "core/config/profilemanager.h"
#include "core/job/capsule.h"
#include "core/job/history.h"
#include "core/job/jobsnapshot.h"
#include "core/job/jobspec.h"
#include "core/job/rayjobbuilder.h"
#include "core/job/submitter.h"
#include "core/job/tracker.h"
#include "core/kube/kubeclient.h"
#include "core/kube/operatorprobe.h"
#include "core/kube/resourcekind.h"
#include "core/logging/logging.h"
#include "core/s3/s3client.h"
#include "core/secrets/secretstore.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonObject>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTimer>

namespace Starforge::Cli {

QString stoppedSandbox(const QString &connectionFile);   // cliapplication.cpp
void fetchSnapshot(Kube::KubeClient *kube, const Job::SnapshotRequest &request, QObject *context, std::function<void(Result<Job::JobSnapshot>)> done);

// Job::fetchJobSnapshot, and a RayJob without a name taken for what it is: a 200 that is not a
// Kubernetes object (FORGE_K8S_API_SERVER pointing at a web UI or a proxy's login page), which
// `status` would otherwise print as an empty Pending job. Used by clustercommands.cpp too.
void fetchSnapshot(Kube::KubeClient *kube, const Job::SnapshotRequest &request, QObject *context, std::function<void(Result<Job::JobSnapshot>)> done)
{
    Job::fetchJobSnapshot(kube, request, context, [job = request.job, done = std::move(done)](Result<Job::JobSnapshot> snapshot) {
        if (snapshot && snapshot->rayJob && snapshot->rayJobName.isEmpty()) {
            done(Error::invalid(QStringLiteral("Could not read job %1: the server's answer is not a RayJob. Is FORGE_K8S_API_SERVER the cluster's API server?").arg(job)));
            return;
        }
        done(std::move(snapshot));
    });
}

namespace {

// A JobSpec for a folder packed without one: the Capsule is still complete (jobspec.json,
// manifest.json, runner.pex), named after the folder.
Job::JobSpec minimalSpec(const QString &dir)
{
    QString name = QFileInfo(dir).fileName().toLower();
    name.replace(QRegularExpression(QStringLiteral("[^a-z0-9]+")), QStringLiteral("-"));
    name = name.left(Job::JobSpec::MaxNameLength - 4);
    while (name.endsWith(u'-')) name.chop(1);
    if (name.isEmpty() || !name.at(0).isLetter()) name.prepend(QStringLiteral("job-"));
    Job::JobSpec spec;
    spec.name = name;
    spec.recipe.algorithm = QStringLiteral("grpo");
    spec.recipe.config = QStringLiteral("config.yaml");
    spec.pools = {Job::Pool{QStringLiteral("train"), QStringLiteral("default"), 1, 8}};
    return spec;
}

QString runnerPexPath()
{
    return QCoreApplication::applicationDirPath() + QStringLiteral("/../share/starforge/runner.pex");
}

QString stageName(Job::Submitter::Stage stage)
{
    switch (stage) {
    case Job::Submitter::Stage::Building: return QStringLiteral("building the Capsule");
    case Job::Submitter::Stage::Checking: return QStringLiteral("checking the bucket");
    case Job::Submitter::Stage::Uploading: return QStringLiteral("uploading");
    case Job::Submitter::Stage::Creating: return QStringLiteral("creating the RayJob");
    case Job::Submitter::Stage::Done: return QStringLiteral("submitted");
    default: return {};
    }
}

QJsonObject recordSummary(const Job::JobRecord &record)
{
    return QJsonObject{{QStringLiteral("id"), record.id},
                       {QStringLiteral("name"), record.rayJobName},
                       {QStringLiteral("state"), Job::jobStateName(record.state)},
                       {QStringLiteral("archived"), record.archived},
                       {QStringLiteral("reason"), record.reason},
                       {QStringLiteral("message"), record.message},
                       {QStringLiteral("cause"), record.cause},
                       {QStringLiteral("endedAt"), record.ended.isValid() ? record.ended.toUTC().toString(Qt::ISODate) : QString()},
                       {QStringLiteral("lost"), QJsonArray::fromStringList(record.lost)}};
}

// Whether a RayJob is one of Starforge's: made by it (managed-by label) with a job id. Only
// those are stopped or deleted; anyone else's RayJob in the namespace is left alone.
bool isStarforgeRayJob(const QJsonObject &rayJob)
{
    const QJsonObject labels = rayJob[QStringLiteral("metadata")][QStringLiteral("labels")].toObject();
    return labels.value(QLatin1String(Job::Labels::ManagedBy)).toString() == QLatin1String(Job::Labels::ManagedByValue)
        && !labels.value(QLatin1String(Job::Labels::JobId)).toString().isEmpty();
}

Error notStarforgeRayJob(const QString &name, const QString &ns, const QString &verb)
{
    return Error::invalid(QStringLiteral("RayJob %1 was not made by Starforge (it lacks the %2=%3 label); Starforge does not %4 it "
                                         "(kubectl delete rayjob %1 -n %5 would)")
                              .arg(name, QLatin1String(Job::Labels::ManagedBy), QLatin1String(Job::Labels::ManagedByValue), verb, ns));
}

// The tracker's informer retries a lost API server forever and says nothing, so a command that
// follows a job through it (submit --wait, stop) would hang without a word when the cluster goes
// away: a stopped sandbox, a dropped VPN, a revoked token. This asks the server every few
// seconds beside it: lost() runs at once when the sandbox has stopped or the server refuses the
// token, and after LostClusterSeconds without an answer otherwise; note() tells the user.
constexpr int ProbeIntervalMs = 5000;

void watchCluster(Kube::KubeClient *kube, const QString &ns, const QString &connectionFile, QObject *owner,
                  std::function<void(const QString &)> note, std::function<void(const Error &)> lost)
{
    struct Watch
    {
        QDateTime failingSince;
        bool asking = false;
    };
    auto watch = std::make_shared<Watch>();
    auto *timer = new QTimer(owner);
    timer->setInterval(ProbeIntervalMs);
    QObject::connect(timer, &QTimer::timeout, owner, [kube, ns, connectionFile, owner, note, lost, watch, timer] {
        if (watch->asking) return;
        watch->asking = true;
        Kube::ApiRequest probe;
        probe.path = Kube::ResourceKind::rayJobs().path(ns);
        probe.query.addQueryItem(QStringLiteral("limit"), QStringLiteral("1"));
        probe.what = QStringLiteral("reach the cluster (list RayJobs in namespace %1)").arg(ns);
        kube->send(probe, owner, [connectionFile, note, lost, watch, timer](const Kube::ApiResult &result) {
            watch->asking = false;
            if (result.ok()) {
                if (watch->failingSince.isValid()) note(QStringLiteral("the cluster answers again"));
                watch->failingSince = {};
                return;
            }
            const Kube::ApiError &error = *result.error;
            const QDateTime now = QDateTime::currentDateTimeUtc();
            if (!error.isTransient() || !stoppedSandbox(connectionFile).isEmpty()) {
                timer->stop();
                lost(error.toError());
            } else if (!watch->failingSince.isValid()) {
                watch->failingSince = now;
                note(QStringLiteral("%1; still trying for %2 s").arg(error.message).arg(LostClusterSeconds));
            } else if (watch->failingSince.secsTo(now) >= LostClusterSeconds) {
                timer->stop();
                lost(Error::unavailable(QStringLiteral("%1 The cluster has not answered for %2 s.").arg(error.message).arg(watch->failingSince.secsTo(now))));
            }
        });
    });
    timer->start();
}

} // namespace

std::optional<QString> CliApplication::jobArgument(const QString &usage)
{
    if (m_args.positionals.size() != 2) {
        fail(Error::invalid(QStringLiteral("usage: starforge-cli %1").arg(usage)));
        return std::nullopt;
    }
    const QString argument = m_args.positionals.at(1);
    // A JOB goes into API paths and bucket keys: only a job id or a RayJob name (a DNS-1123
    // subdomain) may, not "" (the whole collection) or "../x". SPEC is a file.
    static const QRegularExpression kubeName(QStringLiteral("^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$"));
    if (usage.section(u' ', 1, 1) == u"JOB" && !kubeName.match(argument).hasMatch()) {
        fail(Error::invalid(QStringLiteral("'%1' is not a job id or a RayJob name (see `starforge-cli jobs` and `starforge-cli history`)").arg(argument)));
        return std::nullopt;
    }
    return argument;
}

std::optional<Job::JobSpec> CliApplication::specArgument(const QString &usage)
{
    const auto path = jobArgument(usage);
    if (!path) return std::nullopt;
    auto spec = Job::JobSpec::load(*path);
    if (!spec) {
        fail(spec.error());
        return std::nullopt;
    }
    return *spec;
}

void CliApplication::openSession(std::function<void()> then)
{
    auto open = [this, then](const Config::EffectiveConfig &config) {
        auto session = ClusterSession::open(config);
        if (!session) {
            fail(session.error());
            return;
        }
        m_session = std::move(session).value();
        then();
    };
    const QString connectionFile = m_args.value(QStringLiteral("connection-file"));
    if (m_args.values.contains(QStringLiteral("connection-file"))) {   // --connection-file "" too: not a silent fallback to a profile
        if (m_args.values.contains(QStringLiteral("profile"))) {
            fail(Error::invalid(QStringLiteral("give --profile or --connection-file, not both")));
            return;
        }
        if (connectionFile.isEmpty() || !QFileInfo::exists(connectionFile)) {
            // The sandbox writes the file once it is ready and removes it when it stops.
            fail(Error::invalid(QStringLiteral("there is no connection file '%1': start the sandbox first "
                                               "(starforge-sandbox --connection-file FILE writes it once it is ready, and removes it when it stops)")
                                    .arg(connectionFile)));
            return;
        }
        auto connection = Config::SandboxConnection::read(connectionFile);
        if (!connection) {
            fail(connection.error());
            return;
        }
        open(Config::EffectiveConfig::resolve(Config::Profile{QStringLiteral("sandbox"), connection->settings}, m_environment, connection->secrets));
        return;
    }
    if (auto loaded = loadStore(); !loaded) {
        fail(loaded.error());
        return;
    }
    const QString name = selectedProfile();
    const auto profile = m_store->profile(name);
    if (name.isEmpty() || !profile) {
        fail(Error::invalid(name.isEmpty() ? QStringLiteral("no connection profile is active: pass --profile NAME or --connection-file FILE (the sandbox's), "
                                                            "or make one with `starforge-cli profile import-kubeconfig`")
                                           : QStringLiteral("there is no profile '%1' (see `starforge-cli profile list`)").arg(name)));
        return;
    }
    m_secrets->readAll(name, this, [this, profile, open](Result<QMap<QString, QString>> secrets) {
        if (!secrets) {
            fail(secrets.error());
            return;
        }
        open(Config::EffectiveConfig::resolve(profile, m_environment, *secrets));
    });
}

void CliApplication::runCapsule()
{
    const QStringList &p = m_args.positionals;
    if (p.value(1) != u"build" || p.size() != 3) {
        fail(Error::invalid(QStringLiteral("usage: starforge-cli capsule build DIR [--spec SPEC] [--out FILE] [--json]")));
        return;
    }
    const QString dir = QFileInfo(p.at(2)).absoluteFilePath();
    if (!QFileInfo(dir).isDir()) {
        fail(Error::invalid(QStringLiteral("%1 is not a folder; give the code folder to pack.").arg(p.at(2))));
        return;
    }
    Job::JobSpec spec;
    QString specPath = m_args.value(QStringLiteral("spec"));
    if (specPath.isEmpty() && QFileInfo::exists(dir + QStringLiteral("/jobspec.json"))) {
        specPath = dir + QStringLiteral("/jobspec.json");   // the folder's own JobSpec
    }
    if (!specPath.isEmpty()) {
        auto loaded = Job::JobSpec::load(specPath);
        if (!loaded) {
            fail(loaded.error());
            return;
        }
        spec = *loaded;
    } else {
        spec = minimalSpec(dir);
    }
    Job::CapsuleOptions options;
    options.sourceDir = dir;
    options.outputPath = QFileInfo(m_args.values.contains(QStringLiteral("out")) ? m_args.value(QStringLiteral("out"))
                                                                                 : QStringLiteral("capsule.zip")).absoluteFilePath();
    options.jobSpecJson = spec.canonicalJson();
    options.runnerPexPath = runnerPexPath();
    options.excludePatterns = spec.excludes;
    // A JobSpec kept in the code folder travels as the canonical jobspec.json instead, as on
    // submit (Job::capsuleOptionsFor); a top-level jobspec.json is a JobSpec too.
    if (!spec.sourcePath.isEmpty()) {
        options.excludePatterns << QStringLiteral("/jobspec.json");
        const QString relative = QDir(dir).relativeFilePath(spec.sourcePath);
        if (!relative.startsWith(QLatin1String("../"))) options.excludePatterns << QLatin1Char('/') + relative;
    }
    const auto built = Job::CapsuleBuilder::build(options);
    if (!built) {
        fail(built.error());
        return;
    }
    if (m_args.flag(QStringLiteral("json"))) {
        printJson(m_out, QJsonObject{{QStringLiteral("path"), built->zipPath},
                                     {QStringLiteral("sha256"), QString::fromLatin1(built->sha256)},
                                     {QStringLiteral("size"), static_cast<double>(built->size)},
                                     {QStringLiteral("files"), built->fileCount},
                                     {QStringLiteral("objectKey"), built->objectKey()},
                                     {QStringLiteral("jobSpec"), specPath.isEmpty() ? QStringLiteral("minimal") : QFileInfo(specPath).absoluteFilePath()}});
    } else {
        m_out << "capsule  " << built->zipPath << Qt::endl
              << "sha256   " << built->sha256 << Qt::endl
              << "size     " << built->size << " bytes" << Qt::endl
              << "files    " << built->fileCount << Qt::endl;
        if (specPath.isEmpty()) {
            m_out << "jobspec  minimal (no --spec given), name " << spec.name << Qt::endl;
        }
    }
    finish(Ok);
}


void CliApplication::interrupt()
{
    if (m_finished) {
        return;
    }
    if (m_interrupted) {
        m_err << "starforge-cli: interrupted again; quitting without cleaning up" << Qt::endl;
        finish(Interrupted);
        return;
    }
    m_interrupted = true;
    if (auto *submitter = qobject_cast<Job::Submitter *>(m_work.get()); submitter && submitter->stage() != Job::Submitter::Stage::Done) {
        m_err << "starforge-cli: cancelling the submission (Ctrl-C again to quit at once)..." << Qt::endl;
        submitter->cancel();   // its finished() reports Cancelled once the leftovers are removed
        return;
    }
    if (qobject_cast<Job::JobTracker *>(m_work.get())) {
        m_err << "starforge-cli: stopped waiting; the job goes on (see starforge-cli status)" << Qt::endl;
    }
    finish(Interrupted);
}

void CliApplication::withOperatorVersion(std::function<void(QVersionNumber)> then)
{
    // --kuberay-version wins; else the cluster's CRD says which release runs there.
    if (m_args.values.contains(QStringLiteral("kuberay-version"))) {
        const auto version = QVersionNumber::fromString(m_args.value(QStringLiteral("kuberay-version")));
        if (version.isNull() || version.majorVersion() < 1) {
            fail(Error::invalid(QStringLiteral("--kuberay-version takes a KubeRay release, e.g. --kuberay-version 1.7")));
            return;
        }
        then(version);
        return;
    }
    auto *probe = new Kube::OperatorProbe(m_session->kube.get(), this);
    connect(probe, &Kube::OperatorProbe::finished, this, [this, probe, then](const Kube::OperatorVersion &found) {
        probe->deleteLater();
        switch (found.outcome) {
        case Kube::OperatorVersion::Outcome::Detected:
            then(found.version);
            return;
        case Kube::OperatorVersion::Outcome::Unknown:
            if (!m_args.flag(QStringLiteral("json"))) m_err << "starforge-cli: note: " << Logging::redact(found.message) << Qt::endl;
            then(found.assumed());
            return;
        default:
            fail(Error::unavailable(found.message));
            return;
        }
    });
    probe->start();
}

void CliApplication::runManifest()
{
    const auto spec = specArgument(QStringLiteral("manifest SPEC [--kuberay-version X.Y]"));
    if (!spec) return;
    openSession([this, spec = *spec] { withOperatorVersion([this, spec](const QVersionNumber &version) {
        // The Capsule is built to show its true content address; nothing is uploaded.
        QTemporaryDir work;
        const auto built = Job::CapsuleBuilder::build(Job::capsuleOptionsFor(spec, work.filePath(QStringLiteral("capsule.zip")), runnerPexPath()));
        if (!built) {
            fail(built.error());
            return;
        }
        Job::RayJobInput input;
        input.spec = spec;
        input.jobId = Job::RayJobBuilder::newJobId();
        input.settings = m_session->settings;
        input.operatorVersion = version;
        input.capsule.sha256 = QString::fromLatin1(built->sha256);
        if (auto s3 = m_session->bucket()) {
            auto url = (*s3)->presignedGetUrl(built->objectKey(), Job::capsuleUrlLifetimeSeconds(m_session->settings));
            if (!url) {
                fail(url.error());
                return;
            }
            input.capsule.url = *url;
        } else {
            fail(s3.error());
            return;
        }
        const auto rayJob = Job::RayJobBuilder::build(input);
        if (!rayJob) {
            fail(rayJob.error());
            return;
        }
        printJson(m_out, *rayJob);
        finish(Ok);
    }); });
}

void CliApplication::runSubmit()
{
    const auto spec = specArgument(QStringLiteral("submit SPEC [--wait] [--json]"));
    if (!spec) return;
    openSession([this, spec = *spec] { withOperatorVersion([this, spec](const QVersionNumber &version) {
        auto s3 = m_session->bucket();
        if (!s3) {
            fail(s3.error());
            return;
        }
        Job::SubmitOptions options;
        options.spec = spec;
        options.settings = m_session->settings;
        options.runnerPexPath = runnerPexPath();
        options.operatorVersion = version;
        const bool json = m_args.flag(QStringLiteral("json"));
        auto *submitter = new Job::Submitter(m_session->kube.get(), *s3, options);
        m_work.reset(submitter);
        connect(submitter, &Job::Submitter::stageChanged, this, [this, json](Job::Submitter::Stage stage) {
            if (!json && !stageName(stage).isEmpty() && stage != Job::Submitter::Stage::Done) m_err << stageName(stage) << "..." << Qt::endl;
        });
        connect(submitter, &Job::Submitter::finished, this, [this, submitter, json, version] {
            const Result<Job::Submission> &result = submitter->result();
            if (!result) {
                if (submitter->stage() == Job::Submitter::Stage::Cancelled) {
                    m_err << "starforge-cli: " << result.error().message << Qt::endl;
                    finish(Interrupted);
                    return;
                }
                fail(result.error());
                return;
            }
            const Job::Submission &s = *result;
            if (json) {
                printJsonLine(m_out, QJsonObject{{QStringLiteral("id"), s.jobId},
                                                 {QStringLiteral("name"), s.rayJobName},
                                                 {QStringLiteral("namespace"), m_session->ns()},
                                                 {QStringLiteral("capsuleSha256"), s.capsuleSha256},
                                                 {QStringLiteral("capsuleSize"), static_cast<double>(s.capsuleSize)},
                                                 {QStringLiteral("uploadedBytes"), static_cast<double>(s.uploadedBytes)}});
            } else {
                m_out << "submitted job " << s.jobId << " (RayJob " << s.rayJobName << " in " << m_session->ns() << ")" << Qt::endl
                      << "capsule  " << s.capsuleSha256 << ", " << s.capsuleSize << " bytes, "
                      << (s.uploadedBytes == 0 ? QStringLiteral("already in the bucket") : QStringLiteral("%1 bytes uploaded").arg(s.uploadedBytes)) << Qt::endl;
            }
            if (m_args.flag(QStringLiteral("wait"))) {
                waitForJob(s.jobId, version >= QVersionNumber(1, 6));
            } else {
                finish(Ok);
            }
        });
        submitter->start();
    }); });
}

// Follows one job until it is archived, printing its state changes; the exit code says how it
// ended. The tracker enforces the pre-running deadline as the app does.
void CliApplication::waitForJob(const QString &jobId, bool operatorEnforcesDeadline)
{
    const bool json = m_args.flag(QStringLiteral("json"));
    Job::TrackerOptions options;
    options.ns = m_session->ns();
    options.onlyJobId = jobId;
    options.preRunningDeadlineSeconds = m_session->settings.preRunningDeadlineSeconds;
    options.operatorEnforcesDeadline = operatorEnforcesDeadline;
    options.seriesLabel = m_session->settings.gpuNodeLabel;
    auto s3 = m_session->bucket();
    auto *tracker = new Job::JobTracker(m_session->kube.get(), *s3, options);
    m_work.reset(tracker);
    connect(tracker, &Job::JobTracker::jobChanged, this, [this, json](const Job::JobRecord &record) {
        if (!json) m_err << record.id << ": " << Job::jobStateName(record.state) << (record.message.isEmpty() ? QString() : QStringLiteral(" - ") + record.message) << Qt::endl;
    });
    connect(tracker, &Job::JobTracker::archiveFailed, this, [this](const QString &id, const QString &message) {
        m_err << "starforge-cli: " << id << ": " << Logging::redact(message) << Qt::endl;
    });
    auto report = [this, json](const Job::JobRecord &record) {
        if (m_finished) return;
        if (json) {
            printJsonLine(m_out, recordSummary(record));
        } else {
            m_out << record.id << " " << record.displayState() << (record.message.isEmpty() ? QString() : QStringLiteral(": ") + record.message) << Qt::endl;
            for (const QString &lost : record.lost) m_out << "  not archived: " << lost << Qt::endl;
        }
        finish(record.state == Job::JobState::Succeeded ? Ok : JobFailed);
    };
    connect(tracker, &Job::JobTracker::jobArchived, this, report);
    // The job can leave the cluster without this tracker archiving it: another tracker (the
    // GUI's, another submit --wait) archived it first, or `starforge-cli delete` removed it.
    // Its archive, if any, says how it ended; without this check the wait would never end.
    auto endedElsewhere = [this, tracker, jobId, json, report] {
        if (m_finished) return;
        Job::readArchivedJob(m_session->s3.get(), jobId, tracker, [this, jobId, json, report](Result<Job::JobRecord> record) {
            if (record) {
                report(*record);
            } else if (record.error().code != Error::Code::NotFound) {
                fail(record.error());
            } else if (!m_finished) {
                const QString message = QStringLiteral("job %1 was deleted before it ended (starforge-cli delete); nothing was archived").arg(jobId);
                if (json) {
                    printJson(m_err, QJsonObject{{QStringLiteral("error"), message}});
                } else {
                    m_err << "starforge-cli: " << message << Qt::endl;
                }
                finish(JobFailed);
            }
        });
    };
    connect(tracker, &Job::JobTracker::synced, this, [tracker, jobId, endedElsewhere] {
        if (!tracker->job(jobId)) endedElsewhere();
    });
    connect(tracker, &Job::JobTracker::jobRemoved, this, [jobId, endedElsewhere](const QString &id) {
        if (id == jobId) endedElsewhere();   // after jobArchived this does nothing: the wait has finished
    });
    watchCluster(
        m_session->kube.get(), m_session->ns(), m_args.value(QStringLiteral("connection-file")), tracker,
        [this](const QString &note) { m_err << "starforge-cli: " << Logging::redact(note) << Qt::endl; },
        [this, jobId](const Error &error) {
            fail(Error{error.code, QStringLiteral("lost the cluster while waiting for job %1: %2 The job may still run; see `starforge-cli status %1` once the cluster answers.")
                                       .arg(jobId, error.message)});
        });
    tracker->start();
}

void CliApplication::withOwnJob(const QString &job, const QString &verb, std::function<void(const Job::JobSnapshot *)> then)
{
    openSession([this, job, verb, then] {
        if (auto s3 = m_session->bucket(); !s3) {
            fail(s3.error());
            return;
        }
        const auto request = Job::SnapshotRequest::of(m_session->ns(), job);
        fetchSnapshot(m_session->kube.get(), request, this, [this, verb, then](Result<Job::JobSnapshot> snapshot) {
            if (!snapshot) {
                fail(snapshot.error());
                return;
            }
            if (snapshot->rayJob && !isStarforgeRayJob(*snapshot->rayJob)) {
                fail(notStarforgeRayJob(snapshot->rayJobName, m_session->ns(), verb));
                return;
            }
            then(&*snapshot);
        });
    });
}

void CliApplication::runStop()
{
    const auto job = jobArgument(QStringLiteral("stop JOB"));
    if (!job) return;
    // The job's id first (JOB may be its RayJob name), then a tracker on that job alone.
    withOwnJob(*job, QStringLiteral("stop"), [this, job = *job](const Job::JobSnapshot *snapshot) {
        if (!snapshot->rayJob) {
            // Not on the cluster: ended and archived already, or no such job at all.
            const QString id = snapshot->jobId.isEmpty() ? job : snapshot->jobId;
            Job::readArchivedJob(m_session->s3.get(), id, this, [this, id](Result<Job::JobRecord> record) {
                if (!record) {
                    fail(record.error());   // "neither on the cluster nor in the job history"
                    return;
                }
                fail(Error::invalid(QStringLiteral("job %1 has already ended: it is %2 (see `starforge-cli status %1`); there is nothing to stop")
                                        .arg(id, record->displayState())));
            });
            return;
        }
        Job::TrackerOptions options;
        options.ns = m_session->ns();
        options.onlyJobId = snapshot->jobId;
        options.preRunningDeadlineSeconds = 0;   // this tracker only stops
        auto *tracker = new Job::JobTracker(m_session->kube.get(), *m_session->bucket(), options);
        m_work.reset(tracker);
        const QString id = snapshot->jobId;
        connect(tracker, &Job::JobTracker::synced, this, [this, tracker, id] {
            tracker->stopJob(id, [this](Result<Job::JobRecord> stopped) {
                if (!stopped) {
                    fail(stopped.error());
                    return;
                }
                if (m_args.flag(QStringLiteral("json"))) {
                    printJson(m_out, recordSummary(*stopped));
                } else {
                    m_out << "job " << stopped->id << " " << stopped->displayState() << "; its logs and events are in jobs/" << stopped->id << "/" << Qt::endl;
                }
                finish(Ok);
            });
        });
        watchCluster(
            m_session->kube.get(), m_session->ns(), m_args.value(QStringLiteral("connection-file")), tracker,
            [this](const QString &note) { m_err << "starforge-cli: " << Logging::redact(note) << Qt::endl; },
            [this, id](const Error &error) {
                fail(Error{error.code, QStringLiteral("lost the cluster while stopping job %1: %2").arg(id, error.message)});
            });
        tracker->start();
    });
}

void CliApplication::runDelete()
{
    const auto job = jobArgument(QStringLiteral("delete JOB"));
    if (!job) return;
    withOwnJob(*job, QStringLiteral("delete"), [this, job = *job](const Job::JobSnapshot *snapshot) {
        const QString id = !snapshot->jobId.isEmpty() ? snapshot->jobId : job;
        auto removeArchive = [this, id](bool hadRayJob) {
            S3::S3Reply *listing = m_session->s3->listAllObjects(Job::ArchiveKeys::prefix(id));
            connect(listing, &S3::S3Reply::finished, this, [this, listing, id, hadRayJob] {
                listing->deleteLater();
                if (const auto listed = listing->result(); !listed) {
                    fail(listed.error());
                    return;
                }
                // status.json last, so a history reader never sees a record without its logs.
                QStringList keys;
                for (const auto &object : listing->listing().objects) keys << object.key;
                keys.removeAll(Job::ArchiveKeys::status(id));
                const bool hadArchive = !listing->listing().objects.isEmpty();
                if (hadArchive) keys << Job::ArchiveKeys::status(id);
                if (!hadRayJob && !hadArchive) {
                    fail(Error::notFound(QStringLiteral("job %1 is neither on the cluster nor in the job history").arg(id)));
                    return;
                }
                auto next = std::make_shared<std::function<void()>>();
                *next = [this, keys, id, hadRayJob, hadArchive, next, index = qsizetype(0)]() mutable {
                    if (index == keys.size()) {
                        if (m_args.flag(QStringLiteral("json"))) {
                            printJson(m_out, QJsonObject{{QStringLiteral("id"), id},
                                                         {QStringLiteral("rayJobDeleted"), hadRayJob},
                                                         {QStringLiteral("archiveObjectsDeleted"), static_cast<int>(keys.size())}});
                            finish(Ok);
                            return;
                        }
                        QStringList what;
                        if (hadRayJob) what << QStringLiteral("its RayJob");
                        if (hadArchive) what << QStringLiteral("its archive (%1 objects)").arg(keys.size());
                        m_out << "deleted job " << id << ": " << what.join(QStringLiteral(" and ")) << Qt::endl;
                        finish(Ok);
                        return;
                    }
                    S3::S3Reply *gone = m_session->s3->deleteObject(keys.at(index++));
                    connect(gone, &S3::S3Reply::finished, this, [this, gone, next] {
                        gone->deleteLater();
                        if (const auto deleted = gone->result(); !deleted) {
                            fail(deleted.error());
                            return;
                        }
                        (*next)();
                    });
                };
                (*next)();
            });
        };
        if (!snapshot->rayJob) {
            removeArchive(false);
            return;
        }
        // A live job goes without an archive: delete means gone, logs included. The mark
        // first tells trackers (the GUI's) not to archive what looks like a lost job.
        Kube::ApiRequest mark;
        mark.method = "PATCH";
        mark.path = Kube::ResourceKind::rayJobs().path(m_session->ns(), snapshot->rayJobName);
        mark.contentType = "application/merge-patch+json";
        mark.body = QJsonDocument(QJsonObject{{QStringLiteral("metadata"),
                                               QJsonObject{{QStringLiteral("annotations"), QJsonObject{{QLatin1String(Job::Labels::DeleteRequested), QStringLiteral("true")}}}}}})
                        .toJson(QJsonDocument::Compact);
        mark.what = QStringLiteral("mark RayJob %1 for deletion").arg(snapshot->rayJobName);
        const QString name = snapshot->rayJobName;
        m_session->kube->send(mark, this, [this, removeArchive, name](const Kube::ApiResult &marked) {
            if (!marked.ok() && marked.status != 404) {
                fail(marked.error->toError());
                return;
            }
            Kube::ApiRequest remove;
            remove.method = "DELETE";
            remove.path = Kube::ResourceKind::rayJobs().path(m_session->ns(), name);
            remove.body = R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"})";
            remove.what = QStringLiteral("delete RayJob %1").arg(name);
            m_session->kube->send(remove, this, [this, removeArchive](const Kube::ApiResult &result) {
                if (!result.ok() && result.status != 404) {
                    fail(result.error->toError());
                    return;
                }
                removeArchive(true);
            });
        });
    });
}

} // namespace Starforge::Cli
