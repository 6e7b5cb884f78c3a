// starforge-sandbox-shim: what the sandbox's kubelet starts for each container run, in the role
// a containerd shim plays. It owns every process the container starts, so that none outlives it:
//
//   starforge-sandbox-shim [--grace-ms MS] [--error-file FILE]
//                          [--mount HOST CONTAINER | --mount-ro HOST CONTAINER]... -- PROGRAM [ARG...]
//
// - It is a child subreaper (PR_SET_CHILD_SUBREAPER): a process the container orphans, even one
//   that left the container's process group with setsid(), becomes the shim's child, not init's.
// - When the container's main process ends, everything else of the container is killed, as a
//   runtime does when a container's PID 1 exits; the shim then exits with the main process's
//   code (128 + N for a death by signal N, as container runtimes report it).
// - SIGTERM (a pod deletion) is passed to the main process; after MS milliseconds (default 2000)
//   everything left is killed.
// - SIGHUP kills everything at once. The kubelet sets it as the shim's parent-death signal, so
//   when the sandbox dies, even by SIGKILL, its containers die with it.
// - With --mount options the container runs in a private mount namespace with each volume at its
//   path (privateroot.h); without, on the host's file system as it is.
// - The container runs with umask 077: what a job writes (under the sandbox's state directory
//   too) is its owner's alone.
// - If the container cannot be started (a mount fails, the program cannot be executed), the reason
//   goes to FILE and the shim exits 128, as runc fails a container's creation.
//
// Plain POSIX and Linux calls, no Qt: the shim is small and starts fast.

#include "sandbox/shim/privateroot.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using Starforge::Sandbox::Shim::VolumeMount;

namespace {

constexpr int StartFailedExitCode = 128;

struct Options
{
    long graceMs = 2000;
    std::string errorFile;
    std::vector<VolumeMount> mounts;
    std::vector<char *> command; // null-terminated
};

[[noreturn]] void usage(const char *why)
{
    std::fprintf(stderr,
                 "starforge-sandbox-shim: %s\nusage: starforge-sandbox-shim [--grace-ms MS] [--error-file FILE] "
                 "[--mount HOST CONTAINER | --mount-ro HOST CONTAINER]... -- PROGRAM [ARG...]\n",
                 why);
    std::exit(2);
}

Options parse(int argc, char **argv)
{
    Options o;
    int i = 1;
    for (; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--") {
            ++i;
            break;
        }
        if (arg == "--grace-ms" && i + 1 < argc) {
            o.graceMs = std::strtol(argv[++i], nullptr, 10);
        } else if (arg == "--error-file" && i + 1 < argc) {
            o.errorFile = argv[++i];
        } else if ((arg == "--mount" || arg == "--mount-ro") && i + 2 < argc) {
            o.mounts.push_back(VolumeMount { argv[i + 1], argv[i + 2], arg == "--mount-ro" });
            i += 2;
        } else {
            usage(("unknown or incomplete option " + arg).c_str());
        }
    }
    if (i >= argc) {
        usage("no program given after --");
    }
    for (; i < argc; ++i)
        o.command.push_back(argv[i]);
    o.command.push_back(nullptr);
    return o;
}

// The shim's children right now (each /proc/N/stat names its parent): the container's main
// process, and whatever was orphaned to the shim as subreaper.
std::vector<pid_t> children()
{
    std::vector<pid_t> found;
    const pid_t self = ::getpid();
    DIR *proc = ::opendir("/proc");
    if (!proc) {
        return found;
    }
    while (const dirent *entry = ::readdir(proc)) {
        char *end = nullptr;
        const long pid = std::strtol(entry->d_name, &end, 10);
        if (pid <= 0 || *end != '\0') {
            continue;
        }
        char path[64];
        std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            continue;
        }
        char buffer[512];
        const ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
        ::close(fd);
        if (n <= 0) {
            continue;
        }
        buffer[n] = '\0';
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
        const char *close = std::strrchr(buffer, ')');
        char state = 0;
        long ppid = 0;
        if (close && std::sscanf(close + 1, " %c %ld", &state, &ppid) == 2 && ppid == self) {
            found.push_back(static_cast<pid_t>(pid));
        }
    }
    ::closedir(proc);
    return found;
}

struct Outcome
{
    bool mainDone = false;
    int mainStatus = 0;
};

void noteExit(pid_t pid, int status, pid_t mainPid, Outcome &outcome)
{
    if (pid == mainPid && !outcome.mainDone) {
        outcome.mainDone = true;
        outcome.mainStatus = status;
    }
}

