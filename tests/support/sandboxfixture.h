#pragma once

// Starting an in-process sandbox and an HTTP client for it, the setup every sandbox test shares.
// Header-only: only tests that link starforge_sandbox include it.

#include "sandbox/sandbox.h"
#include "support/sandboxhttp.h"

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

} // namespace Starforge::Testing
