// The S3 client through a proxy (Testing::TestProxy) to a real Ceph radosgw, started by
// scripts/lib/with-radosgw.sh around this executable: FORGE_S3_PROXY as an http:// proxy (radosgw
// is plain http here, so Qt sends absolute-URI requests rather than CONNECT; CONNECT is covered
// against the sandbox's TLS store in tst_proxy_kube), with credentials, and as socks5://; then
// HTTP_PROXY from the environment, which Go's rules (Net::proxyFor) skip for a loopback endpoint
// and for what NO_PROXY names.

#include "core/config/effectiveconfig.h"
#include "core/s3/s3client.h"
#include "support/testproxy.h"
#include "support/testutil.h"

#include <QProcessEnvironment>
#include <QTest>

#include <memory>
#include <optional>

using namespace Starforge;
using namespace Starforge::S3;
using Starforge::Testing::TestProxy;

namespace {

std::unique_ptr<S3Reply> wait(S3Reply *raw)
{
    std::unique_ptr<S3Reply> reply(raw);
    (void)QTest::qWaitFor([&] { return reply->isFinished(); }, 60000); // the caller checks isFinished()
    return reply;
}

QString message(const S3Reply &reply)
{
    return reply.isFinished() ? (reply.result() ? QStringLiteral("ok") : reply.result().error().message) : QStringLiteral("still running");
}

// A put, a get and a listing: each a request of its own, through whatever proxy client has.
void roundTrip(S3Client &client, const QString &key)
{
    const QByteArray data = "through the proxy: " + key.toUtf8();
    auto put = wait(client.putObject(key, data, "text/plain"));
    QVERIFY2(put->result(), qPrintable(message(*put)));
    auto get = wait(client.getObject(key));
    QVERIFY2(get->result(), qPrintable(message(*get)));
    QCOMPARE(get->data(), data);
    auto list = wait(client.listObjects(key));
    QVERIFY2(list->result(), qPrintable(message(*list)));
    QCOMPARE(list->listing().objects.size(), 1);
}

} // namespace

class TestProxyS3 : public QObject
{
    Q_OBJECT

    ClientConfig m_config;
    QString m_target; // radosgw's "127.0.0.1:port", as the proxy counts it
    quint16 m_port = 0;

private Q_SLOTS:
    void initTestCase()
    {
        for (const char *name : { "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy" })
            qunsetenv(name);
        const QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        QVERIFY2(env.contains(QStringLiteral("STARFORGE_TEST_S3_ENDPOINT")),
                 "STARFORGE_TEST_S3_ENDPOINT is not set: run this test as sh scripts/lib/with-radosgw.sh tst_proxy_s3");
        m_config.endpoint = QUrl(env.value(QStringLiteral("STARFORGE_TEST_S3_ENDPOINT")));
        m_config.region = env.value(QStringLiteral("STARFORGE_TEST_S3_REGION"), QStringLiteral("us-east-1"));
        m_config.bucket = QStringLiteral("starforge-proxy");
        m_config.credentials.accessKeyId = env.value(QStringLiteral("STARFORGE_TEST_S3_ACCESS_KEY")).toUtf8();
        m_config.credentials.secretAccessKey = env.value(QStringLiteral("STARFORGE_TEST_S3_SECRET_KEY")).toUtf8();
        m_config.maxAttempts = 1; // a proxy failure shows at once
        m_port = quint16(m_config.endpoint.port());
        m_target = QStringLiteral("127.0.0.1:%1").arg(m_port);
        S3Client direct(m_config);
        auto created = wait(direct.createBucket());
        QVERIFY2(created->result(), qPrintable(message(*created)));
    }

    void httpProxyFromTheSetting()
    {
        TestProxy proxy;
        QVERIFY(proxy.listen());
        // Through the settings, as the app builds its client.
        QProcessEnvironment env;
        env.insert(QStringLiteral("FORGE_S3_ENDPOINT"), m_config.endpoint.toString());
        env.insert(QStringLiteral("FORGE_S3_BUCKET"), m_config.bucket);
        env.insert(QStringLiteral("FORGE_S3_ACCESS_KEY"), QString::fromUtf8(m_config.credentials.accessKeyId));
        env.insert(QStringLiteral("FORGE_S3_SECRET_KEY"), QString::fromUtf8(m_config.credentials.secretAccessKey));
        env.insert(QStringLiteral("FORGE_S3_PROXY"), proxy.url());
        const auto config = ClientConfig::fromEffectiveConfig(Config::EffectiveConfig::resolve(std::nullopt, env));
        QVERIFY2(config, config ? "" : qPrintable(config.error().message));
        S3Client client(*config);
        roundTrip(client, QStringLiteral("http-proxy/object.txt"));
        if (QTest::currentTestFailed())
            return;
        // The loopback endpoint is no exemption for a proxy the profile names.
        QCOMPARE(proxy.count(TestProxy::Kind::Forward, m_target), 3);
        QCOMPARE(proxy.total(), 3);
        QVERIFY2(proxy.log().first().startsWith(QStringLiteral("PUT http://%1/starforge-proxy/http-proxy/object.txt").arg(m_target)),
                 qPrintable(proxy.log().join(u'\n')));
    }

