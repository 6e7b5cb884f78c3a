#include "cli/cliapplication.h"

#include "cli/clustersession.h"
#include "cli/output.h"
#include "core/config/profilemanager.h"
#include "core/config/settingsschema.h"
#include "core/logging/logging.h"
#include "core/secrets/secretstore.h"

#include <QCoreApplication>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>

#include <cerrno>
#include <csignal>

namespace Starforge::Cli {

namespace {

using Command = void (CliApplication::*)();

} // namespace

// Declared where it is used (jobcommands.cpp, clustercommands.cpp) as well.
QString stoppedSandbox(const QString &connectionFile);

// Why the sandbox behind a connection file cannot answer: it stopped (it removes its file then)
// or was killed (the pid it wrote is gone). Empty when it may still run, or for a profile. A
// refused connection alone does not tell the user that the sandbox is the thing to restart.
QString stoppedSandbox(const QString &connectionFile)
{
    if (connectionFile.isEmpty()) {
        return {};
    }
    QFile file(connectionFile);
    if (!file.open(QIODevice::ReadOnly)) {
        return QStringLiteral("The starforge-sandbox that wrote %1 has stopped: start it again.").arg(connectionFile);
    }
    const qint64 pid = QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("pid")).toInteger();
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
        return QStringLiteral("The starforge-sandbox that wrote %1 (pid %2) is not running any more: start it again.").arg(connectionFile).arg(pid);
    }
    return {};
}

const QMap<QString, void (CliApplication::*)()> &CliApplication::jobCommands()
{
    static const QMap<QString, Command> commands{
        {QStringLiteral("manifest"), &CliApplication::runManifest}, {QStringLiteral("submit"), &CliApplication::runSubmit},
        {QStringLiteral("jobs"), &CliApplication::runJobs},         {QStringLiteral("status"), &CliApplication::runStatus},
        {QStringLiteral("events"), &CliApplication::runEvents},     {QStringLiteral("diagnose"), &CliApplication::runDiagnose},
        {QStringLiteral("logs"), &CliApplication::runLogs},         {QStringLiteral("capacity"), &CliApplication::runCapacity},
        {QStringLiteral("stop"), &CliApplication::runStop},         {QStringLiteral("delete"), &CliApplication::runDelete},
        {QStringLiteral("history"), &CliApplication::runHistory}};
    return commands;
}

CliApplication::CliApplication(QStringList arguments, QProcessEnvironment environment, Secrets::SecretStore *secrets,
                               QTextStream &out, QTextStream &err, QObject *parent)
    : QObject(parent)
    , m_rawArguments(std::move(arguments))
    , m_environment(std::move(environment))
    , m_secrets(secrets)
    , m_out(out)
    , m_err(err)
{
}

CliApplication::~CliApplication() = default;

void CliApplication::finish(int exitCode)
{
    if (m_finished) {
        return;
    }
    m_finished = true;
    m_out.flush();
    m_err.flush();
    // Deliver from the event loop so a caller connected after start() still hears it.
    QTimer::singleShot(0, this, [this, exitCode] { Q_EMIT finished(exitCode); });
}

int CliApplication::exitCodeFor(const Error &error)
{
    return error.code == Error::Code::Internal ? InternalError : UserError;
}

void CliApplication::fail(const Error &error)
{
    QString message = error.message;
    if (error.code == Error::Code::Unavailable) {
        if (const QString stopped = stoppedSandbox(m_args.value(QStringLiteral("connection-file"))); !stopped.isEmpty()) {
            message += u' ' + stopped;
        }
    }
    if (m_args.flag(QStringLiteral("json"))) {
        QJsonObject object{{QStringLiteral("error"), Logging::redact(message)}};
        printJson(m_err, object);
    } else {
        m_err << "starforge-cli: " << Logging::redact(message) << Qt::endl;
    }
    finish(exitCodeFor(error));
}

QString CliApplication::selectedProfile() const
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

Result<void> CliApplication::loadStore()
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
    for (const QString &note : std::as_const(m_migration.notes)) {
        m_err << "starforge-cli: note: " << note << Qt::endl;
    }
    m_profiles = std::make_unique<Config::ProfileManager>(m_store.get(), m_secrets);
    return {};
}

