// With no Secret Service at all (no D-Bus session), every keychain call fails with a message
// that says what to install or start, and nothing falls back to a file.

#include "core/config/profilemanager.h"
#include "core/secrets/keychainsecretstore.h"
#include "support/testutil.h"

#include <QDirIterator>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using Starforge::Secrets::KeychainSecretStore;

class TestKeychainUnavailable : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(qEnvironmentVariableIsEmpty("DBUS_SESSION_BUS_ADDRESS"), "ctest runs this without a session bus");
    }

    void everyCallFailsClearly()
    {
        QTemporaryDir home;
        qputenv("HOME", home.path().toLocal8Bit());
        KeychainSecretStore store;
        std::optional<Result<void>> written;
        store.write(QStringLiteral("p"), QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("no-fallback-token-42"), this,
                    [&written](Result<void> r) { written = r; });
        QVERIFY(Testing::waitFor(written));
        QVERIFY(!written->ok());
        QCOMPARE(written->error().code, Error::Code::Unavailable);
        const QString message = written->error().message;
        QVERIFY2(message.contains(QStringLiteral("Secret Service")), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("gnome-keyring")), qPrintable(message));

        std::optional<Result<std::optional<QString>>> read;
        store.read(QStringLiteral("p"), QStringLiteral("FORGE_K8S_TOKEN"), this, [&read](Result<std::optional<QString>> r) { read = r; });
        QVERIFY(Testing::waitFor(read));
        QVERIFY(!read->ok());

        // No file anywhere under HOME holds the secret.
        QDirIterator it(home.path(), QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            QVERIFY2(!Testing::readAll(it.next()).contains("no-fallback-token-42"), qPrintable(it.filePath()));
        }
    }

    void profileIsNotCreatedWithoutItsSecret()
    {
        QTemporaryDir dir;
        Config::ProfileStore profiles(dir.filePath(QStringLiteral("profiles.ini")));
        KeychainSecretStore secrets;
        Config::ProfileManager manager(&profiles, &secrets);
        std::optional<Result<void>> done;
        manager.setValues(QStringLiteral("lab"),
                          {{QStringLiteral("FORGE_K8S_API_SERVER"), QStringLiteral("https://k8s.lab:6443")},
                           {QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("no-fallback-token-42")}},
                          true, this, [&done](Result<void> r) { done = r; });
        QVERIFY(Testing::waitFor(done));
        QVERIFY(!done->ok());
        QVERIFY(done->error().message.contains(QStringLiteral("Nothing was changed")));
        QVERIFY(!QFile::exists(profiles.filePath()));
    }
};

QTEST_GUILESS_MAIN(TestKeychainUnavailable)
#include "tst_keychain_unavailable.moc"
