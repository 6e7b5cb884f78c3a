// The S3 client against a real Ceph radosgw (started by scripts/lib/with-radosgw.sh around this
// executable): objects with awkward keys, ListObjectsV2 paging, a 64 MiB multipart upload checked
// byte for byte and by its "-N" ETag, resume by ListParts, cancel leaving no upload, a presigned
// GET fetched by curl, and the errors a user meets (wrong keys, missing bucket, skewed clock,
// corrupted payloads, S3's multipart rules, a refused connection) as sentences.

#include "core/config/effectiveconfig.h"
#include "core/crypto/digest.h"
#include "core/s3/multipartupload.h"
#include "core/s3/s3client.h"
#include "core/session/startupcleanup.h"
#include "support/testutil.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <memory>
#include <optional>

using namespace Starforge;
using namespace Starforge::S3;
using namespace Starforge::Testing;

namespace {

constexpr qint64 MiB = 1024 * 1024;

// Waits for a reply (generously: radosgw on a loaded 2-core machine) and owns it afterwards.
std::unique_ptr<S3Reply> wait(S3Reply *raw)
{
    std::unique_ptr<S3Reply> reply(raw);
    (void)QTest::qWaitFor([&] { return reply->isFinished(); }, 120000); // the caller checks isFinished()
    return reply;
}

bool wait(MultipartUpload *upload)
{
    return QTest::qWaitFor([&] { return upload->isFinished(); }, 180000);
}

QByteArray randomBytes(qint64 size, quint32 seed)
{
    QByteArray data(size, Qt::Uninitialized);
    QRandomGenerator random(seed);
    random.fillRange(reinterpret_cast<quint32 *>(data.data()), static_cast<qsizetype>(size / 4));
    return data;
}

// S3's multipart ETag: the MD5 of the parts' binary MD5s, then "-" and the number of parts.
QByteArray multipartEtag(const QByteArray &data, qint64 partSize)
{
    QByteArray md5s;
    int parts = 0;
    for (qint64 offset = 0; offset < data.size(); offset += partSize, ++parts) {
        md5s += Crypto::Digest::md5(data.mid(offset, partSize));
    }
    return '"' + Crypto::Digest::md5(md5s).toHex() + '-' + QByteArray::number(parts) + '"';
}

QString message(const S3Reply &reply)
{
    return reply.isFinished() ? (reply.result() ? QStringLiteral("ok") : reply.result().error().message)
                              : QStringLiteral("still running");
}

} // namespace

class TestS3Client : public QObject
{
    Q_OBJECT

    ClientConfig m_config;
    std::unique_ptr<S3Client> m_client;
    QTemporaryDir m_dir;

    QString writeTemp(const QString &name, const QByteArray &data)
    {
        const QString path = m_dir.filePath(name);
        return writeFile(path, data) ? path : QString();
    }

    std::unique_ptr<S3Client> clientWith(const std::function<void(ClientConfig &)> &change)
    {
        ClientConfig config = m_config;
        change(config);
        return std::make_unique<S3Client>(config);
    }

private Q_SLOTS:
    void initTestCase()
    {
        const QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        // Run through with-radosgw.sh (ctest does); without it this is a setup error, not a skip.
        QVERIFY2(env.contains(QStringLiteral("STARFORGE_TEST_S3_ENDPOINT")),
                 "STARFORGE_TEST_S3_ENDPOINT is not set: run this test as sh scripts/lib/with-radosgw.sh tst_s3client");
        QVERIFY(m_dir.isValid());
        m_config.endpoint = QUrl(env.value(QStringLiteral("STARFORGE_TEST_S3_ENDPOINT")));
        m_config.region = env.value(QStringLiteral("STARFORGE_TEST_S3_REGION"), QStringLiteral("us-east-1"));
        m_config.bucket = QStringLiteral("starforge-test");
        m_config.pathStyle = true;
        m_config.credentials.accessKeyId = env.value(QStringLiteral("STARFORGE_TEST_S3_ACCESS_KEY")).toUtf8();
        m_config.credentials.secretAccessKey = env.value(QStringLiteral("STARFORGE_TEST_S3_SECRET_KEY")).toUtf8();
        m_client = std::make_unique<S3Client>(m_config);
        auto created = wait(m_client->createBucket());
        QVERIFY2(created->result(), qPrintable(message(*created)));
    }

