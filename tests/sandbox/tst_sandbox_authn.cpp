// Authentication beyond the sandbox's token, in-process over real TLS: client certificates from
// the sandbox's CA (CN the user, O the groups) and from elsewhere, out of date, next to a token
// (kube-apiserver's order), RBAC by group and by name, exec tokens (valid, forged, expired), and
// the files and connection-file keys that describe them.

#include "sandbox/credential/credentialstate.h"
#include "sandbox/credential/exectoken.h"
#include "sandbox/sandbox.h"
#include "sandbox/tls/certificates.h"
#include "support/sandboxfixture.h"
#include "support/testutil.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QSslKey>
#include <QTemporaryDir>
#include <QTest>
#include <QTimeZone>

using namespace Starforge;
using namespace Starforge::Testing;

namespace {

struct Identity
{
    QByteArray certificatePem;
    QByteArray keyPem;
};

} // namespace

class TestSandboxAuthn : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<SandboxHttp> m_http;

    // One request with a client certificate (or none) and a bearer token (or none). A fresh
    // access manager each time: Qt reuses connections by host and port, whatever certificate
    // they were opened with.
    HttpReply send(const QByteArray &method, const QString &path, const Identity &identity, const QByteArray &token = {},
                   const QByteArray &body = {})
    {
        QNetworkAccessManager nam;
        QNetworkRequest request(m_sandbox->apiServerUrl().resolved(QUrl(path)));
        QSslConfiguration ssl = QSslConfiguration::defaultConfiguration();
        ssl.setCaCertificates(QSslCertificate::fromData(m_sandbox->caCertificatePem(), QSsl::Pem));
        if (!identity.certificatePem.isEmpty()) {
            ssl.setLocalCertificate(QSslCertificate(identity.certificatePem, QSsl::Pem));
            ssl.setPrivateKey(QSslKey(identity.keyPem, QSsl::Ec, QSsl::Pem));
        }
        request.setSslConfiguration(ssl);
        if (!token.isEmpty()) {
            request.setRawHeader("Authorization", "Bearer " + token);
        }
        request.setRawHeader("Accept", "application/json");
        if (!body.isEmpty()) {
            request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
        }
        std::unique_ptr<QNetworkReply> reply(nam.sendCustomRequest(request, method, body));
        QSignalSpy finished(reply.get(), &QNetworkReply::finished);
        if (!reply->isFinished()) {
            finished.wait(20000);
        }
        HttpReply out;
        out.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        out.body = reply->readAll();
        out.error = reply->error();
        return out;
    }

    HttpReply get(const QString &path, const Identity &identity, const QByteArray &token = {})
    {
        return send("GET", path, identity, token);
    }

    // kubectl auth whoami's request: who the server takes the caller for.
    QJsonObject whoami(const Identity &identity, const QByteArray &token = {})
    {
        const HttpReply r = send("POST", QStringLiteral("/apis/authentication.k8s.io/v1/selfsubjectreviews"), identity, token,
                                 R"({"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"})");
        if (r.status != 201) {
            qWarning() << "whoami answered" << r.status << r.body;
        }
        return r.json().value(QStringLiteral("status")).toObject().value(QStringLiteral("userInfo")).toObject();
    }

    Identity sandboxIdentity() const
    {
        return {readAll(m_sandbox->clientCertFile()), readAll(m_sandbox->clientKeyFile())};
    }

    Identity issued(const QString &cn, const QStringList &groups, const QDateTime &notAfter = QDateTime::currentDateTimeUtc().addDays(1))
    {
        const auto cert = m_sandbox->issueClientCertificate(cn, groups, notAfter);
        if (!cert) {
            qWarning() << cert.error().message;
            return {};
        }
        return {cert->certificatePem, cert->keyPem};
    }

    QByteArray execSecret() const
    {
        QString error;
        const auto state = Sandbox::Credential::State::read(m_sandbox->credentialStateFile(), &error);
        return state ? state->secret : QByteArray();
    }

    static void verifyUnauthorized(const HttpReply &r)
    {
        QCOMPARE(r.status, 401);
        QCOMPARE(r.json().value(QStringLiteral("kind")).toString(), QStringLiteral("Status"));
        QCOMPARE(r.reason(), QStringLiteral("Unauthorized"));
    }

