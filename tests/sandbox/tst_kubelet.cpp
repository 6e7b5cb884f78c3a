// The sandbox kubelet: containers as local processes, init containers, image pull failures
// (absent images, and the private registry without and with a pull secret), env from Secrets,
// restart policies and CrashLoopBackOff, activeDeadlineSeconds, deletion, and pods/log with its
// options, all through the API over TLS.

#include "sandbox/cluster/kubelet.h"
#include "sandbox/sandbox.h"
#include "sandbox/store/objectstore.h"
#include "support/sandboxfixture.h"
#include "support/testutil.h"

#include <QJsonArray>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Testing;

namespace {

const QString Present = QStringLiteral("registry.example/present:1");

QByteArray pod(const QString &name, const QString &script, const QString &restartPolicy = QStringLiteral("Never"),
               const QString &image = Present, const QString &extraSpec = {}, const QString &initScript = {})
{
    QJsonObject spec{{QStringLiteral("restartPolicy"), restartPolicy},
                     {QStringLiteral("containers"),
                      QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("main")}, {QStringLiteral("image"), image},
                                             {QStringLiteral("command"), QJsonArray{QStringLiteral("sh"), QStringLiteral("-c"), script}},
                                             {QStringLiteral("env"), QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("GREETING")},
                                                                                            {QStringLiteral("value"), QStringLiteral("hi")}}}}}}}};
    if (!initScript.isEmpty()) {
        spec.insert(QStringLiteral("initContainers"),
                    QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("prepare")}, {QStringLiteral("image"), Present},
                                           {QStringLiteral("command"), QJsonArray{QStringLiteral("sh"), QStringLiteral("-c"), initScript}}}});
    }
    if (!extraSpec.isEmpty()) {
        const QJsonObject extra = QJsonDocument::fromJson(extraSpec.toUtf8()).object();
        for (auto it = extra.begin(); it != extra.end(); ++it) {
            spec.insert(it.key(), it.value());
        }
    }
    return QJsonDocument(QJsonObject{{QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("Pod")},
                                     {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}}},
                                     {QStringLiteral("spec"), spec}}).toJson();
}

const QString Private = QStringLiteral("registry.sandbox.internal/private/trainer:3");

// A pod's JSON with one more env entry on its container.
QByteArray withEnv(const QByteArray &podJson, const QJsonObject &var)
{
    QJsonObject body = QJsonDocument::fromJson(podJson).object();
    QJsonObject spec = body.value(QStringLiteral("spec")).toObject();
    QJsonArray containers = spec.value(QStringLiteral("containers")).toArray();
    QJsonObject c = containers.first().toObject();
    QJsonArray env = c.value(QStringLiteral("env")).toArray();
    env.append(var);
    c.insert(QStringLiteral("env"), env);
    containers.replace(0, c);
    spec.insert(QStringLiteral("containers"), containers);
    body.insert(QStringLiteral("spec"), spec);
    return QJsonDocument(body).toJson();
}

QJsonObject secretEnv(const QString &var, const QString &secret, const QString &key, bool optional = false)
{
    QJsonObject ref{{QStringLiteral("name"), secret}, {QStringLiteral("key"), key}};
    if (optional) ref.insert(QStringLiteral("optional"), true);
    return QJsonObject{{QStringLiteral("name"), var}, {QStringLiteral("valueFrom"), QJsonObject{{QStringLiteral("secretKeyRef"), ref}}}};
}

// A Secret as `kubectl create secret docker-registry` makes it, or of another type.
QByteArray pullSecret(const QString &name, const QString &server, const QString &type = QStringLiteral("kubernetes.io/dockerconfigjson"))
{
    const QJsonObject auths{{server, QJsonObject{{QStringLiteral("username"), QStringLiteral("robot")}, {QStringLiteral("password"), QStringLiteral("s3cret")},
                                                 {QStringLiteral("auth"), QStringLiteral("cm9ib3Q6czNjcmV0")}}}};
    const QByteArray config = QJsonDocument(QJsonObject{{QStringLiteral("auths"), auths}}).toJson(QJsonDocument::Compact);
    return QJsonDocument(QJsonObject{{QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("Secret")},
                                     {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}}},
                                     {QStringLiteral("type"), type},
                                     {QStringLiteral("data"), QJsonObject{{QStringLiteral(".dockerconfigjson"), QString::fromLatin1(config.toBase64())}}}}).toJson();
}

} // namespace

