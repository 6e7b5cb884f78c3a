// Net::proxyFor without a network: which proxy a request takes, from a setting or from the
// environment as Go's net/http reads it (the precedence of the upper-case names, NO_PROXY's forms,
// the loopback exemption, scheme-less values), credentials in the URL, socks5 against socks5h,
// the https:// proxy Qt cannot speak to, errors that name what to fix, and the clients' settings
// and network managers wired to it. Traffic through a real proxy: tst_proxy_s3, tst_proxy_kube.

#include "core/config/effectiveconfig.h"
#include "core/kube/kubeclient.h"
#include "core/logging/logging.h"
#include "core/net/proxy.h"
#include "core/s3/s3client.h"

#include <QNetworkAccessManager>
#include <QTest>

using namespace Starforge;

namespace {

// A proxy as the table writes it: "none", "http://host:port", "socks5://...",
// with "user:password@" when it has credentials.
QString describe(const QNetworkProxy &proxy)
{
    QString scheme;
    switch (proxy.type()) {
    case QNetworkProxy::NoProxy:
        return QStringLiteral("none");
    case QNetworkProxy::HttpProxy:
        scheme = QStringLiteral("http");
        break;
    case QNetworkProxy::Socks5Proxy:
        // "socks5-local" would be a proxy handed addresses resolved here, which kubectl never does.
        scheme = proxy.capabilities().testFlag(QNetworkProxy::HostNameLookupCapability) ? QStringLiteral("socks5")
                                                                                         : QStringLiteral("socks5-local");
        break;
    default:
        return QStringLiteral("type %1").arg(int(proxy.type()));
    }
    const QString credentials = proxy.user().isEmpty() && proxy.password().isEmpty()
        ? QString()
        : proxy.user() + QLatin1Char(':') + proxy.password() + QLatin1Char('@');
    return scheme + QLatin1String("://") + credentials + proxy.hostName() + QLatin1Char(':') + QString::number(proxy.port());
}

QProcessEnvironment environment(const QStringList &assignments)
{
    QProcessEnvironment env;
    for (const QString &assignment : assignments) {
        const qsizetype equals = assignment.indexOf(QLatin1Char('='));
        env.insert(assignment.left(equals), assignment.mid(equals + 1));
    }
    return env;
}

const QStringList ProxyVariables
    = { QStringLiteral("HTTP_PROXY"), QStringLiteral("http_proxy"), QStringLiteral("HTTPS_PROXY"), QStringLiteral("https_proxy"),
        QStringLiteral("NO_PROXY"),   QStringLiteral("no_proxy"),   QStringLiteral("ALL_PROXY"),   QStringLiteral("all_proxy") };

} // namespace

