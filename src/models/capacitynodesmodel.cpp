#include "models/capacitynodesmodel.h"

#include "core/cluster/capacity.h"

#include <algorithm>

namespace Starforge::Models {

namespace {

// "1 GPU", "2 GPUs": the untranslated %n of tr() would say "2 GPU(s)".
QString gpus(qint64 n)
{
    return n == 1 ? CapacityNodesModel::tr("1 GPU") : CapacityNodesModel::tr("%1 GPUs").arg(n);
}

} // namespace

using Cluster::CapacityTracker;
using Cluster::NodeEntry;

CapacityNodesModel::CapacityNodesModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

CapacityNodesModel::~CapacityNodesModel() = default;

void CapacityNodesModel::setTracker(CapacityTracker *tracker)
{
    if (tracker == m_tracker)
        return;
    if (m_tracker)
        disconnect(m_tracker, nullptr, this, nullptr);
    removeAll();
    m_tracker = tracker;
    if (!tracker)
        return;
    connect(tracker, &CapacityTracker::nodeChanged, this, [this](const QString &name, const QString &) { onNodeChanged(name); });
    // Deleted while followed: its numbers are gone with it.
    connect(tracker, &QObject::destroyed, this, [this] {
        m_tracker = nullptr;
        removeAll();
    });
    QList<Row> rows;
    const Cluster::CapacityModel &model = tracker->model();
    for (const QString &series : model.seriesNames()) {
        for (const QString &name : model.nodesOf(series))
            rows << Row { series, name };
    }
    if (rows.isEmpty())
        return;
    beginInsertRows({}, 0, int(rows.size()) - 1);
    m_rows = std::move(rows);
    for (const Row &row : std::as_const(m_rows))
        m_seriesOf.insert(row.name, row.series);
    endInsertRows();
}

CapacityTracker *CapacityNodesModel::tracker() const
{
    return m_tracker.data();
}

void CapacityNodesModel::removeAll()
{
    if (m_rows.isEmpty())
        return;
    beginRemoveRows({}, 0, int(m_rows.size()) - 1);
    m_rows.clear();
    m_seriesOf.clear();
    endRemoveRows();
}

int CapacityNodesModel::positionOf(const Row &row) const
{
    return int(std::lower_bound(m_rows.cbegin(), m_rows.cend(), row) - m_rows.cbegin());
}

int CapacityNodesModel::rowOf(const QString &node) const
{
    const auto series = m_seriesOf.constFind(node);
    if (series == m_seriesOf.constEnd())
        return -1;
    const int at = positionOf(Row { *series, node });
    return at < m_rows.size() && m_rows.at(at).name == node ? at : -1;
}

QString CapacityNodesModel::nodeAt(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_rows.at(row).name : QString();
}

QString CapacityNodesModel::seriesAt(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_rows.at(row).series : QString();
}

void CapacityNodesModel::onNodeChanged(const QString &name)
{
    if (!m_tracker)
        return;
    const NodeEntry *entry = m_tracker->model().node(name);
    const QString series = entry ? entry->series : QString();
    const int row = rowOf(name);
    if (row >= 0) {
        if (entry && m_rows.at(row).series == series) {
            Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
            return;
        }
        beginRemoveRows({}, row, row);
        m_rows.removeAt(row);
        m_seriesOf.remove(name);
        endRemoveRows();
    }
    if (!entry || series.isEmpty())
        return;
    const Row added { series, name };
    const int at = positionOf(added);
    beginInsertRows({}, at, at);
    m_rows.insert(at, added);
    m_seriesOf.insert(name, series);
    endInsertRows();
}

const NodeEntry *CapacityNodesModel::entryAt(int row) const
{
    if (!m_tracker || row < 0 || row >= m_rows.size())
        return nullptr;
    return m_tracker->model().node(m_rows.at(row).name);
}

int CapacityNodesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int CapacityNodesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString CapacityNodesModel::blockReasonText(const NodeEntry &entry)
{
    const QString name = Cluster::blockName(entry.block);
    return entry.blockDetail.isEmpty() || name.isEmpty() ? name : tr("%1 (%2)").arg(name, entry.blockDetail);
}

QString CapacityNodesModel::toolTipText(const Cluster::CapacityModel &model, const QString &node, int maxPods)
{
    const NodeEntry *e = model.node(node);
    if (!e)
        return {};
    QStringList lines;
    lines << tr("%1 (%2)").arg(e->name, e->series.isEmpty() ? tr("no series") : e->series);
    if (e->allocatable == 0 && e->used == 0) {
        lines << tr("No GPUs");
    } else {
        lines << tr("%1 of %2 GPUs in use, %3 free").arg(e->used).arg(e->allocatable).arg(e->free());
    }
    if (!e->schedulable())
        lines << tr("Blocked: %1").arg(blockReasonText(*e));
    const QList<Cluster::NodePod> pods = model.podsOn(node);
    QStringList users;
    int others = 0;
    for (const Cluster::NodePod &pod : pods) {
        if (pod.gpus > 0)
            users << tr("%1/%2: %3").arg(pod.ns, pod.name, gpus(pod.gpus));
        else
            ++others;
    }
    if (users.isEmpty()) {
        lines << tr("No pod uses its GPUs");
    } else {
        lines << tr("Pods using its GPUs:");
        for (qsizetype i = 0; i < users.size() && i < maxPods; ++i)
            lines << QStringLiteral("  ") + users.at(i);
        if (users.size() > maxPods)
            lines << tr("  and %1 more").arg(users.size() - maxPods);
    }
    if (others > 0)
        lines << (others == 1 ? tr("1 more pod without GPUs") : tr("%1 more pods without GPUs").arg(others));
    return lines.join(u'\n');
}

QVariant CapacityNodesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const NodeEntry *e = entryAt(index.row());
    if (!e)
        return {};
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn:
            return e->name;
        case SeriesColumn:
            return e->series;
        case UsedColumn:
            return e->used;
        case AllocatableColumn:
            return e->allocatable;
        case PodsColumn:
            return e->pods;
        case StatusColumn:
            return e->schedulable() ? tr("schedulable") : blockReasonText(*e);
        }
        return {};
    case Qt::ToolTipRole:
        return toolTipText(m_tracker->model(), e->name);
    case Qt::AccessibleTextRole:
        return e->schedulable()
            ? tr("%1: %2 of %3 GPUs in use").arg(e->name).arg(e->used).arg(e->allocatable)
            : tr("%1: %2 of %3 GPUs in use, blocked: %4").arg(e->name).arg(e->used).arg(e->allocatable).arg(blockReasonText(*e));
    case NameRole:
        return e->name;
    case SeriesRole:
        return e->series;
    case UsedRole:
        return e->used;
    case AllocatableRole:
        return e->allocatable;
    case FreeRole:
        return e->free();
    case PodsRole:
        return e->pods;
    case LoadRole:
        return e->allocatable > 0 ? std::clamp(double(e->used) / e->allocatable, 0.0, 1.0) : (e->used > 0 ? 1.0 : -1.0);
    case BlockedRole:
        return !e->schedulable();
    case BlockReasonRole:
        return blockReasonText(*e);
    case PodListRole: {
        QStringList out;
        for (const Cluster::NodePod &pod : m_tracker->model().podsOn(e->name))
            out << tr("%1/%2 (%3)").arg(pod.ns, pod.name, gpus(pod.gpus));
        return out;
    }
    }
    return {};
}

QVariant CapacityNodesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NameColumn:
        return tr("Node");
    case SeriesColumn:
        return tr("Series");
    case UsedColumn:
        return tr("GPUs used");
    case AllocatableColumn:
        return tr("GPUs");
    case PodsColumn:
        return tr("Pods");
    case StatusColumn:
        return tr("Status");
    }
    return {};
}

Qt::ItemFlags CapacityNodesModel::flags(const QModelIndex &index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
}

} // namespace Starforge::Models
