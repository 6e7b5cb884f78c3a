#pragma once

// Runs a kubeconfig exec credential plugin (aws eks get-token, gke-gcloud-auth-plugin, kubelogin)
// as kubectl runs it, and holds what it returns (a bearer token, or a client certificate and
// key) in memory until its expirationTimestamp. One run serves every request waiting for it.
//
// How kubectl runs a plugin, and so how this does:
// - command is looked up on PATH (a path with a '/' is used as it is); args and env as given, env
//   added to this process's environment;
// - KUBERNETES_EXEC_INFO holds an ExecCredential of the plugin's apiVersion whose spec says
//   whether a person is there (interactive) and, with provideClusterInfo, the cluster;
// - stdout is the ExecCredential; stderr is for people. Here stderr is read live and handed on
//   (output()), so a device-code login's "open https://... and enter the code" reaches the user:
//   the GUI shows it in a dialog, the CLI on its terminal.
// - interactiveMode: Never runs without a person; IfAvailable says whether one is there; Always
//   refuses to run without one.

#include "core/config/execplugin.h"
#include "core/net/clientidentity.h"
#include "core/util/result.h"

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QProcessEnvironment>
#include <QString>

#include <functional>
#include <optional>

class QProcess;
class QTimer;

namespace Starforge::Kube {

// What the plugin returned.
struct ExecCredential
{
    QByteArray token;                  // a bearer token, or empty when a certificate was returned
    Net::ClientIdentity identity;      // the certificate and key, or null
    QDateTime expiry;                  // invalid: valid until the server refuses it (401)
    int generation = 0;                // which run produced it

    bool isValidAt(const QDateTime &now) const { return !expiry.isValid() || now < expiry; }
};

// The cluster as provideClusterInfo hands it to the plugin.
struct ExecClusterInfo
{
    QString server;
    QByteArray certificateAuthorityPem;
    QString tlsServerName;
    bool insecureSkipTlsVerify = false;
    QString proxyUrl;
};

class ExecCredentialProvider final : public QObject
{
    Q_OBJECT
public:
    ExecCredentialProvider(Config::ExecPlugin plugin, ExecClusterInfo cluster, QObject *parent = nullptr);
    ~ExecCredentialProvider() override;

    const Config::ExecPlugin &plugin() const { return m_plugin; }

    // Whether a person can answer the plugin (the GUI's dialog, a CLI on a terminal). Without one,
    // an interactiveMode Always plugin is refused and the others run with interactive false.
    void setPersonPresent(bool present) { m_personPresent = present; }
    // For a CLI on a terminal: the plugin reads this process's stdin, as with kubectl.
    void setForwardStdin(bool forward) { m_forwardStdin = forward; }
    // The environment the plugin starts from (tests); this process's by default.
    void setEnvironment(const QProcessEnvironment &environment) { m_environment = environment; }

    // The credential in force, if there is one and it has not expired.
    std::optional<ExecCredential> current() const;

    // Answers with a credential valid now: the one in force, or the result of a run (started, or
    // joined when one is under way). done runs on context's thread, never inside this call, and
    // not at all when context is destroyed first.
    void get(const QObject *context, std::function<void(Result<ExecCredential>)> done);

    // The server refused generation's credential (401): it is dropped, so the next get() runs the
    // plugin. Refusals of an older credential than the one in force change nothing, so twenty
    // requests refused together cause one run.
    void invalidate(int generation);

    // The plugin's stdin, for a person answering in the GUI (a code, a choice).
    void writeToPlugin(const QByteArray &line);
    // Stops a run (the person closed the dialog); waiting callers get an error.
    void cancel();

    bool isRunning() const { return m_process != nullptr; }
    int runs() const { return m_runs; }

    // Parses a plugin's stdout (public for tests): the ExecCredential of apiVersion, or an error
    // that says what is wrong with it.
    static Result<ExecCredential> parseOutput(const QByteArray &stdoutText, const QString &apiVersion, const QString &command,
                                              const QDateTime &now = QDateTime::currentDateTimeUtc());
    // KUBERNETES_EXEC_INFO for a run.
    static QByteArray execInfo(const Config::ExecPlugin &plugin, const ExecClusterInfo &cluster, bool interactive);

Q_SIGNALS:
    // A run started; interactive says whether the plugin was told a person is there.
    void runStarted(const QString &command, bool interactive);
    // Text the plugin wrote on stderr, as it comes.
    void output(const QString &text);
    // The run ended; error is empty on success.
    void runFinished(const QString &error);

private:
    void start();
    void finish(Result<ExecCredential> result);
    QString describeCommand() const;

    Config::ExecPlugin m_plugin;
    ExecClusterInfo m_cluster;
    QProcessEnvironment m_environment;
    bool m_personPresent = false;
    bool m_forwardStdin = false;
    std::optional<ExecCredential> m_current;
    QProcess *m_process = nullptr;
    QByteArray m_stderr;             // the run's stderr, for the error message
    int m_runs = 0;
    int m_generation = 0;
    struct Waiter
    {
        QPointer<const QObject> context;
        bool hasContext = false;
        std::function<void(Result<ExecCredential>)> done;
    };
    QList<Waiter> m_waiters;
};

} // namespace Starforge::Kube
