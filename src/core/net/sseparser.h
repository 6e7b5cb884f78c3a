#pragma once

// An incremental Server-Sent Events parser (the WHATWG event-stream format): bytes go in as
// they arrive, complete events come out. Lines end in LF, CR or CRLF (a CR at the end of one
// chunk and an LF at the start of the next are one line end); "data:" lines join with "\n";
// lines starting with ":" are comments; a blank line dispatches; an event with no data is
// not dispatched; "id" and "retry" are kept. The playground reads vLLM's chat stream with it.

#include <QByteArray>
#include <QList>
#include <QString>

#include <optional>

namespace Starforge::Net {

struct SseEvent
{
    QString type = QStringLiteral("message");
    QString data;
    QString id;                  // the last event ID seen, as the spec keeps it
};

class SseParser
{
public:
    static constexpr qsizetype DefaultMaxEventBytes = 16 * 1024 * 1024;

    // A line, or an event's data, longer than maxEventBytes stops the parser (failed()): a
    // stream that never ends a line must not grow without bound.
    explicit SseParser(qsizetype maxEventBytes = DefaultMaxEventBytes) : m_maxEventBytes(maxEventBytes) {}

    // Returns the events the new bytes complete, in order; nothing once failed.
    QList<SseEvent> feed(const QByteArray &bytes);
    std::optional<int> retryMs() const { return m_retry; }
    qsizetype bufferedBytes() const { return m_line.size(); }
    bool failed() const { return m_failed; }

private:
    void line(const QByteArray &line, QList<SseEvent> &out);

    QByteArray m_line;
    bool m_lastWasCr = false;
    bool m_firstLine = true;
    QString m_type;
    QString m_data;
    bool m_hasData = false;
    QString m_id;
    std::optional<int> m_retry;
    qsizetype m_maxEventBytes;
    bool m_failed = false;
};

} // namespace Starforge::Net
