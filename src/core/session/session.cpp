#include "core/session/session.h"

#include "core/cluster/capacity.h"
#include "core/events/eventjournal.h"
#include "core/job/pendingdiagnoser.h"
#include "core/job/progressfollower.h"
#include "core/job/tracker.h"
#include "core/kube/execcredentialprovider.h"
#include "core/kube/informer.h"
#include "core/kube/kubeclient.h"
#include "core/kube/permissions.h"
#include "core/playground/playgroundclient.h"
#include "core/kube/resources.h"
#include "core/kube/resourcekind.h"
#include "core/kube/selfsubjectreview.h"
#include "core/logging/logging.h"
#include "core/s3/s3client.h"
#include "core/session/startupcleanup.h"

#include <QCryptographicHash>
#include <QStandardPaths>
#include <QMap>
#include <QSysInfo>

namespace Starforge {

namespace {

QMap<QString, QString> valuesOf(const Config::EffectiveConfig &config)
{
    QMap<QString, QString> values;
    for (const Config::EffectiveValue &v : config.values()) values.insert(v.key(), v.value);
    return values;
}

// Which feature an informer serves, for its failures.
QString informerName(const Kube::Informer *informer)
{
    return informer->kind().plural;
}

} // namespace

Session::Session(Secrets::SecretStore *secrets, QProcessEnvironment environment, SessionOptions options, QObject *parent)
    : QObject(parent)
    , m_secrets(secrets)
    , m_environment(std::move(environment))
    , m_options(std::move(options))
    , m_reconnectBackoff(m_options.reconnectBackoff)
{
    m_status = tr("Not connected");
    m_liveness.setInterval(m_options.livenessIntervalMs);
    connect(&m_liveness, &QTimer::timeout, this, &Session::checkLiveness);
    m_reconnectTimer.setSingleShot(true);
    connect(&m_reconnectTimer, &QTimer::timeout, this, &Session::rebuild);
}

Session::~Session()
{
    teardown();
}

QString Session::stateName(State state)
{
    switch (state) {
    case State::Disconnected: return QStringLiteral("disconnected");
    case State::Connecting: return QStringLiteral("connecting");
    case State::Connected: return QStringLiteral("connected");
    case State::Degraded: return QStringLiteral("degraded");
    case State::Lost: return QStringLiteral("lost");
    case State::Reconnecting: return QStringLiteral("reconnecting");
    }
    return {};
}

void Session::open(SessionSource source)
{
    teardown();
    m_source = std::move(source);
    m_error.reset();
    m_reconnectBackoff.reset();
    resetFeatures();
    setState(State::Connecting, tr("Connecting (%1)…").arg(m_source.describe()));
    Q_EMIT partsChanged();   // what an earlier session had is gone
    connectFromSource();
}

void Session::resetFeatures()
{
    m_features.clear();
    for (const Kube::Feature &f : Kube::Feature::all()) m_features.append(FeatureStatus{f.id, f.title, true, {}, {}});
    // Not a permission: a file on this machine, which can fail to open all the same.
    if (m_options.journalEvents) m_features.append(FeatureStatus{QStringLiteral("journal"), tr("Event journal on this machine"), true, {}, {}});
}

void Session::close()
{
    teardown();
    m_error.reset();
    setState(State::Disconnected, tr("Not connected"));
    Q_EMIT partsChanged();
}

void Session::teardown()
{
    // The written order: what uses the clients goes before them, the tracker before the
    // informer and the capacity model it reads.
    if (m_kube) Q_EMIT partsAboutToBeRemoved();
    ++m_generation;
    m_liveness.stop();
    m_reconnectTimer.stop();
    delete m_livenessRequest.data();
    // Nothing a part says while it is deleted (an informer stopping) may reach this session.
    for (QObject *part : std::initializer_list<QObject *>{m_diagnoser.get(), m_progress.get(), m_jobs.get(), m_capacity.get(), m_events.get(), m_pods.get(), m_nodes.get(),
                                                          m_rayJobs.get(), m_probe.get(), m_permissionCheck.get()}) {
        if (part) disconnect(part, nullptr, this, nullptr);
    }
    m_diagnoser.reset();
    m_progress.reset();
    m_playgroundReaper.stop();
    m_playground.reset();
    m_jobs.reset();
    m_cleanup.reset();
    m_capacity.reset();
    m_events.reset();
    m_pods.reset();
    m_nodes.reset();
    m_rayJobs.reset();
    // Nothing feeds it now: what is queued is written, and the file closed.
    if (m_journal) m_journal->flush();
    m_journal.reset();
    m_probe.reset();
    m_permissionCheck.reset();
    m_s3.reset();
    m_kube.reset();
    m_readyEmitted = false;
    m_lostSince = {};
}

Result<S3::S3Client *> Session::bucket() const
{
    if (!m_s3) {
        return m_s3Problem.value_or(Error::invalid(tr("the session has no object storage yet")));
    }
    return m_s3.get();
}

std::optional<FeatureStatus> Session::feature(const QString &id) const
{
    for (const FeatureStatus &f : m_features) {
        if (f.id == id) return f;
    }
    return std::nullopt;
}

QStringList Session::problems() const
{
    QStringList out;
    for (const Kube::Informer *informer : {m_rayJobs.get(), m_events.get(), m_nodes.get(), m_pods.get()}) {
        if (informer && informer->state() == Kube::Informer::State::Waiting && informer->lastError()) {
            out << tr("Following %1 keeps failing (%2); retrying").arg(informerName(informer), informer->lastError()->message);
        }
    }
    return out;
}

qint64 Session::lostForSeconds() const
{
    return m_state == State::Lost && m_lostSince.isValid() ? m_lostSince.secsTo(QDateTime::currentDateTimeUtc()) : 0;
}

void Session::setState(State state, const QString &status)
{
    const bool changed = state != m_state || status != m_status;
    // A line in the log for each change of state (the status text may change more often): what
    // a person reading the log, or a test watching the app, needs to tell that it connected.
    // (m_state itself may have been set ahead, as startParts does, so the last logged one counts.)
    if (state != m_loggedState) {
        m_loggedState = state;
        qCInfo(lcSession).noquote() << stateName(state) + QStringLiteral(": ") + Logging::redact(status);
    }
    m_state = state;
    m_status = status;
    if (changed) Q_EMIT stateChanged(state);
}

// ---- connecting ---------------------------------------------------------------------------

void Session::connectFromSource()
{
    const quint64 generation = m_generation;
    m_source.resolve(m_secrets, m_environment, this, [this, generation](Result<Config::EffectiveConfig> resolved) {
        if (generation != m_generation) return;
        onResolved(std::move(resolved));
    });
}

void Session::onResolved(Result<Config::EffectiveConfig> resolved)
{
    if (!resolved) {
        connectFailed(resolved.error());
        return;
    }
    auto client = Kube::ClientConfig::fromSettings(*resolved);
    if (!client) {
        connectFailed(client.error());
        return;
    }
    m_config = *resolved;
    m_settings = Job::ClusterSettings::fromConfig(m_config);
    m_kube = std::make_unique<Kube::KubeClient>(*client);
    if (Kube::ExecCredentialProvider *credentials = m_kube->credentials()) {
        credentials->setPersonPresent(m_options.personPresent);
        credentials->setForwardStdin(m_options.forwardStdinToPlugin);
    }
    if (auto s3 = S3::ClientConfig::fromEffectiveConfig(m_config)) {
        m_s3 = std::make_unique<S3::S3Client>(*s3);
        m_s3Problem.reset();
    } else {
        m_s3Problem = s3.error();
    }
    Q_EMIT partsChanged();
    if (m_options.verifyAccess) {
        checkServer();
    } else {
        resolveOwnerThenProbe();
    }
}

void Session::checkServer()
{
    Kube::ApiRequest version;
    version.path = QStringLiteral("/version");
    version.what = tr("reach the API server");
    const quint64 generation = m_generation;
    m_kube->send(version, this, [this, generation](const Kube::ApiResult &result) {
        if (generation != m_generation) return;
        if (!result.ok()) {
            connectFailed(result.error->toError());
            return;
        }
        m_serverVersion = result.json().value(QLatin1String("gitVersion")).toString();
        checkPermissions();
    });
}

void Session::checkPermissions()
{
    // /version is public on many clusters: the permission check is what proves the token.
    m_permissionCheck = std::make_unique<Kube::PermissionCheck>(m_kube.get(), m_settings.ns);
    connect(m_permissionCheck.get(), &Kube::PermissionCheck::finished, this, &Session::onPermissions);
    m_permissionCheck->start();
}

void Session::onPermissions(const Kube::PermissionReport &report)
{
    if (report.error) {
        connectFailed(report.error->toError());
        return;
    }
    for (const Kube::FeatureAccess &access : report.features) {
        if (!access.allowed) {
            switchOff(access.feature.id, tr("the token cannot %1").arg(access.missing.join(QStringLiteral(", "))), Kube::roleRules(access.feature));
        }
    }
    resolveOwnerThenProbe();
}

void Session::resolveOwnerThenProbe()
{
    if (!m_settings.owner.isEmpty()) {   // FORGE_OWNER
        probeOperatorThenStart();
        return;
    }
    const quint64 generation = m_generation;
    Kube::whoAmI(m_kube.get(), this, [this, generation](std::optional<QString> username, std::optional<Kube::ApiError> error) {
        if (generation != m_generation) return;
        if (username) {
            m_settings.owner = *username;
        } else if (error->kind == Kube::ApiError::Kind::NotFound || error->kind == Kube::ApiError::Kind::Forbidden
                   || error->kind == Kube::ApiError::Kind::Malformed) {
            // A cluster older than the API (Kubernetes < 1.28) or one that forbids it: this
            // machine's user stands in, and the person is told how to make it stable.
            m_settings.owner = localOwnerName();
            Q_EMIT notice(tr("The cluster could not say who you are (%1), so your jobs are recorded as %2's. Set FORGE_OWNER in the "
                             "profile to the same name on every workstation you use.")
                              .arg(error->message, m_settings.owner));
        } else {
            connectFailed(error->toError());
            return;
        }
        qCInfo(lcSession).noquote() << "jobs are owned by" << m_settings.owner;
        probeOperatorThenStart();
    });
}

QString Session::localOwnerName() const
{
    QString user = m_environment.value(QStringLiteral("USER"));
    if (user.isEmpty()) user = m_environment.value(QStringLiteral("USERNAME"));
    if (user.isEmpty()) user = QStringLiteral("unknown");
    return user + u'@' + QSysInfo::machineHostName();
}

void Session::probeOperatorThenStart()
{
    if (m_options.operatorVersion) {
        m_operator = Kube::OperatorVersion{};
        m_operator.outcome = Kube::OperatorVersion::Outcome::Detected;
        m_operator.version = *m_options.operatorVersion;
        m_operator.evidence = QStringLiteral("given");
        m_operator.message = tr("KubeRay %1 (given)").arg(m_operator.version.toString());
        startParts();
        return;
    }
    if (!m_options.probeOperator) {
        startParts();
        return;
    }
    m_probe = std::make_unique<Kube::OperatorProbe>(m_kube.get());
    connect(m_probe.get(), &Kube::OperatorProbe::finished, this, [this](const Kube::OperatorVersion &found) {
        using Outcome = Kube::OperatorVersion::Outcome;
        m_operator = found;
        switch (found.outcome) {
        case Outcome::Detected:
            break;
        case Outcome::Unknown:
            Q_EMIT notice(tr("%1 Starforge enforces the pre-running deadline itself.").arg(found.message));
            break;
        case Outcome::NotInstalled:
        case Outcome::Unsupported:
            switchOff(QStringLiteral("jobs"), found.message);
            break;
        case Outcome::Failed:
            connectFailed(found.error ? found.error->toError() : Error::unavailable(found.message));
            return;
        }
        startParts();
    });
    m_probe->start();
}

void Session::startParts()
{
    const bool jobsAvailable = feature(QStringLiteral("jobs")).value_or(FeatureStatus{}).available;
    if (m_options.followJobs && jobsAvailable && !m_s3) {
        switchOff(QStringLiteral("jobs"),
                  tr("job tracking and history need the profile's object storage: %1 Set FORGE_S3_ENDPOINT, FORGE_S3_BUCKET, "
                     "FORGE_S3_ACCESS_KEY and FORGE_S3_SECRET_KEY (the keys are kept in the keychain), or in the environment.")
                      .arg(m_s3Problem ? m_s3Problem->message : QString()));
    }
    if (m_options.followCapacity && feature(QStringLiteral("capacity")).value_or(FeatureStatus{}).available) {
        m_nodes = std::make_unique<Kube::Informer>(m_kube.get(), Kube::ResourceKind::nodes());
        Kube::InformerOptions pods;
        // Finished pods hold no GPUs; leaving them out keeps the biggest list small.
        // untranslated: a field selector
        pods.fieldSelector = QStringLiteral("status.phase!=Succeeded,status.phase!=Failed");
        m_pods = std::make_unique<Kube::Informer>(m_kube.get(), Kube::ResourceKind::pods(), pods);
        m_capacity = std::make_unique<Cluster::CapacityTracker>(m_settings.gpuNodeLabel, Cluster::defaultTolerations(), this);
        m_capacity->attach(m_nodes.get(), m_pods.get());
        watchInformer(m_nodes.get(), QStringLiteral("capacity"));
        watchInformer(m_pods.get(), QStringLiteral("capacity"));
    }
    if (m_options.followEvents && feature(QStringLiteral("events")).value_or(FeatureStatus{}).available) {
        Kube::InformerOptions events;
        events.ns = m_settings.ns;
        m_events = std::make_unique<Kube::Informer>(m_kube.get(), Kube::ResourceKind::events(), events);
        watchInformer(m_events.get(), QStringLiteral("events"));
    }
    if (m_options.followJobs && feature(QStringLiteral("jobs")).value_or(FeatureStatus{}).available) {
        Kube::InformerOptions rayJobs;
        rayJobs.ns = m_settings.ns;
        rayJobs.labelSelector = Job::JobTracker::labelSelector(m_options.onlyJobId);
        m_rayJobs = std::make_unique<Kube::Informer>(m_kube.get(), Kube::ResourceKind::rayJobs(), rayJobs);
        watchInformer(m_rayJobs.get(), QStringLiteral("jobs"));
        Job::TrackerOptions tracker;
        tracker.ns = m_settings.ns;
        tracker.onlyJobId = m_options.onlyJobId;
        tracker.viewer = viewer();
        tracker.operatorEnforcesDeadline = m_operator.hasPreRunningDeadline();
        tracker.seriesLabel = m_settings.gpuNodeLabel;
        tracker.capacity = m_capacity.get();
        tracker.rayJobs = m_rayJobs.get();
        tracker.checkIntervalMs = m_options.trackerCheckIntervalMs;
        tracker.archiveRetryMs = m_options.trackerArchiveRetryMs;
        // The jobs this workstation saw and has not archived yet, per cluster and namespace, so a
        // RayJob the operator deletes while the app is closed is still recorded
        // (docs/jobs.md, "For cluster administrators: deletion settings").
        tracker.seenJobsFile = QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation)
            + QStringLiteral("/starforge/seen-jobs-%1.json").arg(placeKey());
        // Children as well as owned: what a session runs can be counted (one tracker, never two).
        m_jobs = std::make_unique<Job::JobTracker>(m_kube.get(), m_s3.get(), tracker, this);
    }
    // Before the informers start, so their first list is journaled too.
    if (m_options.journalEvents) openJournal();
    for (Kube::Informer *informer : {m_nodes.get(), m_pods.get(), m_events.get(), m_rayJobs.get()}) {
        if (!informer) continue;
        connect(informer, &Kube::Informer::synced, this, &Session::maybeReady);
        informer->start();
    }
    if (m_jobs) {
        connect(m_jobs.get(), &Job::JobTracker::synced, this, &Session::maybeReady);
        m_jobs->start();
        if (m_options.followProgress) {
            Job::ProgressFollowerOptions progress;
            progress.ns = m_settings.ns;
            m_progress = std::make_unique<Job::ProgressFollower>(m_kube.get(), m_jobs.get(), progress, this);
            m_progress->start();
        }
        if (m_options.followPendingDiagnoses) {
            m_diagnoser = std::make_unique<Job::PendingDiagnoser>(m_kube.get(), m_jobs.get(), m_capacity.get(), m_settings.ns,
                                                                  m_settings.gpuNodeLabel, this);
            m_diagnoser->setIntervalMs(m_options.pendingDiagnosisIntervalMs);
            m_diagnoser->start();
        }
    }
    if (m_options.followJobs && m_options.cleanUpAtStart && !m_cleanupStarted) {
        m_cleanupStarted = true;
        StartupCleanupOptions cleanup;
        cleanup.olderThanSeconds = m_options.cleanUpOlderThanSeconds;
        m_cleanup = std::make_unique<StartupCleanup>(m_s3.get(), cleanup);
        connect(m_cleanup.get(), &StartupCleanup::finished, this, &Session::cleanedUp);
        m_cleanup->start();
    }
    if (m_options.followPlayground && !m_settings.owner.isEmpty()) {
        m_playground = std::make_unique<Playground::PlaygroundClient>(m_kube.get(), m_settings.ns, m_settings.owner);
        const auto reap = [this, generation = m_generation] {
            if (!m_playground || generation != m_generation) return;
            m_playground->reap(QDateTime::currentDateTimeUtc(), [this](Result<QStringList> reaped) {
                if (reaped && !reaped->isEmpty()) Q_EMIT playgroundReaped(*reaped);
            });
        };
        connect(&m_playgroundReaper, &QTimer::timeout, m_playground.get(), reap);
        if (m_options.playgroundReapIntervalMs > 0) m_playgroundReaper.start(m_options.playgroundReapIntervalMs);
        reap();   // what expired while no app ran
    }
    m_reconnectBackoff.reset();
    m_lostSince = {};
    // Up: refreshUpState decides between Connected and Degraded and announces it once.
    m_state = State::Connected;
    m_status.clear();
    refreshUpState();
    Q_EMIT partsChanged();
    if (m_options.livenessIntervalMs > 0) m_liveness.start();
    maybeReady();
}

