#include "support/testproxy.h"

#include <QNetworkProxy>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QUrl>
#include <QtEndian>

#include <utility>

namespace Starforge::Testing {

namespace {

constexpr qsizetype MaxHead = 64 * 1024;

QString kindName(TestProxy::Kind kind)
{
    switch (kind) {
    case TestProxy::Kind::Connect:
        return QStringLiteral("connect");
    case TestProxy::Kind::Forward:
        return QStringLiteral("forward");
    case TestProxy::Kind::Socks5:
        return QStringLiteral("socks5");
    }
    return {};
}

QByteArray headerValue(const QList<QByteArray> &lines, const QByteArray &name)
{
    for (const QByteArray &line : lines) {
        const qsizetype colon = line.indexOf(':');
        if (colon > 0 && line.left(colon).trimmed().compare(name, Qt::CaseInsensitive) == 0) {
            return line.mid(colon + 1).trimmed();
        }
    }
    return {};
}

// Hop-by-hop headers a proxy consumes rather than forwards.
bool isHopByHop(const QByteArray &line)
{
    const QByteArray name = line.left(line.indexOf(':')).trimmed().toLower();
    return name == "connection" || name == "keep-alive" || name == "proxy-connection" || name == "proxy-authorization";
}

// One client connection, from the first byte to the close of both sides.
class Connection final : public QObject
{
public:
    Connection(TestProxy *proxy, QTcpSocket *client)
        : QObject(proxy)
        , m_proxy(proxy)
        , m_client(client)
    {
        m_client->setParent(this);
        connect(m_client, &QTcpSocket::readyRead, this, [this] {
            m_buffer += m_client->readAll();
            process();
        });
        connect(m_client, &QTcpSocket::disconnected, this, [this] {
            m_clientGone = true;
            if (m_upstream && m_upstream->state() != QAbstractSocket::UnconnectedState) {
                m_upstream->disconnectFromHost();
            }
            finishIfDone();
        });
    }

private:
    enum class State { Sniff, HttpHead, Discard, SocksGreeting, SocksAuth, SocksRequest, Connecting, Tunnel, Forward, Closing };

    void process()
    {
        for (;;) {
            const State before = m_state;
            const qsizetype size = m_buffer.size();
            switch (m_state) {
            case State::Sniff:
                if (m_buffer.isEmpty())
                    return;
                m_state = m_buffer.at(0) == 0x05 ? State::SocksGreeting : State::HttpHead;
                break;
            case State::HttpHead:
                httpHead();
                break;
            case State::Discard: {
                const qsizetype n = qMin<qsizetype>(m_discard, m_buffer.size());
                m_buffer.remove(0, n);
                m_discard -= n;
                if (m_discard == 0)
                    m_state = State::HttpHead;
                break;
            }
            case State::SocksGreeting:
                socksGreeting();
                break;
            case State::SocksAuth:
                socksAuth();
                break;
            case State::SocksRequest:
                socksRequest();
                break;
            case State::Tunnel:
            case State::Forward:
                if (!m_buffer.isEmpty())
                    m_upstream->write(std::exchange(m_buffer, {}));
                return;
            case State::Connecting: // bytes wait in m_buffer until the upstream is there
            case State::Closing:
                return;
            }
            if (m_state == before && m_buffer.size() == size)
                return; // waiting for more bytes
        }
    }

    void reply(const QByteArray &bytes, bool close)
    {
        m_client->write(bytes);
        if (close) {
            m_state = State::Closing;
            m_client->disconnectFromHost();
        }
    }

    // ---- HTTP: CONNECT and absolute-URI requests ------------------------------------------------

