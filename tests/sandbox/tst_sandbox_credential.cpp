// The starforge-sandbox executable's three ways in, with real clients: kubectl through every
// context of F.kubeconfig (token, client certificate, exec plugin), curl with a certificate from
// another CA, and starforge-sandbox-credential both as kubectl runs it (KUBERNETES_EXEC_INFO,
// recorded by the LOG knob) and by hand: its token lifetime (--token-ttl, the TTL knob, expiry as
// 401), the certificate kind, the device-code login and its failure modes.

#include "sandbox/sandbox.h"
#include "sandbox/tls/certificates.h"
#include "support/sandboxhttp.h"
#include "support/testutil.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using namespace Starforge;
using namespace Starforge::Testing;

namespace {

constexpr int TokenTtl = 600;  // the sandbox's --token-ttl here

struct Run
{
    int exitCode = -1;
    QString out;
    QString err;
    qint64 elapsedMs = 0;
};

Run runProcess(const QString &program, const QStringList &args, const QProcessEnvironment &env)
{
    QProcess p;
    p.setProcessEnvironment(env);
    QElapsedTimer timer;
    timer.start();
    p.start(program, args);
    p.closeWriteChannel();
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError()), timer.elapsed()};
}

// The environment without anything of ours a developer may have set in their shell.
QProcessEnvironment cleanEnvironment()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const QString &key : env.keys()) {
        if (key.startsWith(QLatin1String("STARFORGE_CREDENTIAL_")) || key == QLatin1String("KUBERNETES_EXEC_INFO")
            || key == QLatin1String("KUBECONFIG")) {
            env.remove(key);
        }
    }
    return env;
}

} // namespace

