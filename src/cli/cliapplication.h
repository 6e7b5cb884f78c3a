#pragma once

// starforge-cli as an object: parses the command line, runs one command asynchronously (the
// keychain answers over D-Bus) and reports the exit code with finished(). Exit codes: 0 ok,
// 1 user error (the message says what to fix), 2 internal error.

#include "cli/arguments.h"
#include "core/config/profilestore.h"
#include "core/util/result.h"

#include <QMap>
#include <QObject>
#include <QProcessEnvironment>
#include <QTextStream>
#include <QVersionNumber>

#include <functional>
#include <memory>
#include <optional>

namespace Starforge::Secrets {
class SecretStore;
}
namespace Starforge::Config {
class ProfileManager;
}
namespace Starforge::Job {
struct JobSnapshot;
struct JobSpec;
}

namespace Starforge::Cli {

struct ClusterSession;

class CliApplication final : public QObject
{
    Q_OBJECT
public:
    // JobFailed: `submit --wait` followed a job that ended Failed or Stopped.
    enum ExitCode { Ok = 0, UserError = 1, InternalError = 2, JobFailed = 3, Interrupted = 130 };

    CliApplication(QStringList arguments, QProcessEnvironment environment, Secrets::SecretStore *secrets,
                   QTextStream &out, QTextStream &err, QObject *parent = nullptr);
    ~CliApplication() override;

    // Runs the command; finished() follows, possibly later from the event loop.
    void start();
    // Ctrl-C: a submission is cancelled and cleaned up (finished() follows when it is); a
    // wait or a log follow stops, leaving the job as it is. A second interrupt quits at once.
    void interrupt();

Q_SIGNALS:
    void finished(int exitCode);

private:
    void finish(int exitCode);
    void fail(const Error &error);
    static int exitCodeFor(const Error &error);
    QString selectedProfile() const;
    Result<void> loadStore();

    void printUsage();
    void runSettings();
    void runProfile();
    void runCapsule();

    // Job commands (jobcommands.cpp, clustercommands.cpp). openSession reads the settings in
    // force (the profile and its keychain secrets, or --connection-file) and makes the clients.
    void openSession(std::function<void()> then);
    void runManifest();
    void runSubmit();
    void waitForJob(const QString &jobId, bool operatorEnforcesDeadline);
    // The KubeRay release RayJobs are built for: --kuberay-version, else the cluster's CRD.
    void withOperatorVersion(std::function<void(QVersionNumber)> then);
    // Opens the session, finds JOB and refuses a RayJob Starforge did not make; then(snapshot)
    // (its RayJob absent when the cluster no longer has the job).
    void withOwnJob(const QString &job, const QString &verb, std::function<void(const Job::JobSnapshot *)> then);
    void runStop();
    void runDelete();
    void runJobs();
    void runStatus();
    void runEvents();
    void runDiagnose();
    void runLogs();
    void printArchivedLog(const QString &jobId);
    // One object of a job's archive (keyOf: an ArchiveKeys function), or fails saying the job
    // is neither on the cluster nor in the history.
    void readArchived(const QString &jobId, QString (*keyOf)(const QString &), std::function<void(const QByteArray &)> then);
    void runCapacity();
    void runHistory();
    static const QMap<QString, void (CliApplication::*)()> &jobCommands();
    // The one JOB argument of a job command, or fails with the usage.
    std::optional<QString> jobArgument(const QString &usage);
    // The one SPEC argument, loaded (paths in it relative to its file), or fails saying why.
    std::optional<Job::JobSpec> specArgument(const QString &usage);
    void profileList();
    void profileShow();
    void profileSet();
    void profileImportKubeconfig();
    void profileDelete();
    void profileUse();
    void profileRename();
    void profileDuplicate();

    QStringList m_rawArguments;
    Arguments m_args;
    QProcessEnvironment m_environment;
    Secrets::SecretStore *m_secrets;
    QTextStream &m_out;
    QTextStream &m_err;
    std::unique_ptr<Config::ProfileStore> m_store;
    std::unique_ptr<Config::ProfileManager> m_profiles; // every change goes through it, as in the GUI
    Config::MigrationReport m_migration;
    std::unique_ptr<ClusterSession> m_session;
    std::unique_ptr<QObject> m_work;    // the command's long-lived parts (submitter, tracker, stream)
    bool m_finished = false;
    bool m_interrupted = false;
};

} // namespace Starforge::Cli
