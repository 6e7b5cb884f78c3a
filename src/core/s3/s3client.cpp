#include "core/s3/s3client.h"

#include "core/config/effectiveconfig.h"
#include "core/crypto/digest.h"
#include "core/net/proxy.h"
#include "core/s3/multipartupload.h"
#include "core/s3/s3errors.h"

#include <QCoreApplication>
#include <QFile>
#include <QLoggingCategory>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSet>
#include <QTimer>

#include <memory>
#include <type_traits>

namespace Starforge::S3 {

Q_LOGGING_CATEGORY(lcS3, "starforge.core.s3")

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(S3)
};

constexpr qint64 SinkReadBufferBytes = 1024 * 1024;

int defaultPort(const QUrl &url)
{
    return url.scheme() == QLatin1String("https") ? 443 : 80;
}

// The URL requests go to, as NO_PROXY sees it: bucket.host in virtual-host style.
QUrl requestTarget(const ClientConfig &config)
{
    QUrl target = config.endpoint;
    if (!config.pathStyle) {
        target.setHost(config.bucket + QLatin1Char('.') + target.host());
    }
    return target;
}

} // namespace

// ---- ClientConfig -----------------------------------------------------------------------------

Result<ClientConfig> ClientConfig::fromEffectiveConfig(const Config::EffectiveConfig &config, Net::RequestPolicy policy)
{
    ClientConfig out;
    const QString endpoint = config.value(QStringLiteral("FORGE_S3_ENDPOINT")).trimmed();
    if (endpoint.isEmpty()) {
        return Error::invalid(Text::tr("FORGE_S3_ENDPOINT is not set. Give the URL of the S3-compatible object store, "
                                 "e.g. https://s3.example.com."));
    }
    out.endpoint = QUrl(endpoint, QUrl::StrictMode);
    if (!out.endpoint.isValid() || out.endpoint.host().isEmpty()
        || (out.endpoint.scheme() != QLatin1String("http") && out.endpoint.scheme() != QLatin1String("https"))) {
        return Error::invalid(Text::tr("FORGE_S3_ENDPOINT (%1) is not an http(s) URL with a host.").arg(endpoint));
    }
    out.bucket = config.value(QStringLiteral("FORGE_S3_BUCKET")).trimmed();
    if (out.bucket.isEmpty()) {
        return Error::invalid(Text::tr("FORGE_S3_BUCKET is not set. Give the bucket that holds Capsules and logs."));
    }
    const QString region = config.value(QStringLiteral("FORGE_S3_REGION")).trimmed();
    if (!region.isEmpty()) {
        out.region = region;
    }
    out.pathStyle = config.boolean(QStringLiteral("FORGE_S3_PATH_STYLE"));
    out.credentials.accessKeyId = config.value(QStringLiteral("FORGE_S3_ACCESS_KEY")).toUtf8();
    out.credentials.secretAccessKey = config.value(QStringLiteral("FORGE_S3_SECRET_KEY")).toUtf8();
    if (out.credentials.accessKeyId.isEmpty() || out.credentials.secretAccessKey.isEmpty()) {
        return Error::invalid(Text::tr("FORGE_S3_ACCESS_KEY and FORGE_S3_SECRET_KEY must both be set (in the keychain or "
                                 "the environment) to use %1.").arg(out.endpoint.host()));
    }
    out.policy = std::move(policy);
    // A self-hosted store's own CA, unless the caller brought a policy with one.
    const QString caFile = config.value(QStringLiteral("FORGE_S3_CA_FILE"));
    if (!caFile.isEmpty() && out.policy.tls().caCertificates.isEmpty()) {
        auto certificates = Net::TlsSettings::loadCertificateFile(caFile);
        if (!certificates) {
            return Error::invalid(Text::tr("FORGE_S3_CA_FILE: %1").arg(certificates.error().message));
        }
        Net::TlsSettings tls = out.policy.tls();
        tls.caCertificates = *certificates;
        out.policy = Net::RequestPolicy(tls, out.policy.transferTimeoutMs());
    }
    // Checked here so that a bad FORGE_S3_PROXY (or HTTPS_PROXY) is reported with the other
    // settings, not as a failed request later.
    out.proxyUrl = config.value(QStringLiteral("FORGE_S3_PROXY")).trimmed();
    if (auto proxy = Net::proxyFor(requestTarget(out), out.proxyUrl, QStringLiteral("FORGE_S3_PROXY")); !proxy) {
        return proxy.error();
    }
    return out;
}

