#pragma once

// AWS Signature Version 4, in both forms: the Authorization header and the presigned query
// string. Shared by the app's S3 client and the sandbox's S3 server (which recomputes and
// compares). Canonicalisation follows the AWS suite: header names lower-cased and sorted,
// values trimmed with inner runs of spaces collapsed and repeats joined by ",", query pairs
// encoded once and sorted, the path encoded once as sent (S3 does not normalise it).

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QString>

#include <utility>

namespace Starforge::S3 {

struct Credentials
{
    QByteArray accessKeyId;
    QByteArray secretAccessKey;
    QByteArray sessionToken;   // temporary credentials; empty when none
};

using Pairs = QList<std::pair<QByteArray, QByteArray>>;

struct SigningRequest
{
    QByteArray method;
    QByteArray path;       // as on the wire: URI-encoded once, e.g. "/bucket/my%20key"
    Pairs query;           // decoded names and values, in any order
    Pairs headers;         // as sent (Host included); names in any case
    QByteArray payloadHash; // hex SHA-256 of the body, or "UNSIGNED-PAYLOAD"
};

struct SigningParams
{
    QString region = QStringLiteral("us-east-1");
    QString service = QStringLiteral("s3");
    QDateTime time;             // UTC
    bool normalizePath = false; // remove dot segments and repeated slashes (not for S3)
    bool signPayloadHeader = true;  // add x-amz-content-sha256 (S3 wants it)
    bool omitSessionTokenFromSignature = false;
};

struct Signature
{
    QByteArray canonicalRequest;
    QByteArray stringToSign;
    QByteArray signature;       // hex
    QByteArray authorization;   // header mode only
    Pairs addedHeaders;         // header mode: x-amz-date, x-amz-content-sha256, token, Authorization
    Pairs addedQuery;           // query mode: the X-Amz-* parameters, X-Amz-Signature last
};

class SigV4
{
public:
    static Signature signHeaders(const SigningRequest &request, const Credentials &credentials, const SigningParams &params);
    static Signature presign(const SigningRequest &request, const Credentials &credentials, const SigningParams &params,
                             int expiresSeconds);

    // The pieces, public for the server side and for tests.
    static QByteArray canonicalRequest(const SigningRequest &request, const Pairs &extraQuery, const Pairs &extraHeaders,
                                       bool normalizePath, QByteArray *signedHeaders);
    static QByteArray stringToSign(const QByteArray &canonicalRequest, const QDateTime &time, const QString &region, const QString &service);
    static QByteArray signingKey(const QByteArray &secret, const QDateTime &time, const QString &region, const QString &service);
    static QByteArray hmacHex(const QByteArray &key, const QByteArray &data);
    static QByteArray sha256Hex(const QByteArray &data);
    static QByteArray uriEncode(const QByteArray &bytes, bool encodeSlash);
    static QByteArray amzDate(const QDateTime &time);       // 20150830T123600Z
    static QByteArray scopeDate(const QDateTime &time);     // 20150830
    static const QByteArray EmptyPayloadHash;
};

} // namespace Starforge::S3
