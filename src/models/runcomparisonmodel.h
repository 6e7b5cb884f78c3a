#pragma once

// Several runs' training progress side by side (docs/jobs.md, "Comparing runs"): each run's
// STARFORGE_PROGRESS points (from the live follower, or an archived job's driver log) as rows of
// one table: the run, the step, the wall time (the sum of "Total step time" up to that step,
// when the runner reports it) and one column per metric any run has. The plot draws its
// series from here; the table is what CSV export writes, a row per run and step.

#include "core/job/progress.h"

#include <QAbstractTableModel>
#include <QList>
#include <QPointF>
#include <QStringList>

namespace Starforge::Models {

class RunComparisonModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum FixedColumn { RunColumn, StepColumn, WallTimeColumn, FirstMetricColumn };
    enum class Axis { Step, WallTime };

    struct Run
    {
        QString jobId;
        QString label;                      // "grpo-math-x7k2pq"
        QList<Job::ProgressPoint> points;
    };

    explicit RunComparisonModel(QObject *parent = nullptr);

    // Adds the run, or replaces the one with its job id.
    void setRun(const QString &jobId, const QString &label, const Job::JobProgress &progress);
    void removeRun(const QString &jobId);
    const QList<Run> &runs() const { return m_runs; }
    // Every metric any run has, Loss first, then by name.
    QStringList metrics() const { return m_metrics; }

    // A run's points of a metric against the axis; NaN values and, on the wall-time axis, steps
    // without a time are left out.
    QList<QPointF> series(const QString &jobId, const QString &metric, Axis axis) const;

    // The table as CSV (RFC 4180: a header row, fields with commas or quotes quoted).
    QString toCsv() const;

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row
    {
        int run;
        int point;
        double wallTime;   // NaN when unknown
    };
    void rebuild();

    QList<Run> m_runs;
    QStringList m_metrics;
    QList<Row> m_rows;
};

} // namespace Starforge::Models