    void cleanupTestCase()
    {
        m_client.reset();
    }

    void configFromSettings()
    {
        // The FORGE_S3_* settings as the app resolves them (environment over profile over default).
        QProcessEnvironment env;
        env.insert(QStringLiteral("FORGE_S3_ENDPOINT"), m_config.endpoint.toString());
        env.insert(QStringLiteral("FORGE_S3_BUCKET"), m_config.bucket);
        env.insert(QStringLiteral("FORGE_S3_PATH_STYLE"), QStringLiteral("true"));
        env.insert(QStringLiteral("FORGE_S3_ACCESS_KEY"), QString::fromUtf8(m_config.credentials.accessKeyId));
        env.insert(QStringLiteral("FORGE_S3_SECRET_KEY"), QString::fromUtf8(m_config.credentials.secretAccessKey));
        const auto config = ClientConfig::fromEffectiveConfig(Config::EffectiveConfig::resolve(std::nullopt, env));
        QVERIFY2(config, qPrintable(config ? QString() : config.error().message));
        QCOMPARE(config->region, QStringLiteral("us-east-1")); // the setting's default
        S3Client client(*config);
        auto list = wait(client.listObjects({}));
        QVERIFY2(list->result(), qPrintable(message(*list)));

        env.remove(QStringLiteral("FORGE_S3_ENDPOINT"));
        const auto missing = ClientConfig::fromEffectiveConfig(Config::EffectiveConfig::resolve(std::nullopt, env));
        QVERIFY(!missing);
        QVERIFY(missing.error().message.startsWith(QLatin1String("FORGE_S3_ENDPOINT is not set")));
        env.insert(QStringLiteral("FORGE_S3_ENDPOINT"), m_config.endpoint.toString());
        env.remove(QStringLiteral("FORGE_S3_SECRET_KEY"));
        const auto noSecret = ClientConfig::fromEffectiveConfig(Config::EffectiveConfig::resolve(std::nullopt, env));
        QVERIFY(!noSecret);
        QVERIFY(noSecret.error().message.contains(QLatin1String("FORGE_S3_SECRET_KEY")));
    }

    void putGetHeadDelete_data()
    {
        QTest::addColumn<QString>("key");
        QTest::newRow("plain") << QStringLiteral("capsules/job-1.zip");
        QTest::newRow("awkward") << QStringLiteral("dir/a b$+=&;,@~*'()!.txt");
        QTest::newRow("utf-8") << QStringLiteral("logs/ünïcødé ✓.log");
    }

    void putGetHeadDelete()
    {
        QFETCH(QString, key);
        const QByteArray data = randomBytes(100 * 1024 + 12, 7);
        auto put = wait(m_client->putObject(key, data, "application/octet-stream"));
        QVERIFY2(put->result(), qPrintable(message(*put)));
        const QByteArray md5Etag = '"' + Crypto::Digest::md5(data).toHex() + '"';
        QCOMPARE(put->etag(), md5Etag);

        auto get = wait(m_client->getObject(key));
        QVERIFY2(get->result(), qPrintable(message(*get)));
        QCOMPARE(get->data(), data);

        auto head = wait(m_client->headObject(key));
        QVERIFY2(head->result(), qPrintable(message(*head)));
        QCOMPARE(head->contentLength(), data.size());
        QCOMPARE(head->etag(), md5Etag);
        QCOMPARE(head->rawHeader("Content-Type"), QByteArray("application/octet-stream"));

        auto del = wait(m_client->deleteObject(key));
        QVERIFY2(del->result(), qPrintable(message(*del)));
        auto gone = wait(m_client->headObject(key));
        QVERIFY(!gone->result());
        QCOMPARE(gone->httpStatus(), 404);
        QCOMPARE(gone->result().error().code, Error::Code::NotFound);
        QVERIFY2(gone->result().error().message.contains(key), qPrintable(message(*gone)));
    }

    void missingKey()
    {
        auto get = wait(m_client->getObject(QStringLiteral("no/such/key")));
        QVERIFY(!get->result());
        QCOMPARE(get->httpStatus(), 404);
        QCOMPARE(get->s3ErrorCode(), QStringLiteral("NoSuchKey"));
        QCOMPARE(get->result().error().message,
                 QStringLiteral("The object no/such/key does not exist in bucket starforge-test."));
    }

