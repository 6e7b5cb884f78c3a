#include "sandbox/credential/credentialstate.h"

#include <QFile>
#include <QJsonDocument>

namespace Starforge::Sandbox::Credential {

namespace {

constexpr char ServerKey[] = "server";
constexpr char SecretKey[] = "secret";
constexpr char TokenTtlKey[] = "tokenTtlSeconds";
constexpr char CertFileKey[] = "clientCertificateFile";
constexpr char KeyFileKey[] = "clientKeyFile";
constexpr char CertNotAfterKey[] = "clientCertificateNotAfter";

} // namespace

QString rfc3339(const QDateTime &time)
{
    return time.toUTC().toString(QStringLiteral("yyyy-MM-ddTHH:mm:ssZ"));
}

QJsonObject State::toJson() const
{
    return QJsonObject{{QLatin1String(ServerKey), server},
                       {QLatin1String(SecretKey), QString::fromLatin1(secret.toHex())},
                       {QLatin1String(TokenTtlKey), tokenTtlSeconds},
                       {QLatin1String(CertFileKey), clientCertificateFile},
                       {QLatin1String(KeyFileKey), clientKeyFile},
                       {QLatin1String(CertNotAfterKey), rfc3339(clientCertificateNotAfter)}};
}

std::optional<State> State::read(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("cannot read the state file %1 (%2); it is written by a running starforge-sandbox and removed "
                                "when it stops").arg(path, file.errorString());
        return std::nullopt;
    }
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &parseError);
    const QJsonObject o = doc.object();
    State state;
    state.server = o.value(QLatin1String(ServerKey)).toString();
    state.secret = QByteArray::fromHex(o.value(QLatin1String(SecretKey)).toString().toLatin1());
    state.tokenTtlSeconds = o.value(QLatin1String(TokenTtlKey)).toInteger(-1);
    state.clientCertificateFile = o.value(QLatin1String(CertFileKey)).toString();
    state.clientKeyFile = o.value(QLatin1String(KeyFileKey)).toString();
    state.clientCertificateNotAfter = QDateTime::fromString(o.value(QLatin1String(CertNotAfterKey)).toString(), Qt::ISODate);
    if (!doc.isObject() || state.server.isEmpty() || state.secret.isEmpty() || state.tokenTtlSeconds < 0) {
        *error = QStringLiteral("%1 is not a starforge-sandbox credential state file (it needs %2, %3 and %4)")
                     .arg(path, QLatin1String(ServerKey), QLatin1String(SecretKey), QLatin1String(TokenTtlKey));
        return std::nullopt;
    }
    return state;
}

} // namespace Starforge::Sandbox::Credential
