#include "core/net/sseparser.h"

namespace Starforge::Net {

QList<SseEvent> SseParser::feed(const QByteArray &bytes)
{
    QList<SseEvent> out;
    if (m_failed) {
        return out;
    }
    for (const char c : bytes) {
        if (c == '\n' && m_lastWasCr) {
            m_lastWasCr = false; // the LF of a CRLF split across chunks
            continue;
        }
        m_lastWasCr = c == '\r';
        if (c == '\r' || c == '\n') {
            line(m_line, out);
            m_line.clear();
            if (m_failed) {
                return out;
            }
            continue;
        }
        m_line += c;
        if (m_line.size() > m_maxEventBytes) {
            m_failed = true;
            m_line.clear();
            return out;
        }
    }
    return out;
}

void SseParser::line(const QByteArray &raw, QList<SseEvent> &out)
{
    QByteArray text = raw;
    if (m_firstLine) {
        m_firstLine = false;
        if (text.startsWith("\xEF\xBB\xBF")) text.remove(0, 3); // a leading BOM is ignored
    }
    if (text.isEmpty()) {
        if (m_hasData) {
            SseEvent event;
            event.type = m_type.isEmpty() ? QStringLiteral("message") : m_type;
            event.data = m_data;
            event.id = m_id;
            out << event;
        }
        m_type.clear();
        m_data.clear();
        m_hasData = false;
        return;
    }
    if (text.startsWith(':')) {
        return; // a comment (keep-alive)
    }
    const qsizetype colon = text.indexOf(':');
    const QByteArray field = colon < 0 ? text : text.left(colon);
    QByteArray value = colon < 0 ? QByteArray() : text.mid(colon + 1);
    if (value.startsWith(' ')) value.remove(0, 1);
    if (field == "data") {
        if (m_hasData) m_data += u'\n';
        m_data += QString::fromUtf8(value);
        m_hasData = true;
        if (m_data.size() > m_maxEventBytes) {
            m_failed = true;
            m_data.clear();
        }
    } else if (field == "event") {
        m_type = QString::fromUtf8(value);
    } else if (field == "id") {
        if (!value.contains('\0')) m_id = QString::fromUtf8(value);
    } else if (field == "retry") {
        bool ok = false;
        const int ms = value.toInt(&ok);
        if (ok && ms >= 0) m_retry = ms;
    }
}

} // namespace Starforge::Net