    // The core's callback shape: typed results, a missing object as NotFound, and a context that
    // goes first aborting the request without ever calling back.
    void callbackShape()
    {
        const QString key = QStringLiteral("callbacks/object.bin");
        const QByteArray data = randomBytes(4096, 11);
        QObject context;
        std::optional<Result<void>> put;
        m_client->putObject(key, data, "application/octet-stream", &context, [&](Result<void> r) { put = r; });
        QVERIFY(QTest::qWaitFor([&] { return put.has_value(); }, 120000));
        QVERIFY2(*put, qPrintable(put->ok() ? QString() : put->error().message));

        std::optional<Result<ObjectHead>> head;
        m_client->headObject(key, &context, [&](Result<ObjectHead> r) { head = r; });
        QVERIFY(QTest::qWaitFor([&] { return head.has_value(); }, 120000));
        QVERIFY(*head);
        QCOMPARE((*head)->size, data.size());
        QCOMPARE((*head)->etag, '"' + Crypto::Digest::md5(data).toHex() + '"');

        std::optional<Result<QList<ObjectInfo>>> listed;
        m_client->listAllObjects(QStringLiteral("callbacks/"), &context, [&](Result<QList<ObjectInfo>> r) { listed = r; });
        QVERIFY(QTest::qWaitFor([&] { return listed.has_value(); }, 120000));
        QVERIFY(*listed);
        QCOMPARE((*listed)->size(), 1);
        QCOMPARE((*listed)->first().key, key);

        std::optional<Result<void>> deleted;
        m_client->deleteObject(key, &context, [&](Result<void> r) { deleted = r; });
        QVERIFY(QTest::qWaitFor([&] { return deleted.has_value(); }, 120000));
        QVERIFY(*deleted);

        std::optional<Result<QByteArray>> got;
        m_client->getObject(key, &context, [&](Result<QByteArray> r) { got = r; });
        QVERIFY(QTest::qWaitFor([&] { return got.has_value(); }, 120000));
        QVERIFY(!*got);
        QCOMPARE(got->error().code, Error::Code::NotFound);

        // A context destroyed while the request runs: no callback, and no reply left on the client.
        bool called = false;
        auto shortLived = std::make_unique<QObject>();
        m_client->getObject(key, shortLived.get(), [&](Result<QByteArray>) { called = true; });
        shortLived.reset();
        QTest::qWait(300);
        QVERIFY(!called);
        QTRY_COMPARE(m_client->findChildren<S3Reply *>(Qt::FindDirectChildrenOnly).size(), 0);
    }

    void listWithPaging()
    {
        const QStringList keys{QStringLiteral("list/a"), QStringLiteral("list/b c"), QStringLiteral("list/d/e"),
                               QStringLiteral("list/f+g"), QStringLiteral("list/h"), QStringLiteral("list/i"),
                               QStringLiteral("list/j")};
        for (const QString &key : keys) {
            auto put = wait(m_client->putObject(key, key.toUtf8()));
            QVERIFY2(put->result(), qPrintable(message(*put)));
        }
        auto other = wait(m_client->putObject(QStringLiteral("elsewhere"), "x"));
        QVERIFY(other->result());

        // One page: truncated, with a token that leads on.
        auto first = wait(m_client->listObjects(QStringLiteral("list/"), 3));
        QVERIFY2(first->result(), qPrintable(message(*first)));
        QCOMPARE(first->listing().objects.size(), 3);
        QVERIFY(first->listing().truncated);
        QVERIFY(!first->listing().nextContinuationToken.isEmpty());
        auto second = wait(m_client->listObjects(QStringLiteral("list/"), 3, first->listing().nextContinuationToken));
        QVERIFY(second->result());
        QCOMPARE(second->listing().objects.first().key, keys[3]);

        // All pages: 7 objects, 3 at a time.
        auto all = wait(m_client->listAllObjects(QStringLiteral("list/"), 3));
        QVERIFY2(all->result(), qPrintable(message(*all)));
        QCOMPARE(all->pages(), 3);
        QStringList listed;
        for (const ObjectInfo &object : all->listing().objects) {
            listed << object.key;
            QCOMPARE(object.size, object.key.toUtf8().size());
            QVERIFY(object.lastModified.isValid());
        }
        QCOMPARE(listed, keys);
        QVERIFY(!all->listing().truncated);
    }

