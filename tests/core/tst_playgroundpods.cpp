// The playground's pods: the Pod a launch makes (its TTL as activeDeadlineSeconds, the labels
// and annotations that find it again, vLLM's command line, the readiness probe on /health, the
// storage read-only), what a request is refused for, and on the sandbox: a launched pod becomes
// ready and serves its name through the pod proxy; the cluster ends it at its deadline and the
// reaper deletes it; an expired pod is reaped at once; another owner's pods are never touched.

#include "core/job/ownership.h"
#include "core/kube/kubeclient.h"
#include "core/playground/chatclient.h"
#include "core/playground/playgroundclient.h"
#include "core/playground/playgroundpod.h"
#include "core/playground/vllmmetrics.h"
#include "sandbox/sandbox.h"
#include "support/sandboxfixture.h"
#include "support/sandboxjobs.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Playground;
using namespace Starforge::Testing;

namespace {

Job::ClusterSettings settings(const QString &owner = QStringLiteral("alice@lab.example"))
{
    Job::ClusterSettings s;
    s.ns = QStringLiteral("starforge");
    s.owner = owner;
    s.storagePvc = QStringLiteral("starforge-storage");
    s.storageRoot = QStringLiteral("/starforge");
    return s;
}

LaunchRequest checkpoint()
{
    LaunchRequest r;
    r.model = QStringLiteral("/starforge/jobs/x7k2pq/checkpoints/step_40/policy/weights/model/consolidated");
    r.tokenizer = QStringLiteral("/starforge/jobs/x7k2pq/checkpoints/step_40/policy/tokenizer");
    r.jobId = QStringLiteral("x7k2pq");
    r.step = 40;
    r.series = QStringLiteral("h200");
    r.gpus = 2;
    r.ttlSeconds = 3600;
    r.maxModelLen = 8192;
    return r;
}

QJsonObject at(const QJsonObject &o, const QString &dotted)
{
    QJsonValue v = o;
    for (const QString &k : dotted.split(u'.')) {
        bool index = false;
        const int i = k.toInt(&index);
        v = index ? v.toArray().at(i) : v.toObject().value(k);
    }
    return v.toObject();
}

} // namespace

