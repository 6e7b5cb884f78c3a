#pragma once

// The event timeline (docs/events.md): one job's lanes (RayJob, RayCluster, head, worker groups
// and their pods, submitter) down the left, a shared time axis across, every event a mark at its
// last sighting on its object's lane, a repeated event a span from first to last sighting with
// its count, the job's phases as bands behind, and the diagnosis' evidence ringed. Over a
// TimelineModel, whose rows are the events: selecting an event here selects its row in any view
// sharing the selection model, and the tooltip is the whole event.
//
// Zoom and pan: Ctrl+wheel zooms about the pointer, the wheel scrolls the lanes, Shift+wheel
// and dragging the background pan; from the keyboard + and - zoom about the current event, 0
// fits the whole job, Shift+Left and Shift+Right pan. Left and Right go to the previous and next
// event in time, Up and Down to the nearest event on the lane above or below, Home and End to the
// first and last.
//
// Painting walks only what is in view (items are sorted by start, lanes are rows), so a job with
// thousands of events repaints within a frame (bench_timeline).
//
// Accessibility: the view is a list whose children are the events (named by type, reason and
// object; described by the whole event), created on demand and kept per event, so AT-SPI can
// walk them and follow the current one.

#include <QAbstractItemView>
#include <QDateTime>

namespace Starforge::Models {
class TimelineModel;
}

namespace Starforge::Gui {

class TimelineView final : public QAbstractItemView
{
    Q_OBJECT
public:
    explicit TimelineView(QWidget *parent = nullptr);
    ~TimelineView() override;

    void setModel(QAbstractItemModel *model) override;
    Models::TimelineModel *timelineModel() const { return m_model; }

    // Horizontal scale. Until the person zooms or pans, every new timeline is fitted.
    double pixelsPerSecond() const { return m_pps; }
    void setPixelsPerSecond(double pps);
    void zoomIn();
    void zoomOut();
    void zoomToFit();
    bool isFitting() const { return m_fitting; }

    // Geometry, for tests and the accessibility children (viewport coordinates).
    int laneAt(int y) const;          // -1 outside the lanes
    QRect laneRect(int lane) const;   // the lane's row, gutter included
    int xOf(const QDateTime &time) const;
    QDateTime timeAtX(int x) const;
    int gutterWidth() const { return m_gutter; }
    int headerHeight() const;
    int rowHeight() const;

    QRect visualRect(const QModelIndex &index) const override;
    void scrollTo(const QModelIndex &index, ScrollHint hint = EnsureVisible) override;
    QModelIndex indexAt(const QPoint &point) const override;

Q_SIGNALS:
    void zoomChanged(double pixelsPerSecond);

protected:
    QModelIndex moveCursor(CursorAction cursorAction, Qt::KeyboardModifiers modifiers) override;
    int horizontalOffset() const override;
    int verticalOffset() const override;
    bool isIndexHidden(const QModelIndex &index) const override;
    void setSelection(const QRect &rect, QItemSelectionModel::SelectionFlags command) override;
    QRegion visualRegionForSelection(const QItemSelection &selection) const override;
    void updateGeometries() override;
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void currentChanged(const QModelIndex &current, const QModelIndex &previous) override;
    void scrollContentsBy(int dx, int dy) override;

private:
    void timelineChanged();
    void zoomAbout(double factor, int viewportX);
    double fitScale() const;
    int contentWidth() const;
    QRect itemRect(int row) const;   // viewport coordinates
    void paintAxis(QPainter &p, const QRect &area);

    Models::TimelineModel *m_model = nullptr;
    double m_pps = 1.0;
    bool m_fitting = true;
    int m_gutter = 200;
    QPoint m_dragFrom;
    int m_dragScroll = -1;
};

} // namespace Starforge::Gui
