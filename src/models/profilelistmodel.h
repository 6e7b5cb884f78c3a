#pragma once

// The connection profiles as a list: one row per profile, the active one in bold, the API server
// as a second line of text for the tooltip. Follows the ProfileManager's signals.

#include <QAbstractListModel>
#include <QStringList>

namespace Starforge::Config {
class ProfileManager;
}

namespace Starforge::Models {

class ProfileListModel final : public QAbstractListModel
{
    Q_OBJECT
public:
    enum Role {
        NameRole = Qt::UserRole + 1,
        ActiveRole,
        ServerRole,
    };

    explicit ProfileListModel(Config::ProfileManager *manager, QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

    // -1 when there is no such profile.
    int rowOf(const QString &name) const { return static_cast<int>(m_names.indexOf(name)); }
    QString nameAt(int row) const { return m_names.value(row); }

private:
    void reload();

    Config::ProfileManager *m_manager;
    QStringList m_names;
};

} // namespace Starforge::Models
