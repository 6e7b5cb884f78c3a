// `starforge --sandbox` as a user runs it: the app starts starforge-sandbox, connects a session
// profile to it (secrets in memory only, the user's profiles file untouched), kubectl can use the
// same cluster, and on SIGTERM the app stops and takes the sandbox with it.

#include "support/testutil.h"

#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace Starforge::Testing;

class TestAppSandbox : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // --help and --version on a terminal with no display at all: text and exit 0, not "could
    // not connect to display".
    void helpAndVersionWithoutADisplay()
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char *name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}) env.remove(QLatin1String(name));
        const auto run = [&](const QString &option) {
            QProcess app;
            app.setProcessEnvironment(env);
            app.start(QStringLiteral(SF_BIN_DIR "/starforge"), {option});
            const bool done = app.waitForFinished(20000);
            return std::make_tuple(done ? app.exitCode() : -1, QString::fromUtf8(app.readAllStandardOutput()), QString::fromUtf8(app.readAllStandardError()));
        };
        const auto [helpCode, help, helpErr] = run(QStringLiteral("--help"));
        QCOMPARE(helpCode, 0);
        QVERIFY2(help.contains(QStringLiteral("--sandbox")) && help.contains(QStringLiteral("JOBSPEC")), qPrintable(help + helpErr));
        QVERIFY2(!helpErr.contains(QStringLiteral("display")), qPrintable(helpErr));
        const auto [versionCode, version, versionErr] = run(QStringLiteral("--version"));
        QCOMPARE(versionCode, 0);
        QCOMPARE(version.trimmed(), QStringLiteral("starforge " STARFORGE_VERSION));
    }

    void startsConnectsAndStopsTheSandbox()
    {
        QTemporaryDir dir;
        const QString userProfiles = dir.filePath(QStringLiteral("profiles.ini"));
        const QByteArray original = "[settings]\nversion=1\nactiveProfile=lab\n\n[profiles]\nlab\\FORGE_K8S_NAMESPACE=research\n";
        QVERIFY(writeFile(userProfiles, original));

        QProcess app;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("STARFORGE_CONFIG_FILE"), userProfiles);
        // The session's log, which the app keeps quiet by default, tells whether it connected.
        env.insert(QStringLiteral("QT_LOGGING_RULES"), QStringLiteral("starforge.core.session.info=true"));
        app.setProcessEnvironment(env);
        app.start(QStringLiteral(SF_BIN_DIR "/starforge"), {QStringLiteral("--sandbox")});
        QVERIFY(app.waitForStarted());
        QByteArray err;
        QTRY_VERIFY_WITH_TIMEOUT((err += app.readAllStandardError()).contains("sandbox ready"), 30000);
        const auto m = QRegularExpression(QStringLiteral("KUBECONFIG=(\\S+)")).match(QString::fromUtf8(err));
        QVERIFY2(m.hasMatch(), err.constData());
        const QString kubeconfig = m.captured(1);
        // The app's own session connected to it (its log says so), not only the sandbox started.
        QTRY_VERIFY2_WITH_TIMEOUT((err += app.readAllStandardError()).contains("starforge.core.session: connected: Connected to https://127.0.0.1:"), err.constData(), 30000);
        QVERIFY2(err.contains("jobs are owned by sandbox-admin"), err.constData());
        QVERIFY2(!err.contains("connect failed"), err.constData());

        const QString kubectl = QStandardPaths::findExecutable(QStringLiteral("kubectl"));
        QVERIFY(!kubectl.isEmpty());
        QProcess get;
        get.start(kubectl, {QStringLiteral("--kubeconfig"), kubeconfig, QStringLiteral("--cache-dir"), dir.filePath(QStringLiteral("cache")),
                            QStringLiteral("get"), QStringLiteral("nodes"), QStringLiteral("-o"), QStringLiteral("name")});
        QVERIFY(get.waitForFinished(30000));
        QVERIFY2(get.exitCode() == 0, get.readAllStandardError().constData());
        QVERIFY(get.readAllStandardOutput().contains("node/"));

        QCOMPARE(readAll(userProfiles), original); // the session profile lives elsewhere
        ::kill(static_cast<pid_t>(app.processId()), SIGTERM);
        QVERIFY(app.waitForFinished(15000));
        QCOMPARE(app.exitStatus(), QProcess::NormalExit);
        QCOMPARE(app.exitCode(), 0);
        // The sandbox went with the app: its files are gone.
        QTRY_VERIFY_WITH_TIMEOUT(!QFile::exists(kubeconfig), 10000);
    }
};

QTEST_GUILESS_MAIN(TestAppSandbox)
#include "tst_app_sandbox.moc"
