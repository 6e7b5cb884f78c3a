#include "core/util/crashstack.h"

#include <csignal>
#include <cstring>
#include <execinfo.h>
#include <unistd.h>

namespace Starforge {

namespace {

const char *g_program = "starforge";
constexpr int CrashSignals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};

void writeText(const char *text)
{
    // Only async-signal-safe calls in here: write(2), not stdio.
    ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
    (void)ignored;
}

void onCrash(int signal)
{
    writeText("\n");
    writeText(g_program);
    writeText(" crashed (");
    writeText(sigabbrev_np(signal) ? sigabbrev_np(signal) : "signal");
    // untranslated: written from a signal handler, where nothing may allocate or look up a catalogue
    writeText("); its stack, for a bug report (addr2line -Cfe BINARY OFFSET names each frame):\n");
    void *frames[64];
    const int count = backtrace(frames, 64);
    backtrace_symbols_fd(frames, count, STDERR_FILENO);
    // The default action now: the process ends by this signal, as it would have.
    std::signal(signal, SIG_DFL);
    std::raise(signal);
}

} // namespace

void printStackOnCrash(const char *programName)
{
    static bool installed = false;
    if (installed) return;
    installed = true;
    g_program = programName;
    // backtrace() loads libgcc on its first call, which allocates: done now, not in the handler
    // of a crash in the allocator.
    void *warm[1];
    (void)backtrace(warm, 1);
    struct sigaction action = {};
    action.sa_handler = onCrash;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND | SA_ONSTACK;
    for (int signal : CrashSignals) sigaction(signal, &action, nullptr);
}

} // namespace Starforge
