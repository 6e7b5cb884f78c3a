#pragma once

// Editors for the value column of ProfileSettingsModel, chosen by the setting's type: a choice
// for booleans and enums, a masked line for secrets, a line edit with a placeholder showing the
// default for everything else. And the name column of GroupedSettingsModel: the label with the
// FORGE_* key under it in smaller, quieter monospace, so people read "API server" and still see
// the variable they would set in a shell.

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

class SettingNameDelegate final : public QStyledItemDelegate
{
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const override;
    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override;

private:
    static QFont keyFont(const QFont &base);
};

} // namespace Starforge::Gui
