#include "gui/settingdelegate.h"

#include "core/config/settingsschema.h"
#include "models/profilesettingsmodel.h"

#include <QComboBox>
#include <QLineEdit>

namespace Starforge::Gui {

using Config::SettingDefinition;
using Config::SettingType;
using Models::ProfileSettingsModel;

namespace {
const SettingDefinition *definitionOf(const QModelIndex &index)
{
    return reinterpret_cast<const SettingDefinition *>(index.data(ProfileSettingsModel::DefinitionRole).value<quintptr>());
}
} // namespace

QWidget *SettingDelegate::createEditor(QWidget *parent, const QStyleOptionViewItem &option, const QModelIndex &index) const
{
    const SettingDefinition *d = definitionOf(index);
    if (!d) {
        return QStyledItemDelegate::createEditor(parent, option, index);
    }
    if (d->type == SettingType::Boolean || d->type == SettingType::Enum) {
        auto *combo = new QComboBox(parent);
        combo->setObjectName(QStringLiteral("settingEditor"));
        const QStringList choices = d->type == SettingType::Boolean ? QStringList{QStringLiteral("true"), QStringLiteral("false")} : d->choices;
        for (const QString &choice : choices) {
            combo->addItem(choice == d->defaultValue ? tr("%1 (default)").arg(choice) : choice, choice);
        }
        // A choice is complete the moment it is made; do not wait for the editor to close.
        connect(combo, &QComboBox::activated, this, [this, combo] { Q_EMIT const_cast<SettingDelegate *>(this)->commitData(combo); });
        return combo;
    }
    auto *line = new QLineEdit(parent);
    line->setObjectName(QStringLiteral("settingEditor"));
    if (d->isSecret()) {
        line->setEchoMode(QLineEdit::Password);
        line->setPlaceholderText(tr("paste the new value; it goes to the keychain"));
    } else if (!d->defaultValue.isEmpty()) {
        line->setPlaceholderText(tr("default: %1").arg(d->defaultValue));
    }
    line->setClearButtonEnabled(!d->isSecret());
    return line;
}

void SettingDelegate::setEditorData(QWidget *editor, const QModelIndex &index) const
{
    const QString value = index.data(Qt::EditRole).toString();
    if (auto *combo = qobject_cast<QComboBox *>(editor)) {
        const SettingDefinition *d = definitionOf(index);
        const int found = combo->findData(value.isEmpty() && d ? d->defaultValue : value);
        combo->setCurrentIndex(found < 0 ? 0 : found);
    } else if (auto *line = qobject_cast<QLineEdit *>(editor)) {
        // The model changes under an open editor when the keychain answers late (a secret row
        // turns "set" or "not set"); what the user has typed stays.
        if (!line->isModified()) line->setText(value);
    }
}

void SettingDelegate::setModelData(QWidget *editor, QAbstractItemModel *model, const QModelIndex &index) const
{
    if (auto *combo = qobject_cast<QComboBox *>(editor)) {
        model->setData(index, combo->currentData(), Qt::EditRole);
    } else if (auto *line = qobject_cast<QLineEdit *>(editor)) {
        model->setData(index, line->text(), Qt::EditRole);
    }
}

} // namespace Starforge::Gui