    void httpHead()
    {
        const qsizetype end = m_buffer.indexOf("\r\n\r\n");
        if (end < 0) {
            if (m_buffer.size() > MaxHead)
                reply("HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\n\r\n", true);
            return;
        }
        QList<QByteArray> lines = m_buffer.left(end).split('\n');
        for (QByteArray &line : lines)
            line = line.trimmed();
        m_buffer.remove(0, end + 4);
        const QList<QByteArray> requestLine = lines.takeFirst().split(' ');
        if (requestLine.size() != 3) {
            reply("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", true);
            return;
        }
        const QByteArray method = requestLine.at(0);
        const QByteArray target = requestLine.at(1);

        if (m_proxy->credentialsRequired()) {
            const QByteArray authorization = headerValue(lines, "Proxy-Authorization");
            const QByteArray decoded = authorization.startsWith("Basic ") ? QByteArray::fromBase64(authorization.mid(6)) : QByteArray();
            const qsizetype colon = decoded.indexOf(':');
            if (colon < 0
                || !m_proxy->credentialsMatch(QString::fromUtf8(decoded.left(colon)), QString::fromUtf8(decoded.mid(colon + 1)))) {
                m_proxy->recordRefusal();
                // Kept alive, as most proxies do: the client answers on the same connection.
                const bool chunked = headerValue(lines, "Transfer-Encoding").toLower().contains("chunked");
                reply("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"starforge-test\"\r\n"
                      "Content-Length: 0\r\nProxy-Connection: keep-alive\r\n\r\n",
                      chunked);
                m_discard = headerValue(lines, "Content-Length").toLongLong();
                if (!chunked)
                    m_state = m_discard > 0 ? State::Discard : State::HttpHead;
                return;
            }
        }

        if (method == "CONNECT") {
            const QUrl authority(QStringLiteral("tcp://") + QString::fromLatin1(target));
            if (!authority.isValid() || authority.host().isEmpty() || authority.port() <= 0) {
                reply("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", true);
                return;
            }
            m_kind = TestProxy::Kind::Connect;
            m_record = QStringLiteral("CONNECT ") + QString::fromLatin1(target);
            open(authority.host(), quint16(authority.port()), QString::fromLatin1(target).toLower());
            return;
        }

        // An absolute URI: http://host[:port]/path?query, sent on as /path?query.
        const QUrl url = QUrl::fromEncoded(target);
        if (url.scheme() != QLatin1String("http") || url.host().isEmpty()) {
            reply("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", true);
            return;
        }
        const qsizetype pathAt = target.indexOf('/', target.indexOf("://") + 3);
        QByteArray head = method + ' ' + (pathAt < 0 ? QByteArray("/") : target.mid(pathAt)) + " HTTP/1.1\r\n";
        for (const QByteArray &line : std::as_const(lines)) {
            if (!isHopByHop(line))
                head += line + "\r\n";
        }
        // One request per connection keeps the relay simple: the server closes after answering.
        head += "Connection: close\r\n\r\n";
        m_buffer.prepend(head);
        const quint16 port = quint16(url.port(80));
        m_kind = TestProxy::Kind::Forward;
        m_record = QString::fromLatin1(method + ' ' + target);
        open(url.host(), port, url.host().toLower() + QLatin1Char(':') + QString::number(port));
    }

    // ---- SOCKS5 (RFC 1928, RFC 1929) -------------------------------------------------------------

    void socksGreeting()
    {
        if (m_buffer.size() < 2)
            return;
        const int count = quint8(m_buffer.at(1));
        if (m_buffer.size() < 2 + count)
            return;
        const QByteArray methods = m_buffer.mid(2, count);
        m_buffer.remove(0, 2 + count);
        if (m_proxy->credentialsRequired() || !methods.contains('\x00')) {
            if (!methods.contains('\x02')) {
                m_proxy->recordRefusal();
                reply(QByteArray("\x05\xff", 2), true);
                return;
            }
            m_client->write(QByteArray("\x05\x02", 2));
            m_state = State::SocksAuth;
            return;
        }
        m_client->write(QByteArray("\x05\x00", 2));
        m_state = State::SocksRequest;
    }

    void socksAuth()
    {
        if (m_buffer.size() < 2)
            return;
        const int userLength = quint8(m_buffer.at(1));
        if (m_buffer.size() < 3 + userLength)
            return;
        const int passwordLength = quint8(m_buffer.at(2 + userLength));
        if (m_buffer.size() < 3 + userLength + passwordLength)
            return;
        const QString user = QString::fromUtf8(m_buffer.mid(2, userLength));
        const QString password = QString::fromUtf8(m_buffer.mid(3 + userLength, passwordLength));
        m_buffer.remove(0, 3 + userLength + passwordLength);
        if (m_proxy->credentialsRequired() && !m_proxy->credentialsMatch(user, password)) {
            m_proxy->recordRefusal();
            reply(QByteArray("\x01\x01", 2), true);
            return;
        }
        m_client->write(QByteArray("\x01\x00", 2));
        m_state = State::SocksRequest;
    }

