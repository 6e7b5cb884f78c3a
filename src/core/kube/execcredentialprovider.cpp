#include "core/kube/execcredentialprovider.h"

#include "core/logging/logging.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTimer>

namespace Starforge::Kube {

namespace {

// A credential that expires within this margin is renewed first, so a request does not leave
// with a token that lapses on the way.
constexpr int RenewMarginSeconds = 5;
// Enough of a plugin's stderr to explain a failure; a chatty plugin cannot grow it without end.
constexpr qsizetype StderrKept = 64 * 1024;

QString lastLines(const QByteArray &text, int count)
{
    QStringList lines = QString::fromUtf8(text).trimmed().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    if (lines.size() > count) lines = lines.mid(lines.size() - count);
    return Logging::redact(lines.join(QStringLiteral(" / ")));
}

} // namespace

ExecCredentialProvider::ExecCredentialProvider(Config::ExecPlugin plugin, ExecClusterInfo cluster, QObject *parent)
    : QObject(parent)
    , m_plugin(std::move(plugin))
    , m_cluster(std::move(cluster))
    , m_environment(QProcessEnvironment::systemEnvironment())
{
}

ExecCredentialProvider::~ExecCredentialProvider()
{
    if (m_process) {
        m_process->disconnect(this);
        m_process->kill();
        m_process->waitForFinished(2000);
    }
}

QString ExecCredentialProvider::describeCommand() const
{
    return QFileInfo(m_plugin.command).fileName();
}

std::optional<ExecCredential> ExecCredentialProvider::current() const
{
    if (m_current && m_current->isValidAt(QDateTime::currentDateTimeUtc().addSecs(RenewMarginSeconds))) {
        return m_current;
    }
    return std::nullopt;
}

void ExecCredentialProvider::get(const QObject *context, std::function<void(Result<ExecCredential>)> done)
{
    if (const auto credential = current()) {
        QTimer::singleShot(0, context ? context : this, [done = std::move(done), credential = *credential] { done(credential); });
        return;
    }
    m_waiters.append({context, context != nullptr, std::move(done)});
    if (!m_process) {
        // Started from the event loop, so every request of this turn joins the same run.
        QTimer::singleShot(0, this, [this] {
            if (!m_process && !m_waiters.isEmpty()) start();
        });
    }
}

void ExecCredentialProvider::invalidate(int generation)
{
    if (m_current && m_current->generation == generation) {
        qCInfo(lcSession) << "the API server refused the credential of" << describeCommand() << "; running it again";
        m_current.reset();
    }
}

void ExecCredentialProvider::writeToPlugin(const QByteArray &line)
{
    if (m_process && !m_forwardStdin) {
        m_process->write(line.endsWith('\n') ? line : line + '\n');
    }
}

void ExecCredentialProvider::cancel()
{
    if (m_process) {
        QProcess *process = m_process;
        process->disconnect(this);
        process->kill();
        process->waitForFinished(2000);
        process->deleteLater();
        m_process = nullptr;
        finish(Error::unavailable(tr("Signing in with %1 was cancelled.").arg(describeCommand())));
    }
}

QByteArray ExecCredentialProvider::execInfo(const Config::ExecPlugin &plugin, const ExecClusterInfo &cluster, bool interactive)
{
    QJsonObject spec{{QStringLiteral("interactive"), interactive}};
    if (plugin.provideClusterInfo) {
        QJsonObject c{{QStringLiteral("server"), cluster.server}};
        if (!cluster.tlsServerName.isEmpty()) c.insert(QStringLiteral("tls-server-name"), cluster.tlsServerName);
        if (cluster.insecureSkipTlsVerify) c.insert(QStringLiteral("insecure-skip-tls-verify"), true);
        // []byte in Go's JSON: base64 of the PEM text.
        if (!cluster.certificateAuthorityPem.isEmpty()) {
            c.insert(QStringLiteral("certificate-authority-data"), QString::fromLatin1(cluster.certificateAuthorityPem.toBase64()));
        }
        if (!cluster.proxyUrl.isEmpty()) c.insert(QStringLiteral("proxy-url"), cluster.proxyUrl);
        spec.insert(QStringLiteral("cluster"), c);
    }
    const QJsonObject info{{QStringLiteral("apiVersion"), plugin.apiVersion}, {QStringLiteral("kind"), QStringLiteral("ExecCredential")},
                           {QStringLiteral("spec"), spec}};
    return QJsonDocument(info).toJson(QJsonDocument::Compact);
}

void ExecCredentialProvider::start()
{
    bool interactive = false;
    switch (m_plugin.interactiveMode) {
    case Config::ExecPlugin::Interactive::Never: interactive = false; break;
    case Config::ExecPlugin::Interactive::IfAvailable: interactive = m_personPresent; break;
    case Config::ExecPlugin::Interactive::Always:
        if (!m_personPresent) {
            finish(Error::unavailable(tr("The exec credential plugin %1 needs a person to sign in (interactiveMode: Always), and "
                                         "there is none here. Sign in from the Starforge window, or from starforge-cli on a terminal.")
                                          .arg(describeCommand())));
            return;
        }
        interactive = true;
        break;
    }

    // kubectl looks the command up on its own PATH; a path is taken as it is.
    QString program;
    if (m_plugin.command.contains(QLatin1Char('/'))) {
        const QFileInfo info(m_plugin.command);
        if (info.isFile() && info.isExecutable()) program = info.absoluteFilePath();
    } else {
        const QStringList path = m_environment.value(QStringLiteral("PATH")).split(QLatin1Char(':'), Qt::SkipEmptyParts);
        program = QStandardPaths::findExecutable(m_plugin.command, path);
    }
    if (program.isEmpty()) {
        const QString where = m_plugin.command.contains(QLatin1Char('/')) ? tr("%1 is not an executable file.").arg(m_plugin.command)
                                                                          : tr("'%1' is not on PATH.").arg(m_plugin.command);
        const QString hint = m_plugin.installHint.trimmed().isEmpty()
            ? tr("Install it, or give its full path in the kubeconfig's user.exec.command (FORGE_K8S_EXEC).")
            : m_plugin.installHint.trimmed();
        finish(Error::notFound(tr("Cannot sign in: the exec credential plugin %1 %2").arg(where, hint)));
        return;
    }

    ++m_runs;
    m_stderr.clear();
    m_process = new QProcess(this);
    QProcessEnvironment environment = m_environment;
    for (const auto &[name, value] : m_plugin.env) environment.insert(name, value);
    environment.insert(QStringLiteral("KUBERNETES_EXEC_INFO"), QString::fromUtf8(execInfo(m_plugin, m_cluster, interactive)));
    m_process->setProcessEnvironment(environment);
    m_process->setProgram(program);
    m_process->setArguments(m_plugin.args);
    if (interactive && m_forwardStdin) m_process->setInputChannelMode(QProcess::ForwardedInputChannel);
    QProcess *process = m_process;
    connect(process, &QProcess::readyReadStandardError, this, [this, process] {
        const QByteArray chunk = process->readAllStandardError();
        m_stderr += chunk;
        if (m_stderr.size() > StderrKept) m_stderr = m_stderr.right(StderrKept);
        Q_EMIT output(Logging::redact(QString::fromUtf8(chunk)));
    });
    connect(process, &QProcess::errorOccurred, this, [this, process, program](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart || m_process != process) return;
        m_process = nullptr;
        process->deleteLater();
        finish(Error::unavailable(tr("The exec credential plugin %1 could not be started: %2").arg(program, process->errorString())));
    });
    connect(process, &QProcess::finished, this, [this, process](int exitCode, QProcess::ExitStatus status) {
        if (m_process != process) return;
        m_process = nullptr;
        process->deleteLater();
        m_stderr += process->readAllStandardError();
        if (status != QProcess::NormalExit || exitCode != 0) {
            const QString said = lastLines(m_stderr, 4);
            finish(Error::unavailable(
                (status != QProcess::NormalExit ? tr("The exec credential plugin %1 crashed.").arg(describeCommand())
                                                : tr("The exec credential plugin %1 failed (exit code %2).").arg(describeCommand()).arg(exitCode))
                + (said.isEmpty() ? QString() : QLatin1Char(' ') + tr("It said: %1").arg(said))));
            return;
        }
        finish(parseOutput(process->readAllStandardOutput(), m_plugin.apiVersion, describeCommand()));
    });
    qCInfo(lcSession) << "running the exec credential plugin" << program << (interactive ? "(interactive)" : "");
    Q_EMIT runStarted(describeCommand(), interactive);
    process->start();
    if (!interactive || !m_forwardStdin) {
        // A plugin that reads stdin without a person would wait for ever; the GUI writes to it
        // through writeToPlugin() while it is interactive.
        if (!interactive) process->closeWriteChannel();
    }
}

