// The sandbox's store: resourceVersions, optimistic locking, history for watches, expiry, and
// owner-reference garbage collection.

#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

#include <QJsonArray>
#include <QSignalSpy>
#include <QTest>

using namespace Starforge::Sandbox;

namespace {

QJsonObject pod(const QString &name, const QString &ownerUid = {})
{
    QJsonObject metadata{{QStringLiteral("name"), name}, {QStringLiteral("namespace"), QStringLiteral("ns")}};
    if (!ownerUid.isEmpty()) {
        metadata.insert(QStringLiteral("ownerReferences"),
                        QJsonArray{QJsonObject{{QStringLiteral("apiVersion"), QStringLiteral("ray.io/v1")},
                                               {QStringLiteral("kind"), QStringLiteral("RayCluster")},
                                               {QStringLiteral("name"), QStringLiteral("owner")},
                                               {QStringLiteral("uid"), ownerUid}}});
    }
    return QJsonObject{{QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("Pod")},
                       {QStringLiteral("metadata"), metadata}};
}

const ResourceType &pods()
{
    return *ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("pods"));
}

} // namespace

class TestObjectStore : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void createSetsMetadataAndRejectsDuplicates()
    {
        ObjectStore store;
        const quint64 before = store.currentResourceVersion();
        auto created = store.create(pods(), pod(QStringLiteral("a")));
        QVERIFY(std::holds_alternative<ObjectPtr>(created));
        const ObjectPtr a = std::get<ObjectPtr>(created);
        QCOMPARE(a->resourceVersion, before + 1);
        const QJsonObject meta = a->object.value(QStringLiteral("metadata")).toObject();
        QVERIFY(!meta.value(QStringLiteral("uid")).toString().isEmpty());
        QVERIFY(!meta.value(QStringLiteral("creationTimestamp")).toString().isEmpty());
        QCOMPARE(meta.value(QStringLiteral("resourceVersion")).toString(), QString::number(a->resourceVersion));
        // A list item has no kind; with type meta it does; both are valid JSON of the same object.
        QVERIFY(a->json(false).startsWith("{\"metadata\""));
        QVERIFY(a->json(true).startsWith("{\"apiVersion\":\"v1\",\"kind\":\"Pod\","));

        auto again = store.create(pods(), pod(QStringLiteral("a")));
        QVERIFY(std::holds_alternative<StoreError>(again));
        QCOMPARE(std::get<StoreError>(again).message, QStringLiteral("pods \"a\" already exists"));
    }

    void updateChecksTheResourceVersion()
    {
        ObjectStore store;
        const ObjectPtr a = std::get<ObjectPtr>(store.create(pods(), pod(QStringLiteral("a"))));
        QJsonObject changed = a->object;
        changed.insert(QStringLiteral("spec"), QJsonObject{{QStringLiteral("nodeName"), QStringLiteral("n1")}});
        auto stale = store.update(pods(), changed, a->resourceVersion - 1);
        QVERIFY(std::holds_alternative<StoreError>(stale));
        QVERIFY(std::get<StoreError>(stale).message.startsWith(QStringLiteral("Operation cannot be fulfilled on pods \"a\"")));
        auto fresh = store.update(pods(), changed, a->resourceVersion);
        QVERIFY(std::holds_alternative<ObjectPtr>(fresh));
        const ObjectPtr b = std::get<ObjectPtr>(fresh);
        QVERIFY(b->resourceVersion > a->resourceVersion);
        QCOMPARE(b->uid, a->uid);
    }

    void historyFeedsWatchesUntilExpired()
    {
        ObjectStore store;
        const quint64 start = store.currentResourceVersion();
        (void)store.create(pods(), pod(QStringLiteral("a")));
        (void)store.create(pods(), pod(QStringLiteral("b")));
        (void)store.remove(pods(), QStringLiteral("ns"), QStringLiteral("a"));
        const auto changes = store.changesSince(pods().storage, start);
        QCOMPARE(changes.size(), std::size_t(3));
        QCOMPARE(changes[0].type, ChangeType::Added);
        QCOMPARE(changes[2].type, ChangeType::Deleted);
        QCOMPARE(changes[2].object->name, QStringLiteral("a"));
        QCOMPARE(store.changesSince(pods().storage, changes[1].resourceVersion).size(), std::size_t(1));
        QVERIFY(store.oldestWatchableResourceVersion() <= start);

        store.expireHistory();
        QCOMPARE(store.oldestWatchableResourceVersion(), store.currentResourceVersion());
        QVERIFY(store.changesSince(pods().storage, start).empty());
    }

    void boundedHistoryCompacts()
    {
        ObjectStore store;
        store.setHistoryLimit(10);
        const quint64 start = store.currentResourceVersion();
        for (int i = 0; i < 25; ++i) {
            (void)store.create(pods(), pod(QStringLiteral("p%1").arg(i)));
        }
        QCOMPARE(store.changesSince(pods().storage, 0).size(), std::size_t(10));
        QCOMPARE(store.oldestWatchableResourceVersion(), start + 15);
    }

    void listIsInKeyOrderAndResumes()
    {
        ObjectStore store;
        for (const char *name : {"c", "a", "b"}) {
            (void)store.create(pods(), pod(QString::fromLatin1(name)));
        }
        const auto all = store.list(pods().storage, QStringLiteral("ns"));
        QCOMPARE(all.size(), std::size_t(3));
        QCOMPARE(all[0]->name, QStringLiteral("a"));
        const auto rest = store.list(pods().storage, QStringLiteral("ns"), ObjectStore::keyOf(QStringLiteral("ns"), QStringLiteral("a")));
        QCOMPARE(rest.size(), std::size_t(2));
        QCOMPARE(rest[0]->name, QStringLiteral("b"));
        QVERIFY(store.list(pods().storage, QStringLiteral("other")).empty());
    }

    void deletingAnOwnerCollectsItsDependents()
    {
        ObjectStore store;
        const ResourceType &clusters = *ResourceTypes::find(QStringLiteral("ray.io"), QStringLiteral("v1"), QStringLiteral("rayclusters"));
        QJsonObject owner{{QStringLiteral("apiVersion"), QStringLiteral("ray.io/v1")}, {QStringLiteral("kind"), QStringLiteral("RayCluster")},
                          {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), QStringLiteral("owner")},
                                                                   {QStringLiteral("namespace"), QStringLiteral("ns")}}}};
        const ObjectPtr cluster = std::get<ObjectPtr>(store.create(clusters, owner));
        (void)store.create(pods(), pod(QStringLiteral("head"), cluster->uid));
        (void)store.create(pods(), pod(QStringLiteral("worker"), cluster->uid));
        (void)store.create(pods(), pod(QStringLiteral("unrelated")));
        QSignalSpy changes(&store, &ObjectStore::changed);
        (void)store.remove(clusters, QStringLiteral("ns"), QStringLiteral("owner"));
        // Background propagation: the owner goes at once, dependents right after.
        QVERIFY(!store.get(clusters.storage, QStringLiteral("ns"), QStringLiteral("owner")));
        QTRY_COMPARE(store.count(pods().storage), 1);
        QVERIFY(store.get(pods().storage, QStringLiteral("ns"), QStringLiteral("unrelated")));
        QCOMPARE(changes.size(), 3);

        // Orphan propagation keeps them.
        const ObjectPtr second = std::get<ObjectPtr>(store.create(clusters, owner));
        (void)store.create(pods(), pod(QStringLiteral("kept"), second->uid));
        (void)store.remove(clusters, QStringLiteral("ns"), QStringLiteral("owner"), true);
        QTest::qWait(20);
        QVERIFY(store.get(pods().storage, QStringLiteral("ns"), QStringLiteral("kept")));
    }

    void eventsConvertBetweenApis()
    {
        const QJsonObject core{{QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("Event")},
                               {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), QStringLiteral("e")}}},
                               {QStringLiteral("involvedObject"), QJsonObject{{QStringLiteral("kind"), QStringLiteral("Pod")},
                                                                              {QStringLiteral("name"), QStringLiteral("p")}}},
                               {QStringLiteral("message"), QStringLiteral("hello")},
                               {QStringLiteral("reason"), QStringLiteral("Scheduled")},
                               {QStringLiteral("count"), 3},
                               {QStringLiteral("reportingComponent"), QStringLiteral("default-scheduler")}};
        const QJsonObject v1 = coreEventToEventsV1(core);
        QCOMPARE(v1.value(QStringLiteral("apiVersion")).toString(), QStringLiteral("events.k8s.io/v1"));
        QCOMPARE(v1.value(QStringLiteral("note")).toString(), QStringLiteral("hello"));
        QCOMPARE(v1.value(QStringLiteral("regarding")).toObject().value(QStringLiteral("name")).toString(), QStringLiteral("p"));
        QCOMPARE(v1.value(QStringLiteral("deprecatedCount")).toInt(), 3);
        QCOMPARE(v1.value(QStringLiteral("reportingController")).toString(), QStringLiteral("default-scheduler"));
        const QJsonObject back = eventsV1ToCoreEvent(v1);
        QCOMPARE(back.value(QStringLiteral("message")), core.value(QStringLiteral("message")));
        QCOMPARE(back.value(QStringLiteral("involvedObject")), core.value(QStringLiteral("involvedObject")));
        const ResourceType &eventsV1 = *ResourceTypes::find(QStringLiteral("events.k8s.io"), QStringLiteral("v1"), QStringLiteral("events"));
        QCOMPARE(ResourceTypes::fieldValue(eventsV1, v1, QStringLiteral("regarding.kind")), std::optional<QString>(QStringLiteral("Pod")));
        QCOMPARE(ResourceTypes::fieldValue(eventsV1, v1, QStringLiteral("source")), std::optional<QString>(QStringLiteral("default-scheduler")));
        QVERIFY(!ResourceTypes::fieldValue(eventsV1, v1, QStringLiteral("involvedObject.kind")));
    }
};

QTEST_GUILESS_MAIN(TestObjectStore)
#include "tst_objectstore.moc"