// ---- S3Reply ----------------------------------------------------------------------------------

S3Reply::S3Reply(S3Client *client, RequestSpec spec, Interpret interpret)
    : QObject(client)
    , m_client(client)
    , m_spec(std::move(spec))
    , m_interpret(std::move(interpret))
    , m_backoff(client->config().backoff)
{
}

S3Reply::~S3Reply()
{
    if (m_reply) {
        // Deleted while running: the request stops and its reply goes with it.
        disconnect(m_reply, nullptr, this, nullptr);
        m_reply->abort();
        delete m_reply;
    }
}

Result<void> S3Reply::result() const
{
    if (!m_finished) {
        return Error::internal(Text::tr("The S3 request has not finished yet."));
    }
    if (m_error) {
        return *m_error;
    }
    return {};
}

QByteArray S3Reply::etag() const
{
    return m_headers.value("etag");
}

qint64 S3Reply::contentLength() const
{
    bool ok = false;
    const qint64 length = m_headers.value("content-length").toLongLong(&ok);
    return ok ? length : -1;
}

QByteArray S3Reply::rawHeader(const QByteArray &name) const
{
    return m_headers.value(name.toLower());
}

void S3Reply::abort()
{
    if (m_finished) {
        return;
    }
    m_aborted = true;
    if (m_retryTimer) {
        m_retryTimer->stop();
    }
    if (m_reply) {
        m_reply->abort(); // onFinished follows, synchronously
    } else {
        finish(Error::unavailable(Text::tr("The S3 request was cancelled.")));
    }
}

void S3Reply::send()
{
    if (!m_client) {
        finish(Error::internal(Text::tr("The S3 client was destroyed before the request went out.")));
        return;
    }
    ++m_attempts;
    m_reply = m_client->sendSigned(m_spec);
    if (m_sink) {
        // Qt stops reading the socket while this much is unread: the sink sets the pace.
        m_reply->setReadBufferSize(SinkReadBufferBytes);
    }
    connect(m_reply, &QNetworkReply::readyRead, this, &S3Reply::onData);
    connect(m_reply, &QNetworkReply::finished, this, &S3Reply::onFinished);
    if (m_spec.sendsBody) {
        connect(m_reply, &QNetworkReply::uploadProgress, this, &S3Reply::uploadProgress);
    }
}

void S3Reply::onData()
{
    if (!m_reply || m_bodyError || !m_reply->isOpen()) {
        return;
    }
    const int status = Net::httpStatus(m_reply);
    if (m_sink && status >= 200 && status < 300) {
        const QByteArray chunk = m_reply->readAll();
        if (m_sink->write(chunk) != chunk.size()) {
            m_bodyError = Error::io(Text::tr("Writing %1 to disk failed: %2. Free some space and try again.").arg(m_spec.key, m_sink->errorString()));
            m_reply->abort();
            return;
        }
        m_sinkWritten += chunk.size();
        return;
    }
    const qint64 limit = m_client ? m_client->config().maxBodyBytes : 0;
    if (limit > 0 && m_reply->bytesAvailable() > limit) {
        const QString what = m_spec.key.isEmpty() ? Text::tr("a request to bucket %1").arg(m_client->config().bucket) : m_spec.key;
        m_bodyError = Error::unavailable(Text::tr("The S3 server's answer for %1 is larger than %2 MiB, the most Starforge holds in memory; "
                                            "it was not read. A large object is downloaded to a file instead.")
                                             .arg(what)
                                             .arg(limit / (1024 * 1024)));
        m_reply->abort();
    }
}

bool S3Reply::rewindSink()
{
    if (m_sinkWritten == 0) {
        return true;
    }
    auto *file = qobject_cast<QFileDevice *>(m_sink);
    if (!file || !file->flush() || !file->resize(0) || !file->seek(0)) {
        return false;
    }
    m_sinkWritten = 0;
    return true;
}

