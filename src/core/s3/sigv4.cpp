#include "core/s3/sigv4.h"

#include "core/crypto/digest.h"

#include <QCryptographicHash>
#include <QMessageAuthenticationCode>
#include <QMap>

#include <algorithm>

namespace Starforge::S3 {

const QByteArray SigV4::EmptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

namespace {

QByteArray canonicalHeaderValue(const QByteArray &value)
{
    // Trim, and collapse runs of whitespace (folded lines included) to one space.
    QByteArray out;
    bool space = false;
    for (const char c : value.trimmed()) {
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            space = true;
            continue;
        }
        if (space && !out.isEmpty()) {
            out += ' ';
        }
        space = false;
        out += c;
    }
    return out;
}

QByteArray normalize(const QByteArray &path)
{
    QList<QByteArray> out;
    for (const QByteArray &segment : path.split('/')) {
        if (segment.isEmpty() || segment == ".") continue;
        if (segment == "..") {
            if (!out.isEmpty()) out.removeLast();
            continue;
        }
        out << segment;
    }
    QByteArray result = '/' + out.join('/');
    if (path.endsWith('/') && result.size() > 1) {
        result += '/';
    }
    return result;
}

QByteArray scope(const QDateTime &time, const QString &region, const QString &service)
{
    return SigV4::scopeDate(time) + '/' + region.toUtf8() + '/' + service.toUtf8() + "/aws4_request";
}

} // namespace

