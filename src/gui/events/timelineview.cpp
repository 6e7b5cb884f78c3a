#include "gui/events/timelineview.h"

#include "models/timelinemodel.h"

#include <QAccessible>
#include <QAccessibleWidget>
#include <QHash>
#include <QKeyEvent>
#include <QPainter>
#include <QPointer>
#include <QScrollBar>
#include <QWheelEvent>

#include <algorithm>
#include <climits>
#include <cmath>

namespace Starforge::Gui {

using Models::TimelineModel;

namespace {

constexpr int Margin = 12;          // before the first and after the last second on the axis
constexpr int MarkSize = 9;
constexpr int SpanHeight = 10;
constexpr double MaxPixelsPerSecond = 400.0;
constexpr double ZoomStep = 1.5;

// The colours, fixed hues that read on light and dark palettes alike.
const QColor WarningColor(0xc0, 0x39, 0x2b);
const QColor NormalColor(0x2e, 0x6f, 0xb5);
const QColor EvidenceColor(0xf1, 0xc4, 0x0f);

QColor phaseColor(Events::Phase phase)
{
    switch (phase) {
    case Events::Phase::Pending: return QColor(0x95, 0xa5, 0xa6, 45);
    case Events::Phase::Suspended: return QColor(0x8e, 0x44, 0xad, 40);
    case Events::Phase::Initializing: return QColor(0xf3, 0x9c, 0x12, 45);
    case Events::Phase::Running: return QColor(0x27, 0xae, 0x60, 45);
    case Events::Phase::Succeeded: return QColor(0x16, 0xa0, 0x85, 30);
    case Events::Phase::Failed: return QColor(0xc0, 0x39, 0x2b, 40);
    case Events::Phase::Stopped: return QColor(0x7f, 0x8c, 0x8d, 40);
    }
    return {};
}

QString phaseLabel(Events::Phase phase)
{
    switch (phase) {
    case Events::Phase::Pending: return TimelineView::tr("Pending");
    case Events::Phase::Suspended: return TimelineView::tr("Suspended");
    case Events::Phase::Initializing: return TimelineView::tr("Initializing");
    case Events::Phase::Running: return TimelineView::tr("Running");
    case Events::Phase::Succeeded: return TimelineView::tr("Succeeded");
    case Events::Phase::Failed: return TimelineView::tr("Failed");
    case Events::Phase::Stopped: return TimelineView::tr("Stopped");
    }
    return {};
}

// ---------------------------------------------------------------------------------------------
// Accessibility: the view is a list; its children are the events, one per row.

class TimelineItemAccessible final : public QAccessibleInterface
{
public:
    TimelineItemAccessible(TimelineView *view, QString key)
        : m_view(view)
        , m_key(std::move(key))
    {
    }

    int row() const { return m_view && m_view->timelineModel() ? m_view->timelineModel()->rowOfKey(m_key) : -1; }
    QModelIndex index() const { return row() < 0 ? QModelIndex() : m_view->timelineModel()->index(row(), 0); }

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
            return i.data(Qt::AccessibleTextRole).toString()
                + (i.data(TimelineModel::EvidenceRole).toBool() ? TimelineView::tr(" (evidence of the diagnosis)") : QString());
        case QAccessible::Description:
            return i.data(Qt::AccessibleDescriptionRole).toString();
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
    QPointer<TimelineView> m_view;
    QString m_key;
};

class TimelineAccessible final : public QAccessibleWidget
{
public:
    explicit TimelineAccessible(TimelineView *view)
        : QAccessibleWidget(view, QAccessible::List)
    {
    }
    ~TimelineAccessible() override
    {
        for (const QAccessible::Id id : std::as_const(m_items))
            QAccessible::deleteAccessibleInterface(id);
    }

    TimelineView *view() const { return static_cast<TimelineView *>(widget()); }
    TimelineModel *model() const { return view()->timelineModel(); }

