#include "gui/logs/matchscrollbar.h"

#include <QPainter>
#include <QStyleOptionSlider>

#include <algorithm>

namespace Starforge::Gui {

MatchScrollBar::MatchScrollBar(QWidget *parent)
    : QScrollBar(Qt::Vertical, parent)
{
    setObjectName(QStringLiteral("logsMatchScrollBar"));
    setAccessibleName(tr("Log position and match overview"));
    updateDescription();
}

void MatchScrollBar::setMatches(const QList<qint64> &matches, qint64 totalLines)
{
    if (matches.isSharedWith(m_matches) && matches.size() == m_matches.size() && totalLines == m_total)
        return;
    const bool countChanged = matches.size() != m_matches.size();
    m_matches = matches;
    m_total = totalLines;
    invalidate();
    if (countChanged)
        updateDescription();
}

void MatchScrollBar::setOverviewShown(bool shown)
{
    if (shown == m_shown)
        return;
    m_shown = shown;
    invalidate();
    updateDescription();
}

void MatchScrollBar::updateDescription()
{
    if (!m_shown || m_matches.isEmpty())
        setAccessibleDescription(tr("Scrolls the log. No search matches are marked."));
    else
        setAccessibleDescription(tr("Scrolls the log. %n search match(es) are marked along it; F3 and Shift+F3 go to them.", nullptr,
                                    int(std::min<qsizetype>(m_matches.size(), std::numeric_limits<int>::max()))));
}

void MatchScrollBar::invalidate()
{
    m_dirty = true;
    update();
}

QList<int> MatchScrollBar::markRows(const QList<qint64> &matches, qint64 totalLines, int pixels)
{
    QList<int> rows;
    if (matches.isEmpty() || totalLines <= 0 || pixels <= 0)
        return rows;
    auto it = matches.cbegin();
    while (it != matches.cend()) {
        if (*it < 0) {
            ++it;
            continue;
        }
        if (*it >= totalLines)
            break;
        // The row of this match, then straight to the first match past that row.
        const int row = int(*it * pixels / totalLines);
        rows.append(row);
        // Row r holds lines l with l * pixels / totalLines == r, i.e. up to ceil((r+1) * totalLines / pixels) - 1.
        const qint64 nextRowStart = ((qint64(row) + 1) * totalLines + pixels - 1) / pixels;
        it = std::lower_bound(it, matches.cend(), nextRowStart);
    }
    return rows;
}

QRect MatchScrollBar::grooveRect() const
{
    QStyleOptionSlider option;
    initStyleOption(&option);
    return style()->subControlRect(QStyle::CC_ScrollBar, &option, QStyle::SC_ScrollBarGroove, this);
}

QList<int> MatchScrollBar::marks() const
{
    if (!m_shown)
        return {};
    const int height = grooveHeight();
    if (m_dirty || m_rowsFor != height) {
        m_rows = markRows(m_matches, m_total, height);
        m_rowsFor = height;
        m_dirty = false;
    }
    return m_rows;
}

void MatchScrollBar::resizeEvent(QResizeEvent *event)
{
    QScrollBar::resizeEvent(event);
    m_dirty = true;
}

void MatchScrollBar::paintEvent(QPaintEvent *event)
{
    QScrollBar::paintEvent(event);
    if (!m_shown || m_matches.isEmpty())
        return;
    const QRect groove = grooveRect();
    const QList<int> rows = marks();
    QPainter painter(this);
    // A warm colour that reads on the light and the dark palette's groove and handle.
    const QColor tick(0xe0, 0x7a, 0x00);
    const int inset = std::max(1, groove.width() / 5);
    for (const int row : rows)
        painter.fillRect(groove.left() + inset, groove.top() + row, groove.width() - 2 * inset, 2, tick);
}

} // namespace Starforge::Gui
