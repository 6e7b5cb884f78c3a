#include "core/job/pendingdiagnoser.h"

#include "core/cluster/capacity.h"
#include "core/job/jobactions.h"
#include "core/job/jobsnapshot.h"
#include "core/job/tracker.h"

namespace Starforge::Job {

PendingDiagnoser::PendingDiagnoser(Kube::KubeClient *kube, JobTracker *jobs, const Cluster::CapacityTracker *capacity, QString ns,
                                   QString seriesLabel, QObject *parent)
    : QObject(parent)
    , m_kube(kube)
    , m_jobs(jobs)
    , m_capacity(capacity)
    , m_ns(std::move(ns))
    , m_seriesLabel(std::move(seriesLabel))
{
    m_timer.setInterval(10000);
    connect(&m_timer, &QTimer::timeout, this, &PendingDiagnoser::round);
    // A job that starts running (or ends) loses its "why it waits" at once, not at the next round.
    // A job that becomes Pending is looked at soon (the scheduler's first verdict comes within
    // a second or two), not at the next round.
    m_soon.setSingleShot(true);
    m_soon.setInterval(1500);
    connect(&m_soon, &QTimer::timeout, this, &PendingDiagnoser::round);
    connect(jobs, &JobTracker::jobChanged, this, [this](const JobRecord &record) {
        if (record.state == JobState::Pending && !record.archived && !m_diagnoses.contains(record.id) && m_timer.isActive()) m_soon.start();
        if (record.state != JobState::Pending && m_diagnoses.remove(record.id) > 0) Q_EMIT diagnosisChanged(record.id);
    });
    connect(jobs, &JobTracker::jobRemoved, this, [this](const QString &id) {
        if (m_diagnoses.remove(id) > 0) Q_EMIT diagnosisChanged(id);
    });
}

PendingDiagnoser::~PendingDiagnoser() = default;

void PendingDiagnoser::start()
{
    m_timer.start();
    round();
}

void PendingDiagnoser::setIntervalMs(int ms)
{
    m_timer.setInterval(ms);
}

std::optional<Cluster::Diagnosis> PendingDiagnoser::diagnosisOf(const QString &jobId) const
{
    const auto it = m_diagnoses.constFind(jobId);
    return it == m_diagnoses.cend() ? std::nullopt : std::optional(*it);
}

void PendingDiagnoser::round()
{
    if (!m_jobs) return;
    if (m_fetch || !m_queue.isEmpty()) {   // the last round is still going: this one after it
        m_soon.start();
        return;
    }
    for (const JobRecord &record : m_jobs->jobs()) {
        if (!record.archived && record.state == JobState::Pending && !record.rayJobName.isEmpty()) m_queue << record.id;
    }
    next();
}

void PendingDiagnoser::next()
{
    if (m_queue.isEmpty() || !m_jobs) return;
    const QString id = m_queue.takeFirst();
    const auto record = m_jobs->job(id);
    if (!record || record->state != JobState::Pending) {
        next();
        return;
    }
    m_fetch = std::make_unique<QObject>();
    SnapshotRequest request = SnapshotRequest::of(m_ns, id);
    request.rayJobName = record->rayJobName;
    const QDateTime created = record->created;
    fetchCheckedSnapshot(m_kube, request, m_fetch.get(), [this, id, created](Result<JobSnapshot> snapshot) {
        m_fetch.release()->deleteLater();   // the context of this very callback
        const auto now = m_jobs ? m_jobs->job(id) : std::nullopt;
        if (snapshot && snapshot->rayJob && now && now->state == JobState::Pending) {
            const Cluster::CapacityModel *capacity = m_capacity && m_capacity->isSynced() ? &m_capacity->model() : nullptr;
            const Cluster::Diagnosis d = Cluster::diagnose(snapshot->diagnosisInput(capacity, m_seriesLabel));
            const bool early = created.isValid() && created.secsTo(QDateTime::currentDateTimeUtc()) < 60;
            const bool worthSaying = d.cause != Cluster::Cause::Unknown || (!early && !d.message.isEmpty());
            const auto before = m_diagnoses.constFind(id);
            if (worthSaying && (before == m_diagnoses.cend() || before->cause != d.cause || before->message != d.message)) {
                m_diagnoses.insert(id, d);
                Q_EMIT diagnosisChanged(id);
            }
        }
        next();
    });
}

} // namespace Starforge::Job
