#include "sandbox/http/httpserver.h"

#include <QLoggingCategory>
#include <QSslConfiguration>
#include <QSslSocket>
#include <QTcpServer>
#include <QTimer>

Q_LOGGING_CATEGORY(lcHttp, "starforge.sandbox.http")

namespace Starforge::Sandbox::Http {

namespace {

constexpr qsizetype MaxHeaderBytes = 64 * 1024;
constexpr qint64 MaxBodyBytes = 256LL * 1024 * 1024;

QByteArray reasonPhrase(int status)
{
    switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 411: return "Length Required";
    case 412: return "Precondition Failed";
    case 413: return "Payload Too Large";
    case 415: return "Unsupported Media Type";
    case 416: return "Range Not Satisfiable";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Status";
    }
}

// Decodes a chunked request body incrementally: pos is where the next chunk-size line starts and
// body holds what was decoded so far, so each new packet costs only its own bytes. Returns true
// once the last chunk and trailers are in (consumed = bytes of the whole request), false while
// incomplete; sets bad on garbage.
bool decodeChunked(const QByteArray &data, qsizetype &pos, QByteArray &body, qsizetype &consumed, bool &bad)
{
    for (;;) {
        const qsizetype lineEnd = data.indexOf("\r\n", pos);
        if (lineEnd < 0) {
            bad = data.size() - pos > 1024; // a chunk-size line is short
            return false;
        }
        QByteArray sizeText = data.mid(pos, lineEnd - pos);
        if (const qsizetype semi = sizeText.indexOf(';'); semi >= 0) {
            sizeText.truncate(semi);
        }
        bool ok = false;
        const qint64 size = sizeText.trimmed().toLongLong(&ok, 16);
        if (!ok || size < 0 || size > MaxBodyBytes - body.size()) {
            bad = true;
            return false;
        }
        if (size == 0) {
            // Trailers end with an empty line.
            const qsizetype end = data.indexOf("\r\n\r\n", lineEnd);
            if (end < 0) {
                return false;
            }
            consumed = end + 4;
            return true;
        }
        const qsizetype dataStart = lineEnd + 2;
        if (data.size() < dataStart + size + 2) {
            return false;
        }
        if (data.at(dataStart + size) != '\r' || data.at(dataStart + size + 1) != '\n') {
            bad = true;
            return false;
        }
        body.append(data.constData() + dataStart, size);
        pos = dataStart + size + 2;
    }
}

} // namespace

class Server::Listener final : public QTcpServer
{
public:
    explicit Listener(Server *server) : QTcpServer(server), m_server(server) {}

protected:
    void incomingConnection(qintptr descriptor) override { m_server->accept(descriptor); }

private:
    Server *m_server;
};

// --- Responder -------------------------------------------------------------------------------

Responder::Responder(Connection *connection) : QObject(connection), m_connection(connection) {}

void Responder::respond(int status, const QByteArray &contentType, const QByteArray &body, const Headers &extra)
{
    if (m_finished || m_streaming) {
        qCWarning(lcHttp) << "respond() on a responder that already answered";
        return;
    }
    m_finished = true;
    m_status = status;
    Q_EMIT answered(status);
    m_connection->sendHead(status, contentType, extra, body.size());
    if (!m_connection->m_headRequest) {
        m_connection->sendRaw(body);
    }
    m_connection->finishResponse();
}

void Responder::beginStream(int status, const QByteArray &contentType, const Headers &extra)
{
    if (m_finished || m_streaming) {
        return;
    }
    m_status = status;
    Q_EMIT answered(status);
    if (m_connection->m_headRequest) {
        // HEAD has no body, so no chunked framing either: headers, and the response is done.
        m_finished = true;
        m_connection->sendHead(status, contentType, extra, 0);
        m_connection->finishResponse();
        return;
    }
    m_streaming = true;
    m_connection->sendHead(status, contentType, extra, std::nullopt);
}

