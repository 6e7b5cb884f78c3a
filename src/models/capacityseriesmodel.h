#pragma once

// The capacity heatmap's per-series totals: one row per GPU series that has labelled nodes or
// pods waiting for it, sorted by name, with the CapacityModel's SeriesSummary as columns (nodes,
// capacity, used, free, blocked, largest free node, pending demand, largest job that fits now).
// The numbers are the capacity engine's, read when asked; the model follows the tracker's
// nodeChanged and demandChanged per series: a series that appears is inserted, one that is
// left with no node and no demand is removed, any other change is a dataChanged of its row.

#include <QAbstractTableModel>
#include <QPointer>
#include <QStringList>

namespace Starforge::Cluster {
class CapacityTracker;
}

namespace Starforge::Models {

class CapacitySeriesModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        SeriesColumn,
        NodesColumn,
        CapacityColumn,
        UsedColumn,
        FreeColumn,
        BlockedColumn,
        LargestFreeColumn,
        PendingColumn,
        FitsNowColumn,
        ColumnCount
    };
    Q_ENUM(Column)

    enum Role {
        SeriesRole = Qt::UserRole + 1, // QString
        SummaryRole, // Cluster::SeriesSummary
        ValueRole, // per column, the number (qint64) behind the text
    };
    Q_ENUM(Role)

    explicit CapacitySeriesModel(QObject *parent = nullptr);
    ~CapacitySeriesModel() override;

    void setTracker(Cluster::CapacityTracker *tracker);
    Cluster::CapacityTracker *tracker() const;

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;

    int rowOf(const QString &series) const;
    QStringList seriesNames() const { return m_series; }

Q_SIGNALS:
    // A row's numbers changed (also after inserts and removes): a summary line follows.
    void seriesChanged(const QString &series);

private:
    void onSeriesChanged(const QString &series);
    void removeAll();
    bool present(const QString &series) const;

    QPointer<Cluster::CapacityTracker> m_tracker;
    QStringList m_series; // sorted
};

} // namespace Starforge::Models
