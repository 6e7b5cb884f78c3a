#pragma once

// Desktop notifications (docs/jobs.md, "Notifications"): through the freedesktop notification
// service over D-Bus (org.freedesktop.Notifications, the one GNOME, KDE, XFCE, dunst and mako
// all answer), with a "default" action so a click reaches the app; where no such service runs,
// a QSystemTrayIcon message instead. A click on either emits activated() with the target the
// notification was sent for (a job id, a pod name). Off, nothing is shown.

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QString>

class QSystemTrayIcon;

namespace Starforge::Gui {

class DesktopNotifier final : public QObject
{
    Q_OBJECT
public:
    // service: the D-Bus name to talk to (tests give their double's).
    explicit DesktopNotifier(QObject *parent = nullptr, QString service = QStringLiteral("org.freedesktop.Notifications"));
    ~DesktopNotifier() override;

    void setEnabled(bool enabled) { m_enabled = enabled; }
    bool isEnabled() const { return m_enabled; }

    // Shows it; target comes back with activated() when the user clicks it.
    void notify(const QString &title, const QString &body, const QString &target, bool urgent = false);
    // Whether the freedesktop service answers on the session bus now.
    bool hasNotificationService() const;
    // Sent and shown so far (tests).
    int sent() const { return m_sent; }

Q_SIGNALS:
    void activated(const QString &target);

private Q_SLOTS:
    // The D-Bus signals, connected by name (QDBusConnection::connect takes slots).
    void onActionInvoked(uint id, const QString &action);
    void onClosed(uint id, uint reason);

private:
    QString m_service;
    bool m_enabled = true;
    int m_sent = 0;
    QHash<uint, QString> m_targets;   // notification id -> target, until it closes
    QSystemTrayIcon *m_tray = nullptr;
    QString m_trayTarget;
};

} // namespace Starforge::Gui
