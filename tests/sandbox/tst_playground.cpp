// Playground pods: the vLLM image runs the sandbox's OpenAI-compatible stand-in, reached through
// pods/proxy over TLS: /health, /v1/models, chat completions as JSON and as an SSE stream token
// by token, max_tokens, errors in vLLM's shape, generation stopping when the client leaves, and
// two servers on the same port in two pods.

#include "sandbox/sandbox.h"
#include "support/sandboxfixture.h"
#include "support/testutil.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Testing;

namespace {

const QString VllmImage = QStringLiteral("vllm/vllm-openai:v0.20.0");

QByteArray vllmPod(const QString &name, const QString &model)
{
    return QJsonDocument(QJsonObject{
        {QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("Pod")},
        {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}}},
        {QStringLiteral("spec"), QJsonObject{{QStringLiteral("containers"), QJsonArray{QJsonObject{
            {QStringLiteral("name"), QStringLiteral("vllm")}, {QStringLiteral("image"), VllmImage},
            {QStringLiteral("args"), QJsonArray{QString(QStringLiteral("/models/") + model), QStringLiteral("--served-model-name"), model,
                                                QStringLiteral("--port"), QStringLiteral("8000"), QStringLiteral("--max-model-len"), QStringLiteral("4096")}},
            {QStringLiteral("ports"), QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("http")}, {QStringLiteral("containerPort"), 8000}}}}}}}}}}).toJson();
}

QByteArray chat(bool stream, int maxTokens = 0, const QString &model = QStringLiteral("qwen"))
{
    QJsonObject body{{QStringLiteral("model"), model}, {QStringLiteral("stream"), stream},
                     {QStringLiteral("messages"), QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                                                         {QStringLiteral("content"), QStringLiteral("How does GRPO work?")}}}}};
    if (maxTokens > 0) body.insert(QStringLiteral("max_tokens"), maxTokens);
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

} // namespace

class TestPlayground : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<SandboxHttp> m_http;
    const QString m_pods = QStringLiteral("/api/v1/namespaces/starforge/pods");

    QString proxy(const QString &pod, const QString &path) { return m_pods + u'/' + pod + QStringLiteral(":8000/proxy") + path; }