class TestSandboxCredential : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QProcess m_sandbox;
    QString m_connectionPath;
    QJsonObject m_connection;
    QString m_kubectl;
    QString m_tool;
    QString m_state;

    QString server() const { return m_connection.value(QStringLiteral("apiServer")).toString(); }

    Run kubectl(const QString &context, const QStringList &args, const QProcessEnvironment &extra = {})
    {
        QProcessEnvironment env = cleanEnvironment();
        env.insert(extra);
        // A discovery cache per test run (kubectl keeps one per host:port for hours).
        return runProcess(m_kubectl, QStringList{QStringLiteral("--kubeconfig"), m_connection.value(QStringLiteral("kubeconfig")).toString(),
                                                 QStringLiteral("--cache-dir"), m_dir.filePath(QStringLiteral("cache")),
                                                 QStringLiteral("--request-timeout"), QStringLiteral("20s"), QStringLiteral("--context"), context}
                              + args,
                          env);
    }

    // The tool run by hand, as kubectl would run it with this ExecCredential (none: unset).
    Run credential(const std::optional<QByteArray> &execInfo, const QProcessEnvironment &extra = {})
    {
        QProcessEnvironment env = cleanEnvironment();
        env.insert(extra);
        if (execInfo) {
            env.insert(QStringLiteral("KUBERNETES_EXEC_INFO"), QString::fromUtf8(*execInfo));
        }
        return runProcess(m_tool, {QStringLiteral("--state"), m_state}, env);
    }

    static QByteArray execInfo(bool interactive, const QString &apiVersion = QStringLiteral("client.authentication.k8s.io/v1"),
                               const QJsonObject &cluster = {})
    {
        QJsonObject spec{{QStringLiteral("interactive"), interactive}};
        if (!cluster.isEmpty()) {
            spec.insert(QStringLiteral("cluster"), cluster);
        }
        return QJsonDocument(QJsonObject{{QStringLiteral("apiVersion"), apiVersion},
                                         {QStringLiteral("kind"), QStringLiteral("ExecCredential")},
                                         {QStringLiteral("spec"), spec}})
            .toJson(QJsonDocument::Compact);
    }

    static QProcessEnvironment knobs(std::initializer_list<std::pair<const char *, QString>> values)
    {
        QProcessEnvironment env;
        for (const auto &[name, value] : values) {
            env.insert(QLatin1String(name), value);
        }
        return env;
    }

    static QJsonObject json(const QString &text) { return QJsonDocument::fromJson(text.toUtf8()).object(); }

    HttpReply getWithToken(const QByteArray &token)
    {
        SandboxHttp http(QUrl(server()), readAll(m_connection.value(QStringLiteral("caFile")).toString()), token);
        return http.get(QStringLiteral("/api/v1/namespaces/starforge/pods"));
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_kubectl = QStandardPaths::findExecutable(QStringLiteral("kubectl"));
        QVERIFY2(!m_kubectl.isEmpty(), "kubectl must be on PATH (it is part of the build image)");
        m_connectionPath = m_dir.filePath(QStringLiteral("conn.json"));
        m_sandbox.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        m_sandbox.start(QStringLiteral(SF_BIN_DIR "/starforge-sandbox"),
                        {QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"), QStringLiteral("--connection-file"), m_connectionPath,
                         QStringLiteral("--fleet"), QStringLiteral("cpu:1x0"), QStringLiteral("--token-ttl"), QString::number(TokenTtl)});
        QVERIFY(m_sandbox.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(m_connectionPath), 15000);
        m_connection = QJsonDocument::fromJson(readAll(m_connectionPath)).object();
        m_tool = m_connection.value(QLatin1String(Sandbox::ConnectionFile::CredentialTool)).toString();
        // Installed beside the sandbox, so the kubeconfig names this one.
        QCOMPARE(QFileInfo(m_tool).canonicalFilePath(), QFileInfo(QStringLiteral(SF_BIN_DIR "/starforge-sandbox-credential")).canonicalFilePath());
        m_state = m_connectionPath + QStringLiteral(".credential.json");
        QVERIFY(QFile::exists(m_state));
    }

    void cleanupTestCase()
    {
        if (m_sandbox.state() != QProcess::NotRunning) {
            m_sandbox.kill();
            m_sandbox.waitForFinished();
        }
    }

    void everyContextWorks_data()
    {
        QTest::addColumn<QString>("context");
        QTest::addColumn<QString>("user");
        QTest::newRow("token") << QStringLiteral("starforge-sandbox") << QStringLiteral("sandbox-admin");
        QTest::newRow("cert") << QStringLiteral("starforge-sandbox-cert") << QStringLiteral("starforge-cert-user");
        QTest::newRow("exec") << QStringLiteral("starforge-sandbox-exec") << QStringLiteral("starforge-exec-user");
    }

    void everyContextWorks()
    {
        QFETCH(QString, context);
        QFETCH(QString, user);
        const Run pods = kubectl(context, {QStringLiteral("get"), QStringLiteral("pods"), QStringLiteral("-n"), QStringLiteral("starforge")});
        QVERIFY2(pods.exitCode == 0, qPrintable(pods.err));
        QCOMPARE(pods.err.trimmed(), QStringLiteral("No resources found in starforge namespace."));
        const Run whoami = kubectl(context, {QStringLiteral("auth"), QStringLiteral("whoami"), QStringLiteral("-o"), QStringLiteral("json")});
        QVERIFY2(whoami.exitCode == 0, qPrintable(whoami.err));
        const QJsonObject info = json(whoami.out).value(QStringLiteral("status")).toObject().value(QStringLiteral("userInfo")).toObject();
        QCOMPARE(info.value(QStringLiteral("username")).toString(), user);
        QVERIFY2(info.value(QStringLiteral("groups")).toArray().contains(QStringLiteral("system:masters")), qPrintable(whoami.out));
        const Run canI = kubectl(context, {QStringLiteral("auth"), QStringLiteral("can-i"), QStringLiteral("create"), QStringLiteral("rayjobs.ray.io")});
        QCOMPARE(canI.out.trimmed(), QStringLiteral("yes"));
    }

    void tokenContextStaysCurrent()
    {
        const Run current = kubectl(QStringLiteral("starforge-sandbox"), {QStringLiteral("config"), QStringLiteral("current-context")});
        QCOMPARE(current.out.trimmed(), QStringLiteral("starforge-sandbox"));
        const Run contexts = kubectl(QStringLiteral("starforge-sandbox"), {QStringLiteral("config"), QStringLiteral("get-contexts"),
                                                                           QStringLiteral("-o"), QStringLiteral("name")});
        QCOMPARE(contexts.out.split(u'\n', Qt::SkipEmptyParts),
                 (QStringList{QStringLiteral("starforge-sandbox"), QStringLiteral("starforge-sandbox-cert"), QStringLiteral("starforge-sandbox-exec")}));
    }

    void pluginCanHandOutTheCertificate()
    {
        // Through the exec context, the plugin's clientCertificateData/clientKeyData instead of a token.
        const Run whoami = kubectl(QStringLiteral("starforge-sandbox-exec"), {QStringLiteral("auth"), QStringLiteral("whoami"), QStringLiteral("-o"),
                                                                              QStringLiteral("jsonpath={.status.userInfo.username}")},
                                   knobs({{"STARFORGE_CREDENTIAL_KIND", QStringLiteral("cert")}}));
        QVERIFY2(whoami.exitCode == 0, qPrintable(whoami.err));
        QCOMPARE(whoami.out, QStringLiteral("starforge-cert-user"));
        const Run direct = credential(execInfo(false), knobs({{"STARFORGE_CREDENTIAL_KIND", QStringLiteral("cert")}}));
        QCOMPARE(direct.exitCode, 0);
        const QJsonObject status = json(direct.out).value(QStringLiteral("status")).toObject();
        QVERIFY(status.value(QStringLiteral("clientCertificateData")).toString().startsWith(QStringLiteral("-----BEGIN CERTIFICATE-----")));
        QVERIFY(status.value(QStringLiteral("clientKeyData")).toString().startsWith(QStringLiteral("-----BEGIN PRIVATE KEY-----")));
        QVERIFY(!status.contains(QStringLiteral("token")));
        // Expires with the TTL here, before the 30-day certificate.
        const QDateTime expiry = QDateTime::fromString(status.value(QStringLiteral("expirationTimestamp")).toString(), Qt::ISODate);
        QVERIFY(qAbs(QDateTime::currentDateTimeUtc().secsTo(expiry) - TokenTtl) <= 5);
    }

    void certificateFromAnotherCaIsRefused()
    {
        const QString curl = QStandardPaths::findExecutable(QStringLiteral("curl"));
        QVERIFY2(!curl.isEmpty(), "curl must be on PATH (it is part of the build image)");
        const auto other = Sandbox::Tls::generate({QStringLiteral("127.0.0.1")}, {});
        QVERIFY(other);
        const auto intruder = Sandbox::Tls::issueClientCertificate(*other, QStringLiteral("intruder"), {QStringLiteral("system:masters")},
                                                                   QDateTime::currentDateTimeUtc().addDays(1));
        QVERIFY(intruder);
        const QString cert = m_dir.filePath(QStringLiteral("intruder.crt"));
        const QString key = m_dir.filePath(QStringLiteral("intruder.key"));
        QVERIFY(writeFile(cert, intruder->certificatePem) && writeFile(key, intruder->keyPem));
        const Run refused = runProcess(curl, {QStringLiteral("-s"), QStringLiteral("-w"), QStringLiteral("\n%{http_code}"), QStringLiteral("--cacert"),
                                              m_connection.value(QStringLiteral("caFile")).toString(), QStringLiteral("--cert"), cert,
                                              QStringLiteral("--key"), key, server() + QStringLiteral("/api/v1/namespaces/starforge/pods")},
                                       cleanEnvironment());
        QCOMPARE(refused.exitCode, 0);
        const QStringList parts = refused.out.split(u'\n');
        QCOMPARE(parts.last(), QStringLiteral("401"));
        const QJsonObject status = json(parts.first());
        QCOMPARE(status.value(QStringLiteral("kind")).toString(), QStringLiteral("Status"));
        QCOMPARE(status.value(QStringLiteral("reason")).toString(), QStringLiteral("Unauthorized"));
        // The sandbox's own certificate over the same curl: in.
        const Run accepted = runProcess(curl, {QStringLiteral("-s"), QStringLiteral("-o"), QStringLiteral("/dev/null"), QStringLiteral("-w"),
                                               QStringLiteral("%{http_code}"), QStringLiteral("--cacert"),
                                               m_connection.value(QStringLiteral("caFile")).toString(), QStringLiteral("--cert"),
                                               m_connection.value(QStringLiteral("clientCertFile")).toString(), QStringLiteral("--key"),
                                               m_connection.value(QStringLiteral("clientKeyFile")).toString(),
                                               server() + QStringLiteral("/api/v1/namespaces/starforge/pods")},
                                        cleanEnvironment());
        QCOMPARE(accepted.out, QStringLiteral("200"));
    }

    void tokensLiveForTheTokenTtl()
    {
        const Run run = credential(execInfo(false));
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject out = json(run.out);
        QCOMPARE(out.value(QStringLiteral("apiVersion")).toString(), QStringLiteral("client.authentication.k8s.io/v1"));
        QCOMPARE(out.value(QStringLiteral("kind")).toString(), QStringLiteral("ExecCredential"));
        const QJsonObject status = out.value(QStringLiteral("status")).toObject();
        QVERIFY(status.value(QStringLiteral("token")).toString().startsWith(QStringLiteral("sfx1.starforge-exec-user.")));
        const QString stamp = status.value(QStringLiteral("expirationTimestamp")).toString();
        QVERIFY2(QRegularExpression(QStringLiteral("^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$")).match(stamp).hasMatch(), qPrintable(stamp));
        QVERIFY(qAbs(QDateTime::currentDateTimeUtc().secsTo(QDateTime::fromString(stamp, Qt::ISODate)) - TokenTtl) <= 5);
        // v1beta1 in, v1beta1 out.
        const Run beta = credential(execInfo(false, QStringLiteral("client.authentication.k8s.io/v1beta1")));
        QCOMPARE(json(beta.out).value(QStringLiteral("apiVersion")).toString(), QStringLiteral("client.authentication.k8s.io/v1beta1"));
        // TTL 0: no expiry at all.
        const Run noExpiry = credential(execInfo(false), knobs({{"STARFORGE_CREDENTIAL_TTL_S", QStringLiteral("0")}}));
        QVERIFY(!json(noExpiry.out).value(QStringLiteral("status")).toObject().contains(QStringLiteral("expirationTimestamp")));
        QCOMPARE(getWithToken(json(noExpiry.out).value(QStringLiteral("status")).toObject().value(QStringLiteral("token")).toString().toLatin1()).status, 200);
    }

    void expiredTokenIsUnauthorized()
    {
        const Run run = credential(execInfo(false), knobs({{"STARFORGE_CREDENTIAL_TTL_S", QStringLiteral("1")}}));
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject status = json(run.out).value(QStringLiteral("status")).toObject();
        const QByteArray token = status.value(QStringLiteral("token")).toString().toLatin1();
        const QDateTime expiry = QDateTime::fromString(status.value(QStringLiteral("expirationTimestamp")).toString(), Qt::ISODate);
        QCOMPARE(getWithToken(token).status, 200);
        QTest::qWait(static_cast<int>(qMax<qint64>(0, QDateTime::currentDateTimeUtc().msecsTo(expiry))) + 200);
        const HttpReply late = getWithToken(token);
        QCOMPARE(late.status, 401);
        QCOMPARE(late.json().value(QStringLiteral("kind")).toString(), QStringLiteral("Status"));
        QCOMPARE(late.reason(), QStringLiteral("Unauthorized"));
    }

    void failureModes()
    {
        const QString prefix = QStringLiteral("starforge-sandbox-credential: ");
        const Run missing = credential(std::nullopt);
        QCOMPARE(missing.exitCode, 1);
        QVERIFY2(missing.err.startsWith(prefix + QStringLiteral("KUBERNETES_EXEC_INFO is not set")), qPrintable(missing.err));
        QCOMPARE(missing.out, QString());
        const Run malformed = credential(QByteArray("{\"apiVersion\":"));
        QCOMPARE(malformed.exitCode, 1);
        QVERIFY2(malformed.err.startsWith(prefix + QStringLiteral("KUBERNETES_EXEC_INFO is not an ExecCredential")), qPrintable(malformed.err));
        const Run alpha = credential(execInfo(false, QStringLiteral("client.authentication.k8s.io/v1alpha1")));
        QCOMPARE(alpha.exitCode, 1);
        QVERIFY2(alpha.err.contains(QStringLiteral("asks for apiVersion 'client.authentication.k8s.io/v1alpha1'")), qPrintable(alpha.err));
        const Run elsewhere = credential(execInfo(false, QStringLiteral("client.authentication.k8s.io/v1"),
                                                  QJsonObject{{QStringLiteral("server"), QStringLiteral("https://10.1.2.3:6443")}}));
        QCOMPARE(elsewhere.exitCode, 1);
        QVERIFY2(elsewhere.err.contains(QStringLiteral("the cluster in KUBERNETES_EXEC_INFO is 'https://10.1.2.3:6443'")), qPrintable(elsewhere.err));
        QCOMPARE(elsewhere.out, QString());

        const Run failed = credential(execInfo(false), knobs({{"STARFORGE_CREDENTIAL_FAIL", QStringLiteral("the identity provider is down")}}));
        QCOMPARE(failed.exitCode, 1);
        QCOMPARE(failed.err, prefix + QStringLiteral("the identity provider is down\n"));
        QCOMPARE(failed.out, QString());

        const Run nobody = credential(execInfo(false), knobs({{"STARFORGE_CREDENTIAL_INTERACTIVE", QStringLiteral("1")}}));
        QCOMPARE(nobody.exitCode, 1);
        QVERIFY2(nobody.err.startsWith(prefix + QStringLiteral("this login needs a person at a terminal")), qPrintable(nobody.err));

        // Through kubectl, which is not on a terminal here (spec.interactive false), the same words
        // reach its stderr and it fails.
        const Run viaKubectl = kubectl(QStringLiteral("starforge-sandbox-exec"), {QStringLiteral("get"), QStringLiteral("pods")},
                                       knobs({{"STARFORGE_CREDENTIAL_INTERACTIVE", QStringLiteral("1")}}));
        QCOMPARE(viaKubectl.exitCode, 1);
        QVERIFY2(viaKubectl.err.contains(QStringLiteral("this login needs a person at a terminal")), qPrintable(viaKubectl.err));
        QVERIFY2(viaKubectl.err.contains(QStringLiteral("starforge-sandbox-credential failed with exit code 1")), qPrintable(viaKubectl.err));
    }

    void deviceCodeLoginWaitsForApproval()
    {
        const QString approve = m_dir.filePath(QStringLiteral("approved"));
        QProcessEnvironment env = cleanEnvironment();
        env.insert(QStringLiteral("KUBERNETES_EXEC_INFO"), QString::fromUtf8(execInfo(true)));
        env.insert(QStringLiteral("STARFORGE_CREDENTIAL_INTERACTIVE"), QStringLiteral("1"));
        env.insert(QStringLiteral("STARFORGE_CREDENTIAL_APPROVE_FILE"), approve);
        QProcess p;
        p.setProcessEnvironment(env);
        p.start(m_tool, {QStringLiteral("--state"), m_state});
        QString err;
        QTRY_VERIFY_WITH_TIMEOUT((err += QString::fromUtf8(p.readAllStandardError())).contains(QStringLiteral("enter the code")), 10000);
        const auto match = QRegularExpression(QStringLiteral("^To sign in, open https://127\\.0\\.0\\.1/device\\?code=([A-Z]{4}-\\d{4}) in a browser "
                                                             "and enter the code ([A-Z]{4}-\\d{4})$"),
                                              QRegularExpression::MultilineOption)
                               .match(err);
        QVERIFY2(match.hasMatch(), qPrintable(err));
        QCOMPARE(match.captured(1), match.captured(2));
        // Still waiting for the person.
        QVERIFY(!p.waitForFinished(300));
        QVERIFY(writeFile(approve, "yes"));
        QVERIFY(p.waitForFinished(5000));
        QCOMPARE(p.exitCode(), 0);
        QVERIFY(json(QString::fromUtf8(p.readAllStandardOutput())).value(QStringLiteral("status")).toObject().contains(QStringLiteral("token")));
    }

    void delayKnob()
    {
        const Run slow = credential(execInfo(false), knobs({{"STARFORGE_CREDENTIAL_DELAY_MS", QStringLiteral("400")}}));
        QCOMPARE(slow.exitCode, 0);
        QVERIFY2(slow.elapsedMs >= 400, qPrintable(QString::number(slow.elapsedMs)));
    }

    void logRecordsWhatKubectlPassed()
    {
        const QString log = m_dir.filePath(QStringLiteral("credential.log"));
        const Run pods = kubectl(QStringLiteral("starforge-sandbox-exec"), {QStringLiteral("get"), QStringLiteral("pods")},
                                 knobs({{"STARFORGE_CREDENTIAL_LOG", log}}));
        QVERIFY2(pods.exitCode == 0, qPrintable(pods.err));
        const QList<QByteArray> lines = readAll(log).split('\n');
        QVERIFY(lines.size() >= 2 && lines.last().isEmpty());
        const QJsonObject entry = QJsonDocument::fromJson(lines.first()).object();
        QCOMPARE(entry.value(QStringLiteral("outcome")).toString(), QStringLiteral("token"));
        QVERIFY(entry.value(QStringLiteral("pid")).toInteger() > 0);
        QVERIFY(QDateTime::fromString(entry.value(QStringLiteral("time")).toString(), Qt::ISODateWithMs).isValid());
        const QJsonObject info = entry.value(QStringLiteral("execInfo")).toObject();
        QCOMPARE(info.value(QStringLiteral("apiVersion")).toString(), QStringLiteral("client.authentication.k8s.io/v1"));
        QCOMPARE(info.value(QStringLiteral("kind")).toString(), QStringLiteral("ExecCredential"));
        const QJsonObject spec = info.value(QStringLiteral("spec")).toObject();
        QCOMPARE(spec.value(QStringLiteral("interactive")).toBool(true), false);
        // provideClusterInfo: the cluster as the kubeconfig has it, CA included.
        const QJsonObject cluster = spec.value(QStringLiteral("cluster")).toObject();
        QCOMPARE(cluster.value(QStringLiteral("server")).toString(), server());
        QCOMPARE(QByteArray::fromBase64(cluster.value(QStringLiteral("certificate-authority-data")).toString().toLatin1()),
                 readAll(m_connection.value(QStringLiteral("caFile")).toString()));
        // A failed run is logged too.
        (void)credential(std::nullopt, knobs({{"STARFORGE_CREDENTIAL_LOG", log}}));
        const QList<QByteArray> after = readAll(log).split('\n');
        const QJsonObject failed = QJsonDocument::fromJson(after.at(after.size() - 2)).object();
        QCOMPARE(failed.value(QStringLiteral("outcome")).toString(), QStringLiteral("failed"));
        QVERIFY(failed.value(QStringLiteral("execInfo")).isNull());
        QVERIFY(failed.value(QStringLiteral("error")).toString().startsWith(QStringLiteral("KUBERNETES_EXEC_INFO is not set")));
    }

    void stopRemovesTheCredentialFiles()
    {
        ::kill(static_cast<pid_t>(m_sandbox.processId()), SIGTERM);
        QVERIFY(m_sandbox.waitForFinished(10000));
        QCOMPARE(m_sandbox.exitCode(), 0);
        for (const char *suffix : {"", ".client.crt", ".client.key", ".credential.json", ".kubeconfig", ".ca.pem"}) {
            QVERIFY2(!QFile::exists(m_connectionPath + QLatin1String(suffix)), suffix);
        }
        // Without its state the tool says so instead of minting a token for a gone server.
        const Run orphan = credential(execInfo(false));
        QCOMPARE(orphan.exitCode, 1);
        QVERIFY2(orphan.err.contains(QStringLiteral("cannot read the state file")), qPrintable(orphan.err));
    }
};

QTEST_GUILESS_MAIN(TestSandboxCredential)
#include "tst_sandbox_credential.moc"
