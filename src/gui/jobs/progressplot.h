#pragma once

// A small live plot of one training metric against the step, drawn with QPainter: the runner's
// STARFORGE_PROGRESS metrics (Loss, Avg Reward, Accuracy, Total step time) as the job detail
// shows them. Points that are not numbers (a loss of nan) are left out of the line and counted
// in the caption. The mouse or the Left/Right keys move a cursor over the steps; the value under
// it is shown in the plot and given to assistive technology as the plot's description.

#include "core/job/progress.h"

#include <QWidget>

namespace Starforge::Gui {

class ProgressPlot final : public QWidget
{
    Q_OBJECT
public:
    explicit ProgressPlot(QWidget *parent = nullptr);

    void setProgress(const Job::JobProgress &progress);
    void clear();
    // The metric drawn; the first one the progress has when empty or absent.
    void setMetric(const QString &metric);
    QString metric() const { return m_metric; }
    // The metrics the progress has, in the order they first appeared.
    QStringList metrics() const { return m_metrics; }

    // The steps drawn and the values of the metric at them (NaN points included).
    QList<QPointF> series() const { return m_series; }
    // The point under the cursor (-1: none) and where it is drawn.
    int cursor() const { return m_cursor; }
    QPointF pointPosition(int index) const;
    // One sentence about what is drawn (also the accessible description).
    QString summaryText() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

Q_SIGNALS:
    void metricsChanged(const QStringList &metrics);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;

private:
    QRectF plotArea() const;
    void rebuildSeries();
    void setCursor(int index);
    void updateDescription();

    QList<Job::ProgressPoint> m_points;
    QStringList m_metrics;
    QString m_metric;
    QList<QPointF> m_series;      // (step, value)
    double m_minX = 0, m_maxX = 1, m_minY = 0, m_maxY = 1;
    int m_cursor = -1;
};

} // namespace Starforge::Gui
