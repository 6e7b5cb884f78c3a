#pragma once

// `starforge --sandbox`: starts starforge-sandbox as a child process, waits for its connection
// file, and turns it into a connection profile (the non-secret FORGE_* values) plus the secrets,
// which the app keeps in memory only (they change at every start and never go to the keychain
// or the profiles file). The child is stopped with SIGTERM when this object goes.

#include "core/util/result.h"

#include <QMap>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QTemporaryDir>
#include <QTimer>

namespace Starforge::Config {

struct SandboxConnection
{
    QMap<QString, QString> settings;  // FORGE_* values for the profile
    QMap<QString, QString> secrets;   // FORGE_K8S_TOKEN, FORGE_S3_ACCESS_KEY, FORGE_S3_SECRET_KEY
    QString kubeconfig;

    static Result<SandboxConnection> read(const QString &connectionFile);
};

class EmbeddedSandbox final : public QObject
{
    Q_OBJECT
public:
    explicit EmbeddedSandbox(QObject *parent = nullptr);
    ~EmbeddedSandbox() override;

    // program: the starforge-sandbox executable; extra: more options (e.g. --fleet).
    void start(const QString &program, const QStringList &extra = {});
    QString connectionFile() const;

Q_SIGNALS:
    void ready(const Starforge::Config::SandboxConnection &connection);
    void failed(const QString &message);

private:
    void poll();

    QTemporaryDir m_dir;
    QProcess m_process;
    QTimer m_poll;
    QByteArray m_stderr;
    int m_waitedMs = 0;
};

} // namespace Starforge::Config