    void socksRequest()
    {
        if (m_buffer.size() < 5)
            return;
        const char type = m_buffer.at(3);
        QString host;
        QString target;
        qsizetype length = 0;
        if (type == 0x01) {
            length = 4 + 4 + 2;
            if (m_buffer.size() < length)
                return;
            host = QHostAddress(qFromBigEndian<quint32>(m_buffer.constData() + 4)).toString();
        } else if (type == 0x03) {
            const int nameLength = quint8(m_buffer.at(4));
            length = 5 + nameLength + 2;
            if (m_buffer.size() < length)
                return;
            host = QString::fromLatin1(m_buffer.mid(5, nameLength));
        } else if (type == 0x04) {
            length = 4 + 16 + 2;
            if (m_buffer.size() < length)
                return;
            host = QHostAddress(reinterpret_cast<const quint8 *>(m_buffer.constData() + 4)).toString();
        } else {
            reply(QByteArray("\x05\x08\x00\x01\x00\x00\x00\x00\x00\x00", 10), true); // address type not supported
            return;
        }
        const quint16 port = qFromBigEndian<quint16>(m_buffer.constData() + length - 2);
        const bool command = m_buffer.at(1) == 0x01;
        m_buffer.remove(0, length);
        if (!command) {
            reply(QByteArray("\x05\x07\x00\x01\x00\x00\x00\x00\x00\x00", 10), true); // only CONNECT
            return;
        }
        target = (type == 0x04 ? QLatin1Char('[') + host + QLatin1Char(']') : host.toLower()) + QLatin1Char(':') + QString::number(port);
        m_kind = TestProxy::Kind::Socks5;
        m_record = (type == 0x03 ? QStringLiteral("SOCKS5 domain ") : QStringLiteral("SOCKS5 address ")) + target;
        open(host, port, target);
    }

    // ---- The far side ---------------------------------------------------------------------------

    void open(const QString &host, quint16 port, const QString &target)
    {
        m_target = target;
        m_state = State::Connecting;
        m_upstream = new QTcpSocket(this);
        m_upstream->setProxy(QNetworkProxy::NoProxy); // never Qt's system proxy, whatever the environment says
        connect(m_upstream, &QTcpSocket::connected, this, &Connection::upstreamConnected);
        connect(m_upstream, &QTcpSocket::errorOccurred, this, &Connection::upstreamFailed);
        connect(m_upstream, &QTcpSocket::readyRead, this, [this] { relayAnswer(m_upstream->readAll()); });
        connect(m_upstream, &QTcpSocket::disconnected, this, [this] {
            m_upstreamGone = true;
            if (!m_clientGone) {
                m_client->disconnectFromHost(); // writes what is buffered first
            }
            finishIfDone();
        });
        const QHostAddress mapped = m_proxy->resolve(host);
        if (!mapped.isNull()) {
            m_upstream->connectToHost(mapped, port);
        } else {
            m_upstream->connectToHost(host, port);
        }
    }

    void upstreamConnected()
    {
        m_proxy->record(m_kind, m_target, m_record);
        if (m_kind == TestProxy::Kind::Connect) {
            m_client->write("HTTP/1.1 200 Connection established\r\n\r\n");
            m_state = State::Tunnel;
        } else if (m_kind == TestProxy::Kind::Socks5) {
            m_client->write(QByteArray("\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00", 10));
            m_state = State::Tunnel;
        } else {
            m_state = State::Forward;
        }
        process();
    }

    void upstreamFailed(QAbstractSocket::SocketError error)
    {
        if (m_state != State::Connecting)
            return; // a close after the relay: disconnected() handles it
        const bool notFound = error == QAbstractSocket::HostNotFoundError;
        if (m_kind == TestProxy::Kind::Socks5) {
            reply(notFound ? QByteArray("\x05\x04\x00\x01\x00\x00\x00\x00\x00\x00", 10)
                           : QByteArray("\x05\x05\x00\x01\x00\x00\x00\x00\x00\x00", 10),
                  true);
        } else {
            // The statuses Qt reads as "host not found" and "connection refused".
            reply(notFound ? "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                           : "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                  true);
        }
    }