private Q_SLOTS:
    void init()
    {
        const QString rbac = m_dir.filePath(QStringLiteral("rbac.json"));
        QVERIFY(writeFile(rbac, R"({
            "users": [{"name": "named-user", "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}]},
                      {"name": "bob", "token": "bob-token", "groups": ["team-viewers"]}],
            "groups": [{"name": "team-viewers",
                        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"], "namespaces": ["starforge"]}]}]})"));
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("cpu:1x0");
        options.rbacFile = rbac;
        QString error;
        QVERIFY2(Testing::startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
    }

    void cleanup()
    {
        m_http.reset();
        m_sandbox.reset();
    }

    void connectionFileNamesTheCredentials()
    {
        const QString conn = m_dir.filePath(QStringLiteral("conn.json"));
        const QJsonObject c = QJsonDocument::fromJson(readAll(conn)).object();
        namespace Keys = Sandbox::ConnectionFile;
        QCOMPARE(c.value(QLatin1String(Keys::ClientCertFile)).toString(), conn + QStringLiteral(".client.crt"));
        QCOMPARE(c.value(QLatin1String(Keys::ClientKeyFile)).toString(), conn + QStringLiteral(".client.key"));
        const QString tool = c.value(QLatin1String(Keys::CredentialTool)).toString();
        QVERIFY2(QFileInfo(tool).isAbsolute() && QFileInfo(tool).isExecutable(), qPrintable(tool));
        QCOMPARE(QFileInfo(tool).fileName(), QStringLiteral("starforge-sandbox-credential"));
        const QJsonObject exec = c.value(QLatin1String(Keys::ExecPlugin)).toObject();
        QCOMPARE(exec.value(QStringLiteral("apiVersion")).toString(), QStringLiteral("client.authentication.k8s.io/v1"));
        QCOMPARE(exec.value(QStringLiteral("command")).toString(), tool);
        QCOMPARE(exec.value(QStringLiteral("args")).toArray(),
                 (QJsonArray{QStringLiteral("--state"), QString(conn + QStringLiteral(".credential.json"))}));
        QCOMPARE(exec.value(QStringLiteral("interactiveMode")).toString(), QStringLiteral("IfAvailable"));
        QCOMPARE(exec.value(QStringLiteral("provideClusterInfo")).toBool(), true);
        QVERIFY(exec.value(QStringLiteral("installHint")).toString().contains(QStringLiteral("built and installed with starforge-sandbox")));

        // The certificate kubeadm's admin.conf would carry, for 30 days.
        const QSslCertificate cert(readAll(m_sandbox->clientCertFile()), QSsl::Pem);
        QCOMPARE(cert.subjectInfo(QSslCertificate::CommonName), QStringList{QStringLiteral("starforge-cert-user")});
        QCOMPARE(cert.subjectInfo(QSslCertificate::Organization), QStringList{QStringLiteral("system:masters")});
        QVERIFY(qAbs(QDateTime::currentDateTimeUtc().daysTo(cert.expiryDate()) - 30) <= 1);
        QCOMPARE(cert.issuerInfo(QSslCertificate::CommonName), QStringList{QStringLiteral("starforge-sandbox-ca")});
        // Secrets are the owner's only.
        for (const QString &secret : {m_sandbox->clientKeyFile(), m_sandbox->credentialStateFile()}) {
            QCOMPARE(QFile::permissions(secret) & (QFile::ReadGroup | QFile::ReadOther | QFile::WriteGroup | QFile::WriteOther),
                     QFileDevice::Permissions());
        }
        QString error;
        const auto state = Sandbox::Credential::State::read(m_sandbox->credentialStateFile(), &error);
        QVERIFY2(state, qPrintable(error));
        QCOMPARE(state->server, m_sandbox->apiServerUrl().toString());
        QCOMPARE(state->tokenTtlSeconds, 3600);
        QCOMPARE(state->secret.size(), 32);
        QCOMPARE(state->clientCertificateFile, m_sandbox->clientCertFile());

        const QStringList files{conn, m_sandbox->clientCertFile(), m_sandbox->clientKeyFile(), m_sandbox->credentialStateFile(),
                                m_sandbox->kubeconfigFile(), m_sandbox->caFile()};
        m_sandbox->stop();
        for (const QString &f : files) {
            QVERIFY2(!QFile::exists(f), qPrintable(f));
        }
    }

    void certificateFromTheSandboxCa()
    {
        const HttpReply pods = get(QStringLiteral("/api/v1/namespaces/starforge/pods"), sandboxIdentity());
        QCOMPARE(pods.status, 200);
        const QJsonObject me = whoami(sandboxIdentity());
        QCOMPARE(me.value(QStringLiteral("username")).toString(), QStringLiteral("starforge-cert-user"));
        QCOMPARE(me.value(QStringLiteral("groups")).toArray(),
                 (QJsonArray{QStringLiteral("system:masters"), QStringLiteral("system:authenticated")}));
        // Cluster admin through system:masters: the control API too.
        QCOMPARE(get(QStringLiteral("/sandbox/v1/faults"), sandboxIdentity()).status, 200);
    }

    void certificateFromAnotherCaIsUnauthorized()
    {
        const auto other = Sandbox::Tls::generate({QStringLiteral("127.0.0.1")}, {});
        QVERIFY(other);
        const auto intruder = Sandbox::Tls::issueClientCertificate(*other, QStringLiteral("intruder"), {QStringLiteral("system:masters")},
                                                                   QDateTime::currentDateTimeUtc().addDays(1));
        QVERIFY(intruder);
        const Identity identity{intruder->certificatePem, intruder->keyPem};
        verifyUnauthorized(get(QStringLiteral("/api/v1/namespaces/starforge/pods"), identity));
        // A failed credential is not anonymous: even /version refuses it, as kube-apiserver does.
        verifyUnauthorized(get(QStringLiteral("/version"), identity));
        QCOMPARE(get(QStringLiteral("/version"), {}).status, 200);
    }

    void expiredCertificateIsUnauthorized()
    {
        const Identity expired = issued(QStringLiteral("late"), {QStringLiteral("system:masters")},
                                        QDateTime::currentDateTimeUtc().addSecs(-60));
        QVERIFY(!expired.certificatePem.isEmpty());
        verifyUnauthorized(get(QStringLiteral("/api/v1/namespaces/starforge/pods"), expired));
    }

    void certificateFirstThenToken()
    {
        // kube-apiserver's union: the first authenticator that succeeds decides.
        const Identity expired = issued(QStringLiteral("late"), {}, QDateTime::currentDateTimeUtc().addSecs(-60));
        QCOMPARE(whoami(expired, m_sandbox->token()).value(QStringLiteral("username")).toString(), QStringLiteral("sandbox-admin"));
        QCOMPARE(whoami(sandboxIdentity(), "not-a-token").value(QStringLiteral("username")).toString(),
                 QStringLiteral("starforge-cert-user"));
        QCOMPARE(whoami(sandboxIdentity(), m_sandbox->token()).value(QStringLiteral("username")).toString(),
                 QStringLiteral("starforge-cert-user"));
        verifyUnauthorized(get(QStringLiteral("/api/v1/nodes"), expired, "not-a-token"));
    }

    void rbacByGroupAndByName()
    {
        // O=team-viewers: the group's rules from the RBAC file.
        const Identity alice = issued(QStringLiteral("alice"), {QStringLiteral("team-viewers")});
        QCOMPARE(get(QStringLiteral("/api/v1/namespaces/starforge/pods"), alice).status, 200);
        const HttpReply denied = get(QStringLiteral("/api/v1/namespaces/default/pods"), alice);
        QCOMPARE(denied.status, 403);
        QCOMPARE(denied.message(), QStringLiteral("pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" "
                                                  "in the namespace \"default\""));
        // CN=named-user: the rules of the RBAC user of that name, which has no token.
        const Identity named = issued(QStringLiteral("named-user"), {});
        QCOMPARE(get(QStringLiteral("/api/v1/nodes"), named).status, 200);
        QCOMPARE(get(QStringLiteral("/api/v1/namespaces/starforge/pods"), named).status, 403);
        // A token user in the group gets the group's rules as well.
        QCOMPARE(get(QStringLiteral("/api/v1/namespaces/starforge/pods"), {}, "bob-token").status, 200);
        QCOMPARE(whoami({}, "bob-token").value(QStringLiteral("groups")).toArray(),
                 (QJsonArray{QStringLiteral("team-viewers"), QStringLiteral("system:authenticated")}));
        // No groups, no rules: authenticated but forbidden.
        QCOMPARE(get(QStringLiteral("/api/v1/nodes"), issued(QStringLiteral("nobody"), {})).status, 403);
    }

    void execTokens()
    {
        namespace ExecToken = Sandbox::Credential::ExecToken;
        const QByteArray secret = execSecret();
        QVERIFY(!secret.isEmpty());
        const qint64 now = QDateTime::currentSecsSinceEpoch();
        const QByteArray valid = ExecToken::mint(secret, QStringLiteral("starforge-exec-user"), now + 600);
        QCOMPARE(get(QStringLiteral("/api/v1/namespaces/starforge/pods"), {}, valid).status, 200);
        const QJsonObject me = whoami({}, valid);
        QCOMPARE(me.value(QStringLiteral("username")).toString(), QStringLiteral("starforge-exec-user"));
        QVERIFY(me.value(QStringLiteral("groups")).toArray().contains(QStringLiteral("system:masters")));
        // 0: never expires (--token-ttl 0).
        QCOMPARE(get(QStringLiteral("/api/v1/nodes"), {}, ExecToken::mint(secret, QStringLiteral("starforge-exec-user"), 0)).status, 200);

        verifyUnauthorized(get(QStringLiteral("/api/v1/nodes"), {}, ExecToken::mint(secret, QStringLiteral("starforge-exec-user"), now - 1)));
        verifyUnauthorized(get(QStringLiteral("/api/v1/nodes"), {}, ExecToken::mint("another secret", QStringLiteral("starforge-exec-user"), now + 600)));
        QByteArray stretched = valid;
        stretched.replace(QByteArray::number(now + 600), QByteArray::number(now + 60000));
        verifyUnauthorized(get(QStringLiteral("/api/v1/nodes"), {}, stretched));
        // Another user name signed with the secret: only what the RBAC file gives that name.
        const QByteArray named = ExecToken::mint(secret, QStringLiteral("named-user"), now + 600);
        QCOMPARE(get(QStringLiteral("/api/v1/nodes"), {}, named).status, 200);
        QCOMPARE(get(QStringLiteral("/api/v1/namespaces/starforge/pods"), {}, named).status, 403);
    }

    void execTokenFormat()
    {
        namespace ExecToken = Sandbox::Credential::ExecToken;
        const QDateTime at = QDateTime::fromSecsSinceEpoch(1000, QTimeZone::utc());
        const QByteArray token = ExecToken::mint("k", QStringLiteral("a.b"), 2000);
        QVERIFY(token.startsWith("sfx1.a.b.2000."));
        QCOMPARE(token.size(), qsizetype(QByteArrayLiteral("sfx1.a.b.2000.").size() + 64));
        ExecToken::Claims claims;
        QCOMPARE(ExecToken::verify(token, "k", at, &claims), ExecToken::Check::Valid);
        QCOMPARE(claims.user, QStringLiteral("a.b"));
        QCOMPARE(claims.expiryEpochSeconds, 2000);
        QCOMPARE(ExecToken::verify(token, "k", QDateTime::fromSecsSinceEpoch(2000, QTimeZone::utc())), ExecToken::Check::Expired);
        QCOMPARE(ExecToken::verify(token, "other", at), ExecToken::Check::BadSignature);
        QCOMPARE(ExecToken::verify("sfx1.garbage", "k", at), ExecToken::Check::BadSignature);
        QCOMPARE(ExecToken::verify("plain-token", "k", at), ExecToken::Check::NotAnExecToken);
    }
};

QTEST_GUILESS_MAIN(TestSandboxAuthn)
#include "tst_sandbox_authn.moc"