    void httpProxyWithCredentials()
    {
        TestProxy proxy;
        QVERIFY(proxy.listen());
        proxy.requireCredentials(QStringLiteral("s3user"), QStringLiteral("pr0xy:pw"));
        ClientConfig config = m_config;
        config.proxyUrl = proxy.url(QStringLiteral("http"), QStringLiteral("s3user:pr0xy%3Apw"));
        {
            S3Client client(config);
            roundTrip(client, QStringLiteral("http-proxy/with-credentials.txt"));
            if (QTest::currentTestFailed())
                return;
        }
        QCOMPARE(proxy.count(TestProxy::Kind::Forward, m_target), 3);

        config.proxyUrl = proxy.url(QStringLiteral("http"), QStringLiteral("s3user:wrong-password"));
        S3Client refused(config);
        auto get = wait(refused.getObject(QStringLiteral("http-proxy/with-credentials.txt")));
        QVERIFY(get->isFinished());
        QVERIFY(!get->result());
        QVERIFY2(get->result().error().message.contains(QLatin1String("proxy")), qPrintable(message(*get)));
        QCOMPARE(proxy.count(TestProxy::Kind::Forward, m_target), 3);
    }

    void socks5Proxy()
    {
        TestProxy proxy;
        QVERIFY(proxy.listen());
        ClientConfig config = m_config;
        config.proxyUrl = proxy.url(QStringLiteral("socks5"));
        S3Client client(config);
        roundTrip(client, QStringLiteral("socks5/object.txt"));
        if (QTest::currentTestFailed())
            return;
        // Connections, not requests: Qt keeps one open for the three.
        QVERIFY(proxy.count(TestProxy::Kind::Socks5, m_target) >= 1);
        QCOMPARE(proxy.total(), proxy.count(TestProxy::Kind::Socks5, m_target));
        QVERIFY2(proxy.log().first().startsWith(QLatin1String("SOCKS5 address 127.0.0.1:")), qPrintable(proxy.log().join(u'\n')));
    }

    // HTTP_PROXY from the environment, for an endpoint named so that only the proxy can reach it
    // (a store behind the proxy), then for the same name in NO_PROXY, then for the loopback address.
    void environmentProxyAndItsExemptions()
    {
        TestProxy proxy;
        QVERIFY(proxy.listen());
        proxy.addHost(QStringLiteral("s3.proxy.test"), QHostAddress::LocalHost);
        const QString named = QStringLiteral("s3.proxy.test:%1").arg(m_port);
        ClientConfig config = m_config;
        config.endpoint.setHost(QStringLiteral("s3.proxy.test"));

        qputenv("HTTP_PROXY", proxy.url().toUtf8());
        {
            S3Client client(config);
            roundTrip(client, QStringLiteral("environment/object.txt"));
        }
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(proxy.count(TestProxy::Kind::Forward, named), 3);

        // NO_PROXY names it: the client goes straight to a name nobody but the proxy knows.
        proxy.reset();
        qputenv("NO_PROXY", "localhost,.proxy.test");
        {
            S3Client client(config);
            auto get = wait(client.getObject(QStringLiteral("environment/object.txt")));
            QVERIFY(get->isFinished());
            QVERIFY(!get->result());
            QVERIFY2(get->result().error().message.contains(QLatin1String("s3.proxy.test")), qPrintable(message(*get)));
        }
        QCOMPARE(proxy.total(), 0);

        // A loopback endpoint never takes the environment's proxy (Go's rule), NO_PROXY or not.
        qunsetenv("NO_PROXY");
        {
            S3Client client(m_config);
            roundTrip(client, QStringLiteral("environment/loopback.txt"));
        }
        qunsetenv("HTTP_PROXY");
        QCOMPARE(proxy.total(), 0);
    }

    void cleanup()
    {
        qunsetenv("HTTP_PROXY");
        qunsetenv("NO_PROXY");
    }
};

QTEST_GUILESS_MAIN(TestProxyS3)
#include "tst_proxy_s3.moc"