class TestNetProxy : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        // The clients read the process environment; the machine's own proxy must not leak in.
        for (const QString &name : ProxyVariables)
            qunsetenv(qPrintable(name));
    }

    // expected: describe()'s form, or "error:" and words the message must contain.
    void rules_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("setting");
        QTest::addColumn<QStringList>("env");
        QTest::addColumn<QString>("expected");

        const QString api = QStringLiteral("https://api.example.com:6443");
        const QStringList both
            = { QStringLiteral("HTTPS_PROXY=http://secure.corp:3128"), QStringLiteral("HTTP_PROXY=http://plain.corp:3128") };

        // Which variable, as Go's net/http picks it.
        QTest::newRow("https target: HTTPS_PROXY") << api << QString() << both << QStringLiteral("http://secure.corp:3128");
        QTest::newRow("http target: HTTP_PROXY")
            << QStringLiteral("http://s3.example.com") << QString() << both << QStringLiteral("http://plain.corp:3128");
        QTest::newRow("https target ignores HTTP_PROXY")
            << api << QString() << QStringList { QStringLiteral("HTTP_PROXY=http://plain.corp:3128") } << QStringLiteral("none");
        QTest::newRow("upper case wins") << api << QString()
                                         << QStringList { QStringLiteral("HTTPS_PROXY=http://upper:1"),
                                                          QStringLiteral("https_proxy=http://lower:2") }
                                         << QStringLiteral("http://upper:1");
        QTest::newRow("lower case alone") << api << QString() << QStringList { QStringLiteral("https_proxy=http://lower:2") }
                                          << QStringLiteral("http://lower:2");
        QTest::newRow("empty upper case is unset")
            << api << QString() << QStringList { QStringLiteral("HTTPS_PROXY="), QStringLiteral("https_proxy=http://lower:2") }
            << QStringLiteral("http://lower:2");
        QTest::newRow("http_proxy lower case") << QStringLiteral("http://s3.example.com:9000") << QString()
                                               << QStringList { QStringLiteral("http_proxy=http://lower:2") }
                                               << QStringLiteral("http://lower:2");
        QTest::newRow("ALL_PROXY is not read") << api << QString()
                                               << QStringList { QStringLiteral("ALL_PROXY=socks5://all:1080"),
                                                                QStringLiteral("all_proxy=socks5://all:1080") }
                                               << QStringLiteral("none");
        QTest::newRow("nothing set") << api << QString() << QStringList() << QStringLiteral("none");
        QTest::newRow("other schemes: none") << QStringLiteral("ftp://files.example.com") << QString() << both << QStringLiteral("none");

        // Values.
        QTest::newRow("scheme-less name") << api << QString() << QStringList { QStringLiteral("HTTPS_PROXY=proxy.corp:3128") }
                                          << QStringLiteral("http://proxy.corp:3128");
        QTest::newRow("scheme-less IP") << api << QString() << QStringList { QStringLiteral("HTTPS_PROXY=10.0.0.1:3128") }
                                        << QStringLiteral("http://10.0.0.1:3128");
        QTest::newRow("no port: 80") << api << QString() << QStringList { QStringLiteral("HTTPS_PROXY=http://proxy.corp") }
                                     << QStringLiteral("http://proxy.corp:80");
        QTest::newRow("spaces around") << api << QString() << QStringList { QStringLiteral("HTTPS_PROXY=  http://proxy.corp:3128 ") }
                                       << QStringLiteral("http://proxy.corp:3128");
        QTest::newRow("socks5 from the environment")
            << api << QString() << QStringList { QStringLiteral("HTTPS_PROXY=socks5://gate:1080") } << QStringLiteral("socks5://gate:1080");
        QTest::newRow("socks5 default port") << api << QString() << QStringList { QStringLiteral("HTTPS_PROXY=socks5://gate") }
                                             << QStringLiteral("socks5://gate:1080");
        QTest::newRow("credentials in the environment")
            << api << QString() << QStringList { QStringLiteral("HTTPS_PROXY=http://bob:pa%3Ass@proxy.corp:3128") }
            << QStringLiteral("http://bob:pa:ss@proxy.corp:3128");

        // Go's exemption: "localhost" and loopback addresses never take the environment's proxy.
        for (const char *target : { "https://localhost:6443", "https://127.0.0.1:6443", "https://127.8.9.1", "https://[::1]:6443",
                                    "http://127.0.0.1:8001", "https://[::ffff:127.0.0.1]:6443" }) {
            QTest::addRow("loopback %s", target) << QString::fromLatin1(target) << QString() << both << QStringLiteral("none");
        }
        // Only those: a name that merely looks local is proxied, as in Go.
        QTest::newRow("localhost.localdomain is proxied")
            << QStringLiteral("https://localhost.localdomain") << QString() << both << QStringLiteral("http://secure.corp:3128");
        QTest::newRow("kube.localhost is proxied")
            << QStringLiteral("https://kube.localhost") << QString() << both << QStringLiteral("http://secure.corp:3128");

        // NO_PROXY.
        const auto noProxy = [&](const char *name, const QString &target, const QString &list, bool bypassed) {
            QTest::newRow(name) << target << QString() << QStringList { both.first(), QStringLiteral("NO_PROXY=") + list }
                                << (bypassed ? QStringLiteral("none") : QStringLiteral("http://secure.corp:3128"));
        };
        noProxy("* bypasses all", api, QStringLiteral("*"), true);
        noProxy("* among others", api, QStringLiteral("other.org,*"), true);
        noProxy("domain: itself", QStringLiteral("https://example.com"), QStringLiteral("example.com"), true);
        noProxy("domain: subdomain", api, QStringLiteral("example.com"), true);
        noProxy("domain: not a suffix of a word", QStringLiteral("https://badexample.com"), QStringLiteral("example.com"), false);
        noProxy("leading dot: subdomain", api, QStringLiteral(".example.com"), true);
        noProxy("leading dot: not itself", QStringLiteral("https://example.com"), QStringLiteral(".example.com"), false);
        noProxy("*. prefix: subdomain", api, QStringLiteral("*.example.com"), true);
        noProxy("*. prefix: not itself", QStringLiteral("https://example.com"), QStringLiteral("*.example.com"), false);
        noProxy("domain with the port", api, QStringLiteral("example.com:6443"), true);
        noProxy("domain with another port", api, QStringLiteral("example.com:443"), false);
        noProxy("default port counts", QStringLiteral("https://api.example.com"), QStringLiteral("example.com:443"), true);
        noProxy("case and spaces", api, QStringLiteral(" other.org , EXAMPLE.Com "), true);
        noProxy("empty entries", api, QStringLiteral(",,example.com,"), true);
        noProxy("IP", QStringLiteral("https://10.0.0.5:6443"), QStringLiteral("10.0.0.5"), true);
        noProxy("another IP", QStringLiteral("https://10.0.0.6:6443"), QStringLiteral("10.0.0.5"), false);
        noProxy("IP with the port", QStringLiteral("https://10.0.0.5:6443"), QStringLiteral("10.0.0.5:6443"), true);
        noProxy("IP with another port", QStringLiteral("https://10.0.0.5:6443"), QStringLiteral("10.0.0.5:443"), false);
        noProxy("CIDR", QStringLiteral("https://10.20.30.40"), QStringLiteral("10.0.0.0/8"), true);
        noProxy("outside the CIDR", QStringLiteral("https://11.0.0.1"), QStringLiteral("10.0.0.0/8"), false);
        noProxy("CIDR does not match names", api, QStringLiteral("10.0.0.0/8"), false);
        noProxy("IPv6 CIDR", QStringLiteral("https://[fd00::1]:6443"), QStringLiteral("fd00::/8"), true);
        noProxy("IPv6 with the port", QStringLiteral("https://[fd00::1]:6443"), QStringLiteral("[fd00::1]:6443"), true);
        noProxy("IPv6", QStringLiteral("https://[fd00::1]:6443"), QStringLiteral("fd00::1"), true);
        noProxy("an IP entry does not match a name", api, QStringLiteral("10.0.0.5"), false);
        noProxy("a port alone is ignored", api, QStringLiteral(":6443"), false);
        QTest::newRow("no_proxy lower case") << api << QString() << QStringList { both.first(), QStringLiteral("no_proxy=example.com") }
                                             << QStringLiteral("none");
        QTest::newRow("NO_PROXY wins over no_proxy")
            << api << QString()
            << QStringList { both.first(), QStringLiteral("NO_PROXY=other.org"), QStringLiteral("no_proxy=example.com") }
            << QStringLiteral("http://secure.corp:3128");
        QTest::newRow("NO_PROXY spares a bad HTTPS_PROXY")
            << api << QString() << QStringList { QStringLiteral("HTTPS_PROXY=https://tls.corp"), QStringLiteral("NO_PROXY=example.com") }
            << QStringLiteral("none");

        // The setting wins, for every target: kubeconfig's proxy-url.
        const QString setting = QStringLiteral("http://set.corp:8080");
        QTest::newRow("setting over the environment") << api << setting << both << QStringLiteral("http://set.corp:8080");
        QTest::newRow("setting ignores NO_PROXY")
            << api << setting << QStringList { QStringLiteral("NO_PROXY=*") } << QStringLiteral("http://set.corp:8080");
        QTest::newRow("setting for a loopback target")
            << QStringLiteral("https://127.0.0.1:6443") << setting << QStringList() << QStringLiteral("http://set.corp:8080");
        QTest::newRow("setting for an http target")
            << QStringLiteral("http://s3.example.com") << setting << QStringList() << QStringLiteral("http://set.corp:8080");
        QTest::newRow("setting: upper-case scheme")
            << api << QStringLiteral("HTTP://Set.Corp:8080") << QStringList() << QStringLiteral("http://set.corp:8080");
        QTest::newRow("setting: scheme-less") << api << QStringLiteral("set.corp:8080") << QStringList()
                                              << QStringLiteral("http://set.corp:8080");
        QTest::newRow("setting: socks5") << api << QStringLiteral("socks5://gate:1081") << QStringList()
                                         << QStringLiteral("socks5://gate:1081");
        QTest::newRow("setting: socks5h") << api << QStringLiteral("socks5h://gate:1081") << QStringList()
                                          << QStringLiteral("socks5://gate:1081");
        QTest::newRow("setting: socks5h default port")
            << api << QStringLiteral("socks5h://gate") << QStringList() << QStringLiteral("socks5://gate:1080");
        QTest::newRow("setting: credentials, percent-decoded") << api << QStringLiteral("http://alice:s%40cret%20pw@set.corp:8080")
                                                               << QStringList() << QStringLiteral("http://alice:s@cret pw@set.corp:8080");
        QTest::newRow("setting: socks5 credentials") << api << QStringLiteral("socks5h://alice:pw1234@gate:1080") << QStringList()
                                                     << QStringLiteral("socks5://alice:pw1234@gate:1080");

        // Errors name what to fix.
        QTest::newRow("https setting") << api << QStringLiteral("https://tls.corp:3129") << QStringList()
                                       << QStringLiteral("error:FORGE_K8S_PROXY_URL|https://tls.corp:3129|http://|socks5://");
        QTest::newRow("https in HTTPS_PROXY") << api << QString() << QStringList { QStringLiteral("HTTPS_PROXY=https://tls.corp:3129") }
                                              << QStringLiteral("error:HTTPS_PROXY in the environment|http://");
        QTest::newRow("https in https_proxy") << api << QString() << QStringList { QStringLiteral("https_proxy=https://tls.corp:3129") }
                                              << QStringLiteral("error:https_proxy in the environment");
        QTest::newRow("unknown scheme") << api << QStringLiteral("ftp://files.corp") << QStringList()
                                        << QStringLiteral("error:FORGE_K8S_PROXY_URL|'ftp'");
        QTest::newRow("socks4 is not spoken") << api << QString() << QStringList { QStringLiteral("HTTPS_PROXY=socks4://gate:1080") }
                                              << QStringLiteral("error:HTTPS_PROXY|'socks4'");
        QTest::newRow("no host") << api << QStringLiteral("http://:3128") << QStringList()
                                 << QStringLiteral("error:FORGE_K8S_PROXY_URL|not a proxy URL");
        QTest::newRow("bad port in HTTP_PROXY")
            << QStringLiteral("http://s3.example.com") << QString() << QStringList { QStringLiteral("HTTP_PROXY=proxy.corp:99999") }
            << QStringLiteral("error:HTTP_PROXY|not a proxy URL");
    }

    void rules()
    {
        QFETCH(QString, target);
        QFETCH(QString, setting);
        QFETCH(QStringList, env);
        QFETCH(QString, expected);
        const auto proxy = Net::proxyFor(QUrl(target), setting, QStringLiteral("FORGE_K8S_PROXY_URL"), environment(env));
        if (expected.startsWith(QLatin1String("error:"))) {
            QVERIFY2(!proxy, proxy ? qPrintable(describe(*proxy)) : "");
            for (const QString &word : expected.mid(6).split(QLatin1Char('|'))) {
                QVERIFY2(proxy.error().message.contains(word), qPrintable(proxy.error().message + QLatin1String(" lacks ") + word));
            }
            return;
        }
        QVERIFY2(proxy, proxy ? "" : qPrintable(proxy.error().message));
        QCOMPARE(describe(*proxy), expected);
    }

    void httpsProxyErrorIsUnsupportedAndSaysWhy()
    {
        const auto proxy = Net::proxyFor(QUrl(QStringLiteral("https://s3.example.com")), QStringLiteral("https://tls.corp:3129"),
                                         QStringLiteral("FORGE_S3_PROXY"), {});
        QVERIFY(!proxy);
        QCOMPARE(proxy.error().code, Error::Code::Unsupported);
        QVERIFY2(proxy.error().message.startsWith(QLatin1String("FORGE_S3_PROXY")), qPrintable(proxy.error().message));
        QVERIFY2(proxy.error().message.contains(QLatin1String("TLS")), qPrintable(proxy.error().message));
    }

    void credentialsAreSecretAndNeverShown()
    {
        const auto proxy
            = Net::proxyFor(QUrl(QStringLiteral("https://api.example.com")), QStringLiteral("http://carol:Hunter2%21pw@proxy.corp:3128"),
                            QStringLiteral("FORGE_K8S_PROXY_URL"), {});
        QVERIFY(proxy);
        QCOMPARE(proxy->password(), QStringLiteral("Hunter2!pw"));
        // Redacted wherever they turn up in the log, decoded or as written in the URL.
        QVERIFY(!Logging::redact(QStringLiteral("password Hunter2!pw")).contains(QLatin1String("Hunter2")));
        QVERIFY(!Logging::redact(QStringLiteral("http://carol:Hunter2%21pw@proxy.corp:3128")).contains(QLatin1String("Hunter2")));
        // The user name alone is not a secret.
        QVERIFY(Logging::redact(QStringLiteral("user carol")).contains(QLatin1String("carol")));

        // An error sentence goes to the screen unredacted, so it leaves the password out.
        const auto refused
            = Net::proxyFor(QUrl(QStringLiteral("https://api.example.com")), QStringLiteral("https://dave:Opensesame9@tls.corp:3129"),
                            QStringLiteral("FORGE_K8S_PROXY_URL"), {});
        QVERIFY(!refused);
        QVERIFY2(!refused.error().message.contains(QLatin1String("Opensesame9")), qPrintable(refused.error().message));
        QVERIFY2(refused.error().message.contains(QLatin1String("tls.corp:3129")), qPrintable(refused.error().message));
    }

    // FORGE_K8S_PROXY_URL and FORGE_S3_PROXY reach the clients, and bad ones stop at the settings.
    void clientSettings()
    {
        QProcessEnvironment env;
        env.insert(QStringLiteral("FORGE_K8S_API_SERVER"), QStringLiteral("https://api.lab.example:6443"));
        env.insert(QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("t0ken-value"));
        env.insert(QStringLiteral("FORGE_K8S_PROXY_URL"), QStringLiteral("socks5h://gate.lab:1080"));
        env.insert(QStringLiteral("FORGE_S3_ENDPOINT"), QStringLiteral("https://s3.lab.example"));
        env.insert(QStringLiteral("FORGE_S3_ACCESS_KEY"), QStringLiteral("AKIDEXAMPLE"));
        env.insert(QStringLiteral("FORGE_S3_SECRET_KEY"), QStringLiteral("secret-example"));
        env.insert(QStringLiteral("FORGE_S3_PROXY"), QStringLiteral("http://squid.lab:3128"));
        const auto settings = [&] { return Config::EffectiveConfig::resolve(std::nullopt, env); };

        const auto kube = Kube::ClientConfig::fromSettings(settings());
        QVERIFY2(kube, kube ? "" : qPrintable(kube.error().message));
        QCOMPARE(kube->proxyUrl, QStringLiteral("socks5h://gate.lab:1080"));
        {
            Kube::KubeClient client(*kube);
            QCOMPARE(describe(client.network()->proxy()), QStringLiteral("socks5://gate.lab:1080"));
        }
        const auto s3 = S3::ClientConfig::fromEffectiveConfig(settings());
        QVERIFY2(s3, s3 ? "" : qPrintable(s3.error().message));
        QCOMPARE(s3->proxyUrl, QStringLiteral("http://squid.lab:3128"));

        env.insert(QStringLiteral("FORGE_K8S_PROXY_URL"), QStringLiteral("https://tls.lab:3129"));
        env.insert(QStringLiteral("FORGE_S3_PROXY"), QStringLiteral("https://tls.lab:3129"));
        const auto kubeRefused = Kube::ClientConfig::fromSettings(settings());
        QVERIFY(!kubeRefused);
        QVERIFY2(kubeRefused.error().message.startsWith(QLatin1String("FORGE_K8S_PROXY_URL")), qPrintable(kubeRefused.error().message));
        const auto s3Refused = S3::ClientConfig::fromEffectiveConfig(settings());
        QVERIFY(!s3Refused);
        QVERIFY2(s3Refused.error().message.startsWith(QLatin1String("FORGE_S3_PROXY")), qPrintable(s3Refused.error().message));

        // Without the settings, the process environment decides: a bad HTTPS_PROXY is reported
        // with its name when the client is configured.
        env.remove(QStringLiteral("FORGE_K8S_PROXY_URL"));
        env.remove(QStringLiteral("FORGE_S3_PROXY"));
        qputenv("HTTPS_PROXY", "https://tls.lab:3129");
        const auto kubeFromEnv = Kube::ClientConfig::fromSettings(settings());
        const auto s3FromEnv = S3::ClientConfig::fromEffectiveConfig(settings());
        qputenv("HTTPS_PROXY", "http://squid.lab:3128");
        const auto kubeGood = Kube::ClientConfig::fromSettings(settings());
        qunsetenv("HTTPS_PROXY");
        QVERIFY(!kubeFromEnv);
        QVERIFY2(kubeFromEnv.error().message.startsWith(QLatin1String("HTTPS_PROXY")), qPrintable(kubeFromEnv.error().message));
        QVERIFY(!s3FromEnv);
        QVERIFY2(s3FromEnv.error().message.startsWith(QLatin1String("HTTPS_PROXY")), qPrintable(s3FromEnv.error().message));
        QVERIFY(kubeGood);
        QVERIFY(kubeGood->proxyUrl.isEmpty());

        // No proxy anywhere: the network manager is told so explicitly, never left to Qt's
        // system proxy lookup.
        const auto direct = Kube::ClientConfig::fromSettings(settings());
        QVERIFY(direct);
        Kube::KubeClient client(*direct);
        QCOMPARE(client.network()->proxy().type(), QNetworkProxy::NoProxy);
    }
};

QTEST_GUILESS_MAIN(TestNetProxy)
#include "tst_proxy.moc"
