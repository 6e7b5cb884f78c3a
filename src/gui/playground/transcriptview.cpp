#include "gui/playground/transcriptview.h"

#include "gui/palettefollow.h"
#include "gui/playground/markdownview.h"
#include "models/transcriptmodel.h"

#include <QApplication>
#include <QClipboard>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollBar>
#include <QToolButton>
#include <QVBoxLayout>

namespace Starforge::Gui {

using Models::TranscriptModel;

namespace {
constexpr int MaxCodeButtons = 6;   // more blocks than that: copy the whole message
}

MessageCard::MessageCard(QWidget *parent)
    : QFrame(parent)
    , m_who(new QLabel(this))
    , m_text(new MarkdownView(this))
    , m_footer(new QLabel(this))
    , m_buttons(new QWidget(this))
    , m_copy(new QToolButton(m_buttons))
    , m_edit(new QToolButton(m_buttons))
    , m_regenerate(new QToolButton(m_buttons))
{
    setFrameShape(QFrame::StyledPanel);
    setAccessibleName(tr("Message"));
    QFont bold = m_who->font();
    bold.setBold(true);
    m_who->setFont(bold);
    m_footer->setWordWrap(true);
    followQuiet(m_footer);
    m_copy->setText(tr("Copy"));
    m_edit->setText(tr("Edit"));
    m_regenerate->setText(tr("Regenerate"));
    auto *buttons = new QHBoxLayout(m_buttons);
    buttons->setContentsMargins(0, 0, 0, 0);
    buttons->addWidget(m_copy);
    buttons->addWidget(m_edit);
    buttons->addWidget(m_regenerate);
    buttons->addStretch();
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 6, 8, 6);
    layout->setSpacing(4);
    layout->addWidget(m_who);
    layout->addWidget(m_text);
    layout->addWidget(m_footer);
    layout->addWidget(m_buttons);
    connect(m_copy, &QToolButton::clicked, this, [this] { QApplication::clipboard()->setText(m_markdown); });
}

void MessageCard::show(const QString &who, const QString &role, const QString &markdown, const QString &footer, const QString &error, bool streaming)
{
    m_role = role;
    m_who->setText(who);
    m_markdown = markdown;
    if (streaming) m_text->setStreamingText(markdown.isEmpty() ? tr("…") : markdown);
    else m_text->setMarkdownText(markdown);
    m_text->setAccessibleName(role == QLatin1String("user") ? tr("Your message") : tr("Reply from %1").arg(who));
    setAccessibleName(role == QLatin1String("user") ? tr("Your message") : tr("Reply from %1%2").arg(who, streaming ? tr(", still writing") : QString()));
    QString line = footer;
    if (!error.isEmpty()) line = line.isEmpty() ? error : line + QStringLiteral("\n") + error;
    m_footer->setText(line);
    if (error.isEmpty()) followQuiet(m_footer);
    else followTone(m_footer, Tones::Tone::Error);
    m_footer->setVisible(!line.isEmpty());
    m_copy->setAccessibleName(role == QLatin1String("user") ? tr("Copy your message") : tr("Copy the reply"));
    m_edit->setAccessibleName(tr("Edit this message and send it again"));
    m_edit->setVisible(role == QLatin1String("user"));
    m_copy->setEnabled(!streaming);

    // A button per fenced code block, made again only when their number changes.
    const QList<TranscriptModel::CodeBlock> blocks = streaming ? QList<TranscriptModel::CodeBlock>() : TranscriptModel::codeBlocks(markdown);
    const int wanted = int(std::min<qsizetype>(blocks.size(), MaxCodeButtons));
    while (m_codeButtons.size() > wanted) delete m_codeButtons.takeLast();
    auto *layout = static_cast<QHBoxLayout *>(m_buttons->layout());
    while (m_codeButtons.size() < wanted) {
        auto *button = new QToolButton(m_buttons);
        layout->insertWidget(1 + int(m_codeButtons.size()), button);
        const int n = int(m_codeButtons.size());
        connect(button, &QToolButton::clicked, this, [this, n] {
            const QList<TranscriptModel::CodeBlock> now = TranscriptModel::codeBlocks(m_markdown);
            if (n < now.size()) QApplication::clipboard()->setText(now.at(n).code);
        });
        m_codeButtons.append(button);
    }
    for (int i = 0; i < wanted; ++i) {
        const QString language = blocks.at(i).language;
        m_codeButtons[i]->setText(wanted == 1 ? tr("Copy code") : tr("Copy code %1").arg(i + 1));
        m_codeButtons[i]->setAccessibleName(language.isEmpty() ? tr("Copy code block %1").arg(i + 1) : tr("Copy code block %1 (%2)").arg(i + 1).arg(language));
        m_codeButtons[i]->setToolTip(language.isEmpty() ? tr("Copies this block's code alone") : tr("Copies this %1 block's code alone").arg(language));
    }
}

// ---------------------------------------------------------------------------------------------

