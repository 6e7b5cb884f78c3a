#include "gui/wizard/jsonhighlighter.h"

#include "models/tones.h"

#include <QRegularExpression>

namespace Starforge::Gui {

JsonHighlighter::JsonHighlighter(QTextDocument *document)
    : QSyntaxHighlighter(document)
{
    m_key.setFontWeight(QFont::DemiBold);
}

void JsonHighlighter::highlightBlock(const QString &text)
{
    // The tones of the palette in force, light or dark, each time a block is drawn again.
    m_key.setForeground(Tones::text(Tones::Tone::Info));
    m_string.setForeground(Tones::text(Tones::Tone::Success));
    m_number.setForeground(Tones::text(Tones::Tone::Accent));
    m_literal.setForeground(Tones::text(Tones::Tone::Warning));
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
