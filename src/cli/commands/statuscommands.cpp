// What one job is doing and why: `starforge-cli status JOB`, `events JOB` and `diagnose JOB`.
// A job no longer on the cluster is read from its archive (jobs/<id>/ in the bucket), so they
// work the same on a job that ended a month ago. A live job's diagnosis uses the cluster's
// capacity from the same computation the app's tracker archives with.

#include "cli/commands/commands.h"
#include "cli/commands/jobcommand.h"
#include "cli/output.h"
#include "core/cluster/capacity.h"
#include "core/cluster/diagnosis.h"
#include "core/events/eventjournal.h"
#include "core/events/timeline.h"
#include "core/job/archiver.h"
#include "core/job/history.h"
#include "core/job/jobactions.h"
#include "core/job/jobrecord.h"
#include "core/job/progress.h"
#include "core/job/progressfollower.h"
#include "core/s3/s3client.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

namespace Starforge::Cli {

namespace {

QJsonObject progressJson(const Job::JobProgress &p)
{
    QJsonObject latest;
    if (!p.points().isEmpty()) {
        for (auto it = p.points().last().metrics.cbegin(); it != p.points().last().metrics.cend(); ++it) latest.insert(it.key(), it.value());
    }
    QJsonArray servable;
    for (const Job::ServableCheckpoint &c : p.servableCheckpoints()) servable.append(c.toJson());
    return QJsonObject{{QStringLiteral("step"), p.step()},
                       {QStringLiteral("totalSteps"), p.totalSteps()},
                       {QStringLiteral("epoch"), p.epoch()},
                       {QStringLiteral("totalEpochs"), p.totalEpochs()},
                       {QStringLiteral("globalStep"), p.currentGlobalStep()},
                       {QStringLiteral("lastCheckpoint"), p.lastCheckpoint()},
                       {QStringLiteral("lastSavedCheckpoint"), p.lastSavedCheckpoint()},
                       {QStringLiteral("servableCheckpoints"), servable},
                       {QStringLiteral("logDirectory"), p.logDirectory()},
                       {QStringLiteral("metrics"), latest}};
}

class StatusCommand final : public JobCommand
{
    Q_OBJECT
public:
    using JobCommand::JobCommand;

    void run() override
    {
        const auto job = jobArgument(QStringLiteral("status JOB [--json]"));
        if (!job) return;
        openSession(clientsOnly(), [this, job = *job] {
            withSnapshot(job, true, [this, job](const Job::JobSnapshot &taken) {
                const Job::JobSnapshot *snapshot = &taken;
                const bool json = m_args.flag(QStringLiteral("json"));
                if (!snapshot->rayJob) {
                    // Not on the cluster: the archive, if there is one.
                    auto s3 = m_session->bucket();
                    if (!s3) {
                        fail(Error::notFound(tr("job %1 is not on the cluster, and the archive cannot be read: %2").arg(job, s3.error().message)));
                        return;
                    }
                    Job::readArchivedJob(*s3, snapshot->jobId.isEmpty() ? job : snapshot->jobId, this, [this, json, s3 = *s3](Result<Job::JobRecord> record) {
                        if (!record) {
                            fail(record.error());
                            return;
                        }
                        Job::readArchivedProgress(s3, *record, this, [this, json, r = *record](std::optional<Job::JobProgress> progress) {
                            printArchived(r, progress, json);
                        });
                    });
                    return;
                }
                withCapacity([this, json, snap = *snapshot](const Cluster::CapacityModel *capacity) {
                    showLive(snap, capacity, json);
                });
            });
        });
    }

private:
    void printArchived(const Job::JobRecord &r, const std::optional<Job::JobProgress> &progress, bool json)
    {
        const QString progressLine = progress ? progress->details() : QString();
        if (json) {
            QJsonObject out = r.toJson();
            if (!progressLine.isEmpty()) out.insert(QStringLiteral("progress"), progressJson(*progress));
            printJson(m_out, out);
        } else {
            // The labels stay English, as kubectl describe's: scripts and the e2e loops read these
            // lines by them (docs/e2e.md).
            m_out << "job       " << r.id << " (" << r.rayJobName << ")" << Qt::endl
                  << "state     " << r.displayState() << (r.reason.isEmpty() ? QString() : QStringLiteral(", ") + r.reason) << Qt::endl;
            if (!r.message.isEmpty()) m_out << "message   " << r.message << Qt::endl;
            if (!r.cause.isEmpty()) m_out << "cause     " << r.cause << Qt::endl;
            if (!progressLine.isEmpty()) m_out << "progress  " << progressLine << Qt::endl;
            m_out << "submitted " << r.created.toString(Qt::ISODate) << Qt::endl
                  << "ended     " << r.ended.toString(Qt::ISODate) << Qt::endl
                  << "archived  " << r.archivedAt.toString(Qt::ISODate) << ", " << tr("%n log(s)", nullptr, int(r.logs.size())) << Qt::endl;
            for (const QString &lost : r.lost) m_out << tr("  not archived: %1").arg(lost) << Qt::endl;
        }
        finish(Ok);
    }

