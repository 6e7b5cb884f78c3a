#include "gui/capacity/capacityheatmapview.h"

#include "gui/capacity/heatmapcolors.h"
#include "models/capacitynodesmodel.h"

#include <QAccessible>
#include <QAccessibleWidget>
#include <QHash>
#include <QKeyEvent>
#include <QPainter>
#include <QPointer>
#include <QScrollBar>
#include <QTimer>
#include <QWheelEvent>

#include <algorithm>

namespace Starforge::Gui {

using Models::CapacityNodesModel;

namespace {

constexpr int Margin = 6;
constexpr int BandSpacing = 8;

// ---------------------------------------------------------------------------------------------
// Accessibility: the view is a list; its children are the shown cells, one per node.

class HeatmapCellAccessible final : public QAccessibleInterface
{
public:
    HeatmapCellAccessible(CapacityHeatmapView *view, QString node)
        : m_view(view)
        , m_node(std::move(node))
    {
    }

    int row() const { return m_view && m_view->nodesModel() ? m_view->nodesModel()->rowOf(m_node) : -1; }
    QModelIndex index() const { return row() < 0 ? QModelIndex() : m_view->nodesModel()->index(row(), 0); }

    bool isValid() const override { return m_view && row() >= 0; }
    QObject *object() const override { return nullptr; }
    QWindow *window() const override { return m_view ? m_view->window()->windowHandle() : nullptr; }
    QAccessibleInterface *childAt(int, int) const override { return nullptr; }
    QAccessibleInterface *parent() const override { return QAccessible::queryAccessibleInterface(m_view.data()); }
    QAccessibleInterface *child(int) const override { return nullptr; }
    int childCount() const override { return 0; }
    int indexOfChild(const QAccessibleInterface *) const override { return -1; }
    QString text(QAccessible::Text t) const override
    {
        const QModelIndex i = index();
        if (!i.isValid())
            return {};
        switch (t) {
        case QAccessible::Name:
            return i.data(Qt::AccessibleTextRole).toString();
        case QAccessible::Description:
            return i.data(Qt::ToolTipRole).toString();
        default:
            return {};
        }
    }
    void setText(QAccessible::Text, const QString &) override { }
    QRect rect() const override
    {
        if (!isValid())
            return {};
        const QRect r = m_view->visualRect(index());
        return QRect(m_view->viewport()->mapToGlobal(r.topLeft()), r.size());
    }
    QAccessible::Role role() const override { return QAccessible::ListItem; }
    QAccessible::State state() const override
    {
        QAccessible::State s;
        if (!isValid()) {
            s.invalid = true;
            return s;
        }
        s.focusable = true;
        s.selectable = true;
        const QModelIndex i = index();
        s.focused = m_view->hasFocus() && m_view->currentIndex().row() == i.row();
        s.selected = m_view->selectionModel() && m_view->selectionModel()->isSelected(i);
        s.invisible = !m_view->viewport()->rect().intersects(m_view->visualRect(i));
        s.offscreen = s.invisible;
        return s;
    }

private:
    QPointer<CapacityHeatmapView> m_view;
    QString m_node;
};

class HeatmapAccessible final : public QAccessibleWidget
{
public:
    explicit HeatmapAccessible(CapacityHeatmapView *view)
        : QAccessibleWidget(view, QAccessible::List)
    {
    }
    ~HeatmapAccessible() override
    {
        for (const QAccessible::Id id : std::as_const(m_cells))
            QAccessible::deleteAccessibleInterface(id);
    }

    CapacityHeatmapView *view() const { return static_cast<CapacityHeatmapView *>(widget()); }

