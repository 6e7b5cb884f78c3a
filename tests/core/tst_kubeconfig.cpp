// Importing kubeconfig contexts: inline CA data, CA file, token, token file, exec plugins, relative
// paths, merged KUBECONFIG lists, and the unsupported ways of signing in with a message that says what
// to do instead.

#include "core/config/execplugin.h"
#include "core/config/kubeconfig.h"
#include "core/config/profilemanager.h"
#include "support/testutil.h"

#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Config;
using Starforge::Testing::dataPath;

class TestKubeconfig : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void caDataAndToken()
    {
        const auto config = Kubeconfig::load({dataPath(QStringLiteral("kubeconfig/ca-data.yaml"))});
        QVERIFY2(config.ok(), qPrintable(config.ok() ? QString() : config.error().message));
        QCOMPARE(config->contextNames(), QStringList{QStringLiteral("lab")});
        QCOMPARE(config->currentContext(), QStringLiteral("lab"));
        const auto imported = config->importContext();
        QVERIFY2(imported.ok(), qPrintable(imported.ok() ? QString() : imported.error().message));
        QCOMPARE(imported->contextName, QStringLiteral("lab"));
        QCOMPARE(imported->values.value(QStringLiteral("FORGE_K8S_API_SERVER")), QStringLiteral("https://api.lab.example:6443"));
        QCOMPARE(imported->values.value(QStringLiteral("FORGE_K8S_NAMESPACE")), QStringLiteral("research"));
        const QByteArray pem = Testing::readAll(dataPath(QStringLiteral("kubeconfig/ca.pem")));
        QCOMPARE(QByteArray::fromBase64(imported->values.value(QStringLiteral("FORGE_K8S_CA_DATA")).toLatin1()), pem);
        QVERIFY(!imported->values.contains(QStringLiteral("FORGE_K8S_CA_FILE")));
        QVERIFY(!imported->values.contains(QStringLiteral("FORGE_K8S_TOKEN_FILE")));
        QVERIFY(!imported->values.contains(QStringLiteral("FORGE_K8S_TOKEN"))); // the token is not a file value
        QCOMPARE(imported->secrets.value(QStringLiteral("FORGE_K8S_TOKEN")), QStringLiteral("sf-test-token-0123456789abcdef"));
        QVERIFY(imported->notes.isEmpty());
    }

    void caFileAndTokenFileRelativeToTheKubeconfig()
    {
        const auto config = Kubeconfig::load({dataPath(QStringLiteral("kubeconfig/ca-file.yaml"))});
        QVERIFY(config.ok());
        const auto imported = config->importContext(QStringLiteral("file-ctx"));
        QVERIFY2(imported.ok(), qPrintable(imported.ok() ? QString() : imported.error().message));
        QCOMPARE(imported->values.value(QStringLiteral("FORGE_K8S_API_SERVER")), QStringLiteral("https://10.0.0.1:6443"));
        QCOMPARE(imported->values.value(QStringLiteral("FORGE_K8S_CA_FILE")), dataPath(QStringLiteral("kubeconfig/ca.pem")));
        QCOMPARE(imported->values.value(QStringLiteral("FORGE_K8S_TOKEN_FILE")), dataPath(QStringLiteral("kubeconfig/token.txt")));
        QVERIFY(!imported->hasSecret(QStringLiteral("FORGE_K8S_TOKEN")));
        QVERIFY(imported->secrets.contains(QStringLiteral("FORGE_K8S_TOKEN"))); // cleared in the keychain
        QVERIFY(!imported->values.contains(QStringLiteral("FORGE_K8S_NAMESPACE")));

        const auto other = config->importContext(QStringLiteral("other@c1"));
        QVERIFY(other.ok());
        QCOMPARE(other->values.value(QStringLiteral("FORGE_K8S_NAMESPACE")), QStringLiteral("other"));
        QCOMPARE(ProfileManager::profileNameFromContext(QStringLiteral("other@c1")), QStringLiteral("other-c1"));
        QCOMPARE(ProfileManager::profileNameFromContext(QStringLiteral("arn:aws:eks:us-east-1:1:cluster/x")),
                 QStringLiteral("arn-aws-eks-us-east-1-1-cluster-x"));
    }

    void unsupportedSignIns()
    {
        const auto config = Kubeconfig::load({dataPath(QStringLiteral("kubeconfig/unsupported.yaml"))});
        QVERIFY(config.ok());
        const auto imported = config->importContext(QStringLiteral("basic"));
        QVERIFY(!imported.ok());
        QCOMPARE(imported.error().code, Error::Code::Unsupported);
        QVERIFY2(imported.error().message.contains(QStringLiteral("basic authentication")), qPrintable(imported.error().message));
        QVERIFY2(imported.error().message.contains(QStringLiteral("exec credential plugin")), qPrintable(imported.error().message));
    }

    // Certificate data that is not a certificate, and a certificate without its key, are named.
    void brokenClientCertificates()
    {
        const auto config = Kubeconfig::load({dataPath(QStringLiteral("kubeconfig/unsupported.yaml"))});
        QVERIFY(config.ok());
        const auto garbage = config->importContext(QStringLiteral("certs"));
        QVERIFY(!garbage.ok());
        QVERIFY2(garbage.error().message.contains(QStringLiteral("client-certificate-data")), qPrintable(garbage.error().message));
        const auto keyless = config->importContext(QStringLiteral("mixed"));
        QVERIFY(!keyless.ok());
        QVERIFY2(keyless.error().message.contains(QStringLiteral("no client key")), qPrintable(keyless.error().message));
    }

    // An exec stanza becomes FORGE_K8S_EXEC with kubeconfig's field names, the plugin named.
    void execPluginIsTaken()
    {
        const auto config = Kubeconfig::load({dataPath(QStringLiteral("kubeconfig/unsupported.yaml"))});
        QVERIFY(config.ok());
        const auto imported = config->importContext(QStringLiteral("exec"));
        QVERIFY2(imported.ok(), qPrintable(imported.ok() ? QString() : imported.error().message));
        const auto plugin = ExecPlugin::parse(imported->values.value(QStringLiteral("FORGE_K8S_EXEC")));
        QVERIFY(plugin.ok());
        QCOMPARE(plugin->command, QStringLiteral("gke-gcloud-auth-plugin"));
        QCOMPARE(plugin->apiVersion, QStringLiteral("client.authentication.k8s.io/v1beta1"));
        QVERIFY(imported->taken.join(u'\n').contains(QStringLiteral("exec → FORGE_K8S_EXEC")));
        QVERIFY(imported->notes.join(u'\n').contains(QStringLiteral("gke-gcloud-auth-plugin")));
        QVERIFY(!imported->hasSecret(QStringLiteral("FORGE_K8S_TOKEN")));
    }

    void missingPiecesAreNamed()
    {
        const auto config = Kubeconfig::load({dataPath(QStringLiteral("kubeconfig/unsupported.yaml"))});
        QVERIFY(config.ok());
        const auto dangling = config->importContext(QStringLiteral("dangling"));
        QVERIFY(!dangling.ok());
        QVERIFY(dangling.error().message.contains(QStringLiteral("nowhere")));
        const auto unknown = config->importContext(QStringLiteral("no-such-context"));
        QCOMPARE(unknown.error().code, Error::Code::NotFound);
        QVERIFY2(unknown.error().message.contains(QStringLiteral("certs")), qPrintable(unknown.error().message));
    }

    void malformedAndMissingFiles()
    {
        const auto malformed = Kubeconfig::load({dataPath(QStringLiteral("kubeconfig/malformed.yaml"))});
        QVERIFY(!malformed.ok());
        QVERIFY2(malformed.error().message.contains(QStringLiteral("not valid YAML")), qPrintable(malformed.error().message));
        const auto missing = Kubeconfig::load({QStringLiteral("/nonexistent/kubeconfig")});
        QVERIFY(!missing.ok());
        QVERIFY(missing.error().message.contains(QStringLiteral("/nonexistent/kubeconfig")));
        const auto notAMap = Kubeconfig::fromYaml("- just\n- a list\n", QStringLiteral("/tmp"));
        QVERIFY(!notAMap.ok() || notAMap->contextNames().isEmpty());
    }

    void mergedListFirstDefinitionWins()
    {
        // KUBECONFIG=a:b: a context defined in both is taken from a; current-context from the first file that sets it.
        QTemporaryDir dir;
        const QString first = dir.filePath(QStringLiteral("first.yaml"));
        QVERIFY(Testing::writeFile(first, "apiVersion: v1\nclusters:\n- name: c1\n  cluster: {server: 'https://first.example'}\n"
                                          "users:\n- name: u\n  user: {token: first-token-000000}\n"
                                          "contexts:\n- name: lab\n  context: {cluster: c1, user: u}\n"));
        const auto config = Kubeconfig::load({first, dataPath(QStringLiteral("kubeconfig/ca-data.yaml")), dir.filePath(QStringLiteral("absent.yaml"))});
        QVERIFY2(config.ok(), qPrintable(config.ok() ? QString() : config.error().message));
        QCOMPARE(config->currentContext(), QStringLiteral("lab"));
        const auto imported = config->importContext(QStringLiteral("lab"));
        QVERIFY(imported.ok());
        QCOMPARE(imported->values.value(QStringLiteral("FORGE_K8S_API_SERVER")), QStringLiteral("https://first.example"));
        QCOMPARE(imported->secrets.value(QStringLiteral("FORGE_K8S_TOKEN")), QStringLiteral("first-token-000000"));
    }

    void defaultPathsFollowKubeconfigVariable()
    {
        qputenv("KUBECONFIG", "/a/one:/b/two");
        QCOMPARE(Kubeconfig::defaultPaths(), (QStringList{QStringLiteral("/a/one"), QStringLiteral("/b/two")}));
        qunsetenv("KUBECONFIG");
        QCOMPARE(Kubeconfig::defaultPaths().size(), 1);
        QVERIFY(Kubeconfig::defaultPaths().first().endsWith(QStringLiteral("/.kube/config")));
    }
};

QTEST_GUILESS_MAIN(TestKubeconfig)
#include "tst_kubeconfig.moc"