QString Session::placeKey() const
{
    const QString server = m_kube ? m_kube->config().server.toString() : QString();
    return QString::fromLatin1(QCryptographicHash::hash((server + u'\n' + m_settings.ns).toUtf8(), QCryptographicHash::Sha256).toHex().left(16));
}

QString Session::journalFile() const
{
    return !m_options.journalPath.isEmpty()
        ? m_options.journalPath
        : QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) + QStringLiteral("/starforge/journal-%1.sqlite").arg(placeKey());
}

void Session::openJournal()
{
    const QString path = journalFile();
    auto opened = Events::EventJournal::open(path);
    if (!opened) {
        QString reason = opened.error().message;
        if (reason.endsWith(u'.')) reason.chop(1);   // the status line adds its own
        switchOff(QStringLiteral("journal"), reason);
        return;
    }
    m_journal = std::move(opened).value();
    Events::EventJournal *journal = m_journal.get();
    // The journal is the context: deleting it in teardown() cuts these connections.
    if (m_events) {
        connect(m_events.get(), &Kube::Informer::added, journal, &Events::EventJournal::recordEvent);
        connect(m_events.get(), &Kube::Informer::updated, journal, [journal](const QJsonObject &, const QJsonObject &after) { journal->recordEvent(after); });
    }
    if (m_rayJobs) {
        // Starforge's RayJobs only: the informer lists those (JobTracker::labelSelector).
        auto record = [journal](const QJsonObject &object) {
            const Kube::RayJob rayJob = Kube::RayJob::fromJson(object);
            Events::JobStateChange change;
            change.ns = rayJob.ns;
            change.rayJobName = rayJob.name;
            change.jobId = rayJob.labels.value(QLatin1String(Job::Labels::JobId)).toString();
            change.at = QDateTime::currentDateTimeUtc();
            change.deploymentStatus = rayJob.jobDeploymentStatus;
            change.jobStatus = rayJob.jobStatus;
            change.reason = rayJob.reason;
            change.message = rayJob.message;
            journal->recordJobState(change);
        };
        connect(m_rayJobs.get(), &Kube::Informer::added, journal, record);
        connect(m_rayJobs.get(), &Kube::Informer::updated, journal, [record](const QJsonObject &, const QJsonObject &after) { record(after); });
    }
}