class TestKubelet : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<SandboxHttp> m_http;
    const QString m_pods = QStringLiteral("/api/v1/namespaces/starforge/pods");

    QJsonObject get(const QString &name) { return m_http->get(m_pods + u'/' + name).json(); }
    QString phase(const QString &name) { return get(name).value(QStringLiteral("status")).toObject().value(QStringLiteral("phase")).toString(); }
    QJsonObject containerStatus(const QString &name, const QString &key = QStringLiteral("containerStatuses"))
    {
        return get(name).value(QStringLiteral("status")).toObject().value(key).toArray().first().toObject();
    }
    QStringList events(const QString &name)
    {
        QStringList out;
        const QJsonArray items = m_http->get(QStringLiteral("/api/v1/namespaces/starforge/events?fieldSelector=involvedObject.name%3D") + name)
                                     .json().value(QStringLiteral("items")).toArray();
        for (const QJsonValue &e : items) {
            out << e.toObject().value(QStringLiteral("reason")).toString() + QStringLiteral(": ") + e.toObject().value(QStringLiteral("message")).toString();
        }
        return out;
    }
    void create(const QByteArray &body) { QCOMPARE(m_http->send("POST", m_pods, body).status, 201); }
    void createSecret(const QByteArray &body) { QCOMPARE(m_http->send("POST", QStringLiteral("/api/v1/namespaces/starforge/secrets"), body).status, 201); }
    QJsonObject waiting(const QString &name)
    {
        return containerStatus(name).value(QStringLiteral("state")).toObject().value(QStringLiteral("waiting")).toObject();
    }

