#include "gui/palettefollow.h"

#include <QCoreApplication>
#include <QEvent>
#include <QGuiApplication>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QWidget>

namespace Starforge::Gui {

namespace {

// Lives as the widget's child: writes the sheet for the palette in force.
class PaletteFollower final : public QObject
{
public:
    PaletteFollower(QWidget *widget, std::function<QString(const QPalette &)> style)
        : QObject(widget)
        , m_widget(widget)
        , m_style(std::move(style))
    {
        apply();
    }

    void apply()
    {
        const QString sheet = m_style(QGuiApplication::palette());
        if (sheet != m_widget->styleSheet()) m_widget->setStyleSheet(sheet);
    }

private:
    QWidget *m_widget;
    std::function<QString(const QPalette &)> m_style;
};

// Tells every follower when the application palette changes. Qt sends ApplicationPaletteChange
// to the application object and to windows, but not to a widget inside a window whose style
// sheet has fixed its palette (every follower's), so one watcher on the application object
// relays it.
class PaletteHub final : public QObject
{
public:
    static PaletteHub *instance()
    {
        static QPointer<PaletteHub> hub;
        if (!hub) hub = new PaletteHub(QCoreApplication::instance());
        return hub;
    }

    void add(PaletteFollower *follower)
    {
        m_followers.removeAll(nullptr);   // replaced and deleted ones
        m_followers.append(follower);
    }

    bool eventFilter(QObject *watched, QEvent *event) override
    {
        // A filter on the application sees every event; only one kind, sent to it, matters.
        if (watched == QCoreApplication::instance() && event->type() == QEvent::ApplicationPaletteChange) {
            m_followers.removeAll(nullptr);
            for (const QPointer<PaletteFollower> &follower : std::as_const(m_followers)) follower->apply();
        }
        return false;
    }

private:
    explicit PaletteHub(QObject *application)
        : QObject(application)
    {
        application->installEventFilter(this);
    }

    QList<QPointer<PaletteFollower>> m_followers;
};

} // namespace

void followPalette(QWidget *widget, std::function<QString(const QPalette &)> style)
{
    // One follower per widget: a later call replaces what the widget follows.
    for (QObject *child : widget->children()) {
        if (auto *old = dynamic_cast<PaletteFollower *>(child)) delete old;
    }
    PaletteHub::instance()->add(new PaletteFollower(widget, std::move(style)));
}

} // namespace Starforge::Gui
