// The Kubernetes client through a proxy (Testing::TestProxy) to the sandbox's API server over TLS:
// FORGE_K8S_PROXY_URL as an http:// proxy (CONNECT), with credentials, unreachable, and as
// socks5:// and socks5h:// (both resolve at the proxy, as kubectl's); HTTPS_PROXY from the environment, with NO_PROXY and the loopback
// exemption skipping it; and the S3 client to the sandbox's TLS store through CONNECT.
//
// A cluster "behind" the proxy is the sandbox under a name only the proxy resolves
// (kube.proxy.test), since Go's rules never send a loopback address through the environment's
// proxy. The sandbox's certificate names 127.0.0.1 and localhost, so for that name the tests
// accept a host-name mismatch and nothing else: the CA is still checked.

#include "core/config/effectiveconfig.h"
#include "core/kube/kubeclient.h"
#include "core/kube/resourcekind.h"
#include "core/s3/s3client.h"
#include "support/sandboxfixture.h"
#include "support/testproxy.h"
#include "support/testutil.h"

#include <QJsonArray>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSslError>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

#include <memory>
#include <optional>

using namespace Starforge;
using Starforge::Testing::TestProxy;

namespace {

const QString BehindTheProxy = QStringLiteral("kube.proxy.test");

Kube::ApiResult listNodes(Kube::KubeClient &client)
{
    Kube::ApiRequest request;
    request.path = Kube::ResourceKind::nodes().path();
    request.what = QStringLiteral("list nodes");
    std::optional<Kube::ApiResult> result;
    QObject context;
    client.send(request, &context, [&](const Kube::ApiResult &r) { result = r; });
    Testing::waitFor(result, 30000);
    return result.value_or(Kube::ApiResult {});
}

// Accepts the sandbox's certificate under a name it was not made for; any other error stands.
void acceptHostNameMismatch(QNetworkAccessManager *network)
{
    QObject::connect(network, &QNetworkAccessManager::sslErrors, network, [](QNetworkReply *reply, const QList<QSslError> &errors) {
        for (const QSslError &error : errors) {
            if (error.error() != QSslError::HostNameMismatch)
                return;
        }
        reply->ignoreSslErrors(errors);
    });
}

QString errorOf(const Kube::ApiResult &result)
{
    return result.error ? result.error->message : QStringLiteral("no error (status %1)").arg(result.status);
}

} // namespace

class TestProxyKube : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<Testing::SandboxHttp> m_http;
    quint16 m_port = 0;

    QUrl server(const QString &host = QStringLiteral("127.0.0.1")) const
    {
        QUrl url = m_sandbox->apiServerUrl();
        url.setHost(host);
        return url;
    }

    // The client as the app builds it from a profile's settings.
    std::unique_ptr<Kube::KubeClient> client(const QString &proxyUrl, const QUrl &apiServer)
    {
        QProcessEnvironment env;
        env.insert(QStringLiteral("FORGE_K8S_API_SERVER"), apiServer.toString());
        env.insert(QStringLiteral("FORGE_K8S_TOKEN"), QString::fromUtf8(m_sandbox->token()));
        env.insert(QStringLiteral("FORGE_K8S_CA_FILE"), m_sandbox->caFile());
        if (!proxyUrl.isEmpty())
            env.insert(QStringLiteral("FORGE_K8S_PROXY_URL"), proxyUrl);
        const auto config = Kube::ClientConfig::fromSettings(Config::EffectiveConfig::resolve(std::nullopt, env));
        if (!config) {
            qWarning().noquote() << config.error().message;
            return nullptr;
        }
        auto made = std::make_unique<Kube::KubeClient>(*config);
        acceptHostNameMismatch(made->network());
        return made;
    }