    // An object's SHA-256 is kept with it as user metadata (x-amz-meta-sha256): every single
    // PUT records its body's, a multipart upload the one it is given, and HEAD returns it. The
    // submitter skips an upload only when it matches (docs/s3.md, "Checksums").
    void sha256IsRecordedWithTheObject()
    {
        const QByteArray data = randomBytes(4096, 21);
        const QByteArray sha = Crypto::Digest::sha256(data).toHex();
        QVERIFY(wait(m_client->putObject(QStringLiteral("sha/put.bin"), data))->result());
        QObject context;
        std::optional<Result<ObjectHead>> head;
        m_client->headObject(QStringLiteral("sha/put.bin"), &context, [&](Result<ObjectHead> r) { head = r; });
        QVERIFY(QTest::qWaitFor([&] { return head.has_value(); }, 120000));
        QVERIFY(*head);
        QCOMPARE((*head)->sha256, sha);
        QCOMPARE(wait(m_client->getObject(QStringLiteral("sha/put.bin")))->rawHeader(Sha256MetadataHeader), sha);

        // Multipart: two parts (one of S3's minimum and a short last one), the whole file's hash.
        const QByteArray big = randomBytes(MultipartOptions::MinPartSize + 777, 22);
        const QString path = writeTemp(QStringLiteral("sha.bin"), big);
        MultipartOptions options;
        options.partSize = MultipartOptions::MinPartSize;
        options.sha256Hex = Crypto::Digest::sha256(big).toHex();
        std::unique_ptr<MultipartUpload> upload(m_client->uploadFile(QStringLiteral("sha/multipart.bin"), path, options));
        QVERIFY(wait(upload.get()));
        QVERIFY2(upload->result(), qPrintable(upload->result().error().message));
        QCOMPARE(upload->partCount(), 2);
        head.reset();
        m_client->headObject(QStringLiteral("sha/multipart.bin"), &context, [&](Result<ObjectHead> r) { head = r; });
        QVERIFY(QTest::qWaitFor([&] { return head.has_value(); }, 120000));
        QVERIFY(*head);
        QCOMPARE((*head)->size, big.size());
        QCOMPARE((*head)->sha256, options.sha256Hex);

        // Without one, none is recorded; an overwrite replaces the old one.
        MultipartOptions plain;
        plain.partSize = MultipartOptions::MinPartSize;
        upload.reset(m_client->uploadFile(QStringLiteral("sha/multipart.bin"), path, plain));
        QVERIFY(wait(upload.get()));
        QVERIFY(upload->result());
        head.reset();
        m_client->headObject(QStringLiteral("sha/multipart.bin"), &context, [&](Result<ObjectHead> r) { head = r; });
        QVERIFY(QTest::qWaitFor([&] { return head.has_value(); }, 120000));
        QVERIFY(*head);
        QVERIFY((*head)->sha256.isEmpty());
        QVERIFY(wait(m_client->deleteObject(QStringLiteral("sha/put.bin")))->result());
        QVERIFY(wait(m_client->deleteObject(QStringLiteral("sha/multipart.bin")))->result());
    }

    void multipart64MiB()
    {
        const qint64 partSize = 8 * MiB;
        const QByteArray data = randomBytes(64 * MiB + 123, 64);
        const QString path = writeTemp(QStringLiteral("64mib.bin"), data);
        QVERIFY(!path.isEmpty());
        MultipartOptions options;
        options.partSize = partSize;
        options.concurrency = 4;
        std::unique_ptr<MultipartUpload> upload(m_client->uploadFile(QStringLiteral("big/64mib.bin"), path, options));
        qint64 lastDone = -1;
        qint64 lastTotal = -1;
        bool monotonic = true;
        connect(upload.get(), &MultipartUpload::progress, this, [&](qint64 done, qint64 total) {
            lastTotal = total;
            lastDone = done;
            monotonic = monotonic && done <= total;
        });
        QVERIFY(wait(upload.get()));
        QVERIFY2(upload->result(), qPrintable(upload->result().error().message));
        QCOMPARE(upload->partCount(), 9);
        QVERIFY(monotonic);
        QCOMPARE(lastTotal, data.size());
        QCOMPARE(lastDone, data.size());

        auto head = wait(m_client->headObject(QStringLiteral("big/64mib.bin")));
        QVERIFY(head->result());
        QCOMPARE(head->contentLength(), data.size());
        QVERIFY(head->etag().endsWith("-9\""));
        QCOMPARE(head->etag(), multipartEtag(data, partSize));
        // radosgw's Complete answer has an empty ETag; when a server sends one, it is the same.
        if (!upload->etag().isEmpty()) {
            QCOMPARE(upload->etag(), head->etag());
        }
        auto get = wait(m_client->getObject(QStringLiteral("big/64mib.bin")));
        QVERIFY(get->result());
        QVERIFY(get->data() == data);
        QVERIFY(wait(m_client->deleteObject(QStringLiteral("big/64mib.bin")))->result());
    }

