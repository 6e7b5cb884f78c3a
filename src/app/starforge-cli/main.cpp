// starforge-cli: the core, scriptable. All behaviour lives in the starforge_cli library.

#include "cli/cliapplication.h"
#include "core/logging/logging.h"
#include "core/secrets/keychainsecretstore.h"

#include <QCoreApplication>
#include <QProcessEnvironment>
#include <QSocketNotifier>
#include <QTextStream>
#include <QTimer>

#include <csignal>
#include <memory>
#include <sys/socket.h>
#include <unistd.h>

namespace {

// SIGINT and SIGTERM reach the event loop through a socket pair (a handler may only write),
// so a submission is cancelled and cleaned up instead of leaving an unfinished upload.
int signalSockets[2] = {-1, -1};

void onSignal(int)
{
    const char byte = 1;
    [[maybe_unused]] const auto written = ::write(signalSockets[0], &byte, 1);
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("starforge"));
    QCoreApplication::setApplicationVersion(QStringLiteral(STARFORGE_VERSION));
    Starforge::Logging::installRedactingMessageHandler();
    Starforge::Logging::setDefaultFilterRules();

    QTextStream out(stdout);
    QTextStream err(stderr);
    Starforge::Secrets::KeychainSecretStore secrets;
    Starforge::Cli::CliApplication cli(app.arguments().mid(1), QProcessEnvironment::systemEnvironment(), &secrets, out, err);
    QObject::connect(&cli, &Starforge::Cli::CliApplication::finished, &app, [&app](int code) { app.exit(code); });
    std::unique_ptr<QSocketNotifier> signalNotifier;
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, signalSockets) == 0) {
        signalNotifier = std::make_unique<QSocketNotifier>(signalSockets[1], QSocketNotifier::Read);
        QObject::connect(signalNotifier.get(), &QSocketNotifier::activated, &cli, [&cli] {
            char byte = 0;
            [[maybe_unused]] const auto read = ::read(signalSockets[1], &byte, 1);
            cli.interrupt();
        });
        struct sigaction action = {};
        action.sa_handler = onSignal;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART;
        sigaction(SIGINT, &action, nullptr);
        sigaction(SIGTERM, &action, nullptr);
    }
    QTimer::singleShot(0, &cli, &Starforge::Cli::CliApplication::start);
    return app.exec();
}
