// Client authentication below the network: client identities (RSA and EC keys; an encrypted
// key, an expired or future certificate, a certificate that is not the key's, each with its
// message) and the exec credential plugin runner driven by small shell plugins (what
// KUBERNETES_EXEC_INFO holds, one run for twenty waiting requests, renewal after a refusal, the
// output a person must see, a missing plugin's install hint, failures and bad output).

#include "core/config/execplugin.h"
#include "core/kube/execcredentialprovider.h"
#include "core/net/clientidentity.h"
#include "support/testcertificates.h"
#include "support/testutil.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Kube;
using namespace Starforge::Testing;

namespace {

// A plugin that prints a token credential (unique per run) valid for TTL seconds; it counts its
// runs in COUNT_FILE, keeps its KUBERNETES_EXEC_INFO in INFO_FILE, may say SAY on stderr, sleep
// DELAY seconds, or FAIL.
const char *PluginScript = R"SH(#!/bin/sh
echo run >> "$COUNT_FILE"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$INFO_FILE"
if [ -n "$SAY" ]; then printf '%s\n' "$SAY" >&2; fi
if [ -n "$DELAY" ]; then sleep "$DELAY"; fi
if [ -n "$FAIL" ]; then printf '%s\n' "$FAIL" >&2; exit 3; fi
expiry=$(date -u -d "+${TTL:-3600} seconds" +%Y-%m-%dT%H:%M:%SZ)
printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"tok-%s","expirationTimestamp":"%s"}}\n' "${VERSION:-client.authentication.k8s.io/v1}" "$(date +%s%N)" "$expiry"
)SH";

} // namespace

