#pragma once

// Where a Session's settings come from: a connection profile (its values, the environment over
// them, its secrets from the keychain) or the connection file a starforge-sandbox writes (its
// values and secrets, the environment over them). Reading is asynchronous because the keychain
// answers over D-Bus. A session reads its source again when the cluster comes back after a
// loss: a restarted sandbox has a new CA and new tokens, a rotated token is in the keychain.

#include "core/config/effectiveconfig.h"
#include "core/config/profile.h"
#include "core/util/result.h"

#include <QProcessEnvironment>
#include <QString>

#include <functional>
#include <optional>

class QObject;

namespace Starforge::Secrets {
class SecretStore;
}

namespace Starforge {

struct SessionSource
{
    std::optional<Config::Profile> profile;  // set: a profile and its keychain secrets
    QString connectionFile;                  // else: a starforge-sandbox connection file

    static SessionSource ofProfile(Config::Profile profile);
    static SessionSource ofConnectionFile(QString path);

    bool isConnectionFile() const { return !profile; }
    // "profile ml-prod" or "the sandbox's connection file /tmp/sb/conn.json"
    QString describe() const;

    // The settings in force; done runs once on context's thread. An error says what to fix:
    // a missing connection file, a keychain that cannot be read, an invalid environment value.
    void resolve(Secrets::SecretStore *secrets, const QProcessEnvironment &environment, QObject *context,
                 std::function<void(Result<Config::EffectiveConfig>)> done) const;

    // Why the sandbox behind a connection file cannot answer: it stopped (it removes its file
    // then) or was killed (the pid it wrote is gone). Empty while it may still run, and always
    // for a profile. A refused connection alone does not tell a person what to restart.
    QString stoppedReason() const;
};

} // namespace Starforge
