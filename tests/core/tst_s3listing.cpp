// Paging against a server that misbehaves: one that hands back an earlier continuation token
// or upload-listing markers (A, B, A, ...) or none while it still says the list is truncated.
// The client must stop with an error instead of listing for ever. And answers larger than the
// client holds in memory: refused with a sentence, while the same object downloaded to a file
// arrives whole. A plain local HTTP server plays the broken store: neither radosgw nor the
// sandbox can be made to answer like this.

#include "core/s3/s3client.h"

#include <QFile>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTcpSocket>
#include <QTest>
#include <QUrlQuery>

using namespace Starforge;

class TestS3Listing : public QObject
{
    Q_OBJECT

    // Answers every request with the next page of tokens; counts the requests.
    struct BrokenStore
    {
        QTcpServer server;
        QStringList tokens;   // NextContinuationToken per page ("" for none); truncated while pages remain
        int requests = 0;
        bool truncatedAtEnd = true;
        QByteArray object;    // the body of any other GET
    };

    static QByteArray listObjectsPage(const QString &token, int page)
    {
        return QStringLiteral("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
                              "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                              "<Name>b</Name><Prefix>jobs/</Prefix><KeyCount>1</KeyCount><MaxKeys>1</MaxKeys>"
                              "<IsTruncated>true</IsTruncated>%1"
                              "<Contents><Key>jobs/k%2</Key><Size>1</Size><ETag>\"x\"</ETag></Contents>"
                              "</ListBucketResult>")
            .arg(token.isEmpty() ? QString() : QStringLiteral("<NextContinuationToken>%1</NextContinuationToken>").arg(token))
            .arg(page)
            .toUtf8();
    }

    static QByteArray listUploadsPage(const QString &marker, int page)
    {
        return QStringLiteral("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
                              "<ListMultipartUploadsResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                              "<Bucket>b</Bucket><IsTruncated>true</IsTruncated>"
                              "<NextKeyMarker>jobs/%1</NextKeyMarker><NextUploadIdMarker>u%1</NextUploadIdMarker>"
                              "<Upload><Key>jobs/k%2</Key><UploadId>id%2</UploadId><Initiated>2026-12-01T10:00:00.000Z</Initiated></Upload>"
                              "</ListMultipartUploadsResult>")
            .arg(marker)
            .arg(page)
            .toUtf8();
    }

