// starforge: the desktop app. Parses options, loads the profiles, wires the core to the window.

#include "core/config/embeddedsandbox.h"
#include "core/config/profilemanager.h"
#include "core/config/profilestore.h"
#include "core/i18n/translations.h"
#include "core/logging/logging.h"
#include "core/secrets/keychainsecretstore.h"
#include "core/util/crashstack.h"
#include "core/util/quitonsignals.h"
#include "gui/colorscheme.h"
#include "gui/mainwindow.h"
#include "gui/userprompts.h"

#include <QApplication>
#include <QCoreApplication>
#include <QFileInfo>
#include <QCommandLineParser>
#include <QMessageBox>
#include <QTemporaryDir>
#include <QTextStream>
#include <QTimer>

#include <memory>

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text
{
    Q_DECLARE_TR_FUNCTIONS(StarforgeApp)
};

// Logs "main window: first frame painted" (starforge.gui, info: off unless QT_LOGGING_RULES
// turns it on) on the event-loop turn after the window's first paint, which has then been
// flushed to the window. bench_start times the app's start to this line.
class FirstFrameLogger final : public QObject
{
public:
    using QObject::QObject;

protected:
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (event->type() == QEvent::Paint) {
            watched->removeEventFilter(this);
            QTimer::singleShot(0, this, [this] {
                qCInfo(Starforge::lcGui) << "main window: first frame painted";   // untranslated: a log line, which bench_start waits for
                deleteLater();
            });
        }
        return false;
    }
};

// Made once the catalogues are installed: the descriptions are translated when it is built.
struct Options
{
    QCommandLineOption sandbox{QStringLiteral("sandbox"), Text::tr("Start a local sandbox cluster (starforge-sandbox) and connect to it.")};
    QCommandLineOption config{QStringLiteral("config"), Text::tr("Profiles file (default $STARFORGE_CONFIG_FILE, else ~/.config/starforge/profiles.ini)."),
                              Text::tr("file")};
    QCommandLineOption profiles{QStringLiteral("profiles"), Text::tr("Open the connection profiles dialog at start.")};
    QCommandLineOption colorScheme{QStringLiteral("color-scheme"),
                                   Text::tr("Light or dark for this run: system (as the desktop says), light or dark. "
                                            "View › Appearance keeps a choice."),
                                   Text::tr("scheme")};

    void addTo(QCommandLineParser &parser) const
    {
        parser.setApplicationDescription(Text::tr("Run NeMo-RL training on Kubernetes + KubeRay from the desktop."));
        parser.addHelpOption();
        parser.addVersionOption();
        parser.addOption(sandbox);
        parser.addOption(config);
        parser.addOption(profiles);
        parser.addOption(colorScheme);
        parser.addPositionalArgument(QStringLiteral("job"), Text::tr("A JobSpec file or a code folder to open in the submission wizard."),
                                     Text::tr("[JOBSPEC | FOLDER]"));
    }
};

void nameTheApplication()
{
    QCoreApplication::setApplicationName(QStringLiteral("starforge"));
    QCoreApplication::setApplicationVersion(QStringLiteral(STARFORGE_VERSION));
}

// --help and --version answer on the terminal, with no display: a QApplication would first
// need one ("could not connect to display") only to print text.
bool asksForTextOnly(int argc, char *argv[])
{
    for (int i = 1; i < argc; ++i) {
        const QByteArray arg(argv[i]);
        if (arg == "--") break;
        if (arg == "-h" || arg == "--help" || arg == "-?" || arg == "--help-all" || arg == "-v" || arg == "--version") return true;
    }
    return false;
}

} // namespace

