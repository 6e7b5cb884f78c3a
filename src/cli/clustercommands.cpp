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
#include "core/logging/logging.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <memory>

namespace Starforge::Cli {

QString stoppedSandbox(const QString &connectionFile);   // cliapplication.cpp
void fetchSnapshot(Kube::KubeClient *kube, const Job::SnapshotRequest &request, QObject *context,
                   std::function<void(Result<Job::JobSnapshot>)> done);   // jobcommands.cpp

namespace {

// The items of a list reply. A 200 whose body is not a Kubernetes list (a proxy's login page,
// FORGE_K8S_API_SERVER pointing at some other web server) would otherwise read as "no jobs" or
// "no GPU nodes".
Result<QJsonArray> listItems(const Kube::ApiResult &result, const QString &what)
{
    if (!result.ok()) {
        return result.error->toError();
    }
    const QJsonValue items = result.json().value(QStringLiteral("items"));
    if (items.isArray() || items.isNull()) {
        return items.toArray();
    }
    return Error::invalid(QStringLiteral("Could not %1: the server's answer is not a Kubernetes list. Is FORGE_K8S_API_SERVER the cluster's API server?").arg(what));
}

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
        const Result<QJsonArray> nodeItems = listItems(nodeList, QStringLiteral("list nodes"));
        if (!nodeItems) {
            done(nodeItems.error());
            return;
        }
        Kube::ApiRequest pods;
        pods.path = Kube::ResourceKind::pods().path();
        pods.query.addQueryItem(QStringLiteral("fieldSelector"), QStringLiteral("status.phase!=Succeeded,status.phase!=Failed"));
        pods.what = QStringLiteral("list pods in all namespaces");
        kube->send(pods, context, [seriesLabel, done, nodeItems = *nodeItems](const Kube::ApiResult &podList) {
            const Result<QJsonArray> podItems = listItems(podList, QStringLiteral("list pods in all namespaces"));
            if (!podItems) {
                done(podItems.error());
                return;
            }
            QList<Kube::Node> nodeViews;
            for (const QJsonValue &n : nodeItems) nodeViews.append(Kube::Node::fromJson(n.toObject(), seriesLabel));
            QList<Kube::Pod> podViews;
            for (const QJsonValue &p : *podItems) podViews.append(Kube::Pod::fromJson(p.toObject()));
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

void CliApplication::readArchived(const QString &jobId, QString (*keyOf)(const QString &), std::function<void(const QByteArray &)> then)
{
    auto s3 = m_session->bucket();
    if (!s3) {
        fail(Error::notFound(QStringLiteral("job %1 is not on the cluster, and the archive cannot be read: %2").arg(jobId, s3.error().message)));
        return;
    }
    Job::readArchivedObject(*s3, keyOf(jobId), this, [this, jobId, then = std::move(then)](Result<QByteArray> data) {
        if (!data) {
            fail(data.error().code == Error::Code::NotFound
                     ? Error::notFound(QStringLiteral("job %1 is neither on the cluster nor in the job history").arg(jobId))
                     : data.error());
            return;
        }
        then(*data);
    });
}

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
        m_session->kube->send(list, this, [this, what = list.what](const Kube::ApiResult &result) {
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

void CliApplication::runStatus()
{
    const auto job = jobArgument(QStringLiteral("status JOB [--json]"));
    if (!job) return;
    openSession([this, job = *job] {
        const auto request = Job::SnapshotRequest::of(m_session->ns(), job, true);
        fetchSnapshot(m_session->kube.get(), request, this, [this, job](Result<Job::JobSnapshot> snapshot) {
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
        fetchSnapshot(m_session->kube.get(), request, this, [this, job, print](Result<Job::JobSnapshot> snapshot) {
            if (!snapshot) {
                fail(snapshot.error());
                return;
            }
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
        fetchSnapshot(m_session->kube.get(), request, this, [this, job, print](Result<Job::JobSnapshot> snapshot) {
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
            const QString id = snapshot->jobId.isEmpty() ? job : snapshot->jobId;
            readArchived(id, &Job::ArchiveKeys::objects, [this, id, print](const QByteArray &objects) {
                readArchived(id, &Job::ArchiveKeys::events, [this, print, objects](const QByteArray &events) {
                    print(Cluster::diagnose(snapshotFromArchive(objects, events).diagnosisInput(nullptr, m_session->settings.gpuNodeLabel)));
                });
            });
        });
    });
}

void CliApplication::runLogs()
{
    const auto job = jobArgument(QStringLiteral("logs JOB [-f] [--pod POD|submitter|head|worker] [--container C] [--tail N]"));
    if (!job) return;
    // Checked before anything is read: an archived log would otherwise take "abc" as 0 lines.
    int tailLines = -1;
    if (m_args.values.contains(QStringLiteral("tail"))) {
        bool ok = false;
        tailLines = m_args.value(QStringLiteral("tail")).toInt(&ok);
        if (!ok || tailLines < 0) {
            fail(Error::invalid(QStringLiteral("--tail takes a number of lines, e.g. --tail 100, not '%1'").arg(m_args.value(QStringLiteral("tail")))));
            return;
        }
    }
    openSession([this, job = *job, tailLines] {
        const auto request = Job::SnapshotRequest::of(m_session->ns(), job);
        fetchSnapshot(m_session->kube.get(), request, this, [this, job, tailLines](Result<Job::JobSnapshot> snapshot) {
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
            options.tailLines = tailLines;
            auto *stream = new Kube::LogStream(m_session->kube.get(), m_session->ns(), pod, options);
            m_work.reset(stream);
            // Since when the stream has been failing, and whether any line came at all.
            auto failingSince = std::make_shared<QDateTime>();
            auto gotLines = std::make_shared<bool>(false);
            connect(stream, &Kube::LogStream::lines, this, [this, failingSince, gotLines](const QList<Kube::LogLine> &lines) {
                *failingSince = {};
                *gotLines = true;
                for (const Kube::LogLine &line : lines) m_out << QString::fromUtf8(line.text) << '\n';
                m_out.flush();
            });
            connect(stream, &Kube::LogStream::interrupted, this, [this, stream, job, pod, failingSince, gotLines](const Kube::ApiError &error) {
                if (!stream->isRunning()) {
                    // The stream gave up (the pod is gone, or reading its log is not allowed) and
                    // finishes next: an error, unless the pod went away after its log was shown.
                    if (error.kind == Kube::ApiError::Kind::NotFound && *gotLines) {
                        m_err << "starforge-cli: pod " << pod << " is gone (the job ended?); its archived log: starforge-cli logs " << job << Qt::endl;
                    } else {
                        fail(error.toError());
                    }
                    return;
                }
                // A container that cannot start never gets a log: say so instead of retrying on.
                if (error.kind == Kube::ApiError::Kind::Invalid) {
                    stream->stop();
                    fail(error.toError());
                    return;
                }
                // Reconnecting to a server that went away would never end: give up when the
                // sandbox has stopped, or after LostClusterSeconds of failures.
                const QDateTime now = QDateTime::currentDateTimeUtc();
                if (!failingSince->isValid()) *failingSince = now;
                if (!stoppedSandbox(m_args.value(QStringLiteral("connection-file"))).isEmpty() || failingSince->secsTo(now) >= LostClusterSeconds) {
                    stream->stop();
                    fail(Error{error.toError().code, QStringLiteral("%1 Gave up after %2 s.").arg(error.message).arg(failingSince->secsTo(now))});
                    return;
                }
                m_err << "starforge-cli: log interrupted (" << Logging::redact(error.message) << "); reconnecting" << Qt::endl;
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
        // A damaged or hand-made status.json must not make `logs` print some other object of the
        // bucket (an empty key reads the bucket's listing).
        if (!chosen->key.startsWith(Job::ArchiveKeys::prefix(jobId)) || chosen->key.size() == Job::ArchiveKeys::prefix(jobId).size()) {
            fail(Error::invalid(QStringLiteral("the archive of job %1 is damaged: its log %2/%3 is kept under '%4', outside %5")
                                    .arg(jobId, chosen->pod, chosen->container, chosen->key, Job::ArchiveKeys::prefix(jobId))));
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
                const int tail = m_args.value(QStringLiteral("tail")).toInt();   // checked in runLogs
                QList<QByteArray> lines = text.split('\n');
                if (!lines.isEmpty() && lines.last().isEmpty()) lines.removeLast();
                lines = lines.mid(std::max<qsizetype>(0, lines.size() - tail));
                text = lines.isEmpty() ? QByteArray() : lines.join('\n') + '\n';   // --tail 0: nothing, not an empty line
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
