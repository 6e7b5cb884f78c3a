#pragma once

// The one table of every setting a connection profile holds. Each entry names its FORGE_*
// key (which is also its environment variable), its type, default, validation and help text.
// Everything else (profile files, the environment, the CLI, the profiles dialog and
// docs/configuration.md) is driven by this table, so a setting is described in one place.

#include "core/util/result.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace Starforge::Config {

enum class SettingType {
    String,
    Enum,
    Url,
    Quantity,
    LabelKey,
    Dns1123Label,
    Dns1123Subdomain,
    Integer,
    Boolean,
    AbsolutePath,
    ImageReference,
    BucketName,
    Version,
    CaFile,
    CaData,
    CertificateFile,   // a PEM certificate a client presents (FORGE_K8S_CLIENT_CERT_FILE)
    CertificateData,   // the same as base64 of the PEM text
    ProxyUrl,          // http:// or socks5:// with a host and port
    ExecPlugin,        // a kubeconfig exec stanza as JSON
    Secret,
};

// label, group and help hold the English source text: docs/configuration.md and the CLI's --json
// print them as they are (the same whatever the locale), and group identifies a group. What
// people read in the dialog or the CLI's tables goes through the translated*() functions.
struct SettingDefinition
{
    QString key;           // FORGE_..., also the environment variable
    QString label;         // for people: "API server"; the key stays beside it as secondary text
    SettingType type = SettingType::String;
    QString defaultValue;  // canonical text; empty means "not set"
    QString group;         // heading in the dialog and the docs
    QString help;          // one or two sentences: meaning and effect
    bool optional = true;  // an empty value is allowed (the feature it drives is then off or asks for it)
    qint64 minimum = 0;
    qint64 maximum = 0;
    QStringList choices;   // for Enum

    bool isSecret() const { return type == SettingType::Secret; }
    // In the user's language (context "SettingsSchema"); English when no translation is loaded.
    QString translatedLabel() const;
    QString translatedGroup() const;
    QString translatedHelp() const;
};

// A heading of the settings table: its name and one sentence on what its settings decide (English
// source text, as in SettingDefinition; name matches SettingDefinition::group).
struct SettingGroup
{
    QString name;
    QString about;

    QString translatedName() const;
    QString translatedAbout() const;
};

class SettingsSchema final
{
public:
    // The groups in table order; each group's settings are contiguous in all().
    static const QList<SettingGroup> &groups();
    // Every setting, in the order the dialog and the docs show them.
    static const QList<SettingDefinition> &all();
    // nullptr when the key is not a known setting.
    static const SettingDefinition *find(const QString &key);
    // The default of a known setting: what code uses before a profile is read (key must exist).
    static QString defaultValue(const QString &key);
    static int defaultInteger(const QString &key);
    static bool defaultBoolean(const QString &key);
    // The keys of the three secrets, which live only in the keychain.
    static QStringList secretKeys();
    // A readable name of a type for listings ("Kubernetes quantity"): typeName() in English for
    // machine output and the generated docs, typeDisplayName() in the user's language.
    static QString typeName(SettingType type);
    static QString typeDisplayName(SettingType type);
    // A text of the table (a label, group name, help or group sentence) in the user's language.
    static QString translate(const QString &source);

    // Checks a value for a setting and returns its canonical form. An empty value is accepted for
    // optional settings and means "unset". Messages start with the key so they stand alone.
    static Result<QString> validate(const SettingDefinition &definition, const QString &value);
    static Result<QString> validate(const QString &key, const QString &value);

    // Suggests the known key closest to a misspelt one, or an empty string.
    static QString suggestKey(const QString &unknown);
};

} // namespace Starforge::Config
