#include "models/runcomparisonmodel.h"

#include <QLocale>

#include <cmath>
#include <limits>

namespace Starforge::Models {

namespace {

// untranslated: NeMo-RL's words in the log, matched
const QString StepTime = QStringLiteral("Total step time");

QString csvField(const QString &text)
{
    if (!text.contains(u',') && !text.contains(u'"') && !text.contains(u'\n')) return text;
    QString quoted = text;
    quoted.replace(QStringLiteral("\""), QStringLiteral("\"\""));
    return u'"' + quoted + u'"';
}

} // namespace

RunComparisonModel::RunComparisonModel(QObject *parent) : QAbstractTableModel(parent) {}

void RunComparisonModel::setRun(const QString &jobId, const QString &label, const Job::JobProgress &progress)
{
    Run run{jobId, label, progress.points()};
    beginResetModel();
    bool replaced = false;
    for (Run &r : m_runs) {
        if (r.jobId == jobId) {
            r = run;
            replaced = true;
        }
    }
    if (!replaced) m_runs.append(run);
    rebuild();
    endResetModel();
}

void RunComparisonModel::removeRun(const QString &jobId)
{
    beginResetModel();
    m_runs.removeIf([&](const Run &r) { return r.jobId == jobId; });
    rebuild();
    endResetModel();
}

void RunComparisonModel::rebuild()
{
    m_metrics.clear();
    m_rows.clear();
    for (int r = 0; r < m_runs.size(); ++r) {
        double wall = 0;
        bool timed = true;
        for (int p = 0; p < m_runs.at(r).points.size(); ++p) {
            const Job::ProgressPoint &point = m_runs.at(r).points.at(p);
            for (auto it = point.metrics.cbegin(); it != point.metrics.cend(); ++it) {
                if (!m_metrics.contains(it.key())) m_metrics.append(it.key());
            }
            // Wall time: the step times so far, known only while every step has one.
            const auto stepTime = point.metrics.constFind(StepTime);
            if (stepTime == point.metrics.cend() || !std::isfinite(*stepTime)) timed = false;
            else wall += *stepTime;
            m_rows.append({r, p, timed ? wall : std::numeric_limits<double>::quiet_NaN()});
        }
    }
    // Loss first when there is one, as the Job dock's plot: what people look at.
    if (m_metrics.removeOne(QStringLiteral("Loss"))) m_metrics.prepend(QStringLiteral("Loss"));
}

QList<QPointF> RunComparisonModel::series(const QString &jobId, const QString &metric, Axis axis) const
{
    QList<QPointF> out;
    for (const Row &row : m_rows) {
        const Run &run = m_runs.at(row.run);
        if (run.jobId != jobId) continue;
        const Job::ProgressPoint &point = run.points.at(row.point);
        const auto value = point.metrics.constFind(metric);
        if (value == point.metrics.cend() || !std::isfinite(*value)) continue;
        const double x = axis == Axis::Step ? point.step : row.wallTime;
        if (!std::isfinite(x)) continue;
        out.append({x, *value});
    }
    return out;
}

QString RunComparisonModel::toCsv() const
{
    QStringList lines;
    QStringList header;
    for (int c = 0; c < columnCount(); ++c) header << csvField(headerData(c, Qt::Horizontal).toString());
    lines << header.join(u',');
    for (int r = 0; r < rowCount(); ++r) {
        QStringList fields;
        for (int c = 0; c < columnCount(); ++c) fields << csvField(index(r, c).data(Qt::EditRole).toString());
        lines << fields.join(u',');
    }
    return lines.join(QStringLiteral("\r\n")) + QStringLiteral("\r\n");
}

int RunComparisonModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int RunComparisonModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : FirstMetricColumn + int(m_metrics.size());
}

QVariant RunComparisonModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const Row &row = m_rows.at(index.row());
    const Run &run = m_runs.at(row.run);
    const Job::ProgressPoint &point = run.points.at(row.point);
    if (role != Qt::DisplayRole && role != Qt::EditRole) return {};
    // EditRole: the exact value (CSV); DisplayRole: for people.
    const bool exact = role == Qt::EditRole;
    switch (index.column()) {
    case RunColumn: return run.label;
    case StepColumn: return point.step;
    case WallTimeColumn:
        if (!std::isfinite(row.wallTime)) return QString();
        return exact ? QString::number(row.wallTime, 'g', QLocale::FloatingPointShortest) : QLocale().toString(row.wallTime, 'f', 1);
    default: {
        const QString metric = m_metrics.value(index.column() - FirstMetricColumn);
        const auto value = point.metrics.constFind(metric);
        if (value == point.metrics.cend()) return QString();
        if (std::isnan(*value)) return QStringLiteral("nan");
        // Exact: the shortest text that reads back as the same number, as the runner's JSON wrote it.
        return exact ? QString::number(*value, 'g', QLocale::FloatingPointShortest) : QLocale().toString(*value, 'g', 6);
    }
    }
}

QVariant RunComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case RunColumn: return tr("Run");
    case StepColumn: return tr("Step");
    case WallTimeColumn: return tr("Wall time (s)");
    default: return m_metrics.value(section - FirstMetricColumn);
    }
}

} // namespace Starforge::Models
