#include "sandbox/cluster/podproxy.h"

#include "sandbox/api/apiserver.h"
#include "sandbox/api/status.h"

#include <QPointer>
#include <QTcpSocket>

namespace Starforge::Sandbox::PodProxy {

namespace {

const QList<QByteArray> HopByHop = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer",
                                    "upgrade", "content-length", "host", "authorization"};

// One forwarded exchange; lives as long as the client's responder.
class Exchange final : public QObject
{
public:
    Exchange(const QString &address, quint16 port, QByteArray requestBytes, Http::Responder *responder)
        : QObject(responder)
        , m_responder(responder)
        , m_target(QStringLiteral("%1:%2").arg(address).arg(port))
    {
        connect(&m_socket, &QTcpSocket::connected, this, [this, requestBytes] { m_socket.write(requestBytes); });
        connect(&m_socket, &QTcpSocket::readyRead, this, &Exchange::onData);
        connect(&m_socket, &QTcpSocket::disconnected, this, &Exchange::onClosed);
        connect(&m_socket, &QAbstractSocket::errorOccurred, this, [this](QAbstractSocket::SocketError error) {
            if (error == QAbstractSocket::RemoteHostClosedError) {
                return; // disconnected() follows
            }
            if (!m_headSent && m_responder && !m_responder->isFinished()) {
                const QString why = error == QAbstractSocket::ConnectionRefusedError ? QStringLiteral("connect: connection refused")
                                                                                     : m_socket.errorString();
                ApiServer::respondStatus(m_responder, Status::make(503, QStringLiteral("ServiceUnavailable"),
                                                                   QStringLiteral("error trying to reach service: dial tcp %1: %2").arg(m_target, why)));
            } else {
                onClosed();
            }
        });
        // The client went away: close upstream now, so the pod stops producing (vLLM aborts).
        connect(responder, &Http::Responder::clientGone, this, [this] { m_socket.abort(); });
        m_socket.connectToHost(address, port);
    }

    ~Exchange() override
    {
        // Before the members go: aborting emits disconnected(), whose handler uses them.
        m_socket.disconnect(this);
        m_socket.abort();
    }

private:
    void onData()
    {
        m_buffer += m_socket.readAll();
        if (!m_headSent) {
            const qsizetype end = m_buffer.indexOf("\r\n\r\n");
            if (end < 0) {
                return;
            }
            const QList<QByteArray> lines = m_buffer.left(end).split('\n');
            const QList<QByteArray> statusLine = lines.first().trimmed().split(' ');
            const int status = statusLine.value(1).toInt();
            QByteArray contentType;
            Http::Headers headers;
            for (qsizetype i = 1; i < lines.size(); ++i) {
                const QByteArray line = lines[i].trimmed();
                const qsizetype colon = line.indexOf(':');
                if (colon <= 0) continue;
                const QByteArray name = line.left(colon).trimmed();
                const QByteArray value = line.mid(colon + 1).trimmed();
                const QByteArray lower = name.toLower();
                if (lower == "transfer-encoding" && value.toLower().contains("chunked")) {
                    m_chunked = true;
                }
                if (lower == "content-length") {
                    bool ok = false;
                    const qint64 length = value.toLongLong(&ok);
                    if (ok) m_declaredLength = length;
                }
                if (lower == "content-type") {
                    contentType = value;
                } else if (!HopByHop.contains(lower)) {
                    headers.append({name, value});
                }
            }
            m_buffer.remove(0, end + 4);
            m_headSent = true;
            if (m_responder) {
                m_responder->beginStream(status > 0 ? status : 502, contentType, headers);
            }
        }
        forwardBody();
    }

