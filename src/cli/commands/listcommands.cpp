// The lists: `starforge-cli jobs` (the jobs on the cluster now) and `starforge-cli history`
// (the archived ones in the bucket, newest first). `jobs --follow` is the long-running mode: a
// session with the job tracker on, as the app's, that archives every job that ends (and those
// that ended while nobody watched) until Ctrl-C, one line per archived job. Logs are archived
// only while the app or this runs (docs/jobs.md, "Keeping logs while nobody watches").

#include "cli/commands/commands.h"
#include "cli/output.h"
#include "core/job/history.h"
#include "core/job/jobrecord.h"
#include "core/job/rayjobbuilder.h"
#include "core/job/tracker.h"
#include "core/kube/kubeclient.h"
#include "core/kube/resourcekind.h"

#include <QJsonArray>
#include <QPointer>

namespace Starforge::Cli {

namespace {

class JobsCommand final : public Command
{
    Q_OBJECT
public:
    using Command::Command;

    void run() override
    {
        if (m_args.positionals.size() != 1) {
            fail(Error::invalid(tr("usage: starforge-cli jobs [--follow] [--json]")));
            return;
        }
        if (m_args.flag(QStringLiteral("follow"))) {
            followJobs();
            return;
        }
        openSession(clientsOnly(), [this] {
            Kube::ApiRequest list;
            list.path = Kube::ResourceKind::rayJobs().path(m_session->ns());
            list.query.addQueryItem(QStringLiteral("labelSelector"), QLatin1String(Job::Labels::ManagedBy) + u'=' + QLatin1String(Job::Labels::ManagedByValue));
            list.what = tr("list the jobs in namespace %1").arg(m_session->ns());
            m_session->kube()->send(list, this, [this, what = list.what](const Kube::ApiResult &result) {
                const Result<QJsonArray> items = listItems(result, what);
                if (!items) {
                    fail(items.error());
                    return;
                }
                QList<Job::JobRecord> records;
                for (const QJsonValue &item : *items) records.append(Job::JobRecord::fromRayJob(item.toObject()));
                std::sort(records.begin(), records.end(), [](const Job::JobRecord &a, const Job::JobRecord &b) { return a.created > b.created; });
                if (m_args.flag(QStringLiteral("json"))) {
                    QJsonArray array;
                    for (const Job::JobRecord &r : std::as_const(records)) array.append(r.toJson());
                    printJson(m_out, array);
                } else if (records.isEmpty()) {
                    m_out << tr("no jobs on the cluster in namespace %1 (ended jobs: starforge-cli history)").arg(m_session->ns()) << Qt::endl;
                } else {
                    QList<QStringList> rows;
                    for (const Job::JobRecord &r : std::as_const(records)) {
                        rows.append({r.id, r.rayJobName, ownerColumn(r, m_session->viewer()), r.displayState(), formatAge(ageOf(r.created)), oneLine(r.message)});
                    }
                    // untranslated: column keys, as kubectl's; scripts pick columns of the table by them
                    m_out << formatTable({QStringLiteral("ID"), QStringLiteral("NAME"), QStringLiteral("OWNER"), QStringLiteral("STATE"), QStringLiteral("AGE"),
                                          QStringLiteral("MESSAGE")},
                                         rows);
                }
                finish(Ok);
            });
        });
    }

    // Ctrl-C is how --follow ends; an archive under way is dropped and done again next time
    // (nothing is deleted before the whole archive is in the bucket).
    void interrupt() override
    {
        if (!m_following) {
            Command::interrupt();
            return;
        }
        if (!isFinished()) {
            if (!json()) note(tr("stopped following; jobs that end from now on are archived by the app or the next `jobs --follow`"));
            finish(Ok);
        }
    }

private:
    void followJobs()
    {
        m_following = true;
        SessionOptions options;   // the RayJob informer, the tracker and the capacity it diagnoses with
        options.followEvents = false;
        // Kept going across a lost cluster (a VPN that drops overnight), but not for a sandbox
        // that has stopped: nothing would bring it back.
        options.giveUpWhenSourceStops = true;
        openSession(options, [this] {
            if (!m_session->jobs()) {
                const auto jobs = m_session->feature(QStringLiteral("jobs"));
                fail(Error::unavailable(jobs ? tr("cannot follow jobs: %1").arg(jobs->reason) : tr("cannot follow jobs: the job tracker is off")));
                return;
            }
            if (!json()) {
                note(tr("following the jobs in namespace %1; each job that ends is archived to the bucket (Ctrl-C to stop)").arg(m_session->ns()));
            }
        });
        // A rebuilt session (after the cluster came back) has a new tracker: follow that one.
        connect(m_session, &Session::partsChanged, this, [this] { attachTracker(); });
        attachTracker();
    }

