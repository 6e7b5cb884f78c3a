#pragma once

// The sandbox's S3-compatible endpoint: path-style buckets and objects, SigV4 verified in both
// forms (Authorization header and presigned query) by its own verifier (sigv4verifier.h, not the
// app's signer, so the two cannot share a mistake), payload integrity
// (x-amz-content-sha256, Content-MD5), put/get (with Range)/head/delete with user metadata
// (x-amz-meta-*), multipart uploads (create, upload part, list parts, complete, abort) and
// ListObjectsV2 with pagination, with S3's XML errors. Object bodies live in files under the
// state directory, not in memory. The fault holdS3Uploads keeps PUTs (objects and parts)
// unanswered until it is switched off, so a test can act while an upload is in flight.

#include "sandbox/http/httpserver.h"
#include "sandbox/s3/sigv4verifier.h"

#include <QDateTime>
#include <QHash>
#include <QMap>
#include <QObject>
#include <QPointer>
#include <QRandomGenerator>
#include <QString>

#include <functional>

namespace Starforge::Sandbox {

class S3Server final : public QObject
{
    Q_OBJECT
public:
    struct Options
    {
        QString dataDir;
        QByteArray accessKey;
        QByteArray secretKey;
        QString region = QStringLiteral("us-east-1");
        QStringList buckets;
        std::function<double()> partFailureRate; // the fault, read per part
        quint32 seed = 1;
        int minPartSize = 5 * 1024 * 1024;        // S3's: every part but the last
    };

    explicit S3Server(Options options, QObject *parent = nullptr);

    void handle(const Http::Request &request, Http::Responder *responder);
    // For tests and the benchmark: objects stored under a bucket.
    int objectCount(const QString &bucket) const;

    // While on, every PUT on an object (a whole object or a part) waits unanswered; switching it
    // off serves the held ones in arrival order (those whose client went away are dropped).
    void setHoldUploads(bool hold);
    bool holdsUploads() const { return m_holdUploads; }
    // Held PUTs whose client is still waiting.
    int heldUploadCount() const;

private:
    struct Object
    {
        QString file;
        qint64 size = 0;
        QByteArray etag;         // with quotes
        QDateTime lastModified;
        QByteArray contentType;
        Http::Headers metadata;  // x-amz-meta-* as given at PUT or at the upload's start, served on GET and HEAD
    };
    struct Part
    {
        QString file;
        qint64 size = 0;
        QByteArray etag;
        QByteArray md5;          // raw, for the multipart ETag
        QDateTime lastModified;
    };
    struct Upload
    {
        QString bucket;
        QString key;
        QDateTime initiated;
        QMap<int, Part> parts;
        Http::Headers metadata;
    };

    using QueryPairs = QList<std::pair<QByteArray, QByteArray>>;
    struct Held
    {
        Http::Request request;
        QPointer<Http::Responder> responder;
    };

    bool authenticate(const Http::Request &request, Http::Responder *responder, const QString &resource);
    void serve(const Http::Request &request, Http::Responder *responder);
    void error(Http::Responder *responder, int status, const QByteArray &code, const QString &message, const QString &resource,
               const QList<std::pair<QByteArray, QString>> &extra = {});
    void xml(Http::Responder *responder, int status, const QByteArray &body);
    QString newFile();

    void listObjects(const QString &bucket, const Http::Request &request, Http::Responder *responder);
    void listUploads(const QString &bucket, const QueryPairs &query, Http::Responder *responder);
    void putObject(const QString &bucket, const QString &key, const Http::Request &request, Http::Responder *responder);
    void getObject(const QString &bucket, const QString &key, const Http::Request &request, Http::Responder *responder, bool head);
    void createUpload(const QString &bucket, const QString &key, const Http::Request &request, Http::Responder *responder);
    void uploadPart(const QString &bucket, const QString &key, const Http::Request &request, Http::Responder *responder);
    void completeUpload(const QString &bucket, const QString &key, const Http::Request &request, Http::Responder *responder);
    void abortUpload(const QString &key, const Http::Request &request, Http::Responder *responder);
    void listParts(const QString &key, const Http::Request &request, Http::Responder *responder);

    Options m_options;
    SigV4Verifier m_verifier;
    bool m_holdUploads = false;
    QList<Held> m_held;
    QHash<QString, QMap<QString, Object>> m_buckets;
    QHash<QString, Upload> m_uploads;
    QRandomGenerator m_random;
    quint64 m_files = 0;
};

} // namespace Starforge::Sandbox
