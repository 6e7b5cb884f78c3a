// ProfileListModel under QAbstractItemModelTester while profiles are added, renamed, removed and
// made active.

#include "core/config/profilemanager.h"
#include "models/profilelistmodel.h"
#include "support/memorysecretstore.h"
#include "support/testutil.h"

#include <QAbstractItemModelTester>
#include <QFont>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;

class TestProfileListModel : public QObject
{
    Q_OBJECT

    static Result<void> wait(const std::function<void(Config::ProfileManager::Done)> &call)
    {
        std::optional<Result<void>> r;
        call([&r](Result<void> x) { r = x; });
        return Testing::waitFor(r) ? *r : Result<void>(Error::internal(QStringLiteral("timeout")));
    }

private Q_SLOTS:
    void followsTheManager()
    {
        QTemporaryDir dir;
        Config::ProfileStore store(dir.filePath(QStringLiteral("p.ini")));
        Testing::MemorySecretStore secrets;
        Config::ProfileManager manager(&store, &secrets);
        Models::ProfileListModel model(&manager);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);

        QCOMPARE(model.rowCount(), 0);
        QVERIFY(wait([&](auto cb) { manager.addProfile(QStringLiteral("beta"), this, cb); }).ok());
        QVERIFY(wait([&](auto cb) {
                    manager.setValues(QStringLiteral("alpha"), {{QStringLiteral("FORGE_K8S_API_SERVER"), QStringLiteral("https://a.example:6443")}}, true, this, cb);
                }).ok());
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.nameAt(0), QStringLiteral("alpha"));
        QCOMPARE(model.rowOf(QStringLiteral("beta")), 1);
        QCOMPARE(model.rowOf(QStringLiteral("nope")), -1);
        const QModelIndex alpha = model.index(0);
        QCOMPARE(alpha.data(Models::ProfileListModel::ServerRole).toString(), QStringLiteral("https://a.example:6443"));
        QVERIFY(alpha.data(Qt::ToolTipRole).toString().contains(QStringLiteral("a.example")));
        QCOMPARE(alpha.data(Models::ProfileListModel::ActiveRole).toBool(), false);

        QVERIFY(manager.setActiveProfile(QStringLiteral("alpha")).ok());
        QCOMPARE(alpha.data(Models::ProfileListModel::ActiveRole).toBool(), true);
        QCOMPARE(alpha.data(Qt::DisplayRole).toString(), QStringLiteral("alpha (active)"));
        QCOMPARE(alpha.data(Models::ProfileListModel::NameRole).toString(), QStringLiteral("alpha"));
        QVERIFY(alpha.data(Qt::FontRole).value<QFont>().bold());

        QVERIFY(wait([&](auto cb) { manager.renameProfile(QStringLiteral("beta"), QStringLiteral("gamma"), this, cb); }).ok());
        QCOMPARE(model.nameAt(1), QStringLiteral("gamma"));
        QVERIFY(wait([&](auto cb) { manager.removeProfile(QStringLiteral("alpha"), false, this, cb); }).ok());
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.index(0).data(Models::ProfileListModel::ActiveRole).toBool(), false);
        QVERIFY(model.roleNames().values().contains("server"));
    }
};

QTEST_MAIN(TestProfileListModel)
#include "tst_profilelistmodel.moc"
