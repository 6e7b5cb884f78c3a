#include "models/jobpodsmodel.h"

#include "core/cluster/diagnosis.h"
#include "core/kube/resources.h"

#include <QHash>
#include <QSet>

#include <algorithm>

namespace Starforge::Models {

JobPodsModel::JobPodsModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

QString JobPodsModel::phaseText(const QJsonObject &pod)
{
    const Kube::Pod p = Kube::Pod::fromJson(pod);
    const QString phase = p.phase.isEmpty() ? tr("Pending") : p.phase;
    // A container that waits or has ended says more than the phase (init containers first).
    for (const QList<Kube::ContainerState> *containers : { &p.initContainers, &p.containers }) {
        for (const Kube::ContainerState &c : *containers) {
            if (c.state == u"waiting" && !c.reason.isEmpty() && c.reason != u"PodInitializing")
                return tr("Waiting: %1").arg(c.reason);
            if (c.state == u"terminated" && c.exitCode != 0 && p.phase != u"Running")
                return c.reason.isEmpty() || c.reason == u"Error" ? tr("%1: exit code %2").arg(phase).arg(c.exitCode)
                                                                   : tr("%1: %2, exit code %3").arg(phase, c.reason).arg(c.exitCode);
        }
    }
    if (const auto scheduled = p.condition(QStringLiteral("PodScheduled")); scheduled && !scheduled->isTrue() && !scheduled->reason.isEmpty())
        return tr("%1: %2").arg(phase, scheduled->reason);
    return phase;
}

JobPodsModel::Row JobPodsModel::rowOf(const QJsonObject &pod)
{
    const Kube::Pod p = Kube::Pod::fromJson(pod);
    Row row;
    row.name = p.name;
    row.role = Cluster::PodInfo::fromJson(pod).role();
    row.phase = phaseText(pod);
    row.node = p.nodeName;
    for (const Kube::ContainerState &c : p.containers) {
        row.restarts += c.restartCount;
        if (row.detail.isEmpty() && !c.message.isEmpty())
            row.detail = c.message;
    }
    if (const auto scheduled = p.condition(QStringLiteral("PodScheduled")); row.detail.isEmpty() && scheduled && !scheduled->isTrue())
        row.detail = scheduled->message;
    row.created = QDateTime::fromString(pod.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("creationTimestamp")).toString(), Qt::ISODate);
    return row;
}

void JobPodsModel::setPods(const QList<QJsonObject> &pods)
{
    QHash<QString, Row> incoming;
    for (const QJsonObject &pod : pods) {
        Row row = rowOf(pod);
        if (!row.name.isEmpty())
            incoming.insert(row.name, std::move(row));
    }
    // Gone first, from the bottom up so the rows above keep their numbers.
    for (int i = int(m_rows.size()) - 1; i >= 0; --i) {
        if (incoming.contains(m_rows.at(i).name))
            continue;
        beginRemoveRows({}, i, i);
        m_rows.removeAt(i);
        endRemoveRows();
    }
    const auto before = [](const Row &a, const Row &b) { return a.created != b.created ? a.created < b.created : a.name < b.name; };
    for (int i = 0; i < m_rows.size(); ++i) {
        Row &row = m_rows[i];
        Row next = incoming.take(row.name);
        next.created = row.created;   // the order stays as it was
        if (next.role != row.role || next.phase != row.phase || next.detail != row.detail || next.node != row.node || next.restarts != row.restarts) {
            row = std::move(next);
            Q_EMIT dataChanged(index(i, 0), index(i, ColumnCount - 1));
        }
    }
    QList<Row> added = incoming.values();
    std::sort(added.begin(), added.end(), before);
    for (Row &row : added) {
        const int at = int(std::upper_bound(m_rows.cbegin(), m_rows.cend(), row, before) - m_rows.cbegin());
        beginInsertRows({}, at, at);
        m_rows.insert(at, std::move(row));
        endInsertRows();
    }
}

int JobPodsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int JobPodsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant JobPodsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &row = m_rows.at(index.row());
    if (role == Qt::DisplayRole) {
        switch (static_cast<Column>(index.column())) {
        case NameColumn:
            return row.name;
        case RoleColumn:
            return row.role;
        case PhaseColumn:
            return row.phase;
        case NodeColumn:
            return row.node.isEmpty() ? tr("not scheduled") : row.node;
        case RestartsColumn:
            return row.restarts;
        case ColumnCount:
            break;
        }
    }
    if (role == Qt::ToolTipRole && index.column() == PhaseColumn && !row.detail.isEmpty())
        return row.detail;
    if (role == Qt::TextAlignmentRole && index.column() == RestartsColumn)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant JobPodsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (static_cast<Column>(section)) {
    case NameColumn:
        return tr("Pod");
    case RoleColumn:
        return tr("Role");
    case PhaseColumn:
        return tr("Phase");
    case NodeColumn:
        return tr("Node");
    case RestartsColumn:
        return tr("Restarts");
    case ColumnCount:
        break;
    }
    return {};
}

} // namespace Starforge::Models
