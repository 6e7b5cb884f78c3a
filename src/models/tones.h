#pragma once

// Colours that carry a meaning (an error, a caution, success, information, an accent) chosen for
// the palette in force, so they read on a light window and on a dark one alike. A dark palette
// (its window colour darker than mid grey) gets lighter tones; a light one the usual deep ones.
// Models ask at paint time (views repaint when the palette changes); widgets whose style sheets
// carry a tone use Gui::followPalette (gui/palettefollow.h), which writes the sheet again on
// every palette change.

#include <QColor>
#include <QPalette>
#include <QString>

#include <utility>

namespace Starforge::Tones {

enum class Tone { Error, Warning, Success, Info, Accent };

// The application's palette now.
QPalette current();
bool isDark(const QPalette &palette = current());
// Text of that meaning, readable on the palette's Base and Window.
QColor text(Tone tone, const QPalette &palette = current());
// A chip's or banner's text and background: the text on a tinted background.
std::pair<QColor, QColor> chip(Tone tone, const QPalette &palette = current());
// A colour as a style sheet writes it, its alpha kept ("rgba(0, 0, 0, 127)").
QString css(const QColor &color);
// "color: ...;" for a label of that meaning.
QString labelStyle(Tone tone, const QPalette &palette = current());
// A banner's whole sheet: tinted background, text, border, padding.
QString bannerStyle(Tone tone, const QPalette &palette = current());

} // namespace Starforge::Tones