void S3Reply::onFinished()
{
    QNetworkReply *reply = m_reply;
    onData();   // the tail that came with the end
    m_reply = nullptr;
    reply->deleteLater();
    if (m_aborted) {
        finish(Error::unavailable(Text::tr("The S3 request was cancelled.")));
        return;
    }
    if (m_bodyError) {
        finish(m_bodyError);
        return;
    }

    m_status = Net::httpStatus(reply);
    m_body = reply->isOpen() ? reply->readAll() : QByteArray();
    m_headers.clear();
    for (const auto &[name, value] : reply->rawHeaderPairs()) {
        m_headers.insert(name.toLower(), value);
    }
    const ErrorContext context{m_client ? m_client->config().endpoint.authority() : QString(),
                               m_client ? m_client->config().bucket : QString(), m_spec.key,
                               m_client ? QString::fromUtf8(m_client->config().credentials.accessKeyId) : QString()};

    std::optional<Error> error;
    bool transient = false;
    if (m_status == 0) {
        error = Error::unavailable(Net::describeTransportError(reply));
        transient = Net::isTransient(0, reply->error());
    } else if (m_status < 200 || m_status >= 300) {
        const std::optional<ErrorDocument> document = Xml::parseError(m_body);
        m_s3Code = document ? document->code : QString();
        error = describeS3Error(m_status, document, context);
        transient = Net::isTransient(m_status, reply->error());
    }

    const int maxAttempts = m_maxAttempts > 0 ? m_maxAttempts : m_client->config().maxAttempts;
    if (error && transient && m_attempts < maxAttempts && rewindSink()) {
        const int retryAfter = Net::retryAfterMs(reply->rawHeader("Retry-After"));
        const int delay = retryAfter >= 0 ? retryAfter : m_backoff.next();
        qCDebug(lcS3) << "retrying" << m_spec.method << m_spec.key << "in" << delay << "ms:" << error->message;
        Q_EMIT retrying(m_attempts, delay, error->message);
        if (!m_retryTimer) {
            m_retryTimer = new QTimer(this);
            m_retryTimer->setSingleShot(true);
            connect(m_retryTimer, &QTimer::timeout, this, &S3Reply::send);
        }
        m_retryTimer->start(delay);
        return;
    }
    if (error) {
        finish(std::move(error));
        return;
    }

    ++m_pages;
    if (m_interpret) {
        auto next = m_interpret(this);
        if (!next) {
            finish(next.error());
            return;
        }
        if (next->has_value()) {
            m_spec = std::move(**next);
            m_attempts = 0;
            m_backoff.reset();
            send();
            return;
        }
    }
    finish(std::nullopt);
}

void S3Reply::finish(std::optional<Error> error)
{
    m_error = std::move(error);
    m_finished = true;
    Q_EMIT finished();
}

// ---- S3Client ---------------------------------------------------------------------------------

S3Client::S3Client(ClientConfig config, QObject *parent)
    : QObject(parent)
    , m_config(std::move(config))
    , m_nam(std::make_unique<QNetworkAccessManager>())
{
    // Always set, NoProxy included, so Qt's system proxy lookup never decides for us.
    auto proxy = Net::proxyFor(requestTarget(m_config), m_config.proxyUrl, QStringLiteral("FORGE_S3_PROXY"));
    if (!proxy) {
        // fromEffectiveConfig has checked this; only a hand-made config gets here.
        qCWarning(lcS3).noquote() << proxy.error().message << "Connecting without a proxy.";
    }
    m_nam->setProxy(proxy ? *proxy : QNetworkProxy(QNetworkProxy::NoProxy));
}

S3Client::~S3Client()
{
    // Replies are children of this object and go first; their QNetworkReplies are deleted by them.
    qDeleteAll(findChildren<S3Reply *>(Qt::FindDirectChildrenOnly));
}

QByteArray S3Client::hostHeader() const
{
    QByteArray host = m_config.endpoint.host(QUrl::FullyEncoded).toUtf8();
    if (host.contains(':')) {
        host = '[' + host + ']'; // IPv6 literal
    }
    if (!m_config.pathStyle) {
        host = m_config.bucket.toUtf8() + '.' + host;
    }
    const int port = m_config.endpoint.port();
    if (port > 0 && port != defaultPort(m_config.endpoint)) {
        host += ':' + QByteArray::number(port);
    }
    return host;
}

QByteArray S3Client::encodedPath(const QString &key) const
{
    QByteArray prefix = m_config.endpoint.path(QUrl::FullyEncoded).toUtf8();
    while (prefix.endsWith('/')) {
        prefix.chop(1);
    }
    QByteArray path = prefix;
    if (m_config.pathStyle) {
        path += '/' + SigV4::uriEncode(m_config.bucket.toUtf8(), true);
        if (!key.isEmpty()) {
            path += '/' + SigV4::uriEncode(key.toUtf8(), false);
        }
    } else {
        path += '/' + SigV4::uriEncode(key.toUtf8(), false);
    }
    return path;
}

