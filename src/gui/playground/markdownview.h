#pragma once

// A message's Markdown, rendered, as tall as its text at the width it is given (no scroll bar
// of its own: the conversation scrolls), selectable with the mouse and the keyboard and read by
// assistive technology as text. Links are shown, not followed on a click: a model's link is
// not something to open by accident.
//
// A reply that is still arriving is rendered block by block: the Markdown blocks that are
// complete (a blank line, outside a code fence, follows them) are rendered once and stay; only
// the block still growing is rendered again at each update. The cost of an update is then that
// of its last block, not of the whole reply, and the document lays out only what changed; the
// end of the reply is one more such update (rendering a long reply whole again would stall the
// window for a tenth of a second: bench_playground). A block is complete only when what follows
// the blank line does not continue a list or a quote, so lists and their numbering are rendered
// as one.

#include <QTextBrowser>

namespace Starforge::Gui {

class MarkdownView final : public QTextBrowser
{
    Q_OBJECT
public:
    explicit MarkdownView(QWidget *parent = nullptr);

    // The whole text, rendered at once; after setStreamingText, the end of that reply.
    void setMarkdownText(const QString &markdown);
    // The text so far of a reply still arriving; what was rendered before is kept when the new
    // text begins with it.
    void setStreamingText(const QString &markdown);
    QString markdownText() const { return m_markdown; }

    // Where the complete blocks of a Markdown text end: after the last blank line outside a code
    // fence (0 when there is none).
    static qsizetype settledLength(QStringView markdown);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void fitHeight();
    void renderTail();

    QString m_markdown;
    qsizetype m_settled = 0;   // characters of m_markdown rendered as complete blocks
    int m_tailStart = 0;       // the document position where the growing block begins
    bool m_streaming = false;
    int m_height = 0;
};

} // namespace Starforge::Gui
