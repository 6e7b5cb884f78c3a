#pragma once

// starforge-cli as an object: parses the command line, finds the command in one dispatch table
// (cliapplication.cpp), runs it, and reports its exit code with finished(). The commands live
// in src/cli/commands, one file each (or a few close relatives); see command.h for their shape.

#include "cli/command.h"

#include <QObject>
#include <QProcessEnvironment>
#include <QStringList>
#include <QTextStream>

#include <memory>

namespace Starforge::Secrets {
class SecretStore;
}

namespace Starforge::Cli {

class CliApplication final : public QObject
{
    Q_OBJECT
public:
    CliApplication(QStringList arguments, QProcessEnvironment environment, Secrets::SecretStore *secrets,
                   QTextStream &out, QTextStream &err, QObject *parent = nullptr);
    ~CliApplication() override;

    // Runs the command; finished() follows, possibly later from the event loop.
    void start();
    // Ctrl-C, handed to the running command (a submission is cancelled and cleaned up, a wait
    // or a log follow stops). A second interrupt quits at once.
    void interrupt();

    // stdin is a terminal (main() asks isatty): exec credential plugins may then ask the person.
    void setTerminal(bool terminal) { m_terminal = terminal; }

    // The command paths of the dispatch table ("profile list", "submit", ...), in usage order.
    static QStringList commandNames();

Q_SIGNALS:
    void finished(int exitCode);

private:
    void finish(int exitCode);
    void failEarly(const Error &error, bool json);
    void printUsage();

    QStringList m_rawArguments;
    QProcessEnvironment m_environment;
    Secrets::SecretStore *m_secrets;
    QTextStream &m_out;
    QTextStream &m_err;
    bool m_terminal = false;
    std::unique_ptr<Command> m_command;
    bool m_finished = false;
};

} // namespace Starforge::Cli
