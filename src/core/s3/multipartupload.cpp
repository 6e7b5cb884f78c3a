#include "core/s3/multipartupload.h"

#include "core/crypto/digest.h"
#include "core/s3/s3client.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QFuture>
#include <QFutureWatcher>
#include <QtConcurrent>

#include <algorithm>

namespace Starforge::S3 {

namespace {

QByteArray unquoted(QByteArray etag)
{
    etag = etag.trimmed();
    if (etag.size() >= 2 && etag.startsWith('"') && etag.endsWith('"')) {
        etag = etag.mid(1, etag.size() - 2);
    }
    return etag.toLower();
}

constexpr int MaxParts = 10000;
constexpr int ReadAhead = 2;

} // namespace

MultipartUpload::MultipartUpload(S3Client *client, QString key, QString filePath, MultipartOptions options, QObject *parent)
    : QObject(parent)
    , m_client(client)
    , m_key(std::move(key))
    , m_filePath(std::move(filePath))
    , m_options(std::move(options))
    , m_uploadId(m_options.uploadId)
{
}

MultipartUpload::~MultipartUpload()
{
    // Replies in flight belong to the client; stop them so no part keeps going for nobody.
    for (Part &part : m_parts) {
        if (part.reply) {
            disconnect(part.reply, nullptr, this, nullptr);
            part.reply->deleteLater();
        }
    }
    if (m_control) {
        disconnect(m_control, nullptr, this, nullptr);
        m_control->deleteLater();
    }
}

Result<void> MultipartUpload::result() const
{
    if (!m_finished) {
        return Error::internal(tr("The upload of %1 has not finished yet.").arg(m_key));
    }
    if (m_error) {
        return *m_error;
    }
    return {};
}

qint64 MultipartUpload::bytesDone() const
{
    qint64 done = 0;
    for (const Part &part : m_parts) {
        done += part.sent;
    }
    return done;
}

void MultipartUpload::start()
{
    if (m_started) {
        return;
    }
    m_started = true;
    // Queued, so a caller connecting to finished() after start() sees even an immediate failure.
    QMetaObject::invokeMethod(this, &MultipartUpload::begin, Qt::QueuedConnection);
}

void MultipartUpload::begin()
{
    if (m_stopping) {
        finishNow();
        return;
    }
    if (!m_client) {
        fail(Error::internal(tr("The S3 client is gone.")), false);
        return;
    }
    const QFileInfo info(m_filePath);
    if (!info.isFile() || !info.isReadable()) {
        fail(Error::io(tr("Cannot upload %1: the file does not exist or cannot be read.").arg(m_filePath)), false);
        return;
    }
    m_total = info.size();
    // S3 allows 10000 parts: a larger file gets larger parts rather than failing at part 10001.
    m_partSize = std::max({m_options.partSize, MultipartOptions::MinPartSize, (m_total + MaxParts - 1) / MaxParts});
    const qint64 count = std::max<qint64>(1, (m_total + m_partSize - 1) / m_partSize);
    m_parts.resize(static_cast<size_t>(count));
    for (qint64 i = 0; i < count; ++i) {
        Part &part = m_parts[static_cast<size_t>(i)];
        part.number = static_cast<int>(i + 1);
        part.offset = i * m_partSize;
        part.size = std::min(m_partSize, m_total - part.offset);
    }
    Q_EMIT progress(0, m_total);

    if (!m_uploadId.isEmpty()) {
        m_control = m_client->listParts(m_key, m_uploadId);
        connect(m_control, &S3Reply::finished, this, &MultipartUpload::onListed);
        return;
    }
    m_control = m_client->createMultipartUpload(m_key, m_options.contentType, m_options.sha256Hex);
    connect(m_control, &S3Reply::finished, this, [this] {
        S3Reply *reply = takeControl();
        const auto result = reply->result();
        if (result) {
            m_uploadId = reply->uploadId();
            Q_EMIT uploadIdKnown(m_uploadId);
        }
        if (m_stopping) {
            // Cancelled while the upload was being created: abort what was just created.
            const bool abortOnServer = m_abortAfterCreate;
            m_stopping = false;
            fail(*m_error, abortOnServer && result.ok());
            return;
        }
        if (!result) {
            fail(result.error(), false);
            return;
        }
        schedule();
    });
}

S3Reply *MultipartUpload::takeControl()
{
    S3Reply *reply = m_control;
    m_control = nullptr;
    reply->deleteLater();   // read now, gone at the next event-loop turn
    return reply;
}

void MultipartUpload::onListed()
{
    S3Reply *reply = takeControl();
    if (m_stopping) {
        finishNow();
        return;
    }
    const auto result = reply->result();
    if (!result) {
        // The upload to resume is gone (completed, aborted, expired) or unreadable: nothing of it
        // can be trusted, and it is not ours to abort. radosgw says NoSuchKey here, S3 NoSuchUpload.
        if (reply->httpStatus() == 404) {
            fail(Error::notFound(tr("The upload %1 of %2 to resume no longer exists on the server (completed, "
                                    "aborted or expired). Start the upload again.").arg(m_uploadId, m_key)), false);
            return;
        }
        fail(result.error(), false);
        return;
    }
    for (const PartInfo &part : reply->parts().parts) {
        m_existing.insert(part.partNumber, {part.size, unquoted(part.etag)});
    }
    Q_EMIT uploadIdKnown(m_uploadId);
    schedule();
}

void MultipartUpload::schedule()
{
    if (m_stopping || m_finished) {
        return;
    }
    const int concurrency = std::max(1, m_options.concurrency);
    int ready = 0;
    for (Part &part : m_parts) {
        if (part.state == Part::State::Ready) {
            if (m_uploading < concurrency) {
                upload(part);
            } else {
                ++ready;
            }
        }
    }
    // Parts are read and hashed ahead of the uploads, so a free connection never waits for the
    // disk or the hash; the read-ahead bounds memory at (concurrency + ReadAhead) parts.
    for (Part &part : m_parts) {
        if (m_preparing + ready >= ReadAhead) {
            break;
        }
        if (part.state == Part::State::Pending) {
            prepare(part);
        }
    }
    const bool allDone = std::all_of(m_parts.begin(), m_parts.end(), [](const Part &p) { return p.state == Part::State::Done; });
    if (allDone && m_preparing == 0 && m_uploading == 0) {
        complete();
    }
}

MultipartUpload::Prepared MultipartUpload::readPart(const QString &path, qint64 offset, qint64 size, bool md5)
{
    Prepared out;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly) || !file.seek(offset)) {
        out.error = Error::io(tr("Cannot read %1: %2.").arg(path, file.errorString()));
        return out;
    }
    out.data = file.read(size);
    if (out.data.size() != size) {
        out.error = Error::io(tr("Cannot read %1: the file became shorter during the upload. Upload it again once it "
                                 "no longer changes.").arg(path));
        return out;
    }
    if (md5) {
        out.md5 = Crypto::Digest::md5(out.data);
    }
    out.sha256Hex = Crypto::Digest::sha256(out.data).toHex();
    return out;
}

