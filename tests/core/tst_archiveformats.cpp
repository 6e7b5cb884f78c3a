// What the app writes into the bucket outlives the release that wrote it: status.json files
// from earlier releases are read by today's code, and today's code writes the pinned key names
// (tests/data/archive/README.md). Literals, not round trips through the same code alone.

#include "core/job/jobrecord.h"
#include "support/testutil.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Job;

namespace {

QJsonObject golden(const char *name)
{
    const QByteArray data = Testing::readAll(QStringLiteral(SF_TEST_DATA_DIR "/archive/") + QLatin1String(name));
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(data, &error);
    if (error.error != QJsonParseError::NoError) qWarning("%s: %s", name, qPrintable(error.errorString()));
    return document.object();
}

QDateTime utc(const char *iso)
{
    return QDateTime::fromString(QLatin1String(iso), Qt::ISODate);
}

} // namespace

class TestArchiveFormats : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void readsTheCurrentStatus()
    {
        const QJsonObject json = golden("status-current.json");
        QVERIFY(!json.isEmpty());
        const auto record = JobRecord::fromJson(json);
        QVERIFY2(record, record ? "" : qPrintable(record.error().message));
        QCOMPARE(record->id, QStringLiteral("k2x7pq"));
        QCOMPARE(record->name, QStringLiteral("grpo-math"));
        QCOMPARE(record->rayJobName, QStringLiteral("grpo-math-k2x7pq"));
        QCOMPARE(record->ns, QStringLiteral("ml-team"));
        QCOMPARE(record->state, JobState::Failed);
        QVERIFY(record->archived);
        QCOMPARE(record->reason, QStringLiteral("PreRunningDeadlineExceeded"));
        QVERIFY(record->message.startsWith(QStringLiteral("Job grpo-math-k2x7pq did not reach Running")));
        QCOMPARE(record->cause, QStringLiteral("PreRunningDeadlineExceeded"));
        QCOMPARE(record->created, utc("2026-11-27T18:02:11Z"));
        QVERIFY(!record->started.isValid());
        QCOMPARE(record->ended, utc("2026-11-27T18:17:12Z"));
        QCOMPARE(record->archivedAt, utc("2026-11-27T18:17:15Z"));
        QCOMPARE(record->capsuleSha256, QStringLiteral("5f8e0c1b9a2d4e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7"));
        QCOMPARE(record->jobSpec.value(QStringLiteral("name")).toString(), QStringLiteral("grpo-math"));
        QCOMPARE(record->logs.size(), 1);
        QCOMPARE(record->logs.first().pod, QStringLiteral("grpo-math-k2x7pq-9xq2w"));
        QCOMPARE(record->logs.first().container, QStringLiteral("ray-job-submitter"));
        QCOMPARE(record->logs.first().role, QStringLiteral("submitter"));
        QCOMPARE(record->logs.first().key, QStringLiteral("jobs/k2x7pq/logs/grpo-math-k2x7pq-9xq2w/ray-job-submitter.log"));
        QCOMPARE(record->logs.first().size, 1834);
        QCOMPARE(record->lost, QStringList{QStringLiteral("The logs of pod grpo-math-k2x7pq-fnkk8-head-8x7fv: it was never scheduled (Unschedulable).")});
        QCOMPARE(record->owner, QStringLiteral("alice@lab"));
        QCOMPARE(record->archiveBucket, QStringLiteral("https://s3.lab.example/starforge"));
        QCOMPARE(record->displayState(), QStringLiteral("Archived (Failed)"));
    }

    // Today's code writes exactly the pinned file: same keys, same values, same time format.
    void writesThePinnedKeys()
    {
        const QJsonObject json = golden("status-current.json");
        const auto record = JobRecord::fromJson(json);
        QVERIFY(record);
        const QJsonObject written = record->toJson();
        QCOMPARE(written.keys(), json.keys());
        for (const QString &key : json.keys()) QVERIFY2(written.value(key) == json.value(key), qPrintable(key));
    }

    // A job whose driver log ended with the runner's list of servable checkpoints: the archiver
    // kept it in the record, and today's code reads it and writes it back key for key.
    void readsAndWritesTheServableCheckpoints()
    {
        const QJsonObject json = golden("status-with-checkpoints.json");
        const auto record = JobRecord::fromJson(json);
        QVERIFY2(record, record ? "" : qPrintable(record.error().message));
        QCOMPARE(record->servableCheckpoints.size(), 2);
        QCOMPARE(record->servableCheckpoints.at(0),
                 (ServableCheckpoint{450, QStringLiteral("/starforge/jobs/m4x9tq/checkpoints/step_450/policy/weights/model/consolidated"),
                                     QStringLiteral("/starforge/jobs/m4x9tq/checkpoints/step_450/policy/tokenizer"), QStringLiteral("dtensor_v2"), true,
                                     QString()}));
        QCOMPARE(record->servableCheckpoints.at(1),
                 (ServableCheckpoint{500, QStringLiteral("/starforge/jobs/m4x9tq/checkpoints/step_500/policy/weights/iter_0000000"), QString(),
                                     QStringLiteral("megatron"), false, QStringLiteral("examples/converters/convert_megatron_to_hf.py")}));
        const QJsonObject written = record->toJson();
        QCOMPARE(written.keys(), json.keys());
        for (const QString &key : json.keys()) QVERIFY2(written.value(key) == json.value(key), qPrintable(key));
        // The records without a list: none read, none written.
        const auto current = JobRecord::fromJson(golden("status-current.json"));
        QVERIFY(current && current->servableCheckpoints.isEmpty());
        QVERIFY(!current->toJson().contains(QStringLiteral("servableCheckpoints")));
    }

    void readsAStatusFromBeforeOwners()
    {
        const auto record = JobRecord::fromJson(golden("status-before-owners.json"));
        QVERIFY2(record, record ? "" : qPrintable(record.error().message));
        QCOMPARE(record->id, QStringLiteral("p7q2kx"));
        QCOMPARE(record->state, JobState::Succeeded);
        QCOMPARE(record->started, utc("2026-09-02T09:16:40Z"));
        QCOMPARE(record->logs.size(), 2);
        QCOMPARE(record->logs.at(1).role, QStringLiteral("head"));
        QCOMPARE(record->logs.at(1).size, 903117);
        QVERIFY(record->lost.isEmpty());
        // No owner: nobody's to act on, shown read-only (docs/jobs.md, "Every job is its owner's").
        QVERIFY(record->owner.isEmpty());
        QVERIFY(record->archiveBucket.isEmpty());
        // Written back, it stays without the keys it never had.
        QVERIFY(!record->toJson().contains(QStringLiteral("owner")));
    }

    void refusesAnotherFormat_data()
    {
        QTest::addColumn<QString>("format");
        QTest::addColumn<QString>("message");
        QTest::newRow("newer") << QStringLiteral("starforge-job/2") << QStringLiteral("not a Starforge job record (format is \"starforge-job/2\", expected \"starforge-job/1\")");
        QTest::newRow("none") << QString() << QStringLiteral("not a Starforge job record (format is \"\", expected \"starforge-job/1\")");
    }
    void refusesAnotherFormat()
    {
        QFETCH(QString, format);
        QFETCH(QString, message);
        QJsonObject json = golden("status-current.json");
        if (format.isEmpty()) json.remove(QStringLiteral("format"));
        else json.insert(QStringLiteral("format"), format);
        const auto record = JobRecord::fromJson(json);
        QVERIFY(!record);
        QCOMPARE(record.error().message, message);
    }
};

QTEST_GUILESS_MAIN(TestArchiveFormats)
#include "tst_archiveformats.moc"
