#include "gui/wizard/jsonhighlighter.h"

#include <QRegularExpression>

namespace Starforge::Gui {

JsonHighlighter::JsonHighlighter(QTextDocument *document)
    : QSyntaxHighlighter(document)
{
    m_key.setForeground(QColor(0x0b, 0x4a, 0x94));
    m_key.setFontWeight(QFont::DemiBold);
    m_string.setForeground(QColor(0x1c, 0x6b, 0x2e));
    m_number.setForeground(QColor(0x8a, 0x3a, 0xb9));
    m_literal.setForeground(QColor(0xa0, 0x4a, 0x00));
}

void JsonHighlighter::highlightBlock(const QString &text)
{
    // A string, then whether a colon follows it (a key).
    static const QRegularExpression token(QStringLiteral(R"re("(?:[^"\\]|\\.)*"(\s*:)?|-?\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b|\b(?:true|false|null)\b)re"));
    for (auto it = token.globalMatch(text); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        const QChar first = m.captured(0).at(0);
        if (first == u'"') {
            const qsizetype length = m.capturedLength(0) - m.capturedLength(1);
            setFormat(static_cast<int>(m.capturedStart(0)), static_cast<int>(length), m.hasCaptured(1) ? m_key : m_string);
        } else if (first.isLetter()) {
            setFormat(static_cast<int>(m.capturedStart(0)), static_cast<int>(m.capturedLength(0)), m_literal);
        } else {
            setFormat(static_cast<int>(m.capturedStart(0)), static_cast<int>(m.capturedLength(0)), m_number);
        }
    }
}

} // namespace Starforge::Gui