    static void serve(BrokenStore &store)
    {
        QObject::connect(&store.server, &QTcpServer::newConnection, &store.server, [&store] {
            while (QTcpSocket *socket = store.server.nextPendingConnection()) {
                auto *buffer = new QByteArray;
                QObject::connect(socket, &QObject::destroyed, socket, [buffer] { delete buffer; });
                QObject::connect(socket, &QTcpSocket::readyRead, socket, [&store, socket, buffer] {
                    buffer->append(socket->readAll());
                    while (buffer->contains("\r\n\r\n")) {
                        const QByteArray requestLine = buffer->left(buffer->indexOf("\r\n"));
                        buffer->remove(0, buffer->indexOf("\r\n\r\n") + 4);
                        QByteArray body;
                        if (requestLine.contains("list-type=2") || requestLine.contains("?uploads")) {
                            const int page = store.requests++;
                            const QString token = store.tokens.value(page % qMax(1, store.tokens.size()));
                            body = requestLine.contains("?uploads") ? listUploadsPage(token, page) : listObjectsPage(token, page);
                        } else {
                            body = store.object;
                        }
                        socket->write("HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body);
                    }
                });
            }
        });
    }

    static S3::ClientConfig clientConfig(quint16 port)
    {
        S3::ClientConfig config;
        config.endpoint = QUrl(QStringLiteral("http://127.0.0.1:%1").arg(port));
        config.bucket = QStringLiteral("b");
        config.credentials.accessKeyId = "AKIDEXAMPLE";
        config.credentials.secretAccessKey = "secret";
        return config;
    }

    // Waits for reply (owned by its client) to finish.
    static Result<void> outcome(S3::S3Reply *reply)
    {
        bool done = false;
        QObject::connect(reply, &S3::S3Reply::finished, reply, [&done] { done = true; });
        if (!QTest::qWaitFor([&done] { return done; }, 10000)) return Error::internal(QStringLiteral("the listing did not end"));
        return reply->result();
    }

    static Result<void> listAll(quint16 port)
    {
        S3::S3Client client(clientConfig(port));
        return outcome(client.listAllObjects(QStringLiteral("jobs/"), 1));
    }

private Q_SLOTS:
    void alternatingTokensStop()
    {
        BrokenStore store;
        store.tokens = {QStringLiteral("A"), QStringLiteral("B")};   // A, B, A, B, ...
        serve(store);
        QVERIFY(store.server.listen(QHostAddress::LocalHost));
        const auto listed = listAll(store.server.serverPort());
        QVERIFY(!listed);
        QVERIFY2(listed.error().message.contains(QStringLiteral("does not end")), qPrintable(listed.error().message));
        QVERIFY2(listed.error().message.contains(QStringLiteral("a continuation token it had given before")), qPrintable(listed.error().message));
        QCOMPARE(store.requests, 3);   // A, B, then A again: stopped there
    }

    void truncatedWithoutATokenStops()
    {
        BrokenStore store;
        store.tokens = {QString()};
        serve(store);
        QVERIFY(store.server.listen(QHostAddress::LocalHost));
        const auto listed = listAll(store.server.serverPort());
        QVERIFY(!listed);
        QVERIFY2(listed.error().message.contains(QStringLiteral("without NextContinuationToken")), qPrintable(listed.error().message));
        QCOMPARE(store.requests, 1);
    }

    void alternatingUploadMarkersStop()
    {
        BrokenStore store;
        store.tokens = {QStringLiteral("A"), QStringLiteral("B")};   // markers A, B, A, B, ...
        serve(store);
        QVERIFY(store.server.listen(QHostAddress::LocalHost));
        S3::S3Client client(clientConfig(store.server.serverPort()));
        const auto listed = outcome(client.listMultipartUploads(QStringLiteral("jobs/")));
        QVERIFY(!listed);
        QVERIFY2(listed.error().message.contains(QStringLiteral("does not end")), qPrintable(listed.error().message));
        QVERIFY2(listed.error().message.contains(QStringLiteral("markers it had given before")), qPrintable(listed.error().message));
        QCOMPARE(store.requests, 3);   // A, B, then A again: stopped there
    }

    void answerLargerThanTheBoundIsRefusedButDownloadsToAFile()
    {
        BrokenStore store;
        store.object = QByteArray(3 * 1024 * 1024 + 17, 'x');
        serve(store);
        QVERIFY(store.server.listen(QHostAddress::LocalHost));
        S3::ClientConfig config = clientConfig(store.server.serverPort());
        config.maxBodyBytes = 1024 * 1024;
        S3::S3Client client(config);

        S3::S3Reply *inMemory = client.getObject(QStringLiteral("jobs/big.log"));
        const auto got = outcome(inMemory);
        QVERIFY(!got);
        QVERIFY2(got.error().message.contains(QStringLiteral("larger than 1 MiB")), qPrintable(got.error().message));
        QCOMPARE(inMemory->attempts(), 1);   // not a transient failure: asked once
        QVERIFY(inMemory->data().isEmpty());

        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("big.log"));
        std::optional<Result<qint64>> written;
        client.downloadObject(QStringLiteral("jobs/big.log"), path, &client, [&written](Result<qint64> r) { written = std::move(r); });
        QVERIFY(QTest::qWaitFor([&written] { return written.has_value(); }, 10000));
        QVERIFY2(*written, *written ? "" : qPrintable(written->error().message));
        QCOMPARE(**written, store.object.size());
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll(), store.object);
    }
};

QTEST_GUILESS_MAIN(TestS3Listing)
#include "tst_s3listing.moc"
