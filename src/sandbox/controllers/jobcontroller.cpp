#include "sandbox/controllers/jobcontroller.h"

#include "sandbox/cluster/eventrecorder.h"
#include "sandbox/cluster/resourcequota.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

#include <QDateTime>
#include <QJsonArray>

namespace Starforge::Sandbox {

namespace {

const ResourceType &jobType()
{
    return *ResourceTypes::find(QStringLiteral("batch"), QStringLiteral("v1"), QStringLiteral("jobs"));
}

const ResourceType &podType()
{
    return *ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("pods"));
}

QJsonObject condition(const QString &type, const QString &reason, const QString &message)
{
    const QString now = nowRfc3339();
    return QJsonObject{{QStringLiteral("type"), type}, {QStringLiteral("status"), QStringLiteral("True")},
                       {QStringLiteral("reason"), reason}, {QStringLiteral("message"), message},
                       {QStringLiteral("lastProbeTime"), now}, {QStringLiteral("lastTransitionTime"), now}};
}

} // namespace

JobController::JobController(ObjectStore *store, EventRecorder *events, quint32 seed, int retryBackoffMs, QObject *parent)
    : QObject(parent)
    , m_store(store)
    , m_events(events)
    , m_random(seed ^ 0x6a6f62u)
    , m_retryBackoffMs(retryBackoffMs)
    , m_queue([this](const QString &ns, const QString &name) { reconcile(ns, name); }, this)
{
    connect(store, &ObjectStore::changed, this, &JobController::onChange);
}

void JobController::onChange(const Change &change)
{
    if (change.storage == jobType().storage && change.type != ChangeType::Deleted) {
        m_queue.add(change.object->ns, change.object->name);
    } else if (change.storage == QLatin1String("resourcequotas")
               && (change.type != ChangeType::Modified || !change.previous
                   || change.previous->object.value(QStringLiteral("spec")) != change.object->object.value(QStringLiteral("spec")))) {
        // A quota added, changed or removed may let a refused pod be created now.
        for (const ObjectPtr &job : m_store->list(jobType().storage, change.object->ns)) {
            m_queue.add(job->ns, job->name);
        }
    } else if (change.storage == podType().storage) {
        if (change.type == ChangeType::Deleted) {
            // Job tracking counts a pod that goes before it succeeded as failed, even one that
            // later ends well (docs/kuberay.md, "Evictions and the submitter's back-off limit").
            const QString phase = change.object->object.value(QStringLiteral("status")).toObject().value(QStringLiteral("phase")).toString();
            for (const QJsonValue &owner : change.object->object.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("ownerReferences")).toArray()) {
                if (owner[QStringLiteral("controller")].toBool() && owner[QStringLiteral("kind")].toString() == QLatin1String("Job")
                    && phase != QLatin1String("Succeeded")) {
                    ++m_deletedFailures[owner[QStringLiteral("uid")].toString()];
                }
            }
        }
        const QJsonObject labels = change.object->object.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("labels")).toObject();
        const QString job = labels.value(QStringLiteral("batch.kubernetes.io/job-name")).toString();
        if (!job.isEmpty()) {
            m_queue.add(change.object->ns, job);
        }
    }
}