int main(int argc, char *argv[])
{
    Starforge::printStackOnCrash("starforge");
    using namespace Starforge;
    if (asksForTextOnly(argc, argv)) {
        QCoreApplication core(argc, argv);
        nameTheApplication();
        I18n::installTranslators(I18n::startLanguage());
        const Options options;
        QCommandLineParser parser;
        options.addTo(parser);
        parser.process(core);   // prints and exits
        return 0;
    }
    QApplication app(argc, argv);
    nameTheApplication();
    QApplication::setApplicationDisplayName(QStringLiteral("Starforge"));
    QApplication::setDesktopFileName(QStringLiteral("starforge"));
    Logging::installRedactingMessageHandler();
    Logging::setDefaultFilterRules();
    // Catalogues are embedded (translations/); a language without one keeps the English strings.
    // View › Language's choice, unless $STARFORGE_LANGUAGE sets one for this run.
    I18n::installTranslators(I18n::startLanguage());

    const Options options;
    QCommandLineParser parser;
    options.addTo(parser);
    parser.process(app);
    const QCommandLineOption &sandbox = options.sandbox;
    const QCommandLineOption &config = options.config;
    const QCommandLineOption &profiles = options.profiles;
    if (const QString scheme = parser.value(options.colorScheme); parser.isSet(options.colorScheme) && scheme != u"system" && scheme != u"light" && scheme != u"dark") {
        QTextStream(stderr) << Text::tr("starforge: --color-scheme is system, light or dark, not %1").arg(scheme) << Qt::endl;
        return 2;
    }
    if (parser.positionalArguments().size() > 1) {
        QTextStream(stderr) << Text::tr("starforge: give one JobSpec or folder, not %1").arg(parser.positionalArguments().size()) << Qt::endl;
        return 2;
    }
    // Relative to where the app was started, before anything changes the current folder.
    const QString jobArgument = parser.positionalArguments().isEmpty() ? QString() : QFileInfo(parser.positionalArguments().first()).absoluteFilePath();

    quitOnTerminationSignals(app);
    QTextStream err(stderr);
    const bool onSandbox = parser.isSet(sandbox);
    // On the sandbox the session has its own profiles file: the user's stays untouched.
    QTemporaryDir sessionDir;
    const QString profilesFile = onSandbox ? sessionDir.filePath(QStringLiteral("profiles.ini"))
                                           : parser.isSet(config) ? parser.value(config) : Config::ProfileStore::defaultFilePath();
    Config::ProfileStore store(profilesFile);
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
    std::unique_ptr<Gui::MainWindow> window;
    const auto openWindow = [&](const QProcessEnvironment &environment) {
        window = std::make_unique<Gui::MainWindow>(&manager, &prompts, environment);
        if (parser.isSet(options.colorScheme)) window->colorScheme()->setMode(Gui::ColorScheme::modeFromName(parser.value(options.colorScheme)));
        if (lcGui().isInfoEnabled()) {
            window->installEventFilter(new FirstFrameLogger(window.get()));
        }
        window->show();
        if (!jobArgument.isEmpty()) {
            window->openWizardAt(jobArgument);
        } else if (!onSandbox && parser.isSet(profiles)) {
            window->showProfilesDialog();
        }   // a first start (no profiles) shows the window's three ways in
        manager.moveMigratedSecrets(*loaded, window.get(), [w = window.get()](Result<void> moved) {
            if (!moved) {
                w->showStartupProblem(moved.error().message);
            }
        });
    };

    Config::EmbeddedSandbox embedded;
    if (onSandbox) {
        QObject::connect(&embedded, &Config::EmbeddedSandbox::failed, &app, [&](const QString &message) {
            err << "starforge: --sandbox: " << message << Qt::endl;
            QMessageBox::critical(nullptr, QStringLiteral("Starforge"), message);
            QApplication::exit(1);
        });
        QObject::connect(&embedded, &Config::EmbeddedSandbox::ready, &app, [&](const Config::SandboxConnection &connection) {
            // Secrets stay in memory: they reach the app as environment values, never the keychain.
            QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
            for (auto it = connection.secrets.cbegin(); it != connection.secrets.cend(); ++it) {
                environment.insert(it.key(), it.value());
            }
            manager.setValues(QStringLiteral("sandbox"), connection.settings, true, &app, [&, environment](Result<void> saved) {
                if (saved) {
                    saved = manager.setActiveProfile(QStringLiteral("sandbox"));
                }
                if (!saved) {
                    err << "starforge: --sandbox: " << saved.error().message << Qt::endl;
                    QApplication::exit(1);
                    return;
                }
                err << Text::tr("starforge: sandbox ready; kubectl: KUBECONFIG=%1").arg(connection.kubeconfig) << Qt::endl;
                openWindow(environment);
            });
        });
        embedded.start(QCoreApplication::applicationDirPath() + QStringLiteral("/starforge-sandbox"));
    } else {
        openWindow(QProcessEnvironment::systemEnvironment());
    }
    return app.exec();
}
