#include "core/job/history.h"

#include "core/s3/s3client.h"

#include <QJsonDocument>
#include <QPointer>

#include <algorithm>
#include <memory>

namespace Starforge::Job {

namespace {

constexpr int ParallelReads = 8;

// Runs reply's finished handler once, then deletes the reply; nothing runs if context goes.
void onFinished(S3::S3Reply *reply, QObject *context, std::function<void(S3::S3Reply *)> handler)
{
    QObject::connect(reply, &S3::S3Reply::finished, context, [reply, handler = std::move(handler)] {
        reply->deleteLater();
        handler(reply);
    });
    QObject::connect(context, &QObject::destroyed, reply, [reply] { reply->abort(); reply->deleteLater(); });
}

Result<JobRecord> parseRecord(const QByteArray &data)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(data, &error);
    if (!document.isObject()) {
        return Error::invalid(QStringLiteral("not JSON (%1)").arg(error.errorString()));
    }
    return JobRecord::fromJson(document.object());
}

struct HistoryRead
{
    QStringList keys;
    int next = 0;
    int running = 0;
    History history;
    std::function<void(Result<History>)> done;
};

void pump(S3::S3Client *s3, QObject *context, const std::shared_ptr<HistoryRead> &read)
{
    while (read->running < ParallelReads && read->next < read->keys.size()) {
        const QString key = read->keys.at(read->next++);
        ++read->running;
        onFinished(s3->getObject(key), context, [s3, context, read, key](S3::S3Reply *reply) {
            --read->running;
            if (const Result<void> got = reply->result(); !got) {
                // A job deleted from the history while it was being read is simply not there.
                if (reply->httpStatus() != 404) read->history.unreadable << key + QStringLiteral(": ") + got.error().message;
            } else if (auto record = parseRecord(reply->data()); record) {
                read->history.jobs.append(*record);
            } else {
                read->history.unreadable << key + QStringLiteral(": ") + record.error().message;
            }
            if (read->running == 0 && read->next == read->keys.size()) {
                std::sort(read->history.jobs.begin(), read->history.jobs.end(), [](const JobRecord &a, const JobRecord &b) {
                    return a.ended != b.ended ? a.ended > b.ended : a.id < b.id;
                });
                read->done(std::move(read->history));
                return;
            }
            pump(s3, context, read);
        });
    }
}

} // namespace

void readHistory(S3::S3Client *s3, QObject *context, std::function<void(Result<History>)> done)
{
    onFinished(s3->listAllObjects(QStringLiteral("jobs/")), context, [s3, context, done = std::move(done)](S3::S3Reply *reply) {
        if (const Result<void> listed = reply->result(); !listed) {
            done(Error::unavailable(QObject::tr("Cannot read the job history from the bucket: %1").arg(listed.error().message)));
            return;
        }
        auto read = std::make_shared<HistoryRead>();
        read->done = done;
        for (const S3::ObjectInfo &object : reply->listing().objects) {
            if (!ArchiveKeys::jobIdOfStatusKey(object.key).isEmpty()) read->keys << object.key;
        }
        if (read->keys.isEmpty()) {
            done(History{});
            return;
        }
        pump(s3, context, read);
    });
}

void readArchivedJob(S3::S3Client *s3, const QString &jobId, QObject *context, std::function<void(Result<JobRecord>)> done)
{
    onFinished(s3->getObject(ArchiveKeys::status(jobId)), context, [jobId, done = std::move(done)](S3::S3Reply *reply) {
        if (const Result<void> got = reply->result(); !got) {
            done(reply->httpStatus() == 404 ? Error::notFound(QObject::tr("Job %1 is neither on the cluster nor in the job history.").arg(jobId))
                                            : Error::unavailable(got.error().message));
            return;
        }
        auto record = parseRecord(reply->data());
        done(record ? std::move(record) : Result<JobRecord>(Error::invalid(QObject::tr("The archive of job %1 is damaged: %2").arg(jobId, record.error().message))));
    });
}

void readArchivedObject(S3::S3Client *s3, const QString &key, QObject *context, std::function<void(Result<QByteArray>)> done)
{
    onFinished(s3->getObject(key), context, [key, done = std::move(done)](S3::S3Reply *reply) {
        if (const Result<void> got = reply->result(); !got) {
            done(reply->httpStatus() == 404 ? Error::notFound(QObject::tr("%1 is not in the archive.").arg(key)) : Error::unavailable(got.error().message));
            return;
        }
        done(reply->data());
    });
}

} // namespace Starforge::Job