void Session::watchInformer(Kube::Informer *informer, const QString &featureId)
{
    connect(informer, &Kube::Informer::stateChanged, this, [this, informer, featureId](Kube::Informer::State state) {
        if (state != Kube::Informer::State::Waiting || !informer->lastError()) {
            refreshUpState();
            return;
        }
        const Kube::ApiError error = *informer->lastError();
        // Not from inside the informer's own signal: stopping or deleting it there is unsafe.
        const quint64 generation = m_generation;
        QTimer::singleShot(0, this, [this, generation, informer, featureId, error] {
            if (generation != m_generation) return;
            if (error.kind == Kube::ApiError::Kind::Forbidden) {
                // The token may not (or no longer) do this: asking again would only be refused again.
                informer->stop();
                QString rule;
                for (const Kube::Feature &f : Kube::Feature::all()) {
                    if (f.id == featureId) rule = Kube::roleRules(f);
                }
                switchOff(featureId, error.message, rule);
            } else if (m_options.failOnFirstListError && !informer->hasSynced()) {
                // A first list that is not Kubernetes at all is a setting pointing elsewhere (a
                // dashboard, a proxy's login page), not a fault of the server's.
                giveUp(error.kind == Kube::ApiError::Kind::Malformed
                           ? Error::invalid(error.message + QLatin1Char(' ') + tr("Is FORGE_K8S_API_SERVER the cluster's API server?"))
                           : error.toError());
                return;
            }
            refreshUpState();
        });
    });
}