    void resumeByListingParts()
    {
        const qint64 partSize = 5 * MiB;
        QByteArray data = randomBytes(26 * MiB, 26);
        const QString path = writeTemp(QStringLiteral("resume.bin"), data);
        const QString key = QStringLiteral("big/resume.bin");
        MultipartOptions options;
        options.partSize = partSize;
        options.concurrency = 1;
        std::unique_ptr<MultipartUpload> first(m_client->uploadFile(key, path, options));
        // With one part at a time, bytes beyond two parts mean parts 1 and 2 are acknowledged.
        QVERIFY(QTest::qWaitFor([&] { return first->isFinished() || first->bytesDone() > 2 * partSize; }, 120000));
        first->pause();
        QVERIFY(wait(first.get()));
        QVERIFY(!first->result());
        QVERIFY2(first->result().error().message.contains(QLatin1String("paused")), qPrintable(first->result().error().message));
        const QString uploadId = first->uploadId();
        QVERIFY(!uploadId.isEmpty());

        auto listed = wait(m_client->listParts(key, uploadId));
        QVERIFY2(listed->result(), qPrintable(message(*listed)));
        const int onServer = static_cast<int>(listed->parts().parts.size());
        QVERIFY(onServer >= 2);
        QVERIFY(onServer < 6);

        // Part 1 changes locally: its ETag no longer matches, so only the other parts are skipped.
        data[10] = static_cast<char>(data[10] ^ 0x5a);
        QVERIFY(writeFile(path, data));
        options.uploadId = uploadId;
        options.concurrency = 4;
        std::unique_ptr<MultipartUpload> second(m_client->uploadFile(key, path, options));
        QVERIFY(wait(second.get()));
        QVERIFY2(second->result(), qPrintable(second->result().error().message));
        QCOMPARE(second->uploadId(), uploadId);
        QCOMPARE(second->partsSkipped(), onServer - 1);

        auto get = wait(m_client->getObject(key));
        QVERIFY(get->result());
        QVERIFY(get->data() == data);
        auto head = wait(m_client->headObject(key));
        QCOMPARE(head->etag(), multipartEtag(data, partSize));
    }

