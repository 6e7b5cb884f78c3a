#include "models/timelinemodel.h"

#include "models/tones.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QLocale>

namespace Starforge::Models {

TimelineModel::TimelineModel(QObject *parent)
    : QAbstractTableModel(parent)
{
}

void TimelineModel::setTimeline(const Events::Timeline &timeline, const QStringList &evidence)
{
    const QSet<QString> newEvidence(evidence.cbegin(), evidence.cend());
    const auto &oldItems = m_timeline.items;
    const auto &newItems = timeline.items;
    bool prefix = !oldItems.isEmpty() && newItems.size() >= oldItems.size();
    for (qsizetype i = 0; prefix && i < oldItems.size(); ++i)
        prefix = oldItems.at(i).key() == newItems.at(i).key();
    if (!prefix) {
        beginResetModel();
        m_timeline = timeline;
        m_evidence = newEvidence;
        indexKeys();
        endResetModel();
        Q_EMIT layoutOfTimelineChanged();
        return;
    }
    const int oldCount = int(oldItems.size());
    const int newCount = int(newItems.size());
    // First the rows there were, as they are now (lanes may have been added above them), then
    // the new rows: a view sees each step on its own.
    Events::Timeline updated = timeline;
    updated.items.resize(oldCount);
    m_timeline = updated;
    m_evidence = newEvidence;
    indexKeys();
    Q_EMIT dataChanged(index(0, 0), index(oldCount - 1, ColumnCount - 1));
    if (newCount > oldCount) {
        beginInsertRows({}, oldCount, newCount - 1);
        m_timeline.items = timeline.items;
        indexKeys();
        endInsertRows();
    }
    Q_EMIT layoutOfTimelineChanged();
}

void TimelineModel::indexKeys()
{
    m_rowOfKey.clear();
    m_rowOfKey.reserve(m_timeline.items.size());
    m_evidenceRows.fill(false, m_timeline.items.size());
    for (int row = 0; row < m_timeline.items.size(); ++row) {
        const QString key = m_timeline.items.at(row).key();
        m_rowOfKey.insert(key, row);
        m_evidenceRows[row] = m_evidence.contains(key);
    }
}

bool TimelineModel::isEvidence(int row) const
{
    return row >= 0 && row < m_evidenceRows.size() && m_evidenceRows.at(row);
}

int TimelineModel::rowOfKey(const QString &key) const
{
    return m_rowOfKey.value(key, -1);
}

QString TimelineModel::describe(const Events::TimelineItem &item, const Events::Lane &lane)
{
    const QLocale locale;
    const auto when = [&locale](const QDateTime &t) { return locale.toString(t.toLocalTime(), QLocale::ShortFormat); };
    QString text = tr("%1 %2 on %3").arg(item.event.type, item.event.reason, lane.title);
    if (item.isSpan())
        text += tr(", seen %n times from %1 to %2", nullptr, item.event.count).arg(when(item.start), when(item.end));
    else
        text += tr(", at %1").arg(when(item.end));
    text += QStringLiteral(": ") + item.event.message;
    if (!item.event.reportingComponent.isEmpty())
        text += tr(" (reported by %1)").arg(item.event.reportingComponent);
    return text;
}

int TimelineModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_timeline.items.size());
}

int TimelineModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TimelineModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Events::TimelineItem &item = m_timeline.items.at(index.row());
    const Events::Lane &lane = m_timeline.lanes.at(item.lane);
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case TimeColumn: return QLocale().toString(item.end.toLocalTime().time(), QStringLiteral("HH:mm:ss"));
        case ObjectColumn: return lane.title;
        case TypeColumn: return item.event.type;
        case ReasonColumn: return item.event.reason;
        case CountColumn: return item.event.count;
        case MessageColumn: return item.event.message.simplified();
        }
        return {};
    case SortRole:
        switch (index.column()) {
        case TimeColumn: return item.end.toMSecsSinceEpoch();
        case CountColumn: return item.event.count;
        default: return data(index, Qt::DisplayRole);
        }
    case Qt::ToolTipRole:
    case Qt::AccessibleDescriptionRole:
        return describe(item, lane);
    case Qt::AccessibleTextRole:
        return tr("%1 %2 on %3").arg(item.event.type, item.event.reason, lane.title);
    case Qt::TextAlignmentRole:
        return index.column() == CountColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    case Qt::FontRole:
        if (isEvidence(index.row())) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        return {};
    case Qt::ForegroundRole:
        // Warnings stand out in the list as on the axis (the same colour the view uses).
        return item.warning() && index.column() <= ReasonColumn ? QBrush(Tones::text(Tones::Tone::Error)) : QVariant();
    case LaneRole: return item.lane;
    case StartRole: return item.start;
    case EndRole: return item.end;
    case WarningRole: return item.warning();
    case EvidenceRole: return isEvidence(index.row());
    case KeyRole: return item.key();
    }
    return {};
}

QVariant TimelineModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case TimeColumn: return tr("Last seen");
    case ObjectColumn: return tr("Object");
    case TypeColumn: return tr("Type");
    case ReasonColumn: return tr("Reason");
    case CountColumn: return tr("Count");
    case MessageColumn: return tr("Message");
    }
    return {};
}

} // namespace Starforge::Models
