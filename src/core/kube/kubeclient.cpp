#include "core/kube/kubeclient.h"

#include "core/config/effectiveconfig.h"
#include "core/logging/logging.h"

#include <QCoreApplication>
#include <QFile>
#include <QHostAddress>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>

namespace Starforge::Kube {

namespace {
QString tr(const char *text)
{
    return QCoreApplication::translate("Kube", text);
}
} // namespace

Result<ClientConfig> ClientConfig::fromSettings(const Config::EffectiveConfig &settings)
{
    ClientConfig config;
    const QString server = settings.value(QStringLiteral("FORGE_K8S_API_SERVER"));
    if (server.isEmpty()) {
        return Error::invalid(tr("No API server is set. Set FORGE_K8S_API_SERVER in the profile, or import a kubeconfig context."));
    }
    config.server = QUrl(server);
    if (!config.server.isValid() || config.server.host().isEmpty()
        || (config.server.scheme() != QLatin1String("https") && config.server.scheme() != QLatin1String("http"))) {
        return Error::invalid(tr("FORGE_K8S_API_SERVER \"%1\" is not an http(s) URL with a host.").arg(server));
    }
    // Over plain http the token crosses the network in clear text. Only a server on this
    // machine may be reached that way: `kubectl proxy` listens on loopback and adds its own
    // credentials.
    if (config.server.scheme() == QLatin1String("http")) {
        const QHostAddress address(config.server.host());
        const bool loopback = config.server.host() == QLatin1String("localhost") || (!address.isNull() && address.isLoopback());
        if (!loopback) {
            return Error::invalid(tr("FORGE_K8S_API_SERVER \"%1\" is plain http:// to another machine, which would send the token "
                                     "unencrypted. Use the server's https:// address, or run `kubectl proxy` and give "
                                     "http://127.0.0.1:8001.")
                                      .arg(server));
        }
    }
    config.token = settings.value(QStringLiteral("FORGE_K8S_TOKEN")).toUtf8().trimmed();
    const QString tokenFile = settings.value(QStringLiteral("FORGE_K8S_TOKEN_FILE"));
    if (config.token.isEmpty() && !tokenFile.isEmpty()) {
        QFile file(tokenFile);
        if (!file.open(QIODevice::ReadOnly)) {
            return Error::io(tr("Cannot read the token file %1 (FORGE_K8S_TOKEN_FILE): %2.").arg(tokenFile, file.errorString()));
        }
        config.token = file.read(64 * 1024).trimmed();
    }
    if (config.token.isEmpty()) {
        return Error::invalid(tr("No token is set for %1. Set FORGE_K8S_TOKEN (kept in the keychain) or FORGE_K8S_TOKEN_FILE.")
                                  .arg(server));
    }
    Logging::addSecret(QString::fromUtf8(config.token));
    const QString caData = settings.value(QStringLiteral("FORGE_K8S_CA_DATA"));
    const QString caFile = settings.value(QStringLiteral("FORGE_K8S_CA_FILE"));
    if (!caData.isEmpty()) {
        // Base64 as in a kubeconfig, or PEM text pasted as it is.
        QByteArray pem = caData.toLatin1();
        if (!pem.contains("-----BEGIN")) {
            pem = QByteArray::fromBase64(pem);
        }
        auto certificates = Net::TlsSettings::loadCertificates(pem, QStringLiteral("FORGE_K8S_CA_DATA"));
        if (!certificates) {
            return certificates.error();
        }
        config.tls.caCertificates = *certificates;
    } else if (!caFile.isEmpty()) {
        auto certificates = Net::TlsSettings::loadCertificateFile(caFile);
        if (!certificates) {
            return certificates.error();
        }
        config.tls.caCertificates = *certificates;
    }
    config.tls.insecureSkipVerify = settings.boolean(QStringLiteral("FORGE_K8S_INSECURE_SKIP_TLS_VERIFY"));
    config.ns = settings.value(QStringLiteral("FORGE_K8S_NAMESPACE"));
    return config;
}

QJsonObject ApiResult::json() const
{
    return QJsonDocument::fromJson(body).object();
}

KubeClient::KubeClient(ClientConfig config, QObject *parent)
    : QObject(parent)
    , m_config(std::move(config))
    , m_policy(m_config.tls, m_config.timeoutMs)
    , m_network(new QNetworkAccessManager(this))
{
}

KubeClient::~KubeClient() = default;

QUrl KubeClient::url(const QString &path, const QUrlQuery &query) const
{
    QUrl url = m_config.server;
    QString base = url.path();
    if (base.endsWith(QLatin1Char('/'))) {
        base.chop(1);
    }
    url.setPath(base + path);
    url.setQuery(query);
    return url;
}

QNetworkReply *KubeClient::start(const ApiRequest &request, int timeoutMs)
{
    QNetworkRequest r = m_policy.request(url(request.path, request.query), timeoutMs);
    if (!m_config.token.isEmpty()) {
        r.setRawHeader("Authorization", "Bearer " + m_config.token);
    }
    r.setRawHeader("Accept", "application/json");
    if (!request.body.isEmpty()) {
        r.setHeader(QNetworkRequest::ContentTypeHeader, request.contentType);
    }
    return m_network->sendCustomRequest(r, request.method, request.body);
}

ApiResult KubeClient::collect(QNetworkReply *reply, const QString &what)
{
    ApiResult result;
    result.status = Net::httpStatus(reply);
    result.body = reply->isOpen() ? reply->readAll() : QByteArray();   // an aborted reply is closed
    result.retryAfter = reply->rawHeader("Retry-After");
    if (result.status == 0) {
        QString sentence = Net::describeTransportError(reply);
        if (sentence.isEmpty()) {
            sentence = tr("The API server closed the connection without an answer.");
        }
        result.error = ApiError::transport(tr("Could not %1: %2").arg(what, sentence));
    } else if (result.status < 200 || result.status >= 300) {
        result.error = ApiError::fromHttp(result.status, result.body, result.retryAfter, what);
    }
    return result;
}

QNetworkReply *KubeClient::send(const ApiRequest &request, const QObject *context, Callback done)
{
    QNetworkReply *reply = start(request, request.timeoutMs);
    const QString what = request.what.isEmpty() ? QString::fromLatin1(request.method) + QLatin1Char(' ') + request.path
                                                : request.what;
    connect(context, &QObject::destroyed, reply, &QNetworkReply::abort);
    connect(reply, &QNetworkReply::finished, context, [reply, what, done = std::move(done)] {
        done(collect(reply, what));
    });
    // Whether or not the context is still there, the reply goes once it is finished.
    connect(reply, &QNetworkReply::finished, reply, &QObject::deleteLater);
    return reply;
}

QNetworkReply *KubeClient::openStream(const ApiRequest &request)
{
    return start(request, request.timeoutMs < 0 ? 0 : request.timeoutMs);
}

} // namespace Starforge::Kube
