// ProfileManager orders file and keychain changes so that nothing is lost: tested with an
// in-memory SecretStore that can be told to fail (the real keychain is tst_keychain's).

#include "core/config/profilemanager.h"
#include "support/memorysecretstore.h"
#include "support/testutil.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Config;
using Starforge::Testing::MemorySecretStore;

class TestProfileManager : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    int m_counter = 0;
    std::unique_ptr<ProfileStore> m_store;
    std::unique_ptr<MemorySecretStore> m_secrets;
    std::unique_ptr<ProfileManager> m_manager;

    Result<void> wait(const std::function<void(ProfileManager::Done)> &call)
    {
        std::optional<Result<void>> result;
        call([&result](Result<void> r) { result = r; });
        if (!Testing::waitFor(result)) {
            return Error::internal(QStringLiteral("timed out"));
        }
        return *result;
    }
    QByteArray fileBytes() const { return Testing::readAll(m_store->filePath()); }
    ProfileStore reloaded() const
    {
        ProfileStore s(m_store->filePath());
        (void)s.load();
        return s;
    }

private Q_SLOTS:
    void init()
    {
        m_store = std::make_unique<ProfileStore>(m_dir.filePath(QStringLiteral("p%1.ini").arg(++m_counter)));
        m_secrets = std::make_unique<MemorySecretStore>();
        m_manager = std::make_unique<ProfileManager>(m_store.get(), m_secrets.get());
    }

    void setValuesWritesSecretsToTheKeychainOnly()
    {
        QSignalSpy listChanged(m_manager.get(), &ProfileManager::profilesChanged);
        QSignalSpy changed(m_manager.get(), &ProfileManager::profileChanged);
        const QMap<QString, QString> values{{QStringLiteral("FORGE_K8S_API_SERVER"), QStringLiteral("https://k8s.lab:6443")},
                                            {QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("token-value-0123456789")},
                                            {QStringLiteral("FORGE_S3_SECRET_KEY"), QStringLiteral("s3-secret-value-xyz")}};
        const auto done = wait([&](auto cb) { m_manager->setValues(QStringLiteral("lab"), values, true, this, cb); });
        QVERIFY2(done.ok(), qPrintable(done.ok() ? QString() : done.error().message));
        QCOMPARE(listChanged.size(), 1);
        QCOMPARE(changed.size(), 1);
        QCOMPARE(m_secrets->entries.value(QStringLiteral("lab/FORGE_K8S_TOKEN")), QStringLiteral("token-value-0123456789"));
        QCOMPARE(m_secrets->entries.value(QStringLiteral("lab/FORGE_S3_SECRET_KEY")), QStringLiteral("s3-secret-value-xyz"));
        const QByteArray bytes = fileBytes();
        QVERIFY(bytes.contains("https://k8s.lab:6443"));
        QVERIFY(!bytes.contains("token-value-0123456789"));
        QVERIFY(!bytes.contains("s3-secret-value-xyz"));
        QCOMPARE(reloaded(), *m_store);

        // An empty secret clears it.
        const auto cleared = wait([&](auto cb) {
            m_manager->setValues(QStringLiteral("lab"), {{QStringLiteral("FORGE_K8S_TOKEN"), QString()}}, false, this, cb);
        });
        QVERIFY(cleared.ok());
        QVERIFY(!m_secrets->entries.contains(QStringLiteral("lab/FORGE_K8S_TOKEN")));
    }

    void oneBadValueChangesNothing()
    {
        const QMap<QString, QString> values{{QStringLiteral("FORGE_K8S_NAMESPACE"), QStringLiteral("ok-ns")},
                                            {QStringLiteral("FORGE_K8S_SHM_SIZE"), QStringLiteral("64GB")},
                                            {QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("token-value-0123456789")}};
        const auto done = wait([&](auto cb) { m_manager->setValues(QStringLiteral("lab"), values, true, this, cb); });
        QVERIFY(!done.ok());
        QVERIFY(done.error().message.contains(QStringLiteral("FORGE_K8S_SHM_SIZE")));
        QVERIFY(done.error().message.contains(QStringLiteral("Nothing was changed")));
        QVERIFY(!m_store->contains(QStringLiteral("lab")));
        QVERIFY(m_secrets->entries.isEmpty());
        QVERIFY(!QFile::exists(m_store->filePath()));
    }

    void keychainFailureLeavesTheFileAlone()
    {
        m_secrets->failing = true;
        const QMap<QString, QString> values{{QStringLiteral("FORGE_K8S_API_SERVER"), QStringLiteral("https://k8s.lab:6443")},
                                            {QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("token-value-0123456789")}};
        const auto done = wait([&](auto cb) { m_manager->setValues(QStringLiteral("lab"), values, true, this, cb); });
        QVERIFY(!done.ok());
        QCOMPARE(done.error().code, Error::Code::Unavailable);
        QVERIFY(!m_store->contains(QStringLiteral("lab")));
        QVERIFY(!QFile::exists(m_store->filePath()));
    }

    void importKubeconfigReplacesConnectionSettings()
    {
        QVERIFY(wait([&](auto cb) {
                    m_manager->setValues(QStringLiteral("lab"),
                                         {{QStringLiteral("FORGE_K8S_TOKEN_FILE"), QStringLiteral("/old/token")},
                                          {QStringLiteral("FORGE_S3_BUCKET"), QStringLiteral("kept-bucket")}},
                                         true, this, cb);
                }).ok());
        const auto config = Kubeconfig::load({Testing::dataPath(QStringLiteral("kubeconfig/ca-data.yaml"))});
        QVERIFY(config.ok());
        const auto imported = config->importContext();
        QVERIFY(imported.ok());
        const auto done = wait([&](auto cb) { m_manager->importKubeconfig(*imported, QStringLiteral("lab"), this, cb); });
        QVERIFY2(done.ok(), qPrintable(done.ok() ? QString() : done.error().message));
        const auto lab = m_store->profile(QStringLiteral("lab"));
        QVERIFY(!lab->values.contains(QStringLiteral("FORGE_K8S_TOKEN_FILE"))); // stale token file gone
        QCOMPARE(lab->values.value(QStringLiteral("FORGE_S3_BUCKET")), QStringLiteral("kept-bucket"));
        QCOMPARE(lab->values.value(QStringLiteral("FORGE_K8S_API_SERVER")), QStringLiteral("https://api.lab.example:6443"));
        QCOMPARE(m_secrets->entries.value(QStringLiteral("lab/FORGE_K8S_TOKEN")), QStringLiteral("sf-test-token-0123456789abcdef"));
        QCOMPARE(m_store->activeProfile(), QStringLiteral("lab")); // the first profile becomes active
        QVERIFY(!fileBytes().contains("sf-test-token-0123456789abcdef"));
    }

    void duplicateAndRenameCarrySecrets()
    {
        QVERIFY(wait([&](auto cb) {
                    m_manager->setValues(QStringLiteral("a"), {{QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("token-of-a-123456")}}, true, this, cb);
                }).ok());
        QVERIFY(wait([&](auto cb) { m_manager->duplicateProfile(QStringLiteral("a"), QStringLiteral("b"), this, cb); }).ok());
        QCOMPARE(m_secrets->entries.value(QStringLiteral("b/FORGE_K8S_TOKEN")), QStringLiteral("token-of-a-123456"));
        QCOMPARE(m_secrets->entries.value(QStringLiteral("a/FORGE_K8S_TOKEN")), QStringLiteral("token-of-a-123456"));

        QVERIFY(wait([&](auto cb) { m_manager->renameProfile(QStringLiteral("a"), QStringLiteral("c"), this, cb); }).ok());
        QVERIFY(!m_store->contains(QStringLiteral("a")));
        QVERIFY(m_store->contains(QStringLiteral("c")));
        QVERIFY(!m_secrets->entries.contains(QStringLiteral("a/FORGE_K8S_TOKEN")));
        QCOMPARE(m_secrets->entries.value(QStringLiteral("c/FORGE_K8S_TOKEN")), QStringLiteral("token-of-a-123456"));

        // A failing keychain stops a rename before the file changes: the profile keeps its name.
        m_secrets->failing = true;
        const auto failed = wait([&](auto cb) { m_manager->renameProfile(QStringLiteral("c"), QStringLiteral("d"), this, cb); });
        QVERIFY(!failed.ok());
        QVERIFY(m_store->contains(QStringLiteral("c")));
        QVERIFY(!m_store->contains(QStringLiteral("d")));
        QVERIFY(reloaded().contains(QStringLiteral("c")));
        QVERIFY(!wait([&](auto cb) { m_manager->duplicateProfile(QStringLiteral("c"), QStringLiteral("e"), this, cb); }).ok());
        QVERIFY(!m_store->contains(QStringLiteral("e")));
    }

    void removeKeepsTheProfileWhenSecretsCannotBeRemoved()
    {
        QVERIFY(wait([&](auto cb) {
                    m_manager->setValues(QStringLiteral("a"), {{QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("token-of-a-123456")}}, true, this, cb);
                }).ok());
        m_secrets->failing = true;
        const auto refused = wait([&](auto cb) { m_manager->removeProfile(QStringLiteral("a"), false, this, cb); });
        QVERIFY(!refused.ok());
        QVERIFY(refused.error().message.contains(QStringLiteral("kept")));
        QVERIFY(m_store->contains(QStringLiteral("a")));

        QString warning;
        const auto forced = wait([&](auto cb) {
            m_manager->removeProfile(QStringLiteral("a"), true, this, cb, [&warning](const QString &w) { warning = w; });
        });
        QVERIFY(forced.ok());
        QVERIFY(!m_store->contains(QStringLiteral("a")));
        QVERIFY2(warning.contains(QStringLiteral("secret-tool clear")), qPrintable(warning));

        m_secrets->failing = false;
        QVERIFY(wait([&](auto cb) {
                    m_manager->setValues(QStringLiteral("b"), {{QStringLiteral("FORGE_S3_ACCESS_KEY"), QStringLiteral("access-of-b-1234")}}, true, this, cb);
                }).ok());
        QVERIFY(wait([&](auto cb) { m_manager->removeProfile(QStringLiteral("b"), false, this, cb); }).ok());
        QVERIFY(!m_secrets->entries.contains(QStringLiteral("b/FORGE_S3_ACCESS_KEY")));
        QVERIFY(m_secrets->entries.contains(QStringLiteral("a/FORGE_K8S_TOKEN"))); // left behind by --force, as warned
        QCOMPARE(wait([&](auto cb) { m_manager->removeProfile(QStringLiteral("b"), false, this, cb); }).error().code, Error::Code::NotFound);
    }

    void migratedSecretsMoveBeforeTheFileIsRewritten()
    {
        QVERIFY(Testing::writeFile(m_store->filePath(), "[profiles]\nold\\FORGE_K8S_TOKEN=file-token-123456789\nold\\K8S_NAMESPACE=ml\n"));
        auto report = m_store->load();
        QVERIFY(report.ok());
        m_secrets->failing = true;
        QVERIFY(!wait([&](auto cb) { m_manager->moveMigratedSecrets(*report, this, cb); }).ok());
        QVERIFY(fileBytes().contains("file-token-123456789")); // not lost
        m_secrets->failing = false;
        QVERIFY(wait([&](auto cb) { m_manager->moveMigratedSecrets(*report, this, cb); }).ok());
        QCOMPARE(m_secrets->entries.value(QStringLiteral("old/FORGE_K8S_TOKEN")), QStringLiteral("file-token-123456789"));
        QVERIFY(!fileBytes().contains("file-token-123456789"));
        QCOMPARE(reloaded().profile(QStringLiteral("old"))->values.value(QStringLiteral("FORGE_K8S_NAMESPACE")), QStringLiteral("ml"));
    }

    void setActiveProfile()
    {
        QVERIFY(wait([&](auto cb) { m_manager->addProfile(QStringLiteral("a"), this, cb); }).ok());
        QSignalSpy listChanged(m_manager.get(), &ProfileManager::profilesChanged);
        QVERIFY(m_manager->setActiveProfile(QStringLiteral("a")).ok());
        QCOMPARE(listChanged.size(), 1);
        QCOMPARE(reloaded().activeProfile(), QStringLiteral("a"));
        QVERIFY(!m_manager->setActiveProfile(QStringLiteral("zz")).ok());
        QCOMPARE(m_store->activeProfile(), QStringLiteral("a"));
    }
};

QTEST_GUILESS_MAIN(TestProfileManager)
#include "tst_profilemanager.moc"
