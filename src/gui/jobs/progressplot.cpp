#include "gui/jobs/progressplot.h"

#include <QAccessible>
#include <QKeyEvent>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>

#include <cmath>
#include <limits>

namespace Starforge::Gui {

namespace {

QString number(double v)
{
    return std::isnan(v) ? QStringLiteral("nan") : QLocale().toString(v, 'g', 4);
}

} // namespace

ProgressPlot::ProgressPlot(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("progressPlot"));
    setAccessibleName(tr("Training progress plot"));
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setBackgroundRole(QPalette::Base);
    setAutoFillBackground(true);
    updateDescription();
}

QSize ProgressPlot::sizeHint() const
{
    return { 320, 160 };
}

QSize ProgressPlot::minimumSizeHint() const
{
    return { 160, 90 };
}

void ProgressPlot::setProgress(const Job::JobProgress &progress)
{
    m_points = progress.points();
    QStringList metrics;
    for (const Job::ProgressPoint &p : std::as_const(m_points)) {
        for (auto it = p.metrics.cbegin(); it != p.metrics.cend(); ++it) {
            if (!metrics.contains(it.key()))
                metrics << it.key();
        }
    }
    // Loss first when there is one: what people look at.
    if (metrics.removeOne(QStringLiteral("Loss")))
        metrics.prepend(QStringLiteral("Loss"));
    const bool metricsChangedNow = metrics != m_metrics;
    m_metrics = metrics;
    if (!m_metrics.contains(m_metric))
        m_metric = m_metrics.value(0);
    rebuildSeries();
    if (metricsChangedNow)
        Q_EMIT metricsChanged(m_metrics);
}

void ProgressPlot::clear()
{
    setProgress(Job::JobProgress());
}

void ProgressPlot::setMetric(const QString &metric)
{
    m_metric = m_metrics.contains(metric) ? metric : m_metrics.value(0);
    rebuildSeries();
}

void ProgressPlot::rebuildSeries()
{
    m_series.clear();
    m_minX = m_minY = std::numeric_limits<double>::max();
    m_maxX = m_maxY = std::numeric_limits<double>::lowest();
    for (const Job::ProgressPoint &p : std::as_const(m_points)) {
        const auto it = p.metrics.constFind(m_metric);
        if (it == p.metrics.cend())
            continue;
        m_series.append({ double(p.step), it.value() });
        m_minX = std::min(m_minX, double(p.step));
        m_maxX = std::max(m_maxX, double(p.step));
        if (std::isfinite(it.value())) {
            m_minY = std::min(m_minY, it.value());
            m_maxY = std::max(m_maxY, it.value());
        }
    }
    if (m_minX > m_maxX) {
        m_minX = 0;
        m_maxX = 1;
    }
    if (m_minY > m_maxY) {
        m_minY = 0;
        m_maxY = 1;
    }
    if (m_maxX - m_minX < 1)
        m_maxX = m_minX + 1;
    if (m_maxY - m_minY < 1e-12) {
        m_minY -= 0.5;
        m_maxY += 0.5;
    }
    if (m_cursor >= m_series.size())
        m_cursor = -1;
    updateDescription();
    update();
}

QRectF ProgressPlot::plotArea() const
{
    const QFontMetrics fm = fontMetrics();
    const double left = fm.horizontalAdvance(QStringLiteral("-0.0000")) + 8;
    return QRectF(left, fm.height() + 6, std::max(10.0, width() - left - 10), std::max(10.0, height() - 2.0 * fm.height() - 14));
}

QPointF ProgressPlot::pointPosition(int index) const
{
    if (index < 0 || index >= m_series.size())
        return {};
    const QRectF area = plotArea();
    const QPointF p = m_series.at(index);
    const double y = std::isfinite(p.y()) ? p.y() : m_maxY;
    return { area.left() + (p.x() - m_minX) / (m_maxX - m_minX) * area.width(), area.bottom() - (y - m_minY) / (m_maxY - m_minY) * area.height() };
}

QString ProgressPlot::summaryText() const
{
    if (m_series.isEmpty())
        return tr("No training metrics yet: they appear once the driver's log reports a step.");
    const QPointF first = m_series.first();
    const QPointF last = m_series.last();
    int notNumbers = 0;
    for (const QPointF &p : m_series)
        notNumbers += std::isnan(p.y()) ? 1 : 0;
    QString text = tr("%1 over %n step(s): %2 at step %3, %4 at step %5.", nullptr, int(m_series.size()))
                       .arg(m_metric, number(first.y()), QString::number(int(first.x())), number(last.y()), QString::number(int(last.x())));
    if (notNumbers > 0)
        text += QLatin1Char(' ') + tr("%n step(s) reported nan.", nullptr, notNumbers);
    if (m_cursor >= 0) {
        const QPointF c = m_series.at(m_cursor);
        text += QLatin1Char(' ') + tr("Cursor: step %1, %2 %3.").arg(QString::number(int(c.x())), m_metric, number(c.y()));
    }
    return text;
}

void ProgressPlot::updateDescription()
{
    setAccessibleDescription(summaryText());
    setToolTip(m_series.isEmpty() ? summaryText() : QString());
    if (QAccessible::isActive()) {
        QAccessibleEvent event(this, QAccessible::DescriptionChanged);
        QAccessible::updateAccessibility(&event);
    }
}

