#include "core/kube/clusterconnection.h"

namespace Starforge::Kube {

ClusterConnection::ClusterConnection(QObject *parent)
    : QObject(parent)
{
    m_status = tr("Not connected");
}

ClusterConnection::~ClusterConnection() = default;

void ClusterConnection::setState(State state, const QString &status)
{
    m_status = status;
    m_state = state;
    Q_EMIT stateChanged(state);
}

void ClusterConnection::disconnectFromCluster()
{
    m_check.reset();
    m_client.reset();   // aborts whatever is in flight: the callbacks' context is gone
    m_permissions.reset();
    m_serverVersion.clear();
    setState(State::Disconnected, tr("Not connected"));
}

void ClusterConnection::fail(const QString &message)
{
    disconnectFromCluster();
    setState(State::Failed, tr("Not connected: %1").arg(message));
}

void ClusterConnection::prepare(const QString &server)
{
    disconnectFromCluster();
    setState(State::Connecting, tr("Connecting to %1…").arg(server));
}

void ClusterConnection::connectTo(const ClientConfig &config)
{
    disconnectFromCluster();
    m_client = std::make_unique<KubeClient>(config);
    const QString server = config.server.toString();
    setState(State::Connecting, tr("Connecting to %1…").arg(server));
    ApiRequest version;
    version.path = QStringLiteral("/version");
    version.what = tr("reach the API server");
    KubeClient *client = m_client.get();
    client->send(version, client, [this, client, config, server](const ApiResult &result) {
        if (!result.ok()) {
            setState(State::Failed, tr("Not connected: %1").arg(result.error->message));
            return;
        }
        m_serverVersion = result.json().value(QLatin1String("gitVersion")).toString();
        // /version is public on many clusters: the permission check is what proves the token.
        m_check = std::make_unique<PermissionCheck>(client, config.ns);
        connect(m_check.get(), &PermissionCheck::finished, this, [this, server](const PermissionReport &report) {
            m_permissions = report;
            if (report.error) {
                setState(State::Failed, tr("Not connected: %1").arg(report.error->message));
                return;
            }
            const QString versionText = m_serverVersion.isEmpty() ? QString() : tr(" (Kubernetes %1)").arg(m_serverVersion);
            const QString head = tr("Connected to %1%2, namespace %3").arg(server, versionText, report.ns);
            setState(State::Connected, report.allAllowed() ? head : head + QStringLiteral(". ") + report.summary().replace(QLatin1Char('\n'), QLatin1Char(' ')));
        });
        m_check->start();
    });
}

} // namespace Starforge::Kube
