#include "sandbox/s3/sigv4verifier.h"

#include <QMessageAuthenticationCode>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>

namespace Starforge::Sandbox {

namespace {

constexpr char Algorithm[] = "AWS4-HMAC-SHA256";

QString iso(const QDateTime &t)
{
    return t.toUTC().toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss.zzzZ"));
}

// AWS's URI encoding: the unreserved characters of RFC 3986 stay, every other byte becomes %XY
// with upper-case hex; '/' stays only where the caller says so (paths).
QByteArray awsEncode(const QByteArray &bytes, bool keepSlash)
{
    static constexpr char Hex[] = "0123456789ABCDEF";
    QByteArray out;
    out.reserve(bytes.size() + bytes.size() / 2);
    for (const char ch : bytes) {
        const auto c = static_cast<unsigned char>(ch);
        const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
            || c == '_' || c == '~';
        if (unreserved || (keepSlash && c == '/')) {
            out.append(ch);
            continue;
        }
        out.append('%');
        out.append(Hex[(c >> 4) & 0xF]);
        out.append(Hex[c & 0xF]);
    }
    return out;
}

QDateTime parseAmzDate(const QByteArray &text)
{
    QDateTime t = QDateTime::fromString(QString::fromLatin1(text), QStringLiteral("yyyyMMdd'T'HHmmss'Z'"));
    t.setTimeSpec(Qt::UTC);
    return t;
}

QByteArray valueOf(const QList<std::pair<QByteArray, QByteArray>> &pairs, const QByteArray &name, bool *present = nullptr)
{
    const auto it = std::find_if(pairs.cbegin(), pairs.cend(), [&](const auto &p) { return p.first == name; });
    if (present) *present = it != pairs.cend();
    return it == pairs.cend() ? QByteArray() : it->second;
}

SigV4Verifier::Failure failure(int status, const char *code, const QString &message,
                               QList<std::pair<QByteArray, QString>> details = {})
{
    return SigV4Verifier::Failure{status, QByteArray(code), message, std::move(details)};
}

} // namespace

SigV4Verifier::SigV4Verifier(Options options)
    : m_options(std::move(options))
{
}

QList<std::pair<QByteArray, QByteArray>> SigV4Verifier::decodeQuery(const QByteArray &rawQuery)
{
    QList<std::pair<QByteArray, QByteArray>> pairs;
    for (const QByteArray &item : rawQuery.split('&')) {
        if (item.isEmpty()) continue;
        const qsizetype eq = item.indexOf('=');
        pairs.append({QByteArray::fromPercentEncoding(eq < 0 ? item : item.left(eq)),
                      eq < 0 ? QByteArray() : QByteArray::fromPercentEncoding(item.mid(eq + 1))});
    }
    return pairs;
}

QByteArray SigV4Verifier::canonicalUri(const QByteArray &rawPath)
{
    // Whatever escaping the client chose, the canonical form is the decoded path encoded once.
    const QByteArray encoded = awsEncode(QByteArray::fromPercentEncoding(rawPath), true);
    return encoded.isEmpty() ? QByteArrayLiteral("/") : encoded;
}

QByteArray SigV4Verifier::canonicalQuery(const QByteArray &rawQuery)
{
    QList<std::pair<QByteArray, QByteArray>> encoded;
    for (const auto &[name, value] : decodeQuery(rawQuery)) {
        if (name == "X-Amz-Signature") continue;   // what is being computed is not part of it
        encoded.append({awsEncode(name, false), awsEncode(value, false)});
    }
    std::sort(encoded.begin(), encoded.end());   // by encoded name, then value (byte order)
    QByteArrayList parts;
    parts.reserve(encoded.size());
    for (const auto &[name, value] : std::as_const(encoded)) parts.append(name + '=' + value);
    return parts.join('&');
}

QByteArray SigV4Verifier::canonicalHeaders(const Http::Request &request, const QList<QByteArray> &signedHeaders)
{
    QByteArray out;
    for (const QByteArray &name : signedHeaders) {
        // Trimmed; any run of spaces, tabs or folded line breaks inside becomes one space.
        QByteArray value;
        bool gap = false;
        for (const char c : request.header(name.toLower()).trimmed()) {
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
                gap = true;
                continue;
            }
            if (gap) value.append(' ');
            gap = false;
            value.append(c);
        }
        out += name.toLower() + ':' + value + '\n';
    }
    return out;
}

