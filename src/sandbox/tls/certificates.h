#pragma once

// The sandbox's own certificate authority: a fresh CA per start and a server certificate for
// the loopback addresses, so clients (the app, kubectl, curl) verify TLS exactly as they would
// against a real cluster, with the CA file from the connection file.

#include "core/util/result.h"

#include <QByteArray>
#include <QStringList>

namespace Starforge::Sandbox::Tls {

struct Material
{
    QByteArray caCertificatePem;
    QByteArray serverCertificatePem;
    QByteArray serverKeyPem;
};

// ipAddresses and dnsNames become the server certificate's subjectAltName entries.
Result<Material> generate(const QStringList &ipAddresses, const QStringList &dnsNames, int validDays = 30);

} // namespace Starforge::Sandbox::Tls
