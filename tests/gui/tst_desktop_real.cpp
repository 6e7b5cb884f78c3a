// The tray icon and desktop notifications against real desktop services, not doubles: dunst (a
// freedesktop notification daemon) and trayer (an XEmbed system tray) under a virtual X server
// on a private session bus (tests/gui/desktop_real.sh starts them). A notification reaches the
// daemon with its summary and body and its default action comes back as the job; with the tray
// on, closing the window keeps the app running behind the tray icon.

#include "core/config/profilemanager.h"
#include "core/job/jobrecord.h"
#include "gui/mainwindow.h"
#include "gui/notify/desktopnotifier.h"
#include "gui/notify/jobstray.h"
#include "scriptedprompts.h"
#include "support/memorysecretstore.h"
#include "windowsetup.h"

#include <QAction>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenu>
#include <QProcess>
#include <QSignalSpy>
#include <QSystemTrayIcon>
#include <QTemporaryDir>
#include <QTest>

#include <optional>

using namespace Starforge;

namespace {

// dunstctl's output, or nothing when it failed.
std::optional<QByteArray> dunstctl(const QStringList &arguments)
{
    QProcess p;
    p.start(QStringLiteral("dunstctl"), arguments);
    if (!p.waitForFinished(10000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        qWarning() << "dunstctl" << arguments << p.readAllStandardError();
        return std::nullopt;
    }
    return p.readAllStandardOutput().trimmed();
}

} // namespace

class TestDesktopReal : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QGuiApplication::platformName() == u"xcb", "run under X (desktop_real.sh)");
        QVERIFY2(dunstctl({QStringLiteral("is-paused")}).value_or(QByteArray()) == "false", "dunst is not running");
    }

    void aNotificationReachesTheDaemonAndItsClickComesBack()
    {
        Gui::DesktopNotifier notifier;
        QTRY_VERIFY_WITH_TIMEOUT(notifier.hasNotificationService(), 10000);
        QSignalSpy activated(&notifier, &Gui::DesktopNotifier::activated);
        notifier.notify(QStringLiteral("grpo-math-bcdfgh failed"), QStringLiteral("ImagePullBackOff: the image was not found."), QStringLiteral("bcdfgh"), true);
        QTRY_COMPARE(notifier.sent(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(dunstctl({QStringLiteral("count"), QStringLiteral("displayed")}).value_or(QByteArray()), QByteArray("1"), 10000);

        // The person clicks it: the daemon invokes its default action, which names the job.
        QVERIFY(dunstctl({QStringLiteral("action"), QStringLiteral("0")}));
        QTRY_COMPARE_WITH_TIMEOUT(activated.size(), 1, 10000);
        QCOMPARE(activated.first().first().toString(), QStringLiteral("bcdfgh"));

        // What the daemon kept: our summary, body and application name (dunst's history has no
        // urgency; tst_desktopnotifier checks the hint as sent).
        dunstctl({QStringLiteral("close-all")});
        QByteArray history;
        QTRY_VERIFY_WITH_TIMEOUT((history = dunstctl({QStringLiteral("history")}).value_or(QByteArray())).contains("grpo-math-bcdfgh failed"), 10000);
        const QJsonArray entries = QJsonDocument::fromJson(history).object().value(QStringLiteral("data")).toArray().first().toArray();
        bool found = false;
        for (const QJsonValue &entry : entries) {
            const QJsonObject o = entry.toObject();
            if (o[QStringLiteral("summary")][QStringLiteral("data")].toString() != u"grpo-math-bcdfgh failed") continue;
            found = true;
            QCOMPARE(o[QStringLiteral("body")][QStringLiteral("data")].toString(), QStringLiteral("ImagePullBackOff: the image was not found."));
            QCOMPARE(o[QStringLiteral("appname")][QStringLiteral("data")].toString(), QStringLiteral("Starforge"));
        }
        QVERIFY2(found, history.constData());
    }

    void closingTheWindowKeepsTheAppBehindTheTray()
    {
        QTRY_VERIFY_WITH_TIMEOUT(QSystemTrayIcon::isSystemTrayAvailable(), 10000);
        QTemporaryDir dir;
        Testing::WindowSetup setup(dir.filePath(QStringLiteral("profiles.ini")));
        auto &[store, secrets, manager, prompts] = setup;
        Gui::MainWindow window(&manager, &prompts, QProcessEnvironment());
        window.findChild<QAction *>(QStringLiteral("trayAction"))->setChecked(true);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.tray()->keepsRunning());
        Job::JobRecord running;
        running.id = QStringLiteral("bcdfgh");
        running.rayJobName = QStringLiteral("grpo-math-bcdfgh");
        running.state = Job::JobState::Running;
        window.tray()->setActiveJobs({running});
        QCOMPARE(window.tray()->toolTip(), QStringLiteral("Starforge: 1 active job(s)"));

        // Closing hides the window; the app goes on (the close was refused) and says so once.
        QVERIFY(!window.close());
        QTRY_VERIFY(!window.isVisible());
        QCOMPARE(window.notifier()->sent(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(dunstctl({QStringLiteral("count"), QStringLiteral("displayed")}).value_or(QByteArray()), QByteArray("1"), 10000);
        // The tray's job entry brings the window back with the job.
        window.tray()->menu()->actions().first()->trigger();
        QTRY_VERIFY(window.isVisible());
        dunstctl({QStringLiteral("close-all")});
    }
};

QTEST_MAIN(TestDesktopReal)
#include "tst_desktop_real.moc"
