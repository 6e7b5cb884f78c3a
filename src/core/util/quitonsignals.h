#pragma once

// SIGTERM and SIGINT reach the event loop instead of ending the process, so destructors and
// clean-ups run: the sandbox removes its files, the app stops the sandbox it started,
// starforge-cli cancels a submission and removes what it made.

#include <functional>

class QCoreApplication;
class QObject;

namespace Starforge {

// Runs handler on context's thread for every SIGTERM or SIGINT (once per process: a second
// call does nothing).
void onTerminationSignals(QObject *context, std::function<void()> handler);

// app.quit() on SIGTERM or SIGINT.
void quitOnTerminationSignals(QCoreApplication &app);

} // namespace Starforge
