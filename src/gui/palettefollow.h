#pragma once

// A widget's style sheet kept in step with the application palette: set now from the palette in
// force, and written again on every palette change (light to dark and back), for as long as the
// widget lives. For labels and banners whose sheets carry a tone (models/tones.h).

#include "models/tones.h"

#include <QPalette>
#include <QString>

#include <functional>

class QWidget;

namespace Starforge::Gui {

void followPalette(QWidget *widget, std::function<QString(const QPalette &)> style);

// A label's text in a tone ("color: ..."), and a banner's tinted sheet.
inline void followTone(QWidget *label, Tones::Tone tone)
{
    followPalette(label, [tone](const QPalette &palette) { return Tones::labelStyle(tone, palette); });
}
// Secondary text (placeholders, counts, help): the palette's own quiet colour.
inline void followQuiet(QWidget *label)
{
    followPalette(label, [](const QPalette &palette) { return QStringLiteral("color: %1;").arg(Tones::css(palette.color(QPalette::PlaceholderText))); });
}
inline void followBanner(QWidget *banner, Tones::Tone tone)
{
    followPalette(banner, [tone](const QPalette &palette) { return Tones::bannerStyle(tone, palette); });
}

} // namespace Starforge::Gui
