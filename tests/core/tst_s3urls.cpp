// Where the S3 client sends a request and what it signs, in both addressing styles, without a
// server: the virtual-hosted presigned GET must equal the AWS documentation's example byte for
// byte (tests/data/sigv4/s3-examples.json), and path style must put the bucket in the path with
// the same signing rules.

#include "core/s3/s3client.h"
#include "support/testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <QUrlQuery>

using namespace Starforge;
using namespace Starforge::S3;

namespace {

QJsonObject documentedCase(const QString &name)
{
    const QJsonDocument doc = QJsonDocument::fromJson(Testing::readAll(Testing::dataPath(QStringLiteral("sigv4/s3-examples.json"))));
    const QJsonArray cases = doc.isArray() ? doc.array() : doc.object().value(QLatin1String("cases")).toArray();
    for (const QJsonValue &c : cases) {
        if (c.toObject().value(QLatin1String("name")).toString() == name) return c.toObject();
    }
    return {};
}

ClientConfig awsExample(bool pathStyle)
{
    ClientConfig config;
    config.endpoint = QUrl(QStringLiteral("https://s3.amazonaws.com"));
    config.bucket = QStringLiteral("examplebucket");
    config.pathStyle = pathStyle;
    // The documentation's example keys (not secrets).
    config.credentials.accessKeyId = "AKIAIOSFODNN7EXAMPLE";
    config.credentials.secretAccessKey = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    return config;
}

const QDateTime ExampleTime(QDate(2013, 5, 24), QTime(0, 0), Qt::UTC);

} // namespace

class TestS3Urls : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void virtualHostedPresignedGetIsTheDocumentedOne()
    {
        const QJsonObject expected = documentedCase(QStringLiteral("s3-presigned-get"));
        QVERIFY(!expected.isEmpty());
        S3Client client(awsExample(false));
        const auto url = client.presignedGetUrl(QStringLiteral("test.txt"), 86400, ExampleTime);
        QVERIFY2(url, url ? "" : qPrintable(url.error().message));
        QCOMPARE(url->toEncoded(), expected.value(QLatin1String("presigned_url")).toString().toLatin1());
    }

    void pathStyleKeepsTheBucketInThePath()
    {
        S3Client client(awsExample(true));
        const auto url = client.presignedGetUrl(QStringLiteral("dir/a b+c.txt"), 3600, ExampleTime);
        QVERIFY(url);
        QCOMPARE(url->host(), QStringLiteral("s3.amazonaws.com"));
        QCOMPARE(url->path(QUrl::FullyEncoded), QStringLiteral("/examplebucket/dir/a%20b%2Bc.txt"));
        const QUrlQuery query(*url);
        QCOMPARE(query.queryItemValue(QStringLiteral("X-Amz-Expires")), QStringLiteral("3600"));
        QCOMPARE(query.queryItemValue(QStringLiteral("X-Amz-SignedHeaders")), QStringLiteral("host"));
        // Another style is another canonical request: the signatures differ.
        S3Client virtualHosted(awsExample(false));
        const auto other = virtualHosted.presignedGetUrl(QStringLiteral("dir/a b+c.txt"), 3600, ExampleTime);
        QVERIFY(QUrlQuery(*other).queryItemValue(QStringLiteral("X-Amz-Signature")) != query.queryItemValue(QStringLiteral("X-Amz-Signature")));
        QCOMPARE(other->host(), QStringLiteral("examplebucket.s3.amazonaws.com"));
        QCOMPARE(other->path(QUrl::FullyEncoded), QStringLiteral("/dir/a%20b%2Bc.txt"));
    }

    void endpointPortAndPrefixAreKept()
    {
        ClientConfig config = awsExample(true);
        config.endpoint = QUrl(QStringLiteral("http://127.0.0.1:7480/gateway/"));
        S3Client client(config);
        const auto url = client.presignedGetUrl(QStringLiteral("k"), 60, ExampleTime);
        QVERIFY(url);
        QCOMPARE(url->port(), 7480);
        QCOMPARE(url->path(), QStringLiteral("/gateway/examplebucket/k"));
        QVERIFY(!client.presignedGetUrl(QStringLiteral("k"), 8 * 24 * 3600, ExampleTime));   // beyond S3's 7 days
    }
};

QTEST_GUILESS_MAIN(TestS3Urls)
#include "tst_s3urls.moc"
