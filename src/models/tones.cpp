#include "models/tones.h"

#include <QGuiApplication>

namespace Starforge::Tones {

QPalette current()
{
    // Models are also used without a GUI (the CLI, guiless tests), where there is no application
    // palette to ask: they get a light one, as most people see.
    if (!qobject_cast<QGuiApplication *>(QCoreApplication::instance())) return QPalette(QColor(0xef, 0xef, 0xef), QColor(0xff, 0xff, 0xff));
    return QGuiApplication::palette();
}

bool isDark(const QPalette &palette)
{
    return palette.color(QPalette::Window).lightness() < 128;
}

QColor text(Tone tone, const QPalette &palette)
{
    // Light: deep tones with at least 4.5:1 against white. Dark: light tones with at least
    // 4.5:1 against the usual dark greys (#1e1e1e to #353535).
    const bool dark = isDark(palette);
    switch (tone) {
    case Tone::Error: return dark ? QColor(0xff, 0x7b, 0x72) : QColor(0xc0, 0x1c, 0x28);
    case Tone::Warning: return dark ? QColor(0xe3, 0xb3, 0x41) : QColor(0x8a, 0x5a, 0x00);
    case Tone::Success: return dark ? QColor(0x56, 0xd3, 0x64) : QColor(0x1c, 0x6b, 0x2e);
    case Tone::Info: return dark ? QColor(0x79, 0xc0, 0xff) : QColor(0x0b, 0x4a, 0x94);
    case Tone::Accent: return dark ? QColor(0xd2, 0xa8, 0xff) : QColor(0x8a, 0x3a, 0xb9);
    }
    return palette.color(QPalette::Text);
}

std::pair<QColor, QColor> chip(Tone tone, const QPalette &palette)
{
    const bool dark = isDark(palette);
    switch (tone) {
    case Tone::Error: return dark ? std::pair{QColor(0xff, 0xc1, 0xbc), QColor(0x5c, 0x1a, 0x1b)} : std::pair{QColor(0x9b, 0x14, 0x18), QColor(0xf8, 0xd4, 0xd3)};
    case Tone::Warning: return dark ? std::pair{QColor(0xff, 0xe8, 0xa3), QColor(0x4a, 0x37, 0x00)} : std::pair{QColor(0x3b, 0x2f, 0x00), QColor(0xff, 0xf4, 0xce)};
    case Tone::Success: return dark ? std::pair{QColor(0xb4, 0xf0, 0xbe), QColor(0x14, 0x40, 0x1f)} : std::pair{QColor(0x17, 0x63, 0x2b), QColor(0xd2, 0xf0, 0xd9)};
    case Tone::Info: return dark ? std::pair{QColor(0xc2, 0xdd, 0xff), QColor(0x10, 0x33, 0x5c)} : std::pair{QColor(0x0b, 0x4a, 0x94), QColor(0xd3, 0xe4, 0xfa)};
    case Tone::Accent: return dark ? std::pair{QColor(0xe8, 0xd5, 0xff), QColor(0x3d, 0x21, 0x5c)} : std::pair{QColor(0x5a, 0x1e, 0x80), QColor(0xed, 0xdf, 0xf7)};
    }
    return {palette.color(QPalette::Text), palette.color(QPalette::Base)};
}

QString css(const QColor &color)
{
    return QStringLiteral("rgba(%1, %2, %3, %4)").arg(color.red()).arg(color.green()).arg(color.blue()).arg(color.alpha());
}

QString labelStyle(Tone tone, const QPalette &palette)
{
    return QStringLiteral("color: %1;").arg(css(text(tone, palette)));
}

QString bannerStyle(Tone tone, const QPalette &palette)
{
    const auto [foreground, background] = chip(tone, palette);
    const QColor border = isDark(palette) ? background.lighter(160) : background.darker(130);
    return QStringLiteral("QLabel { background: %1; color: %2; border: 1px solid %3; border-radius: 3px; padding: 4px 6px; }")
        .arg(background.name(), foreground.name(), border.name());
}

} // namespace Starforge::Tones
