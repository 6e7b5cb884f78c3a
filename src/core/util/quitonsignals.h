#pragma once

// SIGTERM and SIGINT end the event loop (app.quit()) instead of the process, so destructors run:
// the sandbox removes its files, the app stops the sandbox it started.

class QCoreApplication;

namespace Starforge {

void quitOnTerminationSignals(QCoreApplication &app);

} // namespace Starforge