void Session::maybeReady()
{
    if (m_readyEmitted || !isUp()) return;
    for (const Kube::Informer *informer : {m_nodes.get(), m_pods.get(), m_events.get(), m_rayJobs.get()}) {
        if (informer && informer->state() != Kube::Informer::State::Stopped && !informer->hasSynced()) return;
    }
    if (m_jobs && m_rayJobs && m_rayJobs->state() != Kube::Informer::State::Stopped && !m_jobs->hasSynced()) return;
    m_readyEmitted = true;
    Q_EMIT ready();
}

void Session::switchOff(const QString &featureId, const QString &reason, const QString &roleRule)
{
    for (FeatureStatus &f : m_features) {
        if (f.id == featureId && f.available) {
            f.available = false;
            f.reason = reason;
            f.roleRule = roleRule;
            qCInfo(lcSession).noquote() << "feature" << featureId << "off:" << Logging::redact(reason);
            Q_EMIT featuresChanged();
        }
    }
    refreshUpState();
}

QString Session::connectedText() const
{
    const QString server = m_kube ? m_kube->config().server.toString() : QString();
    const QString versionText = m_serverVersion.isEmpty() ? QString() : tr(" (Kubernetes %1)").arg(m_serverVersion);
    QString text = tr("Connected to %1%2, namespace %3").arg(server, versionText, m_settings.ns);
    QStringList off;
    for (const FeatureStatus &f : m_features) {
        if (!f.available) off << tr("%1 is unavailable: %2.").arg(f.title, f.reason);
    }
    off << problems();
    if (!off.isEmpty()) text += QStringLiteral(". ") + off.join(u' ');
    return text;
}

