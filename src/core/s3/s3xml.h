#pragma once

// Pure parsers for the XML documents an S3 server sends back, and the request body of
// CompleteMultipartUpload. They take arbitrary bytes (a fuzzer calls them directly): malformed,
// truncated or hostile input gives an Error, never a crash, and nesting and element counts are
// bounded. QXmlStreamReader does not resolve external entities, so nothing is fetched or expanded.

#include "core/util/result.h"

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace Starforge::S3 {

// <Error><Code>…</Code><Message>…</Message>…</Error>
struct ErrorDocument
{
    QString code;        // e.g. "SignatureDoesNotMatch"; never empty in a parsed document
    QString message;
    QString resource;
    QString requestId;
    QString bucketName;  // sent by some servers with NoSuchBucket
    QString key;         // sent with NoSuchKey
};

struct ObjectInfo
{
    QString key;
    qint64 size = 0;
    QByteArray etag;     // as sent, quotes included
    QDateTime lastModified;
};

// One page of ListObjectsV2.
struct ListObjectsPage
{
    QList<ObjectInfo> objects;
    QStringList commonPrefixes;
    bool truncated = false;
    QString nextContinuationToken; // set when truncated
    int keyCount = 0;
};

struct PartInfo
{
    int partNumber = 0;
    qint64 size = 0;
    QByteArray etag;     // as sent, quotes included
};

// One page of ListParts.
struct ListPartsPage
{
    QString uploadId;
    QList<PartInfo> parts;
    bool truncated = false;
    int nextPartNumberMarker = 0;
};

struct UploadInfo
{
    QString key;
    QString uploadId;
    QDateTime initiated;
};

// One page of ListMultipartUploads.
struct ListUploadsPage
{
    QList<UploadInfo> uploads;
    bool truncated = false;
    QString nextKeyMarker;
    QString nextUploadIdMarker;
};

// CompleteMultipartUpload's answer. S3 may send 200 with an <Error> body (the failure happened
// after the headers went out); parseCompleteMultipartUpload reports that as an ErrorDocument.
struct CompleteResult
{
    QString location;
    QByteArray etag;     // may be empty: radosgw sends <ETag></ETag>; read it with HEAD instead
    std::optional<ErrorDocument> error;
};

namespace Xml {

// The error document, or nothing when the bytes are not an S3 <Error> with a <Code>.
std::optional<ErrorDocument> parseError(const QByteArray &xml);
Result<ListObjectsPage> parseListObjectsV2(const QByteArray &xml);
Result<ListPartsPage> parseListParts(const QByteArray &xml);
Result<ListUploadsPage> parseListMultipartUploads(const QByteArray &xml);
// The UploadId of InitiateMultipartUploadResult; an error when missing or empty.
Result<QString> parseInitiateMultipartUpload(const QByteArray &xml);
Result<CompleteResult> parseCompleteMultipartUpload(const QByteArray &xml);

// The CompleteMultipartUpload request body for these parts (sorted by number by the caller).
QByteArray completeMultipartUploadBody(const QList<PartInfo> &parts);

} // namespace Xml
} // namespace Starforge::S3