    int childCount() const override { return model() ? model()->rowCount() : 0; }
    QAccessibleInterface *child(int index) const override
    {
        if (!model() || index < 0 || index >= model()->rowCount())
            return nullptr;
        const QString key = model()->itemAt(index).key();
        if (const auto id = m_items.constFind(key); id != m_items.constEnd()) {
            if (QAccessibleInterface *cached = QAccessible::accessibleInterface(*id))
                return cached;
        }
        auto *item = new TimelineItemAccessible(view(), key);
        m_items.insert(key, QAccessible::registerAccessibleInterface(item));
        return item;
    }
    int indexOfChild(const QAccessibleInterface *child) const override
    {
        const auto *item = dynamic_cast<const TimelineItemAccessible *>(child);
        return item ? item->row() : -1;
    }
    QAccessibleInterface *childAt(int x, int y) const override
    {
        const QModelIndex index = view()->indexAt(view()->viewport()->mapFromGlobal(QPoint(x, y)));
        return index.isValid() ? child(index.row()) : nullptr;
    }
    QAccessibleInterface *focusChild() const override
    {
        const QModelIndex current = view()->currentIndex();
        return current.isValid() && view()->hasFocus() ? child(current.row()) : nullptr;
    }

private:
    mutable QHash<QString, QAccessible::Id> m_items;
};

QAccessibleInterface *timelineAccessibleFactory(const QString &className, QObject *object)
{
    if (className == QLatin1String("Starforge::Gui::TimelineView") && object && object->isWidgetType())
        return new TimelineAccessible(static_cast<TimelineView *>(object));
    return nullptr;
}

// A tick every so many seconds, so labels stand at least minPixels apart.
qint64 tickStep(double pps, int minPixels)
{
    static const qint64 steps[] = {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800};
    for (const qint64 s : steps) {
        if (s * pps >= minPixels)
            return s;
    }
    return 604800 * 4;
}

} // namespace

// ---------------------------------------------------------------------------------------------

TimelineView::TimelineView(QWidget *parent)
    : QAbstractItemView(parent)
{
    static const bool factoryInstalled = [] {
        QAccessible::installFactory(&timelineAccessibleFactory);
        return true;
    }();
    Q_UNUSED(factoryInstalled);
    setObjectName(QStringLiteral("eventTimeline"));
    setAccessibleName(tr("Event timeline"));
    setAccessibleDescription(tr("The job's events on a time axis, one lane per object, the job's phases behind. Left and Right go to "
                                "the previous and next event, Up and Down to the lane above or below, + and - zoom, 0 fits the "
                                "whole job, Shift+Left and Shift+Right pan."));
    setSelectionMode(SingleSelection);
    setSelectionBehavior(SelectRows);
    setEditTriggers(NoEditTriggers);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
    m_gutter = std::max(160, fontMetrics().horizontalAdvance(QLatin1Char('m')) * 22);
}

TimelineView::~TimelineView() = default;

void TimelineView::setModel(QAbstractItemModel *model)
{
    if (m_model)
        disconnect(m_model, nullptr, this, nullptr);
    QAbstractItemView::setModel(model);
    m_model = qobject_cast<TimelineModel *>(model);
    if (m_model)
        connect(m_model, &TimelineModel::layoutOfTimelineChanged, this, &TimelineView::timelineChanged);
    timelineChanged();
}

void TimelineView::timelineChanged()
{
    if (m_fitting)
        m_pps = fitScale();
    updateGeometries();
    viewport()->update();
}

int TimelineView::headerHeight() const
{
    return 2 * fontMetrics().height() + 8;
}

int TimelineView::rowHeight() const
{
    return fontMetrics().height() + 10;
}

double TimelineView::fitScale() const
{
    if (!m_model || !m_model->timeline().start.isValid())
        return 1.0;
    const double seconds = std::max<double>(1.0, m_model->timeline().start.msecsTo(m_model->timeline().end) / 1000.0);
    const int width = std::max(40, viewport()->width() - m_gutter - 2 * Margin);
    return std::clamp(width / seconds, 1e-4, MaxPixelsPerSecond);
}

int TimelineView::contentWidth() const
{
    if (!m_model || !m_model->timeline().start.isValid())
        return 0;
    const double seconds = m_model->timeline().start.msecsTo(m_model->timeline().end) / 1000.0;
    return int(std::min(seconds * m_pps, 2.0e9)) + 2 * Margin;
}

void TimelineView::setPixelsPerSecond(double pps)
{
    pps = std::clamp(pps, 1e-4, MaxPixelsPerSecond);
    if (qFuzzyCompare(pps, m_pps))
        return;
    m_pps = pps;
    updateGeometries();
    viewport()->update();
    Q_EMIT zoomChanged(m_pps);
}

void TimelineView::zoomAbout(double factor, int viewportX)
{
    // Keep the time under viewportX where it is.
    const QDateTime anchor = timeAtX(viewportX);
    m_fitting = false;
    setPixelsPerSecond(std::max(m_pps * factor, fitScale() / 4));
    if (anchor.isValid())
        horizontalScrollBar()->setValue(horizontalScrollBar()->value() + xOf(anchor) - viewportX);
}

void TimelineView::zoomIn()
{
    const QRect current = visualRect(currentIndex());
    zoomAbout(ZoomStep, current.isValid() ? current.center().x() : (m_gutter + viewport()->width()) / 2);
}

void TimelineView::zoomOut()
{
    const QRect current = visualRect(currentIndex());
    zoomAbout(1.0 / ZoomStep, current.isValid() ? current.center().x() : (m_gutter + viewport()->width()) / 2);
}

void TimelineView::zoomToFit()
{
    m_fitting = true;
    setPixelsPerSecond(fitScale());
    horizontalScrollBar()->setValue(0);
}

int TimelineView::xOf(const QDateTime &time) const
{
    if (!m_model || !time.isValid() || !m_model->timeline().start.isValid())
        return m_gutter + Margin - horizontalOffset();
    const double seconds = m_model->timeline().start.msecsTo(time) / 1000.0;
    return m_gutter + Margin + int(std::lround(seconds * m_pps)) - horizontalOffset();
}

QDateTime TimelineView::timeAtX(int x) const
{
    if (!m_model || !m_model->timeline().start.isValid())
        return {};
    const double seconds = (x - m_gutter - Margin + horizontalOffset()) / m_pps;
    return m_model->timeline().start.addMSecs(qint64(seconds * 1000.0));
}

int TimelineView::laneAt(int y) const
{
    if (!m_model || y < headerHeight())
        return -1;
    const int lane = (y - headerHeight() + verticalOffset()) / rowHeight();
    return lane < m_model->timeline().lanes.size() ? lane : -1;
}

QRect TimelineView::laneRect(int lane) const
{
    return QRect(0, headerHeight() + lane * rowHeight() - verticalOffset(), viewport()->width(), rowHeight());
}

QRect TimelineView::itemRect(int row) const
{
    const Events::TimelineItem &item = m_model->itemAt(row);
    const QRect lane = laneRect(item.lane);
    const int end = xOf(item.end);
    QRect mark(end - MarkSize / 2 - 1, lane.center().y() - MarkSize / 2 - 1, MarkSize + 2, MarkSize + 2);
    if (item.isSpan()) {
        const int start = xOf(item.start);
        mark = mark.united(QRect(start, lane.center().y() - SpanHeight / 2, std::max(1, end - start), SpanHeight));
    }
    return mark;
}

QRect TimelineView::visualRect(const QModelIndex &index) const
{
    if (!m_model || !index.isValid() || index.model() != m_model)
        return {};
    return itemRect(index.row());
}

QModelIndex TimelineView::indexAt(const QPoint &point) const
{
    if (!m_model || point.x() < m_gutter)
        return {};
    const int lane = laneAt(point.y());
    if (lane < 0)
        return {};
    // The nearest mark within a few pixels wins over a span under the pointer.
    int best = -1;
    int bestDistance = MarkSize;
    int span = -1;
    const auto &items = m_model->timeline().items;
    for (int row = 0; row < items.size(); ++row) {
        if (items.at(row).lane != lane)
            continue;
        const int distance = std::abs(xOf(items.at(row).end) - point.x());
        if (distance < bestDistance) {
            best = row;
            bestDistance = distance;
        }
        if (span < 0 && items.at(row).isSpan() && itemRect(row).contains(point))
            span = row;
    }
    const int row = best >= 0 ? best : span;
    return row >= 0 ? m_model->index(row, 0) : QModelIndex();
}

void TimelineView::scrollTo(const QModelIndex &index, ScrollHint)
{
    if (!m_model || !index.isValid())
        return;
    const QRect r = itemRect(index.row());
    const int right = viewport()->width() - Margin;
    const int left = m_gutter + Margin;
    // The mark (the last sighting) is what must show.
    const int x = xOf(m_model->itemAt(index.row()).end);
    if (x < left)
        horizontalScrollBar()->setValue(horizontalScrollBar()->value() - (left - x) - 40);
    else if (x > right)
        horizontalScrollBar()->setValue(horizontalScrollBar()->value() + (x - right) + 40);
    if (r.top() < headerHeight())
        verticalScrollBar()->setValue(verticalScrollBar()->value() - (headerHeight() - r.top()) - 4);
    else if (r.bottom() > viewport()->height())
        verticalScrollBar()->setValue(verticalScrollBar()->value() + (r.bottom() - viewport()->height()) + 4);
}

QModelIndex TimelineView::moveCursor(CursorAction action, Qt::KeyboardModifiers)
{
    if (!m_model || m_model->rowCount() == 0)
        return {};
    const auto &items = m_model->timeline().items;
    const QModelIndex current = currentIndex();
    if (!current.isValid())
        return m_model->index(0, 0);
    const int row = current.row();
    switch (action) {
    case MoveLeft:
    case MovePrevious:
        return m_model->index(std::max(0, row - 1), 0);
    case MoveRight:
    case MoveNext:
        return m_model->index(std::min(int(items.size()) - 1, row + 1), 0);
    case MoveHome:
    case MovePageUp:
        return m_model->index(0, 0);
    case MoveEnd:
    case MovePageDown:
        return m_model->index(int(items.size()) - 1, 0);
    case MoveUp:
    case MoveDown: {
        // The event nearest in time on the closest lane above (below) that has any.
        const int step = action == MoveUp ? -1 : 1;
        const QDateTime at = items.at(row).end;
        for (int lane = items.at(row).lane + step; lane >= 0 && lane < m_model->timeline().lanes.size(); lane += step) {
            int best = -1;
            qint64 bestGap = 0;
            for (int i = 0; i < items.size(); ++i) {
                if (items.at(i).lane != lane)
                    continue;
                const qint64 gap = std::abs(items.at(i).end.msecsTo(at));
                if (best < 0 || gap < bestGap) {
                    best = i;
                    bestGap = gap;
                }
            }
            if (best >= 0)
                return m_model->index(best, 0);
        }
        return current;
    }
    }
    return current;
}

int TimelineView::horizontalOffset() const
{
    return horizontalScrollBar()->value();
}

int TimelineView::verticalOffset() const
{
    return verticalScrollBar()->value();
}

bool TimelineView::isIndexHidden(const QModelIndex &) const
{
    return false;
}

void TimelineView::setSelection(const QRect &rect, QItemSelectionModel::SelectionFlags command)
{
    const QModelIndex index = indexAt(rect.center());
    if (index.isValid())
        selectionModel()->select(index, command | QItemSelectionModel::Rows);
    else if (command & QItemSelectionModel::Clear)
        selectionModel()->clearSelection();
}

QRegion TimelineView::visualRegionForSelection(const QItemSelection &selection) const
{
    QRegion region;
    for (const QModelIndex &index : selection.indexes())
        region += visualRect(index).adjusted(-3, -3, 3, 3);
    return region;
}

void TimelineView::updateGeometries()
{
    const int lanes = m_model ? int(m_model->timeline().lanes.size()) : 0;
    const int visibleWidth = std::max(0, viewport()->width() - m_gutter);
    horizontalScrollBar()->setRange(0, std::max(0, contentWidth() - visibleWidth));
    horizontalScrollBar()->setPageStep(visibleWidth);
    horizontalScrollBar()->setSingleStep(20);
    const int visibleHeight = std::max(0, viewport()->height() - headerHeight());
    verticalScrollBar()->setRange(0, std::max(0, lanes * rowHeight() - visibleHeight));
    verticalScrollBar()->setPageStep(visibleHeight);
    verticalScrollBar()->setSingleStep(rowHeight());
    QAbstractItemView::updateGeometries();
}

void TimelineView::resizeEvent(QResizeEvent *event)
{
    QAbstractItemView::resizeEvent(event);
    if (m_fitting)
        m_pps = fitScale();
    updateGeometries();
}

void TimelineView::scrollContentsBy(int, int)
{
    viewport()->update();
}

void TimelineView::paintAxis(QPainter &p, const QRect &area)
{
    const auto &t = m_model->timeline();
    const QFontMetrics fm = fontMetrics();
    const int phaseRow = area.top() + 2;
    const int tickRow = area.top() + fm.height() + 6;
    // Phase names over their bands.
    for (const Events::PhaseBand &band : t.phases) {
        const int x0 = std::max(xOf(band.start), m_gutter);
        const int x1 = std::min(xOf(band.end), area.right());
        if (x1 - x0 < 8)
            continue;
        QColor solid = phaseColor(band.phase);
        solid.setAlpha(110);
        p.fillRect(QRect(x0, phaseRow, x1 - x0, fm.height() + 2), solid);
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRect(x0 + 4, phaseRow, x1 - x0 - 6, fm.height() + 2), Qt::AlignVCenter | Qt::AlignLeft,
                   fm.elidedText(phaseLabel(band.phase), Qt::ElideRight, x1 - x0 - 6));
    }
    // Ticks in local time.
    const qint64 step = tickStep(m_pps, fm.horizontalAdvance(QStringLiteral("00:00:00")) + 24);
    const QDateTime from = timeAtX(m_gutter);
    const QDateTime to = timeAtX(area.right());
    if (!from.isValid())
        return;
    const qint64 offset = from.toLocalTime().offsetFromUtc();
    qint64 tick = ((from.toSecsSinceEpoch() + offset) / step) * step - offset;
    // untranslated: a time format, the same in every language shipped
    const QString format = step >= 86400 ? QStringLiteral("MMM d") : step >= 60 ? QStringLiteral("HH:mm") : QStringLiteral("HH:mm:ss");
    p.setPen(palette().color(QPalette::PlaceholderText));
    for (; tick <= to.toSecsSinceEpoch() + step; tick += step) {
        const QDateTime at = QDateTime::fromSecsSinceEpoch(tick, Qt::UTC);
        const int x = xOf(at);
        if (x < m_gutter || x > area.right())
            continue;
        p.drawLine(x, tickRow + fm.height(), x, area.bottom());
        p.drawText(x + 3, tickRow + fm.ascent(), at.toLocalTime().toString(format));
    }
}

