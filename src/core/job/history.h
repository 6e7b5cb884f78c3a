#pragma once

// Job history: the archives under jobs/ in the bucket, one jobs/<id>/status.json each
// (JobArchiver writes it last, so a listed job's archive is complete). Nothing is kept on the
// workstation: every machine sharing the bucket sees the same history.

#include "core/job/jobrecord.h"
#include "core/util/result.h"

#include <QList>
#include <QObject>

#include <functional>

namespace Starforge::S3 {
class S3Client;
}

namespace Starforge::Job {

struct History
{
    QList<JobRecord> jobs;       // newest end first
    QStringList unreadable;      // "jobs/<id>/status.json: why", for records that did not parse
};

// Reads every archived job's record; parallel GETs, done once on context's thread.
void readHistory(S3::S3Client *s3, QObject *context, std::function<void(Result<History>)> done);

// One archived job's record; NotFound when the job has no archive.
void readArchivedJob(S3::S3Client *s3, const QString &jobId, QObject *context, std::function<void(Result<JobRecord>)> done);

// An archived object (a log, events.json) as bytes.
void readArchivedObject(S3::S3Client *s3, const QString &key, QObject *context, std::function<void(Result<QByteArray>)> done);

} // namespace Starforge::Job
