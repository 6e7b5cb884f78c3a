// The lists: `starforge-cli jobs` (the jobs on the cluster now) and `starforge-cli history`
// (the archived ones in the bucket, newest first).

#include "cli/commands/commands.h"
#include "cli/output.h"
#include "core/job/history.h"
#include "core/job/jobrecord.h"
#include "core/job/rayjobbuilder.h"
#include "core/kube/kubeclient.h"
#include "core/kube/resourcekind.h"

#include <QJsonArray>

namespace Starforge::Cli {

namespace {

class JobsCommand final : public Command
{
public:
    using Command::Command;

    void run() override
    {
        if (m_args.positionals.size() != 1) {
            fail(Error::invalid(QStringLiteral("usage: starforge-cli jobs [--json]")));
            return;
        }
        openSession(clientsOnly(), [this] {
            Kube::ApiRequest list;
            list.path = Kube::ResourceKind::rayJobs().path(m_session->ns());
            list.query.addQueryItem(QStringLiteral("labelSelector"), QLatin1String(Job::Labels::ManagedBy) + u'=' + QLatin1String(Job::Labels::ManagedByValue));
            list.what = QStringLiteral("list the jobs in namespace %1").arg(m_session->ns());
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
                    m_out << "no jobs on the cluster in namespace " << m_session->ns() << " (ended jobs: starforge-cli history)" << Qt::endl;
                } else {
                    QList<QStringList> rows;
                    for (const Job::JobRecord &r : std::as_const(records)) {
                        rows.append({r.id, r.rayJobName, r.displayState(), formatAge(ageOf(r.created)), oneLine(r.message)});
                    }
                    m_out << formatTable({QStringLiteral("ID"), QStringLiteral("NAME"), QStringLiteral("STATE"), QStringLiteral("AGE"), QStringLiteral("MESSAGE")}, rows);
                }
                finish(Ok);
            });
        });
    }
};

class HistoryCommand final : public Command
{
public:
    using Command::Command;

    void run() override
    {
        if (m_args.positionals.size() != 1) {
            fail(Error::invalid(QStringLiteral("usage: starforge-cli history [--json]")));
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
                for (const QString &bad : std::as_const(history->unreadable)) m_err << "starforge-cli: skipped " << bad << Qt::endl;
                if (m_args.flag(QStringLiteral("json"))) {
                    QJsonArray array;
                    for (const Job::JobRecord &r : std::as_const(history->jobs)) {
                        QJsonObject o = r.toJson();
                        o.remove(QStringLiteral("jobSpec"));
                        array.append(o);
                    }
                    printJson(m_out, array);
                } else if (history->jobs.isEmpty()) {
                    m_out << "no archived jobs in the bucket yet" << Qt::endl;
                } else {
                    QList<QStringList> rows;
                    for (const Job::JobRecord &r : std::as_const(history->jobs)) {
                        const QDateTime from = r.started.isValid() ? r.started : r.created;
                        rows.append({r.id, r.rayJobName, Job::jobStateName(r.state), r.ended.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")),
                                     from.isValid() && r.ended.isValid() ? formatAge(from.secsTo(r.ended)) : QStringLiteral("-"), oneLine(r.message, 80)});
                    }
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
