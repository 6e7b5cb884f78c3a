#include "core/job/jobactions.h"

#include "core/cluster/diagnosis.h"
#include "core/job/history.h"
#include "core/job/rayjobbuilder.h"
#include "core/kube/kubeclient.h"
#include "core/kube/resourcekind.h"
#include "core/s3/s3client.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QPointer>

#include <memory>

namespace Starforge::Job {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(Jobactions)
};

} // namespace

bool isStarforgeRayJob(const QJsonObject &rayJob)
{
    const QJsonObject labels = rayJob[QStringLiteral("metadata")][QStringLiteral("labels")].toObject();
    return labels.value(QLatin1String(Labels::ManagedBy)).toString() == QLatin1String(Labels::ManagedByValue)
        && !labels.value(QLatin1String(Labels::JobId)).toString().isEmpty();
}

Error notStarforgeRayJob(const QString &name, const QString &ns, const QString &verb)
{
    return Error::invalid(Text::tr("RayJob %1 was not made by Starforge (it lacks the %2=%3 label); Starforge does not %4 it "
                                         "(kubectl delete rayjob %1 -n %5 would)")
                              .arg(name, QLatin1String(Labels::ManagedBy), QLatin1String(Labels::ManagedByValue), verb, ns));
}

void fetchCheckedSnapshot(Kube::KubeClient *kube, const SnapshotRequest &request, QObject *context, std::function<void(Result<JobSnapshot>)> done)
{
    fetchJobSnapshot(kube, request, context, [job = request.job, done = std::move(done)](Result<JobSnapshot> snapshot) {
        if (snapshot && snapshot->rayJob && snapshot->rayJobName.isEmpty()) {
            done(Error::invalid(Text::tr("Could not read job %1: the server's answer is not a RayJob. Is FORGE_K8S_API_SERVER the cluster's API server?").arg(job)));
            return;
        }
        done(std::move(snapshot));
    });
}

bool podMatches(const QString &podName, const QString &role, const QString &want)
{
    return podName == want || role == want || role.startsWith(want + u' ');
}

QStringList rolesToTry(const QString &want)
{
    return want.isEmpty() ? QStringList{QStringLiteral("submitter"), QStringLiteral("head")} : QStringList{want};
}

QString pickPod(const JobSnapshot &snapshot, const QString &want)
{
    for (const QString &role : rolesToTry(want)) {
        for (const QJsonObject &p : snapshot.pods) {
            const Cluster::PodInfo info = Cluster::PodInfo::fromJson(p);
            if (podMatches(info.view.name, info.role(), role)) return info.view.name;
        }
    }
    return {};
}

const ArchivedLog *pickArchivedLog(const JobRecord &record, const QString &want, const QString &container)
{
    for (const QString &role : rolesToTry(want)) {
        for (const ArchivedLog &log : record.logs) {
            if (podMatches(log.pod, log.role, role) && (container.isEmpty() || log.container == container)) return &log;
        }
    }
    return nullptr;
}

namespace {

// Deletes keys one after the other (status.json is last in the list), then reports.
void deleteKeys(S3::S3Client *s3, QStringList keys, QObject *context, std::function<void(Result<void>)> done)
{
    if (keys.isEmpty()) {
        done({});
        return;
    }
    const QString key = keys.takeFirst();
    s3->deleteObject(key, context, [s3, keys, context, done](Result<void> deleted) {
        if (!deleted) {
            done(deleted.error());
            return;
        }
        deleteKeys(s3, keys, context, done);
    });
}

void removeArchive(S3::S3Client *s3, const QString &id, bool hadRayJob, QObject *context, std::function<void(Result<DeletedJob>)> done)
{
    s3->listAllObjects(ArchiveKeys::prefix(id), context, [s3, id, hadRayJob, context, done](Result<QList<S3::ObjectInfo>> listed) {
        if (!listed) {
            done(listed.error());
            return;
        }
        QStringList keys;
        for (const S3::ObjectInfo &object : *listed) keys << object.key;
        const bool hadArchive = !keys.isEmpty();
        keys.removeAll(ArchiveKeys::status(id));
        if (hadArchive) keys << ArchiveKeys::status(id);
        if (!hadRayJob && !hadArchive) {
            done(Error::notFound(Text::tr("job %1 is neither on the cluster nor in the job history").arg(id)));
            return;
        }
        const int count = hadArchive ? static_cast<int>(keys.size()) : 0;
        deleteKeys(s3, hadArchive ? keys : QStringList{}, context, [id, hadRayJob, count, done](Result<void> deleted) {
            if (!deleted) {
                done(deleted.error());
                return;
            }
            done(DeletedJob{id, hadRayJob, count});
        });
    });
}

} // namespace

