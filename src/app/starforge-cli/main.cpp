// starforge-cli: the core, scriptable. All behaviour lives in the starforge_cli library.

#include "cli/cliapplication.h"
#include "core/i18n/translations.h"
#include "core/logging/logging.h"
#include "core/secrets/keychainsecretstore.h"
#include "core/util/crashstack.h"
#include "core/util/quitonsignals.h"

#include <QCoreApplication>
#include <QProcessEnvironment>
#include <QTextStream>
#include <QTimer>

#include <unistd.h>

int main(int argc, char *argv[])
{
    Starforge::printStackOnCrash("starforge-cli");
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("starforge"));
    QCoreApplication::setApplicationVersion(QStringLiteral(STARFORGE_VERSION));
    Starforge::Logging::installRedactingMessageHandler();
    Starforge::Logging::setDefaultFilterRules();
    // Messages in the chosen language ($STARFORGE_LANGUAGE, else the system's), except under
    // --json: that output is for scripts and stays English and locale-independent. The same
    // for settings --markdown, which writes docs/configuration.md (scripts/update-docs.sh).
    const QStringList arguments = app.arguments().mid(1);
    if (!arguments.contains(QStringLiteral("--json")) && !arguments.contains(QStringLiteral("--markdown"))) {
        Starforge::I18n::installTranslators();
    }

    QTextStream out(stdout);
    QTextStream err(stderr);
    Starforge::Secrets::KeychainSecretStore secrets;
    Starforge::Cli::CliApplication cli(arguments, QProcessEnvironment::systemEnvironment(), &secrets, out, err);
    cli.setTerminal(isatty(STDIN_FILENO) == 1);
    QObject::connect(&cli, &Starforge::Cli::CliApplication::finished, &app, [&app](int code) { app.exit(code); });
    // Ctrl-C cancels a submission and cleans up rather than killing the process mid-upload.
    Starforge::onTerminationSignals(&cli, [&cli] { cli.interrupt(); });
    QTimer::singleShot(0, &cli, &Starforge::Cli::CliApplication::start);
    return app.exec();
}
