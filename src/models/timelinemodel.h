#pragma once

// One job's timeline (Events::Timeline) as a table of its events, in time order: when, the lane
// (object) it is on, type, reason, count and message. The Events panel's TimelineView paints the
// same rows on the time axis (reading lanes and phases from timeline()) and its list shows them
// sortable and filterable; the two share this model, so a row is one event in both.
//
// A new timeline for the same job is applied as the difference when it can be (the same events:
// dataChanged; new events after the old ones: rows inserted), so views keep their selection
// while a live job's events arrive; anything else resets.

#include "core/events/timeline.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QSet>

namespace Starforge::Models {

class TimelineModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { TimeColumn, ObjectColumn, TypeColumn, ReasonColumn, CountColumn, MessageColumn, ColumnCount };
    Q_ENUM(Column)
    enum Role {
        LaneRole = Qt::UserRole + 1,   // int: the lane in timeline().lanes
        StartRole,                     // QDateTime: first seen
        EndRole,                       // QDateTime: last seen
        WarningRole,                   // bool
        EvidenceRole,                  // bool: the diagnosis names this event as evidence
        KeyRole,                       // QString: "ns/name" of the event object
        SortRole,                      // what the list sorts on (times as msecs, counts as numbers)
    };

    explicit TimelineModel(QObject *parent = nullptr);

    // The timeline and the keys ("ns/name") of the events the diagnosis gives as its evidence.
    void setTimeline(const Events::Timeline &timeline, const QStringList &evidence = {});
    void clear() { setTimeline({}); }
    const Events::Timeline &timeline() const { return m_timeline; }
    const Events::TimelineItem &itemAt(int row) const { return m_timeline.items.at(row); }
    bool isEvidence(int row) const;
    int rowOfKey(const QString &key) const;

    // The whole event as a person reads it (the tooltip and the accessible description).
    static QString describe(const Events::TimelineItem &item, const Events::Lane &lane);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

Q_SIGNALS:
    // Lanes, phases or the axis changed (views lay out again); rows are signalled as usual.
    void layoutOfTimelineChanged();

private:
    void indexKeys();

    Events::Timeline m_timeline;
    QSet<QString> m_evidence;
    QHash<QString, int> m_rowOfKey;
    QList<bool> m_evidenceRows;   // per row: painted thousands of times a second, so not by key
};

} // namespace Starforge::Models
