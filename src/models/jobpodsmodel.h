#pragma once

// One job's pods for the job detail: name, role (head, worker <group>, submitter), phase with
// what holds it (Unschedulable, ImagePullBackOff, OOMKilled, an exit code), node and restarts.
// Fed whole lists of pod objects (a live snapshot, or an archive's objects.json); each list is
// applied as the difference from the last (insert, remove, dataChanged), so a view keeps its
// selection and scroll position while the job's pods come and go. Rows are in creation order.

#include <QAbstractTableModel>
#include <QDateTime>
#include <QJsonObject>
#include <QList>

namespace Starforge::Models {

class JobPodsModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { NameColumn, RoleColumn, PhaseColumn, NodeColumn, RestartsColumn, ColumnCount };
    Q_ENUM(Column)

    explicit JobPodsModel(QObject *parent = nullptr);

    // The job's pods now (Kubernetes Pod objects); those not in the list go.
    void setPods(const QList<QJsonObject> &pods);
    void clear() { setPods({}); }

    // "Running", "Pending: Unschedulable", "Waiting: ImagePullBackOff", "Failed: exit code 1",
    // "Succeeded": the phase and, when a container or a condition says why, the reason.
    static QString phaseText(const QJsonObject &pod);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row
    {
        QString name;
        QString role;
        QString phase;
        QString detail;   // the container's or condition's message, for the tooltip
        QString node;
        int restarts = 0;
        QDateTime created;
    };
    static Row rowOf(const QJsonObject &pod);

    QList<Row> m_rows;
};

} // namespace Starforge::Models