QByteArray SigV4::uriEncode(const QByteArray &bytes, bool encodeSlash)
{
    QByteArray out;
    out.reserve(bytes.size() * 3);
    static const char hex[] = "0123456789ABCDEF";
    for (const char ch : bytes) {
        const auto c = static_cast<unsigned char>(ch);
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~'
            || (c == '/' && !encodeSlash)) {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

QByteArray SigV4::amzDate(const QDateTime &time)
{
    return time.toUTC().toString(QStringLiteral("yyyyMMddTHHmmssZ")).toLatin1();
}

QByteArray SigV4::scopeDate(const QDateTime &time)
{
    return time.toUTC().toString(QStringLiteral("yyyyMMdd")).toLatin1();
}

QByteArray SigV4::sha256Hex(const QByteArray &data)
{
    return Crypto::Digest::sha256(data).toHex();
}

QByteArray SigV4::hmacHex(const QByteArray &key, const QByteArray &data)
{
    return QMessageAuthenticationCode::hash(data, key, QCryptographicHash::Sha256).toHex();
}

QByteArray SigV4::signingKey(const QByteArray &secret, const QDateTime &time, const QString &region, const QString &service)
{
    const auto mac = [](const QByteArray &key, const QByteArray &data) {
        return QMessageAuthenticationCode::hash(data, key, QCryptographicHash::Sha256);
    };
    const QByteArray date = mac("AWS4" + secret, scopeDate(time));
    const QByteArray regionKey = mac(date, region.toUtf8());
    const QByteArray serviceKey = mac(regionKey, service.toUtf8());
    return mac(serviceKey, "aws4_request");
}

QByteArray SigV4::canonicalRequest(const SigningRequest &request, const Pairs &extraQuery, const Pairs &extraHeaders,
                                   bool normalizePath, QByteArray *signedHeaders)
{
    // Query: every name and value encoded, sorted by name then value.
    QList<std::pair<QByteArray, QByteArray>> query;
    for (const auto &[name, value] : request.query + extraQuery) {
        query.append({uriEncode(name, true), uriEncode(value, true)});
    }
    std::sort(query.begin(), query.end());
    QByteArrayList queryParts;
    for (const auto &[name, value] : query) {
        queryParts << name + '=' + value;
    }
    // Headers: lower-case names, sorted; repeated names join their values with ",".
    QMap<QByteArray, QByteArrayList> headers;
    for (const auto &[name, value] : request.headers + extraHeaders) {
        headers[name.toLower().trimmed()] << canonicalHeaderValue(value);
    }
    QByteArray canonicalHeaders;
    QByteArrayList names;
    for (auto it = headers.cbegin(); it != headers.cend(); ++it) {
        canonicalHeaders += it.key() + ':' + it.value().join(',') + '\n';
        names << it.key();
    }
    const QByteArray signedList = names.join(';');
    if (signedHeaders) {
        *signedHeaders = signedList;
    }
    const QByteArray path = request.path.isEmpty() ? QByteArray("/") : (normalizePath ? normalize(request.path) : request.path);
    return request.method + '\n' + path + '\n' + queryParts.join('&') + '\n' + canonicalHeaders + '\n' + signedList + '\n'
        + request.payloadHash;
}

QByteArray SigV4::stringToSign(const QByteArray &canonical, const QDateTime &time, const QString &region, const QString &service)
{
    return "AWS4-HMAC-SHA256\n" + amzDate(time) + '\n' + scope(time, region, service) + '\n' + sha256Hex(canonical);
}

Signature SigV4::signHeaders(const SigningRequest &request, const Credentials &credentials, const SigningParams &params)
{
    Signature s;
    const auto has = [&](const QByteArray &name) {
        return std::any_of(request.headers.cbegin(), request.headers.cend(),
                           [&](const auto &h) { return h.first.compare(name, Qt::CaseInsensitive) == 0; });
    };
    if (!has("x-amz-date")) {
        s.addedHeaders.append({"X-Amz-Date", amzDate(params.time)});
    }
    if (params.signPayloadHeader && !has("x-amz-content-sha256")) {
        s.addedHeaders.append({"x-amz-content-sha256", request.payloadHash});
    }
    if (!credentials.sessionToken.isEmpty() && !params.omitSessionTokenFromSignature) {
        s.addedHeaders.append({"X-Amz-Security-Token", credentials.sessionToken});
    }
    QByteArray signedHeaders;
    s.canonicalRequest = canonicalRequest(request, {}, s.addedHeaders, params.normalizePath, &signedHeaders);
    s.stringToSign = stringToSign(s.canonicalRequest, params.time, params.region, params.service);
    s.signature = hmacHex(signingKey(credentials.secretAccessKey, params.time, params.region, params.service), s.stringToSign);
    s.authorization = "AWS4-HMAC-SHA256 Credential=" + credentials.accessKeyId + '/' + scope(params.time, params.region, params.service)
        + ", SignedHeaders=" + signedHeaders + ", Signature=" + s.signature;
    if (!credentials.sessionToken.isEmpty() && params.omitSessionTokenFromSignature) {
        s.addedHeaders.append({"X-Amz-Security-Token", credentials.sessionToken});
    }
    s.addedHeaders.append({"Authorization", s.authorization});
    return s;
}

Signature SigV4::presign(const SigningRequest &request, const Credentials &credentials, const SigningParams &params, int expiresSeconds)
{
    Signature s;
    // Only the headers the request carries are signed (Host at least); the payload is not.
    QByteArrayList names;
    for (const auto &[name, value] : request.headers) {
        if (!names.contains(name.toLower())) names << name.toLower();
    }
    std::sort(names.begin(), names.end());
    s.addedQuery = {{"X-Amz-Algorithm", "AWS4-HMAC-SHA256"},
                    {"X-Amz-Credential", credentials.accessKeyId + '/' + scope(params.time, params.region, params.service)},
                    {"X-Amz-Date", amzDate(params.time)},
                    {"X-Amz-Expires", QByteArray::number(expiresSeconds)},
                    {"X-Amz-SignedHeaders", names.join(';')}};
    if (!credentials.sessionToken.isEmpty() && !params.omitSessionTokenFromSignature) {
        s.addedQuery.append({"X-Amz-Security-Token", credentials.sessionToken});
    }
    SigningRequest unsignedPayload = request;
    if (unsignedPayload.payloadHash.isEmpty()) {
        unsignedPayload.payloadHash = "UNSIGNED-PAYLOAD";
    }
    s.canonicalRequest = canonicalRequest(unsignedPayload, s.addedQuery, {}, params.normalizePath, nullptr);
    s.stringToSign = stringToSign(s.canonicalRequest, params.time, params.region, params.service);
    s.signature = hmacHex(signingKey(credentials.secretAccessKey, params.time, params.region, params.service), s.stringToSign);
    if (!credentials.sessionToken.isEmpty() && params.omitSessionTokenFromSignature) {
        s.addedQuery.append({"X-Amz-Security-Token", credentials.sessionToken});
    }
    s.addedQuery.append({"X-Amz-Signature", s.signature});
    return s;
}

} // namespace Starforge::S3
