#pragma once

// The app's connection to one cluster: the client for a profile's settings, a first request
// that proves the server, the TLS trust and the token (GET /version, then the permission
// check), and a state with a sentence for the status bar. The GUI and the CLI hold one each.

#include "core/kube/apierror.h"
#include "core/kube/kubeclient.h"
#include "core/kube/permissions.h"

#include <QObject>

#include <memory>
#include <optional>

namespace Starforge::Kube {

class ClusterConnection final : public QObject
{
    Q_OBJECT
public:
    enum class State { Disconnected, Connecting, Connected, Failed };
    Q_ENUM(State)

    explicit ClusterConnection(QObject *parent = nullptr);
    ~ClusterConnection() override;

    // Connecting state while the caller gathers what connectTo() needs (keychain reads).
    void prepare(const QString &server);
    void connectTo(const ClientConfig &config);
    // Failed before any request: the settings themselves are wrong (message says which).
    void fail(const QString &message);
    void disconnectFromCluster();

    State state() const { return m_state; }
    // "Connected to https://…: Kubernetes v1.32.4; Live logs is unavailable: …"
    QString statusText() const { return m_status; }
    KubeClient *client() const { return m_client.get(); }
    QString serverVersion() const { return m_serverVersion; }
    std::optional<PermissionReport> permissions() const { return m_permissions; }

Q_SIGNALS:
    void stateChanged(Starforge::Kube::ClusterConnection::State state);

private:
    void setState(State state, const QString &status);

    State m_state = State::Disconnected;
    QString m_status;
    std::unique_ptr<KubeClient> m_client;
    std::unique_ptr<PermissionCheck> m_check;
    QString m_serverVersion;
    std::optional<PermissionReport> m_permissions;
};

} // namespace Starforge::Kube
