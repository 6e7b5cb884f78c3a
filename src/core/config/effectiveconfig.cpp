#include "core/config/effectiveconfig.h"

#include "core/config/validation.h"
#include "core/logging/logging.h"

#include <QCoreApplication>

namespace Starforge::Config {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text { Q_DECLARE_TR_FUNCTIONS(EffectiveConfig) };

// The English names of the sources, marked for lupdate: sourceName() gives them as they are
// (machine output), sourceDisplayName() translated.
const char *sourceText(ValueSource source)
{
    switch (source) {
    case ValueSource::Unset: return QT_TRANSLATE_NOOP("EffectiveConfig", "unset");
    case ValueSource::Default: return QT_TRANSLATE_NOOP("EffectiveConfig", "default");
    case ValueSource::Profile: return QT_TRANSLATE_NOOP("EffectiveConfig", "profile");
    case ValueSource::Environment: return QT_TRANSLATE_NOOP("EffectiveConfig", "environment");
    case ValueSource::Keychain: return QT_TRANSLATE_NOOP("EffectiveConfig", "keychain");
    }
    return "";
}

} // namespace

QString sourceName(ValueSource source)
{
    return QString::fromUtf8(sourceText(source));
}

QString sourceDisplayName(ValueSource source)
{
    return QCoreApplication::translate("EffectiveConfig", sourceText(source));
}

EffectiveConfig EffectiveConfig::resolve(const std::optional<Profile> &profile, const QProcessEnvironment &environment,
                                         const QMap<QString, QString> &keychainSecrets)
{
    EffectiveConfig config;
    config.m_profileName = profile ? profile->name : QString();
    for (const SettingDefinition &definition : SettingsSchema::all()) {
        EffectiveValue v;
        v.definition = &definition;
        // An empty environment variable counts as unset, as in most shells' ${VAR:-default}.
        const QString fromEnv = environment.value(definition.key);
        if (!fromEnv.trimmed().isEmpty()) {
            const auto checked = SettingsSchema::validate(definition, fromEnv);
            v.source = ValueSource::Environment;
            if (checked) {
                v.value = *checked;
            } else {
                v.value = fromEnv;
                v.problem = checked.error();
            }
            if (definition.isSecret()) {
                Logging::addSecret(v.value);
            }
        } else if (definition.isSecret()) {
            const QString fromKeychain = keychainSecrets.value(definition.key);
            if (!fromKeychain.isEmpty()) {
                v.value = fromKeychain;
                v.source = ValueSource::Keychain;
            }
        } else if (profile && profile->values.contains(definition.key)) {
            v.value = profile->values.value(definition.key);
            v.source = ValueSource::Profile;
        } else if (!definition.defaultValue.isEmpty()) {
            v.value = definition.defaultValue;
            v.source = ValueSource::Default;
        }
        config.m_values.append(v);
    }
    return config;
}

const EffectiveValue *EffectiveConfig::find(const QString &key) const
{
    for (const EffectiveValue &v : m_values) {
        if (v.definition->key == key) {
            return &v;
        }
    }
    return nullptr;
}

QString EffectiveConfig::value(const QString &key) const
{
    const EffectiveValue *v = find(key);
    return v ? v->value : QString();
}

bool EffectiveConfig::boolean(const QString &key) const
{
    const SettingDefinition *d = SettingsSchema::find(key);
    const bool fallback = d ? Validation::parseBoolean(d->defaultValue, false) : false;
    const EffectiveValue *v = find(key);
    if (!v || v->problem) {
        return fallback;
    }
    return Validation::parseBoolean(v->value, fallback);
}

qint64 EffectiveConfig::integer(const QString &key) const
{
    const EffectiveValue *v = find(key);
    if (!v || v->problem) {
        const SettingDefinition *d = SettingsSchema::find(key);
        return d ? d->defaultValue.toLongLong() : 0;
    }
    return v->value.toLongLong();
}

ValueSource EffectiveConfig::source(const QString &key) const
{
    const EffectiveValue *v = find(key);
    return v ? v->source : ValueSource::Unset;
}

QList<Error> EffectiveConfig::problems() const
{
    QList<Error> list;
    for (const EffectiveValue &v : m_values) {
        if (v.problem) {
            //: %1: the problem, starting with the variable's name ("FORGE_K8S_SHM_SIZE: ...")
            list.append(Error::invalid(Text::tr("environment variable %1").arg(v.problem->message)));
        }
    }
    return list;
}

QMap<QString, QString> EffectiveConfig::environmentSecrets() const
{
    QMap<QString, QString> secrets;
    for (const EffectiveValue &v : m_values) {
        if (v.definition->isSecret() && v.source == ValueSource::Environment && !v.problem) {
            secrets.insert(v.definition->key, v.value);
        }
    }
    return secrets;
}

} // namespace Starforge::Config
