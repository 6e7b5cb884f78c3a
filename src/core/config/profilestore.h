#pragma once

// Connection profiles on disk: one INI file (QSettings) with a settings version, the active
// profile and every profile's explicit values. The store validates every value on the way in
// and refuses secrets, so the file never holds one. Copies are cheap and independent, so the
// profiles dialog edits a copy and commits it on OK.

#include "core/config/profile.h"
#include "core/util/result.h"

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <optional>

namespace Starforge::Config {

// What load() changed while bringing an older file to the current version.
struct MigrationReport
{
    int fromVersion = 0;
    int toVersion = 0;
    QStringList notes;                               // one readable line per change
    // Secrets found in a hand-written file: (profile, key, value). They are not kept in the store;
    // the caller moves them into the keychain and then saves, which removes them from the file.
    QList<std::tuple<QString, QString, QString>> secretsToMove;

    bool migrated() const { return fromVersion != toVersion; }
};

class ProfileStore final
{
public:
    static constexpr int CurrentVersion = 1;

    explicit ProfileStore(QString filePath);

    // $STARFORGE_CONFIG_FILE, or profiles.ini in the user's config folder.
    static QString defaultFilePath();

    QString filePath() const { return m_filePath; }

    // Reads the file (a missing file is an empty store) and migrates older versions in memory.
    // A file from a newer Starforge is refused rather than rewritten.
    Result<MigrationReport> load();
    // Writes atomically; the file is readable by the user only.
    Result<void> save() const;

    QStringList profileNames() const;
    bool contains(const QString &name) const { return m_profiles.contains(name); }
    std::optional<Profile> profile(const QString &name) const;

    Result<void> addProfile(const QString &name);
    Result<void> duplicateProfile(const QString &source, const QString &newName);
    Result<void> renameProfile(const QString &oldName, const QString &newName);
    Result<void> removeProfile(const QString &name);

    // Validates and stores the canonical value; an empty value unsets the key (back to default).
    Result<void> setValue(const QString &profile, const QString &key, const QString &value);
    Result<void> unsetValue(const QString &profile, const QString &key);

    QString activeProfile() const { return m_active; }
    Result<void> setActiveProfile(const QString &name);

    friend bool operator==(const ProfileStore &, const ProfileStore &) = default;

private:
    Result<void> checkNewName(const QString &name) const;

    QString m_filePath;
    QMap<QString, Profile> m_profiles;
    QString m_active;
};

} // namespace Starforge::Config
