// starforge-sandbox-credential: the sandbox's exec credential plugin, so clients can be tested
// against the way most managed clusters authenticate (a kubeconfig user.exec such as aws eks
// get-token or kubelogin). kubectl, or Starforge, runs it as it runs any plugin:
// KUBERNETES_EXEC_INFO holds an ExecCredential (client.authentication.k8s.io/v1 or v1beta1)
// whose spec says whether a person is at a terminal and, with provideClusterInfo, which cluster;
// stdout gets an ExecCredential of the same apiVersion with a token (or a client certificate)
// and its expirationTimestamp; stderr is for people. The state file (--state, F.credential.json)
// comes from the running sandbox.
//
// Knobs, from the environment the client passes on, so tests can drive the client's side:
//   STARFORGE_CREDENTIAL_KIND=cert      a client certificate and key instead of a token
//   STARFORGE_CREDENTIAL_TTL_S=N        token lifetime instead of the state's (0: never expires)
//   STARFORGE_CREDENTIAL_DELAY_MS=N     sleep before answering (a slow cloud login)
//   STARFORGE_CREDENTIAL_FAIL=MESSAGE   print MESSAGE on stderr and exit 1
//   STARFORGE_CREDENTIAL_INTERACTIVE=1  a device-code login: needs spec.interactive, prints the
//                                       code on stderr, waits (120 s at most) until the file
//                                       STARFORGE_CREDENTIAL_APPROVE_FILE exists
//   STARFORGE_CREDENTIAL_LOG=FILE       append one JSON line per run (time, pid, execInfo, outcome)

#include "sandbox/credential/credentialstate.h"
#include "sandbox/credential/exectoken.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QThread>
#include <QTimeZone>
#include <QUrl>

#include <cstdio>