void CliApplication::start()
{
    auto parsed = Arguments::parse(m_rawArguments);
    if (!parsed) {
        fail(parsed.error());
        return;
    }
    m_args = *parsed;
    if (m_args.flag(QStringLiteral("version"))) {
        m_out << "starforge-cli " << QStringLiteral(STARFORGE_VERSION) << Qt::endl;
        finish(Ok);
        return;
    }
    if (m_args.flag(QStringLiteral("help")) || m_args.positionals.isEmpty()) {
        printUsage();
        finish(m_args.positionals.isEmpty() && !m_args.flag(QStringLiteral("help")) ? UserError : Ok);
        return;
    }
    const QString command = m_args.positionals.first();
    if (command == u"settings") {
        runSettings();
    } else if (command == u"profile") {
        runProfile();
    } else if (command == u"capsule") {
        runCapsule();
    } else if (const auto job = jobCommands().constFind(command); job != jobCommands().cend()) {
        (this->*job.value())();
    } else {
        fail(Error::invalid(QStringLiteral("unknown command '%1'; commands: profile, settings, capsule, %2 (see --help)")
                                .arg(command, jobCommands().keys().join(QStringLiteral(", ")))));
    }
}

void CliApplication::printUsage()
{
    m_out << QStringLiteral(
        "usage: starforge-cli [--profile NAME | --connection-file FILE] [--config FILE] [--json] COMMAND ...\n"
        "\n"
        "Commands:\n"
        "  profile list                         the profiles, the active one marked\n"
        "  profile show [NAME]                  effective settings and where each comes from\n"
        "  profile set NAME KEY=VALUE...        set settings (creates NAME); KEY= resets to the default\n"
        "  profile set NAME KEY --stdin         read the value (e.g. a secret) from standard input\n"
        "  profile set NAME KEY --from-env      save the value of environment variable KEY (e.g. a secret)\n"
        "  profile import-kubeconfig [FILE] [--context C] [--name NAME]\n"
        "                                       create or update a profile from a kubeconfig context\n"
        "  profile use NAME                     make NAME the active profile\n"
        "  profile rename OLD NEW | duplicate SOURCE NEW | delete NAME [--force]\n"
        "  capsule build DIR [--spec SPEC] [--out FILE]\n"
        "                                       pack DIR as a Capsule (default ./capsule.zip) with SPEC,\n"
        "                                       else DIR/jobspec.json, else a minimal JobSpec; prints\n"
        "                                       its SHA-256, size and file count\n"
        "  settings [--markdown]                every setting: type, default, meaning\n"
        "\n"
        "Jobs (on the profile's cluster and bucket, or the sandbox's with --connection-file FILE;\n"
        "JOB is a job id or its RayJob name):\n"
        "  manifest SPEC [--kuberay-version V]  the RayJob SPEC would make, as JSON; nothing is submitted\n"
        "  submit SPEC [--wait]                 build, upload and create the job; --wait follows it until it\n"
        "                                       is archived (exit 0 Succeeded, 3 Failed or Stopped)\n"
        "  jobs                                 the jobs on the cluster and their states\n"
        "  status JOB                           state, times, pods, and why it is not running yet\n"
        "  events JOB                           the job's Kubernetes events, oldest first\n"
        "  diagnose JOB                         the cause of a job that is not running, with evidence\n"
        "  logs JOB [-f] [--pod P] [--container C] [--tail N]\n"
        "                                       the driver's log (P: a pod, submitter, head or worker);\n"
        "                                       from the archive once the job has ended\n"
        "  capacity [--spec SPEC]               GPUs per series: total, used, free, blocked, largest free node;\n"
        "                                       with SPEC, whether its pools fit now, once busy nodes free up, or never\n"
        "  stop JOB                             stop a job; its logs and events are archived first\n"
        "  delete JOB                           remove a job and its archive (the Capsule stays)\n"
        "  history                              archived jobs, newest first\n"
        "\n"
        "Secrets (FORGE_K8S_TOKEN, FORGE_S3_ACCESS_KEY, FORGE_S3_SECRET_KEY) are kept in the OS keychain only\n"
        "and are never taken as KEY=VALUE arguments. Environment variables FORGE_* override profile values.\n"
        "The profile is --profile, else $STARFORGE_PROFILE, else the active one. Exit codes: 0 ok,\n"
        "1 user error, 2 internal error, 3 the job followed by submit --wait ended Failed or Stopped,\n"
        "130 interrupted (Ctrl-C cancels a submission in progress and removes what it made).\n");
}