QByteArray SigV4Verifier::canonicalRequest(const Http::Request &request, const QList<QByteArray> &signedHeaders,
                                           const QByteArray &payloadHash)
{
    const qsizetype question = request.target.indexOf('?');
    const QByteArray rawPath = question < 0 ? request.target : request.target.left(question);
    const QByteArray rawQuery = question < 0 ? QByteArray() : request.target.mid(question + 1);
    QByteArrayList names;
    for (const QByteArray &n : signedHeaders) names.append(n.toLower());
    return request.method + '\n' + canonicalUri(rawPath) + '\n' + canonicalQuery(rawQuery) + '\n'
        + canonicalHeaders(request, signedHeaders) + '\n' + names.join(';') + '\n' + payloadHash;
}

QByteArray SigV4Verifier::stringToSign(const QByteArray &amzDate, const QByteArray &scope, const QByteArray &canonicalRequest)
{
    return QByteArray(Algorithm) + '\n' + amzDate + '\n' + scope + '\n' + sha256Hex(canonicalRequest);
}

QByteArray SigV4Verifier::signingKey(const QByteArray &secret, const QByteArray &date, const QByteArray &region,
                                     const QByteArray &service)
{
    QByteArray key = "AWS4" + secret;
    for (const QByteArray &step : {date, region, service, QByteArrayLiteral("aws4_request")}) {
        key = hmacSha256(key, step);
    }
    return key;
}

QByteArray SigV4Verifier::sha256Hex(const QByteArray &data)
{
    // OpenSSL's EVP digest: bodies of many megabytes pass through here (QCryptographicHash is
    // several times slower on this machine, docs/architecture.md).
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_Digest(data.constData(), static_cast<size_t>(data.size()), digest, &length, EVP_sha256(), nullptr) != 1) {
        return {};
    }
    return QByteArray(reinterpret_cast<const char *>(digest), static_cast<qsizetype>(length)).toHex();
}

QByteArray SigV4Verifier::hmacSha256(const QByteArray &key, const QByteArray &data)
{
    return QMessageAuthenticationCode::hash(data, key, QCryptographicHash::Sha256);
}

