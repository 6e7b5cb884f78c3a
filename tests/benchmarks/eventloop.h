#pragma once

// Waiting in a benchmark: the event loop runs until a condition holds. Not QTest::qWaitFor,
// which sleeps 10 ms between rounds of events (a second over the hundred pages of a pod list)
// and throttles Qt's HTTP uploads.

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>

namespace Starforge::Bench {

// Runs the event loop until done() or the timeout; false on timeout.
template <typename F>
bool spin(F done, int timeoutMs)
{
    QElapsedTimer clock;
    clock.start();
    QTimer tick;   // wakes the loop to look at done() and the clock when nothing else does
    tick.start(10);
    while (!done()) {
        if (clock.elapsed() >= timeoutMs) return false;
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
    }
    return true;
}

} // namespace Starforge::Bench
