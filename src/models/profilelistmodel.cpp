#include "models/profilelistmodel.h"

#include "core/config/profilemanager.h"

#include <QFont>

namespace Starforge::Models {

ProfileListModel::ProfileListModel(Config::ProfileManager *manager, QObject *parent)
    : QAbstractListModel(parent)
    , m_manager(manager)
    , m_names(manager->store().profileNames())
{
    connect(m_manager, &Config::ProfileManager::profilesChanged, this, &ProfileListModel::reload);
    connect(m_manager, &Config::ProfileManager::profileChanged, this, [this](const QString &name) {
        const int row = rowOf(name);
        if (row >= 0) {
            Q_EMIT dataChanged(index(row), index(row));
        }
    });
}

void ProfileListModel::reload()
{
    const QStringList names = m_manager->store().profileNames();
    if (names == m_names) {
        // Same rows; the active profile may have changed.
        if (!m_names.isEmpty()) {
            Q_EMIT dataChanged(index(0), index(static_cast<int>(m_names.size()) - 1));
        }
        return;
    }
    beginResetModel();
    m_names = names;
    endResetModel();
}

int ProfileListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_names.size());
}

QVariant ProfileListModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const QString name = m_names.at(index.row());
    const bool active = name == m_manager->store().activeProfile();
    const auto profile = m_manager->store().profile(name);
    const QString server = profile ? profile->values.value(QStringLiteral("FORGE_K8S_API_SERVER")) : QString();
    switch (role) {
    case Qt::DisplayRole:
        return active ? tr("%1 (active)").arg(name) : name;
    case Qt::EditRole:
    case NameRole:
        return name;
    case ActiveRole:
        return active;
    case ServerRole:
        return server;
    case Qt::ToolTipRole:
        return server.isEmpty() ? tr("%1: no API server set").arg(name) : tr("%1: %2").arg(name, server);
    case Qt::FontRole:
        if (active) {
            QFont font;
            font.setBold(true);
            return font;
        }
        return {};
    default:
        return {};
    }
}

QHash<int, QByteArray> ProfileListModel::roleNames() const
{
    auto roles = QAbstractListModel::roleNames();
    roles.insert(NameRole, "name");
    roles.insert(ActiveRole, "active");
    roles.insert(ServerRole, "server");
    return roles;
}

} // namespace Starforge::Models
