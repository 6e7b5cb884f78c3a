// starforge: the desktop app. Parses options, loads the profiles, wires the core to the window.

#include "core/config/profilemanager.h"
#include "core/config/profilestore.h"
#include "core/logging/logging.h"
#include "core/secrets/keychainsecretstore.h"
#include "gui/mainwindow.h"
#include "gui/userprompts.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QMessageBox>
#include <QLocale>
#include <QTextStream>
#include <QTranslator>

int main(int argc, char *argv[])
{
    using namespace Starforge;
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("starforge"));
    QApplication::setApplicationDisplayName(QStringLiteral("Starforge"));
    QApplication::setApplicationVersion(QStringLiteral(STARFORGE_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("starforge"));
    Logging::installRedactingMessageHandler();
    Logging::setDefaultFilterRules();
    // Catalogues are embedded (translations/); a locale without one keeps the English strings.
    QTranslator translator;
    if (translator.load(QLocale(), QStringLiteral("starforge"), QStringLiteral("_"), QStringLiteral(":/i18n"))) {
        QApplication::installTranslator(&translator);
    }

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Run NeMo-RL training on Kubernetes + KubeRay from the desktop."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption sandbox(QStringLiteral("sandbox"), QStringLiteral("Start on the embedded sandbox cluster."));
    const QCommandLineOption config(QStringLiteral("config"), QStringLiteral("Profiles file (default $STARFORGE_CONFIG_FILE, else ~/.config/starforge/profiles.ini)."),
                                    QStringLiteral("file"));
    const QCommandLineOption profiles(QStringLiteral("profiles"), QStringLiteral("Open the connection profiles dialog at start."));
    parser.addOption(sandbox);
    parser.addOption(config);
    parser.addOption(profiles);
    parser.process(app);

    QTextStream err(stderr);
    if (parser.isSet(sandbox)) {
        // The sandbox serves the API, but the app has no Kubernetes client to talk to it yet.
        err << "starforge: --sandbox: not built yet: the app has no Kubernetes client yet; starforge-sandbox "
               "runs on its own with kubectl (docs/sandbox.md)" << Qt::endl;
        return 2;
    }

    Config::ProfileStore store(parser.isSet(config) ? parser.value(config) : Config::ProfileStore::defaultFilePath());
    const auto loaded = store.load();
    if (!loaded) {
        // Do not start on an empty store: saving it would overwrite the file the user has.
        QMessageBox::critical(nullptr, QStringLiteral("Starforge"), loaded.error().message);
        err << "starforge: " << loaded.error().message << Qt::endl;
        return 1;
    }
    Secrets::KeychainSecretStore secrets;
    Config::ProfileManager manager(&store, &secrets);
    Gui::DialogPrompts prompts;
    Gui::MainWindow window(&manager, &prompts, QProcessEnvironment::systemEnvironment());
    window.show();
    if (parser.isSet(profiles) || store.profileNames().isEmpty()) {
        window.showProfilesDialog(); // a first start has nothing else to do
    }
    manager.moveMigratedSecrets(*loaded, &window, [&window](Result<void> moved) {
        if (!moved) {
            window.showStartupProblem(moved.error().message);
        }
    });
    return app.exec();
}