    // What a killed process leaves: uploads initiated and never completed, a temporary Capsule
    // folder and a log file. The start-up clean-up aborts the uploads under capsules/ and jobs/
    // older than its threshold (its clock is moved two days on instead of waiting a day), keeps
    // everything younger and everything under other prefixes, and removes the stale local files.
    void startupCleanupAbortsOrphanedUploads()
    {
        const QStringList keys{QStringLiteral("capsules/orphan.zip"), QStringLiteral("jobs/orphan1/logs/p/c.log"), QStringLiteral("elsewhere/kept.bin")};
        QHash<QString, QString> ids;
        for (const QString &key : keys) {
            auto created = wait(m_client->createMultipartUpload(key));
            QVERIFY2(created->result(), qPrintable(created->result().error().message));
            ids.insert(key, created->uploadId());
        }
        const auto pending = [this](const QString &prefix) {
            auto listed = wait(m_client->listMultipartUploads(prefix));
            QStringList out;
            for (const UploadInfo &u : listed->uploads().uploads) out << u.uploadId;
            return out;
        };
        QVERIFY(pending(QStringLiteral("capsules/")).contains(ids.value(keys[0])));

        QTemporaryDir temp;
        const QDateTime now = QDateTime::currentDateTimeUtc();
        const auto leftover = [&temp](const QString &name, bool folder, const QDateTime &changed) {
            const QString path = temp.filePath(name);
            if (folder) QDir().mkpath(path);
            Testing::writeFile(folder ? path + QStringLiteral("/capsule.zip.a1b2c3") : path, "partial");
            // The time of last change, as a crash days ago would have left it.
            return QProcess::execute(QStringLiteral("touch"), {QStringLiteral("-d"), changed.toString(Qt::ISODate), path}) == 0;
        };
        QVERIFY(leftover(QStringLiteral("starforge-capsule-OLD111"), true, now.addDays(-3)));
        QVERIFY(leftover(QStringLiteral("starforge-capsule-NEW222"), true, now));
        QVERIFY(leftover(QStringLiteral("starforge-log-OLD333.log"), false, now.addDays(-3)));
        QVERIFY(leftover(QStringLiteral("somebody-else-OLD444"), false, now.addDays(-3)));

        // Started now, the uploads are younger than a day: nothing is aborted.
        StartupCleanupOptions options;
        options.tempFolder = temp.path();
        {
            StartupCleanup cleanup(m_client.get(), options);
            cleanup.start();
            QTRY_VERIFY_WITH_TIMEOUT(cleanup.isFinished(), 30000);
            QVERIFY2(cleanup.report().problems.isEmpty(), qPrintable(cleanup.report().problems.join(u'\n')));
            QVERIFY(cleanup.report().abortedUploads.isEmpty());
            QCOMPARE(cleanup.report().removedFiles.size(), 2);
        }
        QVERIFY(!QFileInfo::exists(temp.filePath(QStringLiteral("starforge-capsule-OLD111"))));
        QVERIFY(!QFileInfo::exists(temp.filePath(QStringLiteral("starforge-log-OLD333.log"))));
        QVERIFY(QFileInfo::exists(temp.filePath(QStringLiteral("starforge-capsule-NEW222/capsule.zip.a1b2c3"))));
        QVERIFY(QFileInfo::exists(temp.filePath(QStringLiteral("somebody-else-OLD444"))));
        QVERIFY(pending(QStringLiteral("jobs/")).contains(ids.value(keys[1])));

        // Two days on, they are orphans: the app's two are aborted, the other prefix is not ours.
        options.now = now.addDays(2);
        StartupCleanup later(m_client.get(), options);
        later.start();
        QTRY_VERIFY_WITH_TIMEOUT(later.isFinished(), 30000);
        QVERIFY2(later.report().problems.isEmpty(), qPrintable(later.report().problems.join(u'\n')));
        QCOMPARE(later.report().abortedUploads.size(), 2);
        QVERIFY(!pending(QStringLiteral("capsules/")).contains(ids.value(keys[0])));
        QVERIFY(!pending(QStringLiteral("jobs/")).contains(ids.value(keys[1])));
        QVERIFY(pending(QStringLiteral("elsewhere/")).contains(ids.value(keys[2])));
        QVERIFY(!QFileInfo::exists(temp.filePath(QStringLiteral("starforge-capsule-NEW222"))));   // two days on it is stale too
        auto aborted = wait(m_client->abortMultipartUpload(keys[2], ids.value(keys[2])));
        QVERIFY(aborted->result());
    }

    void cancelLeavesNoUpload()
    {
        const QString path = writeTemp(QStringLiteral("cancel.bin"), randomBytes(40 * MiB, 40));
        const QString key = QStringLiteral("big/cancel.bin");
        MultipartOptions options;
        options.partSize = 5 * MiB;
        options.concurrency = 2;
        std::unique_ptr<MultipartUpload> upload(m_client->uploadFile(key, path, options));
        QVERIFY(QTest::qWaitFor([&] { return upload->isFinished() || upload->bytesDone() > 0; }, 120000));
        QVERIFY(!upload->isFinished());
        upload->cancel();
        QVERIFY(wait(upload.get()));
        QVERIFY(!upload->result());
        QVERIFY2(upload->result().error().message.contains(QLatin1String("cancelled")),
                 qPrintable(upload->result().error().message));
        QVERIFY(!upload->uploadId().isEmpty());

        auto uploads = wait(m_client->listMultipartUploads(QStringLiteral("big/")));
        QVERIFY2(uploads->result(), qPrintable(message(*uploads)));
        QVERIFY2(uploads->uploads().uploads.isEmpty(),
                 qPrintable(uploads->uploads().uploads.isEmpty() ? QString() : uploads->uploads().uploads.first().uploadId));
        auto head = wait(m_client->headObject(key));
        QCOMPARE(head->httpStatus(), 404);
    }

