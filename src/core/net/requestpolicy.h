#pragma once

// The one place that decides how the app's requests go out (TLS trust, timeouts, user agent)
// and how a failed reply reads to a person. The Kubernetes client, the S3 client and the
// playground's chat stream all build their QNetworkRequests here, so a CA bundle or an
// "insecure" switch behaves the same for every feature.

#include "core/net/clientidentity.h"
#include "core/util/result.h"

#include <QByteArray>
#include <QList>
#include <QNetworkRequest>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QString>
#include <QUrl>

class QNetworkReply;

namespace Starforge::Net {

struct TlsSettings
{
    // When set, only these CAs are trusted (a cluster CA); when empty, the system store.
    QList<QSslCertificate> caCertificates;
    // Verification off. Only when a profile says so explicitly; the GUI shows it.
    bool insecureSkipVerify = false;
    // Presented in the handshake when set (client certificates).
    ClientIdentity client;
    // The name the server's certificate is checked against (and sent in SNI) when it is not the
    // URL's host: kubeconfig's tls-server-name.
    QString serverName;

    // PEM text (a kubeconfig's certificate-authority-data, decoded) or a file; a clear error
    // when it holds no certificate.
    static Result<QList<QSslCertificate>> loadCertificates(const QByteArray &pem, const QString &what);
    static Result<QList<QSslCertificate>> loadCertificateFile(const QString &path);
};

class RequestPolicy
{
public:
    RequestPolicy() = default;
    RequestPolicy(TlsSettings tls, int transferTimeoutMs);

    // A request to url with TLS, the transfer timeout (0: none, for streams that may stay
    // quiet, which then rely on their own idle checks) and the user agent set.
    QNetworkRequest request(const QUrl &url, int transferTimeoutMs = -1) const;

    const TlsSettings &tls() const { return m_tls; }
    int transferTimeoutMs() const { return m_transferTimeoutMs; }

    static QByteArray userAgent();

private:
    TlsSettings m_tls;
    QSslConfiguration m_ssl = QSslConfiguration::defaultConfiguration();
    int m_transferTimeoutMs = 30000;
};

// A network-level failure (no HTTP answer worth reading) as a sentence that names the host and
// says what to check: refused, unknown host, timeout, TLS trust, and so on. Empty when the
// reply carried an HTTP status, whose body the caller interprets.
QString describeTransportError(const QNetworkReply *reply);

// The HTTP status of a finished reply; 0 when there was none.
int httpStatus(const QNetworkReply *reply);

// Whether a failure is worth retrying: transport errors other than TLS trust, and 429/5xx.
bool isTransient(int httpStatus, int networkError);

} // namespace Starforge::Net
