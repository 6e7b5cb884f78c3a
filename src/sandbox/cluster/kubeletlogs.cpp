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
#include <QPointer>

#include <functional>
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

// One CRI line ("<RFC 3339 nano> <stream> <F|P> <text>", no newline) in the reader's format
// (the text, with the timestamp in front when asked for, and a newline); nullopt when the
// options leave it out or it is not a CRI line.
std::optional<QByteArray> selectLine(const QByteArray &line, const LogOptions &options)
{
    const qsizetype s1 = line.indexOf(' ');
    const qsizetype s2 = s1 < 0 ? -1 : line.indexOf(' ', s1 + 1);
    if (s2 < 0) return std::nullopt;
    if (options.since.isValid()) {
        const QDateTime at = QDateTime::fromString(QString::fromLatin1(line.left(std::min<qsizetype>(s1, 23))) + u'Z', Qt::ISODateWithMs);
        if (at.isValid() && at < options.since) return std::nullopt;
    }
    const qsizetype s3 = line.indexOf(' ', s2 + 1);
    const QByteArray text = s3 < 0 ? QByteArray() : line.mid(s3 + 1);
    return (options.timestamps ? line.left(s1) + ' ' : QByteArray()) + text + '\n';
}

// Sends one run's log file to a pods/log reader as it reads it, a chunk at a time, and writes
// the next chunk only once the client has taken most of what was sent (Responder::drained): a
// log of any size costs the sandbox a few MiB, and a slow reader slows the sending down instead
// of piling the log up in the socket's buffer. At the end
// of the file it hands over to atEnd, which ends the answer or makes the reader a follower; both
// happen in one turn of the event loop with the kubelet's appends, so a follower misses no line.
class LogFileStreamer final : public QObject
{
public:
    // skipLines: selected lines to leave out first (tailLines); remaining: limitBytes left, -1 none.
    using AtEnd = std::function<void(Http::Responder *, qint64 remaining)>;

    LogFileStreamer(const QString &path, const LogOptions &options, qint64 skipLines, Http::Responder *responder, AtEnd atEnd)
        : QObject(responder)
        , m_file(path)
        , m_options(options)
        , m_skip(skipLines)
        , m_remaining(options.limitBytes.value_or(-1))
        , m_responder(responder)
        , m_atEnd(std::move(atEnd))
    {
        (void)m_file.open(QIODevice::ReadOnly);   // a run without a file has an empty log
        connect(responder, &Http::Responder::drained, this, &LogFileStreamer::pump);
    }

    void pump()
    {
        // About one socket buffer's worth waits for the client; more would only grow memory.
        while (!m_done && m_responder && !m_responder->isFinished() && m_responder->pendingBytes() < MaxPendingBytes) {
            QByteArray chunk;
            while (chunk.size() < ChunkBytes && m_remaining != 0 && m_file.isOpen() && !m_file.atEnd()) {
                QByteArray line = m_file.readLine();
                if (line.endsWith('\n')) line.chop(1);
                const std::optional<QByteArray> out = selectLine(line, m_options);
                if (!out) continue;
                if (m_skip > 0) {
                    --m_skip;
                    continue;
                }
                chunk += m_remaining >= 0 ? out->left(m_remaining) : *out;
                if (m_remaining >= 0) m_remaining = std::max<qint64>(0, m_remaining - out->size());
            }
            if (chunk.isEmpty()) {
                m_done = true;
                m_file.close();
                QPointer<Http::Responder> responder = m_responder;
                m_atEnd(responder, m_remaining);
                deleteLater();
                return;
            }
            m_responder->write(chunk);
        }
    }

    // The selected lines of path, counted without holding them (for tailLines).
    static qint64 countLines(const QString &path, const LogOptions &options)
    {
        QFile file(path);
        qint64 n = 0;
        if (!file.open(QIODevice::ReadOnly)) return 0;
        while (!file.atEnd()) {
            QByteArray line = file.readLine();
            if (line.endsWith('\n')) line.chop(1);
            n += selectLine(line, options) ? 1 : 0;
        }
        return n;
    }

private:
    static constexpr qint64 MaxPendingBytes = 1024 * 1024;
    static constexpr qsizetype ChunkBytes = 256 * 1024;

    QFile m_file;
    LogOptions m_options;
    qint64 m_skip;
    qint64 m_remaining;
    QPointer<Http::Responder> m_responder;
    AtEnd m_atEnd;
    bool m_done = false;
};

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
    const QString path = c->logPath(run);
    const qint64 skip = options.tailLines ? std::max<qint64>(0, LogFileStreamer::countLines(path, options) - *options.tailLines) : 0;
    // At the end of the file: a follow of the run still going goes on with the lines the
    // process writes next; anything else is done. The pod may have gone while the file was sent.
    const auto atEnd = [kubelet = QPointer<Kubelet>(this), ns = info.ns, podName = info.name, container = options.container, run,
                        options](Http::Responder *reader, qint64 remaining) {
        if (!reader) return;
        Pod *now = kubelet ? kubelet->podFor(ns, podName) : nullptr;
        Container *writer = now ? now->find(container) : nullptr;
        const bool live = writer && !options.previous && writer->state == Container::State::Running && writer->runs == run;
        if (!options.follow || !live || remaining == 0) {
            reader->end();
            return;
        }
        writer->followers.append(Container::Follower{reader, options.timestamps, remaining});
    };
    responder->beginStream(200, "text/plain");
    if (responder->isFinished()) return;   // HEAD: the head is the whole answer
    (new LogFileStreamer(path, options, skip, responder, atEnd))->pump();
}

} // namespace Starforge::Sandbox
