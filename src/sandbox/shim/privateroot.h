#pragma once

// A container's own view of the file system: a private mount namespace whose root is a fresh
// tmpfs holding the host's top-level entries (bind-mounted, so the container sees the host's
// tools, as the sandbox's containers always have) with each volume bound at the path the pod spec
// names. A mount path that does not exist on the host is created inside the container's root,
// never on the host: where it lies under a host directory, that directory is replaced in the
// container by a tmpfs holding binds of its entries, and the missing directory is made there.
//
// Without root it also enters a new user namespace that maps the caller's own uid and gid, as
// bubblewrap does for unprivileged users; that needs unprivileged user namespaces.
//
// bubblewrap builds such a root too, but it cannot sit between the shim and the container: sent
// SIGTERM (a pod deletion) it dies without passing the signal on and takes the container with it
// at once (bwrap 0.8.0, Debian 12), so a container would get no grace period.
//
// Plain POSIX and Linux calls, no Qt: it runs in the shim's child between fork and exec.

#include <string>
#include <vector>

namespace Starforge::Sandbox::Shim {

struct VolumeMount
{
    std::string hostPath; // the volume's directory on the host
    std::string containerPath; // absolute, where the container sees it
    bool readOnly = false;
};

// Builds the private root, switches into it and changes to `workingDir` (a path the container
// also sees). On failure returns false with `error` saying what failed ("mount /x at /y: …").
bool enterPrivateRoot(const std::vector<VolumeMount> &mounts, const std::string &workingDir, std::string &error);

} // namespace Starforge::Sandbox::Shim
