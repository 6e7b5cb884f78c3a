#pragma once

// UserPrompts answered from a script, so GUI tests can drive flows that ask questions. Every
// question asked is recorded; a question with no scripted answer counts as "cancel".

#include "gui/userprompts.h"

#include <QVariantList>
#include <QVariant>

namespace Starforge::Testing {

class ScriptedPrompts final : public Gui::UserPrompts
{
public:
    QVariantList answers;     // QString for text/item/file, bool for confirm; an invalid QVariant cancels
    QStringList asked;        // "kind: title: text" of every question, in order
    QStringList informed;     // texts shown with inform()

    std::optional<QString> askText(QWidget *, const QString &title, const QString &label, const QString &initial) override
    {
        asked.append(QStringLiteral("text: %1: %2 [%3]").arg(title, label, initial));
        const QVariant a = next();
        return a.isValid() ? std::optional<QString>(a.toString()) : std::nullopt;
    }
    std::optional<QString> chooseItem(QWidget *, const QString &title, const QString &label, const QStringList &items) override
    {
        asked.append(QStringLiteral("item: %1: %2 [%3]").arg(title, label, items.join(u',')));
        const QVariant a = next();
        return a.isValid() ? std::optional<QString>(a.toString()) : std::nullopt;
    }
    QString openFile(QWidget *, const QString &title, const QString &startPath) override
    {
        asked.append(QStringLiteral("file: %1: %2").arg(title, startPath));
        return next().toString();
    }
    QString saveFile(QWidget *, const QString &title, const QString &suggestedPath, const QString &) override
    {
        asked.append(QStringLiteral("save: %1: %2").arg(title, suggestedPath));
        return next().toString();
    }
    bool confirm(QWidget *, const QString &title, const QString &text) override
    {
        asked.append(QStringLiteral("confirm: %1: %2").arg(title, text));
        return next().toBool();
    }
    void inform(QWidget *, const QString &, const QString &text) override { informed.append(text); }

private:
    QVariant next() { return answers.isEmpty() ? QVariant() : answers.takeFirst(); }
};

} // namespace Starforge::Testing