    void showLive(const Job::JobSnapshot &snap, const Cluster::CapacityModel *capacity, bool json)
    {
        const Job::JobRecord r = Job::JobRecord::fromRayJob(*snap.rayJob);
        std::optional<Cluster::Diagnosis> diagnosis;
        if (r.state == Job::JobState::Pending || (r.state == Job::JobState::Failed && !r.started.isValid())) {
            diagnosis = Cluster::diagnose(snap.diagnosisInput(capacity, m_session->settings().gpuNodeLabel));
        }
        // From the tail of the driver's log the snapshot carries: the last step banner there
        // has the step and the total.
        const Job::JobProgress progress = Job::JobProgress::fromLog(snap.submitterLog.toUtf8());
        const QString progressLine = progress.details();
        QJsonArray pods;
        QList<QStringList> podRows;
        for (const QJsonObject &pod : snap.pods) {
            const Cluster::PodInfo info = Cluster::PodInfo::fromJson(pod);
            pods.append(QJsonObject{{QStringLiteral("name"), info.view.name}, {QStringLiteral("role"), info.role()},
                                    {QStringLiteral("phase"), info.view.phase}, {QStringLiteral("node"), info.view.nodeName}});
            podRows.append({info.view.name, info.role(), info.view.phase, info.view.nodeName.isEmpty() ? QStringLiteral("-") : info.view.nodeName});
        }
        if (json) {
            QJsonObject out = r.toJson();
            out.insert(QStringLiteral("pods"), pods);
            if (diagnosis) out.insert(QStringLiteral("diagnosis"), diagnosis->toJson());
            if (!progressLine.isEmpty()) out.insert(QStringLiteral("progress"), progressJson(progress));
            printJson(m_out, out);
        } else {
            // The labels stay English, as above.
            m_out << "job       " << r.id << " (" << r.rayJobName << ")" << Qt::endl
                  << "state     " << r.displayState() << (r.reason.isEmpty() ? QString() : QStringLiteral(", ") + r.reason) << Qt::endl;
            if (!r.message.isEmpty()) m_out << "message   " << r.message << Qt::endl;
            if (!progressLine.isEmpty()) m_out << "progress  " << progressLine << Qt::endl;
            m_out << "submitted " << tr("%1 (%2 ago)").arg(r.created.toString(Qt::ISODate), formatAge(ageOf(r.created))) << Qt::endl;
            if (r.started.isValid()) m_out << "started   " << r.started.toString(Qt::ISODate) << Qt::endl;
            if (r.ended.isValid()) m_out << "ended     " << r.ended.toString(Qt::ISODate) << Qt::endl;
            if (diagnosis) m_out << "why       " << diagnosis->causeId() << ": " << diagnosis->message << Qt::endl;
            if (!podRows.isEmpty()) {
                // untranslated: column keys, as kubectl's; scripts pick columns of the table by them
                m_out << Qt::endl << formatTable({QStringLiteral("POD"), QStringLiteral("ROLE"), QStringLiteral("PHASE"), QStringLiteral("NODE")}, podRows);
            }
        }
        finish(Ok);
    }
};

class EventsCommand final : public JobCommand
{
    Q_OBJECT
public:
    using JobCommand::JobCommand;