void Responder::write(const QByteArray &data)
{
    if (!m_streaming || m_finished || data.isEmpty()) {
        return;
    }
    m_connection->sendRaw(QByteArray::number(data.size(), 16) + "\r\n" + data + "\r\n");
}

void Responder::end()
{
    if (!m_streaming || m_finished) {
        return;
    }
    m_finished = true;
    m_connection->sendRaw("0\r\n\r\n");
    m_connection->finishResponse();
}

void Responder::abortConnection()
{
    m_connection->abort();
}

void Responder::closeUnfinished()
{
    m_finished = true;   // no clientGone(): it is this side that ends it
    m_connection->m_socket->disconnectFromHost();
}

qint64 Responder::pendingBytes() const
{
    auto *ssl = qobject_cast<QSslSocket *>(m_connection->m_socket);
    return m_connection->m_socket->bytesToWrite() + (ssl ? ssl->encryptedBytesToWrite() : 0);
}

// --- Server ----------------------------------------------------------------------------------

Server::Server(Handler handler, QObject *parent)
    : QObject(parent)
    , m_handler(std::move(handler))
    , m_listener(new Listener(this))
{
}

Server::~Server()
{
    close();
}

void Server::setTls(const QSslCertificate &certificate, const QSslKey &key)
{
    m_certificate = certificate;
    m_key = key;
}

void Server::setClientCa(const QList<QSslCertificate> &caCertificates)
{
    m_clientCas = caCertificates;
}

bool Server::listen(const QHostAddress &address, quint16 port)
{
    return m_listener->listen(address, port);
}

QString Server::errorString() const
{
    return m_listener->errorString();
}

quint16 Server::port() const
{
    return m_listener->serverPort();
}

QHostAddress Server::address() const
{
    return m_listener->serverAddress();
}

void Server::close()
{
    m_listener->close();
    const auto connections = m_connections;
    for (const auto &connection : connections) {
        if (connection) {
            connection->abort();
        }
    }
    m_connections.clear();
}

int Server::connectionCount() const
{
    int n = 0;
    for (const auto &connection : m_connections) {
        n += connection ? 1 : 0;
    }
    return n;
}

void Server::accept(qintptr descriptor)
{
    QTcpSocket *socket = nullptr;
    if (isTls()) {
        auto *ssl = new QSslSocket;
        if (!ssl->setSocketDescriptor(descriptor)) {
            delete ssl;
            return;
        }
        QSslConfiguration config = QSslConfiguration::defaultConfiguration();
        config.setLocalCertificate(m_certificate);
        config.setPrivateKey(m_key);
        config.setProtocol(QSsl::TlsV1_2OrLater);
        if (m_clientCas.isEmpty()) {
            config.setPeerVerifyMode(QSslSocket::VerifyNone);
        } else {
            // QueryPeer: a certificate is asked for and checked, but a client without one (or
            // with a bad one) still connects; its requests are judged by authentication, which
            // answers 401 where kube-apiserver does. Only the client CA is trusted, not the system's.
            config.setPeerVerifyMode(QSslSocket::QueryPeer);
            config.setCaCertificates(m_clientCas);
        }
        // Go clients offer h2 first; choosing HTTP/1.1 keeps them on the protocol we speak.
        config.setAllowedNextProtocols({QByteArrayLiteral("http/1.1")});
        ssl->setSslConfiguration(config);
        ssl->startServerEncryption();
        socket = ssl;
    } else {
        socket = new QTcpSocket;
        if (!socket->setSocketDescriptor(descriptor)) {
            delete socket;
            return;
        }
    }
    m_connections.removeAll(nullptr);
    m_connections.append(new Connection(this, socket));
}

void Server::dispatch(const Request &request, Responder *responder)
{
    ++m_requests;
    m_handler(request, responder);
}

// --- Connection ------------------------------------------------------------------------------

