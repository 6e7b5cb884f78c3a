// starforge-cli's read-only commands on jobs and the cluster: jobs, status, events, diagnose,
// logs, capacity, history. A job that is no longer on the cluster is read from its archive
// (jobs/<id>/ in the bucket), so `status`, `events`, `diagnose` and `logs` work the same on a
// job that ended a month ago.

#include "cli/cliapplication.h"
#include "cli/clustersession.h"
#include "cli/output.h"
#include "core/cluster/capacity.h"
#include "core/cluster/diagnosis.h"
#include "core/job/history.h"
#include "core/job/jobsnapshot.h"
#include "core/job/jobspec.h"
#include "core/kube/kubeclient.h"
#include "core/kube/logstream.h"
#include "core/kube/resourcekind.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace Starforge::Cli {

namespace {

qint64 ageOf(const QDateTime &time)
{
    return time.isValid() ? time.secsTo(QDateTime::currentDateTimeUtc()) : -1;
}

QString oneLine(QString text, qsizetype max = 100)
{
    text.replace(u'\n', u' ');
    return text.size() > max ? text.left(max - 1) + QChar(0x2026) : text;
}

// Lists the cluster's nodes and every pod, then builds the capacity model from them: the same
// computation the heatmap and the fit verdict use.
void fetchCapacity(Kube::KubeClient *kube, const QString &seriesLabel, QObject *context,
                   std::function<void(Result<Cluster::CapacityModel>)> done)
{
    Kube::ApiRequest nodes;
    nodes.path = Kube::ResourceKind::nodes().path();
    nodes.what = QStringLiteral("list nodes");
    kube->send(nodes, context, [kube, seriesLabel, context, done](const Kube::ApiResult &nodeList) {
        if (!nodeList.ok()) {
            done(nodeList.error->toError());
            return;
        }
        Kube::ApiRequest pods;
        pods.path = Kube::ResourceKind::pods().path();
        pods.query.addQueryItem(QStringLiteral("fieldSelector"), QStringLiteral("status.phase!=Succeeded,status.phase!=Failed"));
        pods.what = QStringLiteral("list pods in all namespaces");
        kube->send(pods, context, [seriesLabel, done, nodeItems = nodeList.json().value(QStringLiteral("items")).toArray()](const Kube::ApiResult &podList) {
            if (!podList.ok()) {
                done(podList.error->toError());
                return;
            }
            QList<Kube::Node> nodeViews;
            for (const QJsonValue &n : nodeItems) nodeViews.append(Kube::Node::fromJson(n.toObject(), seriesLabel));
            QList<Kube::Pod> podViews;
            for (const QJsonValue &p : podList.json().value(QStringLiteral("items")).toArray()) podViews.append(Kube::Pod::fromJson(p.toObject()));
            done(Cluster::CapacityModel::build(nodeViews, podViews));
        });
    });
}

QStringList eventRow(const Kube::Event &e)
{
    return {formatAge(ageOf(e.lastSeen)), e.type, e.reason, e.regardingKind + u'/' + e.regardingName,
            oneLine(e.message, 160) + (e.count > 1 ? QStringLiteral(" (x%1)").arg(e.count) : QString())};
}

// A snapshot rebuilt from a job's archive: the final objects and the events.
Job::JobSnapshot snapshotFromArchive(const QByteArray &objects, const QByteArray &events)
{
    Job::JobSnapshot snapshot;
    const QJsonObject o = QJsonDocument::fromJson(objects).object();
    if (o.value(QStringLiteral("rayJob")).isObject()) snapshot.rayJob = o.value(QStringLiteral("rayJob")).toObject();
    if (o.value(QStringLiteral("rayCluster")).isObject()) snapshot.rayCluster = o.value(QStringLiteral("rayCluster")).toObject();
    for (const QJsonValue &p : o.value(QStringLiteral("pods")).toArray()) snapshot.pods.append(p.toObject());
    for (const QJsonValue &e : QJsonDocument::fromJson(events).array()) snapshot.events.append(e.toObject());
    return snapshot;
}

} // namespace

