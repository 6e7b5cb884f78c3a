#include "core/job/history.h"

#include "core/s3/s3client.h"

#include <QJsonDocument>
#include <QPointer>

#include <algorithm>
#include <memory>

namespace Starforge::Job {

namespace {

constexpr int ParallelReads = 8;

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
        s3->getObject(key, context, [s3, context, read, key](Result<QByteArray> got) {
            --read->running;
            if (!got) {
                // A job deleted from the history while it was being read is simply not there.
                if (got.error().code != Error::Code::NotFound) read->history.unreadable << key + QStringLiteral(": ") + got.error().message;
            } else if (auto record = parseRecord(*got); record) {
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
    s3->listAllObjects(QStringLiteral("jobs/"), context, [s3, context, done = std::move(done)](Result<QList<S3::ObjectInfo>> listed) {
        if (!listed) {
            done(Error::unavailable(QObject::tr("Cannot read the job history from the bucket: %1").arg(listed.error().message)));
            return;
        }
        auto read = std::make_shared<HistoryRead>();
        read->done = done;
        for (const S3::ObjectInfo &object : *listed) {
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
    s3->getObject(ArchiveKeys::status(jobId), context, [jobId, done = std::move(done)](Result<QByteArray> got) {
        if (!got) {
            done(got.error().code == Error::Code::NotFound ? Error::notFound(QObject::tr("Job %1 is neither on the cluster nor in the job history.").arg(jobId))
                                                           : Error::unavailable(got.error().message));
            return;
        }
        auto record = parseRecord(*got);
        done(record ? std::move(record) : Result<JobRecord>(Error::invalid(QObject::tr("The archive of job %1 is damaged: %2").arg(jobId, record.error().message))));
    });
}

void readArchivedObject(S3::S3Client *s3, const QString &key, QObject *context, std::function<void(Result<QByteArray>)> done)
{
    s3->getObject(key, context, [key, done = std::move(done)](Result<QByteArray> got) {
        if (!got) {
            done(got.error().code == Error::Code::NotFound ? Error::notFound(QObject::tr("%1 is not in the archive.").arg(key))
                                                           : Error::unavailable(got.error().message));
            return;
        }
        done(std::move(got).value());
    });
}

} // namespace Starforge::Job