void ProgressPlot::setCursor(int index)
{
    if (index == m_cursor)
        return;
    m_cursor = index;
    updateDescription();
    update();
}

void ProgressPlot::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QRectF area = plotArea();
    const QPalette pal = palette();
    const QFontMetrics fm = fontMetrics();
    painter.setPen(QPen(pal.color(QPalette::Mid), 1));
    painter.drawRect(area);
    if (m_series.isEmpty()) {
        painter.setPen(pal.color(QPalette::PlaceholderText));
        painter.drawText(area, Qt::AlignCenter | Qt::TextWordWrap, tr("No metrics yet"));
        return;
    }
    // Axes' ends: the value range on the left, the step range below.
    painter.setPen(pal.color(QPalette::Text));
    painter.drawText(QRectF(0, area.top() - fm.height() / 2.0, area.left() - 4, fm.height()), Qt::AlignRight | Qt::AlignVCenter, number(m_maxY));
    painter.drawText(QRectF(0, area.bottom() - fm.height() / 2.0, area.left() - 4, fm.height()), Qt::AlignRight | Qt::AlignVCenter, number(m_minY));
    painter.drawText(QRectF(area.left(), area.bottom() + 2, area.width(), fm.height()), Qt::AlignLeft | Qt::AlignTop,
                     tr("step %1").arg(int(m_minX)));
    painter.drawText(QRectF(area.left(), area.bottom() + 2, area.width(), fm.height()), Qt::AlignRight | Qt::AlignTop, tr("step %1").arg(int(m_maxX)));
    painter.drawText(QRectF(area.left(), 0, area.width(), fm.height() + 4), Qt::AlignLeft | Qt::AlignVCenter, m_metric);

    // The line, broken where a value is not a number (drawn as a red tick at the top).
    QPainterPath path;
    bool open = false;
    for (int i = 0; i < m_series.size(); ++i) {
        const QPointF p = pointPosition(i);
        if (!std::isfinite(m_series.at(i).y())) {
            open = false;
            painter.setPen(QPen(QColor(0xd6, 0x27, 0x28), 2));
            painter.drawLine(QPointF(p.x(), area.top()), QPointF(p.x(), area.top() + 6));
            continue;
        }
        if (open)
            path.lineTo(p);
        else
            path.moveTo(p);
        open = true;
    }
    painter.setPen(QPen(pal.color(QPalette::Highlight), 2));
    painter.setBrush(Qt::NoBrush);
    painter.drawPath(path);
    if (m_series.size() == 1 || m_cursor < 0) {
        painter.setBrush(pal.color(QPalette::Highlight));
        painter.drawEllipse(pointPosition(int(m_series.size()) - 1), 3, 3);
    }
    if (m_cursor >= 0) {
        const QPointF p = pointPosition(m_cursor);
        painter.setPen(QPen(pal.color(QPalette::Mid), 1, Qt::DashLine));
        painter.drawLine(QPointF(p.x(), area.top()), QPointF(p.x(), area.bottom()));
        painter.setBrush(pal.color(QPalette::Highlight));
        painter.setPen(Qt::NoPen);
        painter.drawEllipse(p, 4, 4);
        const QPointF c = m_series.at(m_cursor);
        painter.setPen(pal.color(QPalette::Text));
        painter.drawText(QRectF(area.left(), 0, area.width(), fm.height() + 4), Qt::AlignRight | Qt::AlignVCenter,
                         tr("step %1: %2").arg(QString::number(int(c.x())), number(c.y())));
    }
    if (hasFocus()) {
        painter.setPen(QPen(pal.color(QPalette::Highlight), 1, Qt::DotLine));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(rect().adjusted(0, 0, -1, -1));
    }
}

void ProgressPlot::mouseMoveEvent(QMouseEvent *event)
{
    // The nearest step to the pointer's x.
    int best = -1;
    double bestDistance = std::numeric_limits<double>::max();
    for (int i = 0; i < m_series.size(); ++i) {
        const double d = std::abs(pointPosition(i).x() - event->position().x());
        if (d < bestDistance) {
            bestDistance = d;
            best = i;
        }
    }
    setCursor(plotArea().adjusted(-8, -8, 8, 8).contains(event->position()) ? best : -1);
}

void ProgressPlot::leaveEvent(QEvent *)
{
    if (!hasFocus())
        setCursor(-1);
}

void ProgressPlot::keyPressEvent(QKeyEvent *event)
{
    if (m_series.isEmpty()) {
        QWidget::keyPressEvent(event);
        return;
    }
    const int last = int(m_series.size()) - 1;
    switch (event->key()) {
    case Qt::Key_Left:
        setCursor(m_cursor < 0 ? last : std::max(0, m_cursor - 1));
        break;
    case Qt::Key_Right:
        setCursor(m_cursor < 0 ? 0 : std::min(last, m_cursor + 1));
        break;
    case Qt::Key_Home:
        setCursor(0);
        break;
    case Qt::Key_End:
        setCursor(last);
        break;
    case Qt::Key_Escape:
        setCursor(-1);
        break;
    default:
        QWidget::keyPressEvent(event);
    }
}

} // namespace Starforge::Gui