Connection::Connection(Server *server, QTcpSocket *socket)
    : QObject(server)
    , m_server(server)
    , m_socket(socket)
{
    m_socket->setParent(this);
    connect(m_socket, &QTcpSocket::readyRead, this, &Connection::onReadyRead);
    connect(m_socket, &QTcpSocket::disconnected, this, &Connection::onDisconnected);
    connect(m_socket, &QTcpSocket::bytesWritten, this, [this] {
        if (m_current) {
            Q_EMIT m_current->drained();
        }
    });
    if (auto *ssl = qobject_cast<QSslSocket *>(m_socket)) {
        connect(ssl, &QSslSocket::encryptedBytesWritten, this, [this] {
            if (m_current) {
                Q_EMIT m_current->drained();
            }
        });
        // A client that does not trust our CA hangs up during the handshake; nothing to answer.
        // Errors about the client's own certificate are kept by the socket (sslHandshakeErrors)
        // and reach the handler with each request.
        connect(ssl, &QSslSocket::sslErrors, this, [](const QList<QSslError> &errors) {
            qCDebug(lcHttp) << "TLS errors from a client:" << errors;
        });
    }
    connect(m_socket, &QAbstractSocket::errorOccurred, this, [this](QAbstractSocket::SocketError error) {
        if (error != QAbstractSocket::RemoteHostClosedError) {
            qCDebug(lcHttp) << "connection error:" << m_socket->errorString();
        }
        if (m_socket->state() != QAbstractSocket::ConnectedState) {
            onDisconnected();
        }
    });
}

Connection::~Connection() = default;

void Connection::abort()
{
    m_socket->abort();
    onDisconnected();
}

void Connection::onDisconnected()
{
    if (m_current) {
        Responder *responder = m_current;
        m_current = nullptr;
        if (!responder->isFinished()) {
            responder->m_finished = true;
            Q_EMIT responder->clientGone();
        }
        responder->deleteLater();
    }
    deleteLater();
}

ClientCertificate Connection::clientCertificate() const
{
    const auto *ssl = qobject_cast<const QSslSocket *>(m_socket);
    if (!ssl || ssl->peerVerifyMode() != QSslSocket::QueryPeer) {
        return {};
    }
    ClientCertificate out;
    out.certificate = ssl->peerCertificate();
    // The handshake verified the chain against the client CA (dates and purpose included) and
    // recorded every failure; with QueryPeer it went on regardless.
    out.verified = out.isPresent() && ssl->sslHandshakeErrors().isEmpty();
    return out;
}

void Connection::onReadyRead()
{
    m_buffer.append(m_socket->readAll());
    if (m_buffer.size() > MaxBodyBytes + MaxHeaderBytes) {
        // More than any request may be: a client that keeps sending during a stream, or a flood.
        abort();
        return;
    }
    if (!m_current) {
        parse();
    }
}

