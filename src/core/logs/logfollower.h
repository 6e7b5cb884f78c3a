#pragma once

// Follows a job's logs into a spool file, for the Logs dock and bench_logfollow
// (docs/logs.md): the file is what the line index and LogLinesModel read, so a followed log
// costs memory for its index only.
//  - One source: a container's log (or its previous container's), each line as written. A
//    dropped stream resumes without losing or repeating a line (Kube::LogStream).
//  - Several sources: the merged view. Each pod's log is followed with timestamps, the lines
//    merged by time with LogMerger (a k-way merge with a hold-back window; logmerge.h says why)
//    and written as "[tag] text" once the merge lets them go, every MergeTickMs.
// Writes are appended as they come (one write per batch the network delivers) and announced
// with appended(); the reader decides how often to look (the dock does every 100 ms).
//
// The streams go through clients of their own (the given client's configuration, at most
// StreamsPerClient streams each), not the given one: over HTTP/1.1 (the sandbox, or a proxy
// between) Qt opens at most six connections per host and client, and the session's client keeps
// several of them for its watches, so a merged view's streams would otherwise wait in line
// behind them for ever. Over HTTP/2 they would share one connection either way.

#include "core/logs/logmerge.h"
#include "core/net/backoff.h"

#include <QElapsedTimer>
#include <QFileDevice>
#include <QList>
#include <QObject>
#include <QString>
#include <QTimer>

#include <memory>
#include <vector>

namespace Starforge::Kube {
class KubeClient;
class LogStream;
struct LogLine;
} // namespace Starforge::Kube

namespace Starforge::Logs {

class LogFollower final : public QObject
{
    Q_OBJECT
public:
    struct Source
    {
        QString pod;
        QString container; // empty: the pod's only one
        QByteArray tag; // in the merged view: "head", "worker gpu-0", "submitter"
        bool previous = false; // the previous container's log (read once, not followed)
    };
    static constexpr int HoldBackMs = 1000; // the merge's window (logmerge.h)
    static constexpr int MergeTickMs = 100;
    static constexpr int StreamsPerClient = 4; // of Qt's six per host, room for reconnects

    // spool: open for writing, owned by the caller, outliving the follower.
    LogFollower(Kube::KubeClient *client, QString ns, QList<Source> sources, QFileDevice *spool, QObject *parent = nullptr);
    ~LogFollower() override;

    // Back-off of the streams' reconnects (tests shorten it).
    void setBackoff(const Net::Backoff::Params &params) { m_backoff = params; }

    void start();
    void stop();
    bool isMerged() const { return m_sources.size() > 1; }
    qint64 linesWritten() const { return m_written; }
    int reconnects() const;

Q_SIGNALS:
    // The spool grew.
    void appended();
    // A stream broke and is being resumed; the sentence says why.
    void interrupted(const QString &message);
    // Every stream has ended (the containers finished) and everything is written.
    void finished();
    // A stream ended without its log (the pod is gone, no previous container): why.
    void failed(const QString &message);

private:
    void onLines(int source, const QList<Kube::LogLine> &lines);
    void onFinished(int source);
    void drainMerge(bool all);

    Kube::KubeClient *m_client;
    QString m_ns;
    QList<Source> m_sources;
    QFileDevice *m_spool;
    Net::Backoff::Params m_backoff;
    std::vector<std::unique_ptr<Kube::KubeClient>> m_clients; // the streams' (before them: destroyed after)
    std::vector<std::unique_ptr<Kube::LogStream>> m_streams;
    std::unique_ptr<LogMerger> m_merger;
    QTimer m_mergeTick;
    QElapsedTimer m_clock;
    int m_open = 0; // streams not finished
    qint64 m_written = 0;
};

} // namespace Starforge::Logs
