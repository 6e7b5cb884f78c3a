// Profiles on disk: round trip, defaults, profile operations, migration of hand-written
// version-0 files, refusal of newer files, and that the file never holds a secret.

#include "core/config/profilestore.h"
#include "support/testutil.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Config;

class TestProfileStore : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString path(const char *name) const { return m_dir.filePath(QString::fromLatin1(name)); }

private Q_SLOTS:
    void missingFileIsEmpty()
    {
        ProfileStore store(path("missing.ini"));
        const auto loaded = store.load();
        QVERIFY(loaded.ok());
        QVERIFY(!loaded->migrated());
        QVERIFY(store.profileNames().isEmpty());
        QCOMPARE(store.activeProfile(), QString());
    }

    void roundTrip()
    {
        const QString file = path("roundtrip.ini");
        ProfileStore store(file);
        QVERIFY(store.addProfile(QStringLiteral("lab")).ok());
        QVERIFY(store.addProfile(QStringLiteral("empty")).ok());
        QVERIFY(store.setValue(QStringLiteral("lab"), QStringLiteral("FORGE_K8S_API_SERVER"), QStringLiteral("https://api.lab:6443/")).ok());
        QVERIFY(store.setValue(QStringLiteral("lab"), QStringLiteral("FORGE_K8S_NAMESPACE"), QStringLiteral("research")).ok());
        QVERIFY(store.setValue(QStringLiteral("lab"), QStringLiteral("FORGE_K8S_GPU_PASSTHROUGH"), QStringLiteral("no")).ok());
        QVERIFY(store.setActiveProfile(QStringLiteral("lab")).ok());
        QVERIFY(store.save().ok());
        QCOMPARE(QFile::permissions(file) & (QFile::ReadGroup | QFile::ReadOther | QFile::WriteGroup | QFile::WriteOther), QFile::Permissions());
        // Neither the temporary written and moved over the file nor the copy load() reads is left.
        QCOMPARE(QDir(QFileInfo(file).absolutePath()).entryList({QStringLiteral("roundtrip.ini.*")}, QDir::Files), QStringList());

        ProfileStore reloaded(file);
        const auto loaded = reloaded.load();
        QVERIFY2(loaded.ok(), qPrintable(loaded.ok() ? QString() : loaded.error().message));
        QVERIFY(!loaded->migrated());
        QVERIFY(loaded->notes.isEmpty());
        QCOMPARE(reloaded, store);
        QCOMPARE(reloaded.profileNames(), (QStringList{QStringLiteral("empty"), QStringLiteral("lab")}));
        QCOMPARE(reloaded.activeProfile(), QStringLiteral("lab"));
        const auto lab = reloaded.profile(QStringLiteral("lab"));
        QVERIFY(lab);
        // Stored canonical: trailing slash gone, "no" is "false".
        QCOMPARE(lab->values.value(QStringLiteral("FORGE_K8S_API_SERVER")), QStringLiteral("https://api.lab:6443"));
        QCOMPARE(lab->values.value(QStringLiteral("FORGE_K8S_GPU_PASSTHROUGH")), QStringLiteral("false"));
        // Only what was set explicitly is stored; defaults stay defaults.
        QCOMPARE(lab->values.size(), 3);
        QVERIFY(reloaded.profile(QStringLiteral("empty"))->values.isEmpty());
        QVERIFY(reloaded.contains(QStringLiteral("empty")));
    }

    // Another process (the CLI beside the app) replaces the file with one of the same size within
    // the file system's clock tick: the next load reads the new profiles, not what QSettings
    // parsed of the path before. Each round is a fresh chance of a same-tick replace; before the
    // fix, about one round in eight read the old profiles back.
    void reloadsAFileReplacedWithinTheSameTick()
    {
        const QString file = path("sametick.ini");
        for (int round = 0; round < 50; ++round) {
            ProfileStore first(file);
            QVERIFY(first.addProfile(QStringLiteral("a")).ok());
            QVERIFY(first.addProfile(QStringLiteral("b")).ok());
            QVERIFY(first.save().ok());
            ProfileStore reader(file);
            QVERIFY(reader.load().ok());
            QCOMPARE(reader.profileNames(), (QStringList{QStringLiteral("a"), QStringLiteral("b")}));

            ProfileStore second(file);   // {a, b} becomes {b, c}: the same number of bytes
            QVERIFY(second.addProfile(QStringLiteral("b")).ok());
            QVERIFY(second.addProfile(QStringLiteral("c")).ok());
            QVERIFY(second.save().ok());
            QVERIFY(reader.load().ok());
            QCOMPARE(reader.profileNames(), (QStringList{QStringLiteral("b"), QStringLiteral("c")}));
            QVERIFY(QFile::remove(file));
        }
    }

    void setValueValidatesAndResets()
    {
        ProfileStore store(path("set.ini"));
        QVERIFY(store.addProfile(QStringLiteral("p")).ok());
        const auto bad = store.setValue(QStringLiteral("p"), QStringLiteral("FORGE_K8S_SHM_SIZE"), QStringLiteral("64GB"));
        QVERIFY(!bad.ok());
        QVERIFY(bad.error().message.contains(QStringLiteral("FORGE_K8S_SHM_SIZE")));
        QVERIFY(store.profile(QStringLiteral("p"))->values.isEmpty());

        const auto unknown = store.setValue(QStringLiteral("p"), QStringLiteral("FORGE_NOPE"), QStringLiteral("x"));
        QVERIFY(!unknown.ok());
        const auto missing = store.setValue(QStringLiteral("q"), QStringLiteral("FORGE_K8S_SHM_SIZE"), QStringLiteral("1Gi"));
        QCOMPARE(missing.error().code, Error::Code::NotFound);

        QVERIFY(store.setValue(QStringLiteral("p"), QStringLiteral("FORGE_K8S_SHM_SIZE"), QStringLiteral("8Gi")).ok());
        QCOMPARE(store.profile(QStringLiteral("p"))->values.value(QStringLiteral("FORGE_K8S_SHM_SIZE")), QStringLiteral("8Gi"));
        QVERIFY(store.setValue(QStringLiteral("p"), QStringLiteral("FORGE_K8S_SHM_SIZE"), QString()).ok());
        QVERIFY(!store.profile(QStringLiteral("p"))->values.contains(QStringLiteral("FORGE_K8S_SHM_SIZE")));
    }

    void secretsAreRefused()
    {
        ProfileStore store(path("secrets.ini"));
        QVERIFY(store.addProfile(QStringLiteral("p")).ok());
        for (const char *key : {"FORGE_K8S_TOKEN", "FORGE_S3_ACCESS_KEY", "FORGE_S3_SECRET_KEY"}) {
            const auto set = store.setValue(QStringLiteral("p"), QString::fromLatin1(key), QStringLiteral("very-secret-value-1234"));
            QVERIFY(!set.ok());
            QVERIFY(set.error().message.contains(QStringLiteral("keychain")));
        }
        QVERIFY(store.save().ok());
        QVERIFY(!Testing::readAll(path("secrets.ini")).contains("very-secret-value-1234"));
    }

    void profileOperations()
    {
        ProfileStore store(path("ops.ini"));
        QVERIFY(store.addProfile(QStringLiteral("a")).ok());
        QVERIFY(store.setValue(QStringLiteral("a"), QStringLiteral("FORGE_K8S_NAMESPACE"), QStringLiteral("team-a")).ok());
        QVERIFY(store.setActiveProfile(QStringLiteral("a")).ok());

        QCOMPARE(store.addProfile(QStringLiteral("a")).error().code, Error::Code::Invalid);
        QVERIFY(!store.addProfile(QStringLiteral("bad/name")).ok());
        QVERIFY(!store.addProfile(QString()).ok());

        QVERIFY(store.duplicateProfile(QStringLiteral("a"), QStringLiteral("b")).ok());
        QCOMPARE(store.profile(QStringLiteral("b"))->values, store.profile(QStringLiteral("a"))->values);
        QCOMPARE(store.duplicateProfile(QStringLiteral("zz"), QStringLiteral("c")).error().code, Error::Code::NotFound);
        QVERIFY(!store.duplicateProfile(QStringLiteral("a"), QStringLiteral("b")).ok());

        // Renaming the active profile keeps it active under the new name.
        QVERIFY(store.renameProfile(QStringLiteral("a"), QStringLiteral("alpha")).ok());
        QVERIFY(!store.contains(QStringLiteral("a")));
        QCOMPARE(store.activeProfile(), QStringLiteral("alpha"));
        QCOMPARE(store.profile(QStringLiteral("alpha"))->values.value(QStringLiteral("FORGE_K8S_NAMESPACE")), QStringLiteral("team-a"));
        QVERIFY(!store.renameProfile(QStringLiteral("alpha"), QStringLiteral("b")).ok());

        // Removing the active profile leaves none active.
        QVERIFY(store.removeProfile(QStringLiteral("alpha")).ok());
        QCOMPARE(store.activeProfile(), QString());
        QCOMPARE(store.removeProfile(QStringLiteral("alpha")).error().code, Error::Code::NotFound);
        QCOMPARE(store.setActiveProfile(QStringLiteral("nope")).error().code, Error::Code::NotFound);
        QCOMPARE(store.profileNames(), QStringList{QStringLiteral("b")});
    }

    void migratesVersion0()
    {
        // A file written by hand from the seed document's environment block.
        const QString file = path("v0.ini");
        QVERIFY(Testing::writeFile(file,
                                   "[settings]\nactiveProfile=old\n"
                                   "[profiles]\n"
                                   "old\\k8s_api_server=https://old.example:6443/\n"
                                   "old\\FORGE_K8S_GPU_PASSTHROUGH=yes\n"
                                   "old\\K8S_NAMESPACE=ml\n"
                                   "old\\FORGE_K8S_TOKEN=hand-written-token-123456\n"
                                   "old\\FORGE_UNKNOWN_THING=1\n"
                                   "old\\FORGE_K8S_SHM_SIZE=64GB\n"));
        ProfileStore store(file);
        const auto loaded = store.load();
        QVERIFY2(loaded.ok(), qPrintable(loaded.ok() ? QString() : loaded.error().message));
        QCOMPARE(loaded->fromVersion, 0);
        QCOMPARE(loaded->toVersion, ProfileStore::CurrentVersion);
        QVERIFY(loaded->migrated());
        const auto old = store.profile(QStringLiteral("old"));
        QVERIFY(old);
        QCOMPARE(old->values.value(QStringLiteral("FORGE_K8S_API_SERVER")), QStringLiteral("https://old.example:6443"));
        QCOMPARE(old->values.value(QStringLiteral("FORGE_K8S_GPU_PASSTHROUGH")), QStringLiteral("true"));
        QCOMPARE(old->values.value(QStringLiteral("FORGE_K8S_NAMESPACE")), QStringLiteral("ml"));
        QVERIFY(!old->values.contains(QStringLiteral("FORGE_K8S_TOKEN")));
        QVERIFY(!old->values.contains(QStringLiteral("FORGE_UNKNOWN_THING")));
        QVERIFY(!old->values.contains(QStringLiteral("FORGE_K8S_SHM_SIZE")));
        QCOMPARE(store.activeProfile(), QStringLiteral("old"));
        // The secret is handed to the caller for the keychain, not kept.
        QCOMPARE(loaded->secretsToMove.size(), 1);
        QCOMPARE(std::get<0>(loaded->secretsToMove.first()), QStringLiteral("old"));
        QCOMPARE(std::get<1>(loaded->secretsToMove.first()), QStringLiteral("FORGE_K8S_TOKEN"));
        QCOMPARE(std::get<2>(loaded->secretsToMove.first()), QStringLiteral("hand-written-token-123456"));
        const QString notes = loaded->notes.join(u'\n');
        QVERIFY2(notes.contains(QStringLiteral("FORGE_UNKNOWN_THING")), qPrintable(notes));
        QVERIFY2(notes.contains(QStringLiteral("keychain")), qPrintable(notes));
        QVERIFY2(notes.contains(QStringLiteral("FORGE_K8S_SHM_SIZE")), qPrintable(notes));

        // Saving writes version 1 and drops the secret from the file.
        QVERIFY(store.save().ok());
        const QByteArray saved = Testing::readAll(file);
        QVERIFY(!saved.contains("hand-written-token-123456"));
        QVERIFY(saved.contains("version=1"));
        ProfileStore again(file);
        const auto reloaded = again.load();
        QVERIFY(reloaded.ok());
        QVERIFY(!reloaded->migrated());
        QCOMPARE(again, store);
    }

    void refusesNewerVersion()
    {
        const QString file = path("v99.ini");
        const QByteArray content = "[settings]\nversion=99\n[profiles]\nx\\FORGE_FUTURE=1\n";
        QVERIFY(Testing::writeFile(file, content));
        ProfileStore store(file);
        const auto loaded = store.load();
        QVERIFY(!loaded.ok());
        QVERIFY(loaded.error().message.contains(QStringLiteral("newer Starforge")));
        QCOMPARE(Testing::readAll(file), content);
    }

    void reportsInvalidVersionAndCorruptFiles()
    {
        const QString file = path("badversion.ini");
        QVERIFY(Testing::writeFile(file, "[settings]\nversion=abc\n"));
        ProfileStore store(file);
        const auto loaded = store.load();
        QVERIFY(!loaded.ok());
        QVERIFY(loaded.error().message.contains(QStringLiteral("settings/version")));
    }

    void handEditedInvalidValuesAreReported()
    {
        const QString file = path("edited.ini");
        QVERIFY(Testing::writeFile(file, "[settings]\nversion=1\n[profiles]\np\\FORGE_K8S_NAMESPACE=Not_Valid\np\\FORGE_S3_BUCKET=ok-bucket\n"));
        ProfileStore store(file);
        const auto loaded = store.load();
        QVERIFY(loaded.ok());
        QCOMPARE(store.profile(QStringLiteral("p"))->values.value(QStringLiteral("FORGE_S3_BUCKET")), QStringLiteral("ok-bucket"));
        QVERIFY(!store.profile(QStringLiteral("p"))->values.contains(QStringLiteral("FORGE_K8S_NAMESPACE")));
        QVERIFY(loaded->notes.join(u'\n').contains(QStringLiteral("FORGE_K8S_NAMESPACE")));
    }

    void defaultPathHonoursEnvironment()
    {
        qputenv("STARFORGE_CONFIG_FILE", path("env.ini").toLocal8Bit());
        QCOMPARE(ProfileStore::defaultFilePath(), path("env.ini"));
        qunsetenv("STARFORGE_CONFIG_FILE");
        QVERIFY(ProfileStore::defaultFilePath().endsWith(QStringLiteral("/starforge/profiles.ini")));
    }

    void saveFailureIsReported()
    {
        ProfileStore store(QStringLiteral("/proc/starforge-cannot-write/profiles.ini"));
        QVERIFY(store.addProfile(QStringLiteral("p")).ok());
        const auto saved = store.save();
        QVERIFY(!saved.ok());
        QCOMPARE(saved.error().code, Error::Code::Io);
    }
};

QTEST_GUILESS_MAIN(TestProfileStore)
#include "tst_profilestore.moc"
