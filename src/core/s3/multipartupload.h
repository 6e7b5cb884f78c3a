#pragma once

// A multipart upload of one file, streamed: parts are read from the file and hashed (SHA-256 for
// x-amz-content-sha256; MD5 for Content-MD5 when asked and for the resume check) on worker
// threads, a few ahead of the uploads, so a 1 GiB file never sits in memory. Parts go up in parallel, each retried with Net::Backoff on
// transient failures. On cancel() or a final failure the upload is aborted on the server, so no
// orphan parts are left billed; pause() keeps it for a later resume. Resuming (options.uploadId)
// lists the parts already uploaded and skips those whose size and ETag match what would be sent.

#include "core/util/result.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>

#include <optional>
#include <vector>

namespace Starforge::S3 {

class S3Client;
class S3Reply;

struct MultipartOptions
{
    static constexpr qint64 MinPartSize = 5 * 1024 * 1024; // S3's minimum for every part but the last

    qint64 partSize = 16 * 1024 * 1024;  // >= MinPartSize; grown so a file needs at most 10000 parts
    int concurrency = 4;                 // parts uploading at once; two more are read and hashed ahead
    int maxAttempts = 5;                 // per part, counting the first
    QString uploadId;                    // resume this upload instead of starting one
    // Content-MD5 on every part, checked by the server on top of x-amz-content-sha256 (which is
    // always sent). Off by default: it costs a second pass over every byte, and the SHA-256
    // already makes the server refuse a corrupted part.
    bool contentMd5 = false;
    QByteArray contentType;
    // The whole file's SHA-256 (hex), recorded as the object's Sha256MetadataHeader (s3client.h)
    // so that a later HEAD can tell whether the bucket holds these bytes; the parts' own hashes
    // cannot give it. Empty: none recorded. A resumed upload keeps what its start recorded.
    QByteArray sha256Hex;
};

class MultipartUpload final : public QObject
{
    Q_OBJECT
public:
    // Prefer S3Client::uploadFile(), which creates and starts it.
    MultipartUpload(S3Client *client, QString key, QString filePath, MultipartOptions options,
                    QObject *parent = nullptr);
    ~MultipartUpload() override;

    void start();
    // Stops and aborts the upload on the server; finished() follows with a "cancelled" error.
    // Takes effect from the event loop, so it is safe in a slot of progress().
    void cancel();
    // Stops but leaves the upload and its parts on the server: resume with uploadId() in
    // MultipartOptions. finished() follows with a "paused" error.
    void pause();

    bool isFinished() const { return m_finished; }
    Result<void> result() const;
    QString key() const { return m_key; }
    QString uploadId() const { return m_uploadId; }
    // The completed object's ETag as the server reported it; may be empty (radosgw), read it with
    // headObject() then.
    QByteArray etag() const { return m_etag; }
    qint64 totalBytes() const { return m_total; }
    qint64 bytesDone() const;
    int partCount() const { return static_cast<int>(m_parts.size()); }
    qint64 partSize() const { return m_partSize; }
    int partsSkipped() const { return m_skipped; }   // already on the server when resuming
    int retries() const { return m_retries; }        // part retries after transient failures

Q_SIGNALS:
    // The server's id for this upload, as soon as it is known (keep it to resume later).
    void uploadIdKnown(const QString &uploadId);
    void progress(qint64 bytesDone, qint64 bytesTotal);
    void finished();

private:
    struct Prepared
    {
        QByteArray data;
        QByteArray md5;               // raw; empty when not needed
        QByteArray sha256Hex;
        std::optional<Error> error;
    };
    struct Part
    {
        enum class State { Pending, Preparing, Ready, Uploading, Done };
        int number = 0;
        qint64 offset = 0;
        qint64 size = 0;
        State state = State::Pending;
        qint64 sent = 0;              // bytes of this part acknowledged by the transport
        QByteArray etag;
        QPointer<S3Reply> reply;
        Prepared prepared;            // while Ready
    };

    void begin();
    // The finished control request (create, list, complete, abort), no longer current.
    S3Reply *takeControl();
    void onListed();
    void schedule();
    void prepare(Part &part);
    void onPrepared(int index, const Prepared &prepared);
    void upload(Part &part);
    void onPartFinished(int index);
    void complete();
    void fail(Error error, bool abortOnServer);
    void finishNow();
    void emitProgress();
    static Prepared readPart(const QString &path, qint64 offset, qint64 size, bool md5);

    QPointer<S3Client> m_client;
    QString m_key;
    QString m_filePath;
    MultipartOptions m_options;
    QString m_uploadId;
    QByteArray m_etag;
    qint64 m_total = 0;
    qint64 m_partSize = 0;
    std::vector<Part> m_parts;
    QHash<int, std::pair<qint64, QByteArray>> m_existing; // resumed: number -> size, ETag
    QPointer<S3Reply> m_control;  // create, list, complete or abort in flight
    int m_preparing = 0;           // parts being read and hashed
    int m_uploading = 0;
    int m_skipped = 0;
    int m_retries = 0;
    bool m_started = false;
    bool m_stopping = false;
    bool m_abortAfterCreate = false;
    bool m_finished = false;
    std::optional<Error> m_error;
    quint64 m_generation = 0;     // workers' results from before a stop are dropped
};

} // namespace Starforge::S3