std::optional<SigV4Verifier::Failure> SigV4Verifier::verify(const Http::Request &request) const
{
    const qsizetype question = request.target.indexOf('?');
    const auto query = decodeQuery(question < 0 ? QByteArray() : request.target.mid(question + 1));
    const QByteArray authorization = request.header("authorization");
    bool presigned = false;
    const QByteArray algorithm = valueOf(query, "X-Amz-Algorithm", &presigned);
    if (authorization.isEmpty() && !presigned) {
        return failure(403, "AccessDenied", QStringLiteral("Access Denied"));
    }
    if (!authorization.isEmpty() && presigned) {
        return failure(400, "InvalidArgument",
                       QStringLiteral("Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query "
                                      "string parameter or the Authorization header should be specified"),
                       {{"ArgumentName", QStringLiteral("Authorization")}, {"ArgumentValue", QString::fromLatin1(authorization)}});
    }

    QByteArray credential;
    QByteArray signedHeaders;
    QByteArray signature;
    QByteArray amzDate;
    if (presigned) {
        if (algorithm != Algorithm) {
            return failure(400, "AuthorizationQueryParametersError",
                           QStringLiteral("X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\"."));
        }
        credential = valueOf(query, "X-Amz-Credential");
        signedHeaders = valueOf(query, "X-Amz-SignedHeaders");
        signature = valueOf(query, "X-Amz-Signature");
        amzDate = valueOf(query, "X-Amz-Date");
        if (credential.isEmpty() || signedHeaders.isEmpty() || signature.isEmpty() || amzDate.isEmpty()
            || valueOf(query, "X-Amz-Expires").isEmpty()) {
            return failure(400, "AuthorizationQueryParametersError",
                           QStringLiteral("Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, "
                                          "X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters."));
        }
    } else {
        // "AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…" (spaces after commas optional).
        if (!authorization.startsWith(QByteArray(QByteArray(Algorithm) + ' '))) {
            return failure(400, "InvalidArgument", QStringLiteral("Unsupported Authorization Type"));
        }
        for (const QByteArray &item : authorization.mid(qsizetype(sizeof(Algorithm))).split(',')) {
            const QByteArray part = item.trimmed();
            const qsizetype eq = part.indexOf('=');
            const QByteArray name = part.left(eq);
            if (name == "Credential") credential = part.mid(eq + 1);
            else if (name == "SignedHeaders") signedHeaders = part.mid(eq + 1);
            else if (name == "Signature") signature = part.mid(eq + 1);
        }
        amzDate = request.header("x-amz-date");
    }

    // <access key>/<yyyyMMdd>/<region>/<service>/aws4_request
    const QList<QByteArray> scope = credential.split('/');
    if (scope.size() != 5 || scope[4] != "aws4_request" || signature.isEmpty() || signedHeaders.isEmpty()) {
        return failure(400, "AuthorizationHeaderMalformed",
                       QStringLiteral("The authorization header is malformed; the Credential is mal-formed."));
    }
    if (scope[0] != m_options.accessKey) {
        return failure(403, "InvalidAccessKeyId", QStringLiteral("The AWS Access Key Id you provided does not exist in our records."),
                       {{"AWSAccessKeyId", QString::fromUtf8(scope[0])}});
    }
    const QDateTime signedAt = parseAmzDate(amzDate);
    if (!signedAt.isValid()) {
        return failure(403, "AccessDenied", QStringLiteral("AWS authentication requires a valid Date or x-amz-date header"));
    }
    const QDateTime now = m_options.now ? m_options.now() : QDateTime::currentDateTimeUtc();
    if (presigned) {
        bool ok = false;
        const qint64 expires = valueOf(query, "X-Amz-Expires").toLongLong(&ok);
        if (!ok || expires <= 0 || expires > 604800) {
            return failure(400, "AuthorizationQueryParametersError",
                           QStringLiteral("X-Amz-Expires must be less than a week (in seconds) that is 604800"));
        }
        if (signedAt.secsTo(now) > expires) {
            return failure(403, "AccessDenied", QStringLiteral("Request has expired"),
                           {{"X-Amz-Expires", QString::number(expires)}, {"Expires", iso(signedAt.addSecs(expires))}});
        }
    } else if (std::abs(signedAt.secsTo(now)) > m_options.maxSkewSeconds) {
        return failure(403, "RequestTimeTooSkewed", QStringLiteral("The difference between the request time and the current time is too large."),
                       {{"RequestTime", QString::fromLatin1(amzDate)}, {"ServerTime", iso(now)},
                        {"MaxAllowedSkewMilliseconds", QString::number(m_options.maxSkewSeconds * 1000)}});
    }

    // The payload hash that was signed.
    const QByteArray contentHash = request.header("x-amz-content-sha256");
    QByteArray payloadHash;
    if (!m_options.s3) {
        payloadHash = contentHash.isEmpty() ? sha256Hex(request.body) : contentHash;
    } else if (presigned) {
        payloadHash = contentHash.isEmpty() ? QByteArrayLiteral("UNSIGNED-PAYLOAD") : contentHash;
    } else if (contentHash.isEmpty()) {
        return failure(400, "InvalidRequest", QStringLiteral("Missing required header for this request: x-amz-content-sha256"));
    } else {
        payloadHash = contentHash;
    }

    const QList<QByteArray> headerNames = signedHeaders.split(';');
    const QByteArray canonical = canonicalRequest(request, headerNames, payloadHash);
    const QByteArray toSign = stringToSign(amzDate, scope.mid(1).join('/'), canonical);
    const QByteArray expected = hmacSha256(signingKey(m_options.secretKey, scope[1], scope[2], scope[3]), toSign).toHex();
    if (expected.size() != signature.size()
        || CRYPTO_memcmp(expected.constData(), signature.constData(), static_cast<size_t>(expected.size())) != 0) {
        return failure(403, "SignatureDoesNotMatch",
                       QStringLiteral("The request signature we calculated does not match the signature you provided. Check your key and signing method."),
                       {{"AWSAccessKeyId", QString::fromUtf8(scope[0])}, {"StringToSign", QString::fromUtf8(toSign)},
                        {"CanonicalRequest", QString::fromUtf8(canonical)}});
    }
    if (contentHash.startsWith("STREAMING-")) {
        // aws-chunked bodies carry a signature per chunk; the sandbox does not decode them.
        return failure(501, "NotImplemented",
                       QStringLiteral("The sandbox does not accept aws-chunked (STREAMING-*) payloads; sign the whole body."));
    }
    // The signed hash must be the body's (header form; a presigned request signs no body).
    if (!presigned && !contentHash.isEmpty() && contentHash != "UNSIGNED-PAYLOAD") {
        const QByteArray actual = sha256Hex(request.body);
        if (contentHash != actual) {
            return failure(400, "XAmzContentSHA256Mismatch",
                           QStringLiteral("The provided 'x-amz-content-sha256' header does not match what was computed."),
                           {{"ClientComputedContentSHA256", QString::fromLatin1(contentHash)},
                            {"S3ComputedContentSHA256", QString::fromLatin1(actual)}});
        }
    }
    return std::nullopt;
}

} // namespace Starforge::Sandbox
