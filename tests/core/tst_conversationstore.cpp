// Playground conversations on this machine: saved atomically, 0600 in a 0700 folder, listed
// newest first with a title from the first question, reopened whole, removed; a damaged file
// is listed as such and kept; ids that would escape the folder are refused.

#include "core/playground/conversationstore.h"
#include "support/testutil.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Playground;

class TestConversationStore : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void savesListsLoadsRemoves()
    {
        QTemporaryDir dir;
        ConversationStore store(dir.filePath(QStringLiteral("conversations")));
        const QJsonObject first{{QStringLiteral("pod"), QStringLiteral("play-b7d4kq")}, {QStringLiteral("model"), QStringLiteral("x7k2pq-step-40")},
                                {QStringLiteral("messages"), QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                                                                    {QStringLiteral("content"), QStringLiteral("How does\nGRPO work?")}},
                                                                        QJsonObject{{QStringLiteral("role"), QStringLiteral("assistant")},
                                                                                    {QStringLiteral("content"), QStringLiteral("It samples.")}}}}};
        const auto id = store.save({}, first);
        QVERIFY2(id, id ? "" : qPrintable(id.error().message));
        QFileInfo file(store.directory() + u'/' + *id + QStringLiteral(".json"));
        QVERIFY(file.exists());
        QCOMPARE(file.permissions() & (QFileDevice::ReadGroup | QFileDevice::ReadOther | QFileDevice::WriteGroup | QFileDevice::WriteOther), QFileDevice::Permissions());
        QCOMPARE(QFileInfo(store.directory()).permissions() & (QFileDevice::ReadOther | QFileDevice::ExeOther | QFileDevice::ReadGroup), QFileDevice::Permissions());
        QCOMPARE(*store.load(*id), first);

        QTest::qWait(1100);   // a later modification time for the second
        QVERIFY(store.save(QStringLiteral("second"), QJsonObject{{QStringLiteral("model"), QStringLiteral("Qwen3-0.6B")}}));
        QVERIFY(Testing::writeFile(store.directory() + QStringLiteral("/broken.json"), "{not json"));
        const QList<ConversationSummary> listed = store.list();
        QCOMPARE(listed.size(), 3);
        const auto find = [&](const QString &name) { return *std::find_if(listed.cbegin(), listed.cend(), [&](const ConversationSummary &s) { return s.id == name; }); };
        QCOMPARE(find(*id).title, QStringLiteral("How does GRPO work?"));
        QCOMPARE(find(*id).messages, 2);
        QCOMPARE(find(*id).pod, QStringLiteral("play-b7d4kq"));
        QVERIFY(find(QStringLiteral("broken")).damaged);
        QVERIFY(!store.load(QStringLiteral("broken")));
        QVERIFY(QFileInfo::exists(store.directory() + QStringLiteral("/broken.json")));   // kept
        const auto position = [&](const QString &name) {
            return std::find_if(listed.cbegin(), listed.cend(), [&](const ConversationSummary &s) { return s.id == name; }) - listed.cbegin();
        };
        QVERIFY(position(QStringLiteral("second")) < position(*id));   // newest first

        QVERIFY(store.remove(*id));
        QVERIFY(!store.load(*id));
        QVERIFY(!store.save(QStringLiteral("../escape"), {}));
        QVERIFY(!store.load(QStringLiteral("../../etc/passwd")));
    }
};

QTEST_GUILESS_MAIN(TestConversationStore)
#include "tst_conversationstore.moc"
