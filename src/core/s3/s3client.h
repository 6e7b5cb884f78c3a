#pragma once

// The app's S3 client: objects (put, get, head, delete), ListObjectsV2 with paging, presigned GET
// URLs, bucket creation and the multipart requests MultipartUpload is built from. Requests go out
// through the one QNetworkAccessManager of the client, built by Net::RequestPolicy and signed with
// SigV4 in the header form; every body carries its real SHA-256 (x-amz-content-sha256) and
// Content-MD5, so the server rejects a corrupted upload. Transient failures (Net::isTransient)
// are retried with Net::Backoff. Errors are sentences (describeS3Error, describeTransportError).
//
// Asynchronous in two forms, neither blocking nor nesting an event loop; use from the thread the
// client lives in.
// - The core's one shape (CONTRIBUTING.md): call(..., context, done). done runs once, on context's
//   thread, with a Result; a missing object is Error::Code::NotFound. If context is destroyed
//   first, the request is aborted and done never runs. Use it unless you need what follows.
// - An S3Reply, for progress, retries, abort() or the HTTP details: it emits finished() exactly
//   once, then result() says what happened. The caller deletes the reply (deleteLater() in the
//   slot is fine); a reply still running when deleted aborts its request.

#include "core/net/backoff.h"
#include "core/net/requestpolicy.h"
#include "core/s3/s3xml.h"
#include "core/s3/sigv4.h"
#include "core/util/result.h"

#include <QByteArray>
#include <QDateTime>
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QUrl>

#include <functional>
#include <memory>
#include <optional>

class QIODevice;
class QNetworkAccessManager;
class QNetworkReply;
class QTimer;

namespace Starforge::Config {
class EffectiveConfig;
}

namespace Starforge::S3 {

class MultipartUpload;
struct MultipartOptions;

struct ClientConfig
{
    QUrl endpoint;                      // http(s)://host[:port][/prefix]
    QString bucket;
    QString region = QStringLiteral("us-east-1");
    bool pathStyle = true;              // host/bucket/key; false: bucket.host/key
    Credentials credentials;            // session token included when temporary
    Net::RequestPolicy policy;          // TLS trust, transfer timeout, user agent
    QString proxyUrl;                   // FORGE_S3_PROXY; empty: the environment's (Net::proxyFor)
    int maxAttempts = 4;                // per request, counting the first; retries only transient failures
    // The largest answer held in memory (an object read with getObject(), a listing page, an
    // error). Archive records and listings are far smaller; a larger object is refused with a
    // sentence, and is read with downloadObject() instead, which is bounded by the disk.
    qint64 maxBodyBytes = 256 * 1024 * 1024;
    Net::Backoff::Params backoff = {200, 5000, 2.0, 1.0, 120000};

    // From the FORGE_S3_* settings in force; an error naming the setting that is missing.
    static Result<ClientConfig> fromEffectiveConfig(const Config::EffectiveConfig &config,
                                                    Net::RequestPolicy policy = {});
};

// The user metadata under which the client records an object's SHA-256 (hex) when it writes
// it: every putObject(), and an upload whose MultipartOptions::sha256Hex is set. S3's own
// x-amz-checksum-sha256 cannot stand in: for a multipart object it is a checksum of the parts'
// checksums, not of the bytes, and radosgw 16.2 ignores it (docs/s3.md, "Checksums").
inline constexpr char Sha256MetadataHeader[] = "x-amz-meta-sha256";

// What a HEAD tells about an object.
struct ObjectHead
{
    qint64 size = -1;       // Content-Length; -1 when absent
    QByteArray etag;        // quotes included
    QByteArray sha256;      // Sha256MetadataHeader as stored (hex); empty when the object has none
};

// One request as the client sends it; public for MultipartUpload and tests.

struct RequestSpec
{
    QByteArray method;
    QString key;            // empty: the bucket itself
    Pairs query;            // decoded names and values
    Pairs headers;          // extra headers (Content-Type, Content-MD5 ...)
    QByteArray body;
    QByteArray payloadHash; // hex SHA-256 of body; computed when empty
    bool sendsBody = false; // PUT/POST with a body: the test hooks apply
    bool contentMd5 = true; // with sendsBody: add Content-MD5 unless headers has it
};

class S3Client;

class S3Reply final : public QObject
{
    Q_OBJECT
public:
    ~S3Reply() override;

