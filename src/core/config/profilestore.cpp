#include "core/config/profilestore.h"

#include "core/config/settingsschema.h"
#include "core/config/validation.h"
#include "core/logging/logging.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryFile>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace Starforge::Config {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text { Q_DECLARE_TR_FUNCTIONS(ProfileStore) };

const QString versionKey = QStringLiteral("settings/version");
const QString activeKey = QStringLiteral("settings/activeProfile");
const QString profilesGroup = QStringLiteral("profiles");

// Version 0 is a file written by hand before it had a version: users paste the seed document's
// environment block, so keys may lack the FORGE_ prefix or be lowercase, booleans may be yes/no,
// and secrets may be present. Bring such a profile to version 1.
void migrateFrom0(QMap<QString, Profile> &profiles, MigrationReport &report)
{
    for (Profile &profile : profiles) {
        QMap<QString, QString> migrated;
        for (auto it = profile.values.cbegin(); it != profile.values.cend(); ++it) {
            QString key = it.key().trimmed().toUpper();
            if (!key.startsWith(QStringLiteral("FORGE_")) && SettingsSchema::find(QStringLiteral("FORGE_") + key)) {
                key.prepend(QStringLiteral("FORGE_"));
            }
            if (key != it.key()) {
                report.notes.append(Text::tr("profile %1: renamed %2 to %3").arg(profile.name, it.key(), key));
            }
            const SettingDefinition *definition = SettingsSchema::find(key);
            if (!definition) {
                report.notes.append(Text::tr("profile %1: dropped unknown setting %2").arg(profile.name, it.key()));
                continue;
            }
            if (definition->isSecret()) {
                report.secretsToMove.append({profile.name, key, it.value().trimmed()});
                report.notes.append(Text::tr("profile %1: %2 moves from the settings file to the keychain").arg(profile.name, key));
                continue;
            }
            const auto checked = SettingsSchema::validate(*definition, it.value());
            if (!checked) {
                report.notes.append(Text::tr("profile %1: dropped invalid value (%2)").arg(profile.name, checked.error().message));
                continue;
            }
            if (!checked->isEmpty()) {
                migrated.insert(key, *checked);
            }
        }
        profile.values = migrated;
    }
}

} // namespace

ProfileStore::ProfileStore(QString filePath) : m_filePath(std::move(filePath)) {}

QString ProfileStore::defaultFilePath()
{
    const QString fromEnv = qEnvironmentVariable("STARFORGE_CONFIG_FILE");
    if (!fromEnv.isEmpty()) {
        return fromEnv;
    }
    return QStandardPaths::writableLocation(QStandardPaths::GenericConfigLocation) + QStringLiteral("/starforge/profiles.ini");
}