TranscriptView::TranscriptView(QWidget *parent)
    : QScrollArea(parent)
    , m_content(new QWidget(this))
    , m_layout(new QVBoxLayout(m_content))
    , m_empty(new QLabel(tr("Ask something below. Replies stream in as the model writes them."), m_content))
{
    setAccessibleName(tr("Conversation"));
    setWidgetResizable(true);
    setFrameShape(QFrame::NoFrame);
    m_empty->setWordWrap(true);
    m_empty->setAlignment(Qt::AlignCenter);
    followQuiet(m_empty);
    m_layout->setContentsMargins(4, 4, 4, 4);
    m_layout->addWidget(m_empty);
    m_layout->addStretch();
    setWidget(m_content);
    m_renderTimer.setSingleShot(true);
    m_renderTimer.setInterval(RenderIntervalMs);
    connect(&m_renderTimer, &QTimer::timeout, this, &TranscriptView::flush);
    // Following the end: when the reader scrolls up, stop; back at the end, follow again.
    connect(verticalScrollBar(), &QScrollBar::valueChanged, this, [this] { m_followEnd = atEnd(); });
    connect(verticalScrollBar(), &QScrollBar::rangeChanged, this, [this](int, int max) {
        if (m_followEnd) verticalScrollBar()->setValue(max);
    });
}

TranscriptView::~TranscriptView() = default;

void TranscriptView::setModel(TranscriptModel *model)
{
    if (m_model) disconnect(m_model, nullptr, this, nullptr);
    m_model = model;
    if (model) {
        connect(model, &QAbstractItemModel::rowsInserted, this, [this](const QModelIndex &, int first, int last) { insertCards(first, last); });
        connect(model, &QAbstractItemModel::rowsRemoved, this, [this](const QModelIndex &, int first, int last) { removeCards(first, last); });
        connect(model, &QAbstractItemModel::modelReset, this, &TranscriptView::rebuild);
        connect(model, &QAbstractItemModel::dataChanged, this, [this](const QModelIndex &a, const QModelIndex &b) { onDataChanged(a.row(), b.row()); });
    }
    rebuild();
}

void TranscriptView::setModelName(const QString &name)
{
    if (name == m_modelName) return;
    m_modelName = name;
    if (m_model) onDataChanged(0, m_model->rowCount() - 1);
}

MessageCard *TranscriptView::card(int row) const
{
    return row >= 0 && row < m_cards.size() ? m_cards.at(row) : nullptr;
}

void TranscriptView::rebuild()
{
    m_renderTimer.stop();
    m_pendingRow = -1;
    qDeleteAll(m_cards);
    m_cards.clear();
    if (m_model && m_model->rowCount() > 0) insertCards(0, m_model->rowCount() - 1);
    m_empty->setVisible(m_cards.isEmpty());
    m_followEnd = true;
}

void TranscriptView::insertCards(int first, int last)
{
    for (int row = first; row <= last; ++row) {
        auto *card = new MessageCard(m_content);
        m_cards.insert(row, card);
        m_layout->insertWidget(1 + row, card);   // after the empty-conversation line
        connect(card->editButton(), &QToolButton::clicked, this, [this, card] { Q_EMIT editRequested(int(m_cards.indexOf(card))); });
        connect(card->regenerateButton(), &QToolButton::clicked, this, &TranscriptView::regenerateRequested);
        render(row);
    }
    m_empty->setVisible(m_cards.isEmpty());
    updateLastReplyButtons();
}

void TranscriptView::removeCards(int first, int last)
{
    if (m_pendingRow >= first) m_pendingRow = -1;
    for (int row = last; row >= first && row < m_cards.size(); --row) delete m_cards.takeAt(row);
    m_empty->setVisible(m_cards.isEmpty());
    updateLastReplyButtons();
}

void TranscriptView::onDataChanged(int first, int last)
{
    if (!m_model) return;
    for (int row = std::max(0, first); row <= last && row < m_cards.size(); ++row) {
        if (m_model->index(row).data(TranscriptModel::StreamingRole).toBool()) {
            // Gathered: rendered when the interval is up, whatever arrived meanwhile.
            m_pendingRow = row;
            if (!m_renderTimer.isActive()) m_renderTimer.start();
            continue;
        }
        if (row == m_pendingRow) {
            m_pendingRow = -1;
            m_renderTimer.stop();
        }
        render(row);
    }
    updateLastReplyButtons();
}

void TranscriptView::flush()
{
    m_renderTimer.stop();
    const int row = std::exchange(m_pendingRow, -1);
    if (row >= 0) render(row);
}

void TranscriptView::render(int row)
{
    MessageCard *card = this->card(row);
    if (!card || !m_model) return;
    ++m_renders;
    const QModelIndex index = m_model->index(row);
    const QString role = index.data(TranscriptModel::MessageRoleRole).toString();
    const QString who = role == QLatin1String("user") ? tr("You") : (m_modelName.isEmpty() ? tr("Model") : m_modelName);
    card->show(who, role, index.data(TranscriptModel::ContentRole).toString(), index.data(TranscriptModel::TimingsTextRole).toString(),
               index.data(TranscriptModel::ErrorRole).toString(), index.data(TranscriptModel::StreamingRole).toBool());
}

void TranscriptView::updateLastReplyButtons()
{
    // Regenerate belongs to the last reply alone, once it has ended.
    for (int row = 0; row < m_cards.size(); ++row) {
        const QModelIndex index = m_model ? m_model->index(row) : QModelIndex();
        const bool last = row == m_cards.size() - 1;
        const bool reply = index.data(TranscriptModel::MessageRoleRole).toString() == QLatin1String("assistant");
        m_cards[row]->regenerateButton()->setVisible(last && reply && !index.data(TranscriptModel::StreamingRole).toBool());
        m_cards[row]->regenerateButton()->setAccessibleName(tr("Regenerate the last reply"));
        m_cards[row]->editButton()->setEnabled(!(m_model && m_model->isStreaming()));
    }
}

bool TranscriptView::atEnd() const
{
    const QScrollBar *bar = verticalScrollBar();
    return bar->value() >= bar->maximum() - 4;
}

} // namespace Starforge::Gui
