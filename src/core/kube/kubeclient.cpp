#include "core/kube/kubeclient.h"

#include "core/config/effectiveconfig.h"
#include "core/kube/execcredentialprovider.h"
#include "core/logging/logging.h"
#include "core/net/proxy.h"

#include <QCoreApplication>
#include <QFile>
#include <QHostAddress>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>

namespace Starforge::Kube {

namespace {
// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(Kube)
};

// A setting's PEM text: FORGE_X_DATA (base64 of the PEM, or the PEM pasted as it is) wins over
// FORGE_X_FILE. what names the one used, for messages.
Result<QByteArray> pemFromSettings(const Config::EffectiveConfig &settings, const QString &dataKey, const QString &fileKey, QString *what)
{
    const QString data = settings.value(dataKey).trimmed();
    if (!data.isEmpty()) {
        *what = dataKey;
        return data.contains(QLatin1String("-----BEGIN")) ? data.toLatin1() : QByteArray::fromBase64(data.toLatin1());
    }
    const QString path = settings.value(fileKey);
    if (path.isEmpty()) {
        return QByteArray();
    }
    *what = QStringLiteral("%1 %2").arg(fileKey, path);
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        return Error::io(Text::tr("Cannot read %1: %2.").arg(*what, file.errorString()));
    }
    return file.read(1024 * 1024);
}

Result<Net::ClientIdentity> clientIdentityFromSettings(const Config::EffectiveConfig &settings)
{
    QString certWhat;
    QString keyWhat;
    auto certificate = pemFromSettings(settings, QStringLiteral("FORGE_K8S_CLIENT_CERT_DATA"), QStringLiteral("FORGE_K8S_CLIENT_CERT_FILE"), &certWhat);
    if (!certificate) return certificate.error();
    auto key = pemFromSettings(settings, QStringLiteral("FORGE_K8S_CLIENT_KEY_DATA"), QStringLiteral("FORGE_K8S_CLIENT_KEY_FILE"), &keyWhat);
    if (!key) return key.error();
    if (certificate->isEmpty() && key->isEmpty()) {
        return Net::ClientIdentity();
    }
    if (certificate->isEmpty()) {
        return Error::invalid(Text::tr("%1 gives a client key but no certificate; set FORGE_K8S_CLIENT_CERT_FILE or FORGE_K8S_CLIENT_CERT_DATA.")
                                  .arg(keyWhat));
    }
    if (key->isEmpty()) {
        return Error::invalid(Text::tr("%1 gives a client certificate but no key; set FORGE_K8S_CLIENT_KEY_FILE or FORGE_K8S_CLIENT_KEY_DATA "
                                 "(kept in the keychain).")
                                  .arg(certWhat));
    }
    Logging::addSecret(QString::fromLatin1(*key));
    return Net::ClientIdentity::fromPem(*certificate, certWhat, *key, keyWhat);
}
} // namespace

