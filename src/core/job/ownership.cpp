#include "core/job/ownership.h"

#include "core/job/rayjobbuilder.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QRegularExpression>

namespace Starforge::Job {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(Ownership)
};

} // namespace

Ownership ownershipOf(const JobRecord &record, const Viewer &viewer)
{
    if (record.owner.isEmpty()) return Ownership::Unowned;
    if (record.owner != viewer.owner) return Ownership::Others;
    // A job without a recorded bucket but with this owner was made by this app: the owner's.
    if (!record.archiveBucket.isEmpty() && record.archiveBucket != viewer.archiveBucket) return Ownership::OtherBucket;
    return Ownership::Mine;
}

QString ownerLabelValue(const QString &owner)
{
    static const QRegularExpression unsafe(QStringLiteral("[^A-Za-z0-9._-]+"));
    static const QRegularExpression edges(QStringLiteral("^[^A-Za-z0-9]+|[^A-Za-z0-9]+$"));
    QString safe = owner;
    safe.replace(unsafe, QStringLiteral("-"));
    safe.remove(edges);
    const QString hash = QString::fromLatin1(QCryptographicHash::hash(owner.toUtf8(), QCryptographicHash::Sha256).toHex().left(10));
    // 63 at most: 52 of the name, a dot, 10 of the hash.
    safe = safe.left(52);
    safe.remove(edges);
    return safe.isEmpty() ? hash : safe + u'.' + hash;
}

QString archiveBucketAddress(const QUrl &endpoint, const QString &bucket)
{
    if (bucket.isEmpty()) return {};
    const QString host = endpoint.host().toLower();
    const int port = endpoint.port(endpoint.scheme() == QLatin1String("http") ? 80 : 443);
    const bool defaultPort = (endpoint.scheme() == QLatin1String("http") && port == 80) || (endpoint.scheme() != QLatin1String("http") && port == 443);
    return (defaultPort ? host : host + u':' + QString::number(port)) + u'/' + bucket;
}

Result<void> checkJobIdentity(const QJsonObject &rayJob)
{
    const QJsonObject metadata = rayJob.value(QStringLiteral("metadata")).toObject();
    const QJsonObject labels = metadata.value(QStringLiteral("labels")).toObject();
    const QString name = metadata.value(QStringLiteral("name")).toString();
    const QString id = labels.value(QLatin1String(Labels::JobId)).toString();
    const QString jobName = labels.value(QLatin1String(Labels::JobName)).toString();
    if (!RayJobBuilder::isJobId(id)) {
        return Error::invalid(Text::tr("RayJob %1 carries the job id \"%2\", which is not one Starforge makes (six characters of "
                                 "bcdfghjklmnpqrstvwxz2456789); it is not followed.").arg(name, id));
    }
    if (jobName.isEmpty() || name != jobName + u'-' + id) {
        return Error::invalid(Text::tr("RayJob %1 is not named <job name>-<job id> (%2-%3) as Starforge names its jobs; it is not followed.")
                                  .arg(name, jobName, id));
    }
    return {};
}

Error notYours(const JobRecord &record, Ownership ownership, const QString &verb)
{
    switch (ownership) {
    case Ownership::Mine:
        break;
    case Ownership::OtherBucket:
        return Error::invalid(Text::tr("Job %1 is yours but archives to %2, another profile's bucket; %3 it from that profile.")
                                  .arg(record.id, record.archiveBucket, verb));
    case Ownership::Others:
        return Error::invalid(Text::tr("Job %1 belongs to %2; Starforge does not %3 other people's jobs.").arg(record.id, record.owner, verb));
    case Ownership::Unowned:
        if (record.archived) {
            return Error::invalid(Text::tr("The archive of job %1 records no owner (it was made before Starforge recorded owners); "
                                     "Starforge does not %2 it. Remove jobs/%1/ from the bucket with an S3 tool if it is yours.")
                                      .arg(record.id, verb));
        }
        return Error::invalid(Text::tr("Job %1 records no owner (it was made before Starforge recorded owners); Starforge does not %2 it. "
                                 "kubectl delete rayjob %3 -n %4 would.")
                                  .arg(record.id, verb, record.rayJobName, record.ns));
    }
    return Error::internal(Text::tr("notYours called for the viewer's own job"));
}

} // namespace Starforge::Job