    // Bytes from the far side. A forwarded answer's head says the connection closes after it.
    void relayAnswer(const QByteArray &bytes)
    {
        if (m_kind != TestProxy::Kind::Forward || m_answerHeadDone) {
            m_client->write(bytes);
            return;
        }
        m_answerHead += bytes;
        const qsizetype end = m_answerHead.indexOf("\r\n\r\n");
        if (end < 0)
            return;
        const QList<QByteArray> lines = m_answerHead.left(end).split('\n');
        QByteArray head;
        for (const QByteArray &raw : lines) {
            const QByteArray line = raw.trimmed();
            if (!isHopByHop(line) || head.isEmpty())
                head += line + "\r\n";
        }
        head += "Connection: close\r\nProxy-Connection: close\r\n\r\n";
        m_client->write(head + m_answerHead.mid(end + 4));
        m_answerHead.clear();
        m_answerHeadDone = true;
    }

    void finishIfDone()
    {
        const bool upstreamDone = !m_upstream || m_upstreamGone || m_upstream->state() == QAbstractSocket::UnconnectedState;
        if (m_clientGone && upstreamDone)
            deleteLater();
    }

    QPointer<TestProxy> m_proxy;
    QTcpSocket *m_client;
    QTcpSocket *m_upstream = nullptr;
    State m_state = State::Sniff;
    QByteArray m_buffer;
    qint64 m_discard = 0;
    TestProxy::Kind m_kind = TestProxy::Kind::Connect;
    QString m_target;
    QString m_record;
    QByteArray m_answerHead;
    bool m_answerHeadDone = false;
    bool m_clientGone = false;
    bool m_upstreamGone = false;
};

} // namespace

TestProxy::TestProxy(QObject *parent)
    : QObject(parent)
    , m_server(new QTcpServer(this))
{
    m_server->setProxy(QNetworkProxy::NoProxy);
    connect(m_server, &QTcpServer::newConnection, this, [this] {
        while (QTcpSocket *socket = m_server->nextPendingConnection()) {
            new Connection(this, socket);
        }
    });
}

TestProxy::~TestProxy() = default;

bool TestProxy::listen()
{
    return m_server->listen(QHostAddress::LocalHost, 0);
}

quint16 TestProxy::port() const
{
    return m_server->serverPort();
}

QString TestProxy::url(const QString &scheme, const QString &userInfo) const
{
    return scheme + QLatin1String("://") + (userInfo.isEmpty() ? QString() : userInfo + QLatin1Char('@')) + QLatin1String("127.0.0.1:")
        + QString::number(port());
}

void TestProxy::requireCredentials(const QString &user, const QString &password)
{
    m_user = user;
    m_password = password;
}

void TestProxy::addHost(const QString &name, const QHostAddress &address)
{
    m_hosts.insert(name.toLower(), address);
}

int TestProxy::count(const QString &target) const
{
    return count(Kind::Connect, target) + count(Kind::Forward, target) + count(Kind::Socks5, target);
}

int TestProxy::count(Kind kind, const QString &target) const
{
    return m_counts.value(kindName(kind) + QLatin1Char('|') + target.toLower());
}

int TestProxy::total() const
{
    int sum = 0;
    for (const int n : m_counts)
        sum += n;
    return sum;
}

void TestProxy::reset()
{
    m_counts.clear();
    m_log.clear();
    m_refused = 0;
}

bool TestProxy::credentialsMatch(const QString &user, const QString &password) const
{
    return user == m_user && password == m_password;
}

QHostAddress TestProxy::resolve(const QString &host) const
{
    return m_hosts.value(host.toLower());
}

void TestProxy::record(Kind kind, const QString &target, const QString &line)
{
    ++m_counts[kindName(kind) + QLatin1Char('|') + target.toLower()];
    m_log << line;
}

} // namespace Starforge::Testing