Result<ClientConfig> ClientConfig::fromSettings(const Config::EffectiveConfig &settings)
{
    ClientConfig config;
    const QString server = settings.value(QStringLiteral("FORGE_K8S_API_SERVER"));
    if (server.isEmpty()) {
        return Error::invalid(Text::tr("No API server is set. Set FORGE_K8S_API_SERVER in the profile, or import a kubeconfig context."));
    }
    config.server = QUrl(server);
    if (!config.server.isValid() || config.server.host().isEmpty()
        || (config.server.scheme() != QLatin1String("https") && config.server.scheme() != QLatin1String("http"))) {
        return Error::invalid(Text::tr("FORGE_K8S_API_SERVER \"%1\" is not an http(s) URL with a host.").arg(server));
    }
    // Over plain http the token crosses the network in clear text. Only a server on this
    // machine may be reached that way: `kubectl proxy` listens on loopback and adds its own
    // credentials.
    if (config.server.scheme() == QLatin1String("http")) {
        const QHostAddress address(config.server.host());
        const bool loopback = config.server.host() == QLatin1String("localhost") || (!address.isNull() && address.isLoopback());
        if (!loopback) {
            return Error::invalid(Text::tr("FORGE_K8S_API_SERVER \"%1\" is plain http:// to another machine, which would send the token "
                                     "unencrypted. Use the server's https:// address, or run `kubectl proxy` and give "
                                     "http://127.0.0.1:8001.")
                                      .arg(server));
        }
    }
    // Who we are, in kubectl's order of preference: an exec plugin, a client certificate, a token.
    if (const QString exec = settings.value(QStringLiteral("FORGE_K8S_EXEC")); !exec.isEmpty()) {
        auto plugin = Config::ExecPlugin::parse(exec);
        if (!plugin) {
            return Error::invalid(Text::tr("FORGE_K8S_EXEC: %1").arg(plugin.error().message));
        }
        config.exec = *plugin;
    }
    if (auto identity = clientIdentityFromSettings(settings); !identity) {
        return identity.error();
    } else {
        config.tls.client = *identity;
    }
    config.token = settings.value(QStringLiteral("FORGE_K8S_TOKEN")).toUtf8().trimmed();
    const QString tokenFile = settings.value(QStringLiteral("FORGE_K8S_TOKEN_FILE"));
    if (config.token.isEmpty() && !tokenFile.isEmpty() && !config.exec) {
        QFile file(tokenFile);
        if (!file.open(QIODevice::ReadOnly)) {
            return Error::io(Text::tr("Cannot read the token file %1 (FORGE_K8S_TOKEN_FILE): %2.").arg(tokenFile, file.errorString()));
        }
        config.token = file.read(64 * 1024).trimmed();
    }
    if (config.token.isEmpty() && config.tls.client.isNull() && !config.exec) {
        return Error::invalid(Text::tr("No credential is set for %1. Import a kubeconfig context, or set FORGE_K8S_TOKEN (kept in the "
                                 "keychain), FORGE_K8S_TOKEN_FILE, a client certificate and key (FORGE_K8S_CLIENT_CERT_FILE and "
                                 "FORGE_K8S_CLIENT_KEY_FILE) or an exec plugin (FORGE_K8S_EXEC).")
                                  .arg(server));
    }
    if (config.exec) {
        config.token.clear();   // the plugin's credential replaces it, as in kubectl
    }
    if (!config.token.isEmpty()) {
        Logging::addSecret(QString::fromUtf8(config.token));
    }
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
    config.tls.serverName = settings.value(QStringLiteral("FORGE_K8S_TLS_SERVER_NAME"));
    config.proxyUrl = settings.value(QStringLiteral("FORGE_K8S_PROXY_URL"));
    // A bad FORGE_K8S_PROXY_URL (or HTTPS_PROXY) is reported here, not as a failed request.
    if (auto proxy = Net::proxyFor(config.server, config.proxyUrl, QStringLiteral("FORGE_K8S_PROXY_URL")); !proxy) {
        return proxy.error();
    }
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
    // Always set, NoProxy included, so Qt's system proxy lookup never decides for us.
    if (auto proxy = Net::proxyFor(m_config.server, m_config.proxyUrl, QStringLiteral("FORGE_K8S_PROXY_URL"))) {
        m_network->setProxy(*proxy);
    } else {
        // fromSettings has checked this; only a hand-made config gets here.
        qWarning().noquote() << proxy.error().message << "Connecting without a proxy.";
        m_network->setProxy(QNetworkProxy(QNetworkProxy::NoProxy));
    }
    if (m_config.exec) {
        ExecClusterInfo cluster;
        cluster.server = m_config.server.toString();
        for (const QSslCertificate &ca : m_config.tls.caCertificates) cluster.certificateAuthorityPem += ca.toPem();
        cluster.tlsServerName = m_config.tls.serverName;
        cluster.insecureSkipTlsVerify = m_config.tls.insecureSkipVerify;
        cluster.proxyUrl = m_config.proxyUrl;
        m_exec = new ExecCredentialProvider(*m_config.exec, cluster, this);
    }
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

void KubeClient::authenticate(QNetworkRequest &request, int *generation) const
{
    *generation = -1;
    if (!m_exec) {
        if (!m_config.token.isEmpty()) {
            request.setRawHeader("Authorization", "Bearer " + m_config.token);
        }
        return;   // a client certificate, if any, is in the request policy's TLS configuration
    }
    const std::optional<ExecCredential> credential = m_exec->current();
    if (!credential) {
        return;   // the server answers 401, and the plugin runs
    }
    *generation = credential->generation;
    if (!credential->token.isEmpty()) {
        request.setRawHeader("Authorization", "Bearer " + credential->token);
    } else if (!credential->identity.isNull()) {
        QSslConfiguration ssl = request.sslConfiguration();
        ssl.setLocalCertificateChain(QList<QSslCertificate>{credential->identity.certificate} + credential->identity.chain);
        ssl.setPrivateKey(credential->identity.key);
        request.setSslConfiguration(ssl);
        if (m_identityGeneration != credential->generation) {
            // Kept-alive connections were opened with the old certificate.
            auto *self = const_cast<KubeClient *>(this);
            self->m_identityGeneration = credential->generation;
            m_network->clearConnectionCache();
        }
    }
}

void KubeClient::refused(int generation)
{
    if (m_exec && generation >= 0) {
        m_exec->invalidate(generation);
    }
}

QNetworkReply *KubeClient::start(const ApiRequest &request, int timeoutMs)
{
    QNetworkRequest r = m_policy.request(url(request.path, request.query), timeoutMs);
    int generation = -1;
    authenticate(r, &generation);
    r.setRawHeader("Accept", "application/json");
    if (request.sink) {
        // The pause of socket reads that the read buffer size (guardBody) relies on is Qt's
        // HTTP/1.1 backend's and was measured there (below); a real API server offers HTTP/2
        // as well, so the sink's requests keep to HTTP/1.1.
        r.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
    }
    if (!request.body.isEmpty()) {
        r.setHeader(QNetworkRequest::ContentTypeHeader, request.contentType);
    }
    // A body-less streamed read goes without an upload device. Measured with Qt 6.4.2 over TLS
    // (a 512 MiB body read by a slow reader with a 1 MiB read buffer): sent with a QByteArray
    // body, even an empty one, the reply read the socket far ahead of its reader (450 to 510 MB
    // peak RSS in three runs out of four), while without one it stayed at 1 MiB unread (22 MB).
    QNetworkReply *reply = request.sink && request.body.isEmpty()
        ? m_network->sendCustomRequest(r, request.method, static_cast<QIODevice *>(nullptr))
        : m_network->sendCustomRequest(r, request.method, request.body);
    if (m_exec) {
        // Whoever reads the reply, a 401 means the plugin's credential is spent.
        reply->setProperty("starforge.credentialGeneration", generation);
        connect(reply, &QNetworkReply::metaDataChanged, this, [this, reply, generation] {
            if (Net::httpStatus(reply) == 401) refused(generation);
        });
    }
    return reply;
}

namespace {
// Properties guardBody() leaves on a reply for collect().
constexpr char TooLargeProperty[] = "starforge.bodyLimit";
constexpr char SinkErrorProperty[] = "starforge.sinkError";
constexpr char StreamedProperty[] = "starforge.streamedBytes";
constexpr qint64 SinkReadBufferBytes = 1024 * 1024;

QString mebibytes(qint64 bytes)
{
    return QString::number(static_cast<double>(bytes) / (1024.0 * 1024.0), 'f', bytes % (1024 * 1024) == 0 ? 0 : 1);
}
} // namespace

void KubeClient::guardBody(QNetworkReply *reply, qint64 maxBytes, QIODevice *sink)
{
    if (sink) {
        // Qt stops reading the socket while this much is unread, so a fast server cannot fill
        // memory faster than the sink takes it.
        reply->setReadBufferSize(SinkReadBufferBytes);
    }
    auto onData = [reply, maxBytes, sink] {
        if (!reply->isOpen()) return;
        const int status = Net::httpStatus(reply);
        if (sink && status >= 200 && status < 300) {
            const QByteArray chunk = reply->readAll();
            if (sink->write(chunk) != chunk.size()) {
                reply->setProperty(SinkErrorProperty, sink->errorString());
                reply->abort();
                return;
            }
            reply->setProperty(StreamedProperty, reply->property(StreamedProperty).toLongLong() + chunk.size());
            return;
        }
        if (maxBytes > 0 && reply->bytesAvailable() > maxBytes) {
            reply->setProperty(TooLargeProperty, maxBytes);
            reply->abort();
        }
    };
    connect(reply, &QNetworkReply::readyRead, reply, onData);
    // The tail that arrives with the end is written before anyone collects the reply (this
    // connection is made before the caller's).
    connect(reply, &QNetworkReply::finished, reply, onData);
}

ApiResult KubeClient::collect(QNetworkReply *reply, const QString &what)
{
    ApiResult result;
    result.status = Net::httpStatus(reply);
    result.body = reply->isOpen() ? reply->readAll() : QByteArray();   // an aborted reply is closed
    result.retryAfter = reply->rawHeader("Retry-After");
    result.streamedBytes = reply->property(StreamedProperty).toLongLong();
    if (const QVariant limit = reply->property(TooLargeProperty); limit.isValid()) {
        result.body.clear();
        result.error = ApiError::transport(Text::tr("Could not %1: the API server's answer is larger than %2 MiB, the most Starforge reads "
                                              "into memory. Ask for less (a label selector, a smaller page, tailLines).")
                                               .arg(what, mebibytes(limit.toLongLong())));
        return result;
    }
    if (const QVariant sinkError = reply->property(SinkErrorProperty); sinkError.isValid()) {
        result.error = ApiError::transport(Text::tr("Could not %1: writing it to disk failed (%2). Free some space in the temporary folder "
                                              "and try again.")
                                               .arg(what, sinkError.toString()));
        return result;
    }
    if (result.status == 0) {
        QString sentence = Net::describeTransportError(reply);
        if (sentence.isEmpty()) {
            sentence = Text::tr("The API server closed the connection without an answer.");
        }
        result.error = ApiError::transport(Text::tr("Could not %1: %2").arg(what, sentence));
    } else if (result.status < 200 || result.status >= 300) {
        result.error = ApiError::fromHttp(result.status, result.body, result.retryAfter, what);
    }
    return result;
}

QNetworkReply *KubeClient::send(const ApiRequest &request, const QObject *context, Callback done)
{
    return sendSignedIn(request, context, std::move(done), false);
}

QNetworkReply *KubeClient::sendSignedIn(const ApiRequest &request, const QObject *context, Callback done, bool renewed)
{
    if (m_exec && !m_exec->current()) {
        // Sign in first; every request of the moment waits for the same run of the plugin.
        m_exec->get(context, [this, request, context, renewed, done = std::move(done)](Result<ExecCredential> credential) {
            if (!credential) {
                ApiResult failed;
                failed.error = ApiError::transport(credential.error().message);
                done(failed);
                return;
            }
            sendNow(request, context, done, renewed);
        });
        return nullptr;
    }
    return sendNow(request, context, std::move(done), renewed);
}

QNetworkReply *KubeClient::sendNow(const ApiRequest &request, const QObject *context, Callback done, bool renewed)
{
    QNetworkReply *reply = start(request, request.timeoutMs);
    guardBody(reply, request.maxBodyBytes < 0 ? m_config.maxBodyBytes : request.maxBodyBytes, request.sink);
    const QString what = request.what.isEmpty() ? QString::fromLatin1(request.method) + QLatin1Char(' ') + request.path
                                                : request.what;
    auto answered = std::make_shared<QMetaObject::Connection>();
    // A context deleted first aborts the request without an answer: abort() emits finished at
    // once, while the context is inside its destructor (QObject emits destroyed before it
    // drops its connections), so the answer's connection goes first.
    connect(context, &QObject::destroyed, reply, [reply, answered] {
        QObject::disconnect(*answered);
        reply->abort();
    });
    *answered = connect(reply, &QNetworkReply::finished, context, [this, reply, what, request, context, renewed, done = std::move(done)]() {
        ApiResult result = collect(reply, what);
        if (result.status == 401 && m_exec && !renewed) {
            // The credential ran out (or was revoked): renew it once and ask again.
            refused(reply->property("starforge.credentialGeneration").toInt());
            sendSignedIn(request, context, done, true);
            return;
        }
        done(result);
    });
    // Whether or not the context is still there, the reply goes once it is finished.
    connect(reply, &QNetworkReply::finished, reply, &QObject::deleteLater);
    return reply;
}

QNetworkReply *KubeClient::openStream(const ApiRequest &request)
{
    QNetworkReply *reply = start(request, request.timeoutMs < 0 ? 0 : request.timeoutMs);
    // A stream's reader takes what arrives as it arrives, so only an answer nobody reads (an
    // error body before the reader looks at the status) can grow: it gets the same bound.
    guardBody(reply, request.maxBodyBytes < 0 ? m_config.maxBodyBytes : request.maxBodyBytes, request.sink);
    return reply;
}

} // namespace Starforge::Kube
