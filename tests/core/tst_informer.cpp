// The informer against the sandbox's API server over TLS: paged lists, watch, and the headline
// property: after thousands of changes made while streams drop, history expires (410) and
// requests fail with 429 and 500, every informer's cache equals the server's list and its
// listeners saw a consistent sequence of adds, updates and deletes: as QJsonObjects, and as a
// reader's values (with and without QJsonObject listeners beside them).

#include "core/kube/informer.h"
#include "core/kube/kubeclient.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"
#include "support/sandboxfixture.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Kube;

namespace {

// Applies what an informer reports to its own map and records any report that does not fit:
// an add for a key it holds, an update or delete for one it does not.
class Mirror : public QObject
{
public:
    explicit Mirror(Informer *informer)
    {
        connect(informer, &Informer::added, this, [this](const QJsonObject &o) {
            const QString key = Informer::keyOf(o);
            if (m_objects.contains(key)) m_problems << QStringLiteral("add of present ") + key;
            m_objects.insert(key, rv(o));
            ++adds;
        });
        connect(informer, &Informer::updated, this, [this](const QJsonObject &before, const QJsonObject &after) {
            const QString key = Informer::keyOf(after);
            if (!m_objects.contains(key)) m_problems << QStringLiteral("update of absent ") + key;
            else if (m_objects.value(key) != rv(before)) m_problems << QStringLiteral("update from a state not held: ") + key;
            if (Informer::keyOf(before) != key) m_problems << QStringLiteral("update across keys ") + key;
            m_objects.insert(key, rv(after));
            ++updates;
        });
        connect(informer, &Informer::deleted, this, [this](const QJsonObject &o) {
            const QString key = Informer::keyOf(o);
            if (!m_objects.remove(key)) m_problems << QStringLiteral("delete of absent ") + key;
            ++deletes;
        });
    }
    static QString rv(const QJsonObject &o)
    {
        return o.value(QLatin1String("metadata")).toObject().value(QLatin1String("resourceVersion")).toString();
    }
    QHash<QString, QString> m_objects;
    QStringList m_problems;
    int adds = 0, updates = 0, deletes = 0;
};

// The same check for the read* signals, with a reader that makes "key resourceVersion" of each
// object's text.
class ReadMirror : public QObject
{
public:
    explicit ReadMirror(Informer *informer)
    {
        informer->setReader(&ReadMirror::read);
        connect(informer, &Informer::readAdded, this, [this](const QVariant &v) {
            const auto [key, rv] = split(v);
            if (m_objects.contains(key)) m_problems << QStringLiteral("read add of present ") + key;
            m_objects.insert(key, rv);
        });
        connect(informer, &Informer::readUpdated, this, [this](const QVariant &v) {
            const auto [key, rv] = split(v);
            if (!m_objects.contains(key)) m_problems << QStringLiteral("read update of absent ") + key;
            m_objects.insert(key, rv);
        });
        connect(informer, &Informer::readDeleted, this, [this](const QVariant &v) {
            if (!m_objects.remove(split(v).first)) m_problems << QStringLiteral("read delete of absent ") + split(v).first;
        });
    }
    static QVariant read(QByteArrayView json)
    {
        // Pool threads call this: only its argument.
        const QJsonObject o = QJsonDocument::fromJson(json.toByteArray()).object();
        return QStringList{Informer::keyOf(o), Mirror::rv(o)};
    }
    static std::pair<QString, QString> split(const QVariant &v)
    {
        const QStringList parts = v.toStringList();
        return {parts.value(0), parts.value(1)};
    }
    QHash<QString, QString> m_objects;
    QStringList m_problems;
};

} // namespace

class TestInformer : public QObject
{
    Q_OBJECT

    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<Testing::SandboxHttp> m_http;
    std::unique_ptr<KubeClient> m_client;
    const Sandbox::ResourceType *m_services = nullptr;
    QTemporaryDir m_dir;

    ClientConfig config() const
    {
        ClientConfig c;
        c.server = m_sandbox->apiServerUrl();
        c.token = m_sandbox->token();
        c.tls.caCertificates = QSslCertificate::fromData(m_sandbox->caCertificatePem(), QSsl::Pem);
        c.ns = QStringLiteral("starforge");
        return c;
    }

