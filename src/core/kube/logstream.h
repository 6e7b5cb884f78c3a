#pragma once

// Follows one container's log (pods/log?follow=true) and survives dropped connections without
// losing or repeating a line. Lines are requested with timestamps; after a drop the stream
// resumes with sinceTime at the last line's second (the API's precision) and skips what it has
// already delivered: everything older than the last timestamp, and as many lines at exactly
// that timestamp as were delivered. A clean end is checked against the pod: a container that
// is still running is followed again; a finished one ends the stream.

#include "core/kube/apierror.h"
#include "core/net/backoff.h"

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QTimer>

class QNetworkReply;

namespace Starforge::Kube {

class KubeClient;

struct LogLine
{
    QByteArray timestamp;   // RFC 3339 with nanoseconds, as the kubelet wrote it
    QByteArray text;        // without the timestamp and the newline
    // A line longer than LogStreamOptions::maxLineBytes arrives in pieces; the pieces after the
    // first have no timestamp.
};

struct LogStreamOptions
{
    QString container;       // empty: the pod's only container
    int tailLines = -1;      // the first request only; -1: all
    bool follow = true;
    // The container's previous instance (previous=true): the log of the run before the last
    // restart. Never followed; a 400 (no restart yet) ends the stream with that error.
    bool previous = false;
    Net::Backoff::Params backoff;
    qsizetype maxLineBytes = 1024 * 1024;   // longer lines are split, so memory stays bounded
};

class LogStream final : public QObject
{
    Q_OBJECT
public:
    LogStream(KubeClient *client, QString ns, QString pod, LogStreamOptions options = {}, QObject *parent = nullptr);
    ~LogStream() override;

    void start();
    void stop();
    bool isRunning() const { return m_running; }
    int reconnects() const { return m_reconnects; }
    std::optional<ApiError> lastError() const { return m_lastError; }

    // The resume rule, public for tests: whether a line at timestamp is new given the last
    // delivered timestamp; skipAtLast counts down the lines at exactly that time still to skip.
    static bool isNew(const QByteArray &timestamp, const QByteArray &lastTimestamp, int &skipAtLast);

Q_SIGNALS:
    void lines(const QList<Starforge::Kube::LogLine> &lines);
    // The container finished (or follow was off) and everything was delivered.
    void finished();
    // A retry is scheduled; lastError() says why.
    void interrupted(const Starforge::Kube::ApiError &error);

private:
    void connectStream();
    void onData();
    void onStreamFinished();
    // After a clean end (or a 400 when afterError): the pod says whether more is to come.
    void checkPod(bool afterError);
    void retry(const ApiError &error);
    // endsLine: the piece ends at a newline (false: a line cut at maxLineBytes, more to come).
    void deliver(QByteArray piece, bool endsLine, QList<LogLine> &out);

    KubeClient *m_client;
    QString m_ns;
    QString m_pod;
    LogStreamOptions m_options;
    Net::Backoff m_backoff;
    bool m_running = false;
    int m_reconnects = 0;
    quint64 m_generation = 0;

    QPointer<QNetworkReply> m_reply;
    QByteArray m_partial;
    QByteArray m_lastTimestamp;   // of the last delivered line
    int m_deliveredAtLast = 0;    // lines delivered with exactly m_lastTimestamp
    int m_skipAtLast = 0;         // on a resumed stream: lines at m_lastTimestamp still to skip
    bool m_inCutLine = false;     // the last piece delivered was a line cut for length
    bool m_droppingCutLine = false; // ... and it was already delivered before, so is its rest
    std::optional<ApiError> m_lastError;
    QTimer m_retry;
};

} // namespace Starforge::Kube