void CliApplication::runSettings()
{
    const auto &table = Config::SettingsSchema::all();
    if (m_args.flag(QStringLiteral("json"))) {
        QJsonArray array;
        for (const auto &d : table) {
            array.append(QJsonObject{{QStringLiteral("key"), d.key},
                                     {QStringLiteral("type"), Config::SettingsSchema::typeName(d.type)},
                                     {QStringLiteral("default"), d.defaultValue},
                                     {QStringLiteral("group"), d.group},
                                     {QStringLiteral("secret"), d.isSecret()},
                                     {QStringLiteral("help"), d.help}});
        }
        printJson(m_out, array);
    } else if (m_args.flag(QStringLiteral("markdown"))) {
        QString group;
        for (const auto &d : table) {
            if (d.group != group) {
                group = d.group;
                m_out << "\n## " << group << "\n\n"
                      << "| Setting (environment variable) | Type | Default | Meaning |\n"
                      << "|---|---|---|---|\n";
            }
            QString help = d.help;
            help.replace(u'|', QStringLiteral("\\|"));
            m_out << "| `" << d.key << "` | " << Config::SettingsSchema::typeName(d.type) << " | "
                  << (d.defaultValue.isEmpty() ? QStringLiteral("(none)") : u'`' + d.defaultValue + u'`') << " | " << help << " |\n";
        }
    } else {
        QList<QStringList> rows;
        for (const auto &d : table) {
            rows.append({d.key, Config::SettingsSchema::typeName(d.type), d.defaultValue.isEmpty() ? QStringLiteral("-") : d.defaultValue});
        }
        m_out << formatTable({QStringLiteral("SETTING"), QStringLiteral("TYPE"), QStringLiteral("DEFAULT")}, rows);
    }
    finish(Ok);
}

void CliApplication::runProfile()
{
    if (auto loaded = loadStore(); !loaded) {
        fail(loaded.error());
        return;
    }
    const QString sub = m_args.positionals.value(1);
    std::function<void()> command;
    if (sub == u"list") {
        command = [this] { profileList(); };
    } else if (sub == u"show") {
        command = [this] { profileShow(); };
    } else if (sub == u"set") {
        command = [this] { profileSet(); };
    } else if (sub == u"import-kubeconfig") {
        command = [this] { profileImportKubeconfig(); };
    } else if (sub == u"delete") {
        command = [this] { profileDelete(); };
    } else if (sub == u"use") {
        command = [this] { profileUse(); };
    } else if (sub == u"rename") {
        command = [this] { profileRename(); };
    } else if (sub == u"duplicate") {
        command = [this] { profileDuplicate(); };
    } else {
        fail(Error::invalid(sub.isEmpty() ? QStringLiteral("profile needs a subcommand: list, show, set, import-kubeconfig, use, rename, duplicate, delete")
                                          : QStringLiteral("unknown subcommand 'profile %1'; use list, show, set, import-kubeconfig, use, rename, duplicate or delete").arg(sub)));
        return;
    }
    // A hand-written or older file is brought up to date first (secrets into the keychain).
    m_profiles->moveMigratedSecrets(m_migration, this, [this, command](Result<void> moved) {
        if (!moved) {
            fail(moved.error());
            return;
        }
        if (!m_migration.secretsToMove.isEmpty()) {
            m_err << "starforge-cli: note: moved " << m_migration.secretsToMove.size()
                  << " secret(s) from the settings file into the keychain" << Qt::endl;
        }
        command();
    });
}

} // namespace Starforge::Cli
