#include "sandbox/credential/exectoken.h"

#include <QCryptographicHash>
#include <QMessageAuthenticationCode>

namespace Starforge::Sandbox::Credential::ExecToken {

namespace {

QByteArray signature(const QByteArray &secret, const QString &user, qint64 expiry)
{
    return QMessageAuthenticationCode::hash(user.toUtf8() + '|' + QByteArray::number(expiry), secret, QCryptographicHash::Sha256)
        .toHex();
}

// Compares without an early exit, so a guess learns nothing from the time a refusal takes.
bool sameBytes(const QByteArray &a, const QByteArray &b)
{
    if (a.size() != b.size()) {
        return false;
    }
    unsigned char diff = 0;
    for (qsizetype i = 0; i < a.size(); ++i) {
        diff |= static_cast<unsigned char>(a.at(i) ^ b.at(i));
    }
    return diff == 0;
}

} // namespace

QByteArray mint(const QByteArray &secret, const QString &user, qint64 expiryEpochSeconds)
{
    return Prefix + user.toUtf8() + '.' + QByteArray::number(expiryEpochSeconds) + '.' + signature(secret, user, expiryEpochSeconds);
}

Check verify(const QByteArray &token, const QByteArray &secret, const QDateTime &now, Claims *claims)
{
    if (!token.startsWith(Prefix)) {
        return Check::NotAnExecToken;
    }
    // From the right: the signature and expiry never contain a '.', a user name might.
    const QByteArray rest = token.mid(qsizetype(sizeof Prefix) - 1);
    const qsizetype sigDot = rest.lastIndexOf('.');
    const qsizetype expiryDot = sigDot > 0 ? rest.lastIndexOf('.', sigDot - 1) : -1;
    if (expiryDot <= 0 || secret.isEmpty()) {
        return Check::BadSignature;
    }
    const QString user = QString::fromUtf8(rest.left(expiryDot));
    bool ok = false;
    const qint64 expiry = rest.mid(expiryDot + 1, sigDot - expiryDot - 1).toLongLong(&ok);
    if (!ok || expiry < 0 || !sameBytes(rest.mid(sigDot + 1), signature(secret, user, expiry))) {
        return Check::BadSignature;
    }
    if (expiry != 0 && now.toSecsSinceEpoch() >= expiry) {
        return Check::Expired;
    }
    if (claims) {
        *claims = Claims{user, expiry};
    }
    return Check::Valid;
}

} // namespace Starforge::Sandbox::Credential::ExecToken
