#pragma once

#include <QMap>
#include <QString>

namespace Starforge::Config {

// A named connection profile: the non-secret settings a user set explicitly. Settings left out
// take their default. Secrets are never held here; they live in the SecretStore under the
// profile's name.
struct Profile
{
    QString name;
    QMap<QString, QString> values; // FORGE_* key -> canonical value

    friend bool operator==(const Profile &, const Profile &) = default;
};

} // namespace Starforge::Config