QUrl S3Client::urlFor(const QByteArray &path, const Pairs &query) const
{
    QByteArray text = m_config.endpoint.scheme().toUtf8() + "://" + hostHeader() + path;
    QByteArrayList pairs;
    for (const auto &[name, value] : query) {
        pairs << SigV4::uriEncode(name, true) + '=' + SigV4::uriEncode(value, true);
    }
    if (!pairs.isEmpty()) {
        text += '?' + pairs.join('&');
    }
    // The path and query are already encoded exactly as signed; QUrl must keep them as they are.
    return QUrl::fromEncoded(text, QUrl::StrictMode);
}

QNetworkReply *S3Client::sendSigned(const RequestSpec &spec)
{
    const QByteArray path = encodedPath(spec.key);
    const QUrl url = urlFor(path, spec.query);
    QNetworkRequest request = m_config.policy.request(url);
    request.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);

    SigningRequest signing;
    signing.method = spec.method;
    signing.path = path;
    signing.query = spec.query;
    // Host is set explicitly so the value sent is the value signed.
    signing.headers = {{"Host", hostHeader()}};
    signing.headers += spec.headers;
    if (spec.sendsBody) {
        QByteArray md5 = m_hooks.contentMd5Override;
        if (md5.isEmpty() && spec.contentMd5) {
            md5 = Crypto::Digest::md5(spec.body).toBase64();
        }
        bool hasMd5 = false;
        for (auto &[name, value] : signing.headers) {
            if (name.compare("Content-MD5", Qt::CaseInsensitive) == 0) {
                hasMd5 = true;
                if (!m_hooks.contentMd5Override.isEmpty()) {
                    value = m_hooks.contentMd5Override;
                }
            }
        }
        if (!hasMd5 && (spec.contentMd5 || !m_hooks.contentMd5Override.isEmpty())) {
            signing.headers.append({"Content-MD5", md5});
        }
    }
    signing.payloadHash = spec.payloadHash.isEmpty() ? Crypto::Digest::sha256(spec.body).toHex() : spec.payloadHash;
    if (spec.sendsBody && !m_hooks.payloadHashOverride.isEmpty()) {
        signing.payloadHash = m_hooks.payloadHashOverride;
    }
    SigningParams params;
    params.region = m_config.region;
    params.time = QDateTime::currentDateTimeUtc().addSecs(m_hooks.clockOffsetSeconds);
    const Signature signature = SigV4::signHeaders(signing, m_config.credentials, params);
    for (const auto &[name, value] : signing.headers) {
        request.setRawHeader(name, value);
    }
    for (const auto &[name, value] : signature.addedHeaders) {
        request.setRawHeader(name, value);
    }
    if (spec.method == "HEAD") {
        // sendCustomRequest("HEAD") would wait for a body that never comes.
        return m_nam->head(request);
    }
    if (spec.method == "GET") {
        return m_nam->get(request);
    }
    if (spec.method == "DELETE") {
        return m_nam->deleteResource(request);
    }
    if (!spec.sendsBody && spec.body.isEmpty()) {
        // A body-less PUT/POST still needs Content-Length: 0 for S3.
        request.setHeader(QNetworkRequest::ContentLengthHeader, 0);
    }
    return m_nam->sendCustomRequest(request, spec.method, spec.body);
}

S3Reply *S3Client::start(RequestSpec spec, S3Reply::Interpret interpret)
{
    auto *reply = new S3Reply(this, std::move(spec), std::move(interpret));
    reply->send();
    return reply;
}

template <typename T>
void S3Client::deliver(S3Reply *reply, const QObject *context, Done<T> done, std::function<T(S3Reply &)> take)
{
    // The reply is a child of the client; the context only decides whether anyone still listens.
    const QMetaObject::Connection gone = connect(context, &QObject::destroyed, reply, [reply] {
        reply->disconnect();
        reply->abort();
        reply->deleteLater();
    });
    connect(reply, &S3Reply::finished, context, [reply, gone, done = std::move(done), take = std::move(take)] {
        disconnect(gone);
        reply->deleteLater();
        if (const Result<void> outcome = reply->result(); !outcome) {
            done(outcome.error());
        } else if constexpr (std::is_void_v<T>) {
            done({});
        } else {
            done(take(*reply));
        }
    });
}

