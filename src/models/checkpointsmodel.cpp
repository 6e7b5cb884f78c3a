#include "models/checkpointsmodel.h"

#include <algorithm>

namespace Starforge::Models {

CheckpointsModel::CheckpointsModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

void CheckpointsModel::setCheckpoints(const QList<Job::ServableCheckpoint> &checkpoints)
{
    if (checkpoints == m_rows) return;
    const bool grows = checkpoints.size() > m_rows.size() && std::equal(m_rows.cbegin(), m_rows.cend(), checkpoints.cbegin());
    if (grows) {
        beginInsertRows({}, int(m_rows.size()), int(checkpoints.size()) - 1);
        m_rows = checkpoints;
        endInsertRows();
        return;
    }
    beginResetModel();
    m_rows = checkpoints;
    endResetModel();
}

QString CheckpointsModel::chatText(const Job::ServableCheckpoint &checkpoint)
{
    if (checkpoint.consolidated) return tr("Ready to chat");
    if (!checkpoint.converter.isEmpty()) return tr("Convert first: %1").arg(checkpoint.converter);
    return tr("No Hugging Face weights");
}

int CheckpointsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int CheckpointsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant CheckpointsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const Job::ServableCheckpoint &c = m_rows.at(index.row());
    switch (role) {
    case CheckpointPathRole: return c.path;
    case TokenizerPathRole: return c.tokenizerPath;
    case ChatReadyRole: return c.consolidated;
    case Qt::DisplayRole:
        switch (index.column()) {
        case StepColumn: return c.step;
        case ChatColumn: return chatText(c);
        case BackendColumn: return c.backend;
        case PathColumn: return c.path;
        default: return {};
        }
    case Qt::ToolTipRole:
        if (index.column() == PathColumn || index.column() == ChatColumn) {
            return c.consolidated ? tr("Serve %1 with the tokenizer %2").arg(c.path, c.tokenizerPath)
                                  : tr("%1 wrote no consolidated model for step %2. %3").arg(c.backend).arg(c.step).arg(chatText(c));
        }
        return {};
    case Qt::AccessibleTextRole:
        return tr("Step %1, %2, %3").arg(c.step).arg(chatText(c), c.path);
    case Qt::TextAlignmentRole:
        return index.column() == StepColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    default:
        return {};
    }
}

QVariant CheckpointsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case StepColumn: return tr("Step");
    case ChatColumn: return tr("Chat");
    case BackendColumn: return tr("Backend");
    case PathColumn: return tr("Path");
    default: return {};
    }
}

} // namespace Starforge::Models
