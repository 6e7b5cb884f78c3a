#pragma once

// A TLS client identity: the certificate and private key a client presents in the handshake
// (kubeconfig's client-certificate and client-key, or what an exec credential plugin returns).
// Loading checks what kubectl would only find out at the handshake, and says so in words: a key
// encrypted with a passphrase, a key that is not RSA or EC, a certificate that has expired or is
// not valid yet, and a certificate that does not belong to the key.

#include "core/util/result.h"

#include <QByteArray>
#include <QDateTime>
#include <QSslCertificate>
#include <QSslKey>
#include <QString>

namespace Starforge::Net {

struct ClientIdentity
{
    QSslCertificate certificate;   // the first certificate of the PEM text
    QList<QSslCertificate> chain;  // intermediates that followed it, sent along
    QSslKey key;

    bool isNull() const { return certificate.isNull() || key.isNull(); }
    // "CN=alice, O=system:masters": who the API server will take us for.
    QString subject() const;

    // certWhat and keyWhat name where the texts came from in messages ("FORGE_K8S_CLIENT_CERT_FILE
    // /home/me/.minikube/client.crt"). now is for tests of expiry.
    static Result<ClientIdentity> fromPem(const QByteArray &certificatePem, const QString &certWhat, const QByteArray &keyPem,
                                          const QString &keyWhat, const QDateTime &now = QDateTime::currentDateTimeUtc());
};

} // namespace Starforge::Net
