#pragma once

// One starforge-cli command as an object. CliApplication finds it in its dispatch table, runs
// it, and forwards Ctrl-C to interrupt(); the command reports its exit code with finished().
// Every command has the same asynchronous shape: run() starts the work, callbacks on this
// object continue it (a context object plus a callback taking Result<T>), and finish() or
// fail() ends it once. What a command needs from the cluster it gets from one core Session.

#include "cli/arguments.h"
#include "core/config/profilestore.h"
#include "core/session/session.h"
#include "core/util/result.h"

#include <QObject>
#include <QProcessEnvironment>
#include <QTextStream>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace Starforge::Secrets {
class SecretStore;
}
namespace Starforge::Config {
class ProfileManager;
}
namespace Starforge::Job {
struct JobSpec;
}

namespace Starforge::Cli {

// Exit codes: 0 ok, 1 user error (the message says what to fix), 2 internal error, 3 the job
// followed by `submit --wait` ended Failed or Stopped, 130 interrupted.
// NoMatch: `logs --grep` found no line, the exit code grep gives then.
enum ExitCode { Ok = 0, UserError = 1, NoMatch = 1, InternalError = 2, JobFailed = 3, Interrupted = 130 };

// How long `submit --wait`, `stop` and `logs -f` keep trying a cluster that does not answer
// before giving up (a stopped sandbox or a refused token ends them at once). Long enough for a
// VPN to come back during an hours-long wait; the job goes on either way.
inline constexpr int LostClusterSeconds = 300;

// What every command reads: the parsed command line, the environment, the keychain, and where
// to print.
struct CommandContext
{
    Arguments args;
    QProcessEnvironment environment;
    Secrets::SecretStore *secrets = nullptr;
    QTextStream *out = nullptr;
    QTextStream *err = nullptr;
    // stdin is a terminal: a person can answer an exec credential plugin (a device-code login),
    // which then reads stdin as under kubectl.
    bool terminal = false;
};

class Command : public QObject
{
    Q_OBJECT
public:
    explicit Command(const CommandContext &context, QObject *parent = nullptr);
    ~Command() override;

    virtual void run() = 0;
    // Ctrl-C. By default the command ends (exit 130) and leaves whatever it followed as it is.
    virtual void interrupt();
    bool isFinished() const { return m_finished; }

Q_SIGNALS:
    void finished(int exitCode);

protected:
    void finish(int exitCode);
    // Prints the error (redacted; as {"error": …} with --json) and finishes with its exit code.
    // A transport error on a stopped sandbox's connection file says to start it again.
    void fail(const Error &error);
    bool json() const { return m_args.flag(QStringLiteral("json")); }
    // "starforge-cli: <text>" on stderr, redacted.
    void note(const QString &text);

    // The profiles file (--config, $STARFORGE_CONFIG_FILE or the default) and its manager.
    Result<void> loadStore();
    // --profile, else $STARFORGE_PROFILE, else the active profile.
    QString selectedProfile() const;

    // Opens a session on --connection-file or the selected profile (it becomes m_session;
    // earlier ones stay until the command ends); then() runs once it is ready (its informers,
    // if asked for, synced). A session that cannot connect, or ends while the command runs,
    // fails the command, with its error passed through describeEnd when given. While the
    // cluster is lost, the command says so on stderr.
    // --connection-file, else --profile / $STARFORGE_PROFILE / the active profile, or why none.
    Result<SessionSource> selectSource();
    void openSession(SessionOptions options, std::function<void()> then, std::function<Error(const Error &)> describeEnd = {});
    // The options of a command that reads or writes a few objects and is done: the clients
    // only, no informers, no connection check (its own requests prove the token).
    static SessionOptions clientsOnly();
    // The clients and the capacity (node and pod informers), no liveness: a command that reads
    // the capacity once. A list that fails (other than 403) fails the command.
    static SessionOptions capacityOnly();

    // The one JOB argument (a job id or a RayJob name), or fails with the usage.
    std::optional<QString> jobArgument(const QString &usage);
    // The one SPEC argument, loaded (paths in it relative to its file), or fails saying why.
    std::optional<Job::JobSpec> specArgument(const QString &usage);
    // --spec SPEC when given: nullopt without it, or (after fail()) when it does not load.
    bool loadSpecOption(std::optional<Job::JobSpec> *spec);

    // The parent of what a command runs on its session's clients (a submitter, a log stream):
    // deleted before the sessions, so nothing outlives the client it uses.
    QObject *work() const { return m_work; }

    Arguments m_args;
    QProcessEnvironment m_environment;
    Secrets::SecretStore *m_secrets;
    QTextStream &m_out;
    QTextStream &m_err;
    std::unique_ptr<Config::ProfileStore> m_store;
    std::unique_ptr<Config::ProfileManager> m_profiles; // every change goes through it, as in the GUI
    Config::MigrationReport m_migration;
    Session *m_session = nullptr;

private:
    std::vector<std::unique_ptr<Session>> m_sessions;
    bool m_finished = false;
    bool m_warnedInsecure = false;
    bool m_terminal = false;
    QObject *m_followedCredentials = nullptr;
    QObject *m_work;
};

} // namespace Starforge::Cli