// SIGKILL to every descendant, until none is left. A killed process's children are orphaned to
// the shim before it can be reaped, so each round finds the next generation.
void killEverything(pid_t mainPid, Outcome &outcome)
{
    for (;;) {
        for (const pid_t child : children()) {
            ::kill(child, SIGKILL);
        }
        int status = 0;
        const pid_t pid = ::waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            return; // ECHILD: nothing left
        }
        noteExit(pid, status, mainPid, outcome);
    }
}

void writeError(const std::string &file, const std::string &message)
{
    std::fprintf(stderr, "starforge-sandbox-shim: %s\n", message.c_str());
    if (file.empty()) {
        return;
    }
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
        (void)!::write(fd, message.data(), message.size());
        ::close(fd);
    }
}

timespec remaining(const timespec &deadline)
{
    timespec now {};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    long long ns = (deadline.tv_sec - now.tv_sec) * 1000000000LL + (deadline.tv_nsec - now.tv_nsec);
    if (ns < 0)
        ns = 0;
    return timespec { static_cast<time_t>(ns / 1000000000LL), static_cast<long>(ns % 1000000000LL) };
}

} // namespace

int main(int argc, char **argv)
{
    const Options options = parse(argc, argv);
    if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
        writeError(options.errorFile, std::string("cannot become a subreaper: ") + std::strerror(errno));
        return StartFailedExitCode;
    }
    sigset_t handled;
    sigemptyset(&handled);
    for (const int s : { SIGCHLD, SIGTERM, SIGINT, SIGHUP })
        sigaddset(&handled, s);
    sigprocmask(SIG_BLOCK, &handled, nullptr);

    char cwd[4096];
    const std::string workingDir = ::getcwd(cwd, sizeof cwd) ? cwd : "";
    // The child reports a failure before exec here; a successful exec closes the pipe empty.
    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0) {
        writeError(options.errorFile, std::string("pipe: ") + std::strerror(errno));
        return StartFailedExitCode;
    }
    const pid_t mainPid = ::fork();
    if (mainPid < 0) {
        writeError(options.errorFile, std::string("fork: ") + std::strerror(errno));
        return StartFailedExitCode;
    }
    if (mainPid == 0) {
        ::close(report[0]);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        ::umask(077);
        std::string error;
        if (!options.mounts.empty() && !Starforge::Sandbox::Shim::enterPrivateRoot(options.mounts, workingDir, error)) {
            (void)!::write(report[1], error.data(), error.size());
            ::_exit(127);
        }
        ::execvp(options.command[0], options.command.data());
        error = std::string("exec: \"") + options.command[0] + "\": " + std::strerror(errno);
        (void)!::write(report[1], error.data(), error.size());
        ::_exit(127);
    }
    ::close(report[1]);
    std::string startError;
    char buffer[1024];
    for (ssize_t n; (n = ::read(report[0], buffer, sizeof buffer)) != 0;) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        startError.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(report[0]);

    Outcome outcome;
    bool terminating = false;
    timespec deadline {};
    while (!outcome.mainDone && startError.empty()) {
        siginfo_t info {};
        int signal = 0;
        if (terminating) {
            const timespec left = remaining(deadline);
            signal = ::sigtimedwait(&handled, &info, &left);
            if (signal < 0 && errno == EAGAIN) {
                break; // the grace period is over
            }
        } else {
            signal = ::sigwaitinfo(&handled, &info);
        }
        if (signal == SIGCHLD) {
            int status = 0;
            for (pid_t pid; (pid = ::waitpid(-1, &status, WNOHANG)) > 0;) {
                noteExit(pid, status, mainPid, outcome);
            }
        } else if ((signal == SIGTERM || signal == SIGINT) && !terminating) {
            // A pod deletion: the main process is asked to stop, and given the grace period.
            terminating = true;
            ::clock_gettime(CLOCK_MONOTONIC, &deadline);
            deadline.tv_sec += options.graceMs / 1000;
            deadline.tv_nsec += (options.graceMs % 1000) * 1000000L;
            if (deadline.tv_nsec >= 1000000000L) {
                deadline.tv_sec += 1;
                deadline.tv_nsec -= 1000000000L;
            }
            ::kill(mainPid, SIGTERM);
        } else if (signal == SIGHUP) {
            break; // the sandbox is gone, or stops now
        }
    }
    killEverything(mainPid, outcome);

    if (!startError.empty()) {
        writeError(options.errorFile, startError);
        return StartFailedExitCode;
    }
    if (!outcome.mainDone || WIFSIGNALED(outcome.mainStatus)) {
        return 128 + (outcome.mainDone ? WTERMSIG(outcome.mainStatus) : SIGKILL);
    }
    return WEXITSTATUS(outcome.mainStatus);
}
