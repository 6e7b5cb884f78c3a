#pragma once

// A playground conversation as people read it (docs/playground.md, "The panel"): one card per
// message, the text rendered from its Markdown (headings, lists, tables, code in a fixed font)
// and selectable with mouse and keyboard; under a reply, its time to first token, tokens per
// second and token count, or its error. Each card has real buttons, so each has a keyboard path
// and a name for assistive technology: copy the message, copy each fenced code block alone,
// edit a message of yours (the conversation continues from there), regenerate the last reply.
//
// A reply streaming at a thousand tokens a second is not rendered a thousand times a second:
// changes to the streaming card are gathered and rendered at most every RenderIntervalMs, and
// only that card is laid out again, so the longest stall stays within a frame
// (bench_playground). The view follows the end while it is at the end, and stays where the
// reader scrolled otherwise.

#include "models/transcriptmodel.h"

#include <QFrame>
#include <QPointer>
#include <QScrollArea>
#include <QTimer>

class QLabel;
class QToolButton;
class QVBoxLayout;

namespace Starforge::Gui {

class MarkdownView;
class MessageCard;

class TranscriptView final : public QScrollArea
{
    Q_OBJECT
public:
    static constexpr int RenderIntervalMs = 33;

    explicit TranscriptView(QWidget *parent = nullptr);
    ~TranscriptView() override;

    void setModel(Models::TranscriptModel *model);
    Models::TranscriptModel *model() const { return m_model; }
    // The name replies are shown under ("Qwen2.5-1.5B", a job's "bcdfgh-step-40").
    void setModelName(const QString &name);

    // The parts, for tests and screenshots.
    int cardCount() const { return int(m_cards.size()); }
    MessageCard *card(int row) const;
    // Renders what is pending now rather than at the next interval.
    void flush();
    int renders() const { return m_renders; }

Q_SIGNALS:
    void editRequested(int row);
    void regenerateRequested();

private:
    void rebuild();
    void insertCards(int first, int last);
    void removeCards(int first, int last);
    void onDataChanged(int first, int last);
    void render(int row);
    void updateLastReplyButtons();
    bool atEnd() const;

    QPointer<Models::TranscriptModel> m_model;
    QString m_modelName;
    QWidget *m_content;
    QVBoxLayout *m_layout;
    QLabel *m_empty;
    QList<MessageCard *> m_cards;
    QTimer m_renderTimer;
    int m_pendingRow = -1;
    bool m_followEnd = true;
    int m_renders = 0;
};

// One message: who, the rendered text, the timings line, the buttons.
class MessageCard final : public QFrame
{
    Q_OBJECT
public:
    MessageCard(QWidget *parent);

    MarkdownView *textView() const { return m_text; }
    QLabel *footerLabel() const { return m_footer; }
    QToolButton *copyButton() const { return m_copy; }
    QToolButton *editButton() const { return m_edit; }
    QToolButton *regenerateButton() const { return m_regenerate; }
    QList<QToolButton *> codeButtons() const { return m_codeButtons; }

private:
    friend class TranscriptView;
    void show(const QString &who, const QString &role, const QString &markdown, const QString &footer, const QString &error, bool streaming);

    QLabel *m_who;
    MarkdownView *m_text;
    QLabel *m_footer;
    QWidget *m_buttons;
    QToolButton *m_copy;
    QToolButton *m_edit;
    QToolButton *m_regenerate;
    QList<QToolButton *> m_codeButtons;
    QString m_markdown;
    QString m_role;
};

} // namespace Starforge::Gui