void S3Client::putObject(const QString &key, const QByteArray &data, const QByteArray &contentType, const QObject *context, Done<void> done)
{
    deliver<void>(putObject(key, data, contentType), context, std::move(done), {});
}

void S3Client::getObject(const QString &key, const QObject *context, Done<QByteArray> done)
{
    deliver<QByteArray>(getObject(key), context, std::move(done), [](S3Reply &reply) { return reply.data(); });
}

void S3Client::headObject(const QString &key, const QObject *context, Done<ObjectHead> done)
{
    deliver<ObjectHead>(headObject(key), context, std::move(done), [](S3Reply &reply) {
        return ObjectHead{reply.contentLength(), reply.etag(), reply.rawHeader(Sha256MetadataHeader)};
    });
}

void S3Client::deleteObject(const QString &key, const QObject *context, Done<void> done)
{
    deliver<void>(deleteObject(key), context, std::move(done), {});
}

void S3Client::listAllObjects(const QString &prefix, const QObject *context, Done<QList<ObjectInfo>> done)
{
    deliver<QList<ObjectInfo>>(listAllObjects(prefix), context, std::move(done), [](S3Reply &reply) { return reply.listing().objects; });
}

S3Reply *S3Client::putObject(const QString &key, const QByteArray &data, const QByteArray &contentType)
{
    // The payload hash is the object's SHA-256: computed once, signed, and kept with the object.
    const QByteArray sha256Hex = Crypto::Digest::sha256(data).toHex();
    RequestSpec spec{"PUT", key, {}, {{Sha256MetadataHeader, sha256Hex}}, data, sha256Hex, true};
    if (!contentType.isEmpty()) {
        spec.headers.append({"Content-Type", contentType});
    }
    return start(std::move(spec));
}

S3Reply *S3Client::getObject(const QString &key)
{
    return start({"GET", key, {}, {}, {}, {}, false});
}

S3Reply *S3Client::downloadObject(const QString &key, QIODevice *sink)
{
    auto *reply = new S3Reply(this, {"GET", key, {}, {}, {}, {}, false}, {});
    reply->m_sink = sink;
    reply->send();
    return reply;
}

void S3Client::downloadObject(const QString &key, const QString &filePath, const QObject *context, Done<qint64> done)
{
    auto file = std::make_shared<QFile>(filePath);
    if (!file->open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        const Error error = Error::io(Text::tr("Cannot write %1: %2.").arg(filePath, file->errorString()));
        QTimer::singleShot(0, context, [done, error] { done(error); });
        return;
    }
    deliver<qint64>(
        downloadObject(key, file.get()), context,
        [file, done = std::move(done)](Result<qint64> written) {
            if (written && !file->flush()) {
                written = Error::io(Text::tr("Cannot write %1: %2.").arg(file->fileName(), file->errorString()));
            }
            file->close();
            if (!written) {
                file->remove();   // never a partial object that looks whole
            }
            done(std::move(written));
        },
        [](S3Reply &reply) { return reply.bytesWritten(); });
}

S3Reply *S3Client::headObject(const QString &key)
{
    return start({"HEAD", key, {}, {}, {}, {}, false});
}

S3Reply *S3Client::deleteObject(const QString &key)
{
    return start({"DELETE", key, {}, {}, {}, {}, false});
}

namespace {

RequestSpec listSpec(const QString &prefix, int maxKeys, const QString &token)
{
    RequestSpec spec{"GET", {}, {{"list-type", "2"}}, {}, {}, {}, false};
    if (!prefix.isEmpty()) {
        spec.query.append({"prefix", prefix.toUtf8()});
    }
    spec.query.append({"max-keys", QByteArray::number(std::clamp(maxKeys, 1, 1000))});
    if (!token.isEmpty()) {
        spec.query.append({"continuation-token", token.toUtf8()});
    }
    return spec;
}

} // namespace

S3Reply *S3Client::listObjects(const QString &prefix, int maxKeys, const QString &continuationToken)
{
    return start(listSpec(prefix, maxKeys, continuationToken), [](S3Reply *r) -> Result<std::optional<RequestSpec>> {
        auto page = Xml::parseListObjectsV2(r->m_body);
        if (!page) {
            return page.error();
        }
        r->m_listing = std::move(page).value();
        return std::optional<RequestSpec>();
    });
}

