#include "core/net/proxy.h"

#include "core/logging/logging.h"

#include <QCoreApplication>
#include <QHostAddress>
#include <QList>
#include <QRegularExpression>
#include <QStringList>

#include <optional>

namespace Starforge::Net {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(Proxy)
};

// A proxy value as it may be shown: the password (and anything else before an '@') left out,
// since an error sentence reaches the screen without going through the log redaction.
QString shown(const QString &value)
{
    const qsizetype start = value.indexOf(QLatin1String("://"));
    const qsizetype authority = start < 0 ? 0 : start + 3;
    qsizetype end = value.indexOf(QLatin1Char('/'), authority);
    if (end < 0)
        end = value.size();
    const qsizetype at = value.lastIndexOf(QLatin1Char('@'), end - 1);
    if (at < authority)
        return value;
    return value.left(authority) + QLatin1String("***@") + value.mid(at + 1);
}

// An IP address written as Go's net.ParseIP accepts it: four decimal octets or an IPv6 literal.
// (QHostAddress alone would also take inet_aton shorthands such as "10.1", which Go reads as a
// domain name.) An IPv4-mapped IPv6 address is returned as IPv4, as Go's To4 compares them.
std::optional<QHostAddress> parseIp(const QString &text)
{
    static const QRegularExpression ipv4(QStringLiteral("^\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}$"));
    const bool looksV4 = ipv4.match(text).hasMatch();
    if (!looksV4 && !text.contains(QLatin1Char(':')))
        return std::nullopt;
    QHostAddress address;
    if (!address.setAddress(text))
        return std::nullopt;
    bool mapped = false;
    const quint32 v4 = address.toIPv4Address(&mapped);
    if (mapped && address.protocol() == QAbstractSocket::IPv6Protocol)
        return QHostAddress(v4);
    return address;
}

// Go's net.SplitHostPort: "host:port" or "[v6]:port"; false when there is no port or too many
// colons. The port may be empty.
bool splitHostPort(const QString &text, QString *host, QString *port)
{
    const qsizetype colon = text.lastIndexOf(QLatin1Char(':'));
    if (colon < 0)
        return false;
    if (text.startsWith(QLatin1Char('['))) {
        const qsizetype close = text.indexOf(QLatin1Char(']'));
        if (close < 0 || close + 1 != colon)
            return false;
        *host = text.mid(1, close - 1);
    } else {
        *host = text.left(colon);
        if (host->contains(QLatin1Char(':')))
            return false;
    }
    if (host->contains(QLatin1Char('[')) || host->contains(QLatin1Char(']')))
        return false;
    *port = text.mid(colon + 1);
    return true;
}

// Whether a request to host:port goes through the environment's proxy: httpproxy's useProxy.
bool useProxy(const QString &targetHost, const QString &port, const QString &noProxy)
{
    if (targetHost == QLatin1String("localhost"))
        return false;
    const std::optional<QHostAddress> ip = parseIp(targetHost);
    if (ip && ip->isLoopback())
        return false;
    const QString host = targetHost.trimmed().toLower();

    for (const QString &entry : noProxy.split(QLatin1Char(','))) {
        const QString p = entry.trimmed().toLower();
        if (p.isEmpty())
            continue;
        if (p == QLatin1String("*"))
            return false;

        // IPv4/CIDR, IPv6/CIDR: Go's ParseCIDR wants a whole address and a prefix length.
        if (const qsizetype slash = p.indexOf(QLatin1Char('/')); slash > 0) {
            bool numeric = false;
            const int length = p.mid(slash + 1).toInt(&numeric);
            if (parseIp(p.left(slash)) && numeric && length >= 0) {
                const auto subnet = QHostAddress::parseSubnet(p);
                if (subnet.second >= 0) {
                    if (ip && ip->isInSubnet(subnet))
                        return false;
                    continue;
                }
            }
        }

        // IPv4:port, [IPv6]:port, domain:port, or the entry without a port.
        QString entryHost;
        QString entryPort;
        if (!splitHostPort(p, &entryHost, &entryPort)) {
            entryHost = p;
            entryPort.clear();
        } else if (entryHost.isEmpty()) {
            continue; // ":80": no host part, ignored as Go does
        }
        const bool portMatches = entryPort.isEmpty() || entryPort == port;
        if (const std::optional<QHostAddress> entryIp = parseIp(entryHost)) {
            if (ip && portMatches && entryIp->isEqual(*ip, QHostAddress::TolerantConversion))
                return false;
            continue;
        }

        // A domain: "example.com" matches itself and its subdomains, ".example.com" and
        // "*.example.com" only the subdomains. Compared in the ASCII (punycode) form.
        if (entryHost.startsWith(QLatin1String("*.")))
            entryHost.remove(0, 1);
        const bool matchHost = !entryHost.startsWith(QLatin1Char('.'));
        QString bare = matchHost ? entryHost : entryHost.mid(1);
        if (const QByteArray ace = QUrl::toAce(bare); !ace.isEmpty())
            bare = QString::fromLatin1(ace);
        const QString suffix = QLatin1Char('.') + bare;
        // As in Go, IP targets are compared too: "0.0.1" matches 10.0.0.1 as a suffix.
        if ((host.endsWith(suffix) || (matchHost && host == bare)) && portMatches)
            return false;
    }
    return true;
}

// The first non-empty of the variables, as Go's getEnvAny; name is the one used, for messages.
QString environmentValue(const QProcessEnvironment &env, const QString &upper, const QString &lower, QString *name)
{
    for (const QString &candidate : { upper, lower }) {
        const QString value = env.value(candidate);
        if (!value.isEmpty()) {
            *name = candidate;
            return value;
        }
    }
    return {};
}