class TestClientAuth : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_plugin;

    Config::ExecPlugin plugin(QList<QPair<QString, QString>> env = {}) const
    {
        Config::ExecPlugin p;
        p.apiVersion = QStringLiteral("client.authentication.k8s.io/v1");
        p.command = m_plugin;
        p.interactiveMode = Config::ExecPlugin::Interactive::IfAvailable;
        p.provideClusterInfo = true;
        env << QPair<QString, QString>{QStringLiteral("COUNT_FILE"), m_dir.filePath(QStringLiteral("count"))}
            << QPair<QString, QString>{QStringLiteral("INFO_FILE"), m_dir.filePath(QStringLiteral("info.json"))};
        p.env = env;
        return p;
    }

    int runsRecorded() const
    {
        QFile file(m_dir.filePath(QStringLiteral("count")));
        return file.open(QIODevice::ReadOnly) ? static_cast<int>(file.readAll().count('\n')) : 0;
    }

    static Result<ExecCredential> getOne(ExecCredentialProvider &provider)
    {
        std::optional<Result<ExecCredential>> got;
        QObject context;
        provider.get(&context, [&got](Result<ExecCredential> r) { got = r; });
        if (!QTest::qWaitFor([&] { return got.has_value(); }, 20000)) return Error::internal(QStringLiteral("no answer"));
        return *got;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_plugin = m_dir.filePath(QStringLiteral("fake-auth-plugin"));
        QVERIFY(writeFile(m_plugin, PluginScript));
        QVERIFY(QFile::setPermissions(m_plugin, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
    }

    void init()
    {
        QFile::remove(m_dir.filePath(QStringLiteral("count")));
    }

    void identities_data()
    {
        QTest::addColumn<bool>("ec");
        QTest::newRow("RSA") << false;
        QTest::newRow("EC") << true;
    }

    void identities()
    {
        QFETCH(bool, ec);
        const TestKeyPair pair = selfSignedClient(QStringLiteral("alice"), QStringLiteral("system:masters"), ec);
        const auto identity = Net::ClientIdentity::fromPem(pair.certificatePem, QStringLiteral("cert"), pair.keyPem, QStringLiteral("key"));
        QVERIFY2(identity.ok(), qPrintable(identity.ok() ? QString() : identity.error().message));
        QCOMPARE(identity->key.algorithm(), ec ? QSsl::Ec : QSsl::Rsa);
        QCOMPARE(identity->subject(), QStringLiteral("CN=alice, O=system:masters"));
    }

    void identityProblemsAreNamed()
    {
        const TestKeyPair good = selfSignedClient(QStringLiteral("bob"), {});
        const TestKeyPair other = selfSignedClient(QStringLiteral("eve"), {});
        auto message = [](const Result<Net::ClientIdentity> &r) { return r.ok() ? QStringLiteral("ok") : r.error().message; };

        const auto encrypted = Net::ClientIdentity::fromPem(good.certificatePem, QStringLiteral("cert"), keyPem(good.key, "passphrase"),
                                                            QStringLiteral("the key file"));
        QVERIFY2(message(encrypted).contains(QStringLiteral("encrypted with a passphrase")), qPrintable(message(encrypted)));
        QVERIFY2(message(encrypted).contains(QStringLiteral("openssl pkey")), qPrintable(message(encrypted)));

        const auto mismatch = Net::ClientIdentity::fromPem(good.certificatePem, QStringLiteral("cert.pem"), other.keyPem, QStringLiteral("key.pem"));
        QVERIFY2(message(mismatch).contains(QStringLiteral("does not belong to the key")), qPrintable(message(mismatch)));
        QVERIFY2(message(mismatch).contains(QStringLiteral("CN=bob")), qPrintable(message(mismatch)));

        const TestKeyPair old = selfSignedClient(QStringLiteral("carol"), {}, false, -7200, -3600);
        const auto expired = Net::ClientIdentity::fromPem(old.certificatePem, QStringLiteral("cert.pem"), old.keyPem, QStringLiteral("key.pem"));
        QVERIFY2(message(expired).contains(QStringLiteral("expired on")), qPrintable(message(expired)));

        const TestKeyPair future = selfSignedClient(QStringLiteral("dave"), {}, false, 3600, 7200);
        const auto early = Net::ClientIdentity::fromPem(future.certificatePem, QStringLiteral("cert.pem"), future.keyPem, QStringLiteral("key.pem"));
        QVERIFY2(message(early).contains(QStringLiteral("not valid before")), qPrintable(message(early)));

        const auto noKey = Net::ClientIdentity::fromPem(good.certificatePem, QStringLiteral("cert.pem"), "not a key", QStringLiteral("key.pem"));
        QVERIFY2(message(noKey).contains(QStringLiteral("holds no PEM private key")), qPrintable(message(noKey)));
    }

    void execPluginStanzas()
    {
        QVERIFY(!Config::ExecPlugin::parse(QStringLiteral("{\"apiVersion\":\"client.authentication.k8s.io/v1alpha1\",\"command\":\"x\"}")).ok());
        QVERIFY(!Config::ExecPlugin::parse(QStringLiteral("{\"apiVersion\":\"client.authentication.k8s.io/v1\"}")).ok());
        const auto badMode = Config::ExecPlugin::parse(
            QStringLiteral("{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"command\":\"x\",\"interactiveMode\":\"Sometimes\"}"));
        QVERIFY(!badMode.ok() && badMode.error().message.contains(QStringLiteral("IfAvailable")));
        const auto full = Config::ExecPlugin::parse(QStringLiteral(
            "{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"command\":\"aws\",\"args\":[\"eks\",\"get-token\"],"
            "\"env\":[{\"name\":\"AWS_PROFILE\",\"value\":\"ml\"}],\"interactiveMode\":\"Never\",\"installHint\":\"brew install aws\"}"));
        QVERIFY(full.ok());
        QCOMPARE(full->args, (QStringList{QStringLiteral("eks"), QStringLiteral("get-token")}));
        QCOMPARE(full->env.first().second, QStringLiteral("ml"));
        QCOMPARE(full->interactiveMode, Config::ExecPlugin::Interactive::Never);
        QCOMPARE(Config::ExecPlugin::fromJson(full->toJson())->installHint, QStringLiteral("brew install aws"));
    }

    void parseOutput()
    {
        const QString v1 = QStringLiteral("client.authentication.k8s.io/v1");
        const auto ok = ExecCredentialProvider::parseOutput(
            R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"abc","expirationTimestamp":"2099-01-02T03:04:05Z"}})",
            v1, QStringLiteral("p"));
        QVERIFY(ok.ok());
        QCOMPARE(ok->token, QByteArray("abc"));
        QCOMPARE(ok->expiry, QDateTime(QDate(2099, 1, 2), QTime(3, 4, 5), Qt::UTC));
        const auto wrongVersion = ExecCredentialProvider::parseOutput(
            R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"abc"}})", v1, QStringLiteral("p"));
        QVERIFY(!wrongVersion.ok() && wrongVersion.error().message.contains(QStringLiteral("answered in")));
        QVERIFY(!ExecCredentialProvider::parseOutput("", v1, QStringLiteral("p")).ok());
        QVERIFY(!ExecCredentialProvider::parseOutput(R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}})", v1,
                                                     QStringLiteral("p")).ok());
        const auto stale = ExecCredentialProvider::parseOutput(
            R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"a","expirationTimestamp":"2001-01-01T00:00:00Z"}})",
            v1, QStringLiteral("p"));
        QVERIFY(!stale.ok() && stale.error().message.contains(QStringLiteral("clock")));
        // A certificate and key instead of a token.
        const TestKeyPair pair = selfSignedClient(QStringLiteral("exec-user"), {}, true);
        const QJsonObject cert{{QStringLiteral("apiVersion"), v1}, {QStringLiteral("kind"), QStringLiteral("ExecCredential")},
                               {QStringLiteral("status"), QJsonObject{{QStringLiteral("clientCertificateData"), QString::fromLatin1(pair.certificatePem)},
                                                                      {QStringLiteral("clientKeyData"), QString::fromLatin1(pair.keyPem)}}}};
        const auto identity = ExecCredentialProvider::parseOutput(QJsonDocument(cert).toJson(), v1, QStringLiteral("p"));
        QVERIFY2(identity.ok(), qPrintable(identity.ok() ? QString() : identity.error().message));
        QCOMPARE(identity->identity.subject(), QStringLiteral("CN=exec-user"));
    }

    // The plugin is told the cluster and whether a person is there, and its credential is kept.
    void runsAsKubectlDoes()
    {
        ExecClusterInfo cluster;
        cluster.server = QStringLiteral("https://127.0.0.1:6443");
        cluster.certificateAuthorityPem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        ExecCredentialProvider provider(plugin(), cluster);
        provider.setPersonPresent(true);
        const auto first = getOne(provider);
        QVERIFY2(first.ok(), qPrintable(first.ok() ? QString() : first.error().message));
        QVERIFY(first->token.startsWith("tok-"));
        QVERIFY(first->expiry > QDateTime::currentDateTimeUtc().addSecs(3000));
        QFile infoFile(m_dir.filePath(QStringLiteral("info.json")));
        QVERIFY(infoFile.open(QIODevice::ReadOnly));
        const QJsonObject info = QJsonDocument::fromJson(infoFile.readAll()).object();
        QCOMPARE(info.value(QStringLiteral("kind")).toString(), QStringLiteral("ExecCredential"));
        QCOMPARE(info.value(QStringLiteral("apiVersion")).toString(), QStringLiteral("client.authentication.k8s.io/v1"));
        const QJsonObject spec = info.value(QStringLiteral("spec")).toObject();
        QCOMPARE(spec.value(QStringLiteral("interactive")).toBool(), true);
        QCOMPARE(spec.value(QStringLiteral("cluster")).toObject().value(QStringLiteral("server")).toString(), cluster.server);
        QCOMPARE(QByteArray::fromBase64(spec.value(QStringLiteral("cluster")).toObject().value(QStringLiteral("certificate-authority-data")).toString().toLatin1()),
                 cluster.certificateAuthorityPem);
        // Kept: a second get does not run the plugin.
        const auto second = getOne(provider);
        QCOMPARE(second->token, first->token);
        QCOMPARE(runsRecorded(), 1);
    }

    // Twenty requests that need a credential at once wait for one run; a refusal of the credential
    // in force causes exactly one more, and refusals of an older one none.
    void oneRunForManyWaiters()
    {
        ExecCredentialProvider provider(plugin({{QStringLiteral("DELAY"), QStringLiteral("0.3")}}), {});
        QList<Result<ExecCredential>> answers;
        QObject context;
        for (int i = 0; i < 20; ++i) provider.get(&context, [&answers](Result<ExecCredential> r) { answers.append(r); });
        QTRY_COMPARE_WITH_TIMEOUT(answers.size(), 20, 20000);
        QCOMPARE(runsRecorded(), 1);
        for (const auto &a : answers) QCOMPARE(a->token, answers.first()->token);

        const int used = answers.first()->generation;
        for (int i = 0; i < 20; ++i) provider.invalidate(used);
        answers.clear();
        for (int i = 0; i < 20; ++i) provider.get(&context, [&answers](Result<ExecCredential> r) { answers.append(r); });
        QTRY_COMPARE_WITH_TIMEOUT(answers.size(), 20, 20000);
        QCOMPARE(runsRecorded(), 2);
        QVERIFY(answers.first()->token != QByteArray());
        provider.invalidate(used);   // the old one again: nothing happens
        QVERIFY(provider.current().has_value());
    }

    // A credential about to expire is renewed before use.
    void expiringCredentialIsRenewed()
    {
        ExecCredentialProvider provider(plugin({{QStringLiteral("TTL"), QStringLiteral("2")}}), {});
        const auto first = getOne(provider);
        QVERIFY(first.ok());
        QVERIFY(!provider.current().has_value());   // within the renewal margin already
        const auto second = getOne(provider);
        QVERIFY(second.ok());
        QVERIFY(second->token != first->token);
        QCOMPARE(runsRecorded(), 2);
    }

    void whatThePersonMustSee()
    {
        const QString say = QStringLiteral("To sign in, open https://login.example/device and enter the code ABCD-1234");
        ExecCredentialProvider provider(plugin({{QStringLiteral("SAY"), say}}), {});
        provider.setPersonPresent(true);
        QSignalSpy started(&provider, &ExecCredentialProvider::runStarted);
        QSignalSpy output(&provider, &ExecCredentialProvider::output);
        QVERIFY(getOne(provider).ok());
        QCOMPARE(started.size(), 1);
        QCOMPARE(started.first().at(1).toBool(), true);
        QString seen;
        for (const auto &args : output) seen += args.at(0).toString();
        QVERIFY2(seen.contains(QStringLiteral("ABCD-1234")), qPrintable(seen));
    }

    void failuresSayWhy()
    {
        Config::ExecPlugin missing = plugin();
        missing.command = QStringLiteral("starforge-no-such-auth-plugin");
        missing.installHint = QStringLiteral("Install it with: apt install starforge-no-such-auth-plugin");
        ExecCredentialProvider absent(missing, {});
        const auto notFound = getOne(absent);
        QVERIFY(!notFound.ok());
        QVERIFY2(notFound.error().message.contains(QStringLiteral("'starforge-no-such-auth-plugin' is not on PATH")), qPrintable(notFound.error().message));
        QVERIFY2(notFound.error().message.contains(missing.installHint), qPrintable(notFound.error().message));

        ExecCredentialProvider failing(plugin({{QStringLiteral("FAIL"), QStringLiteral("the SSO session has expired")}}), {});
        const auto failed = getOne(failing);
        QVERIFY(!failed.ok());
        QVERIFY2(failed.error().message.contains(QStringLiteral("exit code 3")), qPrintable(failed.error().message));
        QVERIFY2(failed.error().message.contains(QStringLiteral("the SSO session has expired")), qPrintable(failed.error().message));

        ExecCredentialProvider wrong(plugin({{QStringLiteral("VERSION"), QStringLiteral("client.authentication.k8s.io/v1beta1")}}), {});
        const auto mismatched = getOne(wrong);
        QVERIFY(!mismatched.ok() && mismatched.error().message.contains(QStringLiteral("v1beta1")));

        Config::ExecPlugin always = plugin();
        always.interactiveMode = Config::ExecPlugin::Interactive::Always;
        ExecCredentialProvider nobody(always, {});
        const auto refused = getOne(nobody);
        QVERIFY(!refused.ok() && refused.error().message.contains(QStringLiteral("needs a person")));
        QCOMPARE(runsRecorded(), 2);   // the failing and the mismatched plugin ran; the others did not
    }
};

QTEST_GUILESS_MAIN(TestClientAuth)
#include "tst_clientauth.moc"
