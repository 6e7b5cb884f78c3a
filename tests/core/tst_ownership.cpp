// Whose a job is (core/job/ownership.h): owner names as label values, bucket addresses, the
// ownership of a record for a viewer, and the shape a RayJob must have to be followed.

#include "core/job/ownership.h"
#include "core/job/rayjobbuilder.h"

#include <QRegularExpression>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Job;

class TestOwnership : public QObject
{
    Q_OBJECT

    static QJsonObject rayJob(const QString &name, const QString &jobName, const QString &id)
    {
        return QJsonObject{{QStringLiteral("metadata"),
                            QJsonObject{{QStringLiteral("name"), name},
                                        {QStringLiteral("labels"), QJsonObject{{QLatin1String(Labels::ManagedBy), QLatin1String(Labels::ManagedByValue)},
                                                                               {QLatin1String(Labels::JobId), id},
                                                                               {QLatin1String(Labels::JobName), jobName}}}}}};
    }

private Q_SLOTS:
    void labelValues_data()
    {
        QTest::addColumn<QString>("owner");
        QTest::addColumn<QString>("prefix");
        QTest::newRow("plain") << QStringLiteral("alice") << QStringLiteral("alice.");
        QTest::newRow("email") << QStringLiteral("alice@lab.example") << QStringLiteral("alice-lab.example.");
        QTest::newRow("service account") << QStringLiteral("system:serviceaccount:ml:trainer") << QStringLiteral("system-serviceaccount-ml-trainer.");
        QTest::newRow("oidc url") << QStringLiteral("https://idp.example/#bob") << QStringLiteral("https-idp.example-bob.");
        QTest::newRow("nothing safe") << QStringLiteral("@@@") << QString();
        QTest::newRow("unicode") << QStringLiteral("zoë") << QStringLiteral("zo.");
        QTest::newRow("very long") << QStringLiteral("x").repeated(300) << QStringLiteral("x").repeated(52) + u'.';
    }
    void labelValues()
    {
        QFETCH(QString, owner);
        QFETCH(QString, prefix);
        const QString value = ownerLabelValue(owner);
        // Kubernetes' rule for label values.
        static const QRegularExpression valid(QStringLiteral("^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"));
        QVERIFY2(valid.match(value).hasMatch() && value.size() <= 63 && !value.isEmpty(), qPrintable(value));
        QVERIFY2(value.startsWith(prefix), qPrintable(value));
        QCOMPARE(ownerLabelValue(owner), value);   // stable
    }

    void namesThatLookAlikeStayApart()
    {
        QVERIFY(ownerLabelValue(QStringLiteral("alice@lab")) != ownerLabelValue(QStringLiteral("alice-lab")));
        QVERIFY(ownerLabelValue(QStringLiteral("x").repeated(300)) != ownerLabelValue(QStringLiteral("x").repeated(301)));
    }

    void bucketAddresses()
    {
        QCOMPARE(archiveBucketAddress(QUrl(QStringLiteral("https://S3.Lab.example")), QStringLiteral("rl")), QStringLiteral("s3.lab.example/rl"));
        QCOMPARE(archiveBucketAddress(QUrl(QStringLiteral("https://s3.lab.example:443/")), QStringLiteral("rl")), QStringLiteral("s3.lab.example/rl"));
        QCOMPARE(archiveBucketAddress(QUrl(QStringLiteral("http://127.0.0.1:7480")), QStringLiteral("rl")), QStringLiteral("127.0.0.1:7480/rl"));
        QCOMPARE(archiveBucketAddress(QUrl(QStringLiteral("https://s3.example:9000")), QStringLiteral("rl")), QStringLiteral("s3.example:9000/rl"));
        QVERIFY(archiveBucketAddress(QUrl(QStringLiteral("https://s3.example")), QString()).isEmpty());
    }

    void ownershipForAViewer()
    {
        const Viewer alice{QStringLiteral("alice"), QStringLiteral("s3/rl")};
        JobRecord record;
        record.id = QStringLiteral("k2x7pq");
        QCOMPARE(ownershipOf(record, alice), Ownership::Unowned);
        record.owner = QStringLiteral("bob");
        QCOMPARE(ownershipOf(record, alice), Ownership::Others);
        QVERIFY(notYours(record, Ownership::Others, QStringLiteral("stop")).message.contains(QStringLiteral("belongs to bob")));
        record.owner = QStringLiteral("alice");
        QCOMPARE(ownershipOf(record, alice), Ownership::Mine);   // no bucket recorded
        record.archiveBucket = QStringLiteral("s3/rl");
        QCOMPARE(ownershipOf(record, alice), Ownership::Mine);
        record.archiveBucket = QStringLiteral("other/rl");
        QCOMPARE(ownershipOf(record, alice), Ownership::OtherBucket);
        QVERIFY(notYours(record, Ownership::OtherBucket, QStringLiteral("archive")).message.contains(QStringLiteral("other/rl")));
        QVERIFY(!actsOn(Ownership::OtherBucket) && !actsOn(Ownership::Others) && !actsOn(Ownership::Unowned) && actsOn(Ownership::Mine));
        // Owner names are compared exactly: a viewer with no name owns nothing.
        record.archiveBucket.clear();
        QCOMPARE(ownershipOf(record, Viewer{QStringLiteral("Alice"), {}}), Ownership::Others);
    }

    void jobIdentity()
    {
        QVERIFY(checkJobIdentity(rayJob(QStringLiteral("grpo-k2x7pq"), QStringLiteral("grpo"), QStringLiteral("k2x7pq"))));
        const auto renamed = checkJobIdentity(rayJob(QStringLiteral("evil-k2x7pq"), QStringLiteral("grpo"), QStringLiteral("k2x7pq")));
        QVERIFY(!renamed);
        QVERIFY2(renamed.error().message.contains(QStringLiteral("grpo-k2x7pq")), qPrintable(renamed.error().message));
        QVERIFY(!checkJobIdentity(rayJob(QStringLiteral("grpo-aaaaaa"), QStringLiteral("grpo"), QStringLiteral("aaaaaa"))));   // vowels: not the app's alphabet
        QVERIFY(!checkJobIdentity(rayJob(QStringLiteral("grpo-"), QStringLiteral("grpo"), QString())));
        QVERIFY(!checkJobIdentity(rayJob(QStringLiteral("-k2x7pq"), QString(), QStringLiteral("k2x7pq"))));
    }
};

QTEST_GUILESS_MAIN(TestOwnership)
#include "tst_ownership.moc"
