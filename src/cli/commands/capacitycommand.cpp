// `starforge-cli capacity [--spec SPEC]`: GPUs per series (total, used, free, blocked, the
// largest free node) and, with SPEC, whether its pools fit now, once busy nodes free up, or
// never. The numbers come from the Session's capacity tracker: the heatmap's computation.

#include "cli/commands/commands.h"
#include "cli/output.h"
#include "core/cluster/capacity.h"
#include "core/job/jobspec.h"

#include <QJsonArray>
#include <QJsonObject>

namespace Starforge::Cli {

namespace {

class CapacityCommand final : public Command
{
    Q_OBJECT
public:
    using Command::Command;

    void run() override
    {
        if (m_args.positionals.size() != 1) {
            fail(Error::invalid(tr("usage: starforge-cli capacity [--spec SPEC] [--json]")));
            return;
        }
        // With a JobSpec: the fit verdict for its pools, from the same numbers.
        std::optional<Job::JobSpec> spec;
        if (!loadSpecOption(&spec)) return;
        openSession(capacityOnly(), [this, spec] {
            {
                const Cluster::CapacityTracker *tracker = m_session->capacity();
                if (!tracker || !tracker->isSynced()) {
                    fail(Error::invalid(m_session->feature(QStringLiteral("capacity")).value_or(FeatureStatus{}).reason));
                    return;
                }
                const Cluster::CapacityModel *model = &tracker->model();
                if (spec) {
                    Cluster::FitRequest request;
                    for (const Job::Pool &pool : spec->pools) request.pools.append({pool.name, pool.series, pool.nodes, pool.gpusPerNode});
                    const Cluster::FitVerdict verdict = model->fit(request);
                    if (m_args.flag(QStringLiteral("json"))) {
                        QJsonArray pools;
                        for (const Cluster::PoolVerdict &p : verdict.pools) {
                            pools.append(QJsonObject{{QStringLiteral("pool"), p.request.name}, {QStringLiteral("series"), p.request.series},
                                                     {QStringLiteral("fit"), Cluster::fitName(p.fit)}, {QStringLiteral("freeNow"), p.freeNow},
                                                     {QStringLiteral("busy"), p.busy}, {QStringLiteral("blocked"), p.blocked},
                                                     {QStringLiteral("placement"), QJsonArray::fromStringList(p.placement)},
                                                     {QStringLiteral("sentence"), p.sentence}});
                        }
                        printJson(m_out, QJsonObject{{QStringLiteral("fit"), Cluster::fitName(verdict.fit)}, {QStringLiteral("sentence"), verdict.sentence},
                                                     {QStringLiteral("pools"), pools}});
                    } else {
                        m_out << Cluster::fitName(verdict.fit) << ": " << verdict.sentence << Qt::endl;
                    }
                    finish(Ok);
                    return;
                }
                const QList<Cluster::SeriesSummary> all = model->allSeries();
                if (m_args.flag(QStringLiteral("json"))) {
                    QJsonArray array;
                    for (const Cluster::SeriesSummary &s : all) {
                        array.append(QJsonObject{{QStringLiteral("series"), s.series}, {QStringLiteral("nodes"), s.nodes},
                                                 {QStringLiteral("blockedNodes"), s.blockedNodes}, {QStringLiteral("gpus"), s.capacity},
                                                 {QStringLiteral("used"), s.used}, {QStringLiteral("free"), s.free},
                                                 {QStringLiteral("blocked"), s.blocked}, {QStringLiteral("largestFreeNode"), s.largestFree}});
                    }
                    printJson(m_out, array);
                } else if (all.isEmpty()) {
                    m_out << tr("no GPU nodes: no node has the series label %1 (FORGE_K8S_GPU_NODE_LABEL)").arg(m_session->settings().gpuNodeLabel) << Qt::endl;
                } else {
                    QList<QStringList> rows;
                    for (const Cluster::SeriesSummary &s : all) {
                        rows.append({s.series, QString::number(s.nodes), QString::number(s.capacity), QString::number(s.used), QString::number(s.free),
                                     QString::number(s.blocked) + (s.blockedNodes > 0 ? tr(" (%n node(s))", nullptr, s.blockedNodes) : QString()),
                                     QString::number(s.largestFree)});
                    }
                    // untranslated: column keys, as kubectl's; scripts pick columns of the table by them
                    m_out << formatTable({QStringLiteral("SERIES"), QStringLiteral("NODES"), QStringLiteral("GPUS"), QStringLiteral("USED"), QStringLiteral("FREE"),
                                          QStringLiteral("BLOCKED"), QStringLiteral("LARGEST FREE NODE")},
                                         rows);
                }
                finish(Ok);
            }
        });
    }
};

} // namespace

std::unique_ptr<Command> makeCapacityCommand(const CommandContext &context)
{
    return std::make_unique<CapacityCommand>(context);
}

} // namespace Starforge::Cli

#include "capacitycommand.moc"