Result<void> checkMayActOn(const QJsonObject &rayJob, const Viewer &viewer, const QString &ns, const QString &verb)
{
    const QString name = rayJob[QStringLiteral("metadata")][QStringLiteral("name")].toString();
    if (!isStarforgeRayJob(rayJob)) return notStarforgeRayJob(name, ns, verb);
    if (auto shaped = checkJobIdentity(rayJob); !shaped) return shaped.error();
    JobRecord record = JobRecord::fromRayJob(rayJob);
    if (record.ns.isEmpty()) record.ns = ns;
    if (const Ownership ownership = ownershipOf(record, viewer); !actsOn(ownership)) return notYours(record, ownership, verb);
    return {};
}

void deleteJob(Kube::KubeClient *kube, S3::S3Client *s3, const QString &ns, const Viewer &viewer, const JobSnapshot &snapshot,
               const QString &job, QObject *context, std::function<void(Result<DeletedJob>)> done)
{
    const QString id = !snapshot.jobId.isEmpty() ? snapshot.jobId : job;
    if (!snapshot.rayJob) {
        // Archived only: its record says whose it is. (No record: a partial archive, nobody's
        // history yet; its objects go.)
        readArchivedJob(s3, id, context, [s3, id, viewer, context, done](Result<JobRecord> record) {
            if (!record && record.error().code != Error::Code::NotFound) {
                done(record.error());
                return;
            }
            if (record) {
                // An archive is in the viewer's bucket already: only the owner matters.
                const Ownership ownership = ownershipOf(*record, Viewer{viewer.owner, record->archiveBucket});
                if (!actsOn(ownership)) {
                    done(notYours(*record, ownership, QStringLiteral("delete")));
                    return;
                }
            }
            removeArchive(s3, id, false, context, done);
        });
        return;
    }
    if (auto allowed = checkMayActOn(*snapshot.rayJob, viewer, ns, QStringLiteral("delete")); !allowed) {
        done(allowed.error());
        return;
    }
    // A live job goes without an archive: delete means gone, logs included. The mark first
    // tells trackers (the GUI's) not to archive what looks like a lost job.
    Kube::ApiRequest mark;
    mark.method = "PATCH";
    mark.path = Kube::ResourceKind::rayJobs().path(ns, snapshot.rayJobName);
    mark.contentType = "application/merge-patch+json";
    mark.body = QJsonDocument(QJsonObject{{QStringLiteral("metadata"),
                                           QJsonObject{{QStringLiteral("annotations"), QJsonObject{{QLatin1String(Labels::DeleteRequested), QStringLiteral("true")}}}}}})
                    .toJson(QJsonDocument::Compact);
    mark.what = Text::tr("mark RayJob %1 for deletion").arg(snapshot.rayJobName);
    const QString name = snapshot.rayJobName;
    kube->send(mark, context, [kube, s3, ns, name, id, context, done](const Kube::ApiResult &marked) {
        if (!marked.ok() && marked.status != 404) {
            done(marked.error->toError());
            return;
        }
        Kube::ApiRequest remove;
        remove.method = "DELETE";
        remove.path = Kube::ResourceKind::rayJobs().path(ns, name);
        remove.body = R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"})";
        remove.what = QStringLiteral("delete RayJob %1").arg(name);
        kube->send(remove, context, [s3, id, context, done](const Kube::ApiResult &result) {
            if (!result.ok() && result.status != 404) {
                done(result.error->toError());
                return;
            }
            removeArchive(s3, id, true, context, done);
        });
    });
}

} // namespace Starforge::Job
