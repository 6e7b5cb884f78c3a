#pragma once

// The bearer tokens starforge-sandbox-credential mints and the sandbox's API server accepts:
//   sfx1.<user>.<expiry>.<hex HMAC-SHA256(secret, "<user>|<expiry>")>
// expiry is in seconds since the epoch (0: never). They verify themselves against the secret the
// sandbox generated at start and handed to the tool in its state file, so the tool needs no
// round trip to the server, as a cloud provider's token helper signs locally.

#include <QByteArray>
#include <QDateTime>
#include <QString>

#include <optional>

namespace Starforge::Sandbox::Credential {

// Who the tool's tokens and certificate are for, and the group that makes them cluster admins
// (as kubeadm's admin.conf is).
inline constexpr char ExecUser[] = "starforge-exec-user";
inline constexpr char CertUser[] = "starforge-cert-user";
inline constexpr char MastersGroup[] = "system:masters";

namespace ExecToken {

inline constexpr char Prefix[] = "sfx1.";

QByteArray mint(const QByteArray &secret, const QString &user, qint64 expiryEpochSeconds);

struct Claims
{
    QString user;
    qint64 expiryEpochSeconds = 0;  // 0: never expires
};

enum class Check { Valid, NotAnExecToken, BadSignature, Expired };

// Valid fills claims; an expired token is still told apart (the server answers 401 either way).
Check verify(const QByteArray &token, const QByteArray &secret, const QDateTime &now, Claims *claims = nullptr);

} // namespace ExecToken

} // namespace Starforge::Sandbox::Credential
