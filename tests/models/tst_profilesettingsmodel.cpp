// ProfileSettingsModel: every setting as a row, sources shown, edits validated as they are made,
// secrets never exposed, pending changes handed over intact. Under QAbstractItemModelTester.

#include "core/config/profilemanager.h"
#include "core/config/settingsschema.h"
#include "models/profilesettingsmodel.h"
#include "support/memorysecretstore.h"
#include "support/testutil.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using Models::ProfileSettingsModel;

class TestProfileSettingsModel : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Config::ProfileStore> m_store;
    Testing::MemorySecretStore m_secrets;
    std::unique_ptr<Config::ProfileManager> m_manager;

    QModelIndex value(const ProfileSettingsModel &m, const char *key) const
    {
        return m.index(m.rowOf(QString::fromLatin1(key)), ProfileSettingsModel::ValueColumn);
    }
    QModelIndex source(const ProfileSettingsModel &m, const char *key) const
    {
        return m.index(m.rowOf(QString::fromLatin1(key)), ProfileSettingsModel::SourceColumn);
    }

private Q_SLOTS:
    void init()
    {
        static int n = 0;
        m_store = std::make_unique<Config::ProfileStore>(m_dir.filePath(QStringLiteral("m%1.ini").arg(++n)));
        m_manager = std::make_unique<Config::ProfileManager>(m_store.get(), &m_secrets);
        QVERIFY(m_store->addProfile(QStringLiteral("lab")).ok());
        QVERIFY(m_store->setValue(QStringLiteral("lab"), QStringLiteral("FORGE_K8S_NAMESPACE"), QStringLiteral("research")).ok());
        QVERIFY(m_store->setValue(QStringLiteral("lab"), QStringLiteral("FORGE_S3_BUCKET"), QStringLiteral("profile-bucket")).ok());
    }

    void showsEveryValueAndWhereItComesFrom()
    {
        QProcessEnvironment env;
        env.insert(QStringLiteral("FORGE_S3_BUCKET"), QStringLiteral("env-bucket"));
        ProfileSettingsModel model(m_manager.get(), env);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0); // no profile shown yet
        model.setProfile(QStringLiteral("lab"));
        QCOMPARE(model.rowCount(), Config::SettingsSchema::all().size());
        QCOMPARE(model.columnCount(), 3);
        QCOMPARE(value(model, "FORGE_K8S_NAMESPACE").data().toString(), QStringLiteral("research"));
        QCOMPARE(source(model, "FORGE_K8S_NAMESPACE").data().toString(), QStringLiteral("profile"));
        QCOMPARE(value(model, "FORGE_K8S_SHM_SIZE").data().toString(), QStringLiteral("64Gi"));
        QCOMPARE(source(model, "FORGE_K8S_SHM_SIZE").data().toString(), QStringLiteral("default"));
        QCOMPARE(value(model, "FORGE_S3_BUCKET").data().toString(), QStringLiteral("env-bucket"));
        QCOMPARE(source(model, "FORGE_S3_BUCKET").data().toString(), QStringLiteral("environment (profile: profile-bucket)"));
        // The editor starts from the profile's own value, not the environment's.
        QCOMPARE(value(model, "FORGE_S3_BUCKET").data(Qt::EditRole).toString(), QStringLiteral("profile-bucket"));
        QVERIFY(!value(model, "FORGE_K8S_SHM_SIZE").data(ProfileSettingsModel::HelpRole).toString().isEmpty());
        QCOMPARE(model.headerData(0, Qt::Horizontal).toString(), QStringLiteral("Setting"));
        QVERIFY(model.flags(value(model, "FORGE_K8S_SHM_SIZE")) & Qt::ItemIsEditable);
        QVERIFY(!(model.flags(source(model, "FORGE_K8S_SHM_SIZE")) & Qt::ItemIsEditable));
    }

    void secretsShowOnlyWhetherTheyAreSet()
    {
        ProfileSettingsModel model(m_manager.get(), QProcessEnvironment());
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setProfile(QStringLiteral("lab"));
        const QModelIndex token = value(model, "FORGE_K8S_TOKEN");
        QVERIFY(token.data(ProfileSettingsModel::SecretRole).toBool());
        QVERIFY(token.data().toString().contains(QStringLiteral("checking")));
        model.setSecretsPresent({{QStringLiteral("FORGE_K8S_TOKEN"), true}, {QStringLiteral("FORGE_S3_ACCESS_KEY"), false}});
        QCOMPARE(token.data().toString(), QStringLiteral("set in the keychain"));
        QCOMPARE(source(model, "FORGE_K8S_TOKEN").data().toString(), QStringLiteral("keychain"));
        QCOMPARE(value(model, "FORGE_S3_ACCESS_KEY").data().toString(), QStringLiteral("not set"));
        QCOMPARE(token.data(Qt::EditRole).toString(), QString());

        QVERIFY(model.setData(token, QStringLiteral("new-token-value-123456")));
        QVERIFY(!token.data().toString().contains(QStringLiteral("new-token-value")));
        QCOMPARE(model.pendingChanges().value(QStringLiteral("FORGE_K8S_TOKEN")), QStringLiteral("new-token-value-123456"));
        QVERIFY(!model.setData(value(model, "FORGE_S3_ACCESS_KEY"), QString())); // empty editor: no change
        model.resetRow(value(model, "FORGE_S3_ACCESS_KEY").row());
        QCOMPARE(model.pendingChanges().value(QStringLiteral("FORGE_S3_ACCESS_KEY"), QStringLiteral("missing")), QString());
        QVERIFY(value(model, "FORGE_S3_ACCESS_KEY").data().toString().contains(QStringLiteral("cleared")));

        model.setKeychainProblem(QStringLiteral("No Secret Service answered"));
        QCOMPARE(value(model, "FORGE_S3_SECRET_KEY").data().toString(), QStringLiteral("(keychain unavailable)"));
        QCOMPARE(value(model, "FORGE_S3_SECRET_KEY").data(Qt::ToolTipRole).toString(), QStringLiteral("No Secret Service answered"));
    }

    void editsAreValidatedAsTheyAreMade()
    {
        ProfileSettingsModel model(m_manager.get(), QProcessEnvironment());
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setProfile(QStringLiteral("lab"));
        QSignalSpy pending(&model, &ProfileSettingsModel::pendingChanged);

        const QModelIndex shm = value(model, "FORGE_K8S_SHM_SIZE");
        QVERIFY(model.setData(shm, QStringLiteral("64GB")));
        QVERIFY(model.hasErrors());
        QVERIFY(shm.data(ProfileSettingsModel::ErrorRole).toString().contains(QStringLiteral("64Gi")));
        QVERIFY(shm.data(Qt::ToolTipRole).toString().contains(QStringLiteral("64Gi")));
        QVERIFY(shm.data(Qt::ForegroundRole).isValid());
        QCOMPARE(model.errors().size(), 1);
        QCOMPARE(source(model, "FORGE_K8S_SHM_SIZE").data().toString(), QStringLiteral("edited"));

        QVERIFY(model.setData(shm, QStringLiteral("16Gi")));
        QVERIFY(!model.hasErrors());
        QVERIFY(shm.data(ProfileSettingsModel::PendingRole).toBool());

        // Canonical values are what apply hands over.
        QVERIFY(model.setData(value(model, "FORGE_K8S_GPU_PASSTHROUGH"), QStringLiteral("no")));
        QCOMPARE(model.pendingChanges().value(QStringLiteral("FORGE_K8S_GPU_PASSTHROUGH")), QStringLiteral("false"));
        // Choosing the default of a setting at its default is no change.
        QVERIFY(!model.setData(value(model, "FORGE_S3_REGION"), QStringLiteral("us-east-1")));
        // Typing the stored value back drops the edit.
        QVERIFY(model.setData(value(model, "FORGE_K8S_NAMESPACE"), QStringLiteral("other")));
        QVERIFY(model.setData(value(model, "FORGE_K8S_NAMESPACE"), QStringLiteral("research")));
        QVERIFY(!model.pendingChanges().contains(QStringLiteral("FORGE_K8S_NAMESPACE")));
        // Resetting a setting that cannot be empty means "back to the default".
        model.resetRow(value(model, "FORGE_K8S_NAMESPACE").row());
        QVERIFY(value(model, "FORGE_K8S_NAMESPACE").data().toString().contains(QStringLiteral("starforge")));
        QVERIFY(!model.hasErrors());

        QCOMPARE(model.pendingChanges().size(), 3);
        QVERIFY(pending.size() >= 5);
        model.revert();
        QVERIFY(!model.hasPendingChanges());
        QCOMPARE(value(model, "FORGE_K8S_SHM_SIZE").data().toString(), QStringLiteral("64Gi"));
        QVERIFY(!model.setData(source(model, "FORGE_K8S_SHM_SIZE"), QStringLiteral("x")));
    }

    void followsChangesOfTheProfile()
    {
        ProfileSettingsModel model(m_manager.get(), QProcessEnvironment());
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setProfile(QStringLiteral("lab"));
        std::optional<Result<void>> done;
        m_manager->setValues(QStringLiteral("lab"), {{QStringLiteral("FORGE_K8S_SHM_SIZE"), QStringLiteral("8Gi")}}, false, this,
                             [&done](Result<void> r) { done = r; });
        QVERIFY(Testing::waitFor(done));
        QCOMPARE(value(model, "FORGE_K8S_SHM_SIZE").data().toString(), QStringLiteral("8Gi"));
        done.reset();
        m_manager->removeProfile(QStringLiteral("lab"), false, this, [&done](Result<void> r) { done = r; });
        QVERIFY(Testing::waitFor(done));
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.profile(), QString());
    }
};

QTEST_MAIN(TestProfileSettingsModel)
#include "tst_profilesettingsmodel.moc"
