// The kubelet's logs: every line a container writes goes to a CRI-format file per run
// ("<RFC 3339 nano> <stream> F <text>") and to the pods/log followers, and pods/log reads those
// files back with the API server's options and error texts (container, follow, previous,
// tailLines, limitBytes, sinceSeconds, sinceTime, timestamps).

#include "sandbox/cluster/kubelet.h"

#include "sandbox/api/status.h"
#include "sandbox/cluster/kubeletpod.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"
#include "sandbox/util/ownerfiles.h"

#include <QFile>
#include <QJsonArray>

#include <optional>

namespace Starforge::Sandbox {

using namespace KubeletCommon;

namespace {

struct LogOptions
{
    QString container;
    std::optional<qint64> tailLines;
    std::optional<qint64> limitBytes;
    QDateTime since;               // from sinceSeconds or sinceTime; invalid: from the start
    bool follow = false;
    bool timestamps = false;
    bool previous = false;
};

bool isTrueParameter(const Http::Request &request, const QString &key)
{
    const QString v = request.queryValue(key);
    return v == QLatin1String("true") || v == QLatin1String("1");
}

// The container to read: the one named, or the only app container. Returns the API server's
// refusal text, or empty.
QString chooseContainer(const QJsonObject &spec, const QString &podName, QString &container)
{
    QStringList names;
    for (const QJsonValue &c : spec.value(QStringLiteral("containers")).toArray()) names << c.toObject().value(QStringLiteral("name")).toString();
    QStringList initNames;
    for (const QJsonValue &c : spec.value(QStringLiteral("initContainers")).toArray()) initNames << c.toObject().value(QStringLiteral("name")).toString();
    if (container.isEmpty()) {
        if (names.size() != 1) {
            QString message = QStringLiteral("a container name must be specified for pod %1, choose one of: [%2]").arg(podName, names.join(u' '));
            if (!initNames.isEmpty()) message += QStringLiteral(" or one of the init containers: [%1]").arg(initNames.join(u' '));
            return message;
        }
        container = names.first();
    }
    if (!names.contains(container) && !initNames.contains(container)) {
        return QStringLiteral("container %1 is not valid for pod %2").arg(container, podName);
    }
    return {};
}

// The numeric and time options, validated in the API server's order with its texts. Returns the
// refusal text, or empty.
QString readLogOptions(const Http::Request &request, const QString &podName, LogOptions &options)
{
    QString problem;
    const auto intParam = [&](const QString &key, qint64 min, const QString &rule) -> std::optional<qint64> {
        const QString v = request.queryValue(key);
        if (v.isEmpty() || !problem.isEmpty()) return std::nullopt;
        bool parsed = false;
        const qint64 n = v.toLongLong(&parsed);
        if (!parsed || n < min) {
            problem = QStringLiteral("PodLogOptions \"%1\" is invalid: %2: Invalid value: %3: %4").arg(podName, key, v, rule);
        }
        return n;
    };
    options.tailLines = intParam(QStringLiteral("tailLines"), 0, QStringLiteral("must be greater than or equal to 0"));
    options.limitBytes = intParam(QStringLiteral("limitBytes"), 1, QStringLiteral("must be greater than 0"));
    const auto sinceSeconds = intParam(QStringLiteral("sinceSeconds"), 1, QStringLiteral("must be greater than 0"));
    if (!problem.isEmpty()) {
        return problem;
    }
    const QString sinceTime = request.queryValue(QStringLiteral("sinceTime"));
    if (sinceSeconds && !sinceTime.isEmpty()) {
        return QStringLiteral("PodLogOptions \"%1\" is invalid: : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified").arg(podName);
    }
    if (sinceSeconds) {
        options.since = QDateTime::currentDateTimeUtc().addSecs(-*sinceSeconds);
    }
    if (!sinceTime.isEmpty()) {
        options.since = QDateTime::fromString(sinceTime, Qt::ISODateWithMs);
        if (!options.since.isValid()) options.since = QDateTime::fromString(sinceTime, Qt::ISODate);
    }
    options.follow = isTrueParameter(request, QStringLiteral("follow"));
    options.timestamps = isTrueParameter(request, QStringLiteral("timestamps"));
    options.previous = isTrueParameter(request, QStringLiteral("previous"));
    return {};
}

// The lines of one run's log file that the options select, in the reader's format (the text,
// with the timestamp in front when asked for), before limitBytes.
QByteArray selectLines(const QString &path, const LogOptions &options)
{
    QFile log(path);
    QList<QByteArray> lines;
    if (log.open(QIODevice::ReadOnly)) {
        lines = log.readAll().split('\n');
        if (!lines.isEmpty() && lines.last().isEmpty()) lines.removeLast();
    }
    QList<QByteArray> selected;
    for (const QByteArray &line : std::as_const(lines)) {
        // CRI format: "<RFC 3339 nano> <stream> <F|P> <text>".
        const QList<QByteArray> parts = line.split(' ');
        if (parts.size() < 3) continue;
        if (options.since.isValid()) {
            const QDateTime at = QDateTime::fromString(QString::fromLatin1(parts[0]).left(23) + u'Z', Qt::ISODateWithMs);
            if (at.isValid() && at < options.since) continue;
        }
        const qsizetype textStart = parts[0].size() + parts[1].size() + parts[2].size() + 3;
        const QByteArray text = line.mid(std::min(textStart, line.size()));
        selected << ((options.timestamps ? parts[0] + ' ' : QByteArray()) + text + '\n');
    }
    if (options.tailLines && selected.size() > *options.tailLines) selected = selected.mid(selected.size() - *options.tailLines);
    return selected.join();
}

} // namespace

void Kubelet::appendOutput(Container &container, const QByteArray &data, const char *stream, bool flush)
{
    const int which = qstrcmp(stream, "stdout") == 0 ? 0 : 1;
    QByteArray &partial = container.partial[which];
    partial += data;
    QFile log(container.logPath(container.runs));
    if (!openOwnerOnly(log, QIODevice::Append)) {
        return;
    }
    const auto emitLine = [&](const QByteArray &line) {
        const QString ts = rfc3339Nano(QDateTime::currentDateTimeUtc());
        log.write(ts.toLatin1() + ' ' + stream + " F " + line + '\n');
        for (Container::Follower &f : container.followers) {
            if (!f.responder || f.remaining == 0) continue;
            QByteArray out = (f.timestamps ? ts.toLatin1() + ' ' : QByteArray()) + line + '\n';
            if (f.remaining > 0) {
                out.truncate(std::min<qint64>(out.size(), f.remaining));
                f.remaining -= out.size();
            }
            f.responder->write(out);
            if (f.remaining == 0) {
                f.responder->end();
            }
        }
    };
    qsizetype nl;
    while ((nl = partial.indexOf('\n')) >= 0) {
        emitLine(partial.left(nl));
        partial.remove(0, nl + 1);
    }
    if (flush && !partial.isEmpty()) {
        emitLine(partial);
        partial.clear();
    }
}

void Kubelet::serveLogs(const RequestInfo &info, const Http::Request &request, Http::Responder *responder)
{
    const ObjectPtr object = m_store->get(podType().storage, info.ns, info.name);
    if (!object) {
        ApiServer::respondStatus(responder, Status::notFound(QStringLiteral("pods"), info.name, QString(), QStringLiteral("pods")));
        return;
    }
    const QJsonObject spec = object->object.value(QStringLiteral("spec")).toObject();
    const auto bad = [&](const QString &message) { ApiServer::respondStatus(responder, Status::badRequest(message)); };
    LogOptions options;
    options.container = request.queryValue(QStringLiteral("container"));
    if (const QString problem = chooseContainer(spec, info.name, options.container); !problem.isEmpty()) {
        bad(problem);
        return;
    }
    if (const QString problem = readLogOptions(request, info.name, options); !problem.isEmpty()) {
        bad(problem);
        return;
    }
    if (spec.value(QStringLiteral("nodeName")).toString().isEmpty()) {
        bad(QStringLiteral("pod %1 does not have a host assigned").arg(info.name));
        return;
    }
    Pod *pod = podFor(info.ns, info.name);
    Container *c = pod ? pod->find(options.container) : nullptr;
    const QString quotedContainer = quoted(options.container);
    const QString quotedPod = quoted(info.name);
    if (!c || c->runs == 0) {
        const QString reason = c ? c->waitingReason : QStringLiteral("ContainerCreating");
        const QString why = reason == QLatin1String("ErrImagePull") ? QStringLiteral("image can't be pulled")
                          : reason == QLatin1String("ImagePullBackOff") ? QStringLiteral("trying and failing to pull image")
                                                                         : reason;
        bad(QStringLiteral("container %1 in pod %2 is waiting to start: %3").arg(quotedContainer, quotedPod, why));
        return;
    }
    int run = c->runs;
    if (options.previous) {
        // The last terminated instance: the latest run while a restart is pending, else the one before.
        const int last = c->restartPending ? c->runs : c->runs - 1;
        if (c->restarts == 0 || last < 1) {
            bad(QStringLiteral("previous terminated container %1 in pod %2 not found").arg(quotedContainer, quotedPod));
            return;
        }
        run = last;
    }
    QByteArray body = selectLines(c->logPath(run), options);
    qint64 remaining = options.limitBytes.value_or(-1);
    if (remaining > 0 && body.size() > remaining) {
        body.truncate(remaining);
    }
    if (remaining > 0) remaining -= body.size();
    const bool live = !options.previous && c->state == Container::State::Running && c->runs == run;
    if (!options.follow || !live || remaining == 0) {
        responder->respond(200, "text/plain", body);
        return;
    }
    responder->beginStream(200, "text/plain");
    responder->write(body);
    c->followers.append(Container::Follower{responder, options.timestamps, remaining});
}

} // namespace Starforge::Sandbox
