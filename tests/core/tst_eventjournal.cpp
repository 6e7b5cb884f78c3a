// The event journal on real SQLite files in a temporary folder: events upserted by uid (a larger
// count wins), the prefix query taken literally (no LIKE patterns, no case folding, no
// neighbour's events), job states stored only on change, everything kept across a close and a
// reopen, the schema version (a newer one refused with the fix), damaged files moved aside,
// pruning by age and by size, and mergeEvents.

#include "core/events/eventjournal.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Events;

namespace {

const QDateTime BaseTime = QDateTime::fromString(QStringLiteral("2026-12-04T10:00:00Z"), Qt::ISODate);

QString iso(const QDateTime &t)
{
    return t.toUTC().toString(Qt::ISODate);
}

// A core/v1 Event as the API returns it.
QJsonObject coreEvent(const QString &uid, const QString &involvedName, int count, const QDateTime &first, const QDateTime &last,
                      const QString &reason = QStringLiteral("Scheduled"), const QString &message = QStringLiteral("a message"),
                      const QString &ns = QStringLiteral("ml"), const QString &name = {})
{
    QJsonObject meta{{QStringLiteral("name"), name.isEmpty() ? involvedName + QStringLiteral(".18") + uid : name}, {QStringLiteral("namespace"), ns}};
    if (!uid.isEmpty()) meta.insert(QStringLiteral("uid"), uid);
    return QJsonObject{{QStringLiteral("apiVersion"), QStringLiteral("v1")},
                       {QStringLiteral("kind"), QStringLiteral("Event")},
                       {QStringLiteral("metadata"), meta},
                       {QStringLiteral("involvedObject"), QJsonObject{{QStringLiteral("kind"), QStringLiteral("Pod")},
                                                                      {QStringLiteral("name"), involvedName},
                                                                      {QStringLiteral("namespace"), ns}}},
                       {QStringLiteral("reason"), reason},
                       {QStringLiteral("message"), message},
                       {QStringLiteral("type"), QStringLiteral("Normal")},
                       {QStringLiteral("count"), count},
                       {QStringLiteral("firstTimestamp"), iso(first)},
                       {QStringLiteral("lastTimestamp"), iso(last)}};
}

QString uidOf(const QJsonObject &event)
{
    return event.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("uid")).toString();
}

QStringList uids(const QList<QJsonObject> &events)
{
    QStringList out;
    for (const QJsonObject &e : events) out << uidOf(e);
    return out;
}

JobStateChange state(const QString &rayJob, const QString &deployment, const QString &job = {}, const QString &reason = {}, const QString &message = {})
{
    JobStateChange c;
    c.ns = QStringLiteral("ml");
    c.rayJobName = rayJob;
    c.jobId = QStringLiteral("abc123");
    c.at = QDateTime::currentDateTimeUtc();
    c.deploymentStatus = deployment;
    c.jobStatus = job;
    c.reason = reason;
    c.message = message;
    return c;
}

// The schema version stored in a file, read with a connection of the test's own.
int userVersion(const QString &path, int set = -1)
{
    int version = -1;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("test-reader"));
        db.setDatabaseName(path);
        if (db.open()) {
            QSqlQuery q(db);
            if (set >= 0) q.exec(QStringLiteral("PRAGMA user_version = %1").arg(set));
            if (q.exec(QStringLiteral("PRAGMA user_version")) && q.next()) version = q.value(0).toInt();
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("test-reader"));
    return version;
}

std::unique_ptr<EventJournal> openOrFail(const QString &path, JournalOptions options = {})
{
    auto opened = EventJournal::open(path, options);
    if (!opened) {
        qWarning().noquote() << "open failed:" << opened.error().message;
        return nullptr;
    }
    return std::move(opened).value();
}

} // namespace

