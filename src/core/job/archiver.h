#pragma once

// Archives one ended job to the bucket, then deletes its RayJob (docs/design.md, "Tracking"):
//   jobs/<id>/logs/<pod>/<container>.log   every container of the submitter and Ray pods still there
//   jobs/<id>/events.json                  the events about the job's objects
//   jobs/<id>/objects.json                 the final RayJob, RayCluster and pods
//   jobs/<id>/status.json                  the JobRecord, written last: the archive is complete
// What can no longer be read (a cluster already shut down, a pod gone, events past the API
// server's TTL) is named in the record's `lost` list instead of silently missing.
// Nothing is deleted unless every object reached the bucket: a failed archive leaves the
// RayJob in place to be archived again, so a job's logs are never lost to a flaky store.
// Archiving twice is harmless: the keys are the same and the delete tolerates 404.

#include "core/job/jobrecord.h"
#include "core/job/jobsnapshot.h"
#include "core/util/result.h"

#include <QObject>

#include <optional>

namespace Starforge::Kube {
class KubeClient;
}
namespace Starforge::S3 {
class S3Client;
}

namespace Starforge::Job {

// objects.json's content: the final RayJob, RayCluster and pods of a snapshot.
QJsonObject archivedObjects(const JobSnapshot &snapshot);
// A snapshot rebuilt from an archive's objects.json and events.json (what `starforge-cli
// diagnose` reads for an ended job); missing or damaged parts are left empty.
JobSnapshot snapshotFromArchive(const QByteArray &objectsJson, const QByteArray &eventsJson);

struct ArchiveRequest
{
    JobRecord record;            // the outcome: state, reason, message, cause
    JobSnapshot snapshot;
    QString ns;
    bool deleteRayJob = true;
    int parallelLogs = 4;
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

    void planLogs();
    void nextLogs();
    void fetchLog(const LogTask &task);
    void put(const QString &key, const QByteArray &data, const QByteArray &contentType, std::function<void()> then);
    void writeRecord();
    void deleteRayJob();
    void finish(Result<JobRecord> result);

    Kube::KubeClient *m_kube;
    S3::S3Client *m_s3;
    ArchiveRequest m_request;
    QList<LogTask> m_logQueue;
    int m_logsInFlight = 0;
    std::optional<Result<JobRecord>> m_result;
};

} // namespace Starforge::Job
