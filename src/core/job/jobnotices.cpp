#include "core/job/jobnotices.h"

namespace Starforge::Job {

namespace {

bool ended(JobState state)
{
    return state == JobState::Succeeded || state == JobState::Failed || state == JobState::Stopped;
}

QString nameOf(const JobRecord &r)
{
    return r.rayJobName.isEmpty() ? (r.name.isEmpty() ? r.id : r.name) : r.rayJobName;
}

} // namespace

JobNotices::JobNotices(Viewer viewer, QObject *parent) : QObject(parent), m_viewer(std::move(viewer)) {}

void JobNotices::baseline(const QList<JobRecord> &records)
{
    for (const JobRecord &r : records) m_told.insert(r.id, r.state);
}

void JobNotices::stoppedHere(const QString &jobId)
{
    m_stoppedHere.insert(jobId);
}

void JobNotices::observe(const JobRecord &r)
{
    if (!actsOn(ownershipOf(r, m_viewer))) return;
    const auto before = m_told.constFind(r.id);
    const bool seenEnded = before != m_told.cend() && ended(*before);
    m_told.insert(r.id, r.state);
    if (!ended(r.state) || seenEnded) return;   // not an outcome, or one already known

    Notice n;
    n.jobId = r.id;
    const QString name = nameOf(r);
    switch (r.state) {
    case JobState::Succeeded:
        n.title = tr("%1 succeeded").arg(name);
        n.body = r.started.isValid() && r.ended.isValid()
                     ? tr("It ran for %1 min.").arg(qMax<qint64>(1, r.started.secsTo(r.ended) / 60))
                     : tr("The job finished.");
        break;
    case JobState::Failed:
        n.urgent = true;
        if (r.reason == QLatin1String("PreRunningDeadlineExceeded") || r.cause == QLatin1String("PreRunningDeadlineExceeded")) {
            n.title = tr("%1 missed its start deadline").arg(name);
        } else {
            n.title = tr("%1 failed").arg(name);
        }
        n.body = r.cause.isEmpty() || r.message.startsWith(r.cause) ? r.message : tr("%1: %2").arg(r.cause, r.message);
        if (n.body.isEmpty()) n.body = tr("See its logs and events.");
        break;
    case JobState::Stopped:
        if (m_stoppedHere.contains(r.id)) return;   // the user did it, here
        n.title = tr("%1 was stopped").arg(name);
        n.body = r.message.isEmpty() ? tr("Stopped from elsewhere (another Starforge, the command line or kubectl).")
                                     : tr("Stopped from elsewhere: %1").arg(r.message);
        break;
    default:
        return;
    }
    Q_EMIT notice(n);
}

} // namespace Starforge::Job
