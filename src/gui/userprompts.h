#pragma once

// The questions the GUI asks the user (a name, a file, a yes/no), behind an interface so that
// tests can answer them without a modal dialog: DialogPrompts asks with Qt's standard dialogs,
// tests script the answers.

#include <QString>
#include <QStringList>

#include <optional>

class QWidget;

namespace Starforge::Gui {

class UserPrompts
{
public:
    virtual ~UserPrompts() = default;

    // nullopt when the user cancels.
    virtual std::optional<QString> askText(QWidget *parent, const QString &title, const QString &label, const QString &initial) = 0;
    virtual std::optional<QString> chooseItem(QWidget *parent, const QString &title, const QString &label, const QStringList &items) = 0;
    // An empty string when the user cancels.
    virtual QString openFile(QWidget *parent, const QString &title, const QString &startPath) = 0;
    // filter as QFileDialog's ("Markdown (*.md);;JSON (*.json)"); an empty string when cancelled.
    virtual QString saveFile(QWidget *parent, const QString &title, const QString &suggestedPath, const QString &filter) = 0;
    virtual bool confirm(QWidget *parent, const QString &title, const QString &text) = 0;
    virtual void inform(QWidget *parent, const QString &title, const QString &text) = 0;
};

class DialogPrompts final : public UserPrompts
{
public:
    std::optional<QString> askText(QWidget *parent, const QString &title, const QString &label, const QString &initial) override;
    std::optional<QString> chooseItem(QWidget *parent, const QString &title, const QString &label, const QStringList &items) override;
    QString openFile(QWidget *parent, const QString &title, const QString &startPath) override;
    QString saveFile(QWidget *parent, const QString &title, const QString &suggestedPath, const QString &filter) override;
    bool confirm(QWidget *parent, const QString &title, const QString &text) override;
    void inform(QWidget *parent, const QString &title, const QString &text) override;
};

} // namespace Starforge::Gui