    void run() override
    {
        const auto job = jobArgument(QStringLiteral("events JOB [--json | --timeline]"));
        if (!job) return;
        if (m_args.flag(QStringLiteral("json")) && m_args.flag(QStringLiteral("timeline"))) {
            fail(Error::invalid(tr("events: --json and --timeline are two different outputs; give one of them")));
            return;
        }
        if (m_args.flag(QStringLiteral("timeline"))) {
            openSession(clientsOnly(), [this, job = *job] { timeline(job); });
            return;
        }
        openSession(clientsOnly(), [this, job = *job] {
            auto print = [this](const QList<QJsonObject> &events) {
                if (m_args.flag(QStringLiteral("json"))) {
                    QJsonArray array;
                    for (const QJsonObject &e : events) array.append(Cluster::eventToJson(Kube::Event::fromJson(e)));
                    printJson(m_out, array);
                } else {
                    QList<QStringList> rows;
                    for (const QJsonObject &e : events) rows.append(eventRow(Kube::Event::fromJson(e)));
                    m_out << formatTable(eventHeader(), rows);
                }
                finish(Ok);
            };
            withSnapshot(job, false, [this, job, print](const Job::JobSnapshot &taken) {
                const Job::JobSnapshot *snapshot = &taken;
                if (snapshot->rayJob) {
                    print(snapshot->events);
                    return;
                }
                readArchived(snapshot->jobId.isEmpty() ? job : snapshot->jobId, &Job::ArchiveKeys::events, [print](const QByteArray &data) {
                    QList<QJsonObject> events;
                    for (const QJsonValue &e : QJsonDocument::fromJson(data).array()) events.append(e.toObject());
                    print(events);
                });
            });
        });
    }

private:
    // The same lanes as the GUI's timeline, as text: the live job (its diagnosis' evidence
    // marked) or its archive.
    void timeline(const QString &job)
    {
        // As wide as the terminal says it is, less the lane titles; 60 columns of time otherwise.
        const int columns = std::clamp(qEnvironmentVariableIntValue("COLUMNS") - 32, 20, 200);
        const int width = qEnvironmentVariableIsSet("COLUMNS") ? columns : 60;
        auto print = [this, width](const Job::JobSnapshot &snapshot, bool live, const QStringList &evidence) {
            Events::TimelineInput input;
            input.rayJob = snapshot.rayJob;
            input.rayCluster = snapshot.rayCluster;
            input.pods = snapshot.pods;
            input.events = snapshot.events;
            input.rayJobName = snapshot.rayJobName;
            if (live) input.now = QDateTime::currentDateTimeUtc();
            // The app's journal on this machine, when it keeps one for this cluster and
            // namespace: the events Kubernetes has dropped and the states the app saw.
            const QString journalFile = m_session->journalFile();
            if (QFileInfo::exists(journalFile)) {
                if (auto journal = Events::EventJournal::open(journalFile)) {
                    Events::addFromJournal(**journal, m_session->ns(), input);
                } else {
                    note(tr("the event journal %1 is not read: %2").arg(journalFile, journal.error().message));
                }
            }
            m_out << Events::Timeline::build(input).toText(width, evidence);
            finish(Ok);
        };
        auto evidenceOf = [](const Cluster::Diagnosis &d) {
            QStringList keys;
            for (const Kube::Event &e : d.evidence) keys.append(e.ns + u'/' + e.name);
            return keys;
        };
        withSnapshot(job, true, [this, job, print, evidenceOf](const Job::JobSnapshot &taken) {
            if (taken.rayJob) {
                withCapacity([this, print, evidenceOf, snap = taken](const Cluster::CapacityModel *capacity) {
                    print(snap, true, evidenceOf(Cluster::diagnose(snap.diagnosisInput(capacity, m_session->settings().gpuNodeLabel))));
                });
                return;
            }
            const QString id = taken.jobId.isEmpty() ? job : taken.jobId;
            readArchived(id, &Job::ArchiveKeys::objects, [this, id, print, evidenceOf](const QByteArray &objects) {
                readArchived(id, &Job::ArchiveKeys::events, [this, print, evidenceOf, objects](const QByteArray &events) {
                    const Job::JobSnapshot snapshot = Job::snapshotFromArchive(objects, events);
                    print(snapshot, false, evidenceOf(Cluster::diagnose(snapshot.diagnosisInput(nullptr, m_session->settings().gpuNodeLabel))));
                });
            });
        });
    }
};

class DiagnoseCommand final : public JobCommand
{
    Q_OBJECT
public:
    using JobCommand::JobCommand;

    void run() override
    {
        const auto job = jobArgument(QStringLiteral("diagnose JOB [--json]"));
        if (!job) return;
        openSession(clientsOnly(), [this, job = *job] {
            auto print = [this](const Cluster::Diagnosis &d) {
                if (m_args.flag(QStringLiteral("json"))) {
                    printJson(m_out, d.toJson());
                } else {
                    m_out << d.causeId() << ": " << d.message << Qt::endl;
                    if (!d.evidence.isEmpty()) {
                        QList<QStringList> rows;
                        for (const Kube::Event &e : d.evidence) rows.append(eventRow(e));
                        m_out << Qt::endl << formatTable(eventHeader(), rows);
                    }
                }
                finish(Ok);
            };
            withSnapshot(job, true, [this, job, print](const Job::JobSnapshot &taken) {
                const Job::JobSnapshot *snapshot = &taken;
                if (snapshot->rayJob) {
                    withCapacity([this, print, snap = *snapshot](const Cluster::CapacityModel *capacity) {
                        print(Cluster::diagnose(snap.diagnosisInput(capacity, m_session->settings().gpuNodeLabel)));
                    });
                    return;
                }
                // An archived job: diagnosed again from its final objects and events.
                const QString id = snapshot->jobId.isEmpty() ? job : snapshot->jobId;
                readArchived(id, &Job::ArchiveKeys::objects, [this, id, print](const QByteArray &objects) {
                    readArchived(id, &Job::ArchiveKeys::events, [this, print, objects](const QByteArray &events) {
                        print(Cluster::diagnose(Job::snapshotFromArchive(objects, events).diagnosisInput(nullptr, m_session->settings().gpuNodeLabel)));
                    });
                });
            });
        });
    }
};

} // namespace

std::unique_ptr<Command> makeStatusCommand(const CommandContext &context)
{
    return std::make_unique<StatusCommand>(context);
}

std::unique_ptr<Command> makeEventsCommand(const CommandContext &context)
{
    return std::make_unique<EventsCommand>(context);
}

std::unique_ptr<Command> makeDiagnoseCommand(const CommandContext &context)
{
    return std::make_unique<DiagnoseCommand>(context);
}

} // namespace Starforge::Cli

#include "statuscommands.moc"