Result<MigrationReport> ProfileStore::load()
{
    m_profiles.clear();
    m_active.clear();
    MigrationReport report;
    report.toVersion = CurrentVersion;
    report.fromVersion = CurrentVersion;

    if (!QFileInfo::exists(m_filePath)) {
        return report;
    }
    QFile probe(m_filePath);
    if (!probe.open(QIODevice::ReadOnly)) {
        return Error::io(Text::tr("cannot read the profiles file %1: %2").arg(m_filePath, probe.errorString()));
    }
    // QSettings keeps what it parsed of a path for the whole process and parses again only when
    // the file's size or modification time changed. Another process (the CLI beside the app, or
    // the next command) may replace the file with one of the same size within the file system's
    // clock tick ({a, b} renamed to {b, c}), and the old profiles would be read back, and saved
    // back. So QSettings reads a private copy under a name it has never seen.
    QTemporaryFile snapshot(m_filePath + QStringLiteral(".read-XXXXXX"));
    const bool snapshotted = snapshot.open() && snapshot.write(probe.readAll()) >= 0 && snapshot.flush();
    probe.close();
    if (snapshotted) snapshot.close();

    QSettings file(snapshotted ? snapshot.fileName() : m_filePath, QSettings::IniFormat);
    if (file.status() == QSettings::FormatError) {
        return Error::invalid(Text::tr("the profiles file %1 is not a valid INI file; fix or move it away").arg(m_filePath));
    }
    bool versionOk = false;
    const int version = file.value(versionKey, 0).toInt(&versionOk);
    if (!versionOk || version < 0) {
        return Error::invalid(Text::tr("the profiles file %1 has an unreadable settings/version '%2'")
                                  .arg(m_filePath, file.value(versionKey).toString()));
    }
    if (version > CurrentVersion) {
        return Error::invalid(Text::tr("the profiles file %1 was written by a newer Starforge (settings version %2; "
                                       "this one reads up to %3). Update Starforge; the file was left untouched.")
                                  .arg(m_filePath)
                                  .arg(version)
                                  .arg(CurrentVersion));
    }
    report.fromVersion = version;

    file.beginGroup(profilesGroup);
    const QStringList names = file.childGroups();
    for (const QString &name : names) {
        Profile profile;
        profile.name = name;
        file.beginGroup(name);
        for (const QString &key : file.childKeys()) {
            if (key.startsWith(u'.')) {
                continue; // bookkeeping such as ".created", not a setting
            }
            profile.values.insert(key, file.value(key).toString());
        }
        file.endGroup();
        m_profiles.insert(name, profile);
    }
    file.endGroup();
    m_active = file.value(activeKey).toString();

    if (version < 1) {
        migrateFrom0(m_profiles, report);
    }

    // Whatever the version, what is kept must satisfy today's table: a value edited by hand into
    // something invalid is reported and left out rather than passed on to a RayJob.
    for (Profile &profile : m_profiles) {
        if (!Validation::profileName(profile.name)) {
            report.notes.append(Text::tr("profile '%1' has an invalid name and was skipped").arg(profile.name));
            continue;
        }
        for (auto it = profile.values.begin(); it != profile.values.end();) {
            const SettingDefinition *definition = SettingsSchema::find(it.key());
            if (!definition || definition->isSecret()) {
                if (definition) {
                    report.secretsToMove.append({profile.name, it.key(), it.value().trimmed()});
                    report.notes.append(Text::tr("profile %1: %2 moves from the settings file to the keychain").arg(profile.name, it.key()));
                } else {
                    report.notes.append(Text::tr("profile %1: dropped unknown setting %2").arg(profile.name, it.key()));
                }
                it = profile.values.erase(it);
                continue;
            }
            const auto checked = SettingsSchema::validate(*definition, it.value());
            if (!checked || checked->isEmpty()) {
                if (!checked) {
                    report.notes.append(Text::tr("profile %1: ignored invalid value (%2)").arg(profile.name, checked.error().message));
                }
                it = profile.values.erase(it);
                continue;
            }
            it.value() = *checked;
            ++it;
        }
    }
    for (auto it = m_profiles.begin(); it != m_profiles.end();) {
        it = Validation::profileName(it.key()) ? std::next(it) : m_profiles.erase(it);
    }
    if (!m_active.isEmpty() && !m_profiles.contains(m_active)) {
        report.notes.append(Text::tr("the active profile '%1' does not exist; none is active").arg(m_active));
        m_active.clear();
    }
    for (const QString &note : std::as_const(report.notes)) {
        qCInfo(lcConfig) << note;
    }
    return report;
}