    bool isFinished() const { return m_finished; }
    // Ok, or the error as a sentence. Valid after finished().
    Result<void> result() const;
    // The HTTP status of the last answer (0 for a transport failure) and S3's error code, if any.
    int httpStatus() const { return m_status; }
    QString s3ErrorCode() const { return m_s3Code; }

    QByteArray data() const { return m_body; }        // getObject's content
    qint64 bytesWritten() const { return m_sinkWritten; } // downloadObject's content, in bytes
    QByteArray etag() const;                          // the ETag header, quotes included
    qint64 contentLength() const;                     // headObject's Content-Length; -1 when absent
    QByteArray rawHeader(const QByteArray &name) const; // name lower-case
    const ListObjectsPage &listing() const { return m_listing; } // listObjects / listAllObjects (merged)
    int pages() const { return m_pages; }             // pages fetched
    const ListPartsPage &parts() const { return m_parts; }       // listParts (merged)
    const ListUploadsPage &uploads() const { return m_uploads; } // listMultipartUploads (merged)
    QString uploadId() const { return m_uploadId; }   // createMultipartUpload
    const CompleteResult &completion() const { return m_complete; } // completeMultipartUpload
    int attempts() const { return m_attempts; }
    // Attempts for this request, counting the first (default: the client's maxAttempts).
    void setMaxAttempts(int attempts) { m_maxAttempts = attempts; }

    // Stops the request; finished() follows with an "cancelled" error.
    void abort();

Q_SIGNALS:
    void finished();
    void uploadProgress(qint64 bytesSent, qint64 bytesTotal);
    // A transient failure; the request goes out again after delayMs.
    void retrying(int attempt, int delayMs, const QString &reason);

private:
    friend class S3Client;
    // Reads a successful answer's body into the typed fields; may return the next page's request.
    using Interpret = std::function<Result<std::optional<RequestSpec>>(S3Reply *)>;

    S3Reply(S3Client *client, RequestSpec spec, Interpret interpret);
    void send();
    void onData();
    void onFinished();
    // Before a retry: a sink that took part of a failed answer starts again, if it can.
    bool rewindSink();
    void finish(std::optional<Error> error);

    QPointer<S3Client> m_client;
    RequestSpec m_spec;
    Interpret m_interpret;
    QNetworkReply *m_reply = nullptr;
    QTimer *m_retryTimer = nullptr;
    Net::Backoff m_backoff;
    bool m_finished = false;
    bool m_aborted = false;
    int m_attempts = 0;
    int m_maxAttempts = 0;
    int m_status = 0;
    QString m_s3Code;
    std::optional<Error> m_error;
    QByteArray m_body;
    QHash<QByteArray, QByteArray> m_headers;
    ListObjectsPage m_listing;
    ListPartsPage m_parts;
    ListUploadsPage m_uploads;
    QString m_uploadId;
    CompleteResult m_complete;
    int m_pages = 0;
    QIODevice *m_sink = nullptr;  // downloadObject: a 2xx body goes here, not into m_body
    qint64 m_sinkWritten = 0;
    std::optional<Error> m_bodyError; // the answer was too large, or the sink refused it
};

class S3Client final : public QObject
{
    Q_OBJECT
public:
    explicit S3Client(ClientConfig config, QObject *parent = nullptr);
    ~S3Client() override;

    const ClientConfig &config() const { return m_config; }

    // Objects. data is held in memory: for large files use uploadFile(). putObject records
    // data's SHA-256 as Sha256MetadataHeader.
    S3Reply *putObject(const QString &key, const QByteArray &data, const QByteArray &contentType = {});
    S3Reply *getObject(const QString &key);
    S3Reply *headObject(const QString &key);
    S3Reply *deleteObject(const QString &key);
    // GET streamed into sink as it arrives, so an object of any size takes one read buffer of
    // memory; bytesWritten() says how much. A retry after part of the body was written starts
    // the sink again (a QFileDevice is truncated) or, for a sink that cannot, is not made. sink
    // must stay open until finished().
    S3Reply *downloadObject(const QString &key, QIODevice *sink);

