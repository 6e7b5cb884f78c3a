#pragma once

// Light or dark, as the desktop says. Qt 6.4 takes its palette from the platform theme, which on
// GNOME and most Wayland desktops does not know about the dark preference. The freedesktop
// Settings portal does: org.freedesktop.appearance color-scheme (0 no preference, 1 prefer
// dark, 2 prefer light), read at start and followed through its SettingChanged signal. When the
// wanted scheme differs from the platform palette's, the app sets a palette of its own (dark:
// darkPalette(); light: the style's standard one); when they agree, the platform palette stays,
// so a desktop that themes Qt itself keeps its colours. View › Appearance can also fix it to
// Light or Dark.

#include <QObject>
#include <QPalette>

class QDBusVariant;

namespace Starforge::Gui {

class ColorScheme final : public QObject
{
    Q_OBJECT
public:
    enum class Mode { System, Light, Dark };
    Q_ENUM(Mode)

    // service: the portal's bus name (tests give a double's).
    explicit ColorScheme(QObject *parent = nullptr, const QString &service = QStringLiteral("org.freedesktop.portal.Desktop"));

    Mode mode() const { return m_mode; }
    void setMode(Mode mode);
    // What the desktop asked for (the portal's color-scheme), when it said.
    bool systemPrefersDark() const { return m_systemDark; }
    // Whether the palette in force is dark.
    bool isDark() const;

    static QPalette darkPalette();
    static QString modeName(Mode mode);   // "system", "light", "dark": window.ini's words
    static Mode modeFromName(const QString &name);

Q_SIGNALS:
    void changed();

private Q_SLOTS:
    void onSettingChanged(const QString &ns, const QString &key, const QDBusVariant &value);

private:
    void readPortal();
    void setSystemScheme(uint value);
    void apply();

    QString m_service;
    QPalette m_platform;   // what the platform theme gave at start
    Mode m_mode = Mode::System;
    bool m_systemDark = false;
};

} // namespace Starforge::Gui
