#pragma once

// Comparing runs (docs/jobs.md, "Comparing runs"): the jobs selected in the Jobs panel, live or
// archived, their training metrics overlaid on one plot (ComparePlot over RunComparisonModel):
// a metric, against the step or the wall time, on a linear or log scale, a legend, the values
// of every run under the mouse or the Left/Right keys, and export to CSV (the table, a row per
// run and step) and PNG (the plot as drawn). Live runs follow their progress as it grows;
// archived ones are read from their archived driver log.

#include "models/runcomparisonmodel.h"

#include <QDialog>
#include <QPointer>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;

namespace Starforge {
class Session;
}
namespace Starforge::Job {
struct JobRecord;
}

namespace Starforge::Gui {

class UserPrompts;

class ComparePlot final : public QWidget
{
    Q_OBJECT
public:
    explicit ComparePlot(QWidget *parent = nullptr);

    void setModel(Models::RunComparisonModel *model);
    void setMetric(const QString &metric);
    void setAxis(Models::RunComparisonModel::Axis axis);
    void setLogScale(bool on);
    QString metric() const { return m_metric; }
    bool logScale() const { return m_log; }

    // The x under the cursor (NaN: none) and what each run has there, "label: value" each.
    double cursorX() const { return m_cursorX; }
    QStringList valuesAtCursor() const;
    void setCursorX(double x);
    // One sentence per run about what is drawn (also the accessible description).
    QString summaryText() const;
    // Points left out on a log scale (zero or below).
    int hiddenOnLogScale() const { return m_hidden; }

    static QColor colorOf(int run);

    QSize sizeHint() const override { return {640, 360}; }
    QSize minimumSizeHint() const override { return {320, 200}; }

protected:
    void paintEvent(QPaintEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;

private:
    void rebuild();
    QRectF plotArea() const;
    QPointF toScreen(const QPointF &p) const;
    double y(double value) const;   // the value on the scale drawn

    QPointer<Models::RunComparisonModel> m_model;
    QString m_metric;
    Models::RunComparisonModel::Axis m_axis = Models::RunComparisonModel::Axis::Step;
    bool m_log = false;
    QList<QList<QPointF>> m_series;   // per run, on the scale drawn
    QList<double> m_xs;               // every x, ascending, for the keys
    double m_minX = 0, m_maxX = 1, m_minY = 0, m_maxY = 1;
    double m_cursorX;
    int m_hidden = 0;
};

class CompareWindow final : public QDialog
{
    Q_OBJECT
public:
    CompareWindow(Session *session, const QList<Job::JobRecord> &jobs, UserPrompts *prompts, QWidget *parent = nullptr);
    ~CompareWindow() override;

    Models::RunComparisonModel *model() const { return m_model; }
    ComparePlot *plot() const { return m_plot; }
    QComboBox *metricCombo() const { return m_metric; }
    QComboBox *axisCombo() const { return m_axis; }
    QCheckBox *logCheck() const { return m_log; }
    QLabel *statusLabel() const { return m_status; }
    // Whether every run's progress has been read (the archived ones take a download).
    bool isLoaded() const { return m_waiting == 0; }

    bool exportCsv(const QString &path) const;
    bool exportPng(const QString &path) const;

private:
    void fillMetrics();
    void updateStatus();

    QPointer<Session> m_session;
    UserPrompts *m_prompts;
    Models::RunComparisonModel *m_model;
    ComparePlot *m_plot;
    QComboBox *m_metric;
    QComboBox *m_axis;
    QCheckBox *m_log;
    QLabel *m_status;
    int m_waiting = 0;
    bool m_metricChosen = false;   // the user picked a metric: keep it as runs come in
    QStringList m_missing;   // runs with no progress to show, and why
};

} // namespace Starforge::Gui