    void presignedGetWithCurl()
    {
        const QString key = QStringLiteral("shared/run log$.txt");
        const QByteArray data = randomBytes(300 * 1024, 3);
        QVERIFY(wait(m_client->putObject(key, data))->result());
        const auto url = m_client->presignedGetUrl(key, 600);
        QVERIFY(url);
        QVERIFY(url->query().contains(QLatin1String("X-Amz-Expires=600")));
        const QString out = m_dir.filePath(QStringLiteral("presigned.out"));
        QProcess curl;
        curl.start(QStringLiteral("curl"), {QStringLiteral("-sS"), QStringLiteral("-f"), QStringLiteral("-o"), out,
                                            url->toString(QUrl::FullyEncoded)});
        QVERIFY(curl.waitForFinished(60000));
        QCOMPARE(curl.exitCode(), 0);
        QVERIFY(readAll(out) == data);

        // Signed two hours ago for one hour: the server refuses it.
        const auto expired = m_client->presignedGetUrl(key, 3600, QDateTime::currentDateTimeUtc().addSecs(-7200));
        QVERIFY(expired);
        QProcess late;
        late.start(QStringLiteral("curl"), {QStringLiteral("-s"), QStringLiteral("-o"), QStringLiteral("/dev/null"),
                                            QStringLiteral("-w"), QStringLiteral("%{http_code}"),
                                            expired->toString(QUrl::FullyEncoded)});
        QVERIFY(late.waitForFinished(60000));
        QCOMPARE(late.readAllStandardOutput(), QByteArray("403"));
        QVERIFY(!m_client->presignedGetUrl(key, 8 * 24 * 3600));
    }

    void wrongSecretKey()
    {
        auto client = clientWith([](ClientConfig &c) { c.credentials.secretAccessKey = "not-the-secret"; });
        auto put = wait(client->putObject(QStringLiteral("x"), "x"));
        QVERIFY(!put->result());
        QCOMPARE(put->httpStatus(), 403);
        QCOMPARE(put->s3ErrorCode(), QStringLiteral("SignatureDoesNotMatch"));
        QCOMPARE(put->attempts(), 1); // not transient: no retry
        const QString text = put->result().error().message;
        QVERIFY2(text.contains(QLatin1String("secret key")) && text.contains(QLatin1String("FORGE_S3_SECRET_KEY")),
                 qPrintable(text));
    }

    void wrongAccessKey()
    {
        auto client = clientWith([](ClientConfig &c) { c.credentials.accessKeyId = "NOSUCHACCESSKEY"; });
        auto list = wait(client->listObjects({}));
        QVERIFY(!list->result());
        QCOMPARE(list->httpStatus(), 403);
        QCOMPARE(list->s3ErrorCode(), QStringLiteral("InvalidAccessKeyId"));
        const QString text = list->result().error().message;
        QVERIFY2(text.contains(QLatin1String("NOSUCHACCESSKEY")) && text.contains(QLatin1String("FORGE_S3_ACCESS_KEY")),
                 qPrintable(text));
    }

    void missingBucket()
    {
        auto client = clientWith([](ClientConfig &c) { c.bucket = QStringLiteral("starforge-missing"); });
        auto list = wait(client->listObjects({}));
        QVERIFY(!list->result());
        QCOMPARE(list->httpStatus(), 404);
        QCOMPARE(list->s3ErrorCode(), QStringLiteral("NoSuchBucket"));
        QCOMPARE(list->result().error().code, Error::Code::NotFound);
        const QString text = list->result().error().message;
        QVERIFY2(text.contains(QLatin1String("starforge-missing")) && text.contains(QLatin1String("FORGE_S3_BUCKET")),
                 qPrintable(text));
    }

    void skewedClock()
    {
        auto client = clientWith([](ClientConfig &) {});
        client->setTestHooks({{}, {}, -3600});
        auto list = wait(client->listObjects({}));
        QVERIFY(!list->result());
        QCOMPARE(list->httpStatus(), 403);
        QCOMPARE(list->s3ErrorCode(), QStringLiteral("RequestTimeTooSkewed"));
        QVERIFY2(list->result().error().message.contains(QLatin1String("Fix the machine's clock")),
                 qPrintable(list->result().error().message));
    }

