#pragma once

// What is worth telling the user about their jobs when they are not looking (docs/jobs.md,
// "Notifications"): a job of theirs that succeeded, failed (with the diagnosed cause), missed
// its pre-running deadline, or was stopped from elsewhere (another app, kubectl, a colleague).
// Fed the tracker's records as they change (observe()); a state seen in the first records
// after a connect is the job's state then, not news, and each job is told about once per
// outcome. Other people's jobs in a shared namespace are never told about.

#include "core/job/jobrecord.h"
#include "core/job/ownership.h"

#include <QHash>
#include <QObject>
#include <QSet>
#include <QString>

namespace Starforge::Job {

struct Notice
{
    QString jobId;
    QString title;   // "grpo-math-x7k2pq succeeded"
    QString body;    // what happened, in a sentence or two
    bool urgent = false;   // a failure: shown until dismissed where the desktop allows
};

class JobNotices final : public QObject
{
    Q_OBJECT
public:
    explicit JobNotices(Viewer viewer, QObject *parent = nullptr);

    // The record of a job as the tracker has it now; emits notice() when it is news.
    void observe(const JobRecord &record);
    // What the tracker had at its first sync: their states are known, not news.
    void baseline(const QList<JobRecord> &records);
    // The user stopped this job from this app: its Stopped state is no news to them.
    void stoppedHere(const QString &jobId);

Q_SIGNALS:
    void notice(const Starforge::Job::Notice &notice);

private:
    Viewer m_viewer;
    QHash<QString, JobState> m_told;   // the outcome each job was last seen in or told about
    QSet<QString> m_stoppedHere;
};

} // namespace Starforge::Job
