#pragma once

// Which proxy the app's requests go through, decided per client (Kubernetes, S3) the way kubectl
// decides it: a proxy URL from a setting wins (kubeconfig's proxy-url: every request, NO_PROXY
// does not apply); otherwise HTTPS_PROXY, HTTP_PROXY and NO_PROXY from the environment, read as
// Go's net/http reads them. The clients set the answer on their QNetworkAccessManager, NoProxy
// included, so Qt's own system proxy lookup (libproxy in Debian's Qt) is never consulted and the
// app behaves the same on every desktop.

#include "core/util/result.h"

#include <QNetworkProxy>
#include <QProcessEnvironment>
#include <QString>
#include <QUrl>

namespace Starforge::Net {

// The proxy for requests to target (an http:// or https:// URL).
//
// explicitUrl (a setting, named settingName in errors) wins when not empty:
//   http://[user:password@]host[:port]    QNetworkProxy::HttpProxy: CONNECT for https targets,
//                                         absolute-URI requests for http targets (port 80 if none)
//   socks5://... or socks5h://...         Socks5Proxy, host names sent to the proxy to resolve, as
//                                         kubectl does (port 1080)
//   https://...                           an error: Qt cannot speak TLS to a proxy
//   host[:port] (no scheme)               http://host[:port]
// User and password (percent-decoded) become the proxy's credentials and are registered with
// Logging::addSecret.
//
// Otherwise the environment, as golang.org/x/net/http/httpproxy reads it:
//   - https targets use HTTPS_PROXY, http targets HTTP_PROXY; the upper-case name wins over the
//     lower-case one, and an empty value counts as unset;
//   - "localhost" and loopback IPs never go through the environment's proxy;
//   - NO_PROXY (comma-separated, case-insensitive): "*" for every host; an IP ("10.1.2.3",
//     "[::1]") or a CIDR ("10.0.0.0/8"); a domain, matching itself and its subdomains
//     ("example.com"), or only its subdomains with a leading dot (".example.com", "*.example.com");
//     an IP or domain entry may end in ":port" and then matches only that port.
// Errors say which setting or environment variable to fix; an environment variable is only
// checked when it would be used. Returns QNetworkProxy(QNetworkProxy::NoProxy) when no proxy
// applies.
Result<QNetworkProxy> proxyFor(const QUrl &target, const QString &explicitUrl, const QString &settingName,
                               const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment());

} // namespace Starforge::Net
