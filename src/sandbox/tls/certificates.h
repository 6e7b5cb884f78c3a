#pragma once

// The sandbox's own certificate authority: a fresh CA per start and a server certificate for
// the loopback addresses, so clients (the app, kubectl, curl) verify TLS exactly as they would
// against a real cluster, with the CA file from the connection file. The same CA signs client
// certificates, which the API server accepts as kube-apiserver does with --client-ca-file (one
// cluster CA for both, as kubeadm sets it up): the subject's CN is the user, each O a group.

#include "core/util/result.h"

#include <QByteArray>
#include <QDateTime>
#include <QStringList>

namespace Starforge::Sandbox::Tls {

struct Material
{
    QByteArray caCertificatePem;
    QByteArray caKeyPem;          // kept to issue client certificates; never written to disk
    QByteArray serverCertificatePem;
    QByteArray serverKeyPem;
};

struct Issued
{
    QByteArray certificatePem;
    QByteArray keyPem;
};

// ipAddresses and dnsNames become the server certificate's subjectAltName entries.
Result<Material> generate(const QStringList &ipAddresses, const QStringList &dnsNames, int validDays = 30);

// A client certificate (extendedKeyUsage clientAuth) signed by ca's CA, valid from an hour ago
// (clock skew) until notAfter; a notAfter in the past makes an expired one for tests.
Result<Issued> issueClientCertificate(const Material &ca, const QString &commonName, const QStringList &organizations,
                                      const QDateTime &notAfter);

} // namespace Starforge::Sandbox::Tls