void TimelineView::paintEvent(QPaintEvent *)
{
    QPainter p(viewport());
    const QRect all = viewport()->rect();
    p.fillRect(all, palette().color(QPalette::Base));
    if (!m_model || m_model->timeline().lanes.isEmpty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(all.adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap,
                   m_model ? tr("No events are known for this job yet.") : QString());
        return;
    }
    const auto &t = m_model->timeline();
    const QFontMetrics fm = fontMetrics();
    const int header = headerHeight();
    const int rh = rowHeight();
    const QRect lanesArea(m_gutter, header, all.width() - m_gutter, all.height() - header);

    // Phase bands behind everything.
    for (const Events::PhaseBand &band : t.phases) {
        const int x0 = std::max(xOf(band.start), m_gutter);
        const int x1 = std::min(xOf(band.end), all.right());
        if (x1 > x0)
            p.fillRect(QRect(x0, header, x1 - x0, all.height() - header), phaseColor(band.phase));
    }
    paintAxis(p, QRect(0, 0, all.width(), header));

    // Lanes: alternating rows, the object's life as a thin line.
    const int firstLane = std::max(0, verticalOffset() / rh);
    const int lastLane = std::min(int(t.lanes.size()) - 1, (verticalOffset() + lanesArea.height()) / rh);
    const QColor lifeColor = palette().color(QPalette::Mid);
    p.setClipRect(lanesArea);
    for (int lane = firstLane; lane <= lastLane; ++lane) {
        const QRect row = laneRect(lane);
        if (lane % 2)
            p.fillRect(QRect(m_gutter, row.top(), all.width() - m_gutter, rh), QColor(127, 127, 127, 18));
        const Events::Lane &l = t.lanes.at(lane);
        if (l.created.isValid() && l.kind != Events::LaneKind::HeadGroup && l.kind != Events::LaneKind::WorkerGroup) {
            const int x0 = std::max(xOf(l.created), m_gutter);
            const int x1 = std::min(l.ended.isValid() ? xOf(l.ended) : xOf(t.end), all.right());
            if (x1 >= x0)
                p.fillRect(QRect(x0, row.center().y() - 1, std::max(1, x1 - x0), 2), lifeColor);
        }
    }

    // Events: spans, then marks over them; only those in view. A mark drawn at the same pixel
    // of the same lane as the one before it is drawn once (thousands of events on one screen).
    p.setRenderHint(QPainter::Antialiasing, true);
    const QItemSelectionModel *selection = selectionModel();
    const bool anySelected = selection && selection->hasSelection();
    const int current = currentIndex().isValid() ? currentIndex().row() : -1;
    // Times as milliseconds from here on: this loop runs over every event on each repaint.
    const qint64 axisStart = t.start.toMSecsSinceEpoch();
    const double pixelsPerMs = m_pps / 1000.0;
    const int x0Axis = m_gutter + Margin - horizontalOffset();
    auto xAt = [&](qint64 ms) { return x0Axis + int(std::lround(double(ms - axisStart) * pixelsPerMs)); };
    const qint64 viewFrom = timeAtX(m_gutter - MarkSize).toMSecsSinceEpoch();
    const qint64 viewTo = timeAtX(all.right() + MarkSize).toMSecsSinceEpoch();
    const auto &items = t.items;
    QList<int> lastMarkX(t.lanes.size(), INT_MIN);
    QList<bool> lastMarkWarning(t.lanes.size(), false);
    const QPen markOutline(palette().color(QPalette::Base), 1);
    for (int pass = 0; pass < 2; ++pass) {
        for (int row = 0; row < items.size(); ++row) {
            const Events::TimelineItem &item = items.at(row);
            if (item.lane < firstLane || item.lane > lastLane)
                continue;
            const qint64 startMs = item.start.toMSecsSinceEpoch();
            if (startMs > viewTo)
                break;   // sorted by start: nothing later is in view
            const qint64 endMs = item.end.toMSecsSinceEpoch();
            if (endMs < viewFrom)
                continue;
            const bool warning = item.warning();
            const QColor &color = warning ? WarningColor : NormalColor;
            const int y = laneRect(item.lane).center().y();
            const bool evidence = m_model->isEvidence(row);
            const bool selected = anySelected && selection->isRowSelected(row, QModelIndex());
            if (pass == 0) {
                if (!item.isSpan())
                    continue;
                const int x0 = xAt(startMs);
                const int x1 = std::max(x0 + 2, xAt(endMs));
                QColor fill = color;
                fill.setAlpha(120);
                const QRect bar(x0, y - SpanHeight / 2, x1 - x0, SpanHeight);
                if (evidence)
                    p.setPen(QPen(EvidenceColor, 3));
                else
                    p.setPen(Qt::NoPen);
                p.setBrush(fill);
                if (bar.width() < 3 * MarkSize) {
                    // Narrow: a plain bar (rounded corners and a label would not show anyway).
                    p.setRenderHint(QPainter::Antialiasing, false);
                    p.drawRect(bar);
                    p.setRenderHint(QPainter::Antialiasing, true);
                    continue;
                }
                p.drawRoundedRect(bar, 3, 3);
                // The count inside the bar when it fits; the tooltip and the list always have it.
                const QString count = QStringLiteral("×%1").arg(item.event.count);
                if (bar.width() > fm.horizontalAdvance(count) + MarkSize + 6) {
                    p.setPen(palette().color(QPalette::Text));
                    p.drawText(bar.adjusted(3, -3, -MarkSize, 3), Qt::AlignVCenter | Qt::AlignLeft, count);
                }
                continue;
            }
            const int x = xAt(endMs);
            const bool special = evidence || selected || row == current;
            if (!special && lastMarkX.at(item.lane) == x && lastMarkWarning.at(item.lane) == warning)
                continue;
            lastMarkX[item.lane] = x;
            lastMarkWarning[item.lane] = warning;
            if (evidence) {
                p.setPen(Qt::NoPen);
                p.setBrush(EvidenceColor);
                p.drawEllipse(QPoint(x, y), MarkSize, MarkSize);
            }
            p.setPen(markOutline);
            p.setBrush(color);
            if (warning) {
                // A warning is a triangle, larger: it stands out without colour too.
                const QPoint triangle[3] = {QPoint(x, y - MarkSize / 2 - 2), QPoint(x + MarkSize / 2 + 2, y + MarkSize / 2 + 1),
                                            QPoint(x - MarkSize / 2 - 2, y + MarkSize / 2 + 1)};
                p.drawPolygon(triangle, 3);
            } else {
                const QPoint diamond[4] = {QPoint(x, y - MarkSize / 2), QPoint(x + MarkSize / 2, y), QPoint(x, y + MarkSize / 2),
                                           QPoint(x - MarkSize / 2, y)};
                p.drawPolygon(diamond, 4);
            }
            if (selected || row == current) {
                p.setBrush(Qt::NoBrush);
                QPen ring(palette().color(QPalette::Highlight), selected ? 2 : 1, selected ? Qt::SolidLine : Qt::DotLine);
                p.setPen(ring);
                p.drawRect(itemRect(row).adjusted(-2, -2, 2, 2));
            }
        }
    }
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setClipping(false);

    // Now, on a job still going: where the next events will appear.
    if (t.now.isValid()) {
        const int x = xOf(t.now);
        if (x >= m_gutter && x <= all.right()) {
            p.setPen(QPen(palette().color(QPalette::Highlight), 1, Qt::DashLine));
            p.drawLine(x, header - fm.height() - 4, x, all.bottom());
        }
    }

    // The gutter: lane titles over a solid background, so panned marks pass under it.
    const QRect gutter(0, header, m_gutter, all.height() - header);
    p.fillRect(QRect(0, 0, m_gutter, all.height()), palette().color(QPalette::AlternateBase));
    p.setClipRect(gutter);
    for (int lane = firstLane; lane <= lastLane; ++lane) {
        const Events::Lane &l = t.lanes.at(lane);
        const QRect row = laneRect(lane);
        QFont font = p.font();
        font.setBold(l.depth == 0);
        p.setFont(font);
        p.setPen(palette().color(QPalette::Text));
        const int indent = 6 + l.depth * 14;
        const QFontMetrics lfm(font);
        // Pod names differ at their end: elide in the middle.
        p.drawText(QRect(indent, row.top(), m_gutter - indent - 4, rh), Qt::AlignVCenter | Qt::AlignLeft,
                   lfm.elidedText(l.title, Qt::ElideMiddle, m_gutter - indent - 4));
    }
    p.setClipping(false);
    p.setPen(palette().color(QPalette::Mid));
    p.drawLine(m_gutter, 0, m_gutter, all.height());
    p.drawLine(0, header - 1, all.width(), header - 1);
}

