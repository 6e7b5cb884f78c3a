#include "gui/playground/markdownview.h"

#include <QAbstractTextDocumentLayout>
#include <QResizeEvent>
#include <QScrollBar>
#include <QTextCursor>
#include <QTextDocument>

namespace Starforge::Gui {

MarkdownView::MarkdownView(QWidget *parent) : QTextBrowser(parent)
{
    setFrameShape(QFrame::NoFrame);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setOpenLinks(false);
    setOpenExternalLinks(false);
    setTabChangesFocus(true);
    setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard | Qt::LinksAccessibleByMouse | Qt::LinksAccessibleByKeyboard);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    viewport()->setAutoFillBackground(false);
    document()->setDocumentMargin(2);
    connect(document()->documentLayout(), &QAbstractTextDocumentLayout::documentSizeChanged, this, &MarkdownView::fitHeight);
}

void MarkdownView::setMarkdownText(const QString &markdown)
{
    if (!m_streaming && markdown == m_markdown && !document()->isEmpty()) return;
    if (m_streaming && markdown.startsWith(QStringView(m_markdown).left(m_settled))) {
        // The reply that was arriving has ended: its last block rendered, not the whole of it
        // again (a long reply's full render stalls the window for a tenth of a second).
        setStreamingText(markdown);
        m_streaming = false;
        return;
    }
    m_streaming = false;
    m_markdown = markdown;
    m_settled = 0;
    m_tailStart = 0;
    document()->setMarkdown(markdown);
}

qsizetype MarkdownView::settledLength(QStringView markdown)
{
    qsizetype settled = 0;
    bool inFence = false;
    QChar fenceChar;
    qsizetype lineStart = 0;
    bool previousBlank = false;
    while (lineStart <= markdown.size()) {
        qsizetype lineEnd = markdown.indexOf(u'\n', lineStart);
        const bool last = lineEnd < 0;
        if (last) lineEnd = markdown.size();
        const QStringView line = markdown.mid(lineStart, lineEnd - lineStart).trimmed();
        if (last && line.isEmpty()) break;   // nothing follows the last line break yet
        if (line.startsWith(u"```") || line.startsWith(u"~~~")) {
            if (!inFence) {
                inFence = true;
                fenceChar = line.front();
            } else if (line.front() == fenceChar) {
                inFence = false;
            }
            previousBlank = false;
        } else if (!inFence && line.isEmpty() && !last) {
            // A blank line: what came before it is a complete block, once a line follows it
            // that is not part of a list or a quote going on (those continue across blank lines).
            previousBlank = true;
        } else if (!inFence && previousBlank) {
            const bool continues = line.startsWith(u"- ") || line.startsWith(u"* ") || line.startsWith(u"+ ") || line.startsWith(u'>')
                || (!line.isEmpty() && line.front().isDigit()) || markdown.mid(lineStart, 1) == u" " || markdown.mid(lineStart, 1) == u"\t";
            if (!continues) settled = lineStart;
            previousBlank = false;
        } else {
            previousBlank = false;
        }
        if (last) break;
        lineStart = lineEnd + 1;
    }
    return settled;
}

void MarkdownView::setStreamingText(const QString &markdown)
{
    if (!m_streaming || !markdown.startsWith(QStringView(m_markdown).left(m_settled))) {
        // A new reply, or one that changed under us: from nothing.
        document()->clear();
        m_settled = 0;
        m_tailStart = 0;
        m_streaming = true;
    }
    m_markdown = markdown;
    const qsizetype settled = settledLength(markdown);
    QTextCursor cursor(document());
    if (settled > m_settled) {
        // The blocks that have become complete replace the old tail, once and for good.
        cursor.setPosition(m_tailStart);
        cursor.movePosition(QTextCursor::End, QTextCursor::KeepAnchor);
        cursor.removeSelectedText();
        if (m_tailStart > 0) cursor.insertBlock();
        cursor.insertMarkdown(markdown.mid(m_settled, settled - m_settled));
        m_settled = settled;
        cursor.movePosition(QTextCursor::End);
        m_tailStart = cursor.position();
    }
    renderTail();
}

void MarkdownView::renderTail()
{
    QTextCursor cursor(document());
    cursor.beginEditBlock();
    cursor.setPosition(m_tailStart);
    cursor.movePosition(QTextCursor::End, QTextCursor::KeepAnchor);
    cursor.removeSelectedText();
    const QString tail = m_markdown.mid(m_settled);
    if (!tail.trimmed().isEmpty()) {
        if (m_tailStart > 0) cursor.insertBlock();
        cursor.insertMarkdown(tail);
    }
    cursor.endEditBlock();
}

void MarkdownView::fitHeight()
{
    const int height = int(std::ceil(document()->size().height())) + contentsMargins().top() + contentsMargins().bottom();
    if (height == m_height) return;
    m_height = height;
    setFixedHeight(std::max(height, fontMetrics().height()));
}

void MarkdownView::resizeEvent(QResizeEvent *event)
{
    QTextBrowser::resizeEvent(event);
    if (event->size().width() != event->oldSize().width()) fitHeight();
}

QSize MarkdownView::sizeHint() const
{
    return {QTextBrowser::sizeHint().width(), std::max(m_height, fontMetrics().height())};
}

QSize MarkdownView::minimumSizeHint() const
{
    return {fontMetrics().averageCharWidth() * 10, std::max(m_height, fontMetrics().height())};
}

} // namespace Starforge::Gui