    int childCount() const override { return view()->nodesModel() ? view()->shownCellCount() : 0; }
    QAccessibleInterface *child(int index) const override
    {
        const int row = view()->shownRowAt(index);
        if (row < 0)
            return nullptr;
        const QString node = view()->nodesModel()->nodeAt(row);
        if (const auto id = m_cells.constFind(node); id != m_cells.constEnd()) {
            if (QAccessibleInterface *cached = QAccessible::accessibleInterface(*id))
                return cached;
        }
        auto *cell = new HeatmapCellAccessible(view(), node);
        m_cells.insert(node, QAccessible::registerAccessibleInterface(cell));
        return cell;
    }
    int indexOfChild(const QAccessibleInterface *child) const override
    {
        const auto *cell = dynamic_cast<const HeatmapCellAccessible *>(child);
        return cell ? view()->positionOfRow(cell->row()) : -1;
    }
    QAccessibleInterface *childAt(int x, int y) const override
    {
        const QPoint local = view()->viewport()->mapFromGlobal(QPoint(x, y));
        const QModelIndex index = view()->indexAt(local);
        return index.isValid() ? child(view()->positionOfRow(index.row())) : nullptr;
    }
    QAccessibleInterface *focusChild() const override
    {
        const QModelIndex current = view()->currentIndex();
        return current.isValid() && view()->hasFocus() ? child(view()->positionOfRow(current.row())) : nullptr;
    }
    QString text(QAccessible::Text t) const override
    {
        if (t == QAccessible::Name && view()->accessibleName().isEmpty())
            return CapacityHeatmapView::tr("GPU capacity heatmap");
        return QAccessibleWidget::text(t);
    }

private:
    mutable QHash<QString, QAccessible::Id> m_cells;
};

QAccessibleInterface *heatmapAccessibleFactory(const QString &className, QObject *object)
{
    if (className == QLatin1String("Starforge::Gui::CapacityHeatmapView") && object && object->isWidgetType()) {
        return new HeatmapAccessible(static_cast<CapacityHeatmapView *>(object));
    }
    return nullptr;
}

} // namespace

// ---------------------------------------------------------------------------------------------

CapacityHeatmapView::CapacityHeatmapView(QWidget *parent)
    : QAbstractItemView(parent)
{
    static const bool factoryInstalled = [] {
        QAccessible::installFactory(&heatmapAccessibleFactory);
        return true;
    }();
    Q_UNUSED(factoryInstalled);
    setObjectName(QStringLiteral("capacityHeatmap"));
    setAccessibleName(tr("GPU capacity heatmap"));
    setAccessibleDescription(tr("One cell per node, one band per GPU series; colour is GPUs in use over allocatable. Arrow keys move "
                                "between nodes, Enter lists the node's pods, + and - zoom."));
    setSelectionMode(SingleSelection);
    setEditTriggers(NoEditTriggers);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
}

CapacityHeatmapView::~CapacityHeatmapView() = default;

void CapacityHeatmapView::setModel(QAbstractItemModel *model)
{
    if (QAbstractItemView::model())
        disconnect(QAbstractItemView::model(), nullptr, this, nullptr);
    QAbstractItemView::setModel(model);
    m_nodes = qobject_cast<CapacityNodesModel *>(model);
    if (model) {
        connect(model, &QAbstractItemModel::rowsRemoved, this, &CapacityHeatmapView::invalidateLayout);
        connect(model, &QAbstractItemModel::modelReset, this, &CapacityHeatmapView::invalidateLayout);
    }
    invalidateLayout();
}

const QList<int> &CapacityHeatmapView::zoomLevels()
{
    static const QList<int> levels { 2, 3, 4, 6, 8, 12, 16, 24, 32, 48 };
    return levels;
}

void CapacityHeatmapView::setCellSize(int pixels)
{
    const QList<int> &levels = zoomLevels();
    int snapped = levels.first();
    for (const int level : levels) {
        if (std::abs(level - pixels) < std::abs(snapped - pixels))
            snapped = level;
    }
    if (snapped == m_cellSize)
        return;
    m_cellSize = snapped;
    m_layoutDirty = true;
    updateGeometries();
    viewport()->update();
    if (currentIndex().isValid())
        scrollTo(currentIndex());
    Q_EMIT zoomChanged(m_cellSize);
}

void CapacityHeatmapView::zoomIn()
{
    const QList<int> &levels = zoomLevels();
    const auto next = std::upper_bound(levels.cbegin(), levels.cend(), m_cellSize);
    if (next != levels.cend())
        setCellSize(*next);
}

void CapacityHeatmapView::zoomOut()
{
    const QList<int> &levels = zoomLevels();
    const auto at = std::lower_bound(levels.cbegin(), levels.cend(), m_cellSize);
    if (at != levels.cbegin())
        setCellSize(*(at - 1));
}

void CapacityHeatmapView::zoomToFit()
{
    if (viewport()->height() < 4 * Margin)
        return; // not laid out yet: nothing to fit
    const QList<int> &levels = zoomLevels();
    for (auto level = levels.crbegin(); level != levels.crend(); ++level) {
        setCellSize(*level);
        ensureLayout();
        if (m_contentHeight <= viewport()->height())
            return;
    }
}

void CapacityHeatmapView::setSeriesFilter(const QString &series)
{
    if (series == m_filter)
        return;
    m_filter = series;
    m_layoutDirty = true;
    updateGeometries();
    viewport()->update();
    if (currentIndex().isValid() && isIndexHidden(currentIndex())) {
        selectionModel()->clearSelection();
        const int first = shownRowAt(0);
        selectionModel()->setCurrentIndex(first >= 0 ? model()->index(first, 0) : QModelIndex(), QItemSelectionModel::NoUpdate);
    }
}

int CapacityHeatmapView::pitch() const
{
    return m_cellSize + (m_cellSize >= 6 ? 2 : 1);
}

int CapacityHeatmapView::headerHeight() const
{
    return fontMetrics().height() + 6;
}

void CapacityHeatmapView::invalidateLayout()
{
    // Rows arrive one by one while a large cluster is listed: lay out once per event-loop turn.
    m_layoutDirty = true;
    viewport()->update();
    if (!m_geometryPending) {
        m_geometryPending = true;
        QTimer::singleShot(0, this, [this] {
            m_geometryPending = false;
            updateGeometries();
        });
    }
}

void CapacityHeatmapView::ensureLayout() const
{
    if (m_layoutDirty)
        relayout();
}

void CapacityHeatmapView::relayout() const
{
    m_layoutDirty = false;
    m_bands.clear();
    const int p = pitch();
    m_columns = std::max(1, (viewport()->width() - 2 * Margin + (p - m_cellSize)) / p);
    int y = Margin;
    int position = 0;
    const QAbstractItemModel *m = model();
    const int rows = m ? m->rowCount() : 0;
    int row = 0;
    while (row < rows) {
        const QString series = m_nodes ? m_nodes->seriesAt(row) : m->index(row, 0).data(CapacityNodesModel::SeriesRole).toString();
        int end = row + 1;
        while (end < rows
               && (m_nodes ? m_nodes->seriesAt(end) : m->index(end, 0).data(CapacityNodesModel::SeriesRole).toString()) == series)
            ++end;
        if (m_filter.isEmpty() || series == m_filter) {
            Band band;
            band.series = series;
            band.first = row;
            band.count = end - row;
            band.top = y;
            band.position = position;
            const int lines = (band.count + m_columns - 1) / m_columns;
            band.height = headerHeight() + lines * p;
            y += band.height + BandSpacing;
            position += band.count;
            m_bands << band;
        }
        row = end;
    }
    m_contentHeight = y;
}

int CapacityHeatmapView::columns() const
{
    ensureLayout();
    return m_columns;
}

QStringList CapacityHeatmapView::shownSeries() const
{
    ensureLayout();
    QStringList out;
    for (const Band &band : std::as_const(m_bands))
        out << band.series;
    return out;
}

int CapacityHeatmapView::shownCellCount() const
{
    ensureLayout();
    return m_bands.isEmpty() ? 0 : m_bands.constLast().position + m_bands.constLast().count;
}

int CapacityHeatmapView::shownRowAt(int position) const
{
    ensureLayout();
    if (position < 0)
        return -1;
    const auto band = std::upper_bound(m_bands.cbegin(), m_bands.cend(), position, [](int p, const Band &b) { return p < b.position; });
    if (band == m_bands.cbegin())
        return -1;
    const Band &b = *(band - 1);
    return position - b.position < b.count ? b.first + (position - b.position) : -1;
}

int CapacityHeatmapView::bandIndexOfRow(int row) const
{
    ensureLayout();
    const auto band = std::upper_bound(m_bands.cbegin(), m_bands.cend(), row, [](int r, const Band &b) { return r < b.first; });
    if (band == m_bands.cbegin())
        return -1;
    const qsizetype i = (band - m_bands.cbegin()) - 1;
    const Band &b = m_bands.at(i);
    return row < b.first + b.count ? int(i) : -1;
}

int CapacityHeatmapView::positionOfRow(int row) const
{
    const int band = bandIndexOfRow(row);
    return band < 0 ? -1 : m_bands.at(band).position + (row - m_bands.at(band).first);
}

QRect CapacityHeatmapView::cellRect(const Band &band, int offset) const
{
    const int p = pitch();
    return QRect(Margin + (offset % m_columns) * p, band.top + headerHeight() + (offset / m_columns) * p, m_cellSize, m_cellSize);
}

QRect CapacityHeatmapView::bandHeaderRect(const QString &series) const
{
    ensureLayout();
    for (const Band &band : std::as_const(m_bands)) {
        if (band.series == series)
            return QRect(Margin, band.top - verticalOffset(), viewport()->width() - 2 * Margin, headerHeight());
    }
    return {};
}

QRect CapacityHeatmapView::visualRect(const QModelIndex &index) const
{
    if (!index.isValid())
        return {};
    const int band = bandIndexOfRow(index.row());
    if (band < 0)
        return {};
    return cellRect(m_bands.at(band), index.row() - m_bands.at(band).first).translated(0, -verticalOffset());
}

QModelIndex CapacityHeatmapView::indexAt(const QPoint &point) const
{
    ensureLayout();
    const int y = point.y() + verticalOffset();
    const auto band = std::upper_bound(m_bands.cbegin(), m_bands.cend(), y, [](int v, const Band &b) { return v < b.top; });
    if (band == m_bands.cbegin())
        return {};
    const Band &b = *(band - 1);
    const int p = pitch();
    const int dy = y - b.top - headerHeight();
    const int dx = point.x() - Margin;
    if (dy < 0 || dx < 0 || y >= b.top + b.height)
        return {};
    const int column = dx / p;
    if (column >= m_columns)
        return {};
    // The gap between cells belongs to the cell before it: small cells stay easy to hit.
    const int offset = (dy / p) * m_columns + column;
    if (offset >= b.count)
        return {};
    return model()->index(b.first + offset, 0);
}

void CapacityHeatmapView::scrollTo(const QModelIndex &index, ScrollHint hint)
{
    const QRect r = visualRect(index);
    if (!r.isValid())
        return;
    QScrollBar *bar = verticalScrollBar();
    const int viewHeight = viewport()->height();
    if (hint == PositionAtTop || (hint == EnsureVisible && r.top() < 0)) {
        bar->setValue(bar->value() + r.top() - Margin);
    } else if (hint == PositionAtBottom || (hint == EnsureVisible && r.bottom() > viewHeight)) {
        bar->setValue(bar->value() + r.bottom() - viewHeight + Margin);
    } else if (hint == PositionAtCenter) {
        bar->setValue(bar->value() + r.center().y() - viewHeight / 2);
    }
    viewport()->update();
}

QModelIndex CapacityHeatmapView::moveCursor(CursorAction cursorAction, Qt::KeyboardModifiers)
{
    ensureLayout();
    const int total = shownCellCount();
    if (total == 0)
        return {};
    const QModelIndex current = currentIndex();
    int position = current.isValid() ? positionOfRow(current.row()) : -1;
    if (position < 0)
        return model()->index(shownRowAt(0), 0);
    const int band = bandIndexOfRow(current.row());
    const Band &b = m_bands.at(band);
    const int offset = position - b.position;
    const int column = offset % m_columns;
    const int linesPerPage = std::max(1, viewport()->height() / pitch());
    const auto lineMove = [&](int lines) {
        // Within the band by whole lines; past its end into the next band's line at the same
        // column (or its last node), before its start into the previous band's last line.
        int target = offset + lines * m_columns;
        if (target >= 0 && target < b.count)
            return b.position + target;
        if (lines > 0) {
            if (target < ((b.count + m_columns - 1) / m_columns) * m_columns)
                return b.position + b.count - 1; // the last, shorter line
            if (band + 1 >= m_bands.size())
                return position;
            const Band &next = m_bands.at(band + 1);
            return next.position + std::min(column, next.count - 1);
        }
        if (band == 0)
            return position;
        const Band &previous = m_bands.at(band - 1);
        const int lastLine = (previous.count - 1) / m_columns;
        return previous.position + std::min(lastLine * m_columns + column, previous.count - 1);
    };
    switch (cursorAction) {
    case MoveLeft:
    case MovePrevious:
        position = std::max(0, position - 1);
        break;
    case MoveRight:
    case MoveNext:
        position = std::min(total - 1, position + 1);
        break;
    case MoveUp:
        position = lineMove(-1);
        break;
    case MoveDown:
        position = lineMove(1);
        break;
    case MovePageUp:
        position = std::max(0, position - linesPerPage * m_columns);
        break;
    case MovePageDown:
        position = std::min(total - 1, position + linesPerPage * m_columns);
        break;
    case MoveHome:
        position = 0;
        break;
    case MoveEnd:
        position = total - 1;
        break;
    }
    return model()->index(shownRowAt(position), 0);
}

int CapacityHeatmapView::horizontalOffset() const
{
    return 0;
}

int CapacityHeatmapView::verticalOffset() const
{
    return verticalScrollBar()->value();
}

bool CapacityHeatmapView::isIndexHidden(const QModelIndex &index) const
{
    return index.isValid() && bandIndexOfRow(index.row()) < 0;
}

void CapacityHeatmapView::setSelection(const QRect &rect, QItemSelectionModel::SelectionFlags command)
{
    const QModelIndex index = indexAt(rect.topLeft());
    if (index.isValid()) {
        selectionModel()->select(index, command);
    } else if (command & QItemSelectionModel::Clear) {
        selectionModel()->clearSelection();
    }
}

QRegion CapacityHeatmapView::visualRegionForSelection(const QItemSelection &selection) const
{
    QRegion region;
    for (const QModelIndex &index : selection.indexes())
        region += visualRect(index).adjusted(-2, -2, 2, 2);
    return region;
}

void CapacityHeatmapView::updateGeometries()
{
    ensureLayout();
    QScrollBar *bar = verticalScrollBar();
    bar->setRange(0, std::max(0, m_contentHeight - viewport()->height()));
    bar->setPageStep(viewport()->height());
    bar->setSingleStep(pitch() * 2);
    QAbstractItemView::updateGeometries();
}

void CapacityHeatmapView::resizeEvent(QResizeEvent *event)
{
    m_layoutDirty = true;
    QAbstractItemView::resizeEvent(event);
    updateGeometries();
}

void CapacityHeatmapView::paintEvent(QPaintEvent *event)
{
    ensureLayout();
    QPainter painter(viewport());
    const QRect area = event->rect();
    painter.fillRect(area, palette().base());
    const int offset = verticalOffset();
    const int p = pitch();
    const int header = headerHeight();
    const QModelIndex current = currentIndex();
    const QColor text = palette().color(QPalette::Text);
    const QColor hatchOnDark(255, 255, 255, 200);
    const QColor hatchOnLight(0, 0, 0, 170);
    const bool numbers = m_cellSize >= 32;
    QFont small = font();
    small.setPixelSize(std::max(8, m_cellSize / 4));
    const QItemSelectionModel *selection = selectionModel();
    for (const Band &band : std::as_const(m_bands)) {
        const int top = band.top - offset;
        if (top > area.bottom() || top + band.height < area.top())
            continue;
        // The band's header: the series and its nodes.
        painter.setPen(text);
        QFont bold = font();
        bold.setBold(true);
        painter.setFont(bold);
        painter.drawText(QRect(Margin, top, viewport()->width() - 2 * Margin, header), Qt::AlignLeft | Qt::AlignVCenter,
                         band.count == 1 ? tr("%1 · 1 node").arg(band.series) : tr("%1 · %2 nodes").arg(band.series).arg(band.count));
        painter.setFont(small);
        // Only the lines of cells inside the area.
        const int cellsTop = top + header;
        const int firstLine = std::max(0, (area.top() - cellsTop) / p);
        const int lastLine = std::min((band.count - 1) / m_columns, (area.bottom() - cellsTop) / p);
        for (int line = firstLine; line <= lastLine; ++line) {
            const int end = std::min(band.count, (line + 1) * m_columns);
            for (int i = line * m_columns; i < end; ++i) {
                const QModelIndex index = model()->index(band.first + i, 0);
                const QRect r(Margin + (i % m_columns) * p, cellsTop + line * p, m_cellSize, m_cellSize);
                const double load = index.data(CapacityNodesModel::LoadRole).toDouble();
                const QColor fill = heatColor(load);
                painter.fillRect(r, fill);
                const bool light = fill.lightnessF() > 0.55;
                if (index.data(CapacityNodesModel::BlockedRole).toBool()) {
                    painter.fillRect(r, QBrush(light ? hatchOnLight : hatchOnDark, m_cellSize >= 6 ? Qt::BDiagPattern : Qt::Dense5Pattern));
                }
                if (numbers) {
                    painter.setPen(light ? Qt::black : Qt::white);
                    painter.drawText(r, Qt::AlignCenter,
                                     QStringLiteral("%1/%2")
                                         .arg(index.data(CapacityNodesModel::UsedRole).toLongLong())
                                         .arg(index.data(CapacityNodesModel::AllocatableRole).toInt()));
                }
                if (selection && selection->isSelected(index)) {
                    painter.setPen(QPen(palette().color(QPalette::Highlight), 2));
                    painter.drawRect(r.adjusted(-1, -1, 0, 0));
                }
            }
        }
    }
    // The current cell: a frame that shows on every colour of the ramp.
    if (current.isValid() && hasFocus()) {
        const QRect r = visualRect(current);
        if (r.isValid()) {
            painter.setBrush(Qt::NoBrush);
            painter.setPen(QPen(Qt::black, 1));
            painter.drawRect(r.adjusted(-2, -2, 1, 1));
            painter.setPen(QPen(Qt::white, 1));
            painter.drawRect(r.adjusted(-1, -1, 0, 0));
        }
    }
}

void CapacityHeatmapView::wheelEvent(QWheelEvent *event)
{
    if (event->modifiers() & Qt::ControlModifier) {
        Q_EMIT zoomedByUser();
        if (event->angleDelta().y() > 0)
            zoomIn();
        else if (event->angleDelta().y() < 0)
            zoomOut();
        event->accept();
        return;
    }
    QAbstractItemView::wheelEvent(event);
}

void CapacityHeatmapView::keyPressEvent(QKeyEvent *event)
{
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        Q_EMIT zoomedByUser();
        zoomIn();
        event->accept();
        return;
    case Qt::Key_Minus:
        Q_EMIT zoomedByUser();
        zoomOut();
        event->accept();
        return;
    default:
        break;
    }
    QAbstractItemView::keyPressEvent(event);
}

void CapacityHeatmapView::currentChanged(const QModelIndex &current, const QModelIndex &previous)
{
    QAbstractItemView::currentChanged(current, previous);
    viewport()->update();
    if (current.isValid() && QAccessible::isActive() && hasFocus()) {
        QAccessibleEvent focus(this, QAccessible::Focus);
        focus.setChild(positionOfRow(current.row()));
        QAccessible::updateAccessibility(&focus);
    }
}

void CapacityHeatmapView::dataChanged(const QModelIndex &topLeft, const QModelIndex &bottomRight, const QList<int> &roles)
{
    // A node's numbers: only its cell is repainted (the layout depends on rows, not numbers).
    if (topLeft.isValid() && topLeft.row() == bottomRight.row()) {
        const QRect r = visualRect(topLeft);
        if (r.isValid())
            viewport()->update(r.adjusted(-2, -2, 2, 2));
        return;
    }
    QAbstractItemView::dataChanged(topLeft, bottomRight, roles);
    viewport()->update();
}

void CapacityHeatmapView::rowsInserted(const QModelIndex &parent, int start, int end)
{
    QAbstractItemView::rowsInserted(parent, start, end);
    invalidateLayout();
}

} // namespace Starforge::Gui