class TestPlaygroundPods : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<SandboxHttp> m_http;
    std::unique_ptr<Kube::KubeClient> m_client;

    template <typename T>
    T wait(const std::function<void(std::function<void(T)>)> &call)
    {
        std::optional<T> out;
        call([&out](T value) { out.emplace(std::move(value)); });
        if (!QTest::qWaitFor([&out] { return out.has_value(); }, 20000)) qFatal("no answer");
        return std::move(*out);
    }

    // A chat streamed token by token; a stop mid-stream that vLLM sees; vLLM's refusals; the
    // metrics its traffic moved; a mid-stream error and a cut connection told apart from an end.
    void chatThroughTheProxy(PlaygroundClient &alice, const LaunchRequest &named, const QDateTime &now)
    {
        const QList<ChatMessage> question{{QStringLiteral("user"), QStringLiteral("How does GRPO work?")}};
        ChatSettings settings;
        settings.system = QStringLiteral("Answer briefly.");
        settings.maxTokens = 12;
        QCOMPARE(QJsonDocument::fromJson(ChatStream::requestBody(QStringLiteral("m"), question, settings)).object()
                     .value(QStringLiteral("messages")).toArray().first()[QStringLiteral("role")].toString(), QStringLiteral("system"));
        std::unique_ptr<ChatStream> chat(ChatStream::start(m_client.get(), QStringLiteral("starforge"), QStringLiteral("play-b7d4kq"),
                                                           QStringLiteral("Qwen3-0.6B"), question, settings));
        QStringList deltas;
        connect(chat.get(), &ChatStream::delta, this, [&](const QString &text) { deltas << text; });
        QTRY_VERIFY_WITH_TIMEOUT(chat->isFinished(), 20000);
        const ChatReply reply = chat->reply();
        QVERIFY2(!reply.error, reply.error ? qPrintable(reply.error->message) : "");
        QCOMPARE(reply.finishReason, QStringLiteral("length"));
        QCOMPARE(reply.completionTokens, 12);
        QVERIFY2(deltas.size() > 3, qPrintable(deltas.join(u'|')));   // as generated, not at the end
        QCOMPARE(deltas.join(QString()), reply.content);
        QVERIFY(reply.firstTokenMs >= 0 && reply.firstTokenMs <= reply.totalMs);
        QVERIFY2(reply.tokensPerSecond() > 0, qPrintable(QString::number(reply.tokensPerSecond())));

        // Stopped after the first text: what came is kept, and the pod says it aborted.
        settings.maxTokens = 400;
        chat.reset(ChatStream::start(m_client.get(), QStringLiteral("starforge"), QStringLiteral("play-b7d4kq"), QStringLiteral("Qwen3-0.6B"), question, settings));
        connect(chat.get(), &ChatStream::delta, chat.get(), [stream = chat.get()] { stream->stop(); });
        QTRY_VERIFY_WITH_TIMEOUT(chat->isFinished(), 20000);
        QCOMPARE(chat->reply().finishReason, QStringLiteral("abort"));
        QVERIFY(!chat->reply().error);
        QVERIFY(!chat->reply().content.isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods/play-b7d4kq/log")).body.contains("aborted"), 10000);

        // vLLM's refusals, in its words.
        settings.maxTokens = 0;
        chat.reset(ChatStream::start(m_client.get(), QStringLiteral("starforge"), QStringLiteral("play-b7d4kq"), QStringLiteral("Qwen3-0.6B"), question, settings));
        QTRY_VERIFY_WITH_TIMEOUT(chat->isFinished(), 20000);
        QVERIFY(chat->reply().error);
        QVERIFY2(chat->reply().error->message.contains(QStringLiteral("HTTP 400")) && chat->reply().error->message.contains(QStringLiteral("max_tokens")),
                 qPrintable(chat->reply().error->message));
        settings.maxTokens = 8;
        chat.reset(ChatStream::start(m_client.get(), QStringLiteral("starforge"), QStringLiteral("play-b7d4kq"), QStringLiteral("not-served"), question, settings));
        QTRY_VERIFY_WITH_TIMEOUT(chat->isFinished(), 20000);
        QVERIFY2(chat->reply().error && chat->reply().error->message.contains(QStringLiteral("HTTP 404")),
                 chat->reply().error ? qPrintable(chat->reply().error->message) : "no error");

        // The metrics the traffic moved.
        const VllmMetrics metrics = VllmMetrics::parse(m_http->get(ChatStream::proxyPath(QStringLiteral("starforge"), QStringLiteral("play-b7d4kq"), QStringLiteral("/metrics"))).body);
        QVERIFY(metrics.any);
        QVERIFY2(metrics.generationTokens >= 13, qPrintable(QString::number(metrics.generationTokens)));
        QVERIFY(metrics.promptTokens > 0);
        QVERIFY(metrics.requestsFinished >= 1);
        QVERIFY(metrics.meanTimeToFirstTokenSeconds.has_value() && *metrics.meanTimeToFirstTokenSeconds > 0);

        // Faults: an error in the middle of the stream, and a connection cut without an end.
        const auto faulty = [&](const QString &id, const QString &variable) {
            QJsonObject pod = *PlaygroundPod::build(named, ::settings(QStringLiteral("alice@lab.example")), id, now);
            QJsonObject spec = pod.value(QStringLiteral("spec")).toObject();
            QJsonArray containers = spec.value(QStringLiteral("containers")).toArray();
            QJsonObject vllm = containers.first().toObject();
            vllm.insert(QStringLiteral("env"), QJsonArray{QJsonObject{{QStringLiteral("name"), variable}, {QStringLiteral("value"), QStringLiteral("3")}}});
            containers.replace(0, vllm);
            spec.insert(QStringLiteral("containers"), containers);
            pod.insert(QStringLiteral("spec"), spec);
            QVERIFY(wait<Result<PlaygroundInstance>>([&](auto done) { alice.launch(pod, done); }));
            QTRY_COMPARE_WITH_TIMEOUT(m_http->get(ChatStream::proxyPath(QStringLiteral("starforge"), PlaygroundPod::podName(id), QStringLiteral("/health"))).status, 200, 20000);
        };
        faulty(QStringLiteral("b7d4kt"), QStringLiteral("STARFORGE_SANDBOX_VLLM_FAULT_ERROR_AFTER"));
        chat.reset(ChatStream::start(m_client.get(), QStringLiteral("starforge"), QStringLiteral("play-b7d4kt"), QStringLiteral("Qwen3-0.6B"), question, settings));
        QTRY_VERIFY_WITH_TIMEOUT(chat->isFinished(), 20000);
        QVERIFY2(chat->reply().error && chat->reply().error->message.startsWith(QStringLiteral("vLLM stopped the reply")),
                 chat->reply().error ? qPrintable(chat->reply().error->message) : "no error");
        QVERIFY(!chat->reply().content.isEmpty());
        faulty(QStringLiteral("b7d4kv"), QStringLiteral("STARFORGE_SANDBOX_VLLM_FAULT_DROP_AFTER"));
        chat.reset(ChatStream::start(m_client.get(), QStringLiteral("starforge"), QStringLiteral("play-b7d4kv"), QStringLiteral("Qwen3-0.6B"), question, settings));
        QTRY_VERIFY_WITH_TIMEOUT(chat->isFinished(), 20000);
        QVERIFY2(chat->reply().error && chat->reply().error->message.contains(QStringLiteral("ended before vLLM finished")),
                 chat->reply().error ? qPrintable(chat->reply().error->message) : "no error");
        for (const char *id : {"play-b7d4kt", "play-b7d4kv"}) {
            QVERIFY(wait<Result<void>>([&](auto done) { alice.stop(QString::fromLatin1(id), done); }));
        }
    }

private Q_SLOTS:
    void thePod()
    {
        const QDateTime now = QDateTime::fromString(QStringLiteral("2026-12-04T20:00:00Z"), Qt::ISODate);
        const auto built = PlaygroundPod::build(checkpoint(), settings(), QStringLiteral("b7d4kq"), now);
        QVERIFY2(built, built ? "" : qPrintable(built.error().message));
        const QJsonObject pod = *built;
        QCOMPARE(at(pod, QStringLiteral("metadata")).value(QStringLiteral("name")).toString(), QStringLiteral("play-b7d4kq"));
        const QJsonObject labels = at(pod, QStringLiteral("metadata.labels"));
        QCOMPARE(labels.value(QStringLiteral("starforge.dev/component")).toString(), QStringLiteral("playground"));
        QCOMPARE(labels.value(QStringLiteral("starforge.dev/job-id")).toString(), QStringLiteral("x7k2pq"));
        QCOMPARE(labels.value(QStringLiteral("starforge.dev/owner")).toString(), Job::ownerLabelValue(QStringLiteral("alice@lab.example")));
        const QJsonObject annotations = at(pod, QStringLiteral("metadata.annotations"));
        QCOMPARE(annotations.value(QStringLiteral("starforge.dev/owner")).toString(), QStringLiteral("alice@lab.example"));
        QCOMPARE(annotations.value(QStringLiteral("starforge.dev/expires-at")).toString(), QStringLiteral("2026-12-04T21:00:00Z"));
        QCOMPARE(annotations.value(QStringLiteral("starforge.dev/step")).toString(), QStringLiteral("40"));
        const QJsonObject spec = at(pod, QStringLiteral("spec"));
        QCOMPARE(spec.value(QStringLiteral("activeDeadlineSeconds")).toInt(), 3600);
        QCOMPARE(spec.value(QStringLiteral("restartPolicy")).toString(), QStringLiteral("Never"));
        QCOMPARE(at(spec, QStringLiteral("nodeSelector")).value(QStringLiteral("starforge/gpu-series")).toString(), QStringLiteral("h200"));
        const QJsonObject vllm = at(spec, QStringLiteral("containers.0"));
        QStringList args;
        for (const QJsonValue &a : vllm.value(QStringLiteral("args")).toArray()) args << a.toString();
        QCOMPARE(args, (QStringList{checkpoint().model, QStringLiteral("--served-model-name"), QStringLiteral("x7k2pq-step-40"),
                                    QStringLiteral("--tensor-parallel-size"), QStringLiteral("2"), QStringLiteral("--port"), QStringLiteral("8000"),
                                    QStringLiteral("--tokenizer"), checkpoint().tokenizer, QStringLiteral("--max-model-len"), QStringLiteral("8192")}));
        QVERIFY(!args.contains(QStringLiteral("--api-key")));
        QCOMPARE(at(vllm, QStringLiteral("readinessProbe.httpGet")).value(QStringLiteral("path")).toString(), QStringLiteral("/health"));
        QCOMPARE(at(vllm, QStringLiteral("resources.limits")).value(QStringLiteral("nvidia.com/gpu")).toString(), QStringLiteral("2"));
        QCOMPARE(at(vllm, QStringLiteral("volumeMounts.1")).value(QStringLiteral("readOnly")).toBool(), true);
        QCOMPARE(at(spec, QStringLiteral("volumes.1.persistentVolumeClaim")).value(QStringLiteral("readOnly")).toBool(), true);
        // The instance read back from it.
        const PlaygroundInstance instance = PlaygroundInstance::fromPod(pod);
        QCOMPARE(instance.servedName, QStringLiteral("x7k2pq-step-40"));
        QCOMPARE(instance.gpus, 2);
        QCOMPARE(instance.series, QStringLiteral("h200"));
        QCOMPARE(instance.expiresAt, now.addSecs(3600));
        QVERIFY(!instance.expired(now));
        QVERIFY(instance.expired(now.addSecs(3600)));
        // A model name needs no storage.
        LaunchRequest named;
        named.model = QStringLiteral("Qwen/Qwen3-0.6B");
        named.series = QStringLiteral("h200");
        const auto byName = PlaygroundPod::build(named, settings(), QStringLiteral("b7d4kr"), now);
        QVERIFY(byName);
        QCOMPARE(at(*byName, QStringLiteral("spec")).value(QStringLiteral("volumes")).toArray().size(), 1);   // /dev/shm only
        QCOMPARE(PlaygroundPod::servedNameFor(named), QStringLiteral("Qwen3-0.6B"));
    }

    void refusals_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("outside storage") << "model" << "/etc/passwd" << "model: /etc/passwd is not under the storage root /starforge";
        QTest::newRow("dot dot") << "model" << "/starforge/../etc" << "must not contain \"..\"";
        QTest::newRow("not a name") << "model" << "a=1; rm -rf /" << "is neither a path under /starforge nor a model name";
        QTest::newRow("no model") << "model" << "" << "model: required";
        QTest::newRow("tokenizer outside") << "tokenizer" << "/tmp/tok" << "tokenizer: /tmp/tok must be a path under the storage root";
        QTest::newRow("series") << "series" << "h 200" << "series: \"h 200\" is not a GPU series";
        QTest::newRow("gpus") << "gpus" << "0" << "gpus: the tensor parallel size must be between 1 and 64, not 0";
        QTest::newRow("ttl") << "ttl" << "10" << "ttl: must be between 1 minute and 7 days, not 10 s";
        QTest::newRow("job") << "job" << "Bad" << "job: \"Bad\" is not a Starforge job id";
    }
    void refusals()
    {
        QFETCH(QString, field);
        QFETCH(QString, value);
        QFETCH(QString, expected);
        LaunchRequest r = checkpoint();
        if (field == QLatin1String("model")) r.model = value;
        if (field == QLatin1String("tokenizer")) r.tokenizer = value;
        if (field == QLatin1String("series")) r.series = value;
        if (field == QLatin1String("gpus")) r.gpus = value.toInt();
        if (field == QLatin1String("ttl")) r.ttlSeconds = value.toInt();
        if (field == QLatin1String("job")) r.jobId = value;
        const auto built = PlaygroundPod::build(r, settings(), QStringLiteral("b7d4kq"), QDateTime::currentDateTimeUtc());
        QVERIFY(!built);
        QVERIFY2(built.error().message.contains(expected), qPrintable(built.error().message));
        // No owner, no storage claim: said too.
        Job::ClusterSettings bare = settings(QString());
        bare.storagePvc.clear();
        const QString both = PlaygroundPod::problems(checkpoint(), bare).join(u'\n');
        QVERIFY2(both.contains(QStringLiteral("owner: unknown")) && both.contains(QStringLiteral("FORGE_K8S_STORAGE_PVC")), qPrintable(both));
    }

    void onTheSandbox()
    {
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("h200:1x8");
        QString error;
        QVERIFY2(startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
        m_client = std::make_unique<Kube::KubeClient>(kubeClientConfig(*m_sandbox));
        PlaygroundClient alice(m_client.get(), QStringLiteral("starforge"), QStringLiteral("alice@lab.example"));
        PlaygroundClient bob(m_client.get(), QStringLiteral("starforge"), QStringLiteral("bob@lab.example"));
        const QDateTime now = QDateTime::currentDateTimeUtc();

        // Launch: ready, and serving its name through the API server's pod proxy.
        LaunchRequest named;
        named.model = QStringLiteral("Qwen/Qwen3-0.6B");
        named.series = QStringLiteral("h200");
        const auto pod = PlaygroundPod::build(named, settings(), QStringLiteral("b7d4kq"), now);
        QVERIFY(pod);
        const auto launched = wait<Result<PlaygroundInstance>>([&](auto done) { alice.launch(*pod, done); });
        QVERIFY2(launched, launched ? "" : qPrintable(launched.error().message));
        QCOMPARE(launched->name, QStringLiteral("play-b7d4kq"));
        QTRY_VERIFY_WITH_TIMEOUT(([&] {
            const auto listed = wait<Result<QList<PlaygroundInstance>>>([&](auto done) { alice.list(done); });
            return listed && listed->size() == 1 && listed->first().ready;
        }()), 30000);
        // (The sandbox's kubelet runs no probes, so Ready comes before vLLM listens: ask /health
        // through the proxy, as a client should before its first chat anyway.)
        QTRY_COMPARE_WITH_TIMEOUT(m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods/play-b7d4kq:8000/proxy/health")).status, 200, 20000);
        const QJsonObject models = m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods/play-b7d4kq:8000/proxy/v1/models")).json();
        QCOMPARE(models.value(QStringLiteral("data")).toArray().first()[QStringLiteral("id")].toString(), QStringLiteral("Qwen3-0.6B"));

        chatThroughTheProxy(alice, named, now);

        // The cluster ends a pod at its deadline; the reaper then deletes it. Bob's expired pod,
        // and Bob's ended one, stay: they are not Alice's.
        QJsonObject shortLived = *PlaygroundPod::build(named, settings(), QStringLiteral("b7d4kr"), now);
        QJsonObject spec = shortLived.value(QStringLiteral("spec")).toObject();
        spec.insert(QStringLiteral("activeDeadlineSeconds"), 2);
        shortLived.insert(QStringLiteral("spec"), spec);
        QVERIFY(wait<Result<PlaygroundInstance>>([&](auto done) { alice.launch(shortLived, done); }));
        const QJsonObject bobs = *PlaygroundPod::build(named, settings(QStringLiteral("bob@lab.example")), QStringLiteral("b7d4ks"), now.addSecs(-7200));
        QVERIFY(wait<Result<PlaygroundInstance>>([&](auto done) { bob.launch(bobs, done); }));
        QTRY_VERIFY_WITH_TIMEOUT(([&] {
            const auto listed = wait<Result<QList<PlaygroundInstance>>>([&](auto done) { alice.list(done); });
            return listed && std::any_of(listed->cbegin(), listed->cend(), [](const PlaygroundInstance &i) {
                return i.name == QLatin1String("play-b7d4kr") && i.ended() && i.reason == QLatin1String("DeadlineExceeded");
            });
        }()), 20000);
        const auto reaped = wait<Result<QStringList>>([&](auto done) { alice.reap(QDateTime::currentDateTimeUtc(), done); });
        QVERIFY(reaped);
        QCOMPARE(*reaped, QStringList{QStringLiteral("play-b7d4kr")});
        QCOMPARE(m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods/play-b7d4kr")).status, 404);
        QCOMPARE(m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods/play-b7d4ks")).status, 200);   // Bob's, expired, untouched
        QCOMPARE(m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods/play-b7d4kq")).status, 200);   // Alice's, still in time

        // A restarted app finds its time is up: reaped at once, without waiting for the cluster.
        const auto later = wait<Result<QStringList>>([&](auto done) { alice.reap(QDateTime::currentDateTimeUtc().addSecs(7200), done); });
        QVERIFY(later);
        QCOMPARE(*later, QStringList{QStringLiteral("play-b7d4kq")});

        // Stopping is for one's own pods.
        const auto refused = wait<Result<void>>([&](auto done) { alice.stop(QStringLiteral("play-b7d4ks"), done); });
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.contains(QStringLiteral("belongs to bob@lab.example")), qPrintable(refused.error().message));
        QVERIFY(wait<Result<void>>([&](auto done) { bob.stop(QStringLiteral("play-b7d4ks"), done); }));
        QTRY_COMPARE_WITH_TIMEOUT(m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods/play-b7d4ks")).status, 404, 10000);

        // A pod that cannot start is explained as a pending job is: no node of that series.
        LaunchRequest nowhere = named;
        nowhere.series = QStringLiteral("b200");
        QVERIFY(wait<Result<PlaygroundInstance>>([&](auto done) {
            alice.launch(*PlaygroundPod::build(nowhere, ::settings(), QStringLiteral("b7d4kw"), now), done);
        }));
        std::optional<Cluster::Diagnosis> diagnosis;
        QTRY_VERIFY_WITH_TIMEOUT(([&] {
            const auto d = wait<Result<Cluster::Diagnosis>>([&](auto done) { alice.diagnose(QStringLiteral("play-b7d4kw"), nullptr, QStringLiteral("starforge/gpu-series"), done); });
            if (d && d->cause != Cluster::Cause::Unknown) diagnosis = *d;
            return diagnosis.has_value();
        }()), 20000);
        QCOMPARE(diagnosis->causeId(), QStringLiteral("NoNodeMatchesSelector"));
        QVERIFY2(diagnosis->message.contains(QStringLiteral("b200")), qPrintable(diagnosis->message));
        QVERIFY(wait<Result<void>>([&](auto done) { alice.stop(QStringLiteral("play-b7d4kw"), done); }));
        m_client.reset();
        m_http.reset();
        m_sandbox.reset();
    }
};

QTEST_MAIN(TestPlaygroundPods)
#include "tst_playgroundpods.moc"
