#pragma once

// Why each live job that is still Pending waits, kept up to date for the Jobs table's Message
// column (docs/jobs.md, "The Jobs panel's Message column"): the diagnosis engine's cause and
// sentence, the same `starforge-cli diagnose` prints. Every interval the Pending jobs the
// tracker knows are read one after the other (their RayJob, RayCluster, pods and events:
// fetchCheckedSnapshot) and diagnosed with the session's capacity for the numbers; a job that is no longer Pending is
// forgotten. Nothing is said in a job's first minute unless the cause is known: the scheduler
// has not tried yet, an image is still pulling.

#include "core/cluster/diagnosis.h"

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QStringList>
#include <QTimer>

#include <memory>
#include <optional>

namespace Starforge::Kube {
class KubeClient;
}
namespace Starforge::Cluster {
class CapacityTracker;
}

namespace Starforge::Job {

class JobTracker;

class PendingDiagnoser final : public QObject
{
    Q_OBJECT
public:
    PendingDiagnoser(Kube::KubeClient *kube, JobTracker *jobs, const Cluster::CapacityTracker *capacity, QString ns, QString seriesLabel,
                     QObject *parent = nullptr);
    ~PendingDiagnoser() override;

    void start();
    // A round over the Pending jobs this often (default 10 s; tests shorten it).
    void setIntervalMs(int ms);
    std::optional<Cluster::Diagnosis> diagnosisOf(const QString &jobId) const;

Q_SIGNALS:
    void diagnosisChanged(const QString &jobId);

private:
    void round();
    void next();

    Kube::KubeClient *m_kube;
    QPointer<JobTracker> m_jobs;
    QPointer<const Cluster::CapacityTracker> m_capacity;
    QString m_ns;
    QString m_seriesLabel;
    QHash<QString, Cluster::Diagnosis> m_diagnoses;
    QStringList m_queue;
    std::unique_ptr<QObject> m_fetch;   // the read in flight; deleting it drops the answer
    QTimer m_timer;
    QTimer m_soon;
};

} // namespace Starforge::Job
