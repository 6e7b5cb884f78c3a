// Each way of signing in that real kubeconfigs use, end to end against the sandbox over TLS:
// every context of the sandbox's kubeconfig (token, client certificate files, exec plugin) and a
// client certificate given inline is imported as a profile would be, then lists pods and submits
// a job through the app's own submit path (Capsule upload to the sandbox's S3, RayJob create). An exec
// token that expires while an informer watches is renewed without a relist, twenty requests at
// expiry run the plugin once, and an expired client certificate or a missing plugin says so.

#include "core/config/effectiveconfig.h"
#include "core/config/kubeconfig.h"
#include "core/job/jobspec.h"
#include "core/job/submitter.h"
#include "core/kube/execcredentialprovider.h"
#include "core/kube/informer.h"
#include "core/kube/kubeclient.h"
#include "core/kube/resourcekind.h"
#include "core/kube/selfsubjectreview.h"
#include "support/sandboxfixture.h"
#include "support/sandboxjobs.h"
#include "support/testcertificates.h"
#include "support/testutil.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Testing;

class TestClientAuthSandbox : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<SandboxHttp> m_http;
    QString m_log;

    // The settings a profile imported from context would have, secrets included.
    Result<Kube::ClientConfig> clientFor(const QString &context, const QMap<QString, QString> &overrides = {})
    {
        auto config = Config::Kubeconfig::load({m_sandbox->kubeconfigFile()});
        if (!config) return config.error();
        auto imported = config->importContext(context);
        if (!imported) return imported.error();
        Config::Profile profile{QStringLiteral("p"), imported->values};
        for (auto it = overrides.cbegin(); it != overrides.cend(); ++it) profile.values.insert(it.key(), it.value());
        QMap<QString, QString> secrets;
        for (auto it = imported->secrets.cbegin(); it != imported->secrets.cend(); ++it) {
            if (!it.value().isEmpty()) secrets.insert(it.key(), it.value());
        }
        return Kube::ClientConfig::fromSettings(Config::EffectiveConfig::resolve(profile, QProcessEnvironment(), secrets));
    }

    static Kube::ApiResult listPods(Kube::KubeClient &client)
    {
        Kube::ApiRequest request;
        request.path = Kube::ResourceKind::pods().path(client.config().ns);
        std::optional<Kube::ApiResult> result;
        QObject context;
        client.send(request, &context, [&result](const Kube::ApiResult &r) { result = r; });
        (void)QTest::qWaitFor([&] { return result.has_value(); }, 30000);
        return result.value_or(Kube::ApiResult{});
    }

    // Submits a small job signed in as client is, and names what went wrong if it did not end
    // with the RayJob created.
    QString submitWith(Kube::KubeClient &client, const QString &tag)
    {
        const QString code = m_dir.filePath(QStringLiteral("code-") + tag);
        QDir().mkpath(code + QStringLiteral("/configs"));
        writeFile(code + QStringLiteral("/configs/run.yaml"), QByteArray("grpo:\n  max_num_steps: 1\n# ") + tag.toUtf8() + '\n');
        writeFile(code + QStringLiteral("/jobspec.json"),
                  "{\"version\":1,\"name\":\"auth\",\"recipe\":{\"algorithm\":\"grpo\",\"config\":\"configs/run.yaml\"},"
                  "\"pools\":[{\"name\":\"train\",\"series\":\"h100\",\"nodes\":1,\"gpusPerNode\":1}]}");
        auto spec = Job::JobSpec::load(code + QStringLiteral("/jobspec.json"));
        if (!spec) return spec.error().message;
        S3::S3Client s3(s3ClientConfig(*m_sandbox));
        // The job's owner is whoever the cluster says these credentials are, as a Session
        // without FORGE_OWNER asks: each way of signing in must give the cluster a name.
        std::optional<QString> owner;
        QString whoAmIError;
        bool answered = false;
        QObject whoAmIContext;
        Kube::whoAmI(&client, &whoAmIContext, [&](std::optional<QString> username, std::optional<Kube::ApiError> error) {
            owner = std::move(username);
            if (error) whoAmIError = error->message;
            answered = true;
        });
        if (!QTest::qWaitFor([&] { return answered; }, 30000)) return QStringLiteral("no answer to the SelfSubjectReview");
        if (!owner || owner->isEmpty()) return QStringLiteral("the cluster did not name the user: ") + whoAmIError;
        Job::SubmitOptions options;
        options.spec = *spec;
        options.settings.owner = *owner;
        options.runnerPexPath = QStringLiteral(SF_BIN_DIR "/../share/starforge/runner.pex");
        Job::Submitter submitter(&client, &s3, options);
        submitter.start();
        if (!QTest::qWaitFor([&] { return submitter.stage() == Job::Submitter::Stage::Done || submitter.stage() == Job::Submitter::Stage::Failed; },
                             60000)) {
            return QStringLiteral("the submission did not end");
        }
        if (!submitter.result()) return submitter.result().error().message;
        Kube::ApiRequest get;
        get.path = QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs/") + submitter.result()->rayJobName;
        std::optional<Kube::ApiResult> created;
        QObject context;
        client.send(get, &context, [&created](const Kube::ApiResult &r) { created = r; });
        (void)QTest::qWaitFor([&] { return created.has_value(); }, 30000);
        if (!created || !created->ok()) return QStringLiteral("the RayJob is not there");
        return {};
    }

    int pluginRuns() const
    {
        QFile file(m_log);
        return file.open(QIODevice::ReadOnly) ? static_cast<int>(file.readAll().count('\n')) : 0;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_log = m_dir.filePath(QStringLiteral("credential.log"));
        // The plugin inherits this process's environment, as under kubectl.
        qputenv("STARFORGE_CREDENTIAL_LOG", m_log.toUtf8());
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        QString error;
        QVERIFY2(startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
    }

    void everyContextListsAndSubmits_data()
    {
        QTest::addColumn<QString>("context");
        QTest::newRow("token") << QStringLiteral("starforge-sandbox");
        QTest::newRow("client certificate files") << QStringLiteral("starforge-sandbox-cert");
        QTest::newRow("exec plugin") << QStringLiteral("starforge-sandbox-exec");
    }

    void everyContextListsAndSubmits()
    {
        QFETCH(QString, context);
        auto config = clientFor(context);
        QVERIFY2(config.ok(), qPrintable(config.ok() ? QString() : config.error().message));
        Kube::KubeClient client(*config);
        const Kube::ApiResult result = listPods(client);
        QVERIFY2(result.ok(), qPrintable(result.error ? result.error->message : QString()));
        QVERIFY(result.json().value(QStringLiteral("items")).isArray());
        const QString submitted = submitWith(client, context);
        QVERIFY2(submitted.isEmpty(), qPrintable(submitted));
    }

    // The same certificate given inline: the key as FORGE_K8S_CLIENT_KEY_DATA (the keychain's).
    void inlineClientCertificate()
    {
        QFile cert(m_sandbox->clientCertFile());
        QFile key(m_sandbox->clientKeyFile());
        QVERIFY(cert.open(QIODevice::ReadOnly) && key.open(QIODevice::ReadOnly));
        const QString yaml = QStringLiteral("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: %1\n"
                                            "    certificate-authority: %2\nusers:\n- name: u\n  user:\n    client-certificate-data: %3\n"
                                            "    client-key-data: %4\ncontexts:\n- name: inline\n  context: {cluster: c, user: u, namespace: starforge}\n")
                                 .arg(m_sandbox->apiServerUrl().toString(), m_sandbox->caFile(), QString::fromLatin1(cert.readAll().toBase64()),
                                      QString::fromLatin1(key.readAll().toBase64()));
        auto config = Config::Kubeconfig::fromYaml(yaml.toUtf8(), m_dir.path());
        QVERIFY(config.ok());
        auto imported = config->importContext(QStringLiteral("inline"));
        QVERIFY2(imported.ok(), qPrintable(imported.ok() ? QString() : imported.error().message));
        QVERIFY(imported->hasSecret(QStringLiteral("FORGE_K8S_CLIENT_KEY_DATA")));
        for (const QString &value : imported->values) QVERIFY(!value.contains(QStringLiteral("PRIVATE KEY")));
        QVERIFY(!imported->values.contains(QStringLiteral("FORGE_K8S_CLIENT_KEY_DATA")));
        auto client = Kube::ClientConfig::fromSettings(Config::EffectiveConfig::resolve(
            Config::Profile{QStringLiteral("p"), imported->values}, QProcessEnvironment(),
            {{QStringLiteral("FORGE_K8S_CLIENT_KEY_DATA"), imported->secrets.value(QStringLiteral("FORGE_K8S_CLIENT_KEY_DATA"))}}));
        QVERIFY2(client.ok(), qPrintable(client.ok() ? QString() : client.error().message));
        Kube::KubeClient kube(*client);
        QVERIFY(listPods(kube).ok());
    }

    // An exec token that lapses while a pod informer watches: the informer keeps its state (no
    // relist), the next requests renew the token, and twenty at once run the plugin once.
    void execTokenExpiresMidWatch()
    {
        qputenv("STARFORGE_CREDENTIAL_TTL_S", "7");
        auto config = clientFor(QStringLiteral("starforge-sandbox-exec"));
        QVERIFY(config.ok());
        Kube::KubeClient client(*config);
        QFile::remove(m_log);
        Kube::InformerOptions options;
        options.ns = client.config().ns;
        Kube::Informer pods(&client, Kube::ResourceKind::pods(), options);
        QSignalSpy synced(&pods, &Kube::Informer::synced);
        pods.start();
        QVERIFY(synced.wait(20000));
        const int listsBefore = pods.stats().lists;
        QCOMPARE(pluginRuns(), 1);

        QTest::qWait(7500);   // the token has expired on the server
        QList<Kube::ApiResult> results;
        QObject context;
        for (int i = 0; i < 20; ++i) {
            Kube::ApiRequest request;
            request.path = Kube::ResourceKind::pods().path(client.config().ns);
            client.send(request, &context, [&results](const Kube::ApiResult &r) { results.append(r); });
        }
        QTRY_COMPARE_WITH_TIMEOUT(results.size(), 20, 30000);
        for (const Kube::ApiResult &r : std::as_const(results)) QVERIFY2(r.ok(), qPrintable(r.error ? r.error->message : QString()));
        QCOMPARE(pluginRuns(), 2);
        QCOMPARE(pods.stats().lists, listsBefore);   // the watch went on; nothing was listed again
        QVERIFY(pods.hasSynced());
        qunsetenv("STARFORGE_CREDENTIAL_TTL_S");
    }

    void failuresAreNamed()
    {
        // A missing plugin: its command and the kubeconfig's installHint.
        const QString missing = QStringLiteral(R"({"apiVersion":"client.authentication.k8s.io/v1","command":"starforge-missing-plugin",)"
                                               R"("installHint":"Build it with starforge-sandbox."})");
        auto config = clientFor(QStringLiteral("starforge-sandbox-exec"), {{QStringLiteral("FORGE_K8S_EXEC"), missing}});
        QVERIFY(config.ok());
        Kube::KubeClient client(*config);
        const Kube::ApiResult result = listPods(client);
        QVERIFY(!result.ok());
        QVERIFY2(result.error->message.contains(QStringLiteral("starforge-missing-plugin")), qPrintable(result.error->message));
        QVERIFY2(result.error->message.contains(QStringLiteral("Build it with starforge-sandbox.")), qPrintable(result.error->message));

        // An expired client certificate: refused before any request, with its date.
        const TestKeyPair old = selfSignedClient(QStringLiteral("old"), QStringLiteral("system:masters"), false, -7200, -60);
        const QString certPath = m_dir.filePath(QStringLiteral("old.crt"));
        const QString keyPath = m_dir.filePath(QStringLiteral("old.key"));
        QVERIFY(writeFile(certPath, old.certificatePem) && writeFile(keyPath, old.keyPem));
        auto expired = clientFor(QStringLiteral("starforge-sandbox-cert"),
                                 {{QStringLiteral("FORGE_K8S_CLIENT_CERT_FILE"), certPath}, {QStringLiteral("FORGE_K8S_CLIENT_KEY_FILE"), keyPath}});
        QVERIFY(!expired.ok());
        QVERIFY2(expired.error().message.contains(QStringLiteral("expired on")), qPrintable(expired.error().message));

        // The sandbox's certificate with another key.
        const TestKeyPair other = selfSignedClient(QStringLiteral("other"), {});
        QVERIFY(writeFile(keyPath, other.keyPem));
        auto wrongKey = clientFor(QStringLiteral("starforge-sandbox-cert"), {{QStringLiteral("FORGE_K8S_CLIENT_KEY_FILE"), keyPath}});
        QVERIFY(!wrongKey.ok());
        QVERIFY2(wrongKey.error().message.contains(QStringLiteral("does not belong to the key")), qPrintable(wrongKey.error().message));
    }
};

QTEST_GUILESS_MAIN(TestClientAuthSandbox)
#include "tst_clientauth_sandbox.moc"