void ExecCredentialProvider::finish(Result<ExecCredential> result)
{
    if (result) {
        result.value().generation = ++m_generation;
        m_current = result.value();
    }
    Q_EMIT runFinished(result ? QString() : result.error().message);
    const QList<Waiter> waiters = std::exchange(m_waiters, {});
    for (const Waiter &w : waiters) {
        if (w.hasContext && !w.context) continue;
        // Answered from the event loop: a caller never sees its callback inside get().
        QTimer::singleShot(0, w.context ? w.context.data() : static_cast<const QObject *>(this), [done = w.done, result] { done(result); });
    }
}

Result<ExecCredential> ExecCredentialProvider::parseOutput(const QByteArray &stdoutText, const QString &apiVersion, const QString &command,
                                                           const QDateTime &now)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(stdoutText, &error);
    if (!document.isObject()) {
        return Error::invalid(tr("The exec credential plugin %1 printed no ExecCredential on its standard output (%2).")
                                  .arg(command, stdoutText.trimmed().isEmpty() ? tr("it printed nothing") : error.errorString()));
    }
    const QJsonObject o = document.object();
    if (o.value(QStringLiteral("kind")).toString() != QLatin1String("ExecCredential")) {
        return Error::invalid(tr("The exec credential plugin %1 printed a '%2', not an ExecCredential.")
                                  .arg(command, o.value(QStringLiteral("kind")).toString()));
    }
    const QString version = o.value(QStringLiteral("apiVersion")).toString();
    if (version != apiVersion) {
        return Error::invalid(tr("The exec credential plugin %1 answered in %2, but the kubeconfig asks for %3; set the exec "
                                 "apiVersion to what the plugin speaks.")
                                  .arg(command, version.isEmpty() ? tr("no apiVersion") : version, apiVersion));
    }
    const QJsonObject status = o.value(QStringLiteral("status")).toObject();
    ExecCredential credential;
    const QString expiry = status.value(QStringLiteral("expirationTimestamp")).toString();
    if (!expiry.isEmpty()) {
        credential.expiry = QDateTime::fromString(expiry, Qt::ISODateWithMs);
        if (!credential.expiry.isValid()) credential.expiry = QDateTime::fromString(expiry, Qt::ISODate);
        if (!credential.expiry.isValid()) {
            return Error::invalid(tr("The exec credential plugin %1 gave an expirationTimestamp that is not RFC 3339: '%2'.").arg(command, expiry));
        }
        if (credential.expiry <= now) {
            return Error::invalid(tr("The exec credential plugin %1 returned a credential that expired at %2; check this machine's clock.")
                                      .arg(command, credential.expiry.toUTC().toString(Qt::ISODate)));
        }
    }
    credential.token = status.value(QStringLiteral("token")).toString().toUtf8();
    const QByteArray certificate = status.value(QStringLiteral("clientCertificateData")).toString().toUtf8();
    const QByteArray key = status.value(QStringLiteral("clientKeyData")).toString().toUtf8();
    if (!key.isEmpty()) Logging::addSecret(QString::fromUtf8(key));
    if (!credential.token.isEmpty()) {
        Logging::addSecret(QString::fromUtf8(credential.token));
    } else if (!certificate.isEmpty() || !key.isEmpty()) {
        auto identity = Net::ClientIdentity::fromPem(certificate, tr("the certificate exec plugin %1 returned").arg(command), key,
                                                     tr("the key exec plugin %1 returned").arg(command), now);
        if (!identity) return identity.error();
        credential.identity = *identity;
    } else {
        return Error::invalid(tr("The exec credential plugin %1 returned neither a token nor a client certificate and key.").arg(command));
    }
    return credential;
}

} // namespace Starforge::Kube
