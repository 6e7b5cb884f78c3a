#pragma once

// The owner's playground pods as a table (docs/playground.md, "The panel"): the pod, the name
// clients ask for, where it runs, its state, and the time left before the cluster ends it. The
// list is replaced whole from each PlaygroundClient::list(); rows are matched by pod name so a
// view keeps its selection across refreshes. The countdown moves with setNow(), once a second
// from the panel, and only that column changes then.

#include "core/playground/playgroundclient.h"

#include <QAbstractTableModel>
#include <QDateTime>
#include <QList>

namespace Starforge::Models {

class PlaygroundPodsModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { PodColumn, ModelColumn, GpusColumn, StateColumn, TimeLeftColumn, ColumnCount };
    Q_ENUM(Column)
    enum Role {
        PodNameRole = Qt::UserRole + 1,
        ServedNameRole,
        ReadyRole,          // bool: /health answers, a chat can start
        SecondsLeftRole,    // qint64, negative once expired
        SoonRole,           // bool: less than ten minutes left
    };

    explicit PlaygroundPodsModel(QObject *parent = nullptr);

    void setInstances(const QList<Playground::PlaygroundInstance> &instances);
    const QList<Playground::PlaygroundInstance> &instances() const { return m_rows; }
    std::optional<Playground::PlaygroundInstance> instance(const QString &pod) const;
    int rowOf(const QString &pod) const;
    void setNow(const QDateTime &now);

    // "1 h 12 min", "8 min", "45 s", "expired".
    static QString timeLeftText(qint64 seconds);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    qint64 secondsLeft(const Playground::PlaygroundInstance &instance) const;

    QList<Playground::PlaygroundInstance> m_rows;
    QDateTime m_now = QDateTime::currentDateTimeUtc();
};

} // namespace Starforge::Models
