#include "gui/userprompts.h"

#include <QFileDialog>
#include <QInputDialog>
#include <QMessageBox>

namespace Starforge::Gui {

std::optional<QString> DialogPrompts::askText(QWidget *parent, const QString &title, const QString &label, const QString &initial)
{
    bool ok = false;
    const QString text = QInputDialog::getText(parent, title, label, QLineEdit::Normal, initial, &ok);
    return ok ? std::optional<QString>(text) : std::nullopt;
}

std::optional<QString> DialogPrompts::chooseItem(QWidget *parent, const QString &title, const QString &label, const QStringList &items)
{
    bool ok = false;
    const QString item = QInputDialog::getItem(parent, title, label, items, 0, false, &ok);
    return ok ? std::optional<QString>(item) : std::nullopt;
}

QString DialogPrompts::openFile(QWidget *parent, const QString &title, const QString &startPath)
{
    return QFileDialog::getOpenFileName(parent, title, startPath);
}

QString DialogPrompts::saveFile(QWidget *parent, const QString &title, const QString &suggestedPath, const QString &filter)
{
    return QFileDialog::getSaveFileName(parent, title, suggestedPath, filter);
}

bool DialogPrompts::confirm(QWidget *parent, const QString &title, const QString &text)
{
    return QMessageBox::question(parent, title, text, QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel) == QMessageBox::Yes;
}

void DialogPrompts::inform(QWidget *parent, const QString &title, const QString &text)
{
    QMessageBox::information(parent, title, text);
}

} // namespace Starforge::Gui
