#include "gui/palettefollow.h"

#include <QEvent>
#include <QGuiApplication>
#include <QObject>
#include <QWidget>

namespace Starforge::Gui {

namespace {

// Lives as the widget's child: writes the sheet again when the palette changes.
class PaletteFollower final : public QObject
{
public:
    PaletteFollower(QWidget *widget, std::function<QString(const QPalette &)> style)
        : QObject(widget)
        , m_widget(widget)
        , m_style(std::move(style))
    {
        apply();
        // The application's palette change reaches every widget as ApplicationPaletteChange;
        // the widget's own sheet does not change its palette, so this does not loop.
        widget->installEventFilter(this);
    }

    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (watched == m_widget && (event->type() == QEvent::ApplicationPaletteChange || event->type() == QEvent::ThemeChange)) apply();
        return false;
    }

private:
    void apply() { m_widget->setStyleSheet(m_style(QGuiApplication::palette())); }

    QWidget *m_widget;
    std::function<QString(const QPalette &)> m_style;
};

} // namespace

void followPalette(QWidget *widget, std::function<QString(const QPalette &)> style)
{
    // One follower per widget: a later call replaces what the widget follows.
    for (QObject *child : widget->children()) {
        if (auto *old = dynamic_cast<PaletteFollower *>(child)) delete old;
    }
    new PaletteFollower(widget, std::move(style));
}

} // namespace Starforge::Gui
