// Light and dark: the app follows the desktop's color-scheme from the freedesktop Settings portal
// (a test double of org.freedesktop.portal.Settings on a private session bus), at start and as it
// changes, or the person's fixed choice; the meaning colours (models/tones.h) read at 4.5:1 or
// more on both palettes; labels that carry a tone and the Jobs table's state chips follow a
// change at once.

#include "core/job/jobrecord.h"
#include "gui/colorscheme.h"
#include "gui/jobs/jobsfiltermodel.h"
#include "gui/palettefollow.h"
#include "models/tones.h"

#include <QApplication>
#include <QDBusConnection>
#include <QDBusMessage>
#include <QDBusVariant>
#include <QLabel>
#include <QSignalSpy>
#include <QTest>

using namespace Starforge;
using Gui::ColorScheme;
using Tones::Tone;

// The Settings portal as a client sees it: Read of one key.
class PortalDouble final : public QObject
{
    Q_OBJECT
    Q_CLASSINFO("D-Bus Interface", "org.freedesktop.portal.Settings")
public:
    uint scheme = 0;
    int reads = 0;

public Q_SLOTS:
    QDBusVariant Read(const QString &ns, const QString &key)
    {
        ++reads;
        if (ns != u"org.freedesktop.appearance" || key != u"color-scheme") return QDBusVariant(QVariant());
        // As the portal answers Read: the value in a variant, in a variant.
        return QDBusVariant(QVariant::fromValue(QDBusVariant(scheme)));
    }
};

namespace {

void announce(uint scheme)
{
    QDBusMessage signal = QDBusMessage::createSignal(QStringLiteral("/org/freedesktop/portal/desktop"), QStringLiteral("org.freedesktop.portal.Settings"),
                                                     QStringLiteral("SettingChanged"));
    signal.setArguments({QStringLiteral("org.freedesktop.appearance"), QStringLiteral("color-scheme"), QVariant::fromValue(QDBusVariant(scheme))});
    QDBusConnection::sessionBus().send(signal);
}

// WCAG's contrast ratio of two colours.
double contrast(const QColor &a, const QColor &b)
{
    const auto luminance = [](const QColor &c) {
        const auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
        return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
    };
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

} // namespace

class TestColorScheme : public QObject
{
    Q_OBJECT
    QPalette m_light;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QDBusConnection::sessionBus().isConnected(), "no session bus: run under dbus-run-session");
        m_light = QApplication::palette();
        QVERIFY(!Tones::isDark(m_light));   // offscreen's palette is light
    }
    void cleanup() { QApplication::setPalette(m_light); }

    void everyToneReadsOnBothPalettes()
    {
        for (const QPalette &palette : {m_light, ColorScheme::darkPalette()}) {
            for (const Tone tone : {Tone::Error, Tone::Warning, Tone::Success, Tone::Info, Tone::Accent}) {
                const QColor text = Tones::text(tone, palette);
                for (const QPalette::ColorRole role : {QPalette::Base, QPalette::Window}) {
                    QVERIFY2(contrast(text, palette.color(role)) >= 4.5, qPrintable(QStringLiteral("tone %1 on %2: %3").arg(int(tone)).arg(int(role)).arg(contrast(text, palette.color(role)))));
                }
                const auto [foreground, background] = Tones::chip(tone, palette);
                QVERIFY2(contrast(foreground, background) >= 4.5, qPrintable(QStringLiteral("chip %1").arg(int(tone))));
            }
            QVERIFY(contrast(palette.color(QPalette::Text), palette.color(QPalette::Base)) >= 7);
        }
    }

    void noPortalNoChange()
    {
        ColorScheme scheme(nullptr, QStringLiteral("org.example.NoPortal"));
        QTest::qWait(200);
        QVERIFY(!scheme.systemPrefersDark());
        QCOMPARE(QApplication::palette(), m_light);
        // Fixed to dark, it is dark anyway; back to the system, light again.
        scheme.setMode(ColorScheme::Mode::Dark);
        QVERIFY(scheme.isDark());
        scheme.setMode(ColorScheme::Mode::System);
        QVERIFY(!scheme.isDark());
    }

    void followsThePortal()
    {
        QDBusConnection bus = QDBusConnection::sessionBus();
        PortalDouble portal;
        portal.scheme = 1; // prefer dark
        QVERIFY(bus.registerObject(QStringLiteral("/org/freedesktop/portal/desktop"), &portal, QDBusConnection::ExportAllSlots));
        QVERIFY(bus.registerService(QStringLiteral("org.freedesktop.portal.Desktop")));

        QLabel error;
        Gui::followTone(&error, Tone::Error);
        QVERIFY(error.styleSheet().contains(Tones::css(Tones::text(Tone::Error, m_light))));
        // A label inside a window, shown, as the panels' are.
        QWidget window;
        auto *quiet = new QLabel(QStringLiteral("No jobs yet"), &window);
        Gui::followQuiet(quiet);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QCOMPARE(quiet->styleSheet(), QStringLiteral("color: %1;").arg(Tones::css(m_light.color(QPalette::PlaceholderText))));

        ColorScheme scheme;
        QSignalSpy changed(&scheme, &ColorScheme::changed);
        QTRY_VERIFY(scheme.isDark());
        QVERIFY(scheme.systemPrefersDark());
        QCOMPARE(portal.reads, 1);
        // The label's sheet was written again for the dark palette, and the state chips follow.
        QVERIFY2(error.styleSheet().contains(Tones::css(Tones::text(Tone::Error, ColorScheme::darkPalette()))), qPrintable(error.styleSheet()));
        QTRY_COMPARE(quiet->styleSheet(), QStringLiteral("color: %1;").arg(Tones::css(ColorScheme::darkPalette().color(QPalette::PlaceholderText))));
        // What is drawn: the label's text colour, light on the dark window.
        QVERIFY(Tones::isDark(window.palette()));
        QVERIFY(quiet->palette().color(QPalette::WindowText).lightness() > 128);
        QCOMPARE(Gui::JobsFilterModel::stateColours(Job::JobState::Failed).background, Tones::chip(Tone::Error, ColorScheme::darkPalette()).second);

        // The desktop switches to light: so does the app, back to the platform's own palette.
        announce(2);
        QTRY_VERIFY(!scheme.isDark());
        QCOMPARE(QApplication::palette(), m_light);
        QVERIFY(error.styleSheet().contains(Tones::css(Tones::text(Tone::Error, m_light))));
        // And to dark again.
        announce(1);
        QTRY_VERIFY(scheme.isDark());

        // A fixed Light wins over the desktop's dark; System follows it again.
        scheme.setMode(ColorScheme::Mode::Light);
        QVERIFY(!scheme.isDark());
        scheme.setMode(ColorScheme::Mode::System);
        QVERIFY(scheme.isDark());
        QVERIFY(changed.size() >= 4);

        bus.unregisterService(QStringLiteral("org.freedesktop.portal.Desktop"));
        bus.unregisterObject(QStringLiteral("/org/freedesktop/portal/desktop"));
    }
};

QTEST_MAIN(TestColorScheme)
#include "tst_colorscheme.moc"