S3Reply *S3Client::listAllObjects(const QString &prefix, int pageSize)
{
    // Every token seen: a server that hands back an earlier one (A, B, A, ...) or none while
    // still truncated would otherwise keep this listing going for ever.
    auto seen = std::make_shared<QSet<QString>>();
    return start(listSpec(prefix, pageSize, {}), [prefix, pageSize, seen](S3Reply *r) -> Result<std::optional<RequestSpec>> {
        auto page = Xml::parseListObjectsV2(r->m_body);
        if (!page) {
            return page.error();
        }
        r->m_listing.objects += page->objects;
        r->m_listing.commonPrefixes += page->commonPrefixes;
        r->m_listing.keyCount += page->keyCount;
        if (page->truncated) {
            if (page->nextContinuationToken.isEmpty() || seen->contains(page->nextContinuationToken)) {
                return Error::unavailable(Text::tr("The S3 server's listing of %1 does not end: it said there is more but returned %2 "
                                             "after %3 pages. The listing was stopped; the server or a proxy in front of it is at fault.")
                                              .arg(prefix.isEmpty() ? Text::tr("the bucket") : prefix,
                                                   page->nextContinuationToken.isEmpty() ? Text::tr("no continuation token") : Text::tr("a continuation token it had given before"))
                                              .arg(seen->size() + 1));
            }
            seen->insert(page->nextContinuationToken);
            r->m_listing.nextContinuationToken = page->nextContinuationToken;
            return std::optional<RequestSpec>(listSpec(prefix, pageSize, page->nextContinuationToken));
        }
        r->m_listing.truncated = false;
        r->m_listing.nextContinuationToken.clear();
        return std::optional<RequestSpec>();
    });
}

Result<QUrl> S3Client::presignedGetUrl(const QString &key, int expiresSeconds, const QDateTime &now) const
{
    if (expiresSeconds < 1 || expiresSeconds > 7 * 24 * 3600) {
        return Error::invalid(Text::tr("A presigned URL must expire between 1 second and 7 days from now; %1 seconds was "
                                 "asked.").arg(expiresSeconds));
    }
    if (key.isEmpty()) {
        return Error::invalid(Text::tr("A presigned URL needs an object key."));
    }
    SigningRequest signing;
    signing.method = "GET";
    signing.path = encodedPath(key);
    signing.headers = {{"Host", hostHeader()}};
    signing.payloadHash = "UNSIGNED-PAYLOAD";
    SigningParams params;
    params.region = m_config.region;
    params.time = now.isValid() ? now.toUTC() : QDateTime::currentDateTimeUtc();
    const Signature signature = SigV4::presign(signing, m_config.credentials, params, expiresSeconds);
    return urlFor(signing.path, signature.addedQuery);
}

S3Reply *S3Client::createBucket()
{
    return start({"PUT", {}, {}, {}, {}, {}, false});
}

MultipartUpload *S3Client::uploadFile(const QString &key, const QString &filePath, const MultipartOptions &options)
{
    auto *upload = new MultipartUpload(this, key, filePath, options, this);
    upload->start();
    return upload;
}

S3Reply *S3Client::createMultipartUpload(const QString &key, const QByteArray &contentType, const QByteArray &sha256Hex)
{
    RequestSpec spec{"POST", key, {{"uploads", {}}}, {}, {}, {}, false};
    if (!contentType.isEmpty()) {
        spec.headers.append({"Content-Type", contentType});
    }
    // Metadata is given when the upload starts; the completed object carries it.
    if (!sha256Hex.isEmpty()) {
        spec.headers.append({Sha256MetadataHeader, sha256Hex});
    }
    return start(std::move(spec), [](S3Reply *r) -> Result<std::optional<RequestSpec>> {
        auto id = Xml::parseInitiateMultipartUpload(r->m_body);
        if (!id) {
            return id.error();
        }
        r->m_uploadId = *id;
        return std::optional<RequestSpec>();
    });
}

S3Reply *S3Client::uploadPart(const QString &key, const QString &uploadId, int partNumber, const QByteArray &data,
                              const QByteArray &md5, const QByteArray &sha256Hex)
{
    RequestSpec spec{"PUT", key, {{"partNumber", QByteArray::number(partNumber)}, {"uploadId", uploadId.toUtf8()}},
                     {}, data, sha256Hex, true, false};
    if (!md5.isEmpty()) {
        spec.headers.append({"Content-MD5", md5.toBase64()});
    }
    return start(std::move(spec));
}

