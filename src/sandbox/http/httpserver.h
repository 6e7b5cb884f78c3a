#pragma once

// A small HTTP/1.1 server for the sandbox: plain TCP or TLS, keep-alive, whole and chunked
// (streamed) responses. Qt 6.4's QHttpServer cannot stream (its responder sends neither
// Content-Length nor chunked framing for a sequential device), and watch, pods/log and SSE all
// need streams, so the sandbox owns its framing. One event loop, no threads: handlers run on the
// server's thread and may answer later (a responder stays valid until it is finished or the
// client goes away; hold it in a QPointer). With a client CA the server asks every TLS client
// for a certificate without requiring one, as kube-apiserver does, and hands each request what
// the handshake made of it; what that means is for the handler (authentication) to decide.

#include <QByteArray>
#include <QHash>
#include <QHostAddress>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QSslCertificate>
#include <QSslKey>
#include <QUrlQuery>

#include <functional>
#include <optional>

class QTcpSocket;

namespace Starforge::Sandbox::Http {

// The certificate a TLS client presented, as the handshake judged it against the client CA.
struct ClientCertificate
{
    QSslCertificate certificate{QByteArray()};  // null: none presented, or the server does not ask
    bool verified = false;        // chains to the client CA, in date, fit for client authentication

    bool isPresent() const { return !certificate.isNull(); }
};

struct Request
{
    QByteArray method;
    QByteArray target;                 // as sent: path and query, percent-encoded
    QString path;                      // decoded path
    QUrlQuery query;
    QHash<QByteArray, QByteArray> headers; // names lower-cased
    QByteArray body;
    QHostAddress peer;
    ClientCertificate clientCertificate;

    QByteArray header(const QByteArray &lowerName) const { return headers.value(lowerName); }
    QString queryValue(const QString &key) const { return query.queryItemValue(key, QUrl::FullyDecoded); }
    bool hasQuery(const QString &key) const { return query.hasQueryItem(key); }
};

using Headers = QList<std::pair<QByteArray, QByteArray>>;

class Connection;

// Answers one request: either respond() once, or beginStream() then write()… and end().
class Responder final : public QObject
{
    Q_OBJECT
public:
    void respond(int status, const QByteArray &contentType, const QByteArray &body, const Headers &extra = {});
    void beginStream(int status, const QByteArray &contentType, const Headers &extra = {});
    void write(const QByteArray &data);
    void end();
    // Cuts the connection without ending the response, as a crashing server or proxy would.
    void abortConnection();
    // Sends what was written, then closes the connection without ending the response (no last
    // chunk): what a proxy does when its upstream is cut mid-answer.
    void closeUnfinished();

    bool isStreaming() const { return m_streaming; }
    bool isFinished() const { return m_finished; }
    // The status sent (a stream's when it began); 0 before the answer.
    int status() const { return m_status; }
    // Bytes the client has not taken yet; a streamer may wait for bytesWritten before writing more.
    qint64 pendingBytes() const;

Q_SIGNALS:
    // The status line is about to go out (respond(), or beginStream()).
    void answered(int status);
    // The client closed the connection (or it failed) before end(); the responder is deleted next.
    void clientGone();
    // Some queued bytes reached the socket; pendingBytes() went down.
    void drained();

private:
    friend class Connection;
    explicit Responder(Connection *connection);
    Connection *m_connection;
    bool m_streaming = false;
    bool m_finished = false;
    int m_status = 0;
};

class Server final : public QObject
{
    Q_OBJECT
public:
    using Handler = std::function<void(const Request &, Responder *)>;

    explicit Server(Handler handler, QObject *parent = nullptr);
    ~Server() override;

    // With a certificate and key every connection is TLS; without, plain HTTP.
    void setTls(const QSslCertificate &certificate, const QSslKey &key);
    // Asks TLS clients for a certificate (optional) and verifies it against these CAs only.
    void setClientCa(const QList<QSslCertificate> &caCertificates);
    bool listen(const QHostAddress &address, quint16 port);
    QString errorString() const;
    quint16 port() const;
    QHostAddress address() const;
    bool isTls() const { return !m_certificate.isNull(); }
    // Closes the listener and every connection (streams end abruptly, as a dying server's do).
    void close();
    int connectionCount() const;
    // Requests answered so far (for the benchmark and tests).
    quint64 requestCount() const { return m_requests; }

private:
    friend class Connection;
    class Listener;
    void accept(qintptr descriptor);
    void dispatch(const Request &request, Responder *responder);

    Handler m_handler;
    Listener *m_listener;
    QSslCertificate m_certificate;
    QSslKey m_key;
    QList<QSslCertificate> m_clientCas;
    QList<QPointer<Connection>> m_connections;
    quint64 m_requests = 0;
};

// One client connection: parses requests in order and hands them out one at a time.
class Connection final : public QObject
{
    Q_OBJECT
public:
    Connection(Server *server, QTcpSocket *socket);
    ~Connection() override;
    void abort();

private:
    friend class Responder;
    void onReadyRead();
    void parse();
    void sendHead(int status, const QByteArray &contentType, const Headers &extra, std::optional<qint64> length);
    void sendRaw(const QByteArray &data);
    void finishResponse();
    void fail(int status, const QByteArray &message);
    void onDisconnected();
    ClientCertificate clientCertificate() const;

    Server *m_server;
    QTcpSocket *m_socket;
    QByteArray m_buffer;
    QPointer<Responder> m_current;
    bool m_closeAfterResponse = false;
    bool m_headRequest = false;
    qsizetype m_chunkPos = -1;   // a chunked request body being decoded: next size line
    QByteArray m_chunkBody;      // and what was decoded so far
};

} // namespace Starforge::Sandbox::Http