    // The server's view: key -> resourceVersion, straight from its store.
    QHash<QString, QString> serverServices(const QString &labelKey = {}, const QString &labelValue = {}) const
    {
        QHash<QString, QString> out;
        for (const auto &o : m_sandbox->store()->list(QStringLiteral("services"), QStringLiteral("starforge"))) {
            const QJsonObject labels = o->object.value(QLatin1String("metadata")).toObject().value(QLatin1String("labels")).toObject();
            if (!labelKey.isEmpty() && labels.value(labelKey).toString() != labelValue) continue;
            out.insert(o->ns + u'/' + o->name, QString::number(o->resourceVersion));
        }
        return out;
    }

    QJsonObject service(const QString &name, const QString &tier, int n) const
    {
        return QJsonObject{{QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("Service")},
                           {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name},
                                                                   {QStringLiteral("namespace"), QStringLiteral("starforge")},
                                                                   {QStringLiteral("labels"), QJsonObject{{QStringLiteral("tier"), tier}}},
                                                                   {QStringLiteral("annotations"), QJsonObject{{QStringLiteral("n"), QString::number(n)}}}}},
                           {QStringLiteral("spec"), QJsonObject{{QStringLiteral("ports"), QJsonArray{QJsonObject{{QStringLiteral("port"), 80}}}}}}};
    }

    static InformerOptions fastOptions()
    {
        InformerOptions o;
        o.ns = QStringLiteral("starforge");
        o.backoff.initialMs = 10;
        o.backoff.maxMs = 200;
        return o;
    }

