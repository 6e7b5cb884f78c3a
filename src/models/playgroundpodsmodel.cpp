#include "models/playgroundpodsmodel.h"

#include "models/tones.h"

#include <QBrush>
#include <QColor>

namespace Starforge::Models {

namespace {
constexpr qint64 SoonSeconds = 10 * 60;
}

PlaygroundPodsModel::PlaygroundPodsModel(QObject *parent) : QAbstractTableModel(parent) {}

void PlaygroundPodsModel::setInstances(const QList<Playground::PlaygroundInstance> &instances)
{
    // Rows that went away, then rows that stayed (changed in place), then new ones at the end:
    // the order the cluster returns them in is not worth losing a selection over.
    for (int row = int(m_rows.size()) - 1; row >= 0; --row) {
        const QString name = m_rows.at(row).name;
        const bool kept = std::any_of(instances.cbegin(), instances.cend(), [&](const Playground::PlaygroundInstance &i) { return i.name == name; });
        if (kept) continue;
        beginRemoveRows({}, row, row);
        m_rows.removeAt(row);
        endRemoveRows();
    }
    for (const Playground::PlaygroundInstance &i : instances) {
        const int row = rowOf(i.name);
        if (row >= 0) {
            m_rows[row] = i;
            Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
            continue;
        }
        beginInsertRows({}, int(m_rows.size()), int(m_rows.size()));
        m_rows.append(i);
        endInsertRows();
    }
}

std::optional<Playground::PlaygroundInstance> PlaygroundPodsModel::instance(const QString &pod) const
{
    const int row = rowOf(pod);
    return row >= 0 ? std::optional(m_rows.at(row)) : std::nullopt;
}

int PlaygroundPodsModel::rowOf(const QString &pod) const
{
    for (int row = 0; row < m_rows.size(); ++row) {
        if (m_rows.at(row).name == pod) return row;
    }
    return -1;
}

void PlaygroundPodsModel::setNow(const QDateTime &now)
{
    m_now = now;
    if (!m_rows.isEmpty()) Q_EMIT dataChanged(index(0, TimeLeftColumn), index(int(m_rows.size()) - 1, TimeLeftColumn));
}

QString PlaygroundPodsModel::timeLeftText(qint64 seconds)
{
    if (seconds <= 0) return tr("expired");
    if (seconds < 60) return tr("%1 s").arg(seconds);
    const qint64 minutes = seconds / 60;
    if (minutes < 60) return tr("%1 min").arg(minutes);
    return tr("%1 h %2 min").arg(minutes / 60).arg(minutes % 60);
}

qint64 PlaygroundPodsModel::secondsLeft(const Playground::PlaygroundInstance &instance) const
{
    return instance.expiresAt.isValid() ? m_now.secsTo(instance.expiresAt) : 0;
}

int PlaygroundPodsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int PlaygroundPodsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant PlaygroundPodsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
    const Playground::PlaygroundInstance &i = m_rows.at(index.row());
    const qint64 left = secondsLeft(i);
    switch (role) {
    case PodNameRole: return i.name;
    case ServedNameRole: return i.servedName;
    case ReadyRole: return i.ready && !i.ended();
    case SecondsLeftRole: return left;
    case SoonRole: return !i.ended() && left < SoonSeconds;
    case Qt::DisplayRole:
        switch (index.column()) {
        case PodColumn: return i.name;
        case ModelColumn: return i.servedName.isEmpty() ? i.model : i.servedName;
        case GpusColumn: return tr("%1 × %2").arg(i.gpus).arg(i.series);
        case StateColumn: return i.stateText();
        case TimeLeftColumn: return i.ended() ? QString() : timeLeftText(left);
        }
        break;
    case Qt::ToolTipRole:
        switch (index.column()) {
        case ModelColumn: return i.model;
        case TimeLeftColumn:
            return tr("The cluster ends the pod at %1 (activeDeadlineSeconds), whether or not the app runs.")
                .arg(QLocale().toString(i.expiresAt.toLocalTime(), QLocale::ShortFormat));
        }
        break;
    case Qt::ForegroundRole:
        // The text's colour says it too ("waiting: …", the minutes), so colour is not the only cue.
        if (index.column() == TimeLeftColumn && !i.ended() && left < SoonSeconds) return QBrush(Tones::text(Tones::Tone::Warning));
        if (index.column() == StateColumn && i.phase == QLatin1String("Pending") && !i.reason.isEmpty()) return QBrush(Tones::text(Tones::Tone::Warning));
        break;
    case Qt::AccessibleDescriptionRole:
        if (index.column() == StateColumn) return i.ready ? tr("ready to chat") : i.stateText();
        break;
    }
    return {};
}

QVariant PlaygroundPodsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case PodColumn: return tr("Pod");
    case ModelColumn: return tr("Model");
    case GpusColumn: return tr("GPUs");
    case StateColumn: return tr("State");
    case TimeLeftColumn: return tr("Time left");
    }
    return {};
}

} // namespace Starforge::Models
