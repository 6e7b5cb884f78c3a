#pragma once

// Archives one ended job to the bucket, then deletes its RayJob (docs/design.md, "Tracking"):
//   jobs/<id>/logs/<pod>/<container>.log   every container of the submitter and Ray pods still there
//   jobs/<id>/events.json                  the events about the job's objects
//   jobs/<id>/objects.json                 the final RayJob, RayCluster and pods
//   jobs/<id>/status.json                  the JobRecord, written last: the archive is complete; with
//                                          the servable checkpoints the driver's log ends with
// What can no longer be read (a cluster already shut down, a pod gone, events past the API
// server's TTL) is named in the record's `lost` list instead of silently missing.
// Nothing is deleted unless every object reached the bucket: a failed archive leaves the
// RayJob in place to be archived again, so a job's logs are never lost to a flaky store.
// Archiving twice is harmless: the keys are the same and the delete tolerates 404.
// A log of any size is archived in bounded memory: it is streamed from pods/log into a
// temporary file (temporaryLogTemplate(), removed when done and, after a crash, by the
// session's start-up clean-up), then sent with one PUT when small or as a multipart upload
// (docs/jobs.md, "The archive").

#include "core/job/jobrecord.h"
#include "core/job/jobsnapshot.h"
#include "core/util/result.h"

#include <QMap>
#include <QObject>

#include <memory>
#include <optional>

namespace Starforge::Kube {
class KubeClient;
}
namespace Starforge::S3 {
class S3Client;
class MultipartUpload;
}
class QTemporaryFile;

namespace Starforge::Job {

// objects.json's content: the final RayJob, RayCluster and pods of a snapshot, presigned URLs
// without their signatures (the Capsule URL is a read grant until it expires).
QJsonObject archivedObjects(const JobSnapshot &snapshot);
// A snapshot rebuilt from an archive's objects.json and events.json (what `starforge-cli
// diagnose` reads for an ended job); missing or damaged parts are left empty.
JobSnapshot snapshotFromArchive(const QByteArray &objectsJson, const QByteArray &eventsJson);

// Where a log waits between pods/log and the bucket: QTemporaryFile's template, in the
// system's temporary folder. The start-up clean-up removes what a crash left with this name.
QString temporaryLogTemplate();

struct ArchiveRequest
{
    JobRecord record;            // the outcome: state, reason, message, cause
    JobSnapshot snapshot;
    QString ns;
    bool deleteRayJob = true;
    int parallelLogs = 4;
    // A log up to this size goes up in one PUT, read back into memory; a larger one as a
    // multipart upload with parts of multipartPartSize, two at a time. Memory stays at about
    // parallelLogs × max(singlePutMaxBytes, 4 × multipartPartSize) whatever the logs' sizes.
    qint64 singlePutMaxBytes = 8 * 1024 * 1024;
    qint64 multipartPartSize = 8 * 1024 * 1024;
};

class JobArchiver final : public QObject
{
    Q_OBJECT
public:
    JobArchiver(Kube::KubeClient *kube, S3::S3Client *s3, ArchiveRequest request, QObject *parent = nullptr);
    ~JobArchiver() override;

    void start();
    const QString &jobId() const { return m_request.record.id; }
    // Valid after finished(): the record as written to status.json.
    const Result<JobRecord> &result() const { return *m_result; }

Q_SIGNALS:
    void finished();

private:
    struct LogTask
    {
        QString pod;
        QString container;
        QString role;
    };
    // One log on its way: the temporary file it streams into, then its upload.
    struct LogTransfer;

    void planLogs();
    void nextLogs();
    void fetchLog(const LogTask &task);
    void storeLog(const std::shared_ptr<LogTransfer> &transfer);
    void logDone(const std::shared_ptr<LogTransfer> &transfer);
    void put(const QString &key, const QByteArray &data, const QByteArray &contentType, std::function<void()> then);
    void writeRecord();
    void deleteRayJob();
    void finish(Result<JobRecord> result);

    Kube::KubeClient *m_kube;
    S3::S3Client *m_s3;
    ArchiveRequest m_request;
    QList<LogTask> m_logQueue;
    int m_logsInFlight = 0;
    QList<std::shared_ptr<LogTransfer>> m_transfers;   // in flight; their files go with them
    QMap<QString, QList<ServableCheckpoint>> m_checkpointLists;   // by the role of the log they ended
    std::optional<Result<JobRecord>> m_result;
};

} // namespace Starforge::Job
