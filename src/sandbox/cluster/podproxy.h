#pragma once

// pods/proxy: forwards one request to a pod's address and streams the answer back as it comes
// (Server-Sent Events included), the way the API server's upgrade-aware proxy does: the
// Authorization header is not passed on, hop-by-hop headers are dropped, a pod that refuses
// the connection is a 503 with the proxy's text, and a client that goes away closes the
// upstream connection at once.

#include "sandbox/http/httpserver.h"

#include <QString>

namespace Starforge::Sandbox::PodProxy {

void forward(const QString &address, quint16 port, const QString &path, const Http::Request &request, Http::Responder *responder);

} // namespace Starforge::Sandbox::PodProxy
