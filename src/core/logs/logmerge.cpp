#include "core/logs/logmerge.h"

#include <algorithm>

namespace Starforge::Logs {

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's civil-days algorithm,
// written out here from its description).
qint64 daysFromCivil(qint64 y, unsigned m, unsigned d)
{
    y -= m <= 2 ? 1 : 0;
    const qint64 era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = unsigned(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + qint64(doe) - 719468;
}

bool digits(QByteArrayView text, qsizetype at, qsizetype count, int &out)
{
    out = 0;
    if (at + count > text.size())
        return false;
    for (qsizetype i = at; i < at + count; ++i) {
        const char c = text.at(i);
        if (c < '0' || c > '9')
            return false;
        out = out * 10 + (c - '0');
    }
    return true;
}

} // namespace

std::optional<qint64> parseRfc3339Nanos(QByteArrayView t)
{
    // YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)
    int year, month, day, hour, minute, second;
    if (t.size() < 20 || !digits(t, 0, 4, year) || t.at(4) != '-' || !digits(t, 5, 2, month) || t.at(7) != '-' || !digits(t, 8, 2, day)
        || (t.at(10) != 'T' && t.at(10) != 't') || !digits(t, 11, 2, hour) || t.at(13) != ':' || !digits(t, 14, 2, minute)
        || t.at(16) != ':' || !digits(t, 17, 2, second))
        return std::nullopt;
    if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
        return std::nullopt;
    qsizetype at = 19;
    qint64 nanos = 0;
    if (at < t.size() && t.at(at) == '.') {
        ++at;
        int count = 0;
        while (at < t.size() && t.at(at) >= '0' && t.at(at) <= '9') {
            if (count < 9) {
                nanos = nanos * 10 + (t.at(at) - '0');
                ++count;
            }
            ++at;
        }
        if (count == 0)
            return std::nullopt;
        for (; count < 9; ++count)
            nanos *= 10;
    }
    qint64 offsetSeconds = 0;
    if (at < t.size() && (t.at(at) == 'Z' || t.at(at) == 'z')) {
        ++at;
    } else if (at < t.size() && (t.at(at) == '+' || t.at(at) == '-')) {
        int oh, om;
        if (!digits(t, at + 1, 2, oh) || at + 3 >= t.size() || t.at(at + 3) != ':' || !digits(t, at + 4, 2, om))
            return std::nullopt;
        offsetSeconds = (t.at(at) == '+' ? 1 : -1) * (qint64(oh) * 3600 + qint64(om) * 60);
        at += 6;
    } else {
        return std::nullopt;
    }
    if (at != t.size())
        return std::nullopt;
    const qint64 seconds = daysFromCivil(year, unsigned(month), unsigned(day)) * 86400 + hour * 3600 + minute * 60 + second - offsetSeconds;
    return seconds * 1000000000 + nanos;
}

LogMerger::LogMerger(QList<QByteArray> tags, qint64 holdBackMs)
    : m_holdBackMs(holdBackMs)
{
    m_sources.resize(size_t(tags.size()));
    for (qsizetype i = 0; i < tags.size(); ++i)
        m_sources[size_t(i)].prefix = '[' + tags.at(i) + "] ";
}

void LogMerger::addRaw(int source, QByteArrayView line, qint64 nowMs)
{
    const qsizetype space = line.indexOf(' ');
    if (space > 0 && parseRfc3339Nanos(line.first(space)))
        add(source, line.first(space), line.sliced(space + 1), nowMs);
    else
        add(source, {}, line, nowMs);
}

void LogMerger::add(int source, QByteArrayView timestamp, QByteArrayView text, qint64 nowMs)
{
    if (source < 0 || size_t(source) >= m_sources.size())
        return;
    Source &s = m_sources[size_t(source)];
    if (text.endsWith('\r'))
        text.chop(1);
    qint64 time = s.lastTime; // no time: right after the line before it
    if (const auto parsed = timestamp.isEmpty() ? std::nullopt : parseRfc3339Nanos(timestamp)) {
        time = std::max(*parsed, s.lastTime); // never before a line of its own source
        s.lastTime = time;
        s.timed = true;
    }
    QByteArray out;
    out.reserve(s.prefix.size() + text.size() + 1);
    out.append(s.prefix).append(text).append('\n');
    s.queue.push_back(Pending { time, nowMs, std::move(out) });
    ++m_pending;
}

void LogMerger::finish(int source)
{
    if (source >= 0 && size_t(source) < m_sources.size())
        m_sources[size_t(source)].finished = true;
}

bool LogMerger::safe(size_t source, qint64 time) const
{
    // No open source can still send a line that sorts before this one: each has sent a later
    // line, or a line at the same time and comes after this source in the fixed order.
    for (size_t j = 0; j < m_sources.size(); ++j) {
        const Source &other = m_sources[j];
        if (j == source || other.finished)
            continue;
        if (!other.timed || other.lastTime < time || (other.lastTime == time && j < source))
            return false;
    }
    return true;
}

QByteArray LogMerger::take(qint64 nowMs, qint64 *lines)
{
    // Waited long enough: the newest time among lines that arrived holdBackMs ago or earlier
    // (they are a prefix of each source's queue, whose times do not decrease).
    std::optional<qint64> waited;
    const qint64 cutoff = nowMs - m_holdBackMs;
    for (const Source &s : m_sources) {
        for (const Pending &p : s.queue) {
            if (p.arrivedMs > cutoff)
                break;
            waited = std::max(waited.value_or(p.time), p.time);
        }
    }
    return release(waited, false, lines);
}

QByteArray LogMerger::takeAll(qint64 *lines)
{
    return release(std::nullopt, true, lines);
}

QByteArray LogMerger::release(std::optional<qint64> upTo, bool all, qint64 *lines)
{
    QByteArray out;
    qint64 count = 0;
    for (;;) {
        // The smallest (time, source) among the queues' fronts: k is a handful of pods.
        size_t best = m_sources.size();
        for (size_t i = 0; i < m_sources.size(); ++i) {
            const Source &s = m_sources[i];
            if (!s.queue.empty() && (best == m_sources.size() || s.queue.front().time < m_sources[best].queue.front().time))
                best = i;
        }
        if (best == m_sources.size())
            break;
        Source &s = m_sources[best];
        const qint64 time = s.queue.front().time;
        if (!all && !(upTo && time <= *upTo) && !safe(best, time))
            break;
        out += s.queue.front().text;
        s.queue.pop_front();
        --m_pending;
        ++count;
    }
    if (lines)
        *lines = count;
    return out;
}

} // namespace Starforge::Logs
