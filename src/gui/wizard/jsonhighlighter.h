#pragma once

// Colours JSON text (keys, strings, numbers, true/false/null) for read-only views such as the
// wizard's RayJob review. Line by line: a JSON string never spans lines in indented output.

#include <QSyntaxHighlighter>
#include <QTextCharFormat>

namespace Starforge::Gui {

class JsonHighlighter final : public QSyntaxHighlighter
{
    Q_OBJECT
public:
    explicit JsonHighlighter(QTextDocument *document);

protected:
    void highlightBlock(const QString &text) override;

private:
    QTextCharFormat m_key;
    QTextCharFormat m_string;
    QTextCharFormat m_number;
    QTextCharFormat m_literal;
};

} // namespace Starforge::Gui