    void forwardBody()
    {
        if (!m_responder) {
            return;
        }
        if (!m_chunked) {
            m_forwarded += m_buffer.size();
            m_responder->write(m_buffer);
            m_buffer.clear();
            return;
        }
        // De-chunk as bytes arrive; our own framing re-chunks them for the client.
        for (;;) {
            if (m_state == ChunkState::Done) return;
            if (m_state == ChunkState::Size) {
                const qsizetype lineEnd = m_buffer.indexOf("\r\n");
                if (lineEnd < 0) return;
                bool ok = false;
                m_chunkLeft = m_buffer.left(lineEnd).split(';').first().trimmed().toLongLong(&ok, 16);
                m_buffer.remove(0, lineEnd + 2);
                if (!ok || m_chunkLeft == 0) {
                    // The last chunk ends the exchange (what follows it, the trailer's CRLF, is not
                    // read); a size that does not parse ends it too, as a cut.
                    m_lastChunkSeen = ok;
                    m_state = ChunkState::Done;
                    m_socket.disconnectFromHost();
                    return;
                }
                m_state = ChunkState::Data;
            }
            if (m_state == ChunkState::Data) {
                if (m_buffer.isEmpty()) return;
                const qsizetype take = std::min<qsizetype>(m_chunkLeft, m_buffer.size());
                m_responder->write(m_buffer.left(take));
                m_buffer.remove(0, take);
                m_chunkLeft -= take;
                if (m_chunkLeft > 0) return;
                m_state = ChunkState::DataEnd;
            }
            if (m_state == ChunkState::DataEnd) {
                if (m_buffer.size() < 2) return;
                m_buffer.remove(0, 2);
                m_state = ChunkState::Size;
            }
        }
    }

    void onClosed()
    {
        if (m_socket.isOpen()) m_buffer += m_socket.readAll();
        if (!m_headSent) {
            if (m_responder && !m_responder->isFinished()) {
                ApiServer::respondStatus(m_responder, Status::make(503, QStringLiteral("ServiceUnavailable"),
                                                                   QStringLiteral("error trying to reach service: EOF from %1").arg(m_target)));
            }
            return;
        }
        forwardBody();
        if (!m_responder) return;
        // The pod closed before its answer was whole (a chunked body without its last chunk, or
        // fewer bytes than its Content-Length): the API server's proxy (Go's ReverseProxy) then
        // aborts the client's connection rather than end the answer as if it were complete, so
        // the client can tell a cut stream from a finished one.
        const bool cut = m_chunked ? !m_lastChunkSeen : (m_declaredLength >= 0 && m_forwarded < m_declaredLength);
        if (cut) {
            m_responder->closeUnfinished();
        } else {
            m_responder->end();
        }
    }

    QPointer<Http::Responder> m_responder;
    QString m_target;
    QTcpSocket m_socket;
    QByteArray m_buffer;
    bool m_headSent = false;
    bool m_chunked = false;
    bool m_lastChunkSeen = false;
    qint64 m_declaredLength = -1;
    qint64 m_forwarded = 0;
    enum class ChunkState { Size, Data, DataEnd, Done } m_state = ChunkState::Size;
    qint64 m_chunkLeft = 0;
};

} // namespace

void forward(const QString &address, quint16 port, const QString &path, const Http::Request &request, Http::Responder *responder)
{
    QByteArray target = QUrl::toPercentEncoding(path.startsWith(u'/') ? path : u'/' + path, "/:@!$&'()*+,;=-._~");
    const QString query = request.query.toString(QUrl::FullyEncoded);
    if (!query.isEmpty()) {
        target += '?' + query.toLatin1();
    }
    QByteArray head = request.method + ' ' + target + " HTTP/1.1\r\nHost: " + address.toLatin1() + ':' + QByteArray::number(port)
        + "\r\nConnection: close\r\n";
    for (auto it = request.headers.cbegin(); it != request.headers.cend(); ++it) {
        if (!HopByHop.contains(it.key())) {
            head += it.key() + ": " + it.value() + "\r\n";
        }
    }
    if (!request.body.isEmpty() || request.method == "POST" || request.method == "PUT" || request.method == "PATCH") {
        head += "Content-Length: " + QByteArray::number(request.body.size()) + "\r\n";
    }
    head += "\r\n";
    new Exchange(address, port, head + request.body, responder);
}

} // namespace Starforge::Sandbox::PodProxy
