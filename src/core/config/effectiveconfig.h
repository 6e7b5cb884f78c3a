#pragma once

// The settings in force for one profile: for each key, the environment variable when set,
// else the profile's value, else the default; secrets come from the environment or the
// keychain. Each value says where it came from, so "why is this the value?" has an answer.

#include "core/config/profile.h"
#include "core/config/settingsschema.h"
#include "core/util/result.h"

#include <QList>
#include <QMap>
#include <QProcessEnvironment>
#include <QString>

#include <optional>

namespace Starforge::Config {

enum class ValueSource { Unset, Default, Profile, Environment, Keychain };

// "default", "profile", ...: sourceName() in English for machine output (the CLI's --json),
// sourceDisplayName() in the user's language for tables and the dialog.
QString sourceName(ValueSource source);
QString sourceDisplayName(ValueSource source);

struct EffectiveValue
{
    const SettingDefinition *definition = nullptr;
    QString value;               // canonical when valid; the raw text when not
    ValueSource source = ValueSource::Unset;
    std::optional<Error> problem; // set when an environment value does not validate

    QString key() const { return definition->key; }
};

class EffectiveConfig final
{
public:
    // keychainSecrets: the profile's secrets read from the SecretStore (key -> value).
    static EffectiveConfig resolve(const std::optional<Profile> &profile, const QProcessEnvironment &environment,
                                   const QMap<QString, QString> &keychainSecrets = {});

    QString profileName() const { return m_profileName; }
    const QList<EffectiveValue> &values() const { return m_values; }
    const EffectiveValue *find(const QString &key) const;

    QString value(const QString &key) const;
    bool boolean(const QString &key) const;
    qint64 integer(const QString &key) const;
    ValueSource source(const QString &key) const;

    // Environment values that failed validation, one Error each.
    QList<Error> problems() const;
    // Secrets given in the environment (key -> value), e.g. for "save them to the keychain".
    QMap<QString, QString> environmentSecrets() const;

private:
    QString m_profileName;
    QList<EffectiveValue> m_values;
};

} // namespace Starforge::Config
