#pragma once

// The heatmap's colours: viridis (the sequential map matplotlib made its default because it is
// readable with the common colour-vision deficiencies and in greyscale), as a literal table of
// eleven stops from 0 to 1, linearly interpolated. 0 = no GPU in use (dark violet), 1 = all
// in use (yellow). Nodes without GPUs are drawn in a neutral grey outside the ramp.

#include <QColor>

#include <algorithm>
#include <array>

namespace Starforge::Gui {

inline constexpr std::array<QRgb, 11> ViridisStops = {
    0xff440154, 0xff482475, 0xff414487, 0xff355f8d, 0xff2a788e, 0xff21918c, 0xff22a884, 0xff44bf70, 0xff7ad151, 0xffbddf26, 0xfffde725,
};

inline constexpr QRgb NoGpuColor = 0xffd0d0d0;

// The ramp's colour at t in [0, 1] (clamped); t < 0 means "no GPUs".
inline QColor heatColor(double t)
{
    if (t < 0)
        return QColor::fromRgb(NoGpuColor);
    t = std::clamp(t, 0.0, 1.0);
    const double at = t * double(ViridisStops.size() - 1);
    const int i = std::min(int(at), int(ViridisStops.size()) - 2);
    const double f = at - i;
    const QColor a = QColor::fromRgb(ViridisStops[size_t(i)]);
    const QColor b = QColor::fromRgb(ViridisStops[size_t(i) + 1]);
    return QColor::fromRgbF(float(a.redF() + (b.redF() - a.redF()) * f), float(a.greenF() + (b.greenF() - a.greenF()) * f),
                            float(a.blueF() + (b.blueF() - a.blueF()) * f));
}

} // namespace Starforge::Gui
