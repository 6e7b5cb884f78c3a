#pragma once

// A profile's settings as people read them: a tree with one row per group (Cluster, Sign-in,
// Network, …, as SettingsSchema::groups() orders them) and the group's settings under it, each
// named by its label ("API server") with its FORGE_* key as secondary text (KeyRole) and in the
// tooltip. A proxy over ProfileSettingsModel, which stays the one place edits are validated and
// kept: setData and every role but the name column's text pass straight through.

#include "core/config/settingsschema.h"

#include <QAbstractProxyModel>

namespace Starforge::Models {

class ProfileSettingsModel;

class GroupedSettingsModel final : public QAbstractProxyModel
{
    Q_OBJECT
public:
    enum Role {
        // true on a group's row (which has no value, source or editor)
        GroupRole = Qt::UserRole + 100,
        // a group's sentence; a setting's is ProfileSettingsModel::HelpRole
        AboutRole,
    };

    explicit GroupedSettingsModel(QObject *parent = nullptr);

    void setSourceModel(QAbstractItemModel *source) override;
    ProfileSettingsModel *settings() const;

    // The row of a setting, for a view (column: a ProfileSettingsModel::Column).
    QModelIndex indexOfKey(const QString &key, int column) const;
    bool isGroup(const QModelIndex &index) const;

    QModelIndex index(int row, int column, const QModelIndex &parent = QModelIndex()) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    bool hasChildren(const QModelIndex &parent = QModelIndex()) const override;
    QModelIndex sibling(int row, int column, const QModelIndex &index) const override;
    QModelIndex mapToSource(const QModelIndex &proxyIndex) const override;
    QModelIndex mapFromSource(const QModelIndex &sourceIndex) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Span
    {
        Config::SettingGroup group;
        int first = 0; // the group's first row in the source (= in SettingsSchema::all())
        int count = 0;
    };
    // The group a source row belongs to, or -1.
    int spanOf(int sourceRow) const;
    void onSourceDataChanged(const QModelIndex &topLeft, const QModelIndex &bottomRight, const QList<int> &roles);

    QList<Span> m_spans;
};

} // namespace Starforge::Models