    void attachTracker()
    {
        Job::JobTracker *tracker = m_session ? m_session->jobs() : nullptr;
        if (!tracker || tracker == m_tracker) return;
        m_tracker = tracker;
        connect(tracker, &Job::JobTracker::jobArchived, this, [this](const Job::JobRecord &record) {
            if (json()) {
                printJsonLine(m_out, recordSummary(record));
            } else {
                const int lost = int(record.lost.size());
                const QString line = lost == 0 ? tr("archived %1 %2 %3").arg(record.id, record.rayJobName, record.displayState())
                                               : tr("archived %1 %2 %3 (%n not archived)", nullptr, lost).arg(record.id, record.rayJobName, record.displayState());
                m_out << line << (record.message.isEmpty() ? QString() : QStringLiteral(": ") + oneLine(record.message)) << Qt::endl;
            }
        });
        connect(tracker, &Job::JobTracker::archiveFailed, this, [this](const QString &id, const QString &message) {
            if (!json()) note(id + QStringLiteral(": ") + message);
        });
    }

    bool m_following = false;
    QPointer<Job::JobTracker> m_tracker;
};

class HistoryCommand final : public Command
{
    Q_OBJECT
public:
    using Command::Command;

    void run() override
    {
        if (m_args.positionals.size() != 1) {
            fail(Error::invalid(tr("usage: starforge-cli history [--json]")));
            return;
        }
        openSession(clientsOnly(), [this] {
            auto s3 = m_session->bucket();
            if (!s3) {
                fail(s3.error());
                return;
            }
            Job::readHistory(*s3, this, [this](Result<Job::History> history) {
                if (!history) {
                    fail(history.error());
                    return;
                }
                for (const QString &bad : std::as_const(history->unreadable)) m_err << tr("starforge-cli: skipped %1").arg(bad) << Qt::endl;
                if (m_args.flag(QStringLiteral("json"))) {
                    QJsonArray array;
                    for (const Job::JobRecord &r : std::as_const(history->jobs)) {
                        QJsonObject o = r.toJson();
                        o.remove(QStringLiteral("jobSpec"));
                        array.append(o);
                    }
                    printJson(m_out, array);
                } else if (history->jobs.isEmpty()) {
                    m_out << tr("no archived jobs in the bucket yet") << Qt::endl;
                } else {
                    QList<QStringList> rows;
                    for (const Job::JobRecord &r : std::as_const(history->jobs)) {
                        const QDateTime from = r.started.isValid() ? r.started : r.created;
                        rows.append({r.id, r.rayJobName, Job::jobStateName(r.state), r.ended.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")),
                                     from.isValid() && r.ended.isValid() ? formatAge(from.secsTo(r.ended)) : QStringLiteral("-"), oneLine(r.message, 80)});
                    }
                    // untranslated: column keys, as kubectl's; scripts pick columns of the table by them
                    m_out << formatTable({QStringLiteral("ID"), QStringLiteral("NAME"), QStringLiteral("STATE"), QStringLiteral("ENDED"), QStringLiteral("RAN"),
                                          QStringLiteral("MESSAGE")},
                                         rows);
                }
                finish(Ok);
            });
        });
    }
};

} // namespace

std::unique_ptr<Command> makeJobsCommand(const CommandContext &context)
{
    return std::make_unique<JobsCommand>(context);
}

std::unique_ptr<Command> makeHistoryCommand(const CommandContext &context)
{
    return std::make_unique<HistoryCommand>(context);
}

} // namespace Starforge::Cli

#include "listcommands.moc"
