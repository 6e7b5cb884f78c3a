#include "sandbox/controllers/rayjobdeletion.h"

#include "sandbox/controllers/controllerutil.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

#include <QDateTime>
#include <QJsonArray>
#include <QMap>

#include <algorithm>
#include <optional>

namespace Starforge::Sandbox::RayJobDeletion {

namespace {

const ResourceType &rayJobType() { return *ResourceTypes::find(QStringLiteral("ray.io"), QStringLiteral("v1"), QStringLiteral("rayjobs")); }
const ResourceType &clusterType() { return *ResourceTypes::find(QStringLiteral("ray.io"), QStringLiteral("v1"), QStringLiteral("rayclusters")); }

// The order of destruction: TTLs must not fall along it, and the most destructive overdue rule runs first.
int impact(const QString &policy)
{
    if (policy == QLatin1String("DeleteSelf")) return 4;
    if (policy == QLatin1String("DeleteCluster")) return 3;
    if (policy == QLatin1String("DeleteWorkers")) return 2;
    return 1;
}

bool autoscaling(const QJsonObject &spec)
{
    return spec.value(QStringLiteral("rayClusterSpec")).toObject().value(QStringLiteral("enableInTreeAutoscaling")).toBool();
}

QString ruleProblems(const QJsonObject &spec)
{
    const QJsonArray rules = spec.value(QStringLiteral("deletionStrategy")).toObject().value(QStringLiteral("deletionRules")).toArray();
    const bool selectorMode = !spec.value(QStringLiteral("clusterSelector")).toObject().isEmpty();
    QStringList errors;
    // condition kind + value -> policy -> ttl
    QMap<QString, QMap<QString, qint64>> byStatus;
    QMap<QString, QMap<QString, qint64>> byDeployment;
    for (qsizetype i = 0; i < rules.size(); ++i) {
        const QJsonObject rule = rules.at(i).toObject();
        const QJsonObject condition = rule.value(QStringLiteral("condition")).toObject();
        const QString policy = rule.value(QStringLiteral("policy")).toString();
        const bool hasStatus = condition.contains(QStringLiteral("jobStatus"));
        const bool hasDeployment = condition.contains(QStringLiteral("jobDeploymentStatus"));
        const qint64 ttl = condition.value(QStringLiteral("ttlSeconds")).toInteger(0);
        if (hasStatus && hasDeployment) {
            errors << QStringLiteral("deletionRules[%1]: cannot set both JobStatus and JobDeploymentStatus at the same time").arg(i);
            continue;
        }
        if (!hasStatus && !hasDeployment) {
            errors << QStringLiteral("deletionRules[%1]: exactly one of JobStatus and JobDeploymentStatus must be set").arg(i);
            continue;
        }
        if (ttl < 0) {
            errors << QStringLiteral("deletionRules[%1]: TTLSeconds must be non-negative").arg(i);
            continue;
        }
        if (selectorMode && (policy == QLatin1String("DeleteCluster") || policy == QLatin1String("DeleteWorkers"))) {
            errors << QStringLiteral("deletionRules[%1]: DeletionPolicyType '%2' not supported when ClusterSelector is set").arg(i).arg(policy);
            continue;
        }
        if (autoscaling(spec) && policy == QLatin1String("DeleteWorkers")) {
            errors << QStringLiteral("deletionRules[%1]: DeletionPolicyType 'DeleteWorkers' not supported with autoscaling enabled").arg(i);
            continue;
        }
        auto &group = hasStatus ? byStatus[condition.value(QStringLiteral("jobStatus")).toString()]
                                : byDeployment[condition.value(QStringLiteral("jobDeploymentStatus")).toString()];
        if (group.contains(policy)) {
            errors << QStringLiteral("deletionRules[%1]: duplicate rule for DeletionPolicyType '%2' and %3 '%4'")
                          .arg(i)
                          .arg(policy, hasStatus ? QStringLiteral("JobStatus") : QStringLiteral("JobDeploymentStatus"),
                               condition.value(hasStatus ? QStringLiteral("jobStatus") : QStringLiteral("jobDeploymentStatus")).toString());
            continue;
        }
        group.insert(policy, ttl);
    }
    const auto consistency = [&errors](const QMap<QString, QMap<QString, qint64>> &groups, const QString &kind) {
        for (auto it = groups.cbegin(); it != groups.cend(); ++it) {
            QString previous;
            qint64 previousTtl = 0;
            for (const char *p : {"DeleteWorkers", "DeleteCluster", "DeleteSelf"}) {
                const QString policy = QString::fromLatin1(p);
                if (!it.value().contains(policy)) continue;
                const qint64 ttl = it.value().value(policy);
                if (!previous.isEmpty() && ttl < previousTtl) {
                    errors << QStringLiteral("for %1 '%2': %3 TTL (%4) must be >= %5 TTL (%6)")
                                  .arg(kind, it.key(), policy).arg(ttl).arg(previous).arg(previousTtl);
                }
                previous = policy;
                previousTtl = ttl;
            }
        }
    };
    consistency(byStatus, QStringLiteral("JobStatus"));
    consistency(byDeployment, QStringLiteral("JobDeploymentStatus"));
    // errors.Join: one per line.
    return errors.join(u'\n');
}

bool ruleMatches(const QJsonObject &rule, const QJsonObject &status)
{
    const QJsonObject condition = rule.value(QStringLiteral("condition")).toObject();
    if (condition.contains(QStringLiteral("jobStatus"))) {
        return condition.value(QStringLiteral("jobStatus")).toString() == status.value(QStringLiteral("jobStatus")).toString();
    }
    return condition.value(QStringLiteral("jobDeploymentStatus")).toString() == status.value(QStringLiteral("jobDeploymentStatus")).toString();
}

// Whether what the policy does is done already (isDeletionActionCompleted).
bool done(const ObjectStore &store, const QString &ns, const QString &clusterName, const QString &policy)
{
    if (policy == QLatin1String("DeleteNone")) return true;
    if (policy == QLatin1String("DeleteSelf")) return false;
    const ObjectPtr cluster = store.get(clusterType().storage, ns, clusterName);
    if (!cluster || cluster->object.value(QStringLiteral("metadata")).toObject().contains(QStringLiteral("deletionTimestamp"))) return true;
    if (policy == QLatin1String("DeleteCluster")) return false;
    for (const QJsonValue &g : cluster->object.value(QStringLiteral("spec")).toObject().value(QStringLiteral("workerGroupSpecs")).toArray()) {
        if (!g.toObject().value(QStringLiteral("suspend")).toBool()) return false;
    }
    return true;
}

void execute(ObjectStore &store, const QJsonObject &rayJob, const QString &policy, const Record &record)
{
    const QJsonObject meta = rayJob.value(QStringLiteral("metadata")).toObject();
    const QString ns = meta.value(QStringLiteral("namespace")).toString();
    const QString name = meta.value(QStringLiteral("name")).toString();
    const QString clusterName = rayJob.value(QStringLiteral("status")).toObject().value(QStringLiteral("rayClusterName")).toString();
    if (policy == QLatin1String("DeleteSelf")) {
        (void)store.remove(rayJobType(), ns, name);
    } else if (policy == QLatin1String("DeleteCluster")) {
        if (store.get(clusterType().storage, ns, clusterName)) {
            (void)store.remove(clusterType(), ns, clusterName);
            record(QStringLiteral("DeletedRayCluster"), QStringLiteral("Deleted cluster %1/%2").arg(ns, clusterName), QStringLiteral("Delete"));
        }
    } else if (policy == QLatin1String("DeleteWorkers")) {
        // suspendWorkerGroups: every worker group suspended, so the cluster controller removes the workers.
        store.modify(clusterType(), ns, clusterName, [](QJsonObject &cluster) {
            QJsonObject spec = cluster.value(QStringLiteral("spec")).toObject();
            QJsonArray groups = spec.value(QStringLiteral("workerGroupSpecs")).toArray();
            for (qsizetype i = 0; i < groups.size(); ++i) {
                QJsonObject g = groups.at(i).toObject();
                g.insert(QStringLiteral("suspend"), true);
                groups.replace(i, g);
            }
            spec.insert(QStringLiteral("workerGroupSpecs"), groups);
            cluster.insert(QStringLiteral("spec"), spec);
            return true;
        });
    }
}

qint64 msUntil(const QString &endTime, qint64 ttlSeconds)
{
    const QDateTime end = QDateTime::fromString(endTime, Qt::ISODate);
    if (!end.isValid()) return 0;
    return QDateTime::currentDateTimeUtc().msecsTo(end.addSecs(ttlSeconds));
}

} // namespace

QString validate(const QJsonObject &spec, bool deletionPolicyGate)
{
    if (!spec.contains(QStringLiteral("deletionStrategy"))) return {};
    if (!deletionPolicyGate) return QStringLiteral("RayJobDeletionPolicy feature gate must be enabled to use DeletionStrategy");
    const QJsonObject strategy = spec.value(QStringLiteral("deletionStrategy")).toObject();
    const bool legacy = strategy.contains(QStringLiteral("onSuccess")) || strategy.contains(QStringLiteral("onFailure"));
    const bool rules = !strategy.value(QStringLiteral("deletionRules")).toArray().isEmpty();
    if (rules && spec.value(QStringLiteral("shutdownAfterJobFinishes")).toBool()) {
        return QStringLiteral("The RayJob spec is invalid: spec.shutdownAfterJobFinishes and spec.deletionStrategy.deletionRules are mutually exclusive");
    }
    if (rules && legacy) {
        return QStringLiteral("The RayJob spec is invalid: Cannot use both legacy onSuccess/onFailure fields and deletionRules simultaneously");
    }
    if (legacy) {
        const bool selectorMode = !spec.value(QStringLiteral("clusterSelector")).toObject().isEmpty();
        if (!strategy.contains(QStringLiteral("onSuccess")) || !strategy.contains(QStringLiteral("onFailure"))) {
            return QStringLiteral("both DeletionStrategy.OnSuccess and DeletionStrategy.OnFailure must be set when using the legacy deletion policy "
                                  "fields of DeletionStrategy");
        }
        const QString onSuccess = strategy.value(QStringLiteral("onSuccess")).toObject().value(QStringLiteral("policy")).toString();
        const QString onFailure = strategy.value(QStringLiteral("onFailure")).toObject().value(QStringLiteral("policy")).toString();
        if (onSuccess.isEmpty()) {
            return QStringLiteral("the DeletionPolicyType field of DeletionStrategy.OnSuccess cannot be unset when DeletionStrategy is enabled");
        }
        if (onFailure.isEmpty()) {
            return QStringLiteral("the DeletionPolicyType field of DeletionStrategy.OnFailure cannot be unset when DeletionStrategy is enabled");
        }
        const auto clusterPolicy = [](const QString &p) { return p == QLatin1String("DeleteCluster") || p == QLatin1String("DeleteWorkers"); };
        if (selectorMode && clusterPolicy(onSuccess)) {
            return QStringLiteral("the ClusterSelector mode doesn't support DeletionStrategy=%1 on success").arg(onSuccess);
        }
        if (selectorMode && clusterPolicy(onFailure)) {
            return QStringLiteral("the ClusterSelector mode doesn't support DeletionStrategy=%1 on failure").arg(onFailure);
        }
        if ((onSuccess == QLatin1String("DeleteWorkers") || onFailure == QLatin1String("DeleteWorkers")) && autoscaling(spec)) {
            return QStringLiteral("DeletionStrategy=DeleteWorkers currently does not support RayCluster with autoscaling enabled");
        }
        // v1.7's words, misspelling included.
        if (spec.value(QStringLiteral("shutdownAfterJobFinishes")).toBool()
            && (onSuccess == QLatin1String("DeleteNone") || onFailure == QLatin1String("DeleteNone"))) {
            return QStringLiteral("The RayJob spec is invalid: shutdownAfterJobFinshes is set to 'true' while deletion policy is 'DeleteNone'");
        }
        return {};
    }
    if (rules) return ruleProblems(spec);
    return QStringLiteral("The RayJob spec is invalid: DeletionStrategy requires either BOTH onSuccess and onFailure, OR the deletionRules field "
                          "(cannot be empty)");
}

bool finalize(ObjectStore &store, const QJsonObject &rayJob, const StopJob &stopJob)
{
    const QJsonObject meta = rayJob.value(QStringLiteral("metadata")).toObject();
    if (!meta.contains(QStringLiteral("deletionTimestamp"))) return false;
    const QString ns = meta.value(QStringLiteral("namespace")).toString();
    const QString name = meta.value(QStringLiteral("name")).toString();
    if (!meta.value(QStringLiteral("finalizers")).toArray().contains(QLatin1String(Finalizer))) return true;
    // Not terminal, New included: the Ray job may still run on the head.
    const QString jobStatus = rayJob.value(QStringLiteral("status")).toObject().value(QStringLiteral("jobStatus")).toString();
    const bool terminal = jobStatus == QLatin1String("SUCCEEDED") || jobStatus == QLatin1String("FAILED") || jobStatus == QLatin1String("STOPPED");
    if (!terminal) {
        stopJob(rayJob);
    }
    // The finalizer goes whether the stop worked or not.
    store.modify(rayJobType(), ns, name, [](QJsonObject &o) {
        QJsonObject m = o.value(QStringLiteral("metadata")).toObject();
        QJsonArray kept;
        for (const QJsonValue &f : m.value(QStringLiteral("finalizers")).toArray()) {
            if (f.toString() != QLatin1String(Finalizer)) kept.append(f);
        }
        if (kept.isEmpty()) m.remove(QStringLiteral("finalizers"));
        else m.insert(QStringLiteral("finalizers"), kept);
        o.insert(QStringLiteral("metadata"), m);
        return true;
    });
    return true;
}

int afterFinished(ObjectStore &store, const QJsonObject &rayJob, const OperatorOptions &options, const Record &record)
{
    const QJsonObject spec = rayJob.value(QStringLiteral("spec")).toObject();
    const QJsonObject status = rayJob.value(QStringLiteral("status")).toObject();
    const QString ns = rayJob.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("namespace")).toString();
    const QString clusterName = status.value(QStringLiteral("rayClusterName")).toString();
    const QString endTime = status.value(QStringLiteral("endTime")).toString();
    if (!spec.value(QStringLiteral("clusterSelector")).toObject().isEmpty()) return -1;
    const qint64 ttl = spec.value(QStringLiteral("ttlSecondsAfterFinished")).toInteger(0);
    // The operator requeues 2 s after the deletion time (requeueDelayFor); the sandbox comes back just after it.
    const auto later = [](qint64 ms) { return static_cast<int>(std::clamp<qint64>(ms + 10, 10, 24LL * 3600 * 1000)); };