void Session::refreshUpState()
{
    if (!isUp()) return;
    bool degraded = !problems().isEmpty();
    for (const FeatureStatus &f : std::as_const(m_features)) degraded = degraded || !f.available;
    setState(degraded ? State::Degraded : State::Connected, connectedText());
    maybeReady();
}

void Session::connectFailed(const Error &error)
{
    qCInfo(lcSession).noquote() << "connect failed:" << Logging::redact(error.message);
    if (m_state == State::Reconnecting && (error.code == Error::Code::Unavailable || m_source.isConnectionFile())) {
        // Still away (or a restarted sandbox has not written its file yet): try again later.
        scheduleReconnect(error);
        return;
    }
    giveUp(error);
}

void Session::giveUp(const Error &error)
{
    teardown();
    Error why = error;
    if (const QString stopped = m_source.stoppedReason(); !stopped.isEmpty() && !why.message.contains(stopped)) {
        why.message += u' ' + stopped;
    }
    m_error = why;
    setState(State::Disconnected, tr("Not connected: %1").arg(why.message));
    Q_EMIT partsChanged();
}

// ---- staying connected --------------------------------------------------------------------

void Session::checkLiveness()
{
    if (!m_kube || m_livenessRequest) return;
    if (m_state == State::Lost && m_options.giveUpWhenSourceStops) {
        if (const QString stopped = m_source.stoppedReason(); !stopped.isEmpty()) {
            giveUp(Error::unavailable(stopped));
            return;
        }
    }
    if (m_state == State::Lost && m_options.giveUpAfterSeconds > 0 && lostForSeconds() >= m_options.giveUpAfterSeconds) {
        giveUp(Error::unavailable(tr("The cluster has not answered for %1 s.").arg(lostForSeconds())));
        return;
    }
    // A namespaced list of one: it needs the token, unlike /version, and costs the server little.
    Kube::ApiRequest probe;
    probe.path = Kube::ResourceKind::rayJobs().path(m_settings.ns);
    probe.query.addQueryItem(QStringLiteral("limit"), QStringLiteral("1"));
    probe.what = tr("reach the cluster");
    probe.timeoutMs = std::max(10000, m_options.livenessIntervalMs * 2);
    auto *request = new QObject(this);
    m_livenessRequest = request;
    m_kube->send(probe, request, [this, request](const Kube::ApiResult &result) {
        request->deleteLater();
        onLivenessAnswer(result);
    });
}