void MultipartUpload::prepare(Part &part)
{
    part.state = Part::State::Preparing;
    ++m_preparing;
    const int index = part.number - 1;
    const quint64 generation = m_generation;
    // MD5 costs a second pass over the bytes: only for Content-MD5 or to compare with a part
    // already on the server (its ETag); SHA-256 always, for x-amz-content-sha256.
    const bool md5 = m_options.contentMd5 || m_existing.contains(part.number);
    // Reading and hashing a part takes tens of milliseconds: a worker thread does it, so the GUI
    // thread stays responsive and several parts hash at once. The watcher is the upload's child,
    // so the result is dropped if the upload is gone (Qt 6.4's QFuture::then(context) asserts
    // when its context dies first).
    auto *watcher = new QFutureWatcher<Prepared>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, index, generation] {
        watcher->deleteLater();
        if (generation == m_generation) {
            onPrepared(index, watcher->future().takeResult());
        }
    });
    watcher->setFuture(QtConcurrent::run(&MultipartUpload::readPart, m_filePath, part.offset, part.size, md5));
}

void MultipartUpload::onPrepared(int index, const Prepared &prepared)
{
    Part &part = m_parts[static_cast<size_t>(index)];
    --m_preparing;
    if (m_stopping) {
        return;
    }
    if (prepared.error) {
        fail(*prepared.error, true);
        return;
    }
    const auto existing = m_existing.constFind(part.number);
    if (existing != m_existing.constEnd() && existing->first == part.size && existing->second == prepared.md5.toHex()) {
        // Already on the server, byte for byte: the resume skips it.
        part.etag = '"' + prepared.md5.toHex() + '"';
        part.state = Part::State::Done;
        part.sent = part.size;
        ++m_skipped;
        emitProgress();
        schedule();
        return;
    }
    part.prepared = prepared;
    part.state = Part::State::Ready;
    schedule();
}

void MultipartUpload::upload(Part &part)
{
    const int index = part.number - 1;
    ++m_uploading;
    part.state = Part::State::Uploading;
    part.reply = m_client->uploadPart(m_key, m_uploadId, part.number, part.prepared.data, part.prepared.md5,
                                      part.prepared.sha256Hex);
    part.prepared = {}; // the reply holds the bytes for its retries
    part.reply->setMaxAttempts(m_options.maxAttempts);
    connect(part.reply, &S3Reply::uploadProgress, this, [this, index](qint64 sent, qint64) {
        m_parts[static_cast<size_t>(index)].sent = sent;
        emitProgress();
    });
    connect(part.reply, &S3Reply::retrying, this, [this, index] {
        ++m_retries;
        m_parts[static_cast<size_t>(index)].sent = 0;
        emitProgress();
    });
    connect(part.reply, &S3Reply::finished, this, [this, index] { onPartFinished(index); });
}

