#include "sandbox/shim/privateroot.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace Starforge::Sandbox::Shim {

namespace {

// While the new root is built the host's root is at OldRoot and the container's at NewRoot, both
// inside a scratch tmpfs that is the root for that time (the order bubblewrap uses, so that
// nothing is ever created on the host).
constexpr const char *ScratchBase = "/tmp";
constexpr const char *OldRoot = "/oldroot";
constexpr const char *NewRoot = "/newroot";

bool failed(std::string &error, const std::string &what)
{
    error = what + ": " + std::strerror(errno);
    return false;
}

bool writeFile(const char *path, const std::string &text, std::string &error)
{
    const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        return failed(error, std::string("open ") + path);
    }
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return ok || failed(error, std::string("write ") + path);
}

bool enterUserNamespace(std::string &error)
{
    const uid_t uid = ::getuid();
    const gid_t gid = ::getgid();
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
        return failed(error, "create a user and mount namespace (unprivileged user namespaces may be disabled)");
    }
    // Only the caller's own ids, mapped to themselves: files keep their owner on the host.
    return writeFile("/proc/self/setgroups", "deny", error)
        && writeFile("/proc/self/uid_map", std::to_string(uid) + ' ' + std::to_string(uid) + " 1", error)
        && writeFile("/proc/self/gid_map", std::to_string(gid) + ' ' + std::to_string(gid) + " 1", error);
}

// Binds every entry of the host directory `hostDir` (seen under OldRoot) into the empty directory
// `target`: directories recursively, files and device nodes onto empty files, symbolic links
// copied, so the container reads and writes the host's entries through them.
bool bindEntries(const std::string &hostDir, const std::string &target, std::string &error)
{
    const std::string source = std::string(OldRoot) + (hostDir == "/" ? "" : hostDir);
    DIR *dir = ::opendir(source.empty() ? "/" : source.c_str());
    if (!dir) {
        return failed(error, "read the host directory " + hostDir);
    }
    bool ok = true;
    while (const dirent *entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        if (name == "." || name == "..") {
            continue;
        }
        const std::string from = source + '/' + name;
        const std::string to = target + '/' + name;
        struct stat st
        {
        };
        if (::lstat(from.c_str(), &st) != 0) {
            continue; // gone meanwhile
        }
        if (S_ISLNK(st.st_mode)) {
            char link[4096];
            const ssize_t n = ::readlink(from.c_str(), link, sizeof link - 1);
            if (n < 0 || ::symlink(std::string(link, static_cast<std::size_t>(n)).c_str(), to.c_str()) != 0) {
                ok = failed(error, "copy the symbolic link " + from);
                break;
            }
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            if (::mkdir(to.c_str(), 0755) != 0) {
                ok = failed(error, "make the mount point " + to);
                break;
            }
        } else {
            const int fd = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
            if (fd < 0) {
                ok = failed(error, "make the mount point " + to);
                break;
            }
            ::close(fd);
        }
        if (::mount(from.c_str(), to.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
            // A socket or an entry the caller may not bind (another user's, in a user namespace)
            // is left out rather than failing the container.
            if (errno == EACCES || errno == EPERM || errno == EINVAL) {
                S_ISDIR(st.st_mode) ? ::rmdir(to.c_str()) : ::unlink(to.c_str());
                continue;
            }
            ok = failed(error, "bind " + from.substr(std::strlen(OldRoot)) + " into the container");
            break;
        }
    }
    ::closedir(dir);
    return ok;
}

std::vector<std::string> components(const std::string &path)
{
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start < path.size()) {
        std::size_t end = path.find('/', start);
        if (end == std::string::npos)
            end = path.size();
        if (end > start) {
            const std::string part = path.substr(start, end - start);
            if (part == "..") {
                if (!parts.empty())
                    parts.pop_back();
            } else if (part != ".") {
                parts.push_back(part);
            }
        }
        start = end + 1;
    }
    return parts;
}