Result<void> ProfileStore::save() const
{
    const QFileInfo info(m_filePath);
    if (!QDir().mkpath(info.absolutePath())) {
        return Error::io(Text::tr("cannot create the folder %1 for the profiles file").arg(info.absolutePath()));
    }
    // QSettings writes in place; write a temporary INI with it, then move that over the file in
    // one step so a crash never leaves half a file. The temporary has a name never used before,
    // for the reason load() reads a copy: QSettings would start from what it last parsed of a
    // name it has seen.
    QTemporaryFile reserved(m_filePath + QStringLiteral(".new-XXXXXX"));
    if (!reserved.open()) {
        return Error::io(Text::tr("cannot write in the folder of the profiles file %1: %2").arg(m_filePath, reserved.errorString()));
    }
    reserved.setAutoRemove(false);
    const QString temporary = reserved.fileName();
    reserved.close();
    {
        QSettings file(temporary, QSettings::IniFormat);
        file.setValue(versionKey, CurrentVersion);
        if (!m_active.isEmpty()) {
            file.setValue(activeKey, m_active);
        }
        file.beginGroup(profilesGroup);
        for (const Profile &profile : m_profiles) {
            file.beginGroup(profile.name);
            // An empty profile still needs a key, or QSettings would drop its group.
            file.setValue(QStringLiteral(".created"), true);
            for (auto it = profile.values.cbegin(); it != profile.values.cend(); ++it) {
                file.setValue(it.key(), it.value());
            }
            file.endGroup();
        }
        file.endGroup();
        file.sync();
        if (file.status() != QSettings::NoError) {
            QFile::remove(temporary);
            return Error::io(Text::tr("cannot write the profiles file %1").arg(temporary));
        }
    }
    QFile::setPermissions(temporary, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    if (std::rename(QFile::encodeName(temporary).constData(), QFile::encodeName(m_filePath).constData()) != 0) {
        QFile::remove(temporary);
        return Error::io(Text::tr("cannot replace the profiles file %1: %2").arg(m_filePath, QString::fromLocal8Bit(std::strerror(errno))));
    }
    return {};
}

QStringList ProfileStore::profileNames() const
{
    return m_profiles.keys();
}

std::optional<Profile> ProfileStore::profile(const QString &name) const
{
    const auto it = m_profiles.constFind(name);
    if (it == m_profiles.cend()) {
        return std::nullopt;
    }
    return *it;
}

Result<void> ProfileStore::checkNewName(const QString &name) const
{
    const auto checked = Validation::profileName(name);
    if (!checked) {
        return checked.error();
    }
    if (*checked != name) {
        return Error::invalid(Text::tr("'%1' has surrounding spaces; a profile name has none").arg(name));
    }
    if (m_profiles.contains(name)) {
        return Error::invalid(Text::tr("a profile named '%1' already exists; choose another name").arg(name));
    }
    return {};
}

Result<void> ProfileStore::addProfile(const QString &name)
{
    if (auto ok = checkNewName(name); !ok) {
        return ok;
    }
    m_profiles.insert(name, Profile{name, {}});
    return {};
}

Result<void> ProfileStore::duplicateProfile(const QString &source, const QString &newName)
{
    const auto it = m_profiles.constFind(source);
    if (it == m_profiles.cend()) {
        return Error::notFound(Text::tr("there is no profile named '%1'").arg(source));
    }
    if (auto ok = checkNewName(newName); !ok) {
        return ok;
    }
    Profile copy = *it;
    copy.name = newName;
    m_profiles.insert(newName, copy);
    return {};
}

Result<void> ProfileStore::renameProfile(const QString &oldName, const QString &newName)
{
    if (!m_profiles.contains(oldName)) {
        return Error::notFound(Text::tr("there is no profile named '%1'").arg(oldName));
    }
    if (oldName == newName) {
        return {};
    }
    if (auto ok = checkNewName(newName); !ok) {
        return ok;
    }
    Profile profile = m_profiles.take(oldName);
    profile.name = newName;
    m_profiles.insert(newName, profile);
    if (m_active == oldName) {
        m_active = newName;
    }
    return {};
}

Result<void> ProfileStore::removeProfile(const QString &name)
{
    if (!m_profiles.remove(name)) {
        return Error::notFound(Text::tr("there is no profile named '%1'").arg(name));
    }
    if (m_active == name) {
        m_active.clear();
    }
    return {};
}

Result<void> ProfileStore::setValue(const QString &profileName, const QString &key, const QString &value)
{
    const auto it = m_profiles.find(profileName);
    if (it == m_profiles.end()) {
        return Error::notFound(Text::tr("there is no profile named '%1'").arg(profileName));
    }
    const SettingDefinition *definition = SettingsSchema::find(key);
    if (definition && definition->isSecret()) {
        return Error::invalid(Text::tr("%1 is a secret and is kept in the keychain, not in the profile file").arg(key));
    }
    if (definition && value.trimmed().isEmpty()) {
        it->values.remove(key); // back to the default, also for settings that cannot be empty
        return {};
    }
    const auto checked = SettingsSchema::validate(key, value);
    if (!checked) {
        return checked.error();
    }
    if (checked->isEmpty()) {
        it->values.remove(key);
    } else {
        it->values.insert(key, *checked);
    }
    return {};
}

Result<void> ProfileStore::unsetValue(const QString &profileName, const QString &key)
{
    return setValue(profileName, key, QString());
}

Result<void> ProfileStore::setActiveProfile(const QString &name)
{
    if (!name.isEmpty() && !m_profiles.contains(name)) {
        return Error::notFound(Text::tr("there is no profile named '%1'").arg(name));
    }
    m_active = name;
    return {};
}

} // namespace Starforge::Config