Result<QNetworkProxy> parseProxy(const QString &text, const QString &source)
{
    QString value = text.trimmed();
    // Go takes a value without a scheme as host[:port] of an HTTP proxy ("proxy:3128").
    if (!value.contains(QLatin1String("://")))
        value.prepend(QLatin1String("http://"));
    const QUrl url(value, QUrl::StrictMode);
    if (!url.isValid() || url.host().isEmpty() || url.port() == 0) {
        return Error::invalid(Text::tr("%1 (%2) is not a proxy URL. Write e.g. http://proxy.example.com:3128 or "
                                 "socks5://127.0.0.1:1080.")
                                  .arg(source, shown(text.trimmed())));
    }
    const QString scheme = url.scheme().toLower();
    QNetworkProxy proxy;
    if (scheme == QLatin1String("http")) {
        // Qt tunnels https requests with CONNECT and sends http ones as absolute-URI requests, as
        // Go does; the proxy is given host names, not addresses.
        proxy = QNetworkProxy(QNetworkProxy::HttpProxy, url.host(), quint16(url.port(80)));
    } else if (scheme == QLatin1String("socks5") || scheme == QLatin1String("socks5h")) {
        proxy = QNetworkProxy(QNetworkProxy::Socks5Proxy, url.host(), quint16(url.port(1080)));
        // Both hand the proxy the host name, never an address resolved here: kubectl's SOCKS
        // dialer (Go's) does so for socks5://, and a cluster behind a bastion has a name only the
        // far side can resolve. socks5h:// (curl's spelling for that) is taken as the same.
        proxy.setCapabilities(proxy.capabilities() | QNetworkProxy::HostNameLookupCapability);
    } else if (scheme == QLatin1String("https")) {
        // Qt's QNetworkProxy has no TLS-to-the-proxy type (HttpProxy, Socks5Proxy and caching
        // proxies only), so such a proxy cannot be reached at all.
        return Error::unsupported(Text::tr("%1 (%2) is a proxy reached over TLS (https://), which this app cannot speak to. "
                                     "Give the proxy's plain http:// address instead: requests to https:// servers "
                                     "stay encrypted end to end, the proxy only relays them after CONNECT. A "
                                     "socks5:// proxy works too.")
                                      .arg(source, shown(text.trimmed())));
    } else {
        return Error::invalid(
            Text::tr("%1 (%2) uses the scheme '%3'; a proxy is http://, socks5:// or socks5h://.").arg(source, shown(text.trimmed()), scheme));
    }
    const QString user = url.userName(QUrl::FullyDecoded);
    const QString password = url.password(QUrl::FullyDecoded);
    if (!user.isEmpty() || !password.isEmpty()) {
        proxy.setUser(user);
        proxy.setPassword(password);
        // The password decoded and as written, alone and with the user name (the URL's userinfo
        // as it may be printed). The user name alone is not secret, and a common one would blank
        // out ordinary words in the log.
        const qsizetype authority = value.indexOf(QLatin1String("://")) + 3;
        const QString written = value.mid(authority, value.lastIndexOf(QLatin1Char('@')) - authority);
        Logging::addSecret(password);
        Logging::addSecret(written);
        Logging::addSecret(written.mid(written.indexOf(QLatin1Char(':')) + 1));
        Logging::addSecret(url.userInfo(QUrl::FullyEncoded));
    }
    return proxy;
}

} // namespace

Result<QNetworkProxy> proxyFor(const QUrl &target, const QString &explicitUrl, const QString &settingName, const QProcessEnvironment &env)
{
    if (!explicitUrl.trimmed().isEmpty()) {
        return parseProxy(explicitUrl, settingName.isEmpty() ? Text::tr("The proxy URL") : settingName);
    }

    // The environment. Go reads HTTP(S)_PROXY and NO_PROXY only: ALL_PROXY (curl's) is not read,
    // so kubectl and this app agree on the same shell. Go's refusal of HTTP_PROXY in a CGI
    // process (REQUEST_METHOD set) does not concern a desktop app.
    const QString scheme = target.scheme().toLower();
    QString variable;
    QString value;
    if (scheme == QLatin1String("https")) {
        value = environmentValue(env, QStringLiteral("HTTPS_PROXY"), QStringLiteral("https_proxy"), &variable);
    } else if (scheme == QLatin1String("http")) {
        value = environmentValue(env, QStringLiteral("HTTP_PROXY"), QStringLiteral("http_proxy"), &variable);
    }
    if (value.trimmed().isEmpty()) {
        return QNetworkProxy(QNetworkProxy::NoProxy);
    }
    QString noProxyVariable;
    const QString noProxy = environmentValue(env, QStringLiteral("NO_PROXY"), QStringLiteral("no_proxy"), &noProxyVariable);
    // Names compared in their ASCII (punycode) form, as Go's canonicalAddr has them.
    QString host = target.host();
    if (!parseIp(host)) {
        if (const QByteArray ace = QUrl::toAce(host); !ace.isEmpty())
            host = QString::fromLatin1(ace);
    }
    const int port = target.port(scheme == QLatin1String("https") ? 443 : 80);
    if (!useProxy(host, QString::number(port), noProxy)) {
        return QNetworkProxy(QNetworkProxy::NoProxy);
    }
    return parseProxy(value, Text::tr("%1 in the environment").arg(variable));
}

} // namespace Starforge::Net