class TestEventJournal : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    int m_files = 0;

    QString newPath() { return m_dir.filePath(QStringLiteral("j%1/journal.sqlite").arg(++m_files)); }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QVERIFY2(QSqlDatabase::isDriverAvailable(QStringLiteral("QSQLITE")), "install libqt6sql6-sqlite");
    }

    void upsertsByUidAndALargerCountWins()
    {
        const QString path = newPath();
        auto journal = openOrFail(path);
        QVERIFY(journal);
        QCOMPARE(journal->path(), QFileInfo(path).absoluteFilePath());
        // Its owner's alone.
        const QFileDevice::Permissions others = QFileDevice::ReadGroup | QFileDevice::WriteGroup | QFileDevice::ExeGroup | QFileDevice::ReadOther
            | QFileDevice::WriteOther | QFileDevice::ExeOther;
        QCOMPARE(QFileInfo(path).permissions() & others, QFileDevice::Permissions());
        QVERIFY(QFileInfo(path).permissions().testFlags(QFileDevice::ReadOwner | QFileDevice::WriteOwner));
        journal->recordEvent(coreEvent(QStringLiteral("u1"), QStringLiteral("train-ab12cd-head"), 1, BaseTime, BaseTime, QStringLiteral("BackOff"),
                                       QStringLiteral("first copy")));
        journal->flush();
        QCOMPARE(journal->stats().events, 1);

        // A later copy with a larger count replaces it.
        journal->recordEvent(coreEvent(QStringLiteral("u1"), QStringLiteral("train-ab12cd-head"), 4, BaseTime, BaseTime.addSecs(60), QStringLiteral("BackOff"),
                                       QStringLiteral("fourth copy")));
        journal->flush();
        auto events = journal->events(QStringLiteral("ml"), {QStringLiteral("train-ab12cd")});
        QCOMPARE(events.size(), 1);
        QCOMPARE(events[0].value(QStringLiteral("count")).toInt(), 4);
        QCOMPARE(events[0].value(QStringLiteral("message")).toString(), QStringLiteral("fourth copy"));

        // An older copy (a relist of stale data) does not go back.
        journal->recordEvent(coreEvent(QStringLiteral("u1"), QStringLiteral("train-ab12cd-head"), 2, BaseTime, BaseTime.addSecs(30), QStringLiteral("BackOff"),
                                       QStringLiteral("second copy")));
        journal->flush();
        events = journal->events(QStringLiteral("ml"), {QStringLiteral("train-ab12cd")});
        QCOMPARE(events.size(), 1);
        QCOMPARE(events[0].value(QStringLiteral("message")).toString(), QStringLiteral("fourth copy"));

        // Copies queued in one batch: the largest count is what lands, whatever the order.
        journal->recordEvent(coreEvent(QStringLiteral("u1"), QStringLiteral("train-ab12cd-head"), 9, BaseTime, BaseTime.addSecs(90), QStringLiteral("BackOff"),
                                       QStringLiteral("ninth copy")));
        journal->recordEvent(coreEvent(QStringLiteral("u1"), QStringLiteral("train-ab12cd-head"), 7, BaseTime, BaseTime.addSecs(80), QStringLiteral("BackOff"),
                                       QStringLiteral("seventh copy")));
        events = journal->events(QStringLiteral("ml"), {QStringLiteral("train-ab12cd")});   // writes what is queued first
        QCOMPARE(events.size(), 1);
        QCOMPARE(events[0].value(QStringLiteral("count")).toInt(), 9);
        QCOMPARE(journal->stats().events, 1);

        // The same count seen later replaces it; the same count seen at the same time does not.
        journal->recordEvent(coreEvent(QStringLiteral("u1"), QStringLiteral("train-ab12cd-head"), 9, BaseTime, BaseTime.addSecs(100), QStringLiteral("BackOff"),
                                       QStringLiteral("ninth, seen later")));
        journal->flush();
        journal->recordEvent(coreEvent(QStringLiteral("u1"), QStringLiteral("train-ab12cd-head"), 9, BaseTime, BaseTime.addSecs(100), QStringLiteral("BackOff"),
                                       QStringLiteral("ninth again")));
        journal->flush();
        events = journal->events(QStringLiteral("ml"), {QStringLiteral("train-ab12cd")});
        QCOMPARE(events.size(), 1);
        QCOMPARE(events[0].value(QStringLiteral("message")).toString(), QStringLiteral("ninth, seen later"));

        // Without a uid, namespace/name is the key.
        for (int count : {1, 3, 2}) {
            journal->recordEvent(coreEvent(QString(), QStringLiteral("train-ab12cd-worker"), count, BaseTime, BaseTime.addSecs(count),
                                           QStringLiteral("Pulled"), QStringLiteral("copy %1").arg(count), QStringLiteral("ml"), QStringLiteral("same-name")));
            journal->flush();
        }
        events = journal->events(QStringLiteral("ml"), {QStringLiteral("train-ab12cd-worker")});
        QCOMPARE(events.size(), 1);
        QCOMPARE(events[0].value(QStringLiteral("message")).toString(), QStringLiteral("copy 3"));
        QCOMPARE(journal->stats().events, 2);
    }

    // events.k8s.io/v1: regarding, note and series.count.
    void eventsApiV1()
    {
        auto journal = openOrFail(newPath());
        QVERIFY(journal);
        auto v1 = [](int count, const QString &note) {
            return QJsonObject{{QStringLiteral("apiVersion"), QStringLiteral("events.k8s.io/v1")},
                               {QStringLiteral("kind"), QStringLiteral("Event")},
                               {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), QStringLiteral("e1")},
                                                                        {QStringLiteral("namespace"), QStringLiteral("ml")},
                                                                        {QStringLiteral("uid"), QStringLiteral("v1-uid")}}},
                               {QStringLiteral("regarding"), QJsonObject{{QStringLiteral("kind"), QStringLiteral("RayCluster")},
                                                                         {QStringLiteral("name"), QStringLiteral("grpo-x1y2z3-7hq2k")},
                                                                         {QStringLiteral("namespace"), QStringLiteral("ml")}}},
                               {QStringLiteral("note"), note},
                               {QStringLiteral("reason"), QStringLiteral("CreatedService")},
                               {QStringLiteral("eventTime"), QStringLiteral("2026-12-04T10:00:00.000000Z")},
                               {QStringLiteral("series"), QJsonObject{{QStringLiteral("count"), count},
                                                                      {QStringLiteral("lastObservedTime"), QStringLiteral("2026-12-04T10:0%1:00.000000Z").arg(count)}}}};
        };
        journal->recordEvent(v1(2, QStringLiteral("two")));
        journal->flush();
        journal->recordEvent(v1(5, QStringLiteral("five")));
        const auto events = journal->events(QStringLiteral("ml"), {QStringLiteral("grpo-x1y2z3")});
        QCOMPARE(events.size(), 1);
        QCOMPARE(events[0].value(QStringLiteral("note")).toString(), QStringLiteral("five"));
    }

    void prefixesAreTakenLiterally()
    {
        auto journal = openOrFail(newPath());
        QVERIFY(journal);
        struct Row
        {
            const char *uid;
            const char *name;
            const char *ns;
            int minute;
        };
        const Row rows[] = {
            {"rayjob", "grpo-ab12cd", "ml", 1},
            {"cluster", "grpo-ab12cd-7hq2k", "ml", 2},
            {"head", "grpo-ab12cd-7hq2k-head-x9z8w", "ml", 4},
            {"submitter", "grpo-ab12cd-7hq2k-submitter-abcde", "ml", 3},
            {"sibling", "grpo-ab12ce-7hq2k-head-aaaaa", "ml", 0},   // another job: one character differs
            {"other-ns", "grpo-ab12cd-7hq2k-head-x9z8w", "research", 5},
            {"upper", "GRPO-ab12cd-head", "ml", 6},                 // LIKE would fold case
            {"literal", "a_b%c-pod", "ml", 7},
            {"pattern", "axbyyc-pod", "ml", 8},                     // what LIKE 'a_b%c%' matches too
        };
        for (const Row &r : rows) {
            const QDateTime t = BaseTime.addSecs(60 * r.minute);
            journal->recordEvent(coreEvent(QString::fromLatin1(r.uid), QString::fromLatin1(r.name), 1, t, t, QStringLiteral("Created"), QStringLiteral("m"),
                                           QString::fromLatin1(r.ns)));
        }
        journal->flush();
        QCOMPARE(journal->stats().events, qint64(std::size(rows)));

        // The job's own objects, oldest first; not its sibling's, not another namespace's.
        QCOMPARE(uids(journal->events(QStringLiteral("ml"), {QStringLiteral("grpo-ab12cd")})),
                 (QStringList{QStringLiteral("rayjob"), QStringLiteral("cluster"), QStringLiteral("submitter"), QStringLiteral("head")}));
        QCOMPARE(uids(journal->events(QStringLiteral("research"), {QStringLiteral("grpo-ab12cd")})), QStringList{QStringLiteral("other-ns")});
        // Two prefixes that overlap give each event once.
        QCOMPARE(uids(journal->events(QStringLiteral("ml"), {QStringLiteral("grpo-ab12cd-7hq2k"), QStringLiteral("grpo-ab12cd-7hq2k-head")})),
                 (QStringList{QStringLiteral("cluster"), QStringLiteral("submitter"), QStringLiteral("head")}));
        QCOMPARE(uids(journal->events(QStringLiteral("ml"), {QStringLiteral("grpo-ab12c")})),
                 (QStringList{QStringLiteral("sibling"), QStringLiteral("rayjob"), QStringLiteral("cluster"), QStringLiteral("submitter"), QStringLiteral("head")}));
        // '_' and '%' are characters, not patterns.
        QCOMPARE(uids(journal->events(QStringLiteral("ml"), {QStringLiteral("a_b%c")})), QStringList{QStringLiteral("literal")});
        QCOMPARE(uids(journal->events(QStringLiteral("ml"), {QStringLiteral("a%")})), QStringList());
        QCOMPARE(uids(journal->events(QStringLiteral("ml"), {QStringLiteral("a_")})), QStringList{QStringLiteral("literal")});
        // Case counts.
        QCOMPARE(uids(journal->events(QStringLiteral("ml"), {QStringLiteral("GRPO")})), QStringList{QStringLiteral("upper")});
        // Nothing asked, nothing given.
        QCOMPARE(journal->events(QStringLiteral("ml"), {}).size(), 0);
        QCOMPARE(journal->events(QStringLiteral("ml"), {QString()}).size(), 0);
        QCOMPARE(journal->events(QString(), {QStringLiteral("grpo")}).size(), 0);
    }

    void malformedInputIsSkipped()
    {
        auto journal = openOrFail(newPath());
        QVERIFY(journal);
        journal->recordEvent(QJsonObject());
        journal->recordEvent(QJsonObject{{QStringLiteral("metadata"), QStringLiteral("not an object")}, {QStringLiteral("count"), QStringLiteral("many")}});
        QJsonObject noObject = coreEvent(QStringLiteral("u-no-object"), QStringLiteral("x"), 1, BaseTime, BaseTime);
        noObject.remove(QStringLiteral("involvedObject"));
        journal->recordEvent(noObject);
        QJsonObject noKey = coreEvent(QString(), QStringLiteral("x"), 1, BaseTime, BaseTime);
        noKey.insert(QStringLiteral("metadata"), QJsonObject{{QStringLiteral("namespace"), QStringLiteral("ml")}});
        journal->recordEvent(noKey);
        QJsonObject badTimes = coreEvent(QStringLiteral("u-bad-times"), QStringLiteral("x-pod"), -3, BaseTime, BaseTime);
        badTimes.insert(QStringLiteral("firstTimestamp"), QStringLiteral("yesterday"));
        badTimes.insert(QStringLiteral("lastTimestamp"), 12);
        journal->recordEvent(badTimes);   // kept: it has a key and an object; its times are when it was recorded
        journal->recordJobState(JobStateChange{});
        journal->recordJobState(state(QString(), QStringLiteral("Running")));
        journal->flush();
        const auto stats = journal->stats();
        QCOMPARE(stats.events, 1);
        QCOMPARE(stats.states, 0);
        QCOMPARE(uids(journal->events(QStringLiteral("ml"), {QStringLiteral("x-")})), QStringList{QStringLiteral("u-bad-times")});
    }

    void jobStatesAreStoredOnlyOnChange()
    {
        const QString path = newPath();
        {
            auto journal = openOrFail(path);
            QVERIFY(journal);
            journal->recordJobState(state(QStringLiteral("grpo-ab12cd"), QStringLiteral("Initializing")));
            journal->recordJobState(state(QStringLiteral("grpo-ab12cd"), QStringLiteral("Initializing")));
            journal->recordJobState(state(QStringLiteral("grpo-ab12cd"), QStringLiteral("Running"), QStringLiteral("PENDING")));
            journal->flush();
            journal->recordJobState(state(QStringLiteral("grpo-ab12cd"), QStringLiteral("Running"), QStringLiteral("PENDING")));
            journal->recordJobState(state(QStringLiteral("grpo-ab12cd"), QStringLiteral("Running"), QStringLiteral("RUNNING")));
            journal->recordJobState(state(QStringLiteral("other-ff00aa"), QStringLiteral("Initializing")));
            const auto states = journal->jobStates(QStringLiteral("ml"), QStringLiteral("grpo-ab12cd"));
            QCOMPARE(states.size(), 3);
            QCOMPARE(states[0].deploymentStatus, QStringLiteral("Initializing"));
            QCOMPARE(states[1].jobStatus, QStringLiteral("PENDING"));
            QCOMPARE(states[2].jobStatus, QStringLiteral("RUNNING"));
            QCOMPARE(states[2].jobId, QStringLiteral("abc123"));
            QCOMPARE(states[2].ns, QStringLiteral("ml"));
            QCOMPARE(states[2].rayJobName, QStringLiteral("grpo-ab12cd"));
            QVERIFY(states[2].at.isValid());
            QCOMPARE(states[2].at.timeSpec(), Qt::UTC);
            QVERIFY(qAbs(states[2].at.secsTo(QDateTime::currentDateTimeUtc())) < 60);
            QCOMPARE(journal->jobStates(QStringLiteral("ml"), QStringLiteral("other-ff00aa")).size(), 1);
            QCOMPARE(journal->jobStates(QStringLiteral("research"), QStringLiteral("grpo-ab12cd")).size(), 0);
        }
        // After a restart the informer reports the same state again: not stored twice. A change
        // of the message alone is a change.
        auto journal = openOrFail(path);
        QVERIFY(journal);
        journal->recordJobState(state(QStringLiteral("grpo-ab12cd"), QStringLiteral("Running"), QStringLiteral("RUNNING")));
        QCOMPARE(journal->jobStates(QStringLiteral("ml"), QStringLiteral("grpo-ab12cd")).size(), 3);
        journal->recordJobState(state(QStringLiteral("grpo-ab12cd"), QStringLiteral("Failed"), QStringLiteral("FAILED"), QStringLiteral("AppFailed"),
                                      QStringLiteral("loss is nan")));
        journal->recordJobState(state(QStringLiteral("grpo-ab12cd"), QStringLiteral("Failed"), QStringLiteral("FAILED"), QStringLiteral("AppFailed"),
                                      QStringLiteral("loss is nan at step 2")));
        const auto states = journal->jobStates(QStringLiteral("ml"), QStringLiteral("grpo-ab12cd"));
        QCOMPARE(states.size(), 5);
        QCOMPARE(states[3].reason, QStringLiteral("AppFailed"));
        QCOMPARE(states[4].message, QStringLiteral("loss is nan at step 2"));
    }

    void survivesARestart()
    {
        const QString path = newPath();
        {
            auto journal = openOrFail(path);
            QVERIFY(journal);
            for (int i = 0; i < 5; ++i) {
                journal->recordEvent(coreEvent(QStringLiteral("r%1").arg(i), QStringLiteral("grpo-ab12cd-7hq2k-head"), i + 1, BaseTime.addSecs(i), BaseTime.addSecs(i)));
            }
            journal->recordJobState(state(QStringLiteral("grpo-ab12cd"), QStringLiteral("Initializing")));
            // No flush: closing writes what is queued.
        }
        QVERIFY(QFileInfo::exists(path));
        auto journal = openOrFail(path);
        QVERIFY(journal);
        const auto stats = journal->stats();
        QCOMPARE(stats.events, 5);
        QCOMPARE(stats.states, 1);
        QVERIFY(stats.bytes > 0);
        QCOMPARE(uids(journal->events(QStringLiteral("ml"), {QStringLiteral("grpo-ab12cd")})),
                 (QStringList{QStringLiteral("r0"), QStringLiteral("r1"), QStringLiteral("r2"), QStringLiteral("r3"), QStringLiteral("r4")}));
        // The JSON comes back as it went in.
        const QJsonObject original = coreEvent(QStringLiteral("r2"), QStringLiteral("grpo-ab12cd-7hq2k-head"), 3, BaseTime.addSecs(2), BaseTime.addSecs(2));
        QCOMPARE(journal->events(QStringLiteral("ml"), {QStringLiteral("grpo-ab12cd")}).at(2), original);
        QCOMPARE(journal->jobStates(QStringLiteral("ml"), QStringLiteral("grpo-ab12cd")).size(), 1);
    }

    void aNewerSchemaIsRefused()
    {
        const QString path = newPath();
        {
            auto journal = openOrFail(path);
            QVERIFY(journal);
            QCOMPARE(EventJournal::schemaVersion(), 1);
        }
        QCOMPARE(userVersion(path), 1);
        QCOMPARE(userVersion(path, 2), 2);   // as a later Starforge would leave it
        auto opened = EventJournal::open(path);
        QVERIFY(!opened);
        QCOMPARE(opened.error().code, Error::Code::Unsupported);
        QVERIFY2(opened.error().message.contains(QStringLiteral("newer Starforge (schema version 2; this one knows up to 1)")), qPrintable(opened.error().message));
        QVERIFY2(opened.error().message.contains(QDir::toNativeSeparators(QFileInfo(path).absoluteFilePath())), qPrintable(opened.error().message));
        // Left alone: not moved aside, not rewritten.
        QCOMPARE(userVersion(path), 2);
        QCOMPARE(QDir(QFileInfo(path).path()).entryList({QStringLiteral("*.corrupt-*")}, QDir::Files).size(), 0);
    }

    void anotherDatabaseIsNotTakenOver()
    {
        const QString path = newPath();
        QVERIFY(QDir().mkpath(QFileInfo(path).path()));
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("other"));
            db.setDatabaseName(path);
            QVERIFY(db.open());
            QSqlQuery q(db);
            QVERIFY(q.exec(QStringLiteral("CREATE TABLE notes (text TEXT)")));
            db.close();
        }
        QSqlDatabase::removeDatabase(QStringLiteral("other"));
        auto opened = EventJournal::open(path);
        QVERIFY(!opened);
        QVERIFY2(opened.error().message.contains(QStringLiteral("not a Starforge event journal")), qPrintable(opened.error().message));
    }

    void aDamagedFileIsMovedAside_data()
    {
        QTest::addColumn<bool>("garbageHeader");
        QTest::newRow("not a database") << true;
        QTest::newRow("damaged pages") << false;
    }

    void aDamagedFileIsMovedAside()
    {
        QFETCH(bool, garbageHeader);
        const QString path = newPath();
        const QString folder = QFileInfo(path).path();
        QByteArray damaged;
        if (garbageHeader) {
            QVERIFY(QDir().mkpath(folder));
            damaged = QByteArray("this is not a database, whatever its name says\n").repeated(200);
        } else {
            {
                auto journal = openOrFail(path);
                QVERIFY(journal);
                for (int i = 0; i < 300; ++i) {
                    journal->recordEvent(coreEvent(QStringLiteral("d%1").arg(i), QStringLiteral("pod-%1").arg(i), 1, BaseTime, BaseTime,
                                                   QStringLiteral("Pulled"), QString(QStringLiteral("x").repeated(500))));
                }
            }
            QFile f(path);
            QVERIFY(f.open(QIODevice::ReadOnly));
            damaged = f.readAll();
            QVERIFY(damaged.size() > 8 * 4096);
            // The header survives; the b-tree pages after it do not.
            for (qsizetype i = 2 * 4096; i < damaged.size(); i += 7) damaged[i] = char(0x5a);
        }
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            QCOMPARE(f.write(damaged), damaged.size());
        }
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("is damaged; moved it to .*journal\\.sqlite\\.corrupt-")));
        auto opened = EventJournal::open(path);
        QVERIFY2(opened, opened ? "" : qPrintable(opened.error().message));
        auto journal = std::move(opened).value();
        const QStringList aside = QDir(folder).entryList({QStringLiteral("journal.sqlite.corrupt-*")}, QDir::Files);
        QVERIFY2(aside.size() >= 1, qPrintable(QDir(folder).entryList().join(u' ')));
        QVERIFY(QRegularExpression(QStringLiteral("^journal\\.sqlite\\.corrupt-\\d{8}T\\d{9}Z$")).match(aside.first()).hasMatch());
        QFile kept(QDir(folder).filePath(aside.first()));
        QVERIFY(kept.open(QIODevice::ReadOnly));
        QCOMPARE(kept.readAll(), damaged);
        // A fresh journal works, its owner's alone as a new one is.
        QCOMPARE(QFileInfo(path).permissions() & (QFileDevice::ReadOther | QFileDevice::ReadGroup), QFileDevice::Permissions());
        QCOMPARE(journal->stats().events, 0);
        journal->recordEvent(coreEvent(QStringLiteral("fresh"), QStringLiteral("pod-0"), 1, BaseTime, BaseTime));
        QCOMPARE(uids(journal->events(QStringLiteral("ml"), {QStringLiteral("pod-")})), QStringList{QStringLiteral("fresh")});
        QCOMPARE(userVersion(path), 1);
    }

    void anUnwritablePlaceSaysSo()
    {
        // A folder that cannot be made (a file stands where it would go); root may write anywhere
        // else, so this is the case a test can show.
        const QString blocker = m_dir.filePath(QStringLiteral("a-file"));
        QFile f(blocker);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.close();
        auto opened = EventJournal::open(blocker + QStringLiteral("/starforge/journal.sqlite"));
        QVERIFY(!opened);
        QCOMPARE(opened.error().code, Error::Code::Io);
        QVERIFY2(opened.error().message.contains(QStringLiteral("Cannot create the folder")), qPrintable(opened.error().message));
        QVERIFY(!EventJournal::open(QString()));
        QVERIFY(!EventJournal::open(newPath(), JournalOptions{1024, 90}));
        QVERIFY(!EventJournal::open(newPath(), JournalOptions{1024 * 1024, 0}));
    }

    void prunesByAge()
    {
        const QString path = newPath();
        const QDateTime now = QDateTime::currentDateTimeUtc();
        {
            auto journal = openOrFail(path, JournalOptions{64 * 1024 * 1024, 365});
            QVERIFY(journal);
            journal->recordEvent(coreEvent(QStringLiteral("old"), QStringLiteral("grpo-1"), 1, now.addDays(-120), now.addDays(-100)));
            journal->recordEvent(coreEvent(QStringLiteral("recent"), QStringLiteral("grpo-2"), 1, now.addDays(-100), now.addDays(-1)));   // first seen long ago, last seen lately
            journal->recordEvent(coreEvent(QStringLiteral("older"), QStringLiteral("grpo-3"), 1, now.addDays(-95), now.addDays(-91)));
            JobStateChange old = state(QStringLiteral("grpo-1"), QStringLiteral("Complete"));
            old.at = now.addDays(-100);
            journal->recordJobState(old);
            journal->recordJobState(state(QStringLiteral("grpo-2"), QStringLiteral("Running")));
            journal->prune();   // a year is kept
            QCOMPARE(journal->stats().events, 3);
            QCOMPARE(journal->stats().states, 2);
        }
        // Opened with the default 90 days: the open prunes.
        auto journal = openOrFail(path);
        QVERIFY(journal);
        QCOMPARE(uids(journal->events(QStringLiteral("ml"), {QStringLiteral("grpo-")})), QStringList{QStringLiteral("recent")});
        QCOMPARE(journal->jobStates(QStringLiteral("ml"), QStringLiteral("grpo-1")).size(), 0);
        QCOMPARE(journal->jobStates(QStringLiteral("ml"), QStringLiteral("grpo-2")).size(), 1);
        // And prune() itself, for what ages while it is open.
        journal->recordEvent(coreEvent(QStringLiteral("aged"), QStringLiteral("grpo-4"), 1, now.addDays(-200), now.addDays(-200)));
        QCOMPARE(journal->stats().events, 2);
        journal->prune();
        QCOMPARE(uids(journal->events(QStringLiteral("ml"), {QStringLiteral("grpo-")})), QStringList{QStringLiteral("recent")});
    }

    void prunesBySize()
    {
        const QString path = newPath();
        const qint64 bound = 256 * 1024;
        const QDateTime start = QDateTime::currentDateTimeUtc().addDays(-2);
        const QString filler = QStringLiteral("0123456789abcdef").repeated(100);   // 1.6 kB a message
        constexpr int Events = 600;                                                   // about 1 MB in all
        // Filled past the bound with no bound in force...
        {
            auto journal = openOrFail(path);
            QVERIFY(journal);
            for (int i = 0; i < Events; ++i) {
                const QDateTime t = start.addSecs(60 * i);
                journal->recordEvent(coreEvent(QStringLiteral("s%1").arg(i, 4, 10, QLatin1Char('0')), QStringLiteral("grpo-ab12cd-head"), 1, t, t,
                                               QStringLiteral("Pulled"), filler));
            }
            journal->flush();
            QVERIFY2(journal->stats().bytes > 3 * bound, qPrintable(QString::number(journal->stats().bytes)));
        }
        QVERIFY(QFileInfo(path).size() > 3 * bound);
        // ... then opened with one: the open prunes the oldest, the file shrinks under it.
        {
            auto journal = openOrFail(path, JournalOptions{bound, 90});
            QVERIFY(journal);
            const auto stats = journal->stats();
            QVERIFY2(stats.bytes <= bound, qPrintable(QString::number(stats.bytes)));
            QVERIFY(QFileInfo(path).size() <= bound);
            QVERIFY2(stats.events > 20 && stats.events < Events / 2, qPrintable(QString::number(stats.events)));
            const QStringList kept = uids(journal->events(QStringLiteral("ml"), {QStringLiteral("grpo-ab12cd")}));
            QCOMPARE(kept.size(), stats.events);
            QCOMPARE(kept.last(), QStringLiteral("s%1").arg(Events - 1, 4, 10, QLatin1Char('0')));   // the newest stays
            QVERIFY(!kept.contains(QStringLiteral("s0000")));                                      // the oldest went
            // The newest ones, without a gap.
            QCOMPARE(kept.first(), QStringLiteral("s%1").arg(Events - kept.size(), 4, 10, QLatin1Char('0')));

            // Writing on past the bound while open: each flush keeps the file under it.
            for (int i = Events; i < 2 * Events; ++i) {
                const QDateTime t = start.addSecs(60 * i);
                journal->recordEvent(coreEvent(QStringLiteral("s%1").arg(i, 4, 10, QLatin1Char('0')), QStringLiteral("grpo-ab12cd-head"), 1, t, t,
                                               QStringLiteral("Pulled"), filler));
                if (i % 50 == 0) {
                    journal->flush();
                    QVERIFY2(journal->stats().bytes <= bound, qPrintable(QString::number(journal->stats().bytes)));
                }
            }
            journal->flush();
            QVERIFY2(journal->stats().bytes <= bound, qPrintable(QString::number(journal->stats().bytes)));
            const QStringList now = uids(journal->events(QStringLiteral("ml"), {QStringLiteral("grpo-ab12cd")}));
            QCOMPARE(now.last(), QStringLiteral("s%1").arg(2 * Events - 1, 4, 10, QLatin1Char('0')));
            QVERIFY(!now.contains(QStringLiteral("s%1").arg(Events, 4, 10, QLatin1Char('0'))));
        }
        QVERIFY(QFileInfo(path).size() <= bound);
    }

    void mergesWithoutDuplicates()
    {
        const QDateTime t = BaseTime;
        // The archive's copy of "shared" has count 2; the journal saw it later with count 5.
        const QList<QJsonObject> archived{
            coreEvent(QStringLiteral("shared"), QStringLiteral("grpo-head"), 2, t.addSecs(10), t.addSecs(20), QStringLiteral("BackOff"), QStringLiteral("archived")),
            coreEvent(QStringLiteral("only-archived"), QStringLiteral("grpo-head"), 1, t.addSecs(5), t.addSecs(5)),
            coreEvent(QStringLiteral("same-time"), QStringLiteral("grpo-head"), 6, t.addSecs(3), t.addSecs(40), QStringLiteral("BackOff"), QStringLiteral("six")),
            coreEvent(QStringLiteral("same-count"), QStringLiteral("grpo-head"), 1, t.addSecs(60), t.addSecs(60), QStringLiteral("Created"), QStringLiteral("earlier")),
            coreEvent(QStringLiteral("bigger-in-archive"), QStringLiteral("grpo-head"), 7, t.addSecs(1), t.addSecs(70), QStringLiteral("Pulled"), QStringLiteral("archive wins")),
            coreEvent(QString(), QStringLiteral("grpo-head"), 1, t.addSecs(2), t.addSecs(2), QStringLiteral("Created"), QStringLiteral("no uid, archived"),
                      QStringLiteral("ml"), QStringLiteral("by-name")),
        };
        const QList<QJsonObject> journaled{
            coreEvent(QStringLiteral("bigger-in-archive"), QStringLiteral("grpo-head"), 3, t.addSecs(1), t.addSecs(30), QStringLiteral("Pulled"), QStringLiteral("journal")),
            coreEvent(QStringLiteral("only-journal"), QStringLiteral("grpo-head"), 1, t.addSecs(30), t.addSecs(30)),
            coreEvent(QStringLiteral("same-time"), QStringLiteral("grpo-head"), 2, t.addSecs(3), t.addSecs(40), QStringLiteral("BackOff"), QStringLiteral("two")),
            coreEvent(QStringLiteral("same-count"), QStringLiteral("grpo-head"), 1, t.addSecs(60), t.addSecs(61), QStringLiteral("Created"), QStringLiteral("later")),
            coreEvent(QStringLiteral("shared"), QStringLiteral("grpo-head"), 5, t.addSecs(10), t.addSecs(50), QStringLiteral("BackOff"), QStringLiteral("journaled")),
            coreEvent(QString(), QStringLiteral("grpo-head"), 4, t.addSecs(2), t.addSecs(9), QStringLiteral("Created"), QStringLiteral("no uid, journaled"),
                      QStringLiteral("ml"), QStringLiteral("by-name")),
        };
        for (const auto &[x, y] : {std::pair{archived, journaled}, std::pair{journaled, archived}}) {
            const QList<QJsonObject> merged = mergeEvents(x, y);
            QCOMPARE(merged.size(), 7);
            // Ordered by first seen.
            QCOMPARE(uids(merged), (QStringList{QStringLiteral("bigger-in-archive"), QString(), QStringLiteral("same-time"), QStringLiteral("only-archived"),
                                                QStringLiteral("shared"), QStringLiteral("only-journal"), QStringLiteral("same-count")}));
            QCOMPARE(merged[0].value(QStringLiteral("message")).toString(), QStringLiteral("archive wins"));
            QCOMPARE(merged[1].value(QStringLiteral("message")).toString(), QStringLiteral("no uid, journaled"));
            // Seen last at the same moment: the larger count, whichever list it came in.
            QCOMPARE(merged[2].value(QStringLiteral("message")).toString(), QStringLiteral("six"));
            QCOMPARE(merged[4].value(QStringLiteral("count")).toInt(), 5);
            QCOMPARE(merged[4].value(QStringLiteral("message")).toString(), QStringLiteral("journaled"));
            // The same count: the copy seen later.
            QCOMPARE(merged[6].value(QStringLiteral("message")).toString(), QStringLiteral("later"));
        }
        QCOMPARE(mergeEvents({}, {}).size(), 0);
        QCOMPARE(mergeEvents(archived, {}).size(), 6);
        // Duplicates within one list collapse as well.
        QCOMPARE(mergeEvents(archived + archived, {}).size(), 6);
    }
};

QTEST_GUILESS_MAIN(TestEventJournal)
#include "tst_eventjournal.moc"
