#pragma once

// The heatmap's legend: the viridis ramp from 0 % to 100 % of a node's GPUs in use, a hatched
// swatch for blocked nodes (cordoned, not ready, tainted) and a grey one for nodes without GPUs.
// Its accessible description says the same in words.

#include <QWidget>

namespace Starforge::Gui {

class CapacityLegend final : public QWidget
{
    Q_OBJECT
public:
    explicit CapacityLegend(QWidget *parent = nullptr);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;
};

} // namespace Starforge::Gui