S3Reply *S3Client::listParts(const QString &key, const QString &uploadId)
{
    RequestSpec spec{"GET", key, {{"uploadId", uploadId.toUtf8()}}, {}, {}, {}, false};
    return start(spec, [spec](S3Reply *r) -> Result<std::optional<RequestSpec>> {
        auto page = Xml::parseListParts(r->m_body);
        if (!page) {
            return page.error();
        }
        r->m_parts.uploadId = page->uploadId;
        r->m_parts.parts += page->parts;
        if (page->truncated) {
            if (page->nextPartNumberMarker <= r->m_parts.nextPartNumberMarker) {
                return Error::unavailable(Text::tr("The S3 server's part listing does not advance."));
            }
            r->m_parts.nextPartNumberMarker = page->nextPartNumberMarker;
            RequestSpec next = spec;
            next.query.append({"part-number-marker", QByteArray::number(page->nextPartNumberMarker)});
            return std::optional<RequestSpec>(std::move(next));
        }
        return std::optional<RequestSpec>();
    });
}

S3Reply *S3Client::completeMultipartUpload(const QString &key, const QString &uploadId, const QList<PartInfo> &parts)
{
    RequestSpec spec{"POST", key, {{"uploadId", uploadId.toUtf8()}}, {{"Content-Type", "application/xml"}},
                     Xml::completeMultipartUploadBody(parts), {}, true};
    return start(std::move(spec), [](S3Reply *r) -> Result<std::optional<RequestSpec>> {
        auto complete = Xml::parseCompleteMultipartUpload(r->m_body);
        if (!complete) {
            return complete.error();
        }
        r->m_complete = std::move(complete).value();
        if (r->m_complete.error) {
            // A 200 whose body is an <Error>: the assembly failed after the headers went out.
            r->m_s3Code = r->m_complete.error->code;
            const ErrorContext context{r->m_client->config().endpoint.authority(), r->m_client->config().bucket,
                                       r->m_spec.key, QString::fromUtf8(r->m_client->config().credentials.accessKeyId)};
            return describeS3Error(200, r->m_complete.error, context);
        }
        return std::optional<RequestSpec>();
    });
}

S3Reply *S3Client::abortMultipartUpload(const QString &key, const QString &uploadId)
{
    return start({"DELETE", key, {{"uploadId", uploadId.toUtf8()}}, {}, {}, {}, false});
}

S3Reply *S3Client::listMultipartUploads(const QString &prefix)
{
    RequestSpec spec{"GET", {}, {{"uploads", {}}}, {}, {}, {}, false};
    if (!prefix.isEmpty()) {
        spec.query.append({"prefix", prefix.toUtf8()});
    }
    // Every marker pair seen, as for listAllObjects: a server that goes back to an earlier one
    // (A, B, A, ...) would otherwise keep the listing going for ever.
    auto seen = std::make_shared<QSet<QString>>();
    return start(spec, [spec, prefix, seen](S3Reply *r) -> Result<std::optional<RequestSpec>> {
        auto page = Xml::parseListMultipartUploads(r->m_body);
        if (!page) {
            return page.error();
        }
        r->m_uploads.uploads += page->uploads;
        if (page->truncated) {
            const QString markers = page->nextKeyMarker + QChar(0) + page->nextUploadIdMarker;
            if (seen->contains(markers)) {   // a page without markers is refused by the parser
                return Error::unavailable(Text::tr("The S3 server's listing of unfinished uploads under %1 does not end: it said there is "
                                             "more but returned markers it had given before after %2 pages. The listing was "
                                             "stopped; the server or a proxy in front of it is at fault.")
                                              .arg(prefix.isEmpty() ? Text::tr("the bucket") : prefix)
                                              .arg(seen->size() + 1));
            }
            seen->insert(markers);
            r->m_uploads.nextKeyMarker = page->nextKeyMarker;
            r->m_uploads.nextUploadIdMarker = page->nextUploadIdMarker;
            RequestSpec next = spec;
            next.query.append({"key-marker", page->nextKeyMarker.toUtf8()});
            next.query.append({"upload-id-marker", page->nextUploadIdMarker.toUtf8()});
            return std::optional<RequestSpec>(std::move(next));
        }
        return std::optional<RequestSpec>();
    });
}

} // namespace Starforge::S3
