#pragma once

// The capacity heatmap's nodes: one row per node of a labelled GPU series, ordered by series
// and then by name, so each series is one contiguous run of rows (a band of the heatmap).
// Every number is read from the CapacityTracker's CapacityModel when asked (docs/cluster.md,
// "Capacity"): the model keeps only the order of the rows, and follows the tracker's
// nodeChanged signal per node, so a node that comes is inserted, one that goes (or leaves the
// labelled series) is removed, and any other change is a dataChanged of its row. It never
// resets: a view keeps its current cell and scroll position while the cluster changes.
//
// Nodes without the series label are left out, as the capacity engine leaves them out of every
// series; a CPU-only node with the label is a row with no GPUs.

#include <QAbstractTableModel>
#include <QHash>
#include <QPointer>

namespace Starforge::Cluster {
class CapacityTracker;
class CapacityModel;
struct NodeEntry;
} // namespace Starforge::Cluster

namespace Starforge::Models {

class CapacityNodesModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { NameColumn, SeriesColumn, UsedColumn, AllocatableColumn, PodsColumn, StatusColumn, ColumnCount };
    Q_ENUM(Column)

    enum Role {
        NameRole = Qt::UserRole + 1, // QString
        SeriesRole, // QString
        UsedRole, // qint64: GPUs requested by the pods on it
        AllocatableRole, // int
        FreeRole, // int: free GPUs (0 on a blocked node)
        PodsRole, // int: pods counted on it
        LoadRole, // double: used / allocatable, clamped to [0, 1]; -1 without GPUs
        BlockedRole, // bool: cordoned, not ready or tainted
        BlockReasonRole, // QString: "cordoned", "not ready (KubeletNotReady)", "tainted (k=v:NoSchedule)"
        PodListRole, // QStringList: "namespace/name (N GPUs)", most GPUs first
    };
    Q_ENUM(Role)

    explicit CapacityNodesModel(QObject *parent = nullptr);
    ~CapacityNodesModel() override;

    // Follows tracker (nullptr: none; the rows go). The tracker may be deleted while followed.
    void setTracker(Cluster::CapacityTracker *tracker);
    Cluster::CapacityTracker *tracker() const;

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;

    // -1 when no row has that node.
    int rowOf(const QString &node) const;
    QString nodeAt(int row) const;
    QString seriesAt(int row) const;

    // The tooltip of a node: its name and series, GPUs in use of allocatable, why it is
    // blocked, and the pods that use its GPUs (at most maxPods named, then "and N more").
    static QString toolTipText(const Cluster::CapacityModel &model, const QString &node, int maxPods = 12);
    static QString blockReasonText(const Cluster::NodeEntry &entry);

private:
    struct Row
    {
        QString series;
        QString name;
        bool operator<(const Row &other) const { return series != other.series ? series < other.series : name < other.name; }
    };

    void onNodeChanged(const QString &name);
    void removeAll();
    int positionOf(const Row &row) const; // lower bound
    const Cluster::NodeEntry *entryAt(int row) const;

    QPointer<Cluster::CapacityTracker> m_tracker;
    QList<Row> m_rows;
    QHash<QString, QString> m_seriesOf; // node -> the series its row is under
};

} // namespace Starforge::Models