void JobController::reconcile(const QString &ns, const QString &name)
{
    const ObjectPtr job = m_store->get(jobType().storage, ns, name);
    if (!job) {
        return;
    }
    const QJsonObject spec = job->object.value(QStringLiteral("spec")).toObject();
    QJsonObject status = job->object.value(QStringLiteral("status")).toObject();
    for (const QJsonValue &c : status.value(QStringLiteral("conditions")).toArray()) {
        const QString type = c.toObject().value(QStringLiteral("type")).toString();
        if (type == QLatin1String("Complete") || type == QLatin1String("Failed")) {
            return; // finished jobs are left as they are
        }
    }
    const int backoffLimit = spec.value(QStringLiteral("backoffLimit")).toInt(6);
    int active = 0;
    int succeeded = 0;
    int failed = m_deletedFailures.value(job->uid);
    int ready = 0;
    for (const ObjectPtr &pod : m_store->list(podType().storage, ns)) {
        if (!isControlledBy(pod->object, job->uid)) {
            continue;
        }
        const QJsonObject podStatus = pod->object.value(QStringLiteral("status")).toObject();
        const QString phase = podStatus.value(QStringLiteral("phase")).toString();
        if (phase == QLatin1String("Succeeded")) {
            ++succeeded;
        } else if (phase == QLatin1String("Failed")) {
            ++failed;
        } else {
            ++active;
            for (const QJsonValue &c : podStatus.value(QStringLiteral("conditions")).toArray()) {
                if (c.toObject().value(QStringLiteral("type")).toString() == QLatin1String("Ready")
                    && c.toObject().value(QStringLiteral("status")).toString() == QLatin1String("True")) {
                    ++ready;
                }
            }
        }
    }

    const QString now = nowRfc3339();
    QJsonArray conditions = status.value(QStringLiteral("conditions")).toArray();
    if (succeeded > 0) {
        conditions.append(condition(QStringLiteral("SuccessCriteriaMet"), QStringLiteral("CompletionsReached"), QStringLiteral("Reached expected number of succeeded pods")));
        conditions.append(condition(QStringLiteral("Complete"), QStringLiteral("CompletionsReached"), QStringLiteral("Reached expected number of succeeded pods")));
        status.insert(QStringLiteral("completionTime"), now);
        m_events->record(job->object, QStringLiteral("Normal"), QStringLiteral("Completed"), QStringLiteral("Job completed"),
                         QStringLiteral("job-controller"), EventRecorder::Api::EventsV1);
    } else if (failed > backoffLimit) {
        conditions.append(condition(QStringLiteral("FailureTarget"), QStringLiteral("BackoffLimitExceeded"), QStringLiteral("Job has reached the specified backoff limit")));
        conditions.append(condition(QStringLiteral("Failed"), QStringLiteral("BackoffLimitExceeded"), QStringLiteral("Job has reached the specified backoff limit")));
        m_events->record(job->object, QStringLiteral("Warning"), QStringLiteral("BackoffLimitExceeded"),
                         QStringLiteral("Job has reached the specified backoff limit"), QStringLiteral("job-controller"), EventRecorder::Api::EventsV1);
    } else if (active == 0) {
        // A failed pod is replaced after a back-off: 10 s doubling to six minutes, as upstream.
        const int delay = failed == 0 ? 0 : std::min(m_retryBackoffMs << std::min(failed - 1, 6), 360000);
        const QString attemptKey = job->uid + u'/' + QString::number(failed);
        if (delay > 0) {
            const auto due = m_retryAt.constFind(attemptKey);
            if (due == m_retryAt.cend()) {
                m_retryAt.insert(attemptKey, QDateTime::currentDateTimeUtc().addMSecs(delay));
                m_queue.addAfter(ns, name, delay + 5);
                return;
            }
            if (*due > QDateTime::currentDateTimeUtc()) {
                return;
            }
        }
        QJsonObject pod = spec.value(QStringLiteral("template")).toObject();
        QJsonObject meta = pod.value(QStringLiteral("metadata")).toObject();
        QJsonObject labels = meta.value(QStringLiteral("labels")).toObject();
        labels.insert(QStringLiteral("job-name"), name);
        labels.insert(QStringLiteral("batch.kubernetes.io/job-name"), name);
        labels.insert(QStringLiteral("controller-uid"), job->uid);
        labels.insert(QStringLiteral("batch.kubernetes.io/controller-uid"), job->uid);
        meta.insert(QStringLiteral("labels"), labels);
        const QString podName = name + u'-' + randomSuffix(m_random);
        meta.insert(QStringLiteral("name"), podName);
        meta.insert(QStringLiteral("namespace"), ns);
        meta.insert(QStringLiteral("ownerReferences"), QJsonArray{controllerReference(job->object)});
        pod.insert(QStringLiteral("metadata"), meta);
        pod.insert(QStringLiteral("apiVersion"), QStringLiteral("v1"));
        pod.insert(QStringLiteral("kind"), QStringLiteral("Pod"));
        // The API server's quota admission refuses the create: a Warning FailedCreate with the
        // API's words (the name the server generated is in them), nothing counted against the
        // backoff limit, and another try after a back-off or as soon as a quota changes.
        if (const auto exceeded = ResourceQuotas::exceeded(*m_store, ns, pod)) {
            m_events->record(job->object, QStringLiteral("Warning"), QStringLiteral("FailedCreate"),
                             QStringLiteral("Error creating: %1").arg(ResourceQuotas::forbiddenMessage(podName, *exceeded)),
                             QStringLiteral("job-controller"), EventRecorder::Api::EventsV1);
            const int refused = ++m_refusals[job->uid];
            m_queue.addAfter(ns, name, std::min(m_retryBackoffMs << std::min(refused - 1, 6), 360000));
        } else if (std::holds_alternative<ObjectPtr>(m_store->create(podType(), pod))) {
            m_refusals.remove(job->uid);
            ++active;
            m_events->record(job->object, QStringLiteral("Normal"), QStringLiteral("SuccessfulCreate"),
                             QStringLiteral("Created pod: %1").arg(podName), QStringLiteral("job-controller"), EventRecorder::Api::EventsV1);
        }
    }
    if (!status.contains(QStringLiteral("startTime"))) {
        status.insert(QStringLiteral("startTime"), now);
    }
    status.insert(QStringLiteral("active"), active);
    status.insert(QStringLiteral("ready"), ready);
    status.insert(QStringLiteral("failed"), failed);
    status.insert(QStringLiteral("succeeded"), succeeded);
    status.insert(QStringLiteral("terminating"), 0);
    if (!conditions.isEmpty()) {
        status.insert(QStringLiteral("conditions"), conditions);
    }
    m_store->modify(jobType(), ns, name, [&](QJsonObject &j) {
        j.insert(QStringLiteral("status"), status);
        return true;
    });
}

} // namespace Starforge::Sandbox
