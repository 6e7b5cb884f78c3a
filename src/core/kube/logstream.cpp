#include "core/kube/logstream.h"

#include "core/kube/kubeclient.h"
#include "core/kube/resourcekind.h"
#include "core/kube/resources.h"

#include <QDateTime>

#include <QNetworkReply>

namespace Starforge::Kube {

LogStream::LogStream(KubeClient *client, QString ns, QString pod, LogStreamOptions options, QObject *parent)
    : QObject(parent)
    , m_client(client)
    , m_ns(std::move(ns))
    , m_pod(std::move(pod))
    , m_options(std::move(options))
    , m_backoff(m_options.backoff)
{
    m_retry.setSingleShot(true);
    connect(&m_retry, &QTimer::timeout, this, &LogStream::connectStream);
}

LogStream::~LogStream()
{
    stop();
}

void LogStream::start()
{
    stop();
    m_running = true;
    m_lastTimestamp.clear();
    m_deliveredAtLast = 0;
    m_reconnects = 0;
    connectStream();
}

void LogStream::stop()
{
    ++m_generation;
    m_running = false;
    m_retry.stop();
    if (m_reply) {
        m_reply->disconnect(this);
        m_reply->abort();
        m_reply->deleteLater();
    }
    m_reply = nullptr;
    m_partial.clear();
}

namespace {

// "2026-12-03T10:15:02.123456789Z" as (seconds since the epoch, nanoseconds). The kubelet
// trims trailing zeros of the fraction, so the text alone does not order.
std::optional<std::pair<qint64, int>> parseNanos(const QByteArray &text)
{
    if (text.size() < 20 || !text.endsWith('Z')) {
        return std::nullopt;
    }
    QDateTime seconds = QDateTime::fromString(QString::fromLatin1(text.left(19)), Qt::ISODate);
    if (!seconds.isValid()) {
        return std::nullopt;
    }
    seconds.setTimeSpec(Qt::UTC);
    int nanos = 0;
    if (text.size() > 20 && text.at(19) == '.') {
        QByteArray digits = text.mid(20, text.size() - 21);
        if (digits.isEmpty() || digits.size() > 9) {
            return std::nullopt;
        }
        for (char c : std::as_const(digits)) {
            if (c < '0' || c > '9') {
                return std::nullopt;
            }
        }
        nanos = digits.leftJustified(9, '0').toInt();
    } else if (text.size() != 20) {
        return std::nullopt;
    }
    return std::make_pair(seconds.toSecsSinceEpoch(), nanos);
}

} // namespace

bool LogStream::isNew(const QByteArray &timestamp, const QByteArray &lastTimestamp, int &skipAtLast)
{
    if (lastTimestamp.isEmpty()) {
        return true;
    }
    const auto at = parseNanos(timestamp);
    const auto last = parseNanos(lastTimestamp);
    if (!at || !last) {
        return true;   // cannot tell: better shown twice than lost
    }
    if (*at != *last) {
        return *at > *last;
    }
    if (skipAtLast > 0) {
        --skipAtLast;
        return false;
    }
    return true;
}

void LogStream::connectStream()
{
    if (!m_running) {
        return;
    }
    ApiRequest request;
    request.path = ResourceKind::pods().path(m_ns, m_pod, QStringLiteral("log"));
    request.query.addQueryItem(QStringLiteral("timestamps"), QStringLiteral("true"));
    if (m_options.previous) {
        request.query.addQueryItem(QStringLiteral("previous"), QStringLiteral("true"));
    } else if (m_options.follow) {
        request.query.addQueryItem(QStringLiteral("follow"), QStringLiteral("true"));
    }
    if (!m_options.container.isEmpty()) {
        request.query.addQueryItem(QStringLiteral("container"), m_options.container);
    }
    if (m_lastTimestamp.isEmpty()) {
        if (m_options.tailLines >= 0) {
            request.query.addQueryItem(QStringLiteral("tailLines"), QString::number(m_options.tailLines));
        }
    } else {
        // sinceTime has a precision of one second; the lines of that second we already have
        // are skipped by isNew().
        if (const auto last = parseNanos(m_lastTimestamp)) {
            request.query.addQueryItem(QStringLiteral("sinceTime"),
                                       QDateTime::fromSecsSinceEpoch(last->first, Qt::UTC).toString(Qt::ISODate));
        }
    }
    m_skipAtLast = m_deliveredAtLast;
    m_partial.clear();
    m_inCutLine = false;          // a new stream starts at a line
    m_droppingCutLine = false;
    m_reply = m_client->openStream(request);
    connect(m_reply, &QNetworkReply::readyRead, this, &LogStream::onData);
    connect(m_reply, &QNetworkReply::finished, this, &LogStream::onStreamFinished);
}

void LogStream::deliver(QByteArray piece, bool endsLine, QList<LogLine> &out)
{
    if (endsLine && piece.endsWith('\r')) {
        piece.chop(1);
    }
    if (m_inCutLine) {
        // The rest of a line cut for length: no timestamp of its own, and it shares the fate of
        // the line's first piece.
        if (!m_droppingCutLine) {
            out.append(LogLine{{}, std::move(piece)});
        }
        m_inCutLine = !endsLine;
        m_droppingCutLine = m_droppingCutLine && !endsLine;
        return;
    }
    m_inCutLine = !endsLine;
    const qsizetype space = piece.indexOf(' ');
    LogLine entry;
    if (space > 0) {
        entry.timestamp = piece.left(space);
        entry.text = piece.mid(space + 1);
    } else {
        entry.text = piece;
    }
    if (!entry.timestamp.isEmpty() && !isNew(entry.timestamp, m_lastTimestamp, m_skipAtLast)) {
        m_droppingCutLine = m_inCutLine;
        return;
    }
    if (!entry.timestamp.isEmpty()) {
        if (entry.timestamp == m_lastTimestamp) {
            ++m_deliveredAtLast;
        } else {
            m_lastTimestamp = entry.timestamp;
            m_deliveredAtLast = 1;
        }
    }
    out.append(std::move(entry));
}

void LogStream::onData()
{
    QNetworkReply *reply = m_reply;
    if (!reply || Net::httpStatus(reply) != 200) {
        return;
    }
    m_partial += reply->readAll();
    QList<LogLine> out;
    qsizetype start = 0;
    for (;;) {
        const qsizetype newline = m_partial.indexOf('\n', start);
        const qsizetype end = newline < 0 ? m_partial.size() : newline;
        // A runaway line goes out in pieces of at most maxLineBytes rather than held whole. Its
        // timestamp stays with the first piece, so resuming cannot mistake the rest for new lines.
        while (end - start > m_options.maxLineBytes) {
            deliver(m_partial.mid(start, m_options.maxLineBytes), false, out);
            start += m_options.maxLineBytes;
        }
        if (newline < 0) {
            break;
        }
        deliver(m_partial.mid(start, newline - start), true, out);
        start = newline + 1;
    }
    m_partial.remove(0, start);
    if (!out.isEmpty()) {
        m_backoff.reset();
        m_lastError.reset();
        Q_EMIT lines(out);
    }
}

void LogStream::onStreamFinished()
{
    QNetworkReply *reply = m_reply;
    if (!reply) {
        return;
    }
    onData();
    reply->disconnect(this);
    reply->deleteLater();
    m_reply = nullptr;
    const QString what = tr("follow the log of pod %1").arg(m_pod);
    if (Net::httpStatus(reply) == 200 && reply->error() == QNetworkReply::NoError) {
        if (!m_partial.isEmpty()) {
            QList<LogLine> out;
            deliver(m_partial, true, out);
            m_partial.clear();
            if (!out.isEmpty()) {
                Q_EMIT lines(out);
            }
        }
        if (!m_options.follow || m_options.previous) {
            m_running = false;
            Q_EMIT finished();
            return;
        }
        checkPod(false);
        return;
    }
    const ApiResult result = KubeClient::collect(reply, what);
    const ApiError error = result.error ? *result.error
                                        : ApiError::transport(tr("The log stream of pod %1 broke: %2").arg(m_pod, reply->errorString()));
    if (error.kind == ApiError::Kind::NotFound || error.kind == ApiError::Kind::Forbidden || error.kind == ApiError::Kind::Unauthorized
        || (error.kind == ApiError::Kind::Invalid && m_options.previous)) {
        // A previous container that is not there (400) will not appear by waiting either.
        // Nothing to wait for: the pod is gone or we may not read it.
        m_lastError = error;
        m_running = false;
        Q_EMIT interrupted(error);
        Q_EMIT finished();
        return;
    }
    if (error.kind == ApiError::Kind::Invalid) {
        // 400 "waiting to start" and the like: the pod decides whether there is more to come.
        m_lastError = error;
        checkPod(true);
        return;
    }
    retry(error);
}

void LogStream::checkPod(bool afterError)
{
    ApiRequest request;
    request.path = ResourceKind::pods().path(m_ns, m_pod);
    request.what = tr("read pod %1").arg(m_pod);
    const quint64 generation = m_generation;
    m_client->send(request, this, [this, generation, afterError](const ApiResult &result) {
        if (generation != m_generation) {
            return;
        }
        if (!result.ok()) {
            if (result.error->kind == ApiError::Kind::NotFound) {
                m_running = false;
                Q_EMIT finished();
            } else {
                retry(*result.error);
            }
            return;
        }
        const Pod pod = Pod::fromJson(result.json());
        const ContainerState *container = nullptr;
        for (const ContainerState &c : pod.containers) {
            if (m_options.container.isEmpty() || c.name == m_options.container) {
                container = &c;
                break;
            }
        }
        const bool podDone = pod.phase == QLatin1String("Succeeded") || pod.phase == QLatin1String("Failed");
        if (podDone || (container && container->state == QLatin1String("terminated") && pod.phase != QLatin1String("Running"))) {
            m_running = false;
            Q_EMIT finished();
            return;
        }
        if (container && container->state == QLatin1String("running") && !afterError) {
            ++m_reconnects;
            connectStream();   // the stream ended under a running container: resume at once
            return;
        }
        retry(m_lastError ? *m_lastError : ApiError::transport(tr("The container of pod %1 is not running yet.").arg(m_pod)));
    });
}

void LogStream::retry(const ApiError &error)
{
    m_lastError = error;
    ++m_reconnects;
    Q_EMIT interrupted(error);
    m_retry.start(m_backoff.next());
}

} // namespace Starforge::Kube
