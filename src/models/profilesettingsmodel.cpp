#include "models/profilesettingsmodel.h"

#include "core/config/profilemanager.h"
#include "core/config/settingsschema.h"
#include "models/tones.h"

#include <QBrush>
#include <QColor>
#include <QFont>

namespace Starforge::Models {

using Config::SettingDefinition;
using Config::SettingsSchema;
using Config::ValueSource;

ProfileSettingsModel::ProfileSettingsModel(Config::ProfileManager *manager, QProcessEnvironment environment, QObject *parent)
    : QAbstractTableModel(parent)
    , m_manager(manager)
    , m_environment(std::move(environment))
    , m_config(Config::EffectiveConfig::resolve(std::nullopt, m_environment))
{
    connect(m_manager, &Config::ProfileManager::profileChanged, this, [this](const QString &name) {
        if (name == m_profile) {
            reload();
        }
    });
    connect(m_manager, &Config::ProfileManager::profilesChanged, this, [this] {
        if (!m_profile.isEmpty() && !m_manager->store().contains(m_profile)) {
            setProfile(QString());
        } else {
            reload();
        }
    });
}

const SettingDefinition &ProfileSettingsModel::definitionAt(int row) const
{
    return SettingsSchema::all().at(row);
}

int ProfileSettingsModel::rowOf(const QString &key) const
{
    const auto &all = SettingsSchema::all();
    for (int i = 0; i < all.size(); ++i) {
        if (all.at(i).key == key) {
            return i;
        }
    }
    return -1;
}

void ProfileSettingsModel::setProfile(const QString &name)
{
    beginResetModel();
    m_profile = name;
    m_pending.clear();
    m_errors.clear();
    m_secretsPresent.clear();
    m_keychainProblem.clear();
    m_config = Config::EffectiveConfig::resolve(m_manager->store().profile(name), m_environment);
    endResetModel();
    Q_EMIT pendingChanged();
}

void ProfileSettingsModel::reload()
{
    m_config = Config::EffectiveConfig::resolve(m_manager->store().profile(m_profile), m_environment);
    if (rowCount() > 0) {
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
    }
}

void ProfileSettingsModel::setKeychainProblem(const QString &message)
{
    m_keychainProblem = message;
    m_secretsPresent.clear();
    for (const QString &key : SettingsSchema::secretKeys()) {
        const int row = rowOf(key);
        Q_EMIT dataChanged(index(row, ValueColumn), index(row, SourceColumn));
    }
}

void ProfileSettingsModel::setSecretsPresent(const QMap<QString, bool> &present)
{
    m_keychainProblem.clear();
    m_secretsPresent = present;
    for (const QString &key : SettingsSchema::secretKeys()) {
        const int row = rowOf(key);
        Q_EMIT dataChanged(index(row, ValueColumn), index(row, SourceColumn));
    }
}

int ProfileSettingsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || m_profile.isEmpty() ? 0 : static_cast<int>(SettingsSchema::all().size());
}

int ProfileSettingsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ProfileSettingsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    switch (section) {
    case KeyColumn:
        return tr("Setting");
    case ValueColumn:
        return tr("Value");
    case SourceColumn:
        return tr("Source");
    default:
        return {};
    }
}

Qt::ItemFlags ProfileSettingsModel::flags(const QModelIndex &index) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) {
        return Qt::NoItemFlags;
    }
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
    if (index.column() == ValueColumn) {
        f |= Qt::ItemIsEditable;
    }
    return f;
}

