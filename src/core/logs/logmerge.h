#pragma once

// The merged view of a job's logs (docs/logs.md, "The merged view"): the lines of every pod,
// each read with timestamps=true, put in the order they were written and tagged with their
// source ("[head] …", "[worker gpu-0] …"). Pure: lines go in with the time they arrived, merged
// lines come out; the caller spools them to a file that the line index reads.
//
// Ordering rules:
//  - By the kubelet's timestamp (RFC 3339 with up to nine fraction digits, "…Z" or an offset).
//    Equal times keep the sources' fixed order (the order given to the constructor), and a
//    source's own lines keep the order they arrived in.
//  - A source's lines are taken to be in order already (one container's log is): a line older
//    than the one before it of the same source is kept after it.
//  - A line without a timestamp (the rest of a line cut for length, or a log that did not get
//    them) goes right after the line before it of its source; before any, first.
//  - CR of a CRLF line ending is dropped.
//
// Why a hold-back window: a followed log has no end, so a line can only go out once no source
// can still send an earlier one. Each source's timestamps only grow, so a line is safe once
// every other source that is still open has sent a later line (or one at the same time, if
// that source comes after it in the fixed order); that alone would let one quiet
// pod (a head that prints nothing for an hour) hold every other pod's lines back for ever. So a
// line also goes out once it has waited holdBackMs since it arrived. A line that arrives later
// than that behind lines already shown (a stream that was reconnecting) is shown at once, after
// them: out of place, never lost.

#include <QByteArray>
#include <QByteArrayView>
#include <QList>

#include <deque>
#include <limits>
#include <optional>
#include <vector>

namespace Starforge::Logs {

// Nanoseconds since the epoch of "2026-12-03T10:15:02.123456789Z" (or "+02:00" instead of "Z");
// nullopt when the text is not such a time.
std::optional<qint64> parseRfc3339Nanos(QByteArrayView text);

class LogMerger final
{
public:
    // One tag per source, in the fixed order that breaks ties.
    LogMerger(QList<QByteArray> tags, qint64 holdBackMs);

    qsizetype sourceCount() const { return qsizetype(m_sources.size()); }
    qint64 holdBackMs() const { return m_holdBackMs; }

    // A line as pods/log sends it with timestamps=true ("<time> <text>", maybe ending in "\r"),
    // without its '\n'. A line whose first word is not a time has none.
    void addRaw(int source, QByteArrayView line, qint64 nowMs);
    // A line whose time was split off already (LogStream's LogLine); an empty timestamp: none.
    void add(int source, QByteArrayView timestamp, QByteArrayView text, qint64 nowMs);
    // The source has ended: it holds no line back any more.
    void finish(int source);

    // The lines that may go out at nowMs, in order, each "[tag] text\n"; *lines counts them.
    QByteArray take(qint64 nowMs, qint64 *lines = nullptr);
    // Every line still held, in order (all sources ended, or the view closes).
    QByteArray takeAll(qint64 *lines = nullptr);
    qint64 pendingLines() const { return m_pending; }

private:
    struct Pending
    {
        qint64 time;
        qint64 arrivedMs;
        QByteArray text;
    };
    struct Source
    {
        QByteArray prefix; // "[tag] "
        std::deque<Pending> queue; // in arrival order, times never decreasing
        qint64 lastTime = std::numeric_limits<qint64>::min();
        bool timed = false; // a line with a time has arrived
        bool finished = false;
    };

    // Whether no open source can still send a line that sorts before (time, source).
    bool safe(size_t source, qint64 time) const;
    // Lines in order while the next one is at or before upTo, safe, or all are wanted.
    QByteArray release(std::optional<qint64> upTo, bool all, qint64 *lines);

    std::vector<Source> m_sources;
    qint64 m_holdBackMs;
    qint64 m_pending = 0;
};

} // namespace Starforge::Logs