void MultipartUpload::onPartFinished(int index)
{
    Part &part = m_parts[static_cast<size_t>(index)];
    S3Reply *reply = part.reply;
    part.reply = nullptr;
    reply->deleteLater();
    --m_uploading;
    if (m_stopping) {
        return;
    }
    const auto result = reply->result();
    if (!result) {
        fail(Error{result.error().code, tr("Part %1 of %2: %3").arg(part.number).arg(m_key, result.error().message)},
             true);
        return;
    }
    // The part's ETag is the MD5 the server computed over what it received (and checked against
    // x-amz-content-sha256 and, when sent, Content-MD5); Complete names the parts by it.
    part.etag = reply->etag();
    if (part.etag.isEmpty()) {
        fail(Error::unavailable(tr("Part %1 of %2: the server's answer has no ETag. Check that the endpoint is an S3 "
                                   "API address.").arg(part.number).arg(m_key)), true);
        return;
    }
    part.state = Part::State::Done;
    part.sent = part.size;
    emitProgress();
    schedule();
}

void MultipartUpload::complete()
{
    QList<PartInfo> parts;
    for (const Part &part : m_parts) {
        parts.append({part.number, part.size, part.etag});
    }
    m_control = m_client->completeMultipartUpload(m_key, m_uploadId, parts);
    connect(m_control, &S3Reply::finished, this, [this] {
        S3Reply *reply = takeControl();
        if (m_stopping) {
            finishNow();
            return;
        }
        const auto result = reply->result();
        if (!result) {
            fail(result.error(), true);
            return;
        }
        // radosgw answers <ETag></ETag>: not an error, the object is there (HEAD has its ETag).
        m_etag = reply->completion().etag;
        finishNow();
    });
}

void MultipartUpload::cancel()
{
    // Queued: cancel() may be called from a slot of one of this upload's own signals, while a
    // part's reply is still emitting.
    QMetaObject::invokeMethod(this, [this] {
        if (!m_finished) {
            fail(Error::unavailable(tr("The upload of %1 was cancelled.").arg(m_key)), true);
        }
    }, Qt::QueuedConnection);
}

void MultipartUpload::pause()
{
    QMetaObject::invokeMethod(this, [this] {
        if (!m_finished) {
            fail(Error::unavailable(tr("The upload of %1 was paused; it can be resumed with upload id %2.")
                                        .arg(m_key, m_uploadId)), false);
        }
    }, Qt::QueuedConnection);
}

void MultipartUpload::fail(Error error, bool abortOnServer)
{
    if (m_stopping || m_finished) {
        return;
    }
    m_stopping = true;
    m_error = std::move(error);
    ++m_generation;
    for (Part &part : m_parts) {
        if (part.reply) {
            S3Reply *reply = part.reply;
            part.reply = nullptr;
            disconnect(reply, nullptr, this, nullptr);
            reply->abort();
            reply->deleteLater();
        }
    }
    m_preparing = 0;
    m_uploading = 0;
    for (Part &part : m_parts) {
        part.prepared = {};
    }
    if (!m_started || (m_control && m_uploadId.isEmpty())) {
        // Not begun, or the upload is being created: its answer (or begin) finishes the job.
        m_abortAfterCreate = abortOnServer;
        if (!m_started) {
            QMetaObject::invokeMethod(this, &MultipartUpload::finishNow, Qt::QueuedConnection);
        }
        return;
    }
    if (m_control) {
        S3Reply *reply = m_control;
        m_control = nullptr;
        disconnect(reply, nullptr, this, nullptr);
        reply->abort();
        reply->deleteLater();
    }
    if (!abortOnServer || m_uploadId.isEmpty() || !m_client) {
        // Deferred so finished() never fires inside cancel() or pause().
        QMetaObject::invokeMethod(this, &MultipartUpload::finishNow, Qt::QueuedConnection);
        return;
    }
    m_control = m_client->abortMultipartUpload(m_key, m_uploadId);
    connect(m_control, &S3Reply::finished, this, [this] {
        S3Reply *reply = takeControl();
        const auto result = reply->result();
        if (!result && reply->httpStatus() != 404) { // 404: already gone, which is what was wanted
            m_error->message += QLatin1Char(' ')
                + tr("The unfinished upload %1 could not be aborted (%2); its parts stay on the server until it is "
                     "aborted or a lifecycle rule removes it.").arg(m_uploadId, result.error().message);
        }
        finishNow();
    });
}

void MultipartUpload::finishNow()
{
    if (m_finished) {
        return;
    }
    m_finished = true;
    Q_EMIT finished();
}

void MultipartUpload::emitProgress()
{
    Q_EMIT progress(bytesDone(), m_total);
}

} // namespace Starforge::S3
