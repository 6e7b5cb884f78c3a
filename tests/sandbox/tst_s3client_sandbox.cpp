// The core's S3 client against the sandbox's S3 endpoint over TLS (its own CA through
// Net::RequestPolicy): objects and paged listings, and what radosgw cannot be made to do on
// demand: part uploads failing with 500 (the s3PartFailureRate fault), retried per part with
// Net::Backoff until the upload completes, or, when they keep failing, the upload aborted.

#include "core/s3/multipartupload.h"
#include "core/s3/s3client.h"
#include "sandbox/sandbox.h"
#include "support/sandboxfixture.h"
#include "support/testutil.h"

#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::S3;
using namespace Starforge::Testing;

namespace {

constexpr qint64 MiB = 1024 * 1024;

std::unique_ptr<S3Reply> wait(S3Reply *raw)
{
    std::unique_ptr<S3Reply> reply(raw);
    (void)QTest::qWaitFor([&] { return reply->isFinished(); }, 60000); // the caller checks the result
    return reply;
}

QByteArray randomBytes(qint64 size, quint32 seed)
{
    QByteArray data(size, Qt::Uninitialized);
    QRandomGenerator random(seed);
    random.fillRange(reinterpret_cast<quint32 *>(data.data()), static_cast<qsizetype>(size / 4));
    return data;
}

} // namespace

class TestS3ClientSandbox : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<SandboxHttp> m_http;
    std::unique_ptr<S3Client> m_client;

    bool setPartFailureRate(double rate)
    {
        const QByteArray body = "{\"s3PartFailureRate\":" + QByteArray::number(rate) + '}';
        return m_http->send("PATCH", QStringLiteral("/sandbox/v1/faults"), body).status == 200;
    }

private Q_SLOTS:
    void initTestCase()
    {
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("cpu:1x0");
        QString error;
        QVERIFY2(startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
        const auto ca = Net::TlsSettings::loadCertificates(m_sandbox->caCertificatePem(), QStringLiteral("the sandbox CA"));
        QVERIFY(ca);
        ClientConfig config;
        config.endpoint = m_sandbox->s3Endpoint();
        config.bucket = QStringLiteral("starforge");
        config.credentials = {m_sandbox->s3AccessKey(), m_sandbox->s3SecretKey(), {}};
        config.policy = Net::RequestPolicy(Net::TlsSettings{*ca, false, Net::ClientIdentity(), QString()}, 30000);
        // Short delays: the retries are what is tested, not the waiting.
        config.backoff = {10, 100, 2.0, 1.0, 120000};
        m_client = std::make_unique<S3Client>(config);
    }

    void cleanupTestCase()
    {
        m_client.reset();
        m_http.reset();
        m_sandbox.reset();
    }

    void objectsAndPaging()
    {
        for (int i = 0; i < 5; ++i) {
            auto put = wait(m_client->putObject(QStringLiteral("page/%1 x").arg(i), QByteArray::number(i)));
            QVERIFY2(put->result(), qPrintable(put->result() ? QString() : put->result().error().message));
        }
        auto all = wait(m_client->listAllObjects(QStringLiteral("page/"), 2));
        QVERIFY(all->result());
        QCOMPARE(all->pages(), 3);
        QCOMPARE(all->listing().objects.size(), 5);
        auto get = wait(m_client->getObject(QStringLiteral("page/3 x")));
        QVERIFY(get->result());
        QCOMPARE(get->data(), QByteArray("3"));
        QVERIFY(wait(m_client->deleteObject(QStringLiteral("page/3 x")))->result());
        QCOMPARE(wait(m_client->headObject(QStringLiteral("page/3 x")))->httpStatus(), 404);
    }

    void partsRetriedUntilDone()
    {
        const QByteArray data = randomBytes(27 * MiB, 27);
        const QString path = m_dir.filePath(QStringLiteral("retry.bin"));
        QVERIFY(writeFile(path, data));
        QVERIFY(setPartFailureRate(0.5));
        MultipartOptions options;
        options.partSize = 5 * MiB;
        options.maxAttempts = 12;
        std::unique_ptr<MultipartUpload> upload(m_client->uploadFile(QStringLiteral("retry.bin"), path, options));
        QVERIFY(QTest::qWaitFor([&] { return upload->isFinished(); }, 120000));
        QVERIFY(setPartFailureRate(0));
        QVERIFY2(upload->result(), qPrintable(upload->result() ? QString() : upload->result().error().message));
        QCOMPARE(upload->partCount(), 6);
        QVERIFY(upload->retries() > 0);
        auto get = wait(m_client->getObject(QStringLiteral("retry.bin")));
        QVERIFY(get->result());
        QVERIFY(get->data() == data);
    }

    void failingPartsAbortTheUpload()
    {
        const QString path = m_dir.filePath(QStringLiteral("fail.bin"));
        QVERIFY(writeFile(path, randomBytes(11 * MiB, 11)));
        QVERIFY(setPartFailureRate(1));
        MultipartOptions options;
        options.partSize = 5 * MiB;
        options.maxAttempts = 2;
        std::unique_ptr<MultipartUpload> upload(m_client->uploadFile(QStringLiteral("fail.bin"), path, options));
        QVERIFY(QTest::qWaitFor([&] { return upload->isFinished(); }, 120000));
        QVERIFY(setPartFailureRate(0));
        QVERIFY(!upload->result());
        const QString text = upload->result().error().message;
        QVERIFY2(text.startsWith(QLatin1String("Part ")) && text.contains(QLatin1String("HTTP 500")), qPrintable(text));
        QVERIFY(upload->retries() >= 1);
        // Aborted on the server: its parts are gone.
        auto parts = wait(m_client->listParts(QStringLiteral("fail.bin"), upload->uploadId()));
        QCOMPARE(parts->httpStatus(), 404);
        QCOMPARE(parts->s3ErrorCode(), QStringLiteral("NoSuchUpload"));
    }
};

QTEST_GUILESS_MAIN(TestS3ClientSandbox)
#include "tst_s3client_sandbox.moc"
