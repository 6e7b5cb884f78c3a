#pragma once

// The capacity heatmap: one band per GPU series, one cell per node, wrapping to the width of the
// view, over a CapacityNodesModel (whose rows are ordered by series, so a band is a run of rows).
// A cell's colour is the node's GPUs in use over its allocatable GPUs on the viridis ramp
// (heatmapcolors.h); a blocked node (cordoned, not ready, tainted) is hatched; a node without
// GPUs is grey. The tooltip is the model's (node, GPUs, blocking reason, the pods using them).
//
// Zoom: cell sizes from 2 px (5,000 nodes on one screen) to 48 px (the numbers written in the
// cell): Ctrl+wheel, the + and - keys, zoomIn()/zoomOut(), zoomToFit(). The arrow keys move
// between cells (Up and Down by one line of the band, into the next band at its ends), Home and
// End go to the first and last node, Enter emits activated(). A filter shows one series.
//
// Accessibility: the view is a list whose children are its cells (each named by its node, its
// description the tooltip), created on demand and kept per node, so AT-SPI can walk them and
// follow the focused cell.

#include <QAbstractItemView>

namespace Starforge::Models {
class CapacityNodesModel;
}

namespace Starforge::Gui {

class CapacityHeatmapView final : public QAbstractItemView
{
    Q_OBJECT
public:
    explicit CapacityHeatmapView(QWidget *parent = nullptr);
    ~CapacityHeatmapView() override;

    void setModel(QAbstractItemModel *model) override;
    Models::CapacityNodesModel *nodesModel() const { return m_nodes; }

    // Empty: every series.
    void setSeriesFilter(const QString &series);
    QString seriesFilter() const { return m_filter; }

    static const QList<int> &zoomLevels();
    int cellSize() const { return m_cellSize; }
    void setCellSize(int pixels); // snapped to the nearest zoom level
    void zoomIn();
    void zoomOut();
    // The largest zoom level at which every shown band fits the view's height.
    void zoomToFit();

    // The shown series, top to bottom, and the model rows of their cells, in cell order.
    QStringList shownSeries() const;
    int shownCellCount() const;
    int shownRowAt(int position) const; // -1 out of range
    int positionOfRow(int row) const; // -1 when not shown
    // Cells per line at the current width and zoom.
    int columns() const;
    // The band header's rectangle of a series (viewport coordinates); empty when not shown.
    QRect bandHeaderRect(const QString &series) const;

    QRect visualRect(const QModelIndex &index) const override;
    void scrollTo(const QModelIndex &index, ScrollHint hint = EnsureVisible) override;
    QModelIndex indexAt(const QPoint &point) const override;

Q_SIGNALS:
    void zoomChanged(int cellSize);
    // The person zoomed with the keyboard or the wheel (before zoomChanged).
    void zoomedByUser();

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
    void currentChanged(const QModelIndex &current, const QModelIndex &previous) override;
    void dataChanged(const QModelIndex &topLeft, const QModelIndex &bottomRight, const QList<int> &roles = QList<int>()) override;
    void rowsInserted(const QModelIndex &parent, int start, int end) override;

private:
    struct Band
    {
        QString series;
        int first = 0; // model row of its first node
        int count = 0;
        int top = 0; // content coordinates
        int height = 0;
        int position = 0; // cell position of its first node among the shown cells
    };

    void invalidateLayout();
    void ensureLayout() const;
    void relayout() const;
    int pitch() const;
    int headerHeight() const;
    int bandIndexOfRow(int row) const;
    QRect cellRect(const Band &band, int offset) const; // content coordinates

    Models::CapacityNodesModel *m_nodes = nullptr;
    QString m_filter;
    int m_cellSize = 16;
    mutable QList<Band> m_bands;
    mutable int m_columns = 1;
    mutable int m_contentHeight = 0;
    mutable bool m_layoutDirty = true;
    bool m_geometryPending = false;
};

} // namespace Starforge::Gui