void TimelineView::wheelEvent(QWheelEvent *event)
{
    const QPoint delta = event->angleDelta();
    if (event->modifiers() & Qt::ControlModifier) {
        if (delta.y() != 0)
            zoomAbout(delta.y() > 0 ? ZoomStep : 1.0 / ZoomStep, int(event->position().x()));
        event->accept();
        return;
    }
    if (event->modifiers() & Qt::ShiftModifier) {
        m_fitting = false;
        horizontalScrollBar()->setValue(horizontalScrollBar()->value() - (delta.y() != 0 ? delta.y() : delta.x()));
        event->accept();
        return;
    }
    QAbstractItemView::wheelEvent(event);
}

void TimelineView::keyPressEvent(QKeyEvent *event)
{
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomIn();
        return;
    case Qt::Key_Minus:
        zoomOut();
        return;
    case Qt::Key_0:
        zoomToFit();
        return;
    case Qt::Key_Left:
    case Qt::Key_Right:
        if (event->modifiers() & Qt::ShiftModifier) {
            m_fitting = false;
            const int step = std::max(20, (viewport()->width() - m_gutter) / 5);
            horizontalScrollBar()->setValue(horizontalScrollBar()->value() + (event->key() == Qt::Key_Left ? -step : step));
            return;
        }
        break;
    default:
        break;
    }
    QAbstractItemView::keyPressEvent(event);
}