    // One ListObjectsV2 page (maxKeys 1..1000); the next one with listing().nextContinuationToken.
    S3Reply *listObjects(const QString &prefix, int maxKeys = 1000, const QString &continuationToken = {});
    // Every object under prefix, following continuation tokens pageSize keys at a time.
    S3Reply *listAllObjects(const QString &prefix, int pageSize = 1000);

    // A GET URL anyone can fetch until it expires (1 s .. 7 days), signed at now (default: the
    // current time).
    Result<QUrl> presignedGetUrl(const QString &key, int expiresSeconds, const QDateTime &now = {}) const;

    // The same requests in the core's callback shape (see the top of this file).
    template <typename T>
    using Done = std::function<void(Result<T>)>;
    void putObject(const QString &key, const QByteArray &data, const QByteArray &contentType, const QObject *context, Done<void> done);
    void getObject(const QString &key, const QObject *context, Done<QByteArray> done);
    // key into the file at filePath (created or replaced); the bytes written.
    void downloadObject(const QString &key, const QString &filePath, const QObject *context, Done<qint64> done);
    void headObject(const QString &key, const QObject *context, Done<ObjectHead> done);
    void deleteObject(const QString &key, const QObject *context, Done<void> done);
    void listAllObjects(const QString &prefix, const QObject *context, Done<QList<ObjectInfo>> done);

    // Creates the configured bucket (tests, first-run setup).
    S3Reply *createBucket();

    // A streamed multipart upload of a file, started at once; see multipartupload.h. The caller
    // deletes the returned object after its finished().
    MultipartUpload *uploadFile(const QString &key, const QString &filePath, const MultipartOptions &options);

    // The multipart requests, for MultipartUpload and for cleaning up orphans.
    // sha256Hex: the whole object's SHA-256, recorded as Sha256MetadataHeader (empty: none).
    S3Reply *createMultipartUpload(const QString &key, const QByteArray &contentType = {}, const QByteArray &sha256Hex = {});
    // data's hashes are given because they are computed off the GUI thread: sha256 hex, and md5
    // raw for Content-MD5 (empty: none sent).
    S3Reply *uploadPart(const QString &key, const QString &uploadId, int partNumber, const QByteArray &data,
                        const QByteArray &md5, const QByteArray &sha256Hex);
    S3Reply *listParts(const QString &key, const QString &uploadId);
    S3Reply *completeMultipartUpload(const QString &key, const QString &uploadId, const QList<PartInfo> &parts);
    S3Reply *abortMultipartUpload(const QString &key, const QString &uploadId);
    S3Reply *listMultipartUploads(const QString &prefix = {});

    // Test hooks for the integrity and clock checks: when set, body uploads claim this
    // x-amz-content-sha256 (hex, signed as such) or this Content-MD5 (base64) instead of the real
    // one, and requests are signed with the clock moved by clockOffsetSeconds.
    struct TestHooks
    {
        QByteArray payloadHashOverride;
        QByteArray contentMd5Override;
        qint64 clockOffsetSeconds = 0;
    };
    void setTestHooks(const TestHooks &hooks) { m_hooks = hooks; }

    // The URL and signed request for spec; the reply is the caller's.
    QNetworkReply *sendSigned(const RequestSpec &spec);

private:
    friend class S3Reply;
    S3Reply *start(RequestSpec spec, S3Reply::Interpret interpret = {});
    // Hands reply's outcome to done on context, then deletes the reply; aborts it if context goes.
    template <typename T>
    static void deliver(S3Reply *reply, const QObject *context, Done<T> done, std::function<T(S3Reply &)> take);
    QByteArray hostHeader() const;
    QByteArray encodedPath(const QString &key) const;
    QUrl urlFor(const QByteArray &path, const Pairs &query) const;

    ClientConfig m_config;
    std::unique_ptr<QNetworkAccessManager> m_nam;
    TestHooks m_hooks;
};

} // namespace Starforge::S3
