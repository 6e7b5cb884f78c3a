// The Kubernetes client's pieces that need no server: watch framing across every split,
// backoff growth and jitter, Retry-After, Status errors turned into sentences, REST paths, and
// the client settings read from a profile.

#include "core/config/effectiveconfig.h"
#include "core/kube/apierror.h"
#include "core/kube/kubeclient.h"
#include "core/kube/resourcekind.h"
#include "core/kube/watchdecoder.h"
#include "core/net/backoff.h"
#include "support/testutil.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QLocale>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Kube;

class TestKubeProtocol : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void watchFramingAtEverySplit()
    {
        const QByteArray stream =
            "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}\n"
            "\r\n"
            "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"2\"}}}\r\n"
            "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"3\"}}}\n"
            "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"4\"}}}\n"
            "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}}\n";
        for (int split = 0; split <= stream.size(); ++split) {
            WatchDecoder decoder;
            QList<WatchEvent> events = decoder.feed(stream.left(split));
            events += decoder.feed(stream.mid(split));
            QVERIFY2(!decoder.failed(), qPrintable(decoder.problem()));
            QCOMPARE(events.size(), 5);
            QCOMPARE(events[0].type, WatchEvent::Type::Added);
            QCOMPARE(events[1].type, WatchEvent::Type::Modified);
            QCOMPARE(events[2].type, WatchEvent::Type::Bookmark);
            QCOMPARE(events[3].type, WatchEvent::Type::Deleted);
            QCOMPARE(events[4].type, WatchEvent::Type::Error);
            QCOMPARE(events[4].object.value(QLatin1String("code")).toInt(), 410);
            QCOMPARE(decoder.bufferedBytes(), 0);
        }
        // Byte by byte, too.
        WatchDecoder decoder;
        qsizetype count = 0;
        for (char c : stream) count += decoder.feed(QByteArray(1, c)).size();
        QCOMPARE(count, 5);
    }

    void brokenStreamsStopTheDecoder()
    {
        {
            WatchDecoder decoder;
            const auto events = decoder.feed("{\"type\":\"ADDED\",\"object\":{}}\nnot json\n{\"type\":\"ADDED\",\"object\":{}}\n");
            QCOMPARE(events.size(), 1);   // what came before the damage is kept
            QVERIFY(decoder.failed());
            QVERIFY(decoder.problem().contains(QLatin1String("not a JSON object")));
            QVERIFY(decoder.feed("{\"type\":\"ADDED\",\"object\":{}}\n").isEmpty());
        }
        {
            WatchDecoder decoder;
            QVERIFY(decoder.feed("{\"type\":\"RENAMED\",\"object\":{}}\n").isEmpty());
            QVERIFY(decoder.problem().contains(QLatin1String("RENAMED")));
        }
        {
            WatchDecoder decoder;
            decoder.feed("{\"type\":\"ADDED\",\"object\":[1]}\n");
            QVERIFY(decoder.problem().contains(QLatin1String("carries no object")));
        }
        {
            // A line that never ends may not grow without bound.
            WatchDecoder decoder(1024);
            decoder.feed(QByteArray(1000, 'x'));
            QVERIFY(!decoder.failed());
            decoder.feed(QByteArray(100, 'x'));
            QVERIFY(decoder.failed());
            QCOMPARE(decoder.bufferedBytes(), 0);
        }
        {
            // The same cap when the long line arrives whole, in one chunk.
            WatchDecoder decoder(1024);
            const QByteArray small = "{\"type\":\"ADDED\",\"object\":{}}\n";
            const auto events = decoder.feed(small + "{\"type\":\"ADDED\",\"object\":{\"x\":\"" + QByteArray(2000, 'y') + "\"}}\n" + small);
            QCOMPARE(events.size(), 1);
            QVERIFY(decoder.failed());
        }
    }

    void backoffGrowsWithJitterToTheCap()
    {
        double u = 0;
        Net::Backoff backoff(Net::Backoff::Params{}, [&u] { return u; });
        QCOMPARE(backoff.next(), 800);
        QCOMPARE(backoff.next(), 1600);
        QCOMPARE(backoff.next(), 3200);
        u = 0.5;
        QCOMPARE(backoff.next(), 9600);     // 6400 * 1.5
        u = 0;
        QCOMPARE(backoff.next(), 12800);
        QCOMPARE(backoff.next(), 25600);
        QCOMPARE(backoff.next(), 30000);
        u = 0.99;
        QCOMPARE(backoff.next(), 30000);    // jitter never passes the cap
        QCOMPARE(backoff.failures(), 8);
        backoff.reset();
        u = 0;
        QCOMPARE(backoff.next(), 800);
    }

    void retryAfter()
    {
        QCOMPARE(Net::retryAfterMs("1"), 1000);
        QCOMPARE(Net::retryAfterMs(" 30 "), 30000);
        QCOMPARE(Net::retryAfterMs(""), -1);
        QCOMPARE(Net::retryAfterMs("-5"), -1);
        QCOMPARE(Net::retryAfterMs("soon"), -1);
        QCOMPARE(Net::retryAfterMs("99999999"), 3600 * 1000);   // capped at an hour
        const QDateTime inTenSeconds = QDateTime::currentDateTimeUtc().addSecs(10);
        const QByteArray date = QLocale::c().toString(inTenSeconds, QStringLiteral("ddd, dd MMM yyyy HH:mm:ss 'GMT'")).toLatin1();
        const int ms = Net::retryAfterMs(date);
        QVERIFY2(ms > 8000 && ms <= 10000, qPrintable(QString::number(ms)));
    }

    void statusErrors()
    {
        const QByteArray forbidden = QJsonDocument(QJsonObject{
            {QStringLiteral("kind"), QStringLiteral("Status")}, {QStringLiteral("apiVersion"), QStringLiteral("v1")},
            {QStringLiteral("status"), QStringLiteral("Failure")}, {QStringLiteral("reason"), QStringLiteral("Forbidden")},
            {QStringLiteral("message"), QStringLiteral("nodes is forbidden: User \"ml\" cannot list resource \"nodes\" in API group \"\" at the cluster scope")},
            {QStringLiteral("details"), QJsonObject{{QStringLiteral("kind"), QStringLiteral("nodes")}}},
            {QStringLiteral("code"), 403}}).toJson();
        const ApiError e = ApiError::fromHttp(403, forbidden, {}, QStringLiteral("list nodes"));
        QCOMPARE(e.kind, ApiError::Kind::Forbidden);
        QCOMPARE(e.reason, QStringLiteral("Forbidden"));
        QVERIFY(e.message.startsWith(QLatin1String("Not allowed to list nodes: nodes is forbidden: User \"ml\" cannot list")));
        QVERIFY(!e.isTransient());
        QCOMPARE(e.toError().code, Error::Code::Invalid);

        const ApiError gone = ApiError::fromStatusObject(
            QJsonObject{{QStringLiteral("kind"), QStringLiteral("Status")}, {QStringLiteral("code"), 410},
                        {QStringLiteral("reason"), QStringLiteral("Gone")}, {QStringLiteral("message"), QStringLiteral("too old resource version: 5 (9)")}},
            QStringLiteral("watch pods"));
        QVERIFY(gone.isExpired());   // the legacy reason counts as Expired

        const ApiError throttled = ApiError::fromHttp(429, R"({"kind":"Status","code":429,"reason":"TooManyRequests","details":{"retryAfterSeconds":3}})",
                                                      {}, QStringLiteral("list pods"));
        QCOMPARE(throttled.retryAfterMs, 3000);
        QCOMPARE(ApiError::fromHttp(429, {}, "7", QStringLiteral("list pods")).retryAfterMs, 7000);   // the header wins
        QVERIFY(throttled.isTransient());

        const ApiError empty = ApiError::fromHttp(500, {}, {}, QStringLiteral("list pods"));
        QCOMPARE(empty.kind, ApiError::Kind::Server);
        QVERIFY(empty.message.contains(QLatin1String("500")));
        // Garbage never crashes and still says something.
        const ApiError garbage = ApiError::fromHttp(400, QByteArray("\x00\xff{[", 4), {}, QStringLiteral("create pod"));
        QCOMPARE(garbage.kind, ApiError::Kind::Invalid);
        QVERIFY(!garbage.message.isEmpty());
    }

    void restPaths()
    {
        QCOMPARE(ResourceKind::pods().path(QStringLiteral("ml")), QStringLiteral("/api/v1/namespaces/ml/pods"));
        QCOMPARE(ResourceKind::pods().path(), QStringLiteral("/api/v1/pods"));
        QCOMPARE(ResourceKind::nodes().path(QStringLiteral("ignored"), QStringLiteral("gpu-1")), QStringLiteral("/api/v1/nodes/gpu-1"));
        QCOMPARE(ResourceKind::rayJobs().path(QStringLiteral("ml"), QStringLiteral("j")), QStringLiteral("/apis/ray.io/v1/namespaces/ml/rayjobs/j"));
        QCOMPARE(ResourceKind::pods().path(QStringLiteral("ml"), QStringLiteral("chat:8000"), QStringLiteral("proxy")),
                 QStringLiteral("/api/v1/namespaces/ml/pods/chat:8000/proxy"));
        QCOMPARE(ResourceKind::pods().path(QStringLiteral("ml"), QStringLiteral("a/b")), QStringLiteral("/api/v1/namespaces/ml/pods/a%2Fb"));
        QCOMPARE(ResourceKind::rayClusters().qualifiedName(), QStringLiteral("rayclusters.ray.io"));
        QCOMPARE(ResourceKind::eventsV1().apiVersion(), QStringLiteral("events.k8s.io/v1"));
    }

    void clientSettingsFromAProfile()
    {
        Config::Profile profile;
        profile.name = QStringLiteral("lab");
        auto settings = [&](const QMap<QString, QString> &secrets = {}) {
            return Config::EffectiveConfig::resolve(profile, QProcessEnvironment(), secrets);
        };
        auto missing = ClientConfig::fromSettings(settings());
        QVERIFY(!missing);
        QVERIFY(missing.error().message.contains(QLatin1String("FORGE_K8S_API_SERVER")));

        profile.values.insert(QStringLiteral("FORGE_K8S_API_SERVER"), QStringLiteral("https://api.lab:6443"));
        auto noToken = ClientConfig::fromSettings(settings());
        QVERIFY(!noToken);
        QVERIFY(noToken.error().message.contains(QLatin1String("FORGE_K8S_TOKEN")));

        const QMap<QString, QString> secrets{{QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("t0ken-value")}};
        auto systemStore = ClientConfig::fromSettings(settings(secrets));
        QVERIFY2(systemStore, systemStore ? "" : qPrintable(systemStore.error().message));
        QCOMPARE(systemStore->token, QByteArray("t0ken-value"));
        QVERIFY(systemStore->tls.caCertificates.isEmpty());
        QVERIFY(!systemStore->tls.insecureSkipVerify);
        QCOMPARE(systemStore->ns, QStringLiteral("starforge"));

        profile.values.insert(QStringLiteral("FORGE_K8S_CA_FILE"), Testing::dataPath(QStringLiteral("kubeconfig/ca.pem")));
        auto withCa = ClientConfig::fromSettings(settings(secrets));
        QVERIFY2(withCa, withCa ? "" : qPrintable(withCa.error().message));
        QCOMPARE(withCa->tls.caCertificates.size(), 1);

        profile.values.insert(QStringLiteral("FORGE_K8S_CA_FILE"), Testing::dataPath(QStringLiteral("kubeconfig/token.txt")));
        auto notPem = ClientConfig::fromSettings(settings(secrets));
        QVERIFY(!notPem);
        QVERIFY2(notPem.error().message.contains(QLatin1String("no PEM certificate")), qPrintable(notPem.error().message));
        profile.values.remove(QStringLiteral("FORGE_K8S_CA_FILE"));

        // Plain http only to this machine (kubectl proxy); elsewhere the token would travel in
        // clear text.
        for (const char *remote : {"http://api.lab:8080", "http://10.0.0.7:8001", "http://[2001:db8::1]:8001", "http://localhost.evil.example"}) {
            profile.values.insert(QStringLiteral("FORGE_K8S_API_SERVER"), QLatin1String(remote));
            auto refused = ClientConfig::fromSettings(settings(secrets));
            QVERIFY2(!refused, remote);
            QVERIFY2(refused.error().message.contains(QLatin1String("plain http:// to another machine")), qPrintable(refused.error().message));
            QVERIFY(!refused.error().message.contains(QLatin1String("t0ken-value")));
        }
        for (const char *local : {"http://127.0.0.1:8001", "http://localhost:8001", "http://[::1]:8001", "http://127.0.0.2:8001"}) {
            profile.values.insert(QStringLiteral("FORGE_K8S_API_SERVER"), QLatin1String(local));
            auto allowed = ClientConfig::fromSettings(settings(secrets));
            QVERIFY2(allowed, local);
        }
    }
};

QTEST_GUILESS_MAIN(TestKubeProtocol)
#include "tst_kubeprotocol.moc"