void Session::onLivenessAnswer(const Kube::ApiResult &result)
{
    // Any answer but a refused token is a server that is there: a 403 or a 404 (no KubeRay)
    // says nothing about reachability.
    const bool answered = result.ok() || (!result.error->isTransient() && result.error->kind != Kube::ApiError::Kind::Unauthorized);
    if (answered) {
        if (m_state == State::Lost) {
            m_lostSince = {};
            // Up again: refreshUpState decides between Connected and Degraded and, with the old
            // text cleared, announces it once.
            m_state = State::Connected;
            m_status.clear();
            refreshUpState();
            Q_EMIT notice(tr("The cluster answers again."));
        }
        return;
    }
    const Kube::ApiError &error = *result.error;
    if (isUp()) {
        becomeLost(error.message);
        if (m_options.giveUpWhenSourceStops && !m_source.stoppedReason().isEmpty()) {
            giveUp(Error::unavailable(error.message));   // a stopped sandbox does not come back by itself
            return;
        }
        if (error.kind != Kube::ApiError::Kind::Unauthorized) return;
    }
    if (error.kind == Kube::ApiError::Kind::Unauthorized) {
        rebuild();   // the token may have been replaced; connecting again tells
        return;
    }
    // Still lost: a restarted sandbox or a rotated token shows up as new settings.
    const quint64 generation = m_generation;
    m_source.resolve(m_secrets, m_environment, this, [this, generation](Result<Config::EffectiveConfig> now) {
        if (generation != m_generation || m_state != State::Lost) return;
        if (now && valuesOf(*now) != valuesOf(m_config)) rebuild();
    });
}