void Connection::parse()
{
    if (m_current || m_socket->state() != QAbstractSocket::ConnectedState) {
        return;
    }
    const qsizetype headEnd = m_buffer.indexOf("\r\n\r\n");
    if (headEnd < 0) {
        if (m_buffer.size() > MaxHeaderBytes) {
            fail(431, "request headers too large");
        }
        return;
    }
    const QList<QByteArray> lines = m_buffer.left(headEnd).split('\n');
    const QList<QByteArray> requestLine = lines.first().trimmed().split(' ');
    if (requestLine.size() != 3 || !requestLine[2].startsWith("HTTP/1.")) {
        fail(400, "malformed request line");
        return;
    }
    Request request;
    request.method = requestLine[0];
    request.target = requestLine[1];
    request.peer = m_socket->peerAddress();
    request.clientCertificate = clientCertificate();
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray line = lines[i].trimmed();
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0) {
            fail(400, "malformed header line");
            return;
        }
        const QByteArray name = line.left(colon).trimmed().toLower();
        const QByteArray value = line.mid(colon + 1).trimmed();
        if (request.headers.contains(name)) {
            request.headers[name] += ',' + value; // as RFC 9110 allows; SigV4 signs repeats joined by a bare comma
        } else {
            request.headers.insert(name, value);
        }
    }

    qsizetype consumed = headEnd + 4;
    if (request.header("transfer-encoding").toLower().contains("chunked")) {
        if (m_chunkPos < 0) {
            m_chunkPos = consumed;
            m_chunkBody.clear();
        }
        bool bad = false;
        qsizetype end = 0;
        if (!decodeChunked(m_buffer, m_chunkPos, m_chunkBody, end, bad)) {
            if (bad) {
                m_chunkPos = -1;
                fail(400, "malformed chunked body");
            }
            return;
        }
        request.body = std::exchange(m_chunkBody, {});
        m_chunkPos = -1;
        consumed = end;
    } else if (request.headers.contains("content-length")) {
        bool ok = false;
        const qint64 length = request.header("content-length").toLongLong(&ok);
        if (!ok || length < 0) {
            fail(400, "malformed Content-Length");
            return;
        }
        if (length > MaxBodyBytes) {
            fail(413, "request body too large for the sandbox");
            return;
        }
        if (m_buffer.size() < consumed + length) {
            return;
        }
        request.body = m_buffer.mid(consumed, length);
        consumed += length;
    }
    m_buffer.remove(0, consumed);

    const qsizetype question = request.target.indexOf('?');
    const QByteArray rawPath = question < 0 ? request.target : request.target.left(question);
    request.path = QUrl::fromPercentEncoding(rawPath);
    if (question >= 0) {
        // Go and curl encode a space in a query as '+'; a literal '+' arrives as %2B.
        QByteArray rawQuery = request.target.mid(question + 1);
        rawQuery.replace('+', "%20");
        request.query.setQuery(QString::fromLatin1(rawQuery));
    }
    const QByteArray connection = request.header("connection").toLower();
    m_closeAfterResponse = connection.contains("close") || (requestLine[2] == "HTTP/1.0" && !connection.contains("keep-alive"));
    m_headRequest = request.method == "HEAD";

    auto *responder = new Responder(this);
    m_current = responder;
    m_server->dispatch(request, responder);
}

void Connection::sendHead(int status, const QByteArray &contentType, const Headers &extra, std::optional<qint64> length)
{
    QByteArray head = "HTTP/1.1 " + QByteArray::number(status) + ' ' + reasonPhrase(status) + "\r\n";
    if (!contentType.isEmpty()) {
        head += "Content-Type: " + contentType + "\r\n";
    }
    bool hasLength = false;
    for (const auto &[name, value] : extra) {
        head += name + ": " + value + "\r\n";
        hasLength = hasLength || name.compare("content-length", Qt::CaseInsensitive) == 0;
    }
    if (length) {
        if (!hasLength) {
            head += "Content-Length: " + QByteArray::number(*length) + "\r\n";
        }
    } else {
        head += "Transfer-Encoding: chunked\r\n";
    }
    if (m_closeAfterResponse) {
        head += "Connection: close\r\n";
    }
    head += "\r\n";
    sendRaw(head);
}

void Connection::sendRaw(const QByteArray &data)
{
    if (m_socket->state() == QAbstractSocket::ConnectedState) {
        m_socket->write(data);
    }
}

void Connection::finishResponse()
{
    if (m_current) {
        m_current->deleteLater();
        m_current = nullptr;
    }
    if (m_closeAfterResponse) {
        m_socket->disconnectFromHost();
        return;
    }
    // The next pipelined request, if any, after this call stack unwinds.
    QTimer::singleShot(0, this, &Connection::parse);
}

void Connection::fail(int status, const QByteArray &message)
{
    m_closeAfterResponse = true;
    m_headRequest = false;
    auto *responder = new Responder(this);
    m_current = responder;
    responder->respond(status, "text/plain", message + '\n');
    m_buffer.clear();
}

} // namespace Starforge::Sandbox::Http
