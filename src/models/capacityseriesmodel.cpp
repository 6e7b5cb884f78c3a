#include "models/capacityseriesmodel.h"

#include "core/cluster/capacity.h"

#include <algorithm>

namespace Starforge::Models {

using Cluster::CapacityTracker;
using Cluster::SeriesSummary;

CapacitySeriesModel::CapacitySeriesModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

CapacitySeriesModel::~CapacitySeriesModel() = default;

void CapacitySeriesModel::setTracker(CapacityTracker *tracker)
{
    if (tracker == m_tracker)
        return;
    if (m_tracker)
        disconnect(m_tracker, nullptr, this, nullptr);
    removeAll();
    m_tracker = tracker;
    if (!tracker)
        return;
    connect(tracker, &CapacityTracker::nodeChanged, this, [this](const QString &, const QString &series) { onSeriesChanged(series); });
    connect(tracker, &CapacityTracker::demandChanged, this, &CapacitySeriesModel::onSeriesChanged);
    connect(tracker, &QObject::destroyed, this, [this] {
        m_tracker = nullptr;
        removeAll();
    });
    QStringList names = tracker->model().seriesNames() + tracker->model().pendingSeries();
    names.sort();
    names.removeDuplicates();
    if (names.isEmpty())
        return;
    beginInsertRows({}, 0, int(names.size()) - 1);
    m_series = names;
    endInsertRows();
}

CapacityTracker *CapacitySeriesModel::tracker() const
{
    return m_tracker.data();
}

void CapacitySeriesModel::removeAll()
{
    if (m_series.isEmpty())
        return;
    beginRemoveRows({}, 0, int(m_series.size()) - 1);
    m_series.clear();
    endRemoveRows();
}

bool CapacitySeriesModel::present(const QString &series) const
{
    if (!m_tracker || series.isEmpty())
        return false;
    const SeriesSummary s = m_tracker->model().series(series);
    return s.nodes > 0 || s.pendingPods > 0;
}

int CapacitySeriesModel::rowOf(const QString &series) const
{
    const auto it = std::lower_bound(m_series.cbegin(), m_series.cend(), series);
    return it != m_series.cend() && *it == series ? int(it - m_series.cbegin()) : -1;
}

void CapacitySeriesModel::onSeriesChanged(const QString &series)
{
    if (series.isEmpty())
        return; // unlabelled nodes are in no series
    const int row = rowOf(series);
    const bool shown = present(series);
    if (row >= 0 && shown) {
        Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
    } else if (row >= 0) {
        beginRemoveRows({}, row, row);
        m_series.removeAt(row);
        endRemoveRows();
    } else if (shown) {
        const int at = int(std::lower_bound(m_series.cbegin(), m_series.cend(), series) - m_series.cbegin());
        beginInsertRows({}, at, at);
        m_series.insert(at, series);
        endInsertRows();
    } else {
        return;
    }
    Q_EMIT seriesChanged(series);
}

int CapacitySeriesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_series.size());
}

int CapacitySeriesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CapacitySeriesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid) || !m_tracker)
        return {};
    const QString &name = m_series.at(index.row());
    const SeriesSummary s = m_tracker->model().series(name);
    if (role == SeriesRole)
        return name;
    if (role == SummaryRole)
        return QVariant::fromValue(s);
    const auto value = [&]() -> qint64 {
        switch (index.column()) {
        case NodesColumn:
            return s.nodes;
        case CapacityColumn:
            return s.capacity;
        case UsedColumn:
            return s.used;
        case FreeColumn:
            return s.free;
        case BlockedColumn:
            return s.blocked;
        case LargestFreeColumn:
            return s.largestFree;
        case PendingColumn:
            return s.pendingGpus;
        case FitsNowColumn:
            return qint64(s.fitNowNodes) * s.fitNowGpusPerNode;
        }
        return 0;
    };
    switch (role) {
    case ValueRole:
        return index.column() == SeriesColumn ? QVariant(name) : QVariant(value());
    case Qt::DisplayRole:
        switch (index.column()) {
        case SeriesColumn:
            return name;
        case NodesColumn:
            return s.blockedNodes > 0 ? tr("%1 (%2 blocked)").arg(s.nodes).arg(s.blockedNodes) : QString::number(s.nodes);
        case PendingColumn:
            if (s.pendingPods == 0)
                return QStringLiteral("0");
            return s.pendingPods == 1 ? tr("%1 (1 pod)").arg(s.pendingGpus) : tr("%1 (%2 pods)").arg(s.pendingGpus).arg(s.pendingPods);
        case FitsNowColumn:
            return s.fitNowNodes > 0 ? tr("%1 × %2").arg(s.fitNowNodes).arg(s.fitNowGpusPerNode) : tr("none");
        default:
            return QString::number(value());
        }
    case Qt::ToolTipRole:
        switch (index.column()) {
        case NodesColumn:
            return tr("Nodes labelled %1; blocked: cordoned, not ready or tainted").arg(name);
        case CapacityColumn:
            return tr("Allocatable GPUs of all its nodes");
        case UsedColumn:
            return tr("GPUs requested by the pods bound to its nodes");
        case FreeColumn:
            return tr("Unused GPUs on schedulable nodes");
        case BlockedColumn:
            return tr("Unused GPUs on cordoned, not ready or tainted nodes");
        case LargestFreeColumn:
            return tr("The most free GPUs on one schedulable node");
        case PendingColumn:
            return tr("GPUs asked by Pending pods that wait for %1 (not yet bound to a node)").arg(name);
        case FitsNowColumn:
            return s.fitNowNodes > 0 ? tr("The largest job that fits now: %1 × %2 GPUs (nodes × GPUs per node), %3 GPUs in all")
                                           .arg(s.fitNowNodes)
                                           .arg(s.fitNowGpusPerNode)
                                           .arg(qint64(s.fitNowNodes) * s.fitNowGpusPerNode)
                                     : tr("No job fits now: no schedulable node has a free GPU");
        }
        return {};
    case Qt::TextAlignmentRole:
        return index.column() == SeriesColumn ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    return {};
}

QVariant CapacitySeriesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case SeriesColumn:
        return tr("Series");
    case NodesColumn:
        return tr("Nodes");
    case CapacityColumn:
        return tr("GPUs");
    case UsedColumn:
        return tr("Used");
    case FreeColumn:
        return tr("Free");
    case BlockedColumn:
        return tr("Blocked");
    case LargestFreeColumn:
        return tr("Largest free");
    case PendingColumn:
        return tr("Pending");
    case FitsNowColumn:
        return tr("Fits now");
    }
    return {};
}

Qt::ItemFlags CapacitySeriesModel::flags(const QModelIndex &index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
}

} // namespace Starforge::Models
