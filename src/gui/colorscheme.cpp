#include "gui/colorscheme.h"

#include "models/tones.h"

#include <QApplication>
#include <QDBusConnection>
#include <QDBusMessage>
#include <QDBusPendingCallWatcher>
#include <QDBusPendingReply>
#include <QDBusVariant>
#include <QStyle>

namespace Starforge::Gui {

namespace {
const QString PortalPath = QStringLiteral("/org/freedesktop/portal/desktop");
const QString SettingsInterface = QStringLiteral("org.freedesktop.portal.Settings");
const QString AppearanceNamespace = QStringLiteral("org.freedesktop.appearance");
const QString ColorSchemeKey = QStringLiteral("color-scheme");

// The portal wraps the value in a variant, and Read (the older call) in a second one.
uint unwrap(QVariant value)
{
    while (value.userType() == qMetaTypeId<QDBusVariant>()) value = value.value<QDBusVariant>().variant();
    return value.toUInt();
}
} // namespace

ColorScheme::ColorScheme(QObject *parent, const QString &service)
    : QObject(parent)
    , m_service(service)
    , m_platform(QApplication::palette())
{
    QDBusConnection bus = QDBusConnection::sessionBus();
    if (bus.isConnected()) {
        bus.connect(m_service, PortalPath, SettingsInterface, QStringLiteral("SettingChanged"), this,
                    SLOT(onSettingChanged(QString, QString, QDBusVariant)));
        readPortal();
    }
}

void ColorScheme::readPortal()
{
    QDBusMessage read = QDBusMessage::createMethodCall(m_service, PortalPath, SettingsInterface, QStringLiteral("Read"));
    read.setArguments({AppearanceNamespace, ColorSchemeKey});
    auto *watcher = new QDBusPendingCallWatcher(QDBusConnection::sessionBus().asyncCall(read, 2000), this);
    connect(watcher, &QDBusPendingCallWatcher::finished, this, [this](QDBusPendingCallWatcher *call) {
        call->deleteLater();
        const QDBusPendingReply<QVariant> reply = *call;
        // No portal (or one without the key): no preference, the platform palette stays.
        if (!reply.isError()) setSystemScheme(unwrap(reply.value()));
    });
}

void ColorScheme::onSettingChanged(const QString &ns, const QString &key, const QDBusVariant &value)
{
    if (ns == AppearanceNamespace && key == ColorSchemeKey) setSystemScheme(unwrap(value.variant()));
}

void ColorScheme::setSystemScheme(uint value)
{
    const bool dark = value == 1;
    if (dark == m_systemDark) return;
    m_systemDark = dark;
    apply();
}

void ColorScheme::setMode(Mode mode)
{
    if (mode == m_mode) return;
    m_mode = mode;
    apply();
}

bool ColorScheme::isDark() const
{
    return Tones::isDark(QApplication::palette());
}

void ColorScheme::apply()
{
    const bool wantDark = m_mode == Mode::Dark || (m_mode == Mode::System && m_systemDark);
    const bool platformDark = Tones::isDark(m_platform);
    QPalette palette = m_platform;
    if (wantDark && !platformDark) palette = darkPalette();
    else if (!wantDark && platformDark && m_mode == Mode::Light) palette = QApplication::style()->standardPalette();
    if (palette != QApplication::palette()) QApplication::setPalette(palette);
    Q_EMIT changed();
}

QPalette ColorScheme::darkPalette()
{
    // Greys with the text at 4.5:1 or more everywhere, a blue highlight, links that read on grey.
    QPalette p;
    const QColor window(0x2b, 0x2b, 0x2b), base(0x1f, 0x1f, 0x1f), text(0xe6, 0xe6, 0xe6), disabled(0x80, 0x80, 0x80);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x27, 0x27, 0x27));
    p.setColor(QPalette::ToolTipBase, QColor(0x3a, 0x3a, 0x3a));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, QColor(0xa0, 0xa0, 0xa0));
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xff, 0x7b, 0x72));
    p.setColor(QPalette::Light, QColor(0x48, 0x48, 0x48));
    p.setColor(QPalette::Midlight, QColor(0x3c, 0x3c, 0x3c));
    p.setColor(QPalette::Mid, QColor(0x8a, 0x8a, 0x8a));
    p.setColor(QPalette::Dark, QColor(0x1a, 0x1a, 0x1a));
    p.setColor(QPalette::Shadow, QColor(0x0d, 0x0d, 0x0d));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x6f, 0xc4));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0x79, 0xc0, 0xff));
    p.setColor(QPalette::LinkVisited, QColor(0xd2, 0xa8, 0xff));
    for (const QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText}) p.setColor(QPalette::Disabled, role, disabled);
    return p;
}

QString ColorScheme::modeName(Mode mode)
{
    switch (mode) {
    case Mode::System: return QStringLiteral("system");
    case Mode::Light: return QStringLiteral("light");
    case Mode::Dark: return QStringLiteral("dark");
    }
    return {};
}

ColorScheme::Mode ColorScheme::modeFromName(const QString &name)
{
    if (name == u"light") return Mode::Light;
    if (name == u"dark") return Mode::Dark;
    return Mode::System;
}

} // namespace Starforge::Gui
