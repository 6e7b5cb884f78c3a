#pragma once

// The state file the sandbox writes for starforge-sandbox-credential (F.credential.json, owner
// only) and the tool reads through --state: the server the credentials are for, the secret exec
// tokens are signed with, their lifetime, and the client certificate the tool hands out when
// asked for one. Plain Qt Core, so the tool stays small.

#include <QByteArray>
#include <QDateTime>
#include <QJsonObject>
#include <QString>

#include <optional>

namespace Starforge::Sandbox::Credential {

struct State
{
    QString server;                       // the API server URL, as the kubeconfig's cluster has it
    QByteArray secret;                    // the HMAC key of exec tokens (hex in the file)
    qint64 tokenTtlSeconds = 3600;        // 0: tokens never expire
    QString clientCertificateFile;        // PEM
    QString clientKeyFile;                // PEM
    QDateTime clientCertificateNotAfter;  // UTC

    QJsonObject toJson() const;
    // nullopt with the reason in error when the file is missing, unreadable or not a state file.
    static std::optional<State> read(const QString &path, QString *error);
};

// RFC 3339 in UTC, seconds precision ("2025-01-31T12:00:00Z"), as expirationTimestamp is written.
QString rfc3339(const QDateTime &time);

} // namespace Starforge::Sandbox::Credential
