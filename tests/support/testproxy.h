#pragma once

// A proxy for tests, on 127.0.0.1 and a free port, speaking the three protocols the app's clients
// use through Net::proxyFor, told apart by the first byte a client sends:
// - HTTP CONNECT (https targets through an http:// proxy): a tunnel, bytes relayed both ways;
// - absolute-URI requests (http targets through an http:// proxy): forwarded one per connection,
//   the proxy's own headers removed;
// - SOCKS5 (socks5:// and socks5h://): CONNECT by IPv4, IPv6 or domain name, without
//   authentication or with a user name and password (RFC 1929).
// It counts what went through per target "host:port" as the client named it (a name only with
// socks5h or an HTTP proxy), so a test can tell its traffic took the proxy, and can require
// credentials (Proxy-Authorization: Basic, or the SOCKS5 password) and resolve names that only it
// knows, as a proxy at the edge of a private network does. Single-threaded: it runs in the event
// loop of the thread that made it.

#include <QHash>
#include <QHostAddress>
#include <QObject>
#include <QString>
#include <QStringList>

class QTcpServer;

namespace Starforge::Testing {

class TestProxy final : public QObject
{
    Q_OBJECT
public:
    enum class Kind { Connect, Forward, Socks5 };

    explicit TestProxy(QObject *parent = nullptr);
    ~TestProxy() override;

    // Starts listening on 127.0.0.1; false when no port could be had.
    bool listen();
    quint16 port() const;
    // "scheme://[userInfo@]127.0.0.1:port", for a setting or an environment variable.
    QString url(const QString &scheme = QStringLiteral("http"), const QString &userInfo = {}) const;

    // From now on, only clients presenting these credentials get through.
    void requireCredentials(const QString &user, const QString &password);
    // A name only the proxy can resolve: connections to it go to address.
    void addHost(const QString &name, const QHostAddress &address);

    // Tunnels (CONNECT, SOCKS5) and forwarded requests to target, "host:port" in lower case.
    int count(const QString &target) const;
    int count(Kind kind, const QString &target) const;
    int total() const;
    // Clients turned away for missing or wrong credentials (a 407 or a SOCKS5 refusal).
    int refused() const { return m_refused; }
    // What went through, in order: "CONNECT host:port", "GET http://host:port/path",
    // "SOCKS5 domain host:port" or "SOCKS5 address 1.2.3.4:port".
    QStringList log() const { return m_log; }
    void reset();

    // For the connections (testproxy.cpp).
    bool credentialsRequired() const { return !m_user.isEmpty() || !m_password.isEmpty(); }
    bool credentialsMatch(const QString &user, const QString &password) const;
    QHostAddress resolve(const QString &host) const;
    void record(Kind kind, const QString &target, const QString &line);
    void recordRefusal() { ++m_refused; }

private:
    QTcpServer *m_server;
    QString m_user;
    QString m_password;
    QHash<QString, QHostAddress> m_hosts;
    QHash<QString, int> m_counts; // "<kind>|host:port"
    QStringList m_log;
    int m_refused = 0;
};

} // namespace Starforge::Testing
