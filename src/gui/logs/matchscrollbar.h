#pragma once

// The Logs dock's vertical scroll bar with the match overview (docs/logs.md): a tick in the
// groove at every pixel row whose share of the log holds a match, so the reader sees where the
// matches cluster and can drag there. The ticks are the search's line numbers bucketed by pixel
// row: the matches are sorted, so each row costs one binary search and a million matches cost
// a few hundred searches, not a million steps. Buckets are computed again only when the
// matches, the line count or the height change, and painting draws at most one tick per row.

#include <QList>
#include <QScrollBar>

namespace Starforge::Gui {

class MatchScrollBar final : public QScrollBar
{
    Q_OBJECT
public:
    explicit MatchScrollBar(QWidget *parent = nullptr);

    // The sorted line numbers (0-based) that match, in a log of totalLines lines. The list is
    // implicitly shared, not copied.
    void setMatches(const QList<qint64> &matches, qint64 totalLines);
    void setOverviewShown(bool shown);
    bool overviewShown() const { return m_shown; }

    // The rows, 0 to pixels - 1, of a strip `pixels` tall over totalLines lines that hold at
    // least one of the sorted matches: line l belongs to row l * pixels / totalLines.
    static QList<int> markRows(const QList<qint64> &matches, qint64 totalLines, int pixels);
    // The rows marked in the current groove (empty when the overview is hidden), and its height.
    QList<int> marks() const;
    // Where the ticks go: the groove, in the scroll bar's coordinates.
    QRect grooveRect() const;
    int grooveHeight() const { return grooveRect().height(); }

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    void invalidate();
    void updateDescription();

    QList<qint64> m_matches;
    qint64 m_total = 0;
    bool m_shown = true;
    mutable bool m_dirty = true;
    mutable QList<int> m_rows;
    mutable int m_rowsFor = -1; // the groove height m_rows was computed for
};

} // namespace Starforge::Gui