private Q_SLOTS:
    void initTestCase()
    {
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("h200:1x8");
        options.tokenRate = 40;
        QString error;
        QVERIFY2(startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
        QCOMPARE(m_http->send("POST", m_pods, vllmPod(QStringLiteral("chat-a"), QStringLiteral("qwen"))).status, 201);
        QCOMPARE(m_http->send("POST", m_pods, vllmPod(QStringLiteral("chat-b"), QStringLiteral("llama"))).status, 201);
        // Ready when /health answers through the proxy, as the app polls it.
        QTRY_COMPARE_WITH_TIMEOUT(m_http->get(proxy(QStringLiteral("chat-a"), QStringLiteral("/health"))).status, 200, 20000);
        QTRY_COMPARE_WITH_TIMEOUT(m_http->get(proxy(QStringLiteral("chat-b"), QStringLiteral("/health"))).status, 200, 20000);
    }
    void cleanupTestCase()
    {
        m_http.reset();
        m_sandbox.reset();
    }

    void modelsAndHealth()
    {
        const HttpReply health = m_http->get(proxy(QStringLiteral("chat-a"), QStringLiteral("/health")));
        QCOMPARE(health.body, QByteArray());
        QCOMPARE(m_http->get(proxy(QStringLiteral("chat-a"), QStringLiteral("/v1/models"))).json().value(QStringLiteral("data")).toArray()
                     .first().toObject().value(QStringLiteral("id")).toString(), QStringLiteral("qwen"));
        // Same port, other pod, other model: each pod has its own address.
        const QJsonObject b = m_http->get(m_pods + QStringLiteral("/chat-b:http/proxy/v1/models")).json();
        QCOMPARE(b.value(QStringLiteral("data")).toArray().first().toObject().value(QStringLiteral("id")).toString(), QStringLiteral("llama"));
        QCOMPARE(b.value(QStringLiteral("data")).toArray().first().toObject().value(QStringLiteral("root")).toString(), QStringLiteral("/models/llama"));
    }

    void completionAsJson()
    {
        const HttpReply reply = m_http->send("POST", proxy(QStringLiteral("chat-a"), QStringLiteral("/v1/chat/completions")), chat(false, 5));
        QCOMPARE(reply.status, 200);
        const QJsonObject body = reply.json();
        QCOMPARE(body.value(QStringLiteral("object")).toString(), QStringLiteral("chat.completion"));
        QVERIFY(body.value(QStringLiteral("id")).toString().startsWith(QStringLiteral("chatcmpl-")));
        const QJsonObject choice = body.value(QStringLiteral("choices")).toArray().first().toObject();
        QCOMPARE(choice.value(QStringLiteral("finish_reason")).toString(), QStringLiteral("length"));
        QCOMPARE(body.value(QStringLiteral("usage")).toObject().value(QStringLiteral("completion_tokens")).toInt(), 5);
        const QString text = choice.value(QStringLiteral("message")).toObject().value(QStringLiteral("content")).toString();
        // Five tokens, which may be fewer words: a word beyond ASCII takes two.
        QVERIFY(!text.isEmpty());
        QVERIFY2(text.split(u' ', Qt::SkipEmptyParts).size() <= 5, qPrintable(text));
        // Deterministic: the same prompt gives the same text.
        const HttpReply again = m_http->send("POST", proxy(QStringLiteral("chat-a"), QStringLiteral("/v1/chat/completions")), chat(false, 5));
        QCOMPARE(again.json().value(QStringLiteral("choices")).toArray().first().toObject().value(QStringLiteral("message")).toObject()
                     .value(QStringLiteral("content")).toString(), text);
    }

    void completionStreamsTokenByToken()
    {
        QNetworkRequest request = m_http->request(proxy(QStringLiteral("chat-a"), QStringLiteral("/v1/chat/completions")), m_sandbox->token());
        request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
        std::unique_ptr<QNetworkReply> reply(m_http->nam().post(request, chat(true, 10)));
        QByteArray stream;
        // What had arrived when the first content token did: counted in events, not in how often
        // readyRead fired (that depends on how often the test's loop looks).
        qsizetype eventsAtFirstToken = -1;
        connect(reply.get(), &QNetworkReply::readyRead, this, [&] {
            stream += reply->readAll();
            if (eventsAtFirstToken < 0 && stream.contains("\"content\"")) eventsAtFirstToken = stream.count("\n\n");
        });
        QTRY_VERIFY_WITH_TIMEOUT(reply->isFinished(), 10000);
        stream += reply->readAll();
        QCOMPARE(reply->error(), QNetworkReply::NoError);
        QVERIFY(reply->header(QNetworkRequest::ContentTypeHeader).toString().startsWith(QStringLiteral("text/event-stream")));
        const QStringList events = QString::fromUtf8(stream).split(QStringLiteral("\n\n"), Qt::SkipEmptyParts);
        QCOMPARE(events.last(), QStringLiteral("data: [DONE]"));
        // The role with the first token, deltas of one or two tokens (or none), the final chunk,
        // [DONE]: as vLLM streams, not one event per token.
        QVERIFY2(events.size() >= 4 && events.size() <= 13, qPrintable(QString::number(events.size())));
        const QJsonObject role = QJsonDocument::fromJson(events.first().mid(6).toUtf8()).object();
        QCOMPARE(role.value(QStringLiteral("choices")).toArray().first().toObject().value(QStringLiteral("delta")).toObject()
                     .value(QStringLiteral("role")).toString(), QStringLiteral("assistant"));
        const QJsonObject last = QJsonDocument::fromJson(events.at(events.size() - 2).mid(6).toUtf8()).object();
        QCOMPARE(last.value(QStringLiteral("choices")).toArray().first().toObject().value(QStringLiteral("finish_reason")).toString(), QStringLiteral("length"));
        // Arriving as generated (40 tokens/s, so 250 ms for the ten): when the first token was
        // there, the end of the stream was not.
        QVERIFY(eventsAtFirstToken > 0);
        QVERIFY2(eventsAtFirstToken < events.size(), qPrintable(QString::number(eventsAtFirstToken)));
        QVERIFY(!QString::fromUtf8(stream.left(stream.indexOf("\"content\""))).contains(QStringLiteral("[DONE]")));
    }

    void errorsInVllmsShape()
    {
        const HttpReply unknown = m_http->send("POST", proxy(QStringLiteral("chat-a"), QStringLiteral("/v1/chat/completions")), chat(false, 0, QStringLiteral("gpt-9")));
        QCOMPARE(unknown.status, 404);
        const QJsonObject error = unknown.json().value(QStringLiteral("error")).toObject();
        QCOMPARE(error.value(QStringLiteral("message")).toString(), QStringLiteral("The model `gpt-9` does not exist."));
        QCOMPARE(error.value(QStringLiteral("type")).toString(), QStringLiteral("NotFoundError"));
        QCOMPARE(error.value(QStringLiteral("code")).toInt(), 404);
        // A port nobody listens on: the API server proxy's own 503.
        const HttpReply closed = m_http->get(m_pods + QStringLiteral("/chat-a:9999/proxy/health"));
        QCOMPARE(closed.status, 503);
        QVERIFY2(closed.message().startsWith(QStringLiteral("error trying to reach service: dial tcp 127.")), qPrintable(closed.message()));
        QVERIFY(closed.message().endsWith(QStringLiteral(":9999: connect: connection refused")));
    }

    void disconnectStopsGeneration()
    {
        QNetworkRequest request = m_http->request(proxy(QStringLiteral("chat-a"), QStringLiteral("/v1/chat/completions")), m_sandbox->token());
        request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
        std::unique_ptr<QNetworkReply> reply(m_http->nam().post(request, chat(true)));
        QByteArray got;
        connect(reply.get(), &QNetworkReply::readyRead, this, [&] { got += reply->readAll(); });
        QTRY_VERIFY_WITH_TIMEOUT(got.count("data: ") >= 3, 10000);
        reply->abort();
        QTRY_VERIFY_WITH_TIMEOUT(m_http->get(m_pods + QStringLiteral("/chat-a/log")).body.contains("aborted"), 10000);
    }
};

QTEST_GUILESS_MAIN(TestPlayground)
#include "tst_playground.moc"