private Q_SLOTS:
    void init()
    {
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("h200:1x8,cpu:1x0");
        options.presentImages = {Present};
        options.crashLoopBackoffMs = 200;
        options.imagePullBackoffMs = 400;
        QString error;
        QVERIFY2(startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
    }
    void cleanup()
    {
        m_http.reset();
        m_sandbox.reset();
    }

    void runsToCompletionWithLogs()
    {
        create(pod(QStringLiteral("ok"), QStringLiteral("echo hello $GREETING; echo oops >&2; printf partial")));
        QTRY_COMPARE_WITH_TIMEOUT(phase(QStringLiteral("ok")), QStringLiteral("Succeeded"), 10000);
        const QJsonObject terminated = containerStatus(QStringLiteral("ok")).value(QStringLiteral("state")).toObject().value(QStringLiteral("terminated")).toObject();
        QCOMPARE(terminated.value(QStringLiteral("exitCode")).toInt(), 0);
        QCOMPARE(terminated.value(QStringLiteral("reason")).toString(), QStringLiteral("Completed"));
        const QStringList seen = events(QStringLiteral("ok"));
        QVERIFY2(seen.contains(QStringLiteral("Pulled: Container image \"registry.example/present:1\" already present on machine")), qPrintable(seen.join(u'\n')));
        QVERIFY(seen.contains(QStringLiteral("Started: Started container main")));

        const HttpReply log = m_http->get(m_pods + QStringLiteral("/ok/log"));
        QCOMPARE(log.status, 200);
        QCOMPARE(log.body, QByteArray("hello hi\noops\npartial\n"));
        QCOMPARE(m_http->get(m_pods + QStringLiteral("/ok/log?tailLines=1")).body, QByteArray("partial\n"));
        QCOMPARE(m_http->get(m_pods + QStringLiteral("/ok/log?limitBytes=3")).body, QByteArray("hel"));
        const QByteArray stamped = m_http->get(m_pods + QStringLiteral("/ok/log?timestamps=true&container=main")).body;
        QVERIFY2(QRegularExpression(QStringLiteral("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{9}Z hello hi\\n")).match(QString::fromUtf8(stamped)).hasMatch(),
                 stamped.constData());
        QCOMPARE(m_http->get(m_pods + QStringLiteral("/ok/log?sinceSeconds=3600")).body, QByteArray("hello hi\noops\npartial\n"));
        const HttpReply badTail = m_http->get(m_pods + QStringLiteral("/ok/log?tailLines=-1"));
        QCOMPARE(badTail.status, 400);
        const HttpReply both = m_http->get(m_pods + QStringLiteral("/ok/log?sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z"));
        QVERIFY(both.message().contains(QStringLiteral("at most one of `sinceTime` or `sinceSeconds` may be specified")));
        QCOMPARE(m_http->get(m_pods + QStringLiteral("/ok/log?container=nope")).message(), QStringLiteral("container nope is not valid for pod ok"));
        QCOMPARE(m_http->get(m_pods + QStringLiteral("/ok/log?previous=true")).message(),
                 QStringLiteral("previous terminated container \"main\" in pod \"ok\" not found"));
        QCOMPARE(m_http->get(m_pods + QStringLiteral("/missing/log")).status, 404);
    }

    void exitCodeFailsThePod()
    {
        create(pod(QStringLiteral("bad"), QStringLiteral("exit 3")));
        QTRY_COMPARE_WITH_TIMEOUT(phase(QStringLiteral("bad")), QStringLiteral("Failed"), 10000);
        const QJsonObject terminated = containerStatus(QStringLiteral("bad")).value(QStringLiteral("state")).toObject().value(QStringLiteral("terminated")).toObject();
        QCOMPARE(terminated.value(QStringLiteral("exitCode")).toInt(), 3);
        QCOMPARE(terminated.value(QStringLiteral("reason")).toString(), QStringLiteral("Error"));
    }

    void missingImageGivesThePullEvents()
    {
        create(pod(QStringLiteral("noimage"), QStringLiteral("true"), QStringLiteral("Never"), QStringLiteral("registry.example/absent:2")));
        QTRY_COMPARE_WITH_TIMEOUT(containerStatus(QStringLiteral("noimage")).value(QStringLiteral("state")).toObject()
                                      .value(QStringLiteral("waiting")).toObject().value(QStringLiteral("reason")).toString(),
                                  QStringLiteral("ImagePullBackOff"), 10000);
        const QStringList seen = events(QStringLiteral("noimage"));
        QVERIFY2(seen.contains(QStringLiteral("Pulling: Pulling image \"registry.example/absent:2\"")), qPrintable(seen.join(u'\n')));
        QVERIFY(seen.contains(QStringLiteral("Failed: Failed to pull image \"registry.example/absent:2\": rpc error: code = NotFound desc = failed to pull "
                                             "and unpack image \"registry.example/absent:2\": failed to resolve reference \"registry.example/absent:2\": "
                                             "registry.example/absent:2: not found")));
        QVERIFY(seen.contains(QStringLiteral("Failed: Error: ErrImagePull")));
        QVERIFY(seen.contains(QStringLiteral("BackOff: Back-off pulling image \"registry.example/absent:2\"")));
        QVERIFY(seen.contains(QStringLiteral("Failed: Error: ImagePullBackOff")));
        QCOMPARE(phase(QStringLiteral("noimage")), QStringLiteral("Pending"));
        // Container events name the container, as the kubelet's do.
        QVERIFY(!m_http->get(QStringLiteral("/api/v1/namespaces/starforge/events?fieldSelector=involvedObject.name%3Dnoimage,"
                                            "involvedObject.fieldPath%3Dspec.containers%7Bmain%7D,reason%3DPulling"))
                     .json().value(QStringLiteral("items")).toArray().isEmpty());
        QCOMPARE(m_http->get(m_pods + QStringLiteral("/noimage/log")).message(),
                 QStringLiteral("container \"main\" in pod \"noimage\" is waiting to start: trying and failing to pull image"));
        // The pull is retried: the events are counted, not repeated.
        QTRY_VERIFY_WITH_TIMEOUT(m_http->get(QStringLiteral("/api/v1/namespaces/starforge/events?fieldSelector=involvedObject.name%3Dnoimage,reason%3DPulling"))
                                     .json().value(QStringLiteral("items")).toArray().first().toObject().value(QStringLiteral("count")).toInt() >= 2, 10000);
        QCOMPARE(Sandbox::Kubelet::normalizeImage(QStringLiteral("busybox")), QStringLiteral("docker.io/library/busybox:latest"));
        QCOMPARE(Sandbox::Kubelet::normalizeImage(QStringLiteral("vllm/vllm-openai:v0.20.0")), QStringLiteral("docker.io/vllm/vllm-openai:v0.20.0"));
    }

    void privateImageNeedsAPullSecret()
    {
        // No imagePullSecrets: the registry's 401, in the runtime's words, then the back-off.
        create(pod(QStringLiteral("anon"), QStringLiteral("true"), QStringLiteral("Never"), Private));
        QTRY_COMPARE_WITH_TIMEOUT(waiting(QStringLiteral("anon")).value(QStringLiteral("reason")).toString(), QStringLiteral("ImagePullBackOff"), 10000);
        const QString unauthorized = QStringLiteral(
            "rpc error: code = Unknown desc = failed to pull and unpack image \"registry.sandbox.internal/private/trainer:3\": "
            "failed to resolve reference \"registry.sandbox.internal/private/trainer:3\": failed to authorize: failed to fetch anonymous token: "
            "unexpected status from GET request to "
            "https://registry.sandbox.internal/token?scope=repository%3Aprivate%2Ftrainer%3Apull&service=registry.sandbox.internal: 401 Unauthorized");
        QStringList seen = events(QStringLiteral("anon"));
        for (const QString &expected : QStringList{QStringLiteral("Pulling: Pulling image \"registry.sandbox.internal/private/trainer:3\""),
                                        QStringLiteral("Failed: Failed to pull image \"registry.sandbox.internal/private/trainer:3\": ") + unauthorized,
                                        QStringLiteral("Failed: Error: ErrImagePull"),
                                        QStringLiteral("BackOff: Back-off pulling image \"registry.sandbox.internal/private/trainer:3\""),
                                        QStringLiteral("Failed: Error: ImagePullBackOff")}) {
            QVERIFY2(seen.contains(expected), qPrintable(expected + QStringLiteral("\n  not in:\n") + seen.join(u'\n')));
        }
        QCOMPARE(phase(QStringLiteral("anon")), QStringLiteral("Pending"));
        // Between attempts the waiting state is the back-off; right after one, the runtime's error.
        const auto state = [this]() -> QString {
            const QJsonObject w = waiting(QStringLiteral("anon"));
            return w.value(QStringLiteral("reason")).toString() + QStringLiteral(": ") + w.value(QStringLiteral("message")).toString();
        };
        QTRY_COMPARE_WITH_TIMEOUT(state(), QStringLiteral("ErrImagePull: ") + unauthorized, 10000);

        // Credentials for another registry, or the right ones in an Opaque Secret, do not count.
        createSecret(pullSecret(QStringLiteral("elsewhere"), QStringLiteral("other.example")));
        createSecret(pullSecret(QStringLiteral("opaque"), QStringLiteral("registry.sandbox.internal"), QStringLiteral("Opaque")));
        create(pod(QStringLiteral("wrong"), QStringLiteral("true"), QStringLiteral("Never"), Private,
                   QStringLiteral(R"({"imagePullSecrets":[{"name":"elsewhere"},{"name":"opaque"}]})")));
        QTRY_VERIFY_WITH_TIMEOUT(events(QStringLiteral("wrong")).contains(QStringLiteral("Failed: Error: ImagePullBackOff")), 10000);
        seen = events(QStringLiteral("wrong"));
        QVERIFY2(seen.contains(QStringLiteral("Failed: Failed to pull image \"registry.sandbox.internal/private/trainer:3\": ") + unauthorized),
                 qPrintable(seen.join(u'\n')));
        QVERIFY(!seen.join(u'\n').contains(QStringLiteral("FailedToRetrieveImagePullSecret")));

        // A pull secret named but not there yet: the kubelet says so and pulls without it; once
        // the Secret exists, the next attempt pulls the image and the container runs.
        create(pod(QStringLiteral("late"), QStringLiteral("exec sleep 4244"), QStringLiteral("Never"), Private,
                   QStringLiteral(R"({"imagePullSecrets":[{"name":"regcred"}]})")));
        QTRY_VERIFY_WITH_TIMEOUT(events(QStringLiteral("late")).contains(QStringLiteral("Failed: Error: ErrImagePull")), 10000);
        seen = events(QStringLiteral("late"));
        QVERIFY2(seen.contains(QStringLiteral("FailedToRetrieveImagePullSecret: Unable to retrieve some image pull secrets (regcred); "
                                              "attempting to pull the image may not succeed.")),
                 qPrintable(seen.join(u'\n')));
        QVERIFY(seen.contains(QStringLiteral("Failed: Failed to pull image \"registry.sandbox.internal/private/trainer:3\": ") + unauthorized));
        createSecret(pullSecret(QStringLiteral("regcred"), QStringLiteral("registry.sandbox.internal")));
        QTRY_COMPARE_WITH_TIMEOUT(phase(QStringLiteral("late")), QStringLiteral("Running"), 10000);
        seen = events(QStringLiteral("late"));
        QVERIFY2(seen.contains(QStringLiteral("Pulled: Successfully pulled image \"registry.sandbox.internal/private/trainer:3\" in 412ms "
                                              "(412ms including waiting). Image size: 52428800 bytes.")),
                 qPrintable(seen.join(u'\n')));
        QVERIFY(seen.contains(QStringLiteral("Started: Started container main")));
        QVERIFY(containerStatus(QStringLiteral("late")).value(QStringLiteral("imageID")).toString()
                    .startsWith(QStringLiteral("registry.sandbox.internal/private/trainer@sha256:")));

        // With the secret from the start (its key in the https://host/v1/ form): pulled at once.
        createSecret(pullSecret(QStringLiteral("regcred-v1"), QStringLiteral("https://registry.sandbox.internal/v1/")));
        create(pod(QStringLiteral("authed"), QStringLiteral("exec sleep 4244"), QStringLiteral("Never"), Private,
                   QStringLiteral(R"({"imagePullSecrets":[{"name":"regcred-v1"}]})")));
        QTRY_COMPARE_WITH_TIMEOUT(phase(QStringLiteral("authed")), QStringLiteral("Running"), 10000);
        seen = events(QStringLiteral("authed"));
        QVERIFY2(!seen.join(u'\n').contains(QStringLiteral("Failed")), qPrintable(seen.join(u'\n')));
        // The pod without a pull secret still cannot pull.
        QCOMPARE(phase(QStringLiteral("anon")), QStringLiteral("Pending"));
        for (const QString &name : {QStringLiteral("late"), QStringLiteral("authed")}) {
            QCOMPARE(m_http->send("DELETE", m_pods + u'/' + name).status, 200);
        }
        QTRY_VERIFY_WITH_TIMEOUT(QProcess::execute(QStringLiteral("pgrep"), {QStringLiteral("-f"), QStringLiteral("sleep 4244")}) == 1, 5000);
    }

    void envFromSecrets()
    {
        // Missing Secret: CreateContainerConfigError with the kubelet's text, until the Secret exists.
        create(withEnv(pod(QStringLiteral("needs"), QStringLiteral("echo token=$HF_TOKEN")),
                       secretEnv(QStringLiteral("HF_TOKEN"), QStringLiteral("hf-token"), QStringLiteral("token"))));
        QTRY_COMPARE_WITH_TIMEOUT(waiting(QStringLiteral("needs")).value(QStringLiteral("reason")).toString(),
                                  QStringLiteral("CreateContainerConfigError"), 10000);
        QCOMPARE(waiting(QStringLiteral("needs")).value(QStringLiteral("message")).toString(), QStringLiteral("secret \"hf-token\" not found"));
        QVERIFY(events(QStringLiteral("needs")).contains(QStringLiteral("Failed: Error: secret \"hf-token\" not found")));
        createSecret(R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"hf-token"},"stringData":{"token":"hf_abc"}})");
        QTRY_COMPARE_WITH_TIMEOUT(phase(QStringLiteral("needs")), QStringLiteral("Succeeded"), 10000);
        QCOMPARE(m_http->get(m_pods + QStringLiteral("/needs/log")).body, QByteArray("token=hf_abc\n"));

        // A key the Secret lacks.
        create(withEnv(pod(QStringLiteral("nokey"), QStringLiteral("true")),
                       secretEnv(QStringLiteral("HF_TOKEN"), QStringLiteral("hf-token"), QStringLiteral("nope"))));
        QTRY_COMPARE_WITH_TIMEOUT(waiting(QStringLiteral("nokey")).value(QStringLiteral("message")).toString(),
                                  QStringLiteral("couldn't find key nope in Secret starforge/hf-token"), 10000);
        QCOMPARE(waiting(QStringLiteral("nokey")).value(QStringLiteral("reason")).toString(), QStringLiteral("CreateContainerConfigError"));

        // Optional references to what is missing are skipped.
        create(withEnv(withEnv(pod(QStringLiteral("optional"), QStringLiteral("echo [$A][$B]")),
                               secretEnv(QStringLiteral("A"), QStringLiteral("absent"), QStringLiteral("x"), true)),
                       secretEnv(QStringLiteral("B"), QStringLiteral("hf-token"), QStringLiteral("nope"), true)));
        QTRY_COMPARE_WITH_TIMEOUT(phase(QStringLiteral("optional")), QStringLiteral("Succeeded"), 10000);
        QCOMPARE(m_http->get(m_pods + QStringLiteral("/optional/log")).body, QByteArray("[][]\n"));
    }

    void initContainersRunFirst()
    {
        create(pod(QStringLiteral("inits"), QStringLiteral("cat marker"), QStringLiteral("Never"), Present, {},
                   QStringLiteral("echo prepared > marker")));
        QTRY_COMPARE_WITH_TIMEOUT(phase(QStringLiteral("inits")), QStringLiteral("Succeeded"), 10000);
        QCOMPARE(m_http->get(m_pods + QStringLiteral("/inits/log?container=main")).body, QByteArray("prepared\n"));
        QCOMPARE(containerStatus(QStringLiteral("inits"), QStringLiteral("initContainerStatuses")).value(QStringLiteral("state")).toObject()
                     .value(QStringLiteral("terminated")).toObject().value(QStringLiteral("reason")).toString(), QStringLiteral("Completed"));

        create(pod(QStringLiteral("initfail"), QStringLiteral("echo never"), QStringLiteral("Never"), Present, {}, QStringLiteral("exit 7")));
        QTRY_COMPARE_WITH_TIMEOUT(phase(QStringLiteral("initfail")), QStringLiteral("Failed"), 10000);
        QCOMPARE(containerStatus(QStringLiteral("initfail")).value(QStringLiteral("state")).toObject().value(QStringLiteral("waiting")).toObject()
                     .value(QStringLiteral("reason")).toString(), QStringLiteral("PodInitializing"));
    }

    void wrongCapsuleHashFailsTheInitContainerVisibly()
    {
        // The init-container path of a file:// working_dir: check the SHA-256, then hand over.
        const QString check = QStringLiteral("printf capsule > capsule.zip; echo '%1  capsule.zip' | sha256sum -c -")
                                  .arg(QStringLiteral("0").repeated(64));
        create(pod(QStringLiteral("hashcheck"), QStringLiteral("true"), QStringLiteral("Always"), Present, {}, check));
        QTRY_VERIFY_WITH_TIMEOUT(containerStatus(QStringLiteral("hashcheck"), QStringLiteral("initContainerStatuses"))
                                     .value(QStringLiteral("restartCount")).toInt() >= 1, 10000);
        const QJsonObject init = containerStatus(QStringLiteral("hashcheck"), QStringLiteral("initContainerStatuses"));
        QCOMPARE(init.value(QStringLiteral("lastState")).toObject().value(QStringLiteral("terminated")).toObject().value(QStringLiteral("exitCode")).toInt(), 1);
        QCOMPARE(phase(QStringLiteral("hashcheck")), QStringLiteral("Pending"));
        QCOMPARE(containerStatus(QStringLiteral("hashcheck")).value(QStringLiteral("state")).toObject().value(QStringLiteral("waiting")).toObject()
                     .value(QStringLiteral("reason")).toString(), QStringLiteral("PodInitializing"));
        const QByteArray log = m_http->get(m_pods + QStringLiteral("/hashcheck/log?container=prepare&previous=true")).body;
        QVERIFY2(log.contains("capsule.zip: FAILED"), log.constData());
    }

    void followStreamsUntilTheContainerEnds()
    {
        create(pod(QStringLiteral("talker"), QStringLiteral("for i in 1 2 3 4 5; do echo line$i; sleep 0.2; done")));
        QTRY_COMPARE_WITH_TIMEOUT(phase(QStringLiteral("talker")), QStringLiteral("Running"), 10000);
        QNetworkReply *follow = m_http->open(m_pods + QStringLiteral("/talker/log?follow=true"));
        QByteArray streamed;
        bool sawDataWhileRunning = false;
        connect(follow, &QNetworkReply::readyRead, this, [&] {
            streamed += follow->readAll();
            sawDataWhileRunning = sawDataWhileRunning || phase(QStringLiteral("talker")) == QLatin1String("Running");
        });
        QTRY_VERIFY_WITH_TIMEOUT(follow->isFinished(), 10000);
        streamed += follow->readAll();
        QCOMPARE(follow->error(), QNetworkReply::NoError);
        // Lines arrive as they are written, and the stream ends when the container does.
        QVERIFY(sawDataWhileRunning);
        QCOMPARE(streamed, QByteArray("line1\nline2\nline3\nline4\nline5\n"));
        follow->deleteLater();
    }

    void crashLoopBackOff()
    {
        create(pod(QStringLiteral("crasher"), QStringLiteral("echo boom; exit 1"), QStringLiteral("Always")));
        QTRY_VERIFY_WITH_TIMEOUT(containerStatus(QStringLiteral("crasher")).value(QStringLiteral("restartCount")).toInt() >= 2, 10000);
        const QJsonObject status = containerStatus(QStringLiteral("crasher"));
        QCOMPARE(status.value(QStringLiteral("lastState")).toObject().value(QStringLiteral("terminated")).toObject().value(QStringLiteral("exitCode")).toInt(), 1);
        const QString uid = get(QStringLiteral("crasher")).value(QStringLiteral("metadata")).toObject().value(QStringLiteral("uid")).toString();
        QTRY_VERIFY_WITH_TIMEOUT(events(QStringLiteral("crasher")).contains(
                                     QStringLiteral("BackOff: Back-off restarting failed container main in pod crasher_starforge(%1)").arg(uid)), 5000);
        QCOMPARE(phase(QStringLiteral("crasher")), QStringLiteral("Running"));
        QCOMPARE(m_http->get(m_pods + QStringLiteral("/crasher/log?previous=true")).body, QByteArray("boom\n"));
    }

    void activeDeadlineFailsThePod()
    {
        create(pod(QStringLiteral("slow"), QStringLiteral("sleep 30"), QStringLiteral("Never"), Present, QStringLiteral(R"({"activeDeadlineSeconds":1})")));
        QTRY_COMPARE_WITH_TIMEOUT(phase(QStringLiteral("slow")), QStringLiteral("Failed"), 10000);
        const QJsonObject status = get(QStringLiteral("slow")).value(QStringLiteral("status")).toObject();
        QCOMPARE(status.value(QStringLiteral("reason")).toString(), QStringLiteral("DeadlineExceeded"));
        QCOMPARE(status.value(QStringLiteral("message")).toString(), QStringLiteral("Pod was active on the node longer than the specified deadline"));
    }

    void deletionStopsTheProcess()
    {
        create(pod(QStringLiteral("sleeper"), QStringLiteral("exec sleep 4243")));
        QTRY_COMPARE_WITH_TIMEOUT(phase(QStringLiteral("sleeper")), QStringLiteral("Running"), 10000);
        const auto running = [] {
            QProcess pgrep;
            pgrep.start(QStringLiteral("pgrep"), {QStringLiteral("-f"), QStringLiteral("sleep 4243")});
            pgrep.waitForFinished();
            return pgrep.exitCode() == 0;
        };
        QTRY_VERIFY(running());
        QCOMPARE(m_http->send("DELETE", m_pods + QStringLiteral("/sleeper")).status, 200);
        QTRY_VERIFY_WITH_TIMEOUT(!running(), 5000);
    }

    void logsNeedAContainerNameWhenThereAreSeveral()
    {
        QJsonObject body = QJsonDocument::fromJson(pod(QStringLiteral("two"), QStringLiteral("true"))).object();
        QJsonObject spec = body.value(QStringLiteral("spec")).toObject();
        QJsonArray containers = spec.value(QStringLiteral("containers")).toArray();
        QJsonObject second = containers.first().toObject();
        second.insert(QStringLiteral("name"), QStringLiteral("side"));
        containers.append(second);
        spec.insert(QStringLiteral("containers"), containers);
        body.insert(QStringLiteral("spec"), spec);
        create(QJsonDocument(body).toJson());
        QCOMPARE(m_http->get(m_pods + QStringLiteral("/two/log")).message(),
                 QStringLiteral("a container name must be specified for pod two, choose one of: [main side]"));
    }
};

QTEST_GUILESS_MAIN(TestKubelet)
#include "tst_kubelet.moc"
