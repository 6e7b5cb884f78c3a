// ListObjectsV2 paging against a server that misbehaves: one that hands back an earlier
// continuation token (A, B, A, ...) or none while it still says the list is truncated. The
// client must stop with an error instead of listing for ever. A plain local HTTP server plays
// the broken store: neither radosgw nor the sandbox can be made to answer like this.

#include "core/s3/s3client.h"

#include <QTcpServer>
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
    };

    static void serve(BrokenStore &store)
    {
        QObject::connect(&store.server, &QTcpServer::newConnection, &store.server, [&store] {
            while (QTcpSocket *socket = store.server.nextPendingConnection()) {
                auto *buffer = new QByteArray;
                QObject::connect(socket, &QObject::destroyed, socket, [buffer] { delete buffer; });
                QObject::connect(socket, &QTcpSocket::readyRead, socket, [&store, socket, buffer] {
                    buffer->append(socket->readAll());
                    while (buffer->contains("\r\n\r\n")) {
                        buffer->remove(0, buffer->indexOf("\r\n\r\n") + 4);
                        const int page = store.requests++;
                        const QString token = store.tokens.value(page % qMax(1, store.tokens.size()));
                        const QByteArray body = QStringLiteral("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
                                                               "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                                                               "<Name>b</Name><Prefix>jobs/</Prefix><KeyCount>1</KeyCount><MaxKeys>1</MaxKeys>"
                                                               "<IsTruncated>true</IsTruncated>%1"
                                                               "<Contents><Key>jobs/k%2</Key><Size>1</Size><ETag>\"x\"</ETag></Contents>"
                                                               "</ListBucketResult>")
                                                    .arg(token.isEmpty() ? QString() : QStringLiteral("<NextContinuationToken>%1</NextContinuationToken>").arg(token))
                                                    .arg(page)
                                                    .toUtf8();
                        socket->write("HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body);
                    }
                });
            }
        });
    }

    static Result<void> listAll(quint16 port)
    {
        S3::ClientConfig config;
        config.endpoint = QUrl(QStringLiteral("http://127.0.0.1:%1").arg(port));
        config.bucket = QStringLiteral("b");
        config.credentials.accessKeyId = "AKIDEXAMPLE";
        config.credentials.secretAccessKey = "secret";
        S3::S3Client client(config);
        S3::S3Reply *reply = client.listAllObjects(QStringLiteral("jobs/"), 1);
        bool done = false;
        QObject::connect(reply, &S3::S3Reply::finished, reply, [&done] { done = true; });
        if (!QTest::qWaitFor([&done] { return done; }, 10000)) return Error::internal(QStringLiteral("the listing did not end"));
        return reply->result();
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
};

QTEST_GUILESS_MAIN(TestS3Listing)
#include "tst_s3listing.moc"
