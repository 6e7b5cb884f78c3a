#pragma once

// The settings of one profile as a table for editing: setting, value, source. Edits are kept as
// pending changes, validated as they are made (the error shows on the row at once), and handed to
// ProfileManager::setValues on apply, so one bad value never reaches the file. Secrets never hold
// their value here beyond the pending edit: the table shows only whether each is set.

#include "core/config/effectiveconfig.h"

#include <QAbstractTableModel>
#include <QMap>
#include <QProcessEnvironment>

namespace Starforge::Config {
class ProfileManager;
}

namespace Starforge::Models {

class ProfileSettingsModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { KeyColumn, ValueColumn, SourceColumn, ColumnCount };
    enum Role {
        KeyRole = Qt::UserRole + 1,
        ErrorRole,      // the validation message of a pending edit, or empty
        PendingRole,    // true when the row has an unapplied edit
        SecretRole,     // true for the three secrets
        HelpRole,       // the setting's help text
        DefinitionRole, // const SettingDefinition* as quintptr, for editors
    };

    ProfileSettingsModel(Config::ProfileManager *manager, QProcessEnvironment environment, QObject *parent = nullptr);

    // Shows a profile (or none); drops pending edits.
    void setProfile(const QString &name);
    QString profile() const { return m_profile; }
    // Which secrets the keychain holds for the profile (read asynchronously by the caller).
    void setSecretsPresent(const QMap<QString, bool> &present);
    // When the keychain could not be read: the secret rows say so instead of "not set".
    void setKeychainProblem(const QString &message);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    bool setData(const QModelIndex &index, const QVariant &value, int role = Qt::EditRole) override;

    // Marks a row to go back to its default (a secret: to be cleared) on apply.
    void resetRow(int row);
    // Forgets pending edits.
    void revert() override;

    bool hasPendingChanges() const { return !m_pending.isEmpty(); }
    bool hasErrors() const;
    // key -> value for ProfileManager::setValues (empty: reset or clear).
    QMap<QString, QString> pendingChanges() const { return m_pending; }
    // Every validation message of the pending edits, one per line.
    QStringList errors() const;
    int rowOf(const QString &key) const;

Q_SIGNALS:
    void pendingChanged();

private:
    void reload();
    const Config::SettingDefinition &definitionAt(int row) const;

    Config::ProfileManager *m_manager;
    QProcessEnvironment m_environment;
    QString m_profile;
    Config::EffectiveConfig m_config;
    QMap<QString, bool> m_secretsPresent;
    QString m_keychainProblem;
    QMap<QString, QString> m_pending;
    QMap<QString, QString> m_errors;
};

} // namespace Starforge::Models
