#include "gui/capacity/capacitylegend.h"

#include "gui/capacity/heatmapcolors.h"

#include <QPainter>

#include <algorithm>

namespace Starforge::Gui {

namespace {

constexpr int RampWidth = 120; // at most; at least MinRampWidth when the dock is narrow
constexpr int MinRampWidth = 40;
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

// Everything but the ramp: the labels, the two swatches and the gaps paintEvent leaves.
static int fixedWidth(const QWidget *legend)
{
    const QFontMetrics fm = legend->fontMetrics();
    int width = 2 + 8 + 2 * (Swatch + 4) + 4;
    for (const QString &text : { CapacityLegend::tr("GPUs in use"), QStringLiteral("0%"), QStringLiteral("100%"),
                                 CapacityLegend::tr("blocked"), CapacityLegend::tr("no GPUs") })
        width += fm.horizontalAdvance(text) + 6;
    return width;
}

QSize CapacityLegend::sizeHint() const
{
    return { fixedWidth(this) + RampWidth, std::max(fontMetrics().height(), Swatch) + 6 };
}

QSize CapacityLegend::minimumSizeHint() const
{
    return { fixedWidth(this) + MinRampWidth, std::max(fontMetrics().height(), Swatch) + 6 };
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
    const QRect ramp(x, mid - Swatch / 2, std::clamp(width() - fixedWidth(this), MinRampWidth, RampWidth), Swatch);
    QLinearGradient gradient(ramp.topLeft(), ramp.topRight());
    for (size_t i = 0; i < ViridisStops.size(); ++i)
        gradient.setColorAt(double(i) / double(ViridisStops.size() - 1), QColor::fromRgb(ViridisStops[i]));
    painter.fillRect(ramp, gradient);
    x += ramp.width() + 4;
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
