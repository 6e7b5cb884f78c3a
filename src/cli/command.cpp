#include "cli/command.h"

#include "cli/output.h"
#include "core/config/profilemanager.h"
#include "core/job/jobspec.h"
#include "core/kube/execcredentialprovider.h"
#include "core/kube/kubeclient.h"
#include "core/logging/logging.h"
#include "core/secrets/secretstore.h"

#include <QJsonObject>
#include <QRegularExpression>
#include <QTimer>

namespace Starforge::Cli {

Command::Command(const CommandContext &context, QObject *parent)
    : QObject(parent)
    , m_args(context.args)
    , m_environment(context.environment)
    , m_secrets(context.secrets)
    , m_out(*context.out)
    , m_err(*context.err)
    , m_terminal(context.terminal)
    , m_work(new QObject(this))
{
}

Command::~Command()
{
    // The work on the clients first, then the sessions (the newest first), then the profiles
    // they were read from.
    delete m_work;
    while (!m_sessions.empty()) m_sessions.pop_back();
}

void Command::interrupt()
{
    finish(Interrupted);
}

void Command::finish(int exitCode)
{
    if (m_finished) {
        return;
    }
    m_finished = true;
    m_out.flush();
    m_err.flush();
    // From the event loop, so a caller connected after run() still hears it, and a command
    // that finishes inside one of its own callbacks is not deleted under that callback.
    QTimer::singleShot(0, this, [this, exitCode] { Q_EMIT finished(exitCode); });
}

void Command::fail(const Error &error)
{
    if (m_finished) {
        return;
    }
    QString message = error.message;
    if (error.code == Error::Code::Unavailable && m_args.values.contains(QStringLiteral("connection-file"))) {
        const QString stopped = SessionSource::ofConnectionFile(m_args.value(QStringLiteral("connection-file"))).stoppedReason();
        if (!stopped.isEmpty() && !message.contains(stopped)) message += u' ' + stopped;
    }
    printError(m_err, json(), message);
    finish(error.code == Error::Code::Internal ? InternalError : UserError);
}

void Command::note(const QString &text)
{
    m_err << "starforge-cli: " << Logging::redact(text) << Qt::endl;
}

Result<void> Command::loadStore()
{
    QString path = m_args.value(QStringLiteral("config"));
    if (path.isEmpty()) {
        path = m_environment.value(QStringLiteral("STARFORGE_CONFIG_FILE"));
    }
    if (path.isEmpty()) {
        path = Config::ProfileStore::defaultFilePath();
    }
    m_store = std::make_unique<Config::ProfileStore>(path);
    auto loaded = m_store->load();
    if (!loaded) {
        return loaded.error();
    }
    m_migration = *loaded;
    for (const QString &text : std::as_const(m_migration.notes)) {
        note(tr("note: %1").arg(text));
    }
    m_profiles = std::make_unique<Config::ProfileManager>(m_store.get(), m_secrets);
    return {};
}

QString Command::selectedProfile() const
{
    if (m_args.values.contains(QStringLiteral("profile"))) {
        return m_args.value(QStringLiteral("profile"));
    }
    const QString fromEnv = m_environment.value(QStringLiteral("STARFORGE_PROFILE"));
    if (!fromEnv.isEmpty()) {
        return fromEnv;
    }
    return m_store ? m_store->activeProfile() : QString();
}

SessionOptions Command::clientsOnly()
{
    SessionOptions options;
    options.verifyAccess = false;
    options.probeOperator = false;
    options.followJobs = false;
    options.followCapacity = false;
    options.followEvents = false;
    options.livenessIntervalMs = 0;   // done in seconds; its own requests say when the cluster is gone
    return options;
}

SessionOptions Command::capacityOnly()
{
    SessionOptions options = clientsOnly();
    options.followCapacity = true;
    options.failOnFirstListError = true;
    return options;
}

Result<SessionSource> Command::selectSource()
{
    if (m_args.values.contains(QStringLiteral("connection-file"))) {   // --connection-file "" too: not a silent fallback to a profile
        if (m_args.values.contains(QStringLiteral("profile"))) {
            return Error::invalid(tr("give --profile or --connection-file, not both"));
        }
        return SessionSource::ofConnectionFile(m_args.value(QStringLiteral("connection-file")));
    }
    if (auto loaded = loadStore(); !loaded) {
        return loaded.error();
    }
    const QString name = selectedProfile();
    const auto profile = m_store->profile(name);
    if (name.isEmpty() || !profile) {
        return Error::invalid(name.isEmpty() ? tr("no connection profile is active: pass --profile NAME or --connection-file FILE (the sandbox's), "
                                                  "or make one with `starforge-cli profile import-kubeconfig`")
                                             : tr("there is no profile '%1' (see `starforge-cli profile list`)").arg(name));
    }
    return SessionSource::ofProfile(*profile);
}

void Command::openSession(SessionOptions options, std::function<void()> then, std::function<Error(const Error &)> describeEnd)
{
    auto selected = selectSource();
    if (!selected) {
        fail(selected.error());
        return;
    }
    const SessionSource source = *selected;
    // As kubectl: a plugin may ask a person only when there is one at a terminal.
    options.personPresent = m_terminal;
    options.forwardStdinToPlugin = m_terminal;
    m_sessions.push_back(std::make_unique<Session>(m_secrets, m_environment, std::move(options)));
    Session *session = m_sessions.back().get();
    m_session = session;
    connect(session, &Session::ready, this, [then] { then(); });
    // The GUI shows a red badge while TLS verification is off; a script's log gets this line.
    connect(session, &Session::partsChanged, this, [this, session] {
        // What an exec credential plugin writes on stderr (a device code, "waiting for the
        // browser"), passed on as it comes, as kubectl does: the person may have to act on it.
        if (Kube::ExecCredentialProvider *credentials = session->kube() ? session->kube()->credentials() : nullptr;
            credentials && credentials != m_followedCredentials) {
            m_followedCredentials = credentials;
            connect(credentials, &Kube::ExecCredentialProvider::output, this, [this](const QString &text) {
                if (json()) {
                    printJsonLine(m_err, QJsonObject{{QStringLiteral("credentialPlugin"), text}});
                } else {
                    m_err << text;
                    m_err.flush();
                }
            });
        }
        if (m_warnedInsecure || !session->kube() || !session->config().boolean(QStringLiteral("FORGE_K8S_INSECURE_SKIP_TLS_VERIFY"))) return;
        m_warnedInsecure = true;
        const QString warning = tr("warning: TLS verification is off (FORGE_K8S_INSECURE_SKIP_TLS_VERIFY): anyone on the network path to %1 "
                                   "can read and change what is sent, the token included. Use it only with throw-away clusters.")
                                    .arg(session->kube()->config().server.toString());
        if (json()) {
            printJsonLine(m_err, QJsonObject{{QStringLiteral("warning"), warning}});
        } else {
            note(warning);
        }
    });
    connect(session, &Session::notice, this, [this](const QString &text) {
        if (!json()) note(tr("note: %1").arg(text));
    });
    connect(session, &Session::stateChanged, this, [this, session, describeEnd](Session::State state) {
        if (state == Session::State::Lost) {
            if (!json()) note(session->statusText());
        } else if (state == Session::State::Disconnected && session->error()) {
            fail(describeEnd ? describeEnd(*session->error()) : *session->error());
        }
    });
    session->open(source);
}

std::optional<QString> Command::jobArgument(const QString &usage)
{
    if (m_args.positionals.size() != 2) {
        fail(Error::invalid(tr("usage: starforge-cli %1").arg(usage)));
        return std::nullopt;
    }
    const QString argument = m_args.positionals.at(1);
    // A JOB goes into API paths and bucket keys: only a job id or a RayJob name (a DNS-1123
    // subdomain) may, not "" (the whole collection) or "../x".
    static const QRegularExpression kubeName(QStringLiteral("^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$"));
    if (!kubeName.match(argument).hasMatch()) {
        fail(Error::invalid(tr("'%1' is not a job id or a RayJob name (see `starforge-cli jobs` and `starforge-cli history`)").arg(argument)));
        return std::nullopt;
    }
    return argument;
}

std::optional<Job::JobSpec> Command::specArgument(const QString &usage)
{
    if (m_args.positionals.size() != 2) {
        fail(Error::invalid(tr("usage: starforge-cli %1").arg(usage)));
        return std::nullopt;
    }
    auto spec = Job::JobSpec::load(m_args.positionals.at(1));
    if (!spec) {
        fail(spec.error());
        return std::nullopt;
    }
    return *spec;
}

bool Command::loadSpecOption(std::optional<Job::JobSpec> *spec)
{
    if (!m_args.values.contains(QStringLiteral("spec"))) {
        return true;
    }
    auto loaded = Job::JobSpec::load(m_args.value(QStringLiteral("spec")));
    if (!loaded) {
        fail(loaded.error());
        return false;
    }
    *spec = *loaded;
    return true;
}

} // namespace Starforge::Cli
