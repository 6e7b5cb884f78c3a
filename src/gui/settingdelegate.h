#pragma once

// Editors for the value column of ProfileSettingsModel, chosen by the setting's type: a choice
// for booleans and enums, a masked line for secrets, a line edit with a placeholder showing the
// default for everything else.

#include <QStyledItemDelegate>

namespace Starforge::Gui {

class SettingDelegate final : public QStyledItemDelegate
{
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    QWidget *createEditor(QWidget *parent, const QStyleOptionViewItem &option, const QModelIndex &index) const override;
    void setEditorData(QWidget *editor, const QModelIndex &index) const override;
    void setModelData(QWidget *editor, QAbstractItemModel *model, const QModelIndex &index) const override;
};

} // namespace Starforge::Gui
