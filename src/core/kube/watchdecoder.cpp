#include "core/kube/watchdecoder.h"

#include <QCoreApplication>
#include <QJsonDocument>

namespace Starforge::Kube {

WatchDecoder::WatchDecoder(qsizetype maxLineBytes)
    : m_maxLineBytes(maxLineBytes)
{
}

bool WatchDecoder::decodeLine(const QByteArray &line, WatchEvent *event, QString *problem)
{
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(line, &error);
    if (error.error != QJsonParseError::NoError || !document.isObject()) {
        *problem = QCoreApplication::translate("Kube", "a watch event is not a JSON object (%1 at byte %2)")
                       .arg(error.errorString()).arg(error.offset);
        return false;
    }
    const QJsonObject root = document.object();
    const QString type = root.value(QLatin1String("type")).toString();
    if (type == QLatin1String("ADDED")) {
        event->type = WatchEvent::Type::Added;
    } else if (type == QLatin1String("MODIFIED")) {
        event->type = WatchEvent::Type::Modified;
    } else if (type == QLatin1String("DELETED")) {
        event->type = WatchEvent::Type::Deleted;
    } else if (type == QLatin1String("BOOKMARK")) {
        event->type = WatchEvent::Type::Bookmark;
    } else if (type == QLatin1String("ERROR")) {
        event->type = WatchEvent::Type::Error;
    } else {
        *problem = QCoreApplication::translate("Kube", "a watch event has the unknown type \"%1\"").arg(type.left(40));
        return false;
    }
    const QJsonValue object = root.value(QLatin1String("object"));
    if (!object.isObject()) {
        *problem = QCoreApplication::translate("Kube", "a %1 watch event carries no object").arg(type);
        return false;
    }
    event->object = object.toObject();
    return true;
}

QList<WatchEvent> WatchDecoder::feed(const QByteArray &bytes)
{
    QList<WatchEvent> out;
    if (failed()) {
        return out;
    }
    m_buffer += bytes;
    qsizetype start = 0;
    for (;;) {
        const qsizetype newline = m_buffer.indexOf('\n', std::max(start, m_scanFrom));
        if (newline < 0) {
            break;
        }
        if (newline - start > m_maxLineBytes) {
            // Refused whether it came in one chunk or many, so the outcome never depends on
            // how the network split the bytes.
            m_problem = QCoreApplication::translate("Kube", "a watch event is longer than %1 MiB").arg(m_maxLineBytes / (1024 * 1024));
            m_buffer.clear();
            return out;
        }
        const QByteArrayView line = QByteArrayView(m_buffer).sliced(start, newline - start).trimmed();
        start = newline + 1;
        m_scanFrom = start;
        if (line.isEmpty()) {
            continue;
        }
        WatchEvent event;
        if (!decodeLine(line.toByteArray(), &event, &m_problem)) {
            m_buffer.clear();
            return out;
        }
        out.append(std::move(event));
    }
    m_buffer.remove(0, start);
    m_scanFrom = m_buffer.size();
    if (m_buffer.size() > m_maxLineBytes) {
        m_problem = QCoreApplication::translate("Kube", "a watch event is longer than %1 MiB").arg(m_maxLineBytes / (1024 * 1024));
        m_buffer.clear();
    }
    return out;
}

} // namespace Starforge::Kube