private Q_SLOTS:
    void initTestCase()
    {
        for (const char *name : { "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy" })
            qunsetenv(name);
        QVERIFY(m_dir.isValid());
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("cpu:1x0");
        QString error;
        QVERIFY2(Testing::startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
        m_port = quint16(m_sandbox->apiServerUrl().port());
    }

    void cleanupTestCase()
    {
        m_http.reset();
        m_sandbox.reset();
    }

    void cleanup()
    {
        qunsetenv("HTTPS_PROXY");
        qunsetenv("NO_PROXY");
    }

    void settingTunnelsWithConnect()
    {
        TestProxy proxy;
        QVERIFY(proxy.listen());
        auto kube = client(proxy.url(), server());
        QVERIFY(kube);
        const Kube::ApiResult first = listNodes(*kube);
        QVERIFY2(first.ok(), qPrintable(errorOf(first)));
        QCOMPARE(first.json().value(QLatin1String("items")).toArray().size(), 1);
        QVERIFY2(listNodes(*kube).ok(), "second request");
        // The profile's proxy takes even a loopback server; the kept-alive tunnel carries both.
        const QString target = QStringLiteral("127.0.0.1:%1").arg(m_port);
        QVERIFY2(proxy.count(TestProxy::Kind::Connect, target) >= 1, qPrintable(proxy.log().join(u'\n')));
        QCOMPARE(proxy.total(), proxy.count(TestProxy::Kind::Connect, target));
    }

    void settingWithCredentials()
    {
        TestProxy proxy;
        QVERIFY(proxy.listen());
        proxy.requireCredentials(QStringLiteral("kubeuser"), QStringLiteral("s3cr3t@pw"));
        {
            auto kube = client(proxy.url(QStringLiteral("http"), QStringLiteral("kubeuser:s3cr3t%40pw")), server());
            QVERIFY(kube);
            const Kube::ApiResult result = listNodes(*kube);
            QVERIFY2(result.ok(), qPrintable(errorOf(result)));
        }
        QCOMPARE(proxy.count(TestProxy::Kind::Connect, QStringLiteral("127.0.0.1:%1").arg(m_port)), 1);
        QVERIFY(proxy.refused() <= 1); // at most the first CONNECT, before Qt answers the 407 challenge

        auto wrong = client(proxy.url(QStringLiteral("http"), QStringLiteral("kubeuser:nope")), server());
        QVERIFY(wrong);
        const Kube::ApiResult refused = listNodes(*wrong);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error->kind, Kube::ApiError::Kind::Transport);
        QVERIFY2(refused.error->message.contains(QLatin1String("proxy")), qPrintable(errorOf(refused)));
        QCOMPARE(proxy.total(), 1);
    }

    void unreachableProxyIsNamed()
    {
        QTcpServer closed; // a port that was free a moment ago: nothing listens there now
        QVERIFY(closed.listen(QHostAddress::LocalHost));
        const quint16 port = closed.serverPort();
        closed.close();
        auto kube = client(QStringLiteral("http://127.0.0.1:%1").arg(port), server());
        QVERIFY(kube);
        const Kube::ApiResult result = listNodes(*kube);
        QVERIFY(!result.ok());
        // Qt reports this as an unknown network error ("Proxy connection refused"), not as
        // ProxyConnectionRefusedError, so the sentence carries Qt's words for it.
        QVERIFY2(result.error->message.contains(QLatin1String("proxy"), Qt::CaseInsensitive), qPrintable(errorOf(result)));
        QVERIFY2(result.error->message.contains(QLatin1String("list nodes")), qPrintable(errorOf(result)));
        // The proxy is named by its address, and so is the setting to fix.
        QVERIFY2(result.error->message.contains(QStringLiteral("proxy 127.0.0.1:%1 in front of").arg(port)), qPrintable(errorOf(result)));
        QVERIFY2(result.error->message.contains(QLatin1String("FORGE_K8S_PROXY_URL")), qPrintable(errorOf(result)));
    }

    // socks5:// and socks5h:// both hand the proxy the name, as kubectl does: a name only the
    // far side knows still works.
    void socksResolvesAtTheProxy_data()
    {
        QTest::addColumn<QString>("scheme");
        QTest::newRow("socks5") << QStringLiteral("socks5");
        QTest::newRow("socks5h") << QStringLiteral("socks5h");
    }
    void socksResolvesAtTheProxy()
    {
        QFETCH(QString, scheme);
        TestProxy proxy;
        QVERIFY(proxy.listen());
        proxy.addHost(BehindTheProxy, QHostAddress::LocalHost);
        const QString target = QStringLiteral("%1:%2").arg(BehindTheProxy).arg(m_port);
        {
            auto kube = client(proxy.url(scheme), server(BehindTheProxy));
            QVERIFY(kube);
            const Kube::ApiResult result = listNodes(*kube);
            QVERIFY2(result.ok(), qPrintable(errorOf(result)));
        }
        QCOMPARE(proxy.count(TestProxy::Kind::Socks5, target), 1);
        QCOMPARE(proxy.log(), QStringList { QStringLiteral("SOCKS5 domain ") + target });
    }

    void environmentProxy()
    {
        TestProxy proxy;
        QVERIFY(proxy.listen());
        proxy.addHost(BehindTheProxy, QHostAddress::LocalHost);
        const QString target = QStringLiteral("%1:%2").arg(BehindTheProxy).arg(m_port);
        qputenv("HTTPS_PROXY", proxy.url().toUtf8());
        {
            auto kube = client({}, server(BehindTheProxy));
            QVERIFY(kube);
            const Kube::ApiResult result = listNodes(*kube);
            QVERIFY2(result.ok(), qPrintable(errorOf(result)));
        }
        QCOMPARE(proxy.count(TestProxy::Kind::Connect, target), 1);
        QCOMPARE(proxy.total(), 1);

        // NO_PROXY names the cluster: the client goes straight there, and only the proxy knew it.
        proxy.reset();
        qputenv("NO_PROXY", "10.0.0.0/8, .proxy.test");
        {
            auto kube = client({}, server(BehindTheProxy));
            QVERIFY(kube);
            const Kube::ApiResult result = listNodes(*kube);
            QVERIFY(!result.ok());
            QVERIFY2(result.error->message.contains(QLatin1String("was not found")), qPrintable(errorOf(result)));
        }
        QCOMPARE(proxy.total(), 0);

        // The loopback address never takes the environment's proxy (Go's rule).
        qunsetenv("NO_PROXY");
        {
            auto kube = client({}, server());
            QVERIFY(kube);
            const Kube::ApiResult result = listNodes(*kube);
            QVERIFY2(result.ok(), qPrintable(errorOf(result)));
        }
        QCOMPARE(proxy.total(), 0);
    }

    // The S3 client's https requests tunnel with CONNECT (radosgw in tst_proxy_s3 is plain http).
    void s3TunnelsWithConnect()
    {
        TestProxy proxy;
        QVERIFY(proxy.listen());
        S3::ClientConfig config;
        config.endpoint = m_sandbox->s3Endpoint();
        config.bucket = m_sandbox->bucket();
        config.credentials.accessKeyId = m_sandbox->s3AccessKey();
        config.credentials.secretAccessKey = m_sandbox->s3SecretKey();
        Net::TlsSettings tls;
        tls.caCertificates = QSslCertificate::fromData(m_sandbox->caCertificatePem(), QSsl::Pem);
        config.policy = Net::RequestPolicy(tls, 30000);
        config.proxyUrl = proxy.url();
        config.maxAttempts = 1;
        S3::S3Client s3(config);
        QObject context;
        std::optional<Result<void>> put;
        s3.putObject(QStringLiteral("proxy/hello.txt"), "hello", "text/plain", &context, [&](Result<void> r) { put = std::move(r); });
        QVERIFY(Testing::waitFor(put, 30000));
        QVERIFY2(*put, qPrintable(put->ok() ? QString() : put->error().message));
        std::optional<Result<QByteArray>> get;
        s3.getObject(QStringLiteral("proxy/hello.txt"), &context, [&](Result<QByteArray> r) { get = std::move(r); });
        QVERIFY(Testing::waitFor(get, 30000));
        QVERIFY2(*get, qPrintable(get->ok() ? QString() : get->error().message));
        QCOMPARE(**get, QByteArray("hello"));
        const QString target = QStringLiteral("127.0.0.1:%1").arg(m_sandbox->s3Endpoint().port());
        QVERIFY2(proxy.count(TestProxy::Kind::Connect, target) >= 1, qPrintable(proxy.log().join(u'\n')));
        QCOMPARE(proxy.total(), proxy.count(TestProxy::Kind::Connect, target));
    }
};

QTEST_GUILESS_MAIN(TestProxyKube)
#include "tst_proxy_kube.moc"
