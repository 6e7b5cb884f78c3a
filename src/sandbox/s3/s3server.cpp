#include "sandbox/s3/s3server.h"

#include "core/crypto/digest.h"
#include "sandbox/util/ownerfiles.h"

#include <QDir>
#include <QFile>
#include <QLocale>
#include <QUrl>
#include <QXmlStreamReader>

#include <algorithm>

namespace Starforge::Sandbox {

namespace {

using Pairs = QList<std::pair<QByteArray, QByteArray>>;

QByteArray escape(const QString &text)
{
    return text.toHtmlEscaped().toUtf8();
}

QString iso(const QDateTime &t)
{
    return t.toUTC().toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss.zzzZ"));
}

QByteArray httpDate(const QDateTime &t)
{
    return QLocale::c().toString(t.toUTC(), QStringLiteral("ddd, dd MMM yyyy HH:mm:ss 'GMT'")).toLatin1();
}

// The raw query of a request target as decoded pairs, in order ('+' is a plus, as S3 reads it).
Pairs rawQuery(const QByteArray &target)
{
    const qsizetype question = target.indexOf('?');
    return question < 0 ? Pairs() : SigV4Verifier::decodeQuery(target.mid(question + 1));
}

QByteArray queryValue(const Pairs &pairs, const QByteArray &name, bool *present = nullptr)
{
    for (const auto &[k, v] : pairs) {
        if (k == name) {
            if (present) *present = true;
            return v;
        }
    }
    if (present) *present = false;
    return {};
}

// User metadata (x-amz-meta-*), kept with the object and returned on GET and HEAD as S3 does;
// the app records a Capsule's SHA-256 there. Sorted, so answers do not depend on hash order.
Http::Headers userMetadata(const Http::Request &request)
{
    Http::Headers out;
    for (auto it = request.headers.cbegin(); it != request.headers.cend(); ++it) {
        if (it.key().startsWith("x-amz-meta-")) out.append({it.key(), it.value()});
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

S3Server::S3Server(Options options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_verifier(SigV4Verifier::Options{m_options.accessKey, m_options.secretKey, true, {}, 15 * 60})
    , m_random(m_options.seed ^ 0x733300u)
{
    makeOwnerOnlyPath(m_options.dataDir);
    for (const QString &bucket : std::as_const(m_options.buckets)) {
        m_buckets.insert(bucket, {});
    }
}

int S3Server::objectCount(const QString &bucket) const
{
    return static_cast<int>(m_buckets.value(bucket).size());
}

QString S3Server::newFile()
{
    return m_options.dataDir + QStringLiteral("/%1.bin").arg(++m_files);
}

void S3Server::xml(Http::Responder *responder, int status, const QByteArray &body)
{
    responder->respond(status, "application/xml", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + body,
                       {{"x-amz-request-id", QByteArray::number(m_random.generate64(), 16).toUpper()}});
}

void S3Server::error(Http::Responder *responder, int status, const QByteArray &code, const QString &message, const QString &resource,
                     const QList<std::pair<QByteArray, QString>> &extra)
{
    QByteArray body = "<Error><Code>" + code + "</Code><Message>" + escape(message) + "</Message>";
    for (const auto &[name, value] : extra) {
        body += '<' + name + '>' + escape(value) + "</" + name + '>';
    }
    body += "<Resource>" + escape(resource) + "</Resource><RequestId>" + QByteArray::number(m_random.generate64(), 16).toUpper()
        + "</RequestId></Error>";
    xml(responder, status, body);
}

bool S3Server::authenticate(const Http::Request &request, Http::Responder *responder, const QString &resource)
{
    if (const auto refused = m_verifier.verify(request)) {
        error(responder, refused->status, refused->code, refused->message, resource, refused->details);
        return false;
    }
    // Content-MD5, when given, must be the body's (S3 checks it for every request that has it).
    if (const QByteArray md5 = request.header("content-md5"); !md5.isEmpty()) {
        const QByteArray given = QByteArray::fromBase64(md5);
        if (given.size() != 16) {
            error(responder, 400, "InvalidDigest", QStringLiteral("The Content-MD5 you specified was invalid."), resource);
            return false;
        }
        if (given != Crypto::Digest::md5(request.body)) {
            error(responder, 400, "BadDigest", QStringLiteral("The Content-MD5 you specified did not match what we received."), resource);
            return false;
        }
    }
    return true;
}

void S3Server::setHoldUploads(bool hold)
{
    if (hold == m_holdUploads) {
        return;
    }
    m_holdUploads = hold;
    if (hold) {
        return;
    }
    const QList<Held> held = std::exchange(m_held, {});
    for (const Held &h : held) {
        if (h.responder && !h.responder->isFinished()) {
            serve(h.request, h.responder);
        }
    }
}

int S3Server::heldUploadCount() const
{
    return static_cast<int>(std::count_if(m_held.cbegin(), m_held.cend(),
                                          [](const Held &h) { return h.responder && !h.responder->isFinished(); }));
}

void S3Server::listUploads(const QString &bucket, const QueryPairs &query, Http::Responder *responder)
{
    // ListMultipartUploads without paging: a sandbox holds a handful at a time. Sorted by key,
    // then by initiation, as S3 lists them.
    const QString prefix = QString::fromUtf8(queryValue(query, "prefix"));
    QList<std::pair<QString, QString>> found;
    for (auto it = m_uploads.cbegin(); it != m_uploads.cend(); ++it) {
        if (it->bucket == bucket && it->key.startsWith(prefix)) {
            found.append({it->key, it.key()});
        }
    }
    std::sort(found.begin(), found.end(), [this](const auto &a, const auto &b) {
        return a.first != b.first ? a.first < b.first : m_uploads.value(a.second).initiated < m_uploads.value(b.second).initiated;
    });
    QByteArray body = "<ListMultipartUploadsResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Bucket>" + escape(bucket)
        + "</Bucket><KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker><NextKeyMarker></NextKeyMarker><NextUploadIdMarker></NextUploadIdMarker>"
        + "<Prefix>" + escape(prefix) + "</Prefix><MaxUploads>1000</MaxUploads><IsTruncated>false</IsTruncated>";
    for (const auto &[key, id] : std::as_const(found)) {
        body += "<Upload><Key>" + escape(key) + "</Key><UploadId>" + escape(id) + "</UploadId><Initiated>"
            + iso(m_uploads.value(id).initiated).toLatin1() + "</Initiated><StorageClass>STANDARD</StorageClass></Upload>";
    }
    xml(responder, 200, body + "</ListMultipartUploadsResult>");
}

void S3Server::handle(const Http::Request &request, Http::Responder *responder)
{
    if (!authenticate(request, responder, request.path)) {
        return;
    }
    // Held after the signature check, as a slow server would be: the client has sent it all.
    const bool objectPut = request.method == "PUT" && request.path.indexOf(u'/', 1) > 0
        && request.path.indexOf(u'/', 1) + 1 < request.path.size();
    if (m_holdUploads && objectPut) {
        m_held.append(Held{request, QPointer<Http::Responder>(responder)});
        return;
    }
    serve(request, responder);
}

void S3Server::serve(const Http::Request &request, Http::Responder *responder)
{
    const QString path = request.path;
    const QString resource = path;
    const QStringList parts = path.mid(1).split(u'/');
    const QString bucket = parts.value(0);
    const QString key = parts.size() > 1 ? path.mid(bucket.size() + 2) : QString();
    const QueryPairs query = rawQuery(request.target);
    bool hasUploads = false;
    bool hasUploadId = false;
    queryValue(query, "uploads", &hasUploads);
    queryValue(query, "uploadId", &hasUploadId);

    if (bucket.isEmpty()) {
        QByteArray body = "<ListAllMyBucketsResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Owner><ID>sandbox</ID><DisplayName>sandbox</DisplayName></Owner><Buckets>";
        for (auto it = m_buckets.cbegin(); it != m_buckets.cend(); ++it) {
            body += "<Bucket><Name>" + escape(it.key()) + "</Name><CreationDate>2026-01-01T00:00:00.000Z</CreationDate></Bucket>";
        }
        xml(responder, 200, body + "</Buckets></ListAllMyBucketsResult>");
        return;
    }
    if (key.isEmpty()) {
        if (request.method == "PUT") {
            if (m_buckets.contains(bucket)) {
                error(responder, 409, "BucketAlreadyOwnedByYou", QStringLiteral("Your previous request to create the named bucket succeeded and you already own it."), resource,
                      {{"BucketName", bucket}});
                return;
            }
            m_buckets.insert(bucket, {});
            responder->respond(200, {}, {}, {{"Location", '/' + bucket.toUtf8()}});
            return;
        }
        if (!m_buckets.contains(bucket)) {
            error(responder, 404, "NoSuchBucket", QStringLiteral("The specified bucket does not exist"), resource, {{"BucketName", bucket}});
            return;
        }
        if (request.method == "HEAD") {
            responder->respond(200, {}, {}, {{"x-amz-bucket-region", m_options.region.toUtf8()}});
        } else if (request.method == "GET" && hasUploads) {
            listUploads(bucket, query, responder);
        } else if (request.method == "GET") {
            listObjects(bucket, request, responder);
        } else if (request.method == "DELETE") {
            if (!m_buckets.value(bucket).isEmpty()) {
                error(responder, 409, "BucketNotEmpty", QStringLiteral("The bucket you tried to delete is not empty"), resource, {{"BucketName", bucket}});
                return;
            }
            m_buckets.remove(bucket);
            responder->respond(204, {}, {});
        } else {
            error(responder, 405, "MethodNotAllowed", QStringLiteral("The specified method is not allowed against this resource."), resource);
        }
        return;
    }
    if (!m_buckets.contains(bucket)) {
        error(responder, 404, "NoSuchBucket", QStringLiteral("The specified bucket does not exist"), resource, {{"BucketName", bucket}});
        return;
    }
    if (request.method == "POST" && hasUploads) createUpload(bucket, key, request, responder);
    else if (request.method == "POST" && hasUploadId) completeUpload(bucket, key, request, responder);
    else if (request.method == "PUT" && hasUploadId) uploadPart(bucket, key, request, responder);
    else if (request.method == "DELETE" && hasUploadId) abortUpload(key, request, responder);
    else if (request.method == "GET" && hasUploadId) listParts(key, request, responder);
    else if (request.method == "PUT") putObject(bucket, key, request, responder);
    else if (request.method == "GET" || request.method == "HEAD") getObject(bucket, key, request, responder, request.method == "HEAD");
    else if (request.method == "DELETE") {
        const Object gone = m_buckets[bucket].take(key);
        if (!gone.file.isEmpty()) QFile::remove(gone.file);
        responder->respond(204, {}, {});
    } else {
        error(responder, 405, "MethodNotAllowed", QStringLiteral("The specified method is not allowed against this resource."), resource);
    }
}

void S3Server::listObjects(const QString &bucket, const Http::Request &request, Http::Responder *responder)
{
    const QueryPairs query = rawQuery(request.target);
    const QString prefix = QString::fromUtf8(queryValue(query, "prefix"));
    const QString delimiter = QString::fromUtf8(queryValue(query, "delimiter"));
    bool hasMax = false;
    const QByteArray maxText = queryValue(query, "max-keys", &hasMax);
    bool maxOk = true;
    const int maxKeys = hasMax ? maxText.toInt(&maxOk) : 1000;
    if (hasMax && (!maxOk || maxKeys < 0)) {
        error(responder, 400, "InvalidArgument", QStringLiteral("Provided max-keys not an integer or within integer range"), request.path);
        return;
    }
    const QByteArray token = queryValue(query, "continuation-token");
    const QString startAfter = token.isEmpty() ? QString::fromUtf8(queryValue(query, "start-after"))
                                               : QString::fromUtf8(QByteArray::fromBase64(token, QByteArray::Base64UrlEncoding));
    const auto &objects = m_buckets[bucket];
    QByteArray contents;
    QStringList prefixes;
    int count = 0;
    bool truncated = false;
    QString last;
    for (auto it = startAfter.isEmpty() ? objects.cbegin() : objects.upperBound(startAfter); it != objects.cend(); ++it) {
        if (!it.key().startsWith(prefix)) {
            if (it.key() > prefix) break;
            continue;
        }
        if (!delimiter.isEmpty()) {
            const qsizetype at = it.key().indexOf(delimiter, prefix.size());
            if (at >= 0) {
                const QString common = it.key().left(at + delimiter.size());
                if (prefixes.contains(common)) continue;
                if (count >= maxKeys) { truncated = maxKeys > 0; break; }
                prefixes << common;
                ++count;
                // The next page starts after every key under this prefix.
                last = common + QChar(0xFFFF);
                continue;
            }
        }
        if (count >= maxKeys) {
            truncated = maxKeys > 0; // max-keys=0 asks for nothing, not for an endless walk
            break;
        }
        contents += "<Contents><Key>" + escape(it.key()) + "</Key><LastModified>" + iso(it->lastModified).toLatin1() + "</LastModified><ETag>"
            + escape(QString::fromLatin1(it->etag)) + "</ETag><Size>" + QByteArray::number(it->size) + "</Size><StorageClass>STANDARD</StorageClass></Contents>";
        ++count;
        last = it.key();
    }
    QByteArray body = "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>" + escape(bucket) + "</Name><Prefix>"
        + escape(prefix) + "</Prefix><KeyCount>" + QByteArray::number(count) + "</KeyCount><MaxKeys>" + QByteArray::number(maxKeys)
        + "</MaxKeys>";
    if (!delimiter.isEmpty()) body += "<Delimiter>" + escape(delimiter) + "</Delimiter>";
    body += QByteArray("<IsTruncated>") + (truncated ? "true" : "false") + "</IsTruncated>";
    if (!token.isEmpty()) body += "<ContinuationToken>" + token + "</ContinuationToken>";
    if (truncated) body += "<NextContinuationToken>" + last.toUtf8().toBase64(QByteArray::Base64UrlEncoding) + "</NextContinuationToken>";
    body += contents;
    for (const QString &p : std::as_const(prefixes)) body += "<CommonPrefixes><Prefix>" + escape(p) + "</Prefix></CommonPrefixes>";
    xml(responder, 200, body + "</ListBucketResult>");
}

void S3Server::putObject(const QString &bucket, const QString &key, const Http::Request &request, Http::Responder *responder)
{
    Object object;
    object.file = newFile();
    QFile file(object.file);
    if (!openOwnerOnly(file, QIODevice::WriteOnly) || file.write(request.body) != request.body.size()) {
        error(responder, 500, "InternalError", QStringLiteral("We encountered an internal error. Please try again."), request.path);
        return;
    }
    object.size = request.body.size();
    object.etag = '"' + Crypto::Digest::md5(request.body).toHex() + '"';
    object.lastModified = QDateTime::currentDateTimeUtc();
    object.contentType = request.header("content-type").isEmpty() ? QByteArray("binary/octet-stream") : request.header("content-type");
    object.metadata = userMetadata(request);
    const Object previous = m_buckets[bucket].value(key);
    if (!previous.file.isEmpty()) QFile::remove(previous.file);
    m_buckets[bucket].insert(key, object);
    responder->respond(200, {}, {}, {{"ETag", object.etag}});
}

void S3Server::getObject(const QString &bucket, const QString &key, const Http::Request &request, Http::Responder *responder, bool head)
{
    const auto &objects = m_buckets[bucket];
    const auto it = objects.constFind(key);
    if (it == objects.cend()) {
        if (head) {
            responder->respond(404, {}, {});
        } else {
            error(responder, 404, "NoSuchKey", QStringLiteral("The specified key does not exist."), request.path, {{"Key", key}});
        }
        return;
    }
    Http::Headers headers{{"ETag", it->etag}, {"Last-Modified", httpDate(it->lastModified)}, {"Accept-Ranges", "bytes"}};
    headers += it->metadata;
    qint64 from = 0;
    qint64 to = it->size - 1;
    int status = 200;
    if (const QByteArray range = request.header("range"); range.startsWith("bytes=")) {
        const QByteArray spec = range.mid(6);
        const qsizetype dash = spec.indexOf('-');
        bool okFrom = true;
        bool okTo = true;
        if (dash == 0) {
            const qint64 suffix = spec.mid(1).toLongLong(&okTo);
            from = std::max<qint64>(0, it->size - suffix);
        } else {
            from = spec.left(dash).toLongLong(&okFrom);
            if (dash + 1 < spec.size()) to = std::min(to, spec.mid(dash + 1).toLongLong(&okTo));
        }
        if (!okFrom || !okTo || from >= it->size || from > to) {
            error(responder, 416, "InvalidRange", QStringLiteral("The requested range is not satisfiable"), request.path,
                  {{"ActualObjectSize", QString::number(it->size)}, {"RangeRequested", QString::fromLatin1(range)}});
            return;
        }
        status = 206;
        headers.append({"Content-Range", "bytes " + QByteArray::number(from) + '-' + QByteArray::number(to) + '/' + QByteArray::number(it->size)});
    }
    if (head) {
        headers.append({"Content-Length", QByteArray::number(to - from + 1)});
        responder->respond(status, it->contentType, {}, headers);
        return;
    }
    if (to - from + 1 > 1024LL * 1024 * 1024) {
        // Answers are built in memory; larger reads must use Range.
        error(responder, 501, "NotImplemented", QStringLiteral("The sandbox serves at most 1 GiB per GET; request a Range."), request.path);
        return;
    }
    QFile file(it->file);
    if (!file.open(QIODevice::ReadOnly) || !file.seek(from)) {
        error(responder, 500, "InternalError", QStringLiteral("We encountered an internal error. Please try again."), request.path);
        return;
    }
    responder->respond(status, it->contentType, file.read(to - from + 1), headers);
}

void S3Server::createUpload(const QString &bucket, const QString &key, const Http::Request &request, Http::Responder *responder)
{
    const QString id = QString::fromLatin1(QByteArray::number(m_random.generate64(), 36) + QByteArray::number(m_random.generate64(), 36));
    m_uploads.insert(id, Upload{bucket, key, QDateTime::currentDateTimeUtc(), {}, userMetadata(request)});
    xml(responder, 200, "<InitiateMultipartUploadResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Bucket>" + escape(bucket) + "</Bucket><Key>"
                            + escape(key) + "</Key><UploadId>" + id.toLatin1() + "</UploadId></InitiateMultipartUploadResult>");
}

void S3Server::uploadPart(const QString &bucket, const QString &key, const Http::Request &request, Http::Responder *responder)
{
    const QueryPairs query = rawQuery(request.target);
    const QString id = QString::fromUtf8(queryValue(query, "uploadId"));
    auto upload = m_uploads.find(id);
    if (upload == m_uploads.end() || upload->key != key || upload->bucket != bucket) {
        error(responder, 404, "NoSuchUpload", QStringLiteral("The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed."),
              request.path, {{"UploadId", id}});
        return;
    }
    bool ok = false;
    const int number = queryValue(query, "partNumber").toInt(&ok);
    if (!ok || number < 1 || number > 10000) {
        error(responder, 400, "InvalidArgument", QStringLiteral("Part number must be an integer between 1 and 10000, inclusive"), request.path,
              {{"ArgumentName", QStringLiteral("partNumber")}, {"ArgumentValue", QString::fromUtf8(queryValue(query, "partNumber"))}});
        return;
    }
    if (m_options.partFailureRate && m_random.generateDouble() < m_options.partFailureRate()) {
        error(responder, 500, "InternalError", QStringLiteral("We encountered an internal error. Please try again."), request.path);
        return;
    }
    Part part;
    part.file = newFile();
    QFile file(part.file);
    if (!openOwnerOnly(file, QIODevice::WriteOnly) || file.write(request.body) != request.body.size()) {
        error(responder, 500, "InternalError", QStringLiteral("We encountered an internal error. Please try again."), request.path);
        return;
    }
    part.size = request.body.size();
    part.md5 = Crypto::Digest::md5(request.body);
    part.etag = '"' + part.md5.toHex() + '"';
    part.lastModified = QDateTime::currentDateTimeUtc();
    if (upload->parts.contains(number)) QFile::remove(upload->parts.value(number).file);
    upload->parts.insert(number, part);
    responder->respond(200, {}, {}, {{"ETag", part.etag}});
}

void S3Server::completeUpload(const QString &bucket, const QString &key, const Http::Request &request, Http::Responder *responder)
{
    const QString id = QString::fromUtf8(queryValue(rawQuery(request.target), "uploadId"));
    auto upload = m_uploads.find(id);
    if (upload == m_uploads.end() || upload->key != key || upload->bucket != bucket) {
        error(responder, 404, "NoSuchUpload", QStringLiteral("The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed."),
              request.path, {{"UploadId", id}});
        return;
    }
    QList<std::pair<int, QByteArray>> listed;
    QXmlStreamReader reader(request.body);
    int number = 0;
    QByteArray etag;
    while (!reader.atEnd()) {
        reader.readNext();
        if (reader.isStartElement() && reader.name() == QLatin1String("Part")) {
            number = 0;
            etag.clear();
        } else if (reader.isStartElement() && reader.name() == QLatin1String("PartNumber")) {
            number = reader.readElementText().toInt();
        } else if (reader.isStartElement() && reader.name() == QLatin1String("ETag")) {
            etag = reader.readElementText().trimmed().toUtf8();
        } else if (reader.isEndElement() && reader.name() == QLatin1String("Part")) {
            listed.append({number, etag});
        }
    }
    if (reader.hasError() || listed.isEmpty()) {
        error(responder, 400, "MalformedXML", QStringLiteral("The XML you provided was not well-formed or did not validate against our published schema"), request.path);
        return;
    }
    for (qsizetype i = 1; i < listed.size(); ++i) {
        if (listed[i].first <= listed[i - 1].first) {
            error(responder, 400, "InvalidPartOrder", QStringLiteral("The list of parts was not in ascending order. Parts must be ordered by part number."),
                  request.path, {{"UploadId", id}});
            return;
        }
    }
    QByteArray md5s;
    qint64 size = 0;
    for (qsizetype i = 0; i < listed.size(); ++i) {
        const auto &[n, tag] = listed[i];
        QByteArray normalized = tag;
        if (!normalized.startsWith('"')) normalized = '"' + normalized + '"';
        const auto part = upload->parts.constFind(n);
        if (part == upload->parts.cend() || part->etag != normalized) {
            error(responder, 400, "InvalidPart", QStringLiteral("One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag."),
                  request.path, {{"UploadId", id}, {"PartNumber", QString::number(n)}, {"ETag", QString::fromLatin1(tag)}});
            return;
        }
        if (i + 1 < listed.size() && part->size < m_options.minPartSize) {
            error(responder, 400, "EntityTooSmall", QStringLiteral("Your proposed upload is smaller than the minimum allowed object size."), request.path,
                  {{"ProposedSize", QString::number(part->size)}, {"MinSizeAllowed", QString::number(m_options.minPartSize)},
                   {"PartNumber", QString::number(n)}, {"ETag", QString::fromLatin1(tag)}});
            return;
        }
        md5s += part->md5;
        size += part->size;
    }
    Object object;
    object.file = newFile();
    QFile out(object.file);
    if (!openOwnerOnly(out, QIODevice::WriteOnly)) {
        error(responder, 500, "InternalError", QStringLiteral("We encountered an internal error. Please try again."), request.path);
        return;
    }
    for (const auto &[n, tag] : listed) {
        QFile in(upload->parts.value(n).file);
        if (in.open(QIODevice::ReadOnly)) {
            while (!in.atEnd()) out.write(in.read(4 * 1024 * 1024));
        }
    }
    out.close();
    object.size = size;
    object.etag = '"' + Crypto::Digest::md5(md5s).toHex() + '-' + QByteArray::number(listed.size()) + '"';
    object.lastModified = QDateTime::currentDateTimeUtc();
    object.contentType = "binary/octet-stream";
    object.metadata = upload->metadata;
    for (const Part &p : std::as_const(upload->parts)) QFile::remove(p.file);
    m_uploads.erase(upload);
    const Object previous = m_buckets[bucket].value(key);
    if (!previous.file.isEmpty()) QFile::remove(previous.file);
    m_buckets[bucket].insert(key, object);
    xml(responder, 200, "<CompleteMultipartUploadResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Location>/" + escape(bucket) + '/' + escape(key)
                            + "</Location><Bucket>" + escape(bucket) + "</Bucket><Key>" + escape(key) + "</Key><ETag>" + escape(QString::fromLatin1(object.etag))
                            + "</ETag></CompleteMultipartUploadResult>");
}

void S3Server::abortUpload(const QString &key, const Http::Request &request, Http::Responder *responder)
{
    const QString id = QString::fromUtf8(queryValue(rawQuery(request.target), "uploadId"));
    auto upload = m_uploads.find(id);
    if (upload == m_uploads.end() || upload->key != key) {
        error(responder, 404, "NoSuchUpload", QStringLiteral("The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed."),
              request.path, {{"UploadId", id}});
        return;
    }
    for (const Part &p : std::as_const(upload->parts)) QFile::remove(p.file);
    m_uploads.erase(upload);
    responder->respond(204, {}, {});
}

void S3Server::listParts(const QString &key, const Http::Request &request, Http::Responder *responder)
{
    const QString id = QString::fromUtf8(queryValue(rawQuery(request.target), "uploadId"));
    const auto upload = m_uploads.constFind(id);
    if (upload == m_uploads.cend() || upload->key != key) {
        error(responder, 404, "NoSuchUpload", QStringLiteral("The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed."),
              request.path, {{"UploadId", id}});
        return;
    }
    QByteArray body = "<ListPartsResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Bucket>" + escape(upload->bucket) + "</Bucket><Key>" + escape(key)
        + "</Key><UploadId>" + id.toLatin1() + "</UploadId><PartNumberMarker>0</PartNumberMarker><NextPartNumberMarker>"
        + QByteArray::number(upload->parts.isEmpty() ? 0 : upload->parts.lastKey()) + "</NextPartNumberMarker><MaxParts>1000</MaxParts><IsTruncated>false</IsTruncated>";
    for (auto it = upload->parts.cbegin(); it != upload->parts.cend(); ++it) {
        body += "<Part><PartNumber>" + QByteArray::number(it.key()) + "</PartNumber><LastModified>" + iso(it->lastModified).toLatin1() + "</LastModified><ETag>"
            + escape(QString::fromLatin1(it->etag)) + "</ETag><Size>" + QByteArray::number(it->size) + "</Size></Part>";
    }
    xml(responder, 200, body + "</ListPartsResult>");
}

} // namespace Starforge::Sandbox
