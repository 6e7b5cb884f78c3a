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