void CliApplication::runJobs()
{
    if (m_args.positionals.size() != 1) {
        fail(Error::invalid(QStringLiteral("usage: starforge-cli jobs [--json]")));
        return;
    }
    openSession([this] {
        Kube::ApiRequest list;
        list.path = Kube::ResourceKind::rayJobs().path(m_session->ns());
        list.query.addQueryItem(QStringLiteral("labelSelector"), QLatin1String(Job::Labels::ManagedBy) + u'=' + QLatin1String(Job::Labels::ManagedByValue));
        list.what = QStringLiteral("list the jobs in namespace %1").arg(m_session->ns());
        m_session->kube->send(list, this, [this](const Kube::ApiResult &result) {
            if (!result.ok()) {
                fail(result.error->toError());
                return;
            }
            QList<Job::JobRecord> records;
            for (const QJsonValue &item : result.json().value(QStringLiteral("items")).toArray()) records.append(Job::JobRecord::fromRayJob(item.toObject()));
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

void CliApplication::runStatus()
{
    const auto job = jobArgument(QStringLiteral("status JOB [--json]"));
    if (!job) return;
    openSession([this, job = *job] {
        const auto request = Job::SnapshotRequest::of(m_session->ns(), job, true);
        Job::fetchJobSnapshot(m_session->kube.get(), request, this, [this, job](Result<Job::JobSnapshot> snapshot) {
            if (!snapshot) {
                fail(snapshot.error());
                return;
            }
            const bool json = m_args.flag(QStringLiteral("json"));
            if (!snapshot->rayJob) {
                // Not on the cluster: the archive, if there is one.
                auto s3 = m_session->bucket();
                if (!s3) {
                    fail(Error::notFound(QStringLiteral("job %1 is not on the cluster, and the archive cannot be read: %2").arg(job, s3.error().message)));
                    return;
                }
                Job::readArchivedJob(*s3, snapshot->jobId.isEmpty() ? job : snapshot->jobId, this, [this, json](Result<Job::JobRecord> record) {
                    if (!record) {
                        fail(record.error());
                        return;
                    }
                    if (json) {
                        printJson(m_out, record->toJson());
                    } else {
                        const Job::JobRecord &r = *record;
                        m_out << "job       " << r.id << " (" << r.rayJobName << ")" << Qt::endl
                              << "state     " << r.displayState() << (r.reason.isEmpty() ? QString() : QStringLiteral(", ") + r.reason) << Qt::endl;
                        if (!r.message.isEmpty()) m_out << "message   " << r.message << Qt::endl;
                        if (!r.cause.isEmpty()) m_out << "cause     " << r.cause << Qt::endl;
                        m_out << "submitted " << r.created.toString(Qt::ISODate) << Qt::endl
                              << "ended     " << r.ended.toString(Qt::ISODate) << Qt::endl
                              << "archived  " << r.archivedAt.toString(Qt::ISODate) << ", " << r.logs.size() << " logs" << Qt::endl;
                        for (const QString &lost : r.lost) m_out << "  not archived: " << lost << Qt::endl;
                    }
                    finish(Ok);
                });
                return;
            }
            fetchCapacity(m_session->kube.get(), m_session->settings.gpuNodeLabel, this,
                          [this, json, snap = *snapshot](Result<Cluster::CapacityModel> capacity) {
                const Job::JobRecord r = Job::JobRecord::fromRayJob(*snap.rayJob);
                std::optional<Cluster::Diagnosis> diagnosis;
                if (r.state == Job::JobState::Pending || (r.state == Job::JobState::Failed && !r.started.isValid())) {
                    diagnosis = Cluster::diagnose(snap.diagnosisInput(capacity ? &*capacity : nullptr, m_session->settings.gpuNodeLabel));
                }
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
                    printJson(m_out, out);
                } else {
                    m_out << "job       " << r.id << " (" << r.rayJobName << ")" << Qt::endl
                          << "state     " << r.displayState() << (r.reason.isEmpty() ? QString() : QStringLiteral(", ") + r.reason) << Qt::endl;
                    if (!r.message.isEmpty()) m_out << "message   " << r.message << Qt::endl;
                    m_out << "submitted " << r.created.toString(Qt::ISODate) << " (" << formatAge(ageOf(r.created)) << " ago)" << Qt::endl;
                    if (r.started.isValid()) m_out << "started   " << r.started.toString(Qt::ISODate) << Qt::endl;
                    if (r.ended.isValid()) m_out << "ended     " << r.ended.toString(Qt::ISODate) << Qt::endl;
                    if (diagnosis) m_out << "why       " << diagnosis->causeId() << ": " << diagnosis->message << Qt::endl;
                    if (!podRows.isEmpty()) {
                        m_out << Qt::endl << formatTable({QStringLiteral("POD"), QStringLiteral("ROLE"), QStringLiteral("PHASE"), QStringLiteral("NODE")}, podRows);
                    }
                }
                finish(Ok);
            });
        });
    });
}

void CliApplication::runEvents()
{
    const auto job = jobArgument(QStringLiteral("events JOB [--json]"));
    if (!job) return;
    openSession([this, job = *job] {
        auto print = [this](const QList<QJsonObject> &events) {
            if (m_args.flag(QStringLiteral("json"))) {
                QJsonArray array;
                for (const QJsonObject &e : events) array.append(Cluster::eventToJson(Kube::Event::fromJson(e)));
                printJson(m_out, array);
            } else {
                QList<QStringList> rows;
                for (const QJsonObject &e : events) rows.append(eventRow(Kube::Event::fromJson(e)));
                m_out << formatTable({QStringLiteral("LAST SEEN"), QStringLiteral("TYPE"), QStringLiteral("REASON"), QStringLiteral("OBJECT"), QStringLiteral("MESSAGE")}, rows);
            }
            finish(Ok);
        };
        const auto request = Job::SnapshotRequest::of(m_session->ns(), job);
        Job::fetchJobSnapshot(m_session->kube.get(), request, this, [this, job, print](Result<Job::JobSnapshot> snapshot) {
            if (!snapshot) {
                fail(snapshot.error());
                return;
            }
            if (snapshot->rayJob) {
                print(snapshot->events);
                return;
            }
            auto s3 = m_session->bucket();
            if (!s3) {
                fail(Error::notFound(QStringLiteral("job %1 is not on the cluster, and the archive cannot be read: %2").arg(job, s3.error().message)));
                return;
            }
            const QString id = snapshot->jobId.isEmpty() ? job : snapshot->jobId;
            Job::readArchivedObject(*s3, Job::ArchiveKeys::events(id), this, [this, id, print](Result<QByteArray> data) {
                if (!data) {
                    fail(data.error().code == Error::Code::NotFound
                             ? Error::notFound(QStringLiteral("job %1 is neither on the cluster nor in the job history").arg(id))
                             : data.error());
                    return;
                }
                QList<QJsonObject> events;
                for (const QJsonValue &e : QJsonDocument::fromJson(*data).array()) events.append(e.toObject());
                print(events);
            });
        });
    });
}

void CliApplication::runDiagnose()
{
    const auto job = jobArgument(QStringLiteral("diagnose JOB [--json]"));
    if (!job) return;
    openSession([this, job = *job] {
        auto print = [this](const Cluster::Diagnosis &d) {
            if (m_args.flag(QStringLiteral("json"))) {
                printJson(m_out, d.toJson());
            } else {
                m_out << d.causeId() << ": " << d.message << Qt::endl;
                if (!d.evidence.isEmpty()) {
                    QList<QStringList> rows;
                    for (const Kube::Event &e : d.evidence) rows.append(eventRow(e));
                    m_out << Qt::endl << formatTable({QStringLiteral("LAST SEEN"), QStringLiteral("TYPE"), QStringLiteral("REASON"), QStringLiteral("OBJECT"), QStringLiteral("MESSAGE")}, rows);
                }
            }
            finish(Ok);
        };
        const auto request = Job::SnapshotRequest::of(m_session->ns(), job, true);
        Job::fetchJobSnapshot(m_session->kube.get(), request, this, [this, job, print](Result<Job::JobSnapshot> snapshot) {
            if (!snapshot) {
                fail(snapshot.error());
                return;
            }
            if (snapshot->rayJob) {
                fetchCapacity(m_session->kube.get(), m_session->settings.gpuNodeLabel, this,
                              [this, print, snap = *snapshot](Result<Cluster::CapacityModel> capacity) {
                    print(Cluster::diagnose(snap.diagnosisInput(capacity ? &*capacity : nullptr, m_session->settings.gpuNodeLabel)));
                });
                return;
            }
            // An archived job: diagnosed again from its final objects and events.
            auto s3 = m_session->bucket();
            if (!s3) {
                fail(Error::notFound(QStringLiteral("job %1 is not on the cluster, and the archive cannot be read: %2").arg(job, s3.error().message)));
                return;
            }
            const QString id = snapshot->jobId.isEmpty() ? job : snapshot->jobId;
            Job::readArchivedObject(*s3, Job::ArchiveKeys::objects(id), this, [this, id, print](Result<QByteArray> objects) {
                if (!objects) {
                    fail(objects.error().code == Error::Code::NotFound
                             ? Error::notFound(QStringLiteral("job %1 is neither on the cluster nor in the job history").arg(id))
                             : objects.error());
                    return;
                }
                Job::readArchivedObject(m_session->s3.get(), Job::ArchiveKeys::events(id), this, [this, print, objects = *objects](Result<QByteArray> events) {
                    if (!events) {
                        fail(events.error());
                        return;
                    }
                    print(Cluster::diagnose(snapshotFromArchive(objects, *events).diagnosisInput(nullptr, m_session->settings.gpuNodeLabel)));
                });
            });
        });
    });
}

void CliApplication::runLogs()
{
    const auto job = jobArgument(QStringLiteral("logs JOB [-f] [--pod POD|submitter|head|worker] [--container C] [--tail N]"));
    if (!job) return;
    openSession([this, job = *job] {
        const auto request = Job::SnapshotRequest::of(m_session->ns(), job);
        Job::fetchJobSnapshot(m_session->kube.get(), request, this, [this, job](Result<Job::JobSnapshot> snapshot) {
            if (!snapshot) {
                fail(snapshot.error());
                return;
            }
            const QString want = m_args.value(QStringLiteral("pod"));
            // The pod: named, or the first of a role; by default the driver's (the submitter).
            QString pod;
            QStringList available;
            for (const QString &role : want.isEmpty() ? QStringList{QStringLiteral("submitter"), QStringLiteral("head")} : QStringList{want}) {
                for (const QJsonObject &p : std::as_const(snapshot->pods)) {
                    const Cluster::PodInfo info = Cluster::PodInfo::fromJson(p);
                    if (pod.isEmpty() && (info.view.name == role || info.role() == role || info.role().startsWith(role + u' '))) pod = info.view.name;
                }
            }
            for (const QJsonObject &p : std::as_const(snapshot->pods)) available << Cluster::PodInfo::fromJson(p).view.name;
            if (!snapshot->rayJob && (pod.isEmpty() || snapshot->pods.isEmpty())) {
                printArchivedLog(snapshot->jobId.isEmpty() ? job : snapshot->jobId);
                return;
            }
            if (pod.isEmpty()) {
                fail(Error::notFound(available.isEmpty() ? QStringLiteral("job %1 has no pods yet (see `starforge-cli status %1`)").arg(job)
                                                          : QStringLiteral("job %1 has no pod '%2'; its pods: %3").arg(job, want, available.join(QStringLiteral(", ")))));
                return;
            }
            Kube::LogStreamOptions options;
            options.container = m_args.value(QStringLiteral("container"));
            options.follow = m_args.flag(QStringLiteral("follow"));
            if (m_args.values.contains(QStringLiteral("tail"))) {
                bool ok = false;
                options.tailLines = m_args.value(QStringLiteral("tail")).toInt(&ok);
                if (!ok || options.tailLines < 0) {
                    fail(Error::invalid(QStringLiteral("--tail takes a number of lines, e.g. --tail 100")));
                    return;
                }
            }
            auto *stream = new Kube::LogStream(m_session->kube.get(), m_session->ns(), pod, options);
            m_work.reset(stream);
            connect(stream, &Kube::LogStream::lines, this, [this](const QList<Kube::LogLine> &lines) {
                for (const Kube::LogLine &line : lines) m_out << QString::fromUtf8(line.text) << '\n';
                m_out.flush();
            });
            connect(stream, &Kube::LogStream::interrupted, this, [this, stream](const Kube::ApiError &error) {
                // A container that cannot start never gets a log: say so instead of retrying on.
                if (error.kind == Kube::ApiError::Kind::Invalid) {
                    stream->stop();
                    fail(error.toError());
                } else {
                    m_err << "starforge-cli: log interrupted (" << error.message << "); reconnecting" << Qt::endl;
                }
            });
            connect(stream, &Kube::LogStream::finished, this, [this] { finish(Ok); });
            stream->start();
        });
    });
}

void CliApplication::printArchivedLog(const QString &jobId)
{
    auto s3 = m_session->bucket();
    if (!s3) {
        fail(Error::notFound(QStringLiteral("job %1 is not on the cluster, and the archive cannot be read: %2").arg(jobId, s3.error().message)));
        return;
    }
    Job::readArchivedJob(*s3, jobId, this, [this, jobId](Result<Job::JobRecord> record) {
        if (!record) {
            fail(record.error());
            return;
        }
        const QString want = m_args.value(QStringLiteral("pod"));
        const QString container = m_args.value(QStringLiteral("container"));
        const Job::ArchivedLog *chosen = nullptr;
        QStringList available;
        for (const QString &role : want.isEmpty() ? QStringList{QStringLiteral("submitter"), QStringLiteral("head")} : QStringList{want}) {
            for (const Job::ArchivedLog &l : record->logs) {
                const bool match = l.pod == role || l.role == role || l.role.startsWith(role + u' ');
                if (!chosen && match && (container.isEmpty() || l.container == container)) chosen = &l;
            }
        }
        for (const Job::ArchivedLog &l : record->logs) available << l.pod + u'/' + l.container;
        if (!chosen) {
            fail(Error::notFound(available.isEmpty() ? QStringLiteral("job %1 was archived without logs%2").arg(jobId, record->lost.isEmpty() ? QString() : QStringLiteral(": ") + record->lost.join(u' '))
                                                     : QStringLiteral("the archive of job %1 has no log for '%2'; it has: %3").arg(jobId, want, available.join(QStringLiteral(", ")))));
            return;
        }
        if (m_args.flag(QStringLiteral("follow"))) {
            m_err << "starforge-cli: job " << jobId << " has ended; showing its archived log" << Qt::endl;
        }
        Job::readArchivedObject(m_session->s3.get(), chosen->key, this, [this](Result<QByteArray> data) {
            if (!data) {
                fail(data.error());
                return;
            }
            QByteArray text = *data;
            if (m_args.values.contains(QStringLiteral("tail"))) {
                const int tail = m_args.value(QStringLiteral("tail")).toInt();
                QList<QByteArray> lines = text.split('\n');
                if (!lines.isEmpty() && lines.last().isEmpty()) lines.removeLast();
                text = lines.mid(std::max<qsizetype>(0, lines.size() - tail)).join('\n') + '\n';
            }
            m_out << QString::fromUtf8(text);
            finish(Ok);
        });
    });
}

void CliApplication::runCapacity()
{
    if (m_args.positionals.size() != 1) {
        fail(Error::invalid(QStringLiteral("usage: starforge-cli capacity [--spec SPEC] [--json]")));
        return;
    }
    // With a JobSpec: the fit verdict for its pools, from the same numbers.
    std::optional<Job::JobSpec> spec;
    if (m_args.values.contains(QStringLiteral("spec"))) {
        auto loaded = Job::JobSpec::load(m_args.value(QStringLiteral("spec")));
        if (!loaded) {
            fail(loaded.error());
            return;
        }
        spec = *loaded;
    }
    openSession([this, spec] {
        fetchCapacity(m_session->kube.get(), m_session->settings.gpuNodeLabel, this, [this, spec](Result<Cluster::CapacityModel> model) {
            if (!model) {
                fail(model.error());
                return;
            }
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
                m_out << "no GPU nodes: no node has the series label " << m_session->settings.gpuNodeLabel << " (FORGE_K8S_GPU_NODE_LABEL)" << Qt::endl;
            } else {
                QList<QStringList> rows;
                for (const Cluster::SeriesSummary &s : all) {
                    rows.append({s.series, QString::number(s.nodes), QString::number(s.capacity), QString::number(s.used), QString::number(s.free),
                                 QString::number(s.blocked) + (s.blockedNodes > 0 ? QStringLiteral(" (%1 nodes)").arg(s.blockedNodes) : QString()),
                                 QString::number(s.largestFree)});
                }
                m_out << formatTable({QStringLiteral("SERIES"), QStringLiteral("NODES"), QStringLiteral("GPUS"), QStringLiteral("USED"), QStringLiteral("FREE"),
                                      QStringLiteral("BLOCKED"), QStringLiteral("LARGEST FREE NODE")},
                                     rows);
            }
            finish(Ok);
        });
    });
}

void CliApplication::runHistory()
{
    if (m_args.positionals.size() != 1) {
        fail(Error::invalid(QStringLiteral("usage: starforge-cli history [--json]")));
        return;
    }
    openSession([this] {
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

} // namespace Starforge::Cli
