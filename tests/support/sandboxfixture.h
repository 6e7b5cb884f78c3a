#pragma once

// Starting an in-process sandbox and an HTTP client for it, the setup every sandbox test shares.
// Header-only: only tests that link starforge_sandbox include it.

#include "core/config/embeddedsandbox.h"
#include "core/config/profilemanager.h"
#include "sandbox/sandbox.h"
#include "support/sandboxhttp.h"

#include <QProcessEnvironment>

#include <memory>

namespace Starforge::Testing {

// An RBAC file (SandboxOptions::rbacFile) with a researcher's token, "researcher-token": it may
// run jobs in namespace starforge and read their pods and logs, but not read events, nodes or
// CRDs, so the events and capacity features are off and the KubeRay release is unknown.
inline constexpr char ResearcherRbac[] = R"({"users":[{"name":"researcher","token":"researcher-token","rules":[
    {"apiGroups":["ray.io"],"resources":["rayjobs"],"verbs":["get","list","watch","create","delete","patch"],"namespaces":["starforge"]},
    {"apiGroups":["ray.io"],"resources":["rayclusters"],"verbs":["get","list","watch"],"namespaces":["starforge"]},
    {"apiGroups":[""],"resources":["pods","pods/log"],"verbs":["get","list","watch"],"namespaces":["starforge"]}]}]})";

// Starts the sandbox with these options and connects http to its API server; false with the
// reason in error when it cannot start.
inline bool startSandbox(std::unique_ptr<Sandbox::Sandbox> &sandbox, std::unique_ptr<SandboxHttp> &http,
                         const Sandbox::SandboxOptions &options, QString *error)
{
    http.reset();
    sandbox = std::make_unique<Sandbox::Sandbox>();
    const auto started = sandbox->start(options);
    if (!started) {
        *error = started.error().message;
        return false;
    }
    http = std::make_unique<SandboxHttp>(sandbox->apiServerUrl(), sandbox->caCertificatePem(), sandbox->token());
    return true;
}

// A profile named "sandbox" with the connection's settings, made active, and its secrets in
// environment, as `starforge --sandbox` passes them (never the keychain). Empty when done, else
// what failed.
inline QString useSandboxProfile(Config::ProfileStore &store, Config::ProfileManager &manager, const Config::SandboxConnection &connection,
                                 QProcessEnvironment &environment)
{
    const QString name = QStringLiteral("sandbox");
    if (auto added = store.addProfile(name); !added) return added.error().message;
    for (auto it = connection.settings.cbegin(); it != connection.settings.cend(); ++it) {
        if (auto set = store.setValue(name, it.key(), it.value()); !set) return set.error().message;
    }
    for (const char *key : {"FORGE_K8S_TOKEN", "FORGE_S3_ACCESS_KEY", "FORGE_S3_SECRET_KEY"})
        environment.insert(QLatin1String(key), connection.secrets.value(QLatin1String(key)));
    if (auto active = manager.setActiveProfile(name); !active) return active.error().message;
    return {};
}

} // namespace Starforge::Testing
