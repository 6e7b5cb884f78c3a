#include "core/logs/logfollower.h"

#include "core/kube/kubeclient.h"
#include "core/kube/logstream.h"

namespace Starforge::Logs {

LogFollower::LogFollower(Kube::KubeClient *client, QString ns, QList<Source> sources, QFileDevice *spool, QObject *parent)
    : QObject(parent)
    , m_client(client)
    , m_ns(std::move(ns))
    , m_sources(std::move(sources))
    , m_spool(spool)
{
    m_mergeTick.setInterval(MergeTickMs);
    connect(&m_mergeTick, &QTimer::timeout, this, [this] { drainMerge(false); });
}

LogFollower::~LogFollower()
{
    stop();
}

int LogFollower::reconnects() const
{
    int n = 0;
    for (const auto &stream : m_streams)
        n += stream->reconnects();
    return n;
}

void LogFollower::start()
{
    stop();
    m_clock.start();
    if (isMerged()) {
        QList<QByteArray> tags;
        for (const Source &s : std::as_const(m_sources))
            tags << s.tag;
        m_merger = std::make_unique<LogMerger>(tags, HoldBackMs);
        m_mergeTick.start();
    }
    m_open = int(m_sources.size());
    for (qsizetype i = 0; i < m_sources.size(); ++i) {
        const Source &source = m_sources.at(i);
        Kube::LogStreamOptions options;
        options.container = source.container;
        options.previous = source.previous;
        options.follow = !source.previous;
        options.backoff = m_backoff;
        if (i % StreamsPerClient == 0)
            m_clients.push_back(std::make_unique<Kube::KubeClient>(m_client->config()));
        auto stream = std::make_unique<Kube::LogStream>(m_clients.back().get(), m_ns, source.pod, options);
        const int index = int(i);
        connect(stream.get(), &Kube::LogStream::lines, this, [this, index](const QList<Kube::LogLine> &lines) { onLines(index, lines); });
        connect(stream.get(), &Kube::LogStream::finished, this, [this, index] { onFinished(index); });
        connect(stream.get(), &Kube::LogStream::interrupted, this, [this, index](const Kube::ApiError &error) {
            const Kube::LogStream *s = m_streams.at(size_t(index)).get();
            if (!s->isRunning())
                Q_EMIT failed(error.message); // gone for good: finished() follows
            else
                Q_EMIT interrupted(error.message);
        });
        m_streams.push_back(std::move(stream));
    }
    for (const auto &stream : m_streams)
        stream->start();
}

void LogFollower::stop()
{
    for (const auto &stream : m_streams)
        stream->stop();
    m_streams.clear();
    m_clients.clear();
    m_mergeTick.stop();
    m_merger.reset();
}

void LogFollower::onLines(int source, const QList<Kube::LogLine> &lines)
{
    if (m_merger) {
        const qint64 now = m_clock.elapsed();
        for (const Kube::LogLine &line : lines)
            m_merger->add(source, line.timestamp, line.text, now);
        return; // the next tick writes what the merge lets go
    }
    // One source: straight to the file. A piece of a line cut for length is a line of its own.
    QByteArray out;
    for (const Kube::LogLine &line : lines) {
        out += line.text;
        out += '\n';
    }
    m_spool->write(out);
    m_spool->flush(); // the index maps the file: what is written must be in it
    m_written += lines.size();
    Q_EMIT appended();
}

void LogFollower::drainMerge(bool all)
{
    if (!m_merger || m_merger->pendingLines() == 0)
        return;
    qint64 count = 0;
    const QByteArray out = all ? m_merger->takeAll(&count) : m_merger->take(m_clock.elapsed(), &count);
    if (count == 0)
        return;
    m_spool->write(out);
    m_spool->flush();
    m_written += count;
    Q_EMIT appended();
}

void LogFollower::onFinished(int source)
{
    if (m_merger)
        m_merger->finish(source);
    if (--m_open > 0)
        return;
    drainMerge(true);
    m_mergeTick.stop();
    Q_EMIT finished();
}

} // namespace Starforge::Logs
