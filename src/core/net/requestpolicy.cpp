#include "core/net/requestpolicy.h"

#include <QCoreApplication>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QFile>
#include <QNetworkReply>

namespace Starforge::Net {

Result<QList<QSslCertificate>> TlsSettings::loadCertificates(const QByteArray &pem, const QString &what)
{
    const QList<QSslCertificate> certificates = QSslCertificate::fromData(pem, QSsl::Pem);
    if (certificates.isEmpty()) {
        return Error::invalid(QCoreApplication::translate("Net", "%1 holds no PEM certificate. Give the cluster's CA "
                                                                 "certificate (-----BEGIN CERTIFICATE-----).").arg(what));
    }
    return certificates;
}

Result<QList<QSslCertificate>> TlsSettings::loadCertificateFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        return Error::io(QCoreApplication::translate("Net", "Cannot read the CA file %1: %2.").arg(path, file.errorString()));
    }
    return loadCertificates(file.read(4 * 1024 * 1024), QCoreApplication::translate("Net", "The CA file %1").arg(path));
}

RequestPolicy::RequestPolicy(TlsSettings tls, int transferTimeoutMs)
    : m_tls(std::move(tls))
    , m_transferTimeoutMs(transferTimeoutMs)
{
    if (!m_tls.caCertificates.isEmpty()) {
        m_ssl.setCaCertificates(m_tls.caCertificates);
    }
    if (m_tls.insecureSkipVerify) {
        m_ssl.setPeerVerifyMode(QSslSocket::VerifyNone);
    }
    if (!m_tls.client.isNull()) {
        m_ssl.setLocalCertificateChain(QList<QSslCertificate>{m_tls.client.certificate} + m_tls.client.chain);
        m_ssl.setPrivateKey(m_tls.client.key);
    }
}

QNetworkRequest RequestPolicy::request(const QUrl &url, int transferTimeoutMs) const
{
    QNetworkRequest request(url);
    if (url.scheme() == QLatin1String("https")) {
        request.setSslConfiguration(m_ssl);
        if (!m_tls.serverName.isEmpty()) {
            request.setPeerVerifyName(m_tls.serverName);
        }
    }
    request.setTransferTimeout(transferTimeoutMs < 0 ? m_transferTimeoutMs : transferTimeoutMs);
    request.setHeader(QNetworkRequest::UserAgentHeader, userAgent());
    // Redirects would carry a bearer token or a signature to another host: none are followed.
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
    return request;
}

QByteArray RequestPolicy::userAgent()
{
    return QByteArrayLiteral("starforge/" STARFORGE_VERSION " (Qt " QT_VERSION_STR ")");
}

int httpStatus(const QNetworkReply *reply)
{
    return reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
}

bool isTransient(int status, int networkError)
{
    if (status == 429 || status >= 500) {
        return true;
    }
    if (status != 0) {
        return false;
    }
    switch (static_cast<QNetworkReply::NetworkError>(networkError)) {
    case QNetworkReply::NoError:
    case QNetworkReply::SslHandshakeFailedError:
    case QNetworkReply::HostNotFoundError:
    case QNetworkReply::OperationCanceledError:
        return false;
    default:
        return true;
    }
}

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(Net)
};

// The proxy by its address (never its credentials), the server behind it, and where proxies are set.
QString proxyFailure(const QNetworkReply *reply, const QString &host)
{
    const QNetworkProxy proxy = reply->manager() ? reply->manager()->proxy() : QNetworkProxy();
    const QString address = proxy.type() == QNetworkProxy::NoProxy || proxy.hostName().isEmpty()
        ? QString()
        : QStringLiteral(" %1:%2").arg(proxy.hostName()).arg(proxy.port());
    return Text::tr("The proxy%1 in front of %2 failed: %3. Check that the proxy runs and the proxy "
                                       "setting (FORGE_K8S_PROXY_URL or FORGE_S3_PROXY, else HTTPS_PROXY and NO_PROXY in the "
                                       "environment).")
        .arg(address, host, reply->errorString());
}

} // namespace

QString describeTransportError(const QNetworkReply *reply)
{
    if (httpStatus(reply) != 0 || reply->error() == QNetworkReply::NoError) {
        return {};
    }
    const QUrl url = reply->url();
    const QString host = url.port() > 0 ? url.host() + QLatin1Char(':') + QString::number(url.port()) : url.host();
    switch (reply->error()) {
    case QNetworkReply::ConnectionRefusedError:
        return Text::tr("%1 refused the connection. Check the address and port, and that the server is running.").arg(host);
    case QNetworkReply::RemoteHostClosedError:
        return Text::tr("%1 closed the connection before answering. Check that the address is an HTTPS API endpoint.").arg(host);
    case QNetworkReply::HostNotFoundError:
        return Text::tr("The host %1 was not found. Check the server address.").arg(url.host());
    case QNetworkReply::TimeoutError:
        return Text::tr("%1 did not answer in time. Check the network path to it (VPN, proxy, firewall).").arg(host);
    case QNetworkReply::OperationCanceledError:
        return Text::tr("The request to %1 was cancelled or timed out.").arg(host);
    case QNetworkReply::SslHandshakeFailedError:
        return Text::tr("The TLS certificate of %1 is not trusted: %2. Give the cluster's CA certificate "
                  "(a CA file or CA data) in the profile.").arg(host, reply->errorString());
    case QNetworkReply::TemporaryNetworkFailureError:
    case QNetworkReply::NetworkSessionFailedError:
        return Text::tr("The network is unavailable (%1). Check the connection.").arg(reply->errorString());
    case QNetworkReply::ProxyConnectionRefusedError:
    case QNetworkReply::ProxyConnectionClosedError:
    case QNetworkReply::ProxyNotFoundError:
    case QNetworkReply::ProxyTimeoutError:
    case QNetworkReply::ProxyAuthenticationRequiredError:
        return proxyFailure(reply, host);
    default:
        // Qt 6.4 reports a proxy that refuses the connection as UnknownNetworkError with the
        // words "Proxy connection refused": blame the proxy, not the server.
        if (reply->errorString().contains(QLatin1String("proxy"), Qt::CaseInsensitive) && reply->manager()
            && reply->manager()->proxy().type() != QNetworkProxy::NoProxy) {
            return proxyFailure(reply, host);
        }
        return Text::tr("The request to %1 failed: %2.").arg(host, reply->errorString());
    }
}

} // namespace Starforge::Net
