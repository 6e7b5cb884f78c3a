#pragma once

// Everything the cluster holds about one job, read in one go: the RayJob, its RayCluster, the
// Ray pods and the submitter's pods, the events about any of them (pods that are gone
// included) and, when asked, the tails of the submitter pods' (driver's) logs. The diagnosis, the
// archive and `starforge-cli status/events/diagnose` all start from it.

#include "core/cluster/diagnosis.h"
#include "core/util/result.h"

#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>

#include <functional>
#include <optional>

namespace Starforge::Kube {
class KubeClient;
}

namespace Starforge::Job {

struct JobSnapshot
{
    QString jobId;
    QString rayJobName;
    std::optional<QJsonObject> rayJob;       // absent: the RayJob is gone (or never was)
    std::optional<QJsonObject> rayCluster;
    QList<QJsonObject> pods;                 // Ray pods (by job id label) and the submitter's
    QList<QJsonObject> events;               // oldest first
    QString submitterLog;                    // the submitter pods' log tails, oldest pod first, when fetched

    QList<Kube::Event> typedEvents() const;
    Cluster::DiagnosisInput diagnosisInput(const Cluster::CapacityModel *capacity, const QString &seriesLabel) const;
};

struct SnapshotRequest
{
    QString ns;
    QString job;                 // a job id (six characters) or a RayJob name
    QString rayJobName;          // when known: read by name, whatever job looks like
    bool withSubmitterLog = false;
    int submitterLogTailLines = 400;         // per submitter pod

    static SnapshotRequest of(const QString &ns, const QString &job, bool withSubmitterLog = false)
    {
        SnapshotRequest request;
        request.ns = ns;
        request.job = job;
        request.withSubmitterLog = withSubmitterLog;
        return request;
    }
};

// Gathers a snapshot; done runs once, on context's thread, unless context goes first. A job
// that is not on the cluster is not an error: the snapshot comes back without a RayJob.
void fetchJobSnapshot(Kube::KubeClient *client, const SnapshotRequest &request, QObject *context,
                      std::function<void(Result<JobSnapshot>)> done);

} // namespace Starforge::Job
