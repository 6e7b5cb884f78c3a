#include "gui/settingdelegate.h"

#include "core/config/settingsschema.h"
#include "models/groupedsettingsmodel.h"
#include "models/profilesettingsmodel.h"

#include <QComboBox>
#include <QApplication>
#include <QLineEdit>
#include <QPainter>

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

QFont SettingNameDelegate::keyFont(const QFont &base)
{
    QFont font = base;
    font.setFamily(QStringLiteral("monospace"));
    font.setStyleHint(QFont::Monospace);
    font.setBold(false);
    font.setPointSizeF(base.pointSizeF() > 0 ? base.pointSizeF() * 0.85 : 8);
    return font;
}

void SettingNameDelegate::paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const
{
    const QString key = index.data(ProfileSettingsModel::KeyRole).toString();
    if (key.isEmpty() || index.data(Models::GroupedSettingsModel::GroupRole).toBool()) {
        QStyledItemDelegate::paint(painter, option, index);
        return;
    }
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QString label = opt.text;
    opt.text.clear();
    const QWidget *widget = option.widget;
    QStyle *style = widget ? widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);

    const QRect text = style->subElementRect(QStyle::SE_ItemViewItemText, &opt, widget).adjusted(2, 1, -2, -1);
    const bool selected = opt.state & QStyle::State_Selected;
    const QPalette::ColorGroup group = opt.state & QStyle::State_Enabled ? QPalette::Normal : QPalette::Disabled;
    painter->save();
    const QFontMetrics labelMetrics(opt.font);
    painter->setFont(opt.font);
    const QVariant foreground = index.data(Qt::ForegroundRole); // an error's colour
    painter->setPen(selected                 ? opt.palette.color(group, QPalette::HighlightedText)
                    : foreground.isValid() ? foreground.value<QBrush>().color()
                                           : opt.palette.color(group, QPalette::Text));
    const QRect labelRect(text.left(), text.top(), text.width(), labelMetrics.height());
    painter->drawText(labelRect, Qt::AlignLeft | Qt::AlignVCenter, labelMetrics.elidedText(label, Qt::ElideRight, text.width()));
    const QFont small = keyFont(opt.font);
    const QFontMetrics keyMetrics(small);
    painter->setFont(small);
    // PlaceholderText is the palette's quiet text colour, right in light and dark schemes alike.
    painter->setPen(selected ? opt.palette.color(group, QPalette::HighlightedText) : opt.palette.color(group, QPalette::PlaceholderText));
    // Drawn from the top of its line with room below the baseline: the underscores of FORGE_*
    // sit in the descent, which a centred, exactly tall rectangle cuts off.
    const QRect keyRect(text.left(), labelRect.bottom() + 1, text.width(), keyMetrics.height() + keyMetrics.descent());
    painter->drawText(keyRect, Qt::AlignLeft | Qt::AlignTop, keyMetrics.elidedText(key, Qt::ElideMiddle, text.width()));
    painter->restore();
}

QSize SettingNameDelegate::sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const
{
    QSize size = QStyledItemDelegate::sizeHint(option, index);
    const QString key = index.data(ProfileSettingsModel::KeyRole).toString();
    if (key.isEmpty() || index.data(Models::GroupedSettingsModel::GroupRole).toBool()) return size;
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QFontMetrics keyMetrics(keyFont(opt.font));
    size.setHeight(QFontMetrics(opt.font).height() + keyMetrics.height() + keyMetrics.descent() + 6);
    size.setWidth(std::max(size.width(), keyMetrics.horizontalAdvance(key) + 12));
    return size;
}

} // namespace Starforge::Gui
