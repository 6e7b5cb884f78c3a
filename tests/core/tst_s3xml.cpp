// The S3 XML parsers on answers in radosgw's and AWS's shapes, and on hostile bytes (truncation,
// DTD entity bombs, deep nesting, wrong roots, binary noise): errors, never crashes. Also the
// error sentences: each names what to fix.

#include "core/s3/s3errors.h"
#include "core/s3/s3xml.h"
#include "support/testutil.h"

#include <QRandomGenerator>
#include <QTest>

using namespace Starforge;
using namespace Starforge::S3;
using namespace Starforge::Testing;

namespace {

QByteArray fixture(const char *name)
{
    return readAll(dataPath(QStringLiteral("s3/") + QLatin1String(name)));
}

} // namespace

class TestS3Xml : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void errorDocuments()
    {
        const auto signature = Xml::parseError(fixture("error-signature.xml"));
        QVERIFY(signature);
        QCOMPARE(signature->code, QStringLiteral("SignatureDoesNotMatch"));
        QCOMPARE(signature->bucketName, QStringLiteral("starforge"));
        QVERIFY(signature->requestId.startsWith(QLatin1String("tx0000")));
        const auto noKey = Xml::parseError(fixture("error-nosuchkey.xml"));
        QVERIFY(noKey);
        QCOMPARE(noKey->code, QStringLiteral("NoSuchKey"));
        QCOMPARE(noKey->key, QStringLiteral("capsules/a b.zip"));
        QCOMPARE(noKey->message, QStringLiteral("The specified key does not exist."));
        // Not an error document: no code, another root, nothing at all.
        QVERIFY(!Xml::parseError("<Error><Message>x</Message></Error>"));
        QVERIFY(!Xml::parseError(fixture("initiate.xml")));
        QVERIFY(!Xml::parseError(QByteArray()));
        QVERIFY(!Xml::parseError("<html><body>502 Bad Gateway</body></html>"));
    }

    void listObjects()
    {
        const auto page = Xml::parseListObjectsV2(fixture("list-page1.xml"));
        QVERIFY2(page, page ? "" : qPrintable(page.error().message));
        QCOMPARE(page->objects.size(), 2);
        QCOMPARE(page->objects[0].key, QStringLiteral("logs/a.txt"));
        QCOMPARE(page->objects[0].size, 1);
        QCOMPARE(page->objects[0].etag, QByteArray("\"0cc175b9c0f1b6a831c399e269772661\""));
        QCOMPARE(page->objects[0].lastModified, QDateTime(QDate(2026, 12, 3), QTime(9, 40, 1, 123), Qt::UTC));
        QCOMPARE(page->objects[1].key, QStringLiteral("logs/b & c.txt"));
        QCOMPARE(page->objects[1].size, 1048576);
        QVERIFY(page->truncated);
        QCOMPARE(page->nextContinuationToken, QStringLiteral("1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM="));
        QCOMPARE(page->keyCount, 2);

        const auto last = Xml::parseListObjectsV2(fixture("list-last.xml"));
        QVERIFY(last);
        QVERIFY(!last->truncated);
        QVERIFY(last->objects.isEmpty());
        QCOMPARE(last->commonPrefixes, (QStringList{QStringLiteral("jobs/"), QStringLiteral("capsules/")}));
    }

    void listObjectsRejectsInconsistentPages()
    {
        // Truncated without a token would make a pager fetch page one forever.
        QVERIFY(!Xml::parseListObjectsV2("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>"));
        QVERIFY(!Xml::parseListObjectsV2("<ListBucketResult><Contents><Key>a</Key><Size>-1</Size></Contents></ListBucketResult>"));
        QVERIFY(!Xml::parseListObjectsV2("<ListBucketResult><Contents><Key>a</Key><Size>x</Size></Contents></ListBucketResult>"));
        QVERIFY(!Xml::parseListObjectsV2("<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>"));
        const auto wrongRoot = Xml::parseListObjectsV2(fixture("error-nosuchkey.xml"));
        QVERIFY(!wrongRoot);
        QVERIFY(wrongRoot.error().message.contains(QLatin1String("<Error> instead of <ListBucketResult>")));
    }

    void listParts()
    {
        const auto page = Xml::parseListParts(fixture("listparts.xml"));
        QVERIFY2(page, page ? "" : qPrintable(page.error().message));
        QCOMPARE(page->uploadId, QStringLiteral("2~Fz9Kx0aQpE3vUu5yR1lH8Lh6cYQk2Ww"));
        QCOMPARE(page->parts.size(), 2);
        QCOMPARE(page->parts[1].partNumber, 2);
        QCOMPARE(page->parts[1].size, 5242880);
        QCOMPARE(page->parts[1].etag, QByteArray("\"5f363e0e58a95f06cbe9bbc662c5dfb6\""));
        QVERIFY(page->truncated);
        QCOMPARE(page->nextPartNumberMarker, 2);
        QVERIFY(!Xml::parseListParts("<ListPartsResult><Part><PartNumber>0</PartNumber><Size>1</Size></Part></ListPartsResult>"));
        QVERIFY(!Xml::parseListParts("<ListPartsResult><Part><PartNumber>10001</PartNumber><Size>1</Size></Part></ListPartsResult>"));
        QVERIFY(!Xml::parseListParts("<ListPartsResult><IsTruncated>true</IsTruncated></ListPartsResult>"));
    }

    void uploads()
    {
        const auto page = Xml::parseListMultipartUploads(fixture("uploads.xml"));
        QVERIFY(page);
        QCOMPARE(page->uploads.size(), 1);
        QCOMPARE(page->uploads[0].key, QStringLiteral("big.bin"));
        QCOMPARE(page->uploads[0].uploadId, QStringLiteral("2~abc"));
        QVERIFY(page->uploads[0].initiated.isValid());
        QVERIFY(!page->truncated);
        QVERIFY(!Xml::parseListMultipartUploads("<ListMultipartUploadsResult><Upload><Key>k</Key></Upload></ListMultipartUploadsResult>"));
    }

    void initiateAndComplete()
    {
        const auto id = Xml::parseInitiateMultipartUpload(fixture("initiate.xml"));
        QVERIFY(id);
        QCOMPARE(*id, QStringLiteral("2~Fz9Kx0aQpE3vUu5yR1lH8Lh6cYQk2Ww"));
        QVERIFY(!Xml::parseInitiateMultipartUpload("<InitiateMultipartUploadResult><UploadId> </UploadId></InitiateMultipartUploadResult>"));

        // radosgw's empty ETag is a success.
        const auto complete = Xml::parseCompleteMultipartUpload(fixture("complete-radosgw.xml"));
        QVERIFY(complete);
        QVERIFY(!complete->error);
        QVERIFY(complete->etag.isEmpty());
        QCOMPARE(complete->location, QStringLiteral("127.0.0.1/starforge/big.bin"));
        // A 200 carrying <Error>.
        const auto failed = Xml::parseCompleteMultipartUpload(fixture("complete-error.xml"));
        QVERIFY(failed);
        QVERIFY(failed->error);
        QCOMPARE(failed->error->code, QStringLiteral("InternalError"));
    }

    void completeBodyRoundTrip()
    {
        const QList<PartInfo> parts{{1, 5, "\"aa\""}, {2, 3, "\"b&<\""}};
        const QByteArray body = Xml::completeMultipartUploadBody(parts);
        QVERIFY(body.contains("<PartNumber>1</PartNumber><ETag>&quot;aa&quot;</ETag>"));
        QVERIFY(body.contains("&amp;&lt;")); // escaped, so a hostile ETag cannot inject elements
        QVERIFY(body.contains("xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\""));
    }

    void hostileInput_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::newRow("empty") << QByteArray();
        QTest::newRow("text") << QByteArray("not xml at all");
        QTest::newRow("truncated") << fixture("list-page1.xml").left(200);
        QTest::newRow("unclosed") << QByteArray("<ListBucketResult><Contents><Key>a");
        QTest::newRow("mismatched") << QByteArray("<ListBucketResult><Key></Size></ListBucketResult>");
        QTest::newRow("two roots") << QByteArray("<Error><Code>A</Code></Error><Error><Code>B</Code></Error>");
        QTest::newRow("billion laughs") << QByteArray(
            "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;\">"
            "<!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">]><Error><Code>&lol3;</Code></Error>");
        QTest::newRow("external entity") << QByteArray(
            "<?xml version=\"1.0\"?><!DOCTYPE e [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><Error><Code>&x;</Code></Error>");
        QTest::newRow("deep") << (QByteArray("<a>").repeated(100000) + QByteArray("</a>").repeated(100000));
        QTest::newRow("wide") << (QByteArray("<ListBucketResult>") + QByteArray("<Contents/>").repeated(300000)
                                  + QByteArray("</ListBucketResult>"));
        QTest::newRow("nul bytes") << QByteArray("<Error>\0<Code>X</Code></Error>", 30);
        QTest::newRow("bad utf8") << QByteArray("<Error><Code>\xff\xfe</Code></Error>");
        QByteArray noise(64 * 1024, Qt::Uninitialized);
        QRandomGenerator random(42);
        for (char &c : noise) {
            c = static_cast<char>(random.bounded(256));
        }
        QTest::newRow("noise") << noise;
        QTest::newRow("noise after root") << (QByteArray("<Error><Code>X</Code>") + noise);
        QTest::newRow("huge number") << QByteArray("<ListPartsResult><Part><PartNumber>99999999999999999999</PartNumber>"
                                                   "<Size>1</Size></Part></ListPartsResult>");
    }

    void hostileInput()
    {
        QFETCH(QByteArray, bytes);
        // Each parser must return (an error, mostly) and never crash or hang.
        const auto error = Xml::parseError(bytes);
        if (error) {
            QVERIFY(!error->code.isEmpty());
        }
        QVERIFY(!Xml::parseListObjectsV2(bytes));
        QVERIFY(!Xml::parseListParts(bytes));
        QVERIFY(!Xml::parseListMultipartUploads(bytes));
        QVERIFY(!Xml::parseInitiateMultipartUpload(bytes));
        const auto complete = Xml::parseCompleteMultipartUpload(bytes);
        if (complete) {
            QVERIFY(complete->error); // only an <Error> document may be "readable" here
        }
    }

    void dtdIsRefused()
    {
        const auto page = Xml::parseListObjectsV2(
            "<!DOCTYPE ListBucketResult [<!ENTITY e \"x\">]><ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>");
        QVERIFY(!page);
        QVERIFY(page.error().message.contains(QLatin1String("DTD")));
    }

    void errorSentences_data()
    {
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("code");
        QTest::addColumn<int>("kind");
        QTest::addColumn<QStringList>("mentions");
        const auto k = [](Error::Code c) { return static_cast<int>(c); };
        QTest::newRow("wrong access key") << 403 << QStringLiteral("InvalidAccessKeyId") << k(Error::Code::Invalid)
                                          << QStringList{QStringLiteral("AKIDEXAMPLE"), QStringLiteral("FORGE_S3_ACCESS_KEY")};
        QTest::newRow("wrong secret") << 403 << QStringLiteral("SignatureDoesNotMatch") << k(Error::Code::Invalid)
                                      << QStringList{QStringLiteral("secret key"), QStringLiteral("FORGE_S3_SECRET_KEY")};
        QTest::newRow("clock") << 403 << QStringLiteral("RequestTimeTooSkewed") << k(Error::Code::Invalid)
                               << QStringList{QStringLiteral("clock"), QStringLiteral("15 minutes")};
        QTest::newRow("bucket") << 404 << QStringLiteral("NoSuchBucket") << k(Error::Code::NotFound)
                                << QStringList{QStringLiteral("starforge-data"), QStringLiteral("FORGE_S3_BUCKET"), QStringLiteral("Create")};
        QTest::newRow("key") << 404 << QStringLiteral("NoSuchKey") << k(Error::Code::NotFound)
                             << QStringList{QStringLiteral("capsules/x.zip"), QStringLiteral("does not exist")};
        QTest::newRow("head 404") << 404 << QString() << k(Error::Code::NotFound) << QStringList{QStringLiteral("capsules/x.zip")};
        QTest::newRow("denied") << 403 << QStringLiteral("AccessDenied") << k(Error::Code::Invalid)
                                << QStringList{QStringLiteral("denied"), QStringLiteral("AKIDEXAMPLE")};
        QTest::newRow("sha256") << 400 << QStringLiteral("XAmzContentSHA256Mismatch") << k(Error::Code::Io)
                                << QStringList{QStringLiteral("corrupted in transit")};
        QTest::newRow("md5") << 400 << QStringLiteral("BadDigest") << k(Error::Code::Io) << QStringList{QStringLiteral("corrupted")};
        QTest::newRow("too small") << 400 << QStringLiteral("EntityTooSmall") << k(Error::Code::Invalid)
                                   << QStringList{QStringLiteral("5 MiB")};
        QTest::newRow("invalid part") << 400 << QStringLiteral("InvalidPart") << k(Error::Code::Io)
                                      << QStringList{QStringLiteral("ETag"), QStringLiteral("again")};
        QTest::newRow("5xx") << 503 << QString() << k(Error::Code::Unavailable) << QStringList{QStringLiteral("HTTP 503")};
        QTest::newRow("other") << 400 << QStringLiteral("InvalidArgument") << k(Error::Code::Invalid)
                               << QStringList{QStringLiteral("InvalidArgument"), QStringLiteral("HTTP 400")};
    }

    void errorSentences()
    {
        QFETCH(int, status);
        QFETCH(QString, code);
        QFETCH(int, kind);
        QFETCH(QStringList, mentions);
        std::optional<ErrorDocument> document;
        if (!code.isEmpty()) {
            document = ErrorDocument{code, QStringLiteral("server text"), {}, {}, {}, {}};
        }
        const ErrorContext context{QStringLiteral("s3.example.com:7480"), QStringLiteral("starforge-data"),
                                   QStringLiteral("capsules/x.zip"), QStringLiteral("AKIDEXAMPLE")};
        const Error error = describeS3Error(status, document, context);
        QCOMPARE(static_cast<int>(error.code), kind);
        for (const QString &mention : mentions) {
            QVERIFY2(error.message.contains(mention), qPrintable(error.message));
        }
        QVERIFY2(error.message.endsWith(QLatin1Char('.')) || error.message.endsWith(QLatin1Char(')')), qPrintable(error.message));
    }
};

QTEST_GUILESS_MAIN(TestS3Xml)
#include "tst_s3xml.moc"
