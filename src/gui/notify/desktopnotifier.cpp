#include "gui/notify/desktopnotifier.h"

#include <QApplication>
#include <QDBusConnection>
#include <QDBusConnectionInterface>
#include <QDBusMessage>
#include <QDBusPendingCallWatcher>
#include <QDBusPendingReply>
#include <QIcon>
#include <QSystemTrayIcon>

namespace Starforge::Gui {

namespace {
const QString Path = QStringLiteral("/org/freedesktop/Notifications");
const QString Interface = QStringLiteral("org.freedesktop.Notifications");
}

DesktopNotifier::DesktopNotifier(QObject *parent, QString service) : QObject(parent), m_service(std::move(service))
{
    QDBusConnection bus = QDBusConnection::sessionBus();
    if (bus.isConnected()) {
        // The spec's signals: a click on the notification (its "default" action), and its closing.
        bus.connect(m_service, Path, Interface, QStringLiteral("ActionInvoked"), this, SLOT(onActionInvoked(uint, QString)));
        bus.connect(m_service, Path, Interface, QStringLiteral("NotificationClosed"), this, SLOT(onClosed(uint, uint)));
    }
}

DesktopNotifier::~DesktopNotifier() = default;

bool DesktopNotifier::hasNotificationService() const
{
    const QDBusConnection bus = QDBusConnection::sessionBus();
    return bus.isConnected() && bus.interface() && bus.interface()->isServiceRegistered(m_service).value();
}

void DesktopNotifier::notify(const QString &title, const QString &body, const QString &target, bool urgent)
{
    if (!m_enabled) return;
    if (hasNotificationService()) {
        ++m_sent;
        QDBusMessage call = QDBusMessage::createMethodCall(m_service, Path, Interface, QStringLiteral("Notify"));
        // Notify(app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout)
        const QVariantMap hints{{QStringLiteral("desktop-entry"), QStringLiteral("starforge")},
                                {QStringLiteral("urgency"), QVariant::fromValue<uchar>(urgent ? 2 : 1)}};
        call << QStringLiteral("Starforge") << uint(0) << QStringLiteral("starforge") << title << body
             << QStringList{QStringLiteral("default"), tr("Open")} << hints << int(-1);
        auto *watcher = new QDBusPendingCallWatcher(QDBusConnection::sessionBus().asyncCall(call), this);
        connect(watcher, &QDBusPendingCallWatcher::finished, this, [this, watcher, target] {
            watcher->deleteLater();
            const QDBusPendingReply<uint> reply = *watcher;
            if (!reply.isError()) m_targets.insert(reply.value(), target);
        });
        return;
    }
    // No notification service (a bare window manager): the tray's balloon, where there is a tray.
    if (!QSystemTrayIcon::isSystemTrayAvailable()) return;
    ++m_sent;
    if (!m_tray) {
        m_tray = new QSystemTrayIcon(QApplication::windowIcon(), this);
        connect(m_tray, &QSystemTrayIcon::messageClicked, this, [this] { Q_EMIT activated(m_trayTarget); });
    }
    m_tray->show();
    m_trayTarget = target;
    m_tray->showMessage(title, body, urgent ? QSystemTrayIcon::Warning : QSystemTrayIcon::Information);
}

void DesktopNotifier::onActionInvoked(uint id, const QString &action)
{
    const auto it = m_targets.constFind(id);
    if (it == m_targets.cend()) return;   // another app's, or one of ours already gone
    if (action == QLatin1String("default")) Q_EMIT activated(*it);
}

void DesktopNotifier::onClosed(uint id, uint)
{
    m_targets.remove(id);
}

} // namespace Starforge::Gui
