#pragma once

// The sandbox S3 endpoint's own check of AWS Signature Version 4, written from AWS's
// description of the algorithm (docs/s3.md, "Signature Version 4 as the sandbox checks it")
// and kept apart from the app's signer (src/core/s3/sigv4.*): if both came from one piece of
// code, a mistake in it would sign and verify alike and no test could see it. It is checked
// against AWS's published test vectors (tests/data/sigv4, tests/sandbox/tst_sigv4verifier.cpp);
// the app's signer is checked against the same vectors and against radosgw.
//
// Both forms are read: the Authorization header and the presigned query (X-Amz-*). The server
// recomputes the canonical request from what arrived (method, path and query re-encoded by
// AWS's rules, the signed headers, the payload hash), the string to sign and the signing key,
// and compares signatures in constant time. For S3, header-signed requests must carry
// x-amz-content-sha256 (a hex SHA-256 that must match the body, or UNSIGNED-PAYLOAD) and
// presigned ones sign UNSIGNED-PAYLOAD; other services sign the body's hash. The region and
// service of the credential scope are taken as the client signed them (the sandbox answers for
// any region, as the app's S3 settings let a user name one).

#include "sandbox/http/httpserver.h"

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QString>

#include <functional>
#include <optional>
#include <utility>

namespace Starforge::Sandbox {

class SigV4Verifier
{
public:
    struct Options
    {
        QByteArray accessKey;
        QByteArray secretKey;
        bool s3 = true;                          // S3's payload rules (above); false: any AWS service's
        std::function<QDateTime()> now;          // UTC; empty: the system clock
        qint64 maxSkewSeconds = 15 * 60;
    };

    // Why a request is refused, as S3 says it: the HTTP status, the error code, its message and
    // any further elements of the <Error> document.
    struct Failure
    {
        int status = 403;
        QByteArray code;
        QString message;
        QList<std::pair<QByteArray, QString>> details;
    };

    explicit SigV4Verifier(Options options);

    // Nothing when the request is signed with the secret key and (header form) its body is the
    // one signed; otherwise what to answer.
    std::optional<Failure> verify(const Http::Request &request) const;

    // The steps, public for the tests that compare them with AWS's published intermediate values.
    // The path as AWS canonicalises it for S3: decoded, then every byte but unreserved ones and
    // '/' percent-encoded once (upper-case hex); no dot-segment removal.
    static QByteArray canonicalUri(const QByteArray &rawPath);
    // name=value pairs from the raw query, decoded then encoded again by AWS's rules (a missing
    // value is empty), sorted by name then value; X-Amz-Signature left out.
    static QByteArray canonicalQuery(const QByteArray &rawQuery);
    // "name:value\n" for each signed header (names lower-case, values trimmed with inner runs of
    // whitespace made one space), in the order given (AWS requires them sorted).
    static QByteArray canonicalHeaders(const Http::Request &request, const QList<QByteArray> &signedHeaders);
    static QByteArray canonicalRequest(const Http::Request &request, const QList<QByteArray> &signedHeaders,
                                       const QByteArray &payloadHash);
    static QByteArray stringToSign(const QByteArray &amzDate, const QByteArray &scope, const QByteArray &canonicalRequest);
    // HMAC-SHA256 chain: "AWS4" + secret, then date (yyyyMMdd), region, service, "aws4_request".
    static QByteArray signingKey(const QByteArray &secret, const QByteArray &date, const QByteArray &region,
                                 const QByteArray &service);
    static QByteArray sha256Hex(const QByteArray &data);
    static QByteArray hmacSha256(const QByteArray &key, const QByteArray &data);

    // The query as sent, split on '&' and '=' and percent-decoded ('+' stays a plus, as S3 reads it).
    static QList<std::pair<QByteArray, QByteArray>> decodeQuery(const QByteArray &rawQuery);

private:
    Options m_options;
};

} // namespace Starforge::Sandbox