namespace {

using namespace Starforge::Sandbox::Credential;

const QString V1 = QStringLiteral("client.authentication.k8s.io/v1");
const QString V1Beta1 = QStringLiteral("client.authentication.k8s.io/v1beta1");
constexpr int ApprovalTimeoutSeconds = 120;

const char Usage[] =
    "usage: starforge-sandbox-credential --state FILE\n"
    "An exec credential plugin (client.authentication.k8s.io/v1, v1beta1) for starforge-sandbox: run it from a\n"
    "kubeconfig's user.exec (context starforge-sandbox-exec of the sandbox's F.kubeconfig), which sets\n"
    "KUBERNETES_EXEC_INFO. FILE is the sandbox's F.credential.json.\n";

void printErr(const QString &text)
{
    std::fputs(text.toLocal8Bit().constData(), stderr);
    std::fflush(stderr);
}

QUrl normalized(const QString &url)
{
    return QUrl(url).adjusted(QUrl::StripTrailingSlash | QUrl::NormalizePathSegments);
}

// "ABCD-1234", as device-code logins show them.
QString deviceCode()
{
    QString code;
    for (int i = 0; i < 4; ++i) code += QChar(u'A' + QRandomGenerator::system()->bounded(26));
    code += u'-';
    for (int i = 0; i < 4; ++i) code += QChar(u'0' + QRandomGenerator::system()->bounded(10));
    return code;
}

class Plugin
{
public:
    int run(const QStringList &args)
    {
        QString statePath;
        for (qsizetype i = 1; i < args.size(); ++i) {
            if (args[i] == QLatin1String("--help") || args[i] == QLatin1String("-h")) {
                std::fputs(Usage, stdout);
                return 0;
            }
            if (args[i] == QLatin1String("--state") && i + 1 < args.size()) {
                statePath = args[++i];
            } else if (args[i].startsWith(QLatin1String("--state="))) {
                statePath = args[i].mid(8);
            } else {
                return fail(QStringLiteral("unknown argument '%1'\n%2").arg(args[i], QLatin1String(Usage)).trimmed());
            }
        }

        // What kubectl says about the call. Without it this was not started as a plugin.
        if (!qEnvironmentVariableIsSet("KUBERNETES_EXEC_INFO")) {
            return fail(QStringLiteral("KUBERNETES_EXEC_INFO is not set: this is an exec credential plugin, run by kubectl (or "
                                       "Starforge) from a kubeconfig's user.exec, which sets it"));
        }
        const QByteArray rawInfo = qgetenv("KUBERNETES_EXEC_INFO");
        QJsonParseError parseError;
        const QJsonDocument infoDoc = QJsonDocument::fromJson(rawInfo, &parseError);
        m_execInfo = infoDoc.isObject() ? QJsonValue(infoDoc.object()) : QJsonValue(QString::fromUtf8(rawInfo));
        const QJsonObject info = infoDoc.object();
        const QString apiVersion = info.value(QStringLiteral("apiVersion")).toString();
        if (!infoDoc.isObject() || info.value(QStringLiteral("kind")).toString() != QLatin1String("ExecCredential")) {
            return fail(QStringLiteral("KUBERNETES_EXEC_INFO is not an ExecCredential (a JSON object with kind ExecCredential)%1")
                            .arg(parseError.error == QJsonParseError::NoError ? QString() : QStringLiteral(": ") + parseError.errorString()));
        }
        if (apiVersion != V1 && apiVersion != V1Beta1) {
            return fail(QStringLiteral("KUBERNETES_EXEC_INFO asks for apiVersion '%1'; this plugin answers %2 and %3")
                            .arg(apiVersion, V1, V1Beta1));
        }
        const QJsonObject spec = info.value(QStringLiteral("spec")).toObject();
        const bool interactive = spec.value(QStringLiteral("interactive")).toBool();

        if (statePath.isEmpty()) {
            return fail(QStringLiteral("--state FILE is missing\n%1").arg(QLatin1String(Usage)).trimmed());
        }
        QString stateError;
        const std::optional<State> state = State::read(statePath, &stateError);
        if (!state) {
            return fail(stateError);
        }
        // provideClusterInfo: a plugin must not hand this cluster's credentials to another one.
        if (spec.contains(QStringLiteral("cluster"))) {
            const QString server = spec.value(QStringLiteral("cluster")).toObject().value(QStringLiteral("server")).toString();
            if (normalized(server) != normalized(state->server)) {
                return fail(QStringLiteral("the cluster in KUBERNETES_EXEC_INFO is '%1', but %2 holds credentials for %3")
                                .arg(server, statePath, state->server));
            }
        }

        if (const int delay = qEnvironmentVariableIntValue("STARFORGE_CREDENTIAL_DELAY_MS"); delay > 0) {
            QThread::msleep(static_cast<unsigned long>(delay));
        }
        if (const QString message = qEnvironmentVariable("STARFORGE_CREDENTIAL_FAIL"); !message.isEmpty()) {
            return fail(message);
        }
        if (qEnvironmentVariable("STARFORGE_CREDENTIAL_INTERACTIVE") == QLatin1String("1")) {
            if (const int code = deviceLogin(interactive); code != 0) {
                return code;
            }
        }

        bool ttlSet = false;
        const qint64 ttlOverride = qEnvironmentVariable("STARFORGE_CREDENTIAL_TTL_S").toLongLong(&ttlSet);
        const qint64 ttl = ttlSet && ttlOverride >= 0 ? ttlOverride : state->tokenTtlSeconds;
        const QDateTime now = QDateTime::currentDateTimeUtc();
        // Whole seconds, rounded up: a credential lives at least its TTL (a 1 s token would
        // otherwise be dead on arrival half of the time).
        const QDateTime ttlEnd = QDateTime::fromSecsSinceEpoch((now.toMSecsSinceEpoch() + 999) / 1000 + ttl, QTimeZone::utc());
        QJsonObject status;
        QDateTime expiry;
        if (qEnvironmentVariable("STARFORGE_CREDENTIAL_KIND") == QLatin1String("cert")) {
            QFile cert(state->clientCertificateFile);
            QFile key(state->clientKeyFile);
            if (!cert.open(QIODevice::ReadOnly) || !key.open(QIODevice::ReadOnly)) {
                return fail(QStringLiteral("cannot read the client certificate %1 or its key %2")
                                .arg(state->clientCertificateFile, state->clientKeyFile));
            }
            status.insert(QStringLiteral("clientCertificateData"), QString::fromUtf8(cert.readAll()));
            status.insert(QStringLiteral("clientKeyData"), QString::fromUtf8(key.readAll()));
            // No later than the certificate itself.
            expiry = state->clientCertificateNotAfter;
            if (ttl > 0 && (!expiry.isValid() || ttlEnd < expiry)) {
                expiry = ttlEnd;
            }
        } else {
            if (ttl > 0) {
                expiry = ttlEnd;
            }
            status.insert(QStringLiteral("token"), QString::fromLatin1(ExecToken::mint(state->secret, QLatin1String(ExecUser),
                                                                                      expiry.isValid() ? expiry.toSecsSinceEpoch() : 0)));
        }
        // Without one the client keeps the credential until the server refuses it (401).
        if (expiry.isValid()) {
            status.insert(QStringLiteral("expirationTimestamp"), rfc3339(expiry));
        }
        const QJsonObject credential{{QStringLiteral("apiVersion"), apiVersion},
                                     {QStringLiteral("kind"), QStringLiteral("ExecCredential")},
                                     {QStringLiteral("status"), status}};
        const QByteArray out = QJsonDocument(credential).toJson(QJsonDocument::Compact) + '\n';
        std::fwrite(out.constData(), 1, static_cast<size_t>(out.size()), stdout);
        std::fflush(stdout);
        log(QJsonObject{{QStringLiteral("outcome"), status.contains(QStringLiteral("token")) ? QStringLiteral("token")
                                                                                            : QStringLiteral("certificate")},
                        {QStringLiteral("expirationTimestamp"), status.value(QStringLiteral("expirationTimestamp"))}});
        return 0;
    }

private:
    // A device-code login as cloud CLIs run one: the code on stderr for the person, then a wait
    // for the approval (here: a file appearing). 0 once approved.
    int deviceLogin(bool interactive)
    {
        if (!interactive) {
            return fail(QStringLiteral("this login needs a person at a terminal (spec.interactive is false in KUBERNETES_EXEC_INFO; "
                                       "run the client from a terminal, or use a context that logs in without one)"));
        }
        const QString approveFile = qEnvironmentVariable("STARFORGE_CREDENTIAL_APPROVE_FILE");
        if (approveFile.isEmpty()) {
            return fail(QStringLiteral("STARFORGE_CREDENTIAL_INTERACTIVE=1 needs STARFORGE_CREDENTIAL_APPROVE_FILE, the file whose "
                                       "appearance approves the sign-in"));
        }
        const QString code = deviceCode();
        printErr(QStringLiteral("To sign in, open https://127.0.0.1/device?code=%1 in a browser and enter the code %1\n").arg(code));
        printErr(QStringLiteral("Waiting for the sign-in to be approved...\n"));
        QElapsedTimer waited;
        waited.start();
        while (!QFileInfo::exists(approveFile)) {
            if (waited.elapsed() > ApprovalTimeoutSeconds * 1000) {
                return fail(QStringLiteral("the sign-in with code %1 was not approved within %2 s").arg(code).arg(ApprovalTimeoutSeconds));
            }
            QThread::msleep(100);
        }
        return 0;
    }

    int fail(const QString &message)
    {
        printErr(QStringLiteral("starforge-sandbox-credential: %1\n").arg(message));
        log(QJsonObject{{QStringLiteral("outcome"), QStringLiteral("failed")}, {QStringLiteral("error"), message}});
        return 1;
    }

    // One line per run: what the client passed and what came of it.
    void log(QJsonObject entry) const
    {
        const QString path = qEnvironmentVariable("STARFORGE_CREDENTIAL_LOG");
        if (path.isEmpty()) {
            return;
        }
        entry.insert(QStringLiteral("time"), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs));
        entry.insert(QStringLiteral("pid"), QCoreApplication::applicationPid());
        entry.insert(QStringLiteral("execInfo"), m_execInfo);
        QFile file(path);
        if (file.open(QIODevice::WriteOnly | QIODevice::Append)) {
            file.write(QJsonDocument(entry).toJson(QJsonDocument::Compact) + '\n');
        }
    }

    QJsonValue m_execInfo = QJsonValue::Null;  // as received: an object, the raw text, or null
};

} // namespace

int main(int argc, char *argv[])
{
    QStringList args;
    for (int i = 0; i < argc; ++i) {
        args << QString::fromLocal8Bit(argv[i]);
    }
    return Plugin().run(args);
}
