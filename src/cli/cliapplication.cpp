#include "cli/cliapplication.h"

#include "cli/commands/commands.h"
#include "cli/output.h"
#include "core/logging/logging.h"

#include <QJsonObject>
#include <QTimer>

namespace Starforge::Cli {

namespace {

// The one dispatch table: a command path (one or two words) and the factory of its command.
struct CommandEntry
{
    const char *path;
    CommandFactory make;
};

constexpr CommandEntry Commands[] = {
    {"profile list", makeProfileListCommand},   // untranslated: a command name
    {"profile show", makeProfileShowCommand},   // untranslated: a command name
    {"profile set", makeProfileSetCommand},   // untranslated: a command name
    {"profile import-kubeconfig", makeProfileImportCommand},   // untranslated: a command name
    {"profile use", makeProfileUseCommand},   // untranslated: a command name
    {"profile rename", makeProfileRenameCommand},   // untranslated: a command name
    {"profile duplicate", makeProfileDuplicateCommand},   // untranslated: a command name
    {"profile delete", makeProfileDeleteCommand},   // untranslated: a command name
    {"capsule build", makeCapsuleBuildCommand},   // untranslated: a command name
    {"settings", makeSettingsCommand},
    {"check", makeCheckCommand},
    {"cluster-setup", makeClusterSetupCommand},
    {"manifest", makeManifestCommand},
    {"submit", makeSubmitCommand},
    {"jobs", makeJobsCommand},
    {"status", makeStatusCommand},
    {"events", makeEventsCommand},
    {"diagnose", makeDiagnoseCommand},
    {"logs", makeLogsCommand},
    {"capacity", makeCapacityCommand},
    {"stop", makeStopCommand},
    {"delete", makeDeleteCommand},
    {"history", makeHistoryCommand},
    {"playground launch", makePlaygroundLaunchCommand},   // untranslated: a command name
    {"playground list", makePlaygroundListCommand},   // untranslated: a command name
    {"playground stop", makePlaygroundStopCommand},   // untranslated: a command name
    {"playground chat", makePlaygroundChatCommand},   // untranslated: a command name
};

// The entry for the positionals: the two-word path first ("profile list"), then one word.
const CommandEntry *findCommand(const QStringList &positionals)
{
    const QString two = positionals.mid(0, 2).join(u' ');
    for (const CommandEntry &entry : Commands) {
        if (two == QLatin1String(entry.path)) return &entry;
    }
    for (const CommandEntry &entry : Commands) {
        if (!QLatin1String(entry.path).contains(u' ') && positionals.value(0) == QLatin1String(entry.path)) return &entry;
    }
    return nullptr;
}

// The words under a group ("profile": list, show, …), or the top-level words.
QStringList wordsUnder(const QString &group)
{
    QStringList words;
    for (const CommandEntry &entry : Commands) {
        const QString path = QLatin1String(entry.path);
        const QString word = group.isEmpty() ? path.section(u' ', 0, 0) : (path.startsWith(group + u' ') ? path.section(u' ', 1, 1) : QString());
        if (!word.isEmpty() && !words.contains(word)) words << word;
    }
    return words;
}

} // namespace

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

QStringList CliApplication::commandNames()
{
    QStringList names;
    for (const CommandEntry &entry : Commands) names << QLatin1String(entry.path);
    return names;
}

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

void CliApplication::failEarly(const Error &error, bool json)
{
    printError(m_err, json, error.message);
    finish(error.code == Error::Code::Internal ? InternalError : UserError);
}

void CliApplication::start()
{
    auto parsed = Arguments::parse(m_rawArguments);
    if (!parsed) {
        failEarly(parsed.error(), m_rawArguments.contains(QStringLiteral("--json")));
        return;
    }
    const Arguments &args = *parsed;
    if (args.flag(QStringLiteral("version"))) {
        m_out << "starforge-cli " << QStringLiteral(STARFORGE_VERSION) << Qt::endl;
        finish(Ok);
        return;
    }
    if (args.flag(QStringLiteral("help")) || args.positionals.isEmpty()) {
        printUsage();
        finish(args.positionals.isEmpty() && !args.flag(QStringLiteral("help")) ? UserError : Ok);
        return;
    }
    const CommandEntry *entry = findCommand(args.positionals);
    if (!entry) {
        const QString first = args.positionals.first();
        const QStringList sub = wordsUnder(first);
        const bool json = args.flag(QStringLiteral("json"));
        if (!sub.isEmpty()) {
            const QString given = args.positionals.value(1);
            failEarly(Error::invalid(given.isEmpty() ? tr("%1 needs a subcommand: %2").arg(first, sub.join(QStringLiteral(", ")))
                                                     : tr("unknown subcommand '%1 %2'; use %3").arg(first, given, sub.join(QStringLiteral(", ")))),
                      json);
        } else {
            failEarly(Error::invalid(tr("unknown command '%1'; commands: %2 (see --help)").arg(first, wordsUnder({}).join(QStringLiteral(", ")))), json);
        }
        return;
    }
    CommandContext context;
    context.args = args;
    context.environment = m_environment;
    context.secrets = m_secrets;
    context.out = &m_out;
    context.err = &m_err;
    context.terminal = m_terminal;
    m_command = entry->make(context);
    connect(m_command.get(), &Command::finished, this, [this](int exitCode) { finish(exitCode); });
    m_command->run();
}

void CliApplication::interrupt()
{
    if (m_finished) {
        return;
    }
    if (!m_command) {
        finish(Interrupted);
        return;
    }
    m_command->interrupt();
}

void CliApplication::printUsage()
{
    // One message per paragraph, each with its own alignment, so a translator keeps the columns.
    m_out << tr("usage: starforge-cli [--profile NAME | --connection-file FILE] [--config FILE] [--json] COMMAND ...\n")
          << '\n'
          << tr("Commands:\n"
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
        "  check                                test the connection: API server, sign-in, KubeRay, what the\n"
        "                                       token may do per feature, the bucket (exit 1 if a part fails)\n"
        "  cluster-setup [--namespace NS] [--user NAME]\n"
        "                                       the YAML a cluster administrator applies (kubectl apply -f -):\n"
        "                                       Namespace, ServiceAccount NAME (default starforge-user) and its\n"
        "                                       token Secret, the Role and ClusterRole every feature needs, bound\n"
        "                                       to it; NS defaults to the profile's FORGE_K8S_NAMESPACE\n")
          << '\n'
          << tr("Jobs (on the profile's cluster and bucket, or the sandbox's with --connection-file FILE;\n"
        "JOB is a job id or its RayJob name):\n"
        "  manifest SPEC [--kuberay-version V]  the RayJob SPEC would make, as JSON; nothing is submitted\n"
        "  submit SPEC [--wait] [--force]       build, upload and create the job; --wait follows it until it\n"
        "                                       is archived (exit 0 Succeeded, 3 Failed or Stopped); a job\n"
        "                                       that can never fit the cluster is refused unless --force\n"
        "  jobs [--follow]                      the jobs on the cluster and their states; --follow keeps\n"
        "                                       archiving each job that ends, one line each, until Ctrl-C\n"
        "  status JOB                           state, times, pods, and why it is not running yet\n"
        "  events JOB [--timeline]              the job's Kubernetes events, oldest first; --timeline draws\n"
        "                                       them on lanes per object over the job's phases\n"
        "  diagnose JOB                         the cause of a job that is not running, with evidence\n"
        "  logs JOB [-f] [--pod P] [--container C] [--tail N] [--grep PATTERN [-i] [-E] [--count]]\n"
        "                                       the driver's log (P: a pod, submitter, head or worker);\n"
        "                                       from the archive once the job has ended\n"
        "  capacity [--spec SPEC]               GPUs per series: total, used, free, blocked, largest free node;\n"
        "                                       with SPEC, whether its pools fit now, once busy nodes free up, or never\n"
        "  stop JOB                             stop a job; its logs and events are archived first\n"
        "  delete JOB                           remove a job and its archive (the Capsule stays)\n"
        "  history                              archived jobs, newest first\n")
          << '\n'
          << tr("Playground (vLLM pods of your own, reached through the API server's pod proxy):\n"
        "  playground launch (--model PATH|NAME | --job ID [--step N]) [--series S] [--gpus N] [--ttl 2h] [--wait]\n"
        "                                       serve a model, or a finished job's newest chat-ready checkpoint\n"
        "  playground list                      your playground pods: state, model, series, GPUs, time left\n"
        "  playground stop NAME                 delete one of them (expired and ended ones are reaped anyway)\n"
        "  playground chat NAME [PROMPT] [--system S] [--temperature T] [--top-p P] [--max-tokens N] [--session FILE]\n"
        "                                       stream a reply (PROMPT or stdin); --session keeps the conversation\n")
          << '\n'
          << tr("Secrets (FORGE_K8S_TOKEN, FORGE_S3_ACCESS_KEY, FORGE_S3_SECRET_KEY) are kept in the OS keychain only\n"
        "and are never taken as KEY=VALUE arguments. Environment variables FORGE_* override profile values.\n"
        "The profile is --profile, else $STARFORGE_PROFILE, else the active one. Exit codes: 0 ok,\n"
        "1 user error, 2 internal error, 3 the job followed by submit --wait ended Failed or Stopped,\n"
        "130 interrupted (Ctrl-C cancels a submission in progress and removes what it made).\n"
        "Messages are in the language of $STARFORGE_LANGUAGE (e.g. de, zh_CN, en), else the system's;\n"
        "--json output stays English.\n");
}


} // namespace Starforge::Cli
