#pragma once

// The framing of a watch response: one JSON object per line,
// {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}. Bytes go in as the network
// delivers them; whole events come out. A line longer than the cap, a line that is not JSON
// or an unknown type stops the decoder (failed() says why): the stream can no longer be
// trusted, and the informer re-watches from the last event it applied.

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace Starforge::Kube {

struct WatchEvent
{
    enum class Type { Added, Modified, Deleted, Bookmark, Error };
    Type type = Type::Added;
    QJsonObject object;
};

class WatchDecoder
{
public:
    static constexpr qsizetype DefaultMaxLineBytes = 32 * 1024 * 1024;

    explicit WatchDecoder(qsizetype maxLineBytes = DefaultMaxLineBytes);

    // The events these bytes complete, in order. Nothing more once failed.
    QList<WatchEvent> feed(const QByteArray &bytes);

    bool failed() const { return !m_problem.isEmpty(); }
    QString problem() const { return m_problem; }
    qsizetype bufferedBytes() const { return m_buffer.size(); }

    // One line, for tests and fuzzing; false with problem set when it is not a watch event.
    static bool decodeLine(const QByteArray &line, WatchEvent *event, QString *problem);

private:
    QByteArray m_buffer;
    qsizetype m_scanFrom = 0;
    qsizetype m_maxLineBytes;
    QString m_problem;
};

} // namespace Starforge::Kube