QVariant ProfileSettingsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const SettingDefinition &d = definitionAt(index.row());
    const Config::EffectiveValue *effective = m_config.find(d.key);
    const bool pending = m_pending.contains(d.key);
    const QString error = m_errors.value(d.key);
    const auto profile = m_manager->store().profile(m_profile);
    const QString profileValue = profile ? profile->values.value(d.key) : QString();

    switch (role) {
    case KeyRole:
        return d.key;
    case ErrorRole:
        return error;
    case PendingRole:
        return pending;
    case SecretRole:
        return d.isSecret();
    case HelpRole:
        return d.translatedHelp();
    case DefinitionRole:
        return QVariant::fromValue(reinterpret_cast<quintptr>(&d));
    case Qt::ToolTipRole:
        if (!error.isEmpty()) {
            return error;
        }
        if (d.isSecret() && !m_keychainProblem.isEmpty()) {
            return m_keychainProblem;
        }
        if (index.column() == SourceColumn && effective && effective->source == ValueSource::Environment) {
            return tr("The environment variable %1 is set and overrides the profile while it is.").arg(d.key);
        }
        return d.translatedHelp();
    case Qt::ForegroundRole:
        if (!error.isEmpty()) {
            return QBrush(Tones::text(Tones::Tone::Error));
        }
        if (index.column() == ValueColumn && !pending && !d.isSecret() && effective && effective->source == ValueSource::Default) {
            return QBrush(Tones::current().color(QPalette::PlaceholderText)); // defaults are quieter than what the user chose
        }
        return {};
    case Qt::FontRole:
        if (pending || index.column() == KeyColumn) {
            QFont font;
            font.setBold(pending);
            if (index.column() == KeyColumn) {
                font.setFamily(QStringLiteral("monospace"));
                font.setStyleHint(QFont::Monospace);
            }
            return font;
        }
        return {};
    case Qt::EditRole:
        if (index.column() != ValueColumn) {
            return data(index, Qt::DisplayRole);
        }
        if (d.isSecret()) {
            return QString(); // never hand a secret to an editor
        }
        return pending ? m_pending.value(d.key) : profileValue;
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }

    // Qt::DisplayRole
    switch (index.column()) {
    case KeyColumn:
        return d.key;
    case ValueColumn:
        if (d.isSecret()) {
            if (pending) {
                return m_pending.value(d.key).isEmpty() ? tr("(cleared on apply)") : tr("•••••••• (saved to the keychain on apply)");
            }
            if (effective && effective->source == ValueSource::Environment) {
                return tr("set in the environment");
            }
            if (!m_keychainProblem.isEmpty()) {
                return tr("(keychain unavailable)");
            }
            if (!m_secretsPresent.contains(d.key)) {
                return tr("(checking keychain…)");
            }
            return m_secretsPresent.value(d.key) ? tr("set in the keychain") : tr("not set");
        }
        if (pending) {
            const QString v = m_pending.value(d.key);
            if (v.trimmed().isEmpty()) {
                return d.defaultValue.isEmpty() ? tr("(unset on apply)") : tr("%1 (default, on apply)").arg(d.defaultValue);
            }
            return v;
        }
        if (!effective || effective->value.isEmpty()) {
            return d.optional ? tr("(not set)") : QString();
        }
        return effective->value;
    case SourceColumn: {
        if (pending) {
            return tr("edited");
        }
        if (!effective) {
            return QString();
        }
        if (d.isSecret() && effective->source != ValueSource::Environment) {
            return m_secretsPresent.value(d.key) ? Config::sourceDisplayName(ValueSource::Keychain) : QString();
        }
        if (effective->source == ValueSource::Environment && !profileValue.isEmpty()) {
            return tr("environment (profile: %1)").arg(profileValue);
        }
        return effective->source == ValueSource::Unset ? QString() : Config::sourceDisplayName(effective->source);
    }
    default:
        return {};
    }
}

bool ProfileSettingsModel::setData(const QModelIndex &index, const QVariant &value, int role)
{
    if (role != Qt::EditRole || !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)
        || index.column() != ValueColumn) {
        return false;
    }
    const SettingDefinition &d = definitionAt(index.row());
    const QString text = value.toString();
    if (d.isSecret() && text.isEmpty()) {
        return false; // an empty editor is "no change"; clearing is resetRow()
    }
    const auto profile = m_manager->store().profile(m_profile);
    const QString current = profile ? profile->values.value(d.key) : QString();
    // Choosing the default of a setting that is at its default is no change.
    const bool same = text.trimmed() == current || (current.isEmpty() && text.trimmed() == d.defaultValue);
    if (!d.isSecret() && same && !m_pending.contains(d.key)) {
        return false;
    }
    if (!d.isSecret() && same) {
        m_pending.remove(d.key);
        m_errors.remove(d.key);
    } else {
        m_pending.insert(d.key, text);
        // Empty means "back to the default"; anything else must validate now.
        const auto checked = text.trimmed().isEmpty() ? Result<QString>(QString()) : SettingsSchema::validate(d, text);
        if (checked) {
            m_errors.remove(d.key);
            if (!d.isSecret()) {
                m_pending.insert(d.key, *checked);
            }
        } else {
            m_errors.insert(d.key, checked.error().message);
        }
    }
    Q_EMIT dataChanged(this->index(index.row(), 0), this->index(index.row(), ColumnCount - 1));
    Q_EMIT pendingChanged();
    return true;
}

void ProfileSettingsModel::resetRow(int row)
{
    if (row < 0 || row >= rowCount()) {
        return;
    }
    const SettingDefinition &d = definitionAt(row);
    m_pending.insert(d.key, QString());
    m_errors.remove(d.key);
    Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
    Q_EMIT pendingChanged();
}

void ProfileSettingsModel::revert()
{
    if (m_pending.isEmpty()) {
        return;
    }
    m_pending.clear();
    m_errors.clear();
    if (rowCount() > 0) {
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
    }
    Q_EMIT pendingChanged();
}

bool ProfileSettingsModel::hasErrors() const
{
    return !m_errors.isEmpty();
}

QStringList ProfileSettingsModel::errors() const
{
    return m_errors.values();
}

} // namespace Starforge::Models
