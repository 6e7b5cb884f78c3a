// Desktop notifications through the freedesktop notification service on a private session bus
// (dbus-run-session), answered by a test double of org.freedesktop.Notifications: what Notify
// carries (summary, body, the "default" action, urgency, the desktop entry), a click
// (ActionInvoked "default") coming back as the job it was about, a closed notification and
// another app's left alone, and nothing sent when notifications are off or no service runs.

#include "gui/notify/desktopnotifier.h"

#include <QDBusConnection>
#include <QDBusConnectionInterface>
#include <QDBusMessage>
#include <QSignalSpy>
#include <QTest>

using Starforge::Gui::DesktopNotifier;

// The freedesktop notification service, as far as a client sees it.
class NotificationsDouble final : public QObject
{
    Q_OBJECT
    Q_CLASSINFO("D-Bus Interface", "org.freedesktop.Notifications")
public:
    struct Call
    {
        QString app, summary, body;
        QStringList actions;
        QVariantMap hints;
    };
    QList<Call> calls;
    uint nextId = 41;

public Q_SLOTS:
    uint Notify(const QString &app, uint, const QString &, const QString &summary, const QString &body, const QStringList &actions,
                const QVariantMap &hints, int)
    {
        calls.append({app, summary, body, actions, hints});
        return ++nextId;
    }
    QStringList GetCapabilities() { return {QStringLiteral("actions"), QStringLiteral("body")}; }
    void CloseNotification(uint) {}
};

namespace {

void emitSignal(const QString &name, const QVariantList &arguments)
{
    QDBusMessage signal = QDBusMessage::createSignal(QStringLiteral("/org/freedesktop/Notifications"), QStringLiteral("org.freedesktop.Notifications"), name);
    signal.setArguments(arguments);
    QDBusConnection::sessionBus().send(signal);
}

} // namespace

class TestDesktopNotifier : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void throughTheFreedesktopService()
    {
        QDBusConnection bus = QDBusConnection::sessionBus();
        QVERIFY2(bus.isConnected(), "no session bus: run under dbus-run-session");
        const QString service = QStringLiteral("org.freedesktop.Notifications");
        DesktopNotifier notifier(nullptr, service);
        QVERIFY(!notifier.hasNotificationService());

        NotificationsDouble double_;
        QVERIFY(bus.registerObject(QStringLiteral("/org/freedesktop/Notifications"), &double_, QDBusConnection::ExportAllSlots));
        QVERIFY(bus.registerService(service));
        QVERIFY(notifier.hasNotificationService());

        QSignalSpy activated(&notifier, &DesktopNotifier::activated);
        notifier.notify(QStringLiteral("grpo-math-bcdfgh failed"), QStringLiteral("ImagePullBackOff: not found."), QStringLiteral("bcdfgh"), true);
        QTRY_COMPARE(double_.calls.size(), 1);
        QCOMPARE(notifier.sent(), 1);
        const NotificationsDouble::Call call = double_.calls.first();
        QCOMPARE(call.app, QStringLiteral("Starforge"));
        QCOMPARE(call.summary, QStringLiteral("grpo-math-bcdfgh failed"));
        QCOMPARE(call.body, QStringLiteral("ImagePullBackOff: not found."));
        QCOMPARE(call.actions.value(0), QStringLiteral("default"));   // a click on it is an action
        QCOMPARE(call.hints.value(QStringLiteral("urgency")).toInt(), 2);
        QCOMPARE(call.hints.value(QStringLiteral("desktop-entry")).toString(), QStringLiteral("starforge"));
        const uint id = double_.nextId;

        // The user clicks it: the job comes back. Another app's notification is not ours.
        QTest::qWait(100);   // the reply with its id has come back
        emitSignal(QStringLiteral("ActionInvoked"), {id + 100, QStringLiteral("default")});
        emitSignal(QStringLiteral("ActionInvoked"), {id, QStringLiteral("default")});
        QTRY_COMPARE(activated.size(), 1);
        QCOMPARE(activated.first().first().toString(), QStringLiteral("bcdfgh"));
        // Closed, a late click does nothing.
        emitSignal(QStringLiteral("NotificationClosed"), {id, 2u});
        QTest::qWait(100);
        emitSignal(QStringLiteral("ActionInvoked"), {id, QStringLiteral("default")});
        QTest::qWait(200);
        QCOMPARE(activated.size(), 1);

        // Off: nothing is sent.
        notifier.setEnabled(false);
        notifier.notify(QStringLiteral("x"), QStringLiteral("y"), QStringLiteral("cdfghj"));
        QTest::qWait(200);
        QCOMPARE(double_.calls.size(), 1);
        QCOMPARE(notifier.sent(), 1);
        bus.unregisterService(service);
        bus.unregisterObject(QStringLiteral("/org/freedesktop/Notifications"));
    }
};

QTEST_MAIN(TestDesktopNotifier)
#include "tst_desktopnotifier.moc"
