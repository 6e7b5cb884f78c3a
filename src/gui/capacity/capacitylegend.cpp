#include "gui/capacity/capacitylegend.h"

#include "gui/capacity/heatmapcolors.h"

#include <QPainter>

namespace Starforge::Gui {

namespace {

constexpr int RampWidth = 120;
constexpr int Swatch = 12;

} // namespace

CapacityLegend::CapacityLegend(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("capacityLegend"));
    setAccessibleName(tr("Heatmap legend"));
    setAccessibleDescription(tr("Colour is GPUs in use over allocatable, from dark violet (none in use) through teal and green to "
                                "yellow (all in use). Hatched cells are blocked nodes: cordoned, not ready, or tainted. Grey cells "
                                "are nodes without GPUs."));
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

QSize CapacityLegend::sizeHint() const
{
    const QFontMetrics fm = fontMetrics();
    const int text = fm.horizontalAdvance(tr("GPUs in use")) + fm.horizontalAdvance(QStringLiteral(" 0% ")) + fm.horizontalAdvance(QStringLiteral(" 100%"))
        + fm.horizontalAdvance(tr("blocked")) + fm.horizontalAdvance(tr("no GPUs"));
    return {text + RampWidth + 4 * Swatch + 40, std::max(fm.height(), Swatch) + 6};
}

QSize CapacityLegend::minimumSizeHint() const
{
    return sizeHint();
}

void CapacityLegend::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    const QFontMetrics fm = fontMetrics();
    const int h = height();
    const int mid = h / 2;
    painter.setPen(palette().color(QPalette::WindowText));
    int x = 2;
    const auto label = [&](const QString &text) {
        painter.drawText(QRect(x, 0, fm.horizontalAdvance(text) + 2, h), Qt::AlignLeft | Qt::AlignVCenter, text);
        x += fm.horizontalAdvance(text) + 6;
    };
    label(tr("GPUs in use"));
    label(QStringLiteral("0%"));
    const QRect ramp(x, mid - Swatch / 2, RampWidth, Swatch);
    QLinearGradient gradient(ramp.topLeft(), ramp.topRight());
    for (size_t i = 0; i < ViridisStops.size(); ++i) gradient.setColorAt(double(i) / double(ViridisStops.size() - 1), QColor::fromRgb(ViridisStops[i]));
    painter.fillRect(ramp, gradient);
    x += RampWidth + 4;
    label(QStringLiteral("100%"));
    x += 8;
    const QRect blocked(x, mid - Swatch / 2, Swatch, Swatch);
    painter.fillRect(blocked, heatColor(0.0));
    painter.fillRect(blocked, QBrush(QColor(255, 255, 255, 200), Qt::BDiagPattern));
    x += Swatch + 4;
    label(tr("blocked"));
    const QRect none(x, mid - Swatch / 2, Swatch, Swatch);
    painter.fillRect(none, QColor::fromRgb(NoGpuColor));
    x += Swatch + 4;
    label(tr("no GPUs"));
}

} // namespace Starforge::Gui