    void payloadMismatch_data()
    {
        QTest::addColumn<QByteArray>("sha256");
        QTest::addColumn<QByteArray>("md5");
        QTest::addColumn<QString>("code");
        QTest::newRow("x-amz-content-sha256") << Crypto::Digest::sha256("other bytes").toHex() << QByteArray()
                                              << QStringLiteral("XAmzContentSHA256Mismatch");
        QTest::newRow("Content-MD5") << QByteArray() << Crypto::Digest::md5("other bytes").toBase64()
                                     << QStringLiteral("BadDigest");
    }

    void payloadMismatch()
    {
        QFETCH(QByteArray, sha256);
        QFETCH(QByteArray, md5);
        QFETCH(QString, code);
        auto client = clientWith([](ClientConfig &) {});
        client->setTestHooks({sha256, md5, 0});
        const QString key = QStringLiteral("corrupt/") + code;
        auto put = wait(client->putObject(key, "the real bytes"));
        QVERIFY(!put->result());
        QCOMPARE(put->httpStatus(), 400);
        QCOMPARE(put->s3ErrorCode(), code);
        QCOMPARE(put->result().error().code, Error::Code::Io);
        QVERIFY2(put->result().error().message.contains(QLatin1String("corrupted in transit")),
                 qPrintable(put->result().error().message));
        // Nothing was stored.
        QCOMPARE(wait(m_client->headObject(key))->httpStatus(), 404);
    }

    void multipartRules()
    {
        const QString key = QStringLiteral("rules/small-parts");
        auto create = wait(m_client->createMultipartUpload(key));
        QVERIFY2(create->result(), qPrintable(message(*create)));
        const QString id = create->uploadId();
        const QByteArray small = "a small part";
        QList<PartInfo> parts;
        for (int n = 1; n <= 2; ++n) {
            auto part = wait(m_client->uploadPart(key, id, n, small, Crypto::Digest::md5(small),
                                                  Crypto::Digest::sha256(small).toHex()));
            QVERIFY2(part->result(), qPrintable(message(*part)));
            parts.append({n, small.size(), part->etag()});
        }
        // A non-last part under 5 MiB.
        auto tooSmall = wait(m_client->completeMultipartUpload(key, id, parts));
        QVERIFY(!tooSmall->result());
        QCOMPARE(tooSmall->s3ErrorCode(), QStringLiteral("EntityTooSmall"));
        QVERIFY(tooSmall->result().error().message.contains(QLatin1String("5 MiB")));
        // A part whose ETag is not what was uploaded.
        auto invalid = wait(m_client->completeMultipartUpload(key, id, {{1, small.size(), "\"0123456789abcdef0123456789abcdef\""}}));
        QVERIFY(!invalid->result());
        QCOMPARE(invalid->s3ErrorCode(), QStringLiteral("InvalidPart"));
        QVERIFY(invalid->result().error().message.contains(QLatin1String("ETag")));
        QVERIFY(wait(m_client->abortMultipartUpload(key, id))->result());
        // Gone: radosgw answers ListParts of an aborted upload with 404 NoSuchKey (S3: NoSuchUpload).
        auto gone = wait(m_client->listParts(key, id));
        QCOMPARE(gone->httpStatus(), 404);
        // Resuming it says so.
        const QString path = writeTemp(QStringLiteral("gone.bin"), "x");
        MultipartOptions options;
        options.uploadId = id;
        std::unique_ptr<MultipartUpload> resume(m_client->uploadFile(key, path, options));
        QVERIFY(wait(resume.get()));
        QVERIFY(!resume->result());
        QVERIFY2(resume->result().error().message.contains(QLatin1String("no longer exists")),
                 qPrintable(resume->result().error().message));
    }

    void refusedConnection()
    {
        auto client = clientWith([](ClientConfig &c) {
            c.endpoint = QUrl(QStringLiteral("http://127.0.0.1:1"));
            c.maxAttempts = 2;
            c.backoff = {10, 20, 2.0, 0.0, 1000};
        });
        auto get = wait(client->getObject(QStringLiteral("x")));
        QVERIFY(!get->result());
        QCOMPARE(get->httpStatus(), 0);
        QCOMPARE(get->attempts(), 2); // refused is transient: retried once
        QVERIFY2(get->result().error().message.contains(QLatin1String("refused")), qPrintable(message(*get)));
    }
};

QTEST_GUILESS_MAIN(TestS3Client)
#include "tst_s3client.moc"
