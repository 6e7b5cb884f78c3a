#include "core/config/embeddedsandbox.h"

#include "core/config/settingsschema.h"
#include "core/logging/logging.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

#include <csignal>
#include <sys/prctl.h>

namespace Starforge::Config {

namespace {
constexpr int StartTimeoutMs = 60000;
}

Result<SandboxConnection> SandboxConnection::read(const QString &connectionFile)
{
    QFile file(connectionFile);
    if (!file.open(QIODevice::ReadOnly)) {
        return Error::io(EmbeddedSandbox::tr("cannot read the sandbox connection file %1: %2").arg(connectionFile, file.errorString()));
    }
    const QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
    const QJsonObject forge = root.value(QStringLiteral("forge")).toObject();
    if (forge.isEmpty()) {
        return Error::invalid(EmbeddedSandbox::tr("%1 is not a starforge-sandbox connection file (no \"forge\" values)").arg(connectionFile));
    }
    SandboxConnection out;
    for (auto it = forge.begin(); it != forge.end(); ++it) {
        const SettingDefinition *d = SettingsSchema::find(it.key());
        if (!d) {
            continue; // a newer sandbox may know settings this app does not
        }
        (d->isSecret() ? out.secrets : out.settings).insert(it.key(), it.value().toString());
    }
    for (const QString &secret : std::as_const(out.secrets)) {
        Logging::addSecret(secret);
    }
    out.kubeconfig = root.value(QStringLiteral("kubeconfig")).toString();
    return out;
}

EmbeddedSandbox::EmbeddedSandbox(QObject *parent) : QObject(parent)
{
    m_poll.setInterval(50);
    connect(&m_poll, &QTimer::timeout, this, &EmbeddedSandbox::poll);
    connect(&m_process, &QProcess::readyReadStandardError, this, [this] { m_stderr += m_process.readAllStandardError(); });
    connect(&m_process, &QProcess::finished, this, [this](int code) {
        if (m_poll.isActive()) {
            m_poll.stop();
            Q_EMIT failed(tr("starforge-sandbox stopped (exit code %1) before it was ready: %2")
                              .arg(code).arg(QString::fromUtf8(m_stderr).trimmed()));
        }
    });
    connect(&m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) {
            m_poll.stop();
            Q_EMIT failed(tr("cannot start %1: %2 (build it with scripts/run.sh)").arg(m_process.program(), m_process.errorString()));
        }
    });
}

EmbeddedSandbox::~EmbeddedSandbox()
{
    if (m_process.state() != QProcess::NotRunning) {
        m_process.terminate();
        if (!m_process.waitForFinished(5000)) {
            m_process.kill();
            m_process.waitForFinished(2000);
        }
    }
}

QString EmbeddedSandbox::connectionFile() const
{
    return m_dir.filePath(QStringLiteral("connection.json"));
}

void EmbeddedSandbox::start(const QString &program, const QStringList &extra)
{
    m_process.setProgram(program);
    m_process.setArguments(QStringList{QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"), QStringLiteral("--connection-file"),
                                       connectionFile()} + extra);
    m_process.setProcessChannelMode(QProcess::SeparateChannels);
    // If the app dies without cleaning up, the kernel stops the sandbox too.
    m_process.setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGTERM); });
    m_process.start();
    m_waitedMs = 0;
    m_poll.start();
}

void EmbeddedSandbox::poll()
{
    m_waitedMs += m_poll.interval();
    if (QFile::exists(connectionFile())) {
        m_poll.stop();
        auto connection = SandboxConnection::read(connectionFile());
        if (connection) {
            Q_EMIT ready(*connection);
        } else {
            Q_EMIT failed(connection.error().message);
        }
        return;
    }
    if (m_waitedMs > StartTimeoutMs) {
        m_poll.stop();
        m_process.kill();
        Q_EMIT failed(tr("starforge-sandbox did not become ready within %1 s").arg(StartTimeoutMs / 1000));
    }
}

} // namespace Starforge::Config