private Q_SLOTS:
    void init()
    {
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("cpu:1x0");
        options.bookmarkIntervalMs = 200;
        QString error;
        QVERIFY2(Testing::startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
        m_client = std::make_unique<KubeClient>(config());
        m_services = Sandbox::ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("services"));
        QVERIFY(m_services);
    }
    void cleanup()
    {
        m_client.reset();
        m_http.reset();
        m_sandbox.reset();
    }

    void listsInPagesThenFollowsTheWatch()
    {
        for (int i = 0; i < 1234; ++i) {
            QVERIFY(std::holds_alternative<Sandbox::ObjectPtr>(
                m_sandbox->store()->create(*m_services, service(QStringLiteral("svc-%1").arg(i), QStringLiteral("a"), 0))));
        }
        InformerOptions options = fastOptions();
        options.pageSize = 100;
        Informer informer(m_client.get(), ResourceKind::services(), options);
        Mirror mirror(&informer);
        informer.start();
        QTRY_VERIFY_WITH_TIMEOUT(informer.hasSynced(), 20000);
        QCOMPARE(informer.stats().pages, 13);
        QCOMPARE(informer.size(), 1234);
        QCOMPARE(informer.resourceVersions(), serverServices());
        QCOMPARE(mirror.adds, 1234);
        QTRY_COMPARE(informer.state(), Informer::State::Watching);

        // Changes after the list arrive through the watch, in order.
        m_sandbox->store()->modify(*m_services, QStringLiteral("starforge"), QStringLiteral("svc-7"), [](QJsonObject &o) {
            QJsonObject m = o.value(QLatin1String("metadata")).toObject();
            m.insert(QStringLiteral("labels"), QJsonObject{{QStringLiteral("tier"), QStringLiteral("b")}});
            o.insert(QStringLiteral("metadata"), m);
            return true;
        });
        QVERIFY(std::holds_alternative<Sandbox::ObjectPtr>(m_sandbox->store()->remove(*m_services, QStringLiteral("starforge"), QStringLiteral("svc-8"))));
        QVERIFY(std::holds_alternative<Sandbox::ObjectPtr>(m_sandbox->store()->create(*m_services, service(QStringLiteral("new"), QStringLiteral("a"), 0))));
        QTRY_COMPARE(informer.resourceVersions(), serverServices());
        QCOMPARE(mirror.updates, 1);
        QCOMPARE(mirror.deletes, 1);
        QCOMPARE(mirror.adds, 1235);
        QCOMPARE(informer.stats().lists, 1);
        QVERIFY2(mirror.m_problems.isEmpty(), qPrintable(mirror.m_problems.join(u'\n')));
        QCOMPARE(informer.get(QStringLiteral("starforge/svc-7"))->value(QLatin1String("metadata")).toObject()
                     .value(QLatin1String("labels")).toObject().value(QLatin1String("tier")).toString(), QStringLiteral("b"));

        // Field and label selectors narrow list and watch alike.
        InformerOptions narrow = fastOptions();
        narrow.fieldSelector = QStringLiteral("metadata.name=svc-9");
        narrow.labelSelector = QStringLiteral("tier=a");
        Informer one(m_client.get(), ResourceKind::services(), narrow);
        one.start();
        QTRY_VERIFY(one.hasSynced());
        QCOMPARE(one.keys(), QStringList{QStringLiteral("starforge/svc-9")});
        QTRY_COMPARE(one.state(), Informer::State::Watching);
        m_sandbox->store()->modify(*m_services, QStringLiteral("starforge"), QStringLiteral("svc-9"), [](QJsonObject &o) {
            QJsonObject m = o.value(QLatin1String("metadata")).toObject();
            m.insert(QStringLiteral("labels"), QJsonObject{{QStringLiteral("tier"), QStringLiteral("b")}});
            o.insert(QStringLiteral("metadata"), m);
            return true;
        });
        QTRY_COMPARE(one.size(), 0);   // it left the label selector's view
    }

    void expiredHistoryRelistsAndDiffs()
    {
        for (int i = 0; i < 50; ++i) {
            (void)m_sandbox->store()->create(*m_services, service(QStringLiteral("svc-%1").arg(i), QStringLiteral("a"), 0));
        }
        Informer informer(m_client.get(), ResourceKind::services(), fastOptions());
        informer.start();
        QTRY_VERIFY(informer.hasSynced());
        QTRY_COMPARE(informer.state(), Informer::State::Watching);
        // Stop delivering, change things, forget the history: the re-watch gets a 410, the relist
        // must turn the gap into exactly the missed changes.
        informer.stop();
        Mirror mirror(&informer);
        mirror.m_objects = informer.resourceVersions();
        (void)m_sandbox->store()->remove(*m_services, QStringLiteral("starforge"), QStringLiteral("svc-1"));
        (void)m_sandbox->store()->remove(*m_services, QStringLiteral("starforge"), QStringLiteral("svc-2"));
        (void)m_sandbox->store()->create(*m_services, service(QStringLiteral("svc-2"), QStringLiteral("a"), 1)); // new uid
        (void)m_sandbox->store()->create(*m_services, service(QStringLiteral("svc-new"), QStringLiteral("a"), 0));
        m_sandbox->store()->modify(*m_services, QStringLiteral("starforge"), QStringLiteral("svc-3"), [](QJsonObject &o) {
            o.insert(QStringLiteral("spec"), QJsonObject{{QStringLiteral("clusterIP"), QStringLiteral("None")}});
            return true;
        });
        m_sandbox->store()->expireHistory();
        informer.start();
        QTRY_VERIFY(informer.hasSynced());
        QCOMPARE(informer.resourceVersions(), serverServices());
        QCOMPARE(mirror.m_objects, serverServices());
        QCOMPARE(mirror.deletes, 2);   // svc-1, and svc-2's old incarnation
        QCOMPARE(mirror.adds, 2);      // svc-2 again, svc-new
        QCOMPARE(mirror.updates, 1);   // svc-3
        QVERIFY2(mirror.m_problems.isEmpty(), qPrintable(mirror.m_problems.join(u'\n')));

        // A 410 on a re-watch: the watch drops, reconnecting fails for a while (500s) and the
        // history is gone by the time it gets through. The informer relists and diffs.
        informer.stop();
        m_sandbox->api()->setFaults(Sandbox::Faults{.dropWatchesAfterMs = 100});
        informer.start();
        QTRY_COMPARE(informer.state(), Informer::State::Watching);
        const int listsBefore = informer.stats().lists;
        m_sandbox->api()->setFaults(Sandbox::Faults{.rate500 = 1.0, .dropWatchesAfterMs = 100});
        // First the cut (a transport error), then re-watches answered 500.
        QTRY_VERIFY(informer.state() == Informer::State::Waiting && informer.lastError()
                    && informer.lastError()->kind == ApiError::Kind::Server);
        const int deletesBefore = mirror.deletes;
        (void)m_sandbox->store()->create(*m_services, service(QStringLiteral("svc-late"), QStringLiteral("a"), 0));
        (void)m_sandbox->store()->remove(*m_services, QStringLiteral("starforge"), QStringLiteral("svc-4"));
        m_sandbox->store()->expireHistory();
        m_sandbox->api()->setFaults(Sandbox::Faults{});
        QTRY_VERIFY_WITH_TIMEOUT(informer.stats().lists > listsBefore, 10000);
        QTRY_COMPARE(informer.resourceVersions(), serverServices());
        QCOMPARE(informer.stats().expired, 1);
        QCOMPARE(mirror.m_objects, serverServices());
        QCOMPARE(mirror.deletes, deletesBefore + 1);
        QVERIFY(informer.get(QStringLiteral("starforge/svc-late")));
        QVERIFY2(mirror.m_problems.isEmpty(), qPrintable(mirror.m_problems.join(u'\n')));
    }

    void consistentUnderFaults()
    {
        QRandomGenerator random(42);
        for (int i = 0; i < 200; ++i) {
            (void)m_sandbox->store()->create(*m_services, service(QStringLiteral("svc-%1").arg(i), i % 2 ? QStringLiteral("a") : QStringLiteral("b"), 0));
        }
        InformerOptions all = fastOptions();
        all.pageSize = 37;
        InformerOptions tierA = fastOptions();
        tierA.labelSelector = QStringLiteral("tier=a");
        tierA.pageSize = 50;
        // Faults on from the start: lists fail and retry too, and every watch is cut.
        Sandbox::Faults faults;
        faults.rate429 = 0.05;
        faults.rate500 = 0.05;
        faults.dropWatchesAfterMs = 150;
        m_sandbox->api()->setFaults(faults);
        InformerOptions readOnly = tierA;   // values only: no QJsonObject is made for it
        readOnly.pageSize = 20;
        Informer informerAll(m_client.get(), ResourceKind::services(), all);
        Informer informerA(m_client.get(), ResourceKind::services(), tierA);
        Informer informerRead(m_client.get(), ResourceKind::services(), readOnly);
        Mirror mirrorAll(&informerAll);
        ReadMirror readAll(&informerAll);
        Mirror mirrorA(&informerA);
        ReadMirror readA(&informerRead);
        informerAll.start();
        informerA.start();
        informerRead.start();
        QTRY_VERIFY_WITH_TIMEOUT(informerAll.hasSynced() && informerA.hasSynced() && informerRead.hasSynced(), 20000);

        int next = 200;
        const int mutations = 3000;
        for (int i = 1; i <= mutations; ++i) {
            const QString name = QStringLiteral("svc-%1").arg(random.bounded(next));
            const int what = random.bounded(10);
            if (what < 3) {
                (void)m_sandbox->store()->create(*m_services, service(QStringLiteral("svc-%1").arg(next++), random.bounded(2) ? QStringLiteral("a") : QStringLiteral("b"), i));
            } else if (what < 5) {
                (void)m_sandbox->store()->remove(*m_services, QStringLiteral("starforge"), name);
            } else {
                // Flipping the tier moves objects in and out of the selector's view.
                m_sandbox->store()->modify(*m_services, QStringLiteral("starforge"), name, [&](QJsonObject &o) {
                    QJsonObject m = o.value(QLatin1String("metadata")).toObject();
                    m.insert(QStringLiteral("labels"), QJsonObject{{QStringLiteral("tier"), random.bounded(2) ? QStringLiteral("a") : QStringLiteral("b")}});
                    m.insert(QStringLiteral("annotations"), QJsonObject{{QStringLiteral("n"), QString::number(i)}});
                    o.insert(QStringLiteral("metadata"), m);
                    return true;
                });
            }
            if (i % 5 == 0) {
                QTest::qWait(5);   // let streams deliver, drop and reconnect in between
            }
            if (i % 700 == 0) {
                // Cut every watch, change something no informer can see yet, and forget the
                // history: each re-watch must be refused with 410 and end in a relist.
                m_sandbox->api()->dropWatches();
                (void)m_sandbox->store()->create(*m_services, service(QStringLiteral("svc-%1").arg(next++), QStringLiteral("a"), i));
                m_sandbox->store()->expireHistory();
            }
        }
        m_sandbox->api()->setFaults(Sandbox::Faults{});
        // Something new after the faults stop, so a waiting watch has a reason to catch up.
        (void)m_sandbox->store()->create(*m_services, service(QStringLiteral("final"), QStringLiteral("a"), 0));

        QTRY_COMPARE_WITH_TIMEOUT(informerAll.resourceVersions(), serverServices(), 30000);
        QTRY_COMPARE_WITH_TIMEOUT(informerA.resourceVersions(), serverServices(QStringLiteral("tier"), QStringLiteral("a")), 30000);
        QTRY_COMPARE_WITH_TIMEOUT(informerRead.resourceVersions(), serverServices(QStringLiteral("tier"), QStringLiteral("a")), 30000);
        QCOMPARE(mirrorAll.m_objects, serverServices());
        QCOMPARE(readAll.m_objects, serverServices());
        QCOMPARE(mirrorA.m_objects, serverServices(QStringLiteral("tier"), QStringLiteral("a")));
        QCOMPARE(readA.m_objects, serverServices(QStringLiteral("tier"), QStringLiteral("a")));
        for (const QStringList *problems : {&mirrorAll.m_problems, &readAll.m_problems, &mirrorA.m_problems, &readA.m_problems}) {
            QVERIFY2(problems->isEmpty(), qPrintable(problems->mid(0, 10).join(u'\n')));
        }
        // The faults did happen, and were recovered from.
        for (const Informer *informer : {&informerAll, &informerA, &informerRead}) {
            qInfo() << informer->kind().plural << informer->options().labelSelector << "lists" << informer->stats().lists
                    << "watches" << informer->stats().watches << "410s" << informer->stats().expired
                    << "failures" << informer->stats().failures << "events" << informer->stats().events;
            QVERIFY(informer->stats().watches > informer->stats().lists + 2);   // re-watches after cuts
            QVERIFY(informer->stats().failures > 0);
            QVERIFY(informer->stats().expired > 0);
            QVERIFY(informer->stats().lists > 1);
        }
    }

    // metadata.managedFields never reaches the cache or a listener, wherever it stands in the
    // metadata, from a list page or a watch event; the rest of the object is kept as it was.
    void managedFieldsAreDropped()
    {
        const QJsonArray managed{QJsonObject{{QStringLiteral("manager"), QStringLiteral("kubectl")},
                                             {QStringLiteral("fieldsV1"), QJsonObject{{QStringLiteral("f:spec"), QJsonObject{}}}}}};
        const auto withManaged = [&](const QString &name) {
            QJsonObject o = service(name, QStringLiteral("a"), 0);
            QJsonObject m = o.value(QLatin1String("metadata")).toObject();
            m.insert(QStringLiteral("managedFields"), managed);
            o.insert(QStringLiteral("metadata"), m);
            return o;
        };
        for (int i = 0; i < 30; ++i) {
            (void)m_sandbox->store()->create(*m_services, withManaged(QStringLiteral("svc-%1").arg(i)));
        }
        InformerOptions options = fastOptions();
        options.pageSize = 7;
        Informer informer(m_client.get(), ResourceKind::services(), options);
        Mirror mirror(&informer);
        QList<QJsonObject> seen;
        connect(&informer, &Informer::added, this, [&](const QJsonObject &o) { seen << o; });
        connect(&informer, &Informer::updated, this, [&](const QJsonObject &, const QJsonObject &o) { seen << o; });
        informer.start();
        QTRY_VERIFY(informer.hasSynced());
        QTRY_COMPARE(informer.state(), Informer::State::Watching);
        QCOMPARE(informer.size(), 30);
        QVERIFY(m_sandbox->store()->list(QStringLiteral("services"), QStringLiteral("starforge")).front()->object.value(QLatin1String("metadata"))
                    .toObject().contains(QLatin1String("managedFields")));   // the server keeps it
        (void)m_sandbox->store()->create(*m_services, withManaged(QStringLiteral("late")));
        m_sandbox->store()->modify(*m_services, QStringLiteral("starforge"), QStringLiteral("svc-3"), [&](QJsonObject &o) {
            QJsonObject m = o.value(QLatin1String("metadata")).toObject();
            m.insert(QStringLiteral("annotations"), QJsonObject{{QStringLiteral("n"), QStringLiteral("changed")}});
            o.insert(QStringLiteral("metadata"), m);
            return true;
        });
        QTRY_COMPARE(informer.resourceVersions(), serverServices());
        QCOMPARE(seen.size(), 32);
        for (const QString &key : informer.keys()) {
            const QJsonObject cached = *informer.get(key);
            const QJsonObject metadata = cached.value(QLatin1String("metadata")).toObject();
            QVERIFY2(!metadata.contains(QLatin1String("managedFields")), qPrintable(key));
            QCOMPARE(metadata.value(QLatin1String("labels")).toObject().value(QLatin1String("tier")).toString(), QStringLiteral("a"));
            QCOMPARE(cached.value(QLatin1String("spec")).toObject().value(QLatin1String("ports")).toArray().size(), 1);
        }
        for (const QJsonObject &o : std::as_const(seen)) {
            QVERIFY(!o.value(QLatin1String("metadata")).toObject().contains(QLatin1String("managedFields")));
        }
        QCOMPARE(informer.get(QStringLiteral("starforge/svc-3"))->value(QLatin1String("metadata")).toObject()
                     .value(QLatin1String("annotations")).toObject().value(QLatin1String("n")).toString(), QStringLiteral("changed"));
        QVERIFY2(mirror.m_problems.isEmpty(), qPrintable(mirror.m_problems.join(u'\n')));
    }

    void aListenerMayStopItMidList()
    {
        for (int i = 0; i < 20; ++i) {
            (void)m_sandbox->store()->create(*m_services, service(QStringLiteral("svc-%1").arg(i), QStringLiteral("a"), 0));
        }
        Informer informer(m_client.get(), ResourceKind::services(), fastOptions());
        int adds = 0;
        connect(&informer, &Informer::added, this, [&] {
            if (++adds == 3) informer.stop();
        });
        informer.start();
        QTRY_COMPARE(informer.state(), Informer::State::Stopped);
        QTest::qWait(200);
        QCOMPARE(adds, 3);                       // nothing more after stop()
        QCOMPARE(informer.stats().watches, 0);   // and no watch opened behind the listener's back
        QVERIFY(!informer.hasSynced());
    }

    void tooManyRequestsWaitsForRetryAfter()
    {
        m_sandbox->api()->setFaults(Sandbox::Faults{.rate429 = 1.0});
        Informer informer(m_client.get(), ResourceKind::nodes(), fastOptions());
        informer.start();
        QTRY_COMPARE(informer.state(), Informer::State::Waiting);
        QVERIFY(informer.lastError());
        QCOMPARE(informer.lastError()->kind, ApiError::Kind::TooManyRequests);
        QCOMPARE(informer.lastError()->retryAfterMs, 1000);   // the sandbox's Retry-After: 1
        QTest::qWait(300);
        // Backoff alone (10 ms doubling) would have tried several times by now.
        QCOMPARE(informer.stats().failures, 1);
        m_sandbox->api()->setFaults(Sandbox::Faults{});
        QTRY_VERIFY_WITH_TIMEOUT(informer.hasSynced(), 5000);
        QCOMPARE(informer.size(), 1);
        QVERIFY(!informer.lastError());
    }
};

QTEST_GUILESS_MAIN(TestInformer)
#include "tst_informer.moc"