    if (options.deletionPolicyGate && spec.contains(QStringLiteral("deletionStrategy"))) {
        const QJsonObject strategy = spec.value(QStringLiteral("deletionStrategy")).toObject();
        const QJsonArray rules = strategy.value(QStringLiteral("deletionRules")).toArray();
        if (!rules.isEmpty()) {
            std::optional<qint64> next;
            QString overdue;
            for (const QJsonValue &v : rules) {
                const QJsonObject rule = v.toObject();
                if (!ruleMatches(rule, status)) continue;
                const QString policy = rule.value(QStringLiteral("policy")).toString();
                const qint64 wait = msUntil(endTime, rule.value(QStringLiteral("condition")).toObject().value(QStringLiteral("ttlSeconds")).toInteger(0));
                if (wait > 0) {
                    next = next ? std::min(*next, wait) : wait;
                    continue;
                }
                if (done(store, ns, clusterName, policy)) continue;
                if (overdue.isEmpty() || impact(policy) > impact(overdue)) overdue = policy;
            }
            if (!overdue.isEmpty()) execute(store, rayJob, overdue, record);
            return next ? later(*next) : -1;
        }
        const QString jobStatus = status.value(QStringLiteral("jobStatus")).toString();
        const QString which = jobStatus == QLatin1String("SUCCEEDED") ? QStringLiteral("onSuccess")
                            : jobStatus == QLatin1String("FAILED") ? QStringLiteral("onFailure") : QString();
        if (which.isEmpty()) return -1;
        const QString policy = strategy.value(which).toObject().value(QStringLiteral("policy")).toString();
        if (policy == QLatin1String("DeleteNone")) return -1;
        if (const qint64 wait = msUntil(endTime, ttl); wait > 0) return later(wait);
        execute(store, rayJob, policy, record);
        return -1;
    }
    if (spec.value(QStringLiteral("shutdownAfterJobFinishes")).toBool()) {
        if (const qint64 wait = msUntil(endTime, ttl); wait > 0) return later(wait);
        execute(store, rayJob, options.deleteRayJobAfterJobFinishes ? QStringLiteral("DeleteSelf") : QStringLiteral("DeleteCluster"), record);
    }
    return -1;
}

} // namespace Starforge::Sandbox::RayJobDeletion