void Session::becomeLost(const QString &why)
{
    m_lostSince = QDateTime::currentDateTimeUtc();
    setState(State::Lost, tr("Lost the cluster at %1: %2 Still trying.").arg(QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss")), why));
}

void Session::rebuild()
{
    const QDateTime lostSince = m_lostSince.isValid() ? m_lostSince : QDateTime::currentDateTimeUtc();
    teardown();
    m_lostSince = lostSince;
    if (m_options.giveUpWhenSourceStops) {
        if (const QString stopped = m_source.stoppedReason(); !stopped.isEmpty()) {
            giveUp(Error::unavailable(stopped));
            return;
        }
    }
    if (m_options.giveUpAfterSeconds > 0 && m_lostSince.secsTo(QDateTime::currentDateTimeUtc()) >= m_options.giveUpAfterSeconds) {
        giveUp(Error::unavailable(tr("The cluster has not answered for %1 s.").arg(m_lostSince.secsTo(QDateTime::currentDateTimeUtc()))));
        return;
    }
    resetFeatures();
    setState(State::Reconnecting, tr("Reconnecting (%1)…").arg(m_source.describe()));
    Q_EMIT partsChanged();
    connectFromSource();
}

void Session::scheduleReconnect(const Error &why)
{
    const QDateTime lostSince = m_lostSince;
    teardown();
    m_lostSince = lostSince;   // the give-up clock runs from the loss, not from this attempt
    const int delay = m_reconnectBackoff.next();
    setState(State::Reconnecting, tr("Reconnecting: %1 Next try in %2 s.").arg(why.message).arg((delay + 999) / 1000));
    Q_EMIT partsChanged();
    m_reconnectTimer.start(delay);
}

} // namespace Starforge
