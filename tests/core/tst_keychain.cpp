// KeychainSecretStore against a real Secret Service: gnome-keyring in a private D-Bus session
// (scripts/lib/with-secret-service.sh). Write, read back, overwrite, remove, the batch helpers,
// and that entries are where `secret-tool` finds them.

#include "core/secrets/keychainsecretstore.h"
#include "support/testutil.h"

#include <QProcess>
#include <QStandardPaths>
#include <QTest>

using namespace Starforge;
using Starforge::Secrets::KeychainSecretStore;

class TestKeychain : public QObject
{
    Q_OBJECT

    KeychainSecretStore m_store;

    Result<void> write(const QString &profile, const QString &key, const QString &value)
    {
        std::optional<Result<void>> r;
        m_store.write(profile, key, value, this, [&r](Result<void> x) { r = x; });
        return Testing::waitFor(r) ? *r : Result<void>(Error::internal(QStringLiteral("timeout")));
    }
    Result<std::optional<QString>> read(const QString &profile, const QString &key)
    {
        std::optional<Result<std::optional<QString>>> r;
        m_store.read(profile, key, this, [&r](Result<std::optional<QString>> x) { r = x; });
        return Testing::waitFor(r) ? *r : Result<std::optional<QString>>(Error::internal(QStringLiteral("timeout")));
    }
    Result<void> remove(const QString &profile, const QString &key)
    {
        std::optional<Result<void>> r;
        m_store.remove(profile, key, this, [&r](Result<void> x) { r = x; });
        return Testing::waitFor(r) ? *r : Result<void>(Error::internal(QStringLiteral("timeout")));
    }
    static QString secretTool(const QString &entry)
    {
        QProcess p;
        p.start(QStringLiteral("secret-tool"), {QStringLiteral("lookup"), QStringLiteral("server"), QStringLiteral("starforge"),
                                                QStringLiteral("user"), entry, QStringLiteral("type"), QStringLiteral("plaintext")});
        p.waitForFinished(10000);
        return QString::fromUtf8(p.readAllStandardOutput());
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(!qEnvironmentVariableIsEmpty("DBUS_SESSION_BUS_ADDRESS"),
                 "run under scripts/lib/with-secret-service.sh (ctest does this)");
    }

    void writeReadOverwriteRemove()
    {
        const QString profile = QStringLiteral("lab");
        const QString key = QStringLiteral("FORGE_K8S_TOKEN");
        const auto before = read(profile, key);
        QVERIFY2(before.ok(), qPrintable(before.ok() ? QString() : before.error().message));
        QVERIFY(!before->has_value());

        const auto written = write(profile, key, QStringLiteral("eyJ-real-keychain-token-1"));
        QVERIFY2(written.ok(), qPrintable(written.ok() ? QString() : written.error().message));
        const auto back = read(profile, key);
        QVERIFY(back.ok());
        QCOMPARE(back->value_or(QString()), QStringLiteral("eyJ-real-keychain-token-1"));

        QVERIFY(write(profile, key, QStringLiteral("second-value-ünïcode")).ok());
        QCOMPARE(read(profile, key)->value_or(QString()), QStringLiteral("second-value-ünïcode"));

        // Another tool sees the entry under the documented name.
        if (!QStandardPaths::findExecutable(QStringLiteral("secret-tool")).isEmpty()) {
            QCOMPARE(secretTool(KeychainSecretStore::entryName(profile, key)), QStringLiteral("second-value-ünïcode"));
        }

        QVERIFY(remove(profile, key).ok());
        QVERIFY(!read(profile, key)->has_value());
        QVERIFY(remove(profile, key).ok()); // removing what is not there succeeds
    }

    void profilesAreSeparate()
    {
        QVERIFY(write(QStringLiteral("a"), QStringLiteral("FORGE_S3_ACCESS_KEY"), QStringLiteral("access-a")).ok());
        QVERIFY(write(QStringLiteral("b"), QStringLiteral("FORGE_S3_ACCESS_KEY"), QStringLiteral("access-b")).ok());
        QCOMPARE(read(QStringLiteral("a"), QStringLiteral("FORGE_S3_ACCESS_KEY"))->value_or(QString()), QStringLiteral("access-a"));
        QCOMPARE(read(QStringLiteral("b"), QStringLiteral("FORGE_S3_ACCESS_KEY"))->value_or(QString()), QStringLiteral("access-b"));
    }

    void batchHelpers()
    {
        std::optional<Result<void>> applied;
        m_store.apply(QStringLiteral("batch"),
                      {{QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("t-123456")},
                       {QStringLiteral("FORGE_S3_SECRET_KEY"), QStringLiteral("s-123456")}},
                      this, [&applied](Result<void> r) { applied = r; });
        QVERIFY(Testing::waitFor(applied));
        QVERIFY(applied->ok());

        std::optional<Result<QMap<QString, QString>>> all;
        m_store.readAll(QStringLiteral("batch"), this, [&all](Result<QMap<QString, QString>> r) { all = r; });
        QVERIFY(Testing::waitFor(all));
        QVERIFY(all->ok());
        QCOMPARE(all->value(), (QMap<QString, QString>{{QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("t-123456")},
                                                       {QStringLiteral("FORGE_S3_SECRET_KEY"), QStringLiteral("s-123456")}}));

        std::optional<Result<void>> copied;
        m_store.copyAll(QStringLiteral("batch"), QStringLiteral("moved"), true, this, [&copied](Result<void> r) { copied = r; });
        QVERIFY(Testing::waitFor(copied));
        QVERIFY(copied->ok());
        QCOMPARE(read(QStringLiteral("moved"), QStringLiteral("FORGE_S3_SECRET_KEY"))->value_or(QString()), QStringLiteral("s-123456"));
        QVERIFY(!read(QStringLiteral("batch"), QStringLiteral("FORGE_K8S_TOKEN"))->has_value());

        std::optional<Result<void>> removed;
        m_store.removeAll(QStringLiteral("moved"), this, [&removed](Result<void> r) { removed = r; });
        QVERIFY(Testing::waitFor(removed));
        QVERIFY(removed->ok());
        QVERIFY(!read(QStringLiteral("moved"), QStringLiteral("FORGE_K8S_TOKEN"))->has_value());
    }

    void callsRunInOrder()
    {
        // Many writes without waiting: the queue serializes them, the last one wins.
        QStringList order;
        for (int i = 0; i < 5; ++i) {
            m_store.write(QStringLiteral("queue"), QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("v%1").arg(i), this,
                          [&order, i](Result<void> r) { order.append(r.ok() ? QString::number(i) : r.error().message); });
        }
        QTRY_COMPARE_WITH_TIMEOUT(order.size(), 5, 10000);
        QCOMPARE(order, (QStringList{QStringLiteral("0"), QStringLiteral("1"), QStringLiteral("2"), QStringLiteral("3"), QStringLiteral("4")}));
        QCOMPARE(read(QStringLiteral("queue"), QStringLiteral("FORGE_K8S_TOKEN"))->value_or(QString()), QStringLiteral("v4"));
    }
};

QTEST_GUILESS_MAIN(TestKeychain)
#include "tst_keychain.moc"