void TimelineView::mousePressEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton && !indexAt(event->position().toPoint()).isValid() && event->position().x() > m_gutter) {
        // Dragging the background pans.
        m_dragFrom = event->position().toPoint();
        m_dragScroll = horizontalScrollBar()->value();
    }
    QAbstractItemView::mousePressEvent(event);
}

void TimelineView::mouseMoveEvent(QMouseEvent *event)
{
    if (m_dragScroll >= 0 && (event->buttons() & Qt::LeftButton)) {
        m_fitting = false;
        horizontalScrollBar()->setValue(m_dragScroll - (event->position().toPoint().x() - m_dragFrom.x()));
        return;
    }
    QAbstractItemView::mouseMoveEvent(event);
}

void TimelineView::mouseReleaseEvent(QMouseEvent *event)
{
    m_dragScroll = -1;
    QAbstractItemView::mouseReleaseEvent(event);
}

void TimelineView::currentChanged(const QModelIndex &current, const QModelIndex &previous)
{
    QAbstractItemView::currentChanged(current, previous);
    viewport()->update();
    if (current.isValid() && hasFocus() && QAccessible::isActive()) {
        QAccessibleEvent focus(this, QAccessible::Focus);
        focus.setChild(current.row());
        QAccessible::updateAccessibility(&focus);
    }
}

} // namespace Starforge::Gui