bool isUnder(const std::string &path, const std::string &dir)
{
    return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

// Where the container's root is made: which of its directories may be written without touching
// the host (the root tmpfs, directories made or replaced here, and the volumes).
class RootBuilder
{
public:
    explicit RootBuilder(std::string &error)
        : m_error(error)
    {
    }

    bool makeMountPoint(const std::string &path)
    {
        std::string current; // "" is the root
        for (const std::string &part : components(path)) {
            const std::string next = current + '/' + part;
            struct stat st
            {
            };
            if (::lstat((NewRoot + next).c_str(), &st) == 0) {
                if (S_ISLNK(st.st_mode)) {
                    errno = ELOOP;
                    return failed(m_error, "mount at " + path + ": " + next + " is a symbolic link in the container");
                }
                if (!S_ISDIR(st.st_mode)) {
                    errno = ENOTDIR;
                    return failed(m_error, "mount at " + path);
                }
                current = next;
                continue;
            }
            if (!isWritable(current) && !replaceWithTmpfs(current)) {
                return false;
            }
            if (::mkdir((NewRoot + next).c_str(), 0755) != 0) {
                return failed(m_error, "make the mount point " + next);
            }
            m_own.insert(next);
            current = next;
        }
        return true;
    }

    void addVolume(const std::string &path) { m_volumes.push_back(path); }

private:
    bool isWritable(const std::string &dir) const
    {
        if (dir.empty() || m_own.count(dir)) {
            return true;
        }
        return std::any_of(m_volumes.cbegin(), m_volumes.cend(), [&](const std::string &v) { return isUnder(dir, v); });
    }

    // The host directory `dir` becomes, in the container only, a tmpfs with binds of its entries.
    bool replaceWithTmpfs(const std::string &dir)
    {
        const std::string target = NewRoot + dir;
        if (::mount("tmpfs", target.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) {
            return failed(m_error, "mount a tmpfs at " + dir);
        }
        m_own.insert(dir);
        return bindEntries(dir, target, m_error);
    }

    std::string &m_error;
    std::set<std::string> m_own;
    std::vector<std::string> m_volumes;
};

unsigned long lockedFlags(const std::string &path)
{
    // A remount inside a user namespace must keep the flags the host's mount has.
    struct statvfs vfs
    {
    };
    if (::statvfs(path.c_str(), &vfs) != 0) {
        return 0;
    }
    unsigned long flags = 0;
    if (vfs.f_flag & ST_NOSUID)
        flags |= MS_NOSUID;
    if (vfs.f_flag & ST_NODEV)
        flags |= MS_NODEV;
    if (vfs.f_flag & ST_NOEXEC)
        flags |= MS_NOEXEC;
    if (vfs.f_flag & ST_NOATIME)
        flags |= MS_NOATIME;
    if (vfs.f_flag & ST_NODIRATIME)
        flags |= MS_NODIRATIME;
    if (vfs.f_flag & ST_RELATIME)
        flags |= MS_RELATIME;
    return flags;
}

int pivotRoot(const char *newRoot, const char *putOld)
{
    return static_cast<int>(::syscall(SYS_pivot_root, newRoot, putOld));
}

} // namespace

bool enterPrivateRoot(const std::vector<VolumeMount> &mounts, const std::string &workingDir, std::string &error)
{
    if (::geteuid() == 0) {
        if (::unshare(CLONE_NEWNS) != 0) {
            return failed(error, "create a mount namespace");
        }
    } else if (!enterUserNamespace(error)) {
        return false;
    }
    // Nothing done below may reach the host's mount table.
    if (::mount(nullptr, "/", nullptr, MS_SLAVE | MS_REC, nullptr) != 0) {
        return failed(error, "make the mounts private");
    }
    if (::mount("tmpfs", ScratchBase, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") != 0) {
        return failed(error, "mount the scratch tmpfs");
    }
    if (::mkdir((std::string(ScratchBase) + OldRoot).c_str(), 0700) != 0
        || ::mkdir((std::string(ScratchBase) + NewRoot).c_str(), 0755) != 0) {
        return failed(error, "make the scratch directories");
    }
    if (::chdir(ScratchBase) != 0 || pivotRoot(".", &OldRoot[1]) != 0 || ::chdir("/") != 0) {
        return failed(error, "pivot into the scratch tmpfs");
    }
    if (::mount("tmpfs", NewRoot, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) {
        return failed(error, "mount the container's root tmpfs");
    }
    if (!bindEntries("/", NewRoot, error)) {
        return false;
    }

    // Parents before children, so a volume inside another lands on top of it.
    std::vector<VolumeMount> ordered = mounts;
    for (VolumeMount &m : ordered) {
        std::string clean;
        for (const std::string &part : components(m.containerPath))
            clean += '/' + part;
        m.containerPath = clean.empty() ? "/" : clean;
    }
    std::stable_sort(ordered.begin(), ordered.end(), [](const VolumeMount &a, const VolumeMount &b) {
        return components(a.containerPath).size() < components(b.containerPath).size();
    });
    RootBuilder root(error);
    for (const VolumeMount &m : ordered) {
        if (m.containerPath == "/") {
            errno = EINVAL;
            return failed(error, "mount " + m.hostPath + " at /");
        }
        if (!root.makeMountPoint(m.containerPath)) {
            return false;
        }
        const std::string source = OldRoot + m.hostPath;
        const std::string target = NewRoot + m.containerPath;
        if (::mount(source.c_str(), target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
            return failed(error, "mount " + m.hostPath + " at " + m.containerPath);
        }
        if (m.readOnly && ::mount(nullptr, target.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | lockedFlags(target), nullptr) != 0) {
            return failed(error, "make " + m.containerPath + " read-only");
        }
        root.addVolume(m.containerPath);
    }

    // Leave the scratch root: the host's root goes, the container's becomes "/".
    if (::mount(nullptr, OldRoot, nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 || ::umount2(OldRoot, MNT_DETACH) != 0) {
        return failed(error, "detach the host's root");
    }
    if (::chdir(NewRoot) != 0 || pivotRoot(".", ".") != 0 || ::umount2(".", MNT_DETACH) != 0 || ::chdir("/") != 0) {
        return failed(error, "pivot into the container's root");
    }
    if (!workingDir.empty() && ::chdir(workingDir.c_str()) != 0) {
        return failed(error, "change to the working directory " + workingDir);
    }
    return true;
}

} // namespace Starforge::Sandbox::Shim
