// The sandbox's S3 endpoint over TLS with SigV4 from the core's signer: objects, ranges,
// multipart, ListObjectsV2 paging, presigned URLs, every authentication and integrity error as
// S3's XML, the part-failure and upload-holding faults, and a RayJob whose working_dir is a
// presigned https URL.

#include "core/s3/sigv4.h"
#include "sandbox/api/apiserver.h"
#include "sandbox/s3/s3server.h"
#include "sandbox/sandbox.h"
#include "support/sandboxfixture.h"
#include "support/testutil.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Testing;

struct Signing
{
    QByteArray secret;
    QByteArray accessKey;
    QDateTime time = QDateTime::currentDateTimeUtc();
    QByteArray payloadHash;  // empty: the body's SHA-256
    S3::Pairs extraHeaders;
};

class TestSandboxS3 : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<SandboxHttp> m_http; // the Kubernetes API, for faults and the RayJob
    QNetworkAccessManager m_nam;
    QSslConfiguration m_ssl;

    struct Reply
    {
        int status = 0;
        QByteArray body;
        QHash<QByteArray, QByteArray> headers;
        QString code() const
        {
            const auto m = QRegularExpression(QStringLiteral("<Code>([^<]*)</Code>")).match(QString::fromUtf8(body));
            return m.hasMatch() ? m.captured(1) : QString();
        }
        QString element(const QString &name) const
        {
            const auto m = QRegularExpression(QStringLiteral("<%1>([^<]*)</%1>").arg(name)).match(QString::fromUtf8(body));
            return m.hasMatch() ? m.captured(1) : QString();
        }
    };


    Reply send(const QByteArray &method, const QString &path, const QByteArray &body = {}, const S3::Pairs &query = {}, Signing signing = {})
    {
        return finish(start(method, path, body, query, std::move(signing)));
    }

    // The same request, not waited for: the caller owns the reply.
    QNetworkReply *start(const QByteArray &method, const QString &path, const QByteArray &body = {}, const S3::Pairs &query = {},
                         Signing signing = {})
    {
        const QUrl endpoint = m_sandbox->s3Endpoint();
        S3::SigningRequest request;
        request.method = method;
        request.path = S3::SigV4::uriEncode(path.toUtf8(), false);
        request.query = query;
        request.headers = {{"Host", endpoint.authority().toUtf8()}};
        for (const auto &h : signing.extraHeaders) request.headers.append(h);
        request.payloadHash = signing.payloadHash.isEmpty() ? S3::SigV4::sha256Hex(body) : signing.payloadHash;
        S3::SigningParams params;
        params.time = signing.time;
        const S3::Credentials credentials{signing.accessKey.isEmpty() ? m_sandbox->s3AccessKey() : signing.accessKey,
                                          signing.secret.isEmpty() ? m_sandbox->s3SecretKey() : signing.secret, {}};
        const S3::Signature signature = S3::SigV4::signHeaders(request, credentials, params);
        QByteArrayList q;
        for (const auto &[k, v] : query) q << S3::SigV4::uriEncode(k, true) + '=' + S3::SigV4::uriEncode(v, true);
        QUrl url(endpoint.toString() + QString::fromUtf8(request.path) + (q.isEmpty() ? QString() : u'?' + QString::fromUtf8(q.join('&'))),
                 QUrl::StrictMode);
        QNetworkRequest r(url);
        r.setSslConfiguration(m_ssl);
        for (const auto &h : signing.extraHeaders) r.setRawHeader(h.first, h.second);
        for (const auto &h : signature.addedHeaders) r.setRawHeader(h.first, h.second);
        // HEAD through sendCustomRequest would wait for a body; QNAM knows HEAD by its own call.
        return method == "HEAD" ? m_nam.head(r) : m_nam.sendCustomRequest(r, method, body);
    }

    Reply fetch(const QUrl &url)
    {
        QNetworkRequest r(url);
        r.setSslConfiguration(m_ssl);
        return finish(m_nam.get(r));
    }

    Reply finish(QNetworkReply *raw)
    {
        std::unique_ptr<QNetworkReply> reply(raw);
        Reply out;
        if (!QTest::qWaitFor([&] { return reply->isFinished(); }, 30000)) {
            return out; // status 0: the comparisons that follow fail and say so
        }
        out.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        out.body = reply->readAll();
        for (const auto &[k, v] : reply->rawHeaderPairs()) out.headers.insert(k.toLower(), v);
        return out;
    }

    QUrl presign(const QString &path, int expires, const QDateTime &time = QDateTime::currentDateTimeUtc())
    {
        const QUrl endpoint = m_sandbox->s3Endpoint();
        S3::SigningRequest request;
        request.method = "GET";
        request.path = S3::SigV4::uriEncode(path.toUtf8(), false);
        request.headers = {{"Host", endpoint.authority().toUtf8()}};
        request.payloadHash = "UNSIGNED-PAYLOAD";
        S3::SigningParams params;
        params.time = time;
        const S3::Signature s = S3::SigV4::presign(request, {m_sandbox->s3AccessKey(), m_sandbox->s3SecretKey(), {}}, params, expires);
        QByteArrayList q;
        for (const auto &[k, v] : s.addedQuery) q << k + '=' + S3::SigV4::uriEncode(v, true);
        return QUrl(endpoint.toString() + QString::fromUtf8(request.path) + u'?' + QString::fromUtf8(q.join('&')), QUrl::StrictMode);
    }

private Q_SLOTS:
    void initTestCase()
    {
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("cpu:2x0");
        options.presentImages = {QStringLiteral("rayproject/ray:2.55.1")};
        QString error;
        QVERIFY2(startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
        m_ssl = QSslConfiguration::defaultConfiguration();
        m_ssl.setCaCertificates(QSslCertificate::fromData(m_sandbox->caCertificatePem(), QSsl::Pem));
        const QJsonObject conn = QJsonDocument::fromJson(readAll(m_dir.filePath(QStringLiteral("conn.json")))).object();
        QCOMPARE(conn.value(QStringLiteral("s3Endpoint")).toString(), m_sandbox->s3Endpoint().toString());
        QCOMPARE(conn.value(QStringLiteral("forge")).toObject().value(QStringLiteral("FORGE_S3_BUCKET")).toString(), QStringLiteral("starforge"));
    }
    void cleanupTestCase()
    {
        m_http.reset();
        m_sandbox.reset();
    }

    void objects()
    {
        const QByteArray data = "hello capsule";
        const Reply put = send("PUT", QStringLiteral("/starforge/capsules/a b$.zip"), data);
        QCOMPARE(put.status, 200);
        QCOMPARE(put.headers.value("etag"), '"' + QCryptographicHash::hash(data, QCryptographicHash::Md5).toHex() + '"');
        const Reply get = send("GET", QStringLiteral("/starforge/capsules/a b$.zip"));
        QCOMPARE(get.status, 200);
        QCOMPARE(get.body, data);
        const Reply head = send("HEAD", QStringLiteral("/starforge/capsules/a b$.zip"));
        QCOMPARE(head.status, 200);
        QCOMPARE(head.headers.value("content-length"), QByteArray::number(data.size()));
        QCOMPARE(head.body, QByteArray());
        Signing range;
        range.extraHeaders = {{"Range", "bytes=6-12"}};
        const Reply partial = send("GET", QStringLiteral("/starforge/capsules/a b$.zip"), {}, {}, range);
        QCOMPARE(partial.status, 206);
        QCOMPARE(partial.body, QByteArray("capsule"));
        QCOMPARE(partial.headers.value("content-range"), QByteArray("bytes 6-12/13"));
        QCOMPARE(send("DELETE", QStringLiteral("/starforge/capsules/a b$.zip")).status, 204);
        const Reply missing = send("GET", QStringLiteral("/starforge/capsules/a b$.zip"));
        QCOMPARE(missing.status, 404);
        QCOMPARE(missing.code(), QStringLiteral("NoSuchKey"));
        QCOMPARE(send("HEAD", QStringLiteral("/starforge/capsules/a b$.zip")).status, 404);
        const Reply noBucket = send("GET", QStringLiteral("/nobucket/x"));
        QCOMPARE(noBucket.code(), QStringLiteral("NoSuchBucket"));
    }

    void authenticationAndIntegrityErrors()
    {
        Signing wrongSecret;
        wrongSecret.secret = "not-the-secret";
        const Reply bad = send("GET", QStringLiteral("/starforge/x"), {}, {}, wrongSecret);
        QCOMPARE(bad.status, 403);
        QCOMPARE(bad.code(), QStringLiteral("SignatureDoesNotMatch"));
        QCOMPARE(bad.element(QStringLiteral("Message")), QStringLiteral("The request signature we calculated does not match the signature you provided. Check your key and signing method."));
        Signing wrongKey;
        wrongKey.accessKey = "AKIDNOBODY";
        QCOMPARE(send("GET", QStringLiteral("/starforge/x"), {}, {}, wrongKey).code(), QStringLiteral("InvalidAccessKeyId"));
        Signing skewed;
        skewed.time = QDateTime::currentDateTimeUtc().addSecs(-3600);
        QCOMPARE(send("GET", QStringLiteral("/starforge/x"), {}, {}, skewed).code(), QStringLiteral("RequestTimeTooSkewed"));
        Signing lying;
        lying.payloadHash = S3::SigV4::sha256Hex("something else");
        const Reply mismatch = send("PUT", QStringLiteral("/starforge/x"), "payload", {}, lying);
        QCOMPARE(mismatch.status, 400);
        QCOMPARE(mismatch.code(), QStringLiteral("XAmzContentSHA256Mismatch"));
        Signing md5;
        md5.extraHeaders = {{"Content-MD5", QCryptographicHash::hash("other", QCryptographicHash::Md5).toBase64()}};
        QCOMPARE(send("PUT", QStringLiteral("/starforge/x"), "payload", {}, md5).code(), QStringLiteral("BadDigest"));
        QCOMPARE(send("HEAD", QStringLiteral("/starforge/x")).status, 404); // nothing was stored by the refused PUTs
        QNetworkRequest anonymous(QUrl(m_sandbox->s3Endpoint().toString() + QStringLiteral("/starforge/x")));
        anonymous.setSslConfiguration(m_ssl);
        QCOMPARE(finish(m_nam.get(anonymous)).code(), QStringLiteral("AccessDenied"));
    }

    // holdS3Uploads: PUTs wait unanswered until the knob is off, then are served in arrival
    // order; a held PUT whose client went away is dropped; reads are not held.
    void heldUploads()
    {
        QCOMPARE(m_http->send("PATCH", QStringLiteral("/sandbox/v1/faults"), R"({"holdS3Uploads":1})").status, 200);
        std::unique_ptr<QNetworkReply> put(start("PUT", QStringLiteral("/starforge/held/one.txt"), "first"));
        std::unique_ptr<QNetworkReply> gone(start("PUT", QStringLiteral("/starforge/held/gone.txt"), "never"));
        QTRY_COMPARE(m_sandbox->s3()->heldUploadCount(), 2);
        QVERIFY(!put->isFinished());
        QCOMPARE(send("GET", QStringLiteral("/starforge/held/one.txt")).status, 404);   // reads go on; nothing stored yet
        gone->abort();
        QTRY_COMPARE(m_sandbox->s3()->heldUploadCount(), 1);
        QVERIFY(!put->isFinished());
        QCOMPARE(m_http->send("PATCH", QStringLiteral("/sandbox/v1/faults"), R"({"holdS3Uploads":0})").status, 200);
        QTRY_VERIFY(put->isFinished());
        QCOMPARE(put->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 200);
        QCOMPARE(send("GET", QStringLiteral("/starforge/held/one.txt")).body, QByteArray("first"));
        QCOMPARE(send("HEAD", QStringLiteral("/starforge/held/gone.txt")).status, 404);
        QCOMPARE(m_sandbox->s3()->heldUploadCount(), 0);
    }

    void presignedUrls()
    {
        QCOMPARE(send("PUT", QStringLiteral("/starforge/shared/file.txt"), "shared bytes").status, 200);
        const Reply ok = fetch(presign(QStringLiteral("/starforge/shared/file.txt"), 600));
        QCOMPARE(ok.status, 200);
        QCOMPARE(ok.body, QByteArray("shared bytes"));
        const Reply expired = fetch(presign(QStringLiteral("/starforge/shared/file.txt"), 60, QDateTime::currentDateTimeUtc().addSecs(-120)));
        QCOMPARE(expired.status, 403);
        QCOMPARE(expired.element(QStringLiteral("Message")), QStringLiteral("Request has expired"));
        QString tampered = presign(QStringLiteral("/starforge/shared/file.txt"), 600).toString();
        // Change the signature's first digit to another one (replacing it by a fixed digit left it
        // unchanged one time in sixteen).
        const qsizetype digit = tampered.indexOf(QStringLiteral("X-Amz-Signature=")) + 16;
        tampered[digit] = tampered.at(digit) == u'0' ? u'1' : u'0';
        QCOMPARE(fetch(QUrl(tampered)).code(), QStringLiteral("SignatureDoesNotMatch"));
        // A real client fetches it too (the sandbox runs in this thread: wait with the event loop).
        QProcess curl;
        curl.start(QStringLiteral("curl"), {QStringLiteral("-sf"), QStringLiteral("--cacert"), m_sandbox->caFile(),
                                            presign(QStringLiteral("/starforge/shared/file.txt"), 600).toString(QUrl::FullyEncoded)});
        QVERIFY2(curl.waitForStarted(5000), "curl must be installed (scripts/lib/deps.sh lists it)");
        QTRY_VERIFY_WITH_TIMEOUT(curl.state() == QProcess::NotRunning, 20000);
        QCOMPARE(curl.exitCode(), 0);
        QCOMPARE(curl.readAllStandardOutput(), QByteArray("shared bytes"));
    }

    void multipart()
    {
        const QString key = QStringLiteral("/starforge/big.bin");
        const Reply created = send("POST", key, {}, {{"uploads", ""}});
        QCOMPARE(created.status, 200);
        const QByteArray id = created.element(QStringLiteral("UploadId")).toUtf8();
        QVERIFY(!id.isEmpty());
        const QByteArray part1(5 * 1024 * 1024, 'a');
        const QByteArray part2(1024, 'b');
        const Reply p1 = send("PUT", key, part1, {{"partNumber", "1"}, {"uploadId", id}});
        const Reply p2 = send("PUT", key, part2, {{"partNumber", "2"}, {"uploadId", id}});
        QCOMPARE(p1.status, 200);
        QCOMPARE(p2.status, 200);
        const Reply parts = send("GET", key, {}, {{"uploadId", id}});
        QCOMPARE(parts.body.count("<Part>"), 2);
        const QByteArray complete = "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>" + p1.headers.value("etag")
            + "</ETag></Part><Part><PartNumber>2</PartNumber><ETag>" + p2.headers.value("etag") + "</ETag></Part></CompleteMultipartUpload>";
        const Reply done = send("POST", key, complete, {{"uploadId", id}});
        QCOMPARE(done.status, 200);
        QVERIFY2(done.element(QStringLiteral("ETag")).endsWith(QStringLiteral("-2&quot;")) || done.element(QStringLiteral("ETag")).endsWith(QStringLiteral("-2\"")),
                 done.body.constData());
        const Reply whole = send("GET", key);
        QCOMPARE(whole.body.size(), part1.size() + part2.size());
        QVERIFY(whole.body.endsWith(part2));
        // The upload is gone once completed.
        QCOMPARE(send("PUT", key, part2, {{"partNumber", "3"}, {"uploadId", id}}).code(), QStringLiteral("NoSuchUpload"));

        // Parts below 5 MiB (but the last) are refused at completion; abort cleans up.
        const QByteArray id2 = send("POST", key, {}, {{"uploads", ""}}).element(QStringLiteral("UploadId")).toUtf8();
        const Reply small1 = send("PUT", key, part2, {{"partNumber", "1"}, {"uploadId", id2}});
        const Reply small2 = send("PUT", key, part2, {{"partNumber", "2"}, {"uploadId", id2}});
        const QByteArray tooSmall = "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>" + small1.headers.value("etag")
            + "</ETag></Part><Part><PartNumber>2</PartNumber><ETag>" + small2.headers.value("etag") + "</ETag></Part></CompleteMultipartUpload>";
        QCOMPARE(send("POST", key, tooSmall, {{"uploadId", id2}}).code(), QStringLiteral("EntityTooSmall"));
        const QByteArray wrongOrder = "<CompleteMultipartUpload><Part><PartNumber>2</PartNumber><ETag>x</ETag></Part><Part><PartNumber>1</PartNumber><ETag>x</ETag></Part></CompleteMultipartUpload>";
        QCOMPARE(send("POST", key, wrongOrder, {{"uploadId", id2}}).code(), QStringLiteral("InvalidPartOrder"));
        QCOMPARE(send("DELETE", key, {}, {{"uploadId", id2}}).status, 204);
        QCOMPARE(send("GET", key, {}, {{"uploadId", id2}}).code(), QStringLiteral("NoSuchUpload"));

        // The fault: every part fails while it is on.
        QCOMPARE(m_http->send("PATCH", QStringLiteral("/sandbox/v1/faults"), R"({"s3PartFailureRate":1})").status, 200);
        const QByteArray id3 = send("POST", key, {}, {{"uploads", ""}}).element(QStringLiteral("UploadId")).toUtf8();
        const Reply failing = send("PUT", key, part2, {{"partNumber", "1"}, {"uploadId", id3}});
        QCOMPARE(failing.status, 500);
        QCOMPARE(failing.code(), QStringLiteral("InternalError"));
        QCOMPARE(m_http->send("PATCH", QStringLiteral("/sandbox/v1/faults"), R"({"s3PartFailureRate":0})").status, 200);
        QCOMPARE(send("PUT", key, part2, {{"partNumber", "1"}, {"uploadId", id3}}).status, 200);
        QCOMPARE(send("DELETE", key, {}, {{"uploadId", id3}}).status, 204);
    }

    void listObjectsV2Pages()
    {
        for (int i = 0; i < 25; ++i) {
            QCOMPARE(send("PUT", QStringLiteral("/starforge/jobs/j%1/log.txt").arg(i, 2, 10, QLatin1Char('0')), "x").status, 200);
        }
        QStringList keys;
        QByteArray token;
        int pages = 0;
        do {
            S3::Pairs q{{"list-type", "2"}, {"prefix", "jobs/"}, {"max-keys", "10"}};
            if (!token.isEmpty()) q.append({"continuation-token", token});
            const Reply page = send("GET", QStringLiteral("/starforge"), {}, q);
            QCOMPARE(page.status, 200);
            const auto it = QRegularExpression(QStringLiteral("<Key>([^<]*)</Key>")).globalMatch(QString::fromUtf8(page.body));
            for (auto m = it; m.hasNext();) keys << m.next().captured(1);
            token = page.element(QStringLiteral("IsTruncated")) == QLatin1String("true") ? page.element(QStringLiteral("NextContinuationToken")).toUtf8() : QByteArray();
            ++pages;
        } while (!token.isEmpty() && pages < 10);
        QCOMPARE(pages, 3);
        QCOMPARE(keys.size(), 25);
        QCOMPARE(keys.first(), QStringLiteral("jobs/j00/log.txt"));
        const Reply folders = send("GET", QStringLiteral("/starforge"), {}, {{"list-type", "2"}, {"prefix", "jobs/"}, {"delimiter", "/"}, {"max-keys", "1000"}});
        QCOMPARE(folders.body.count("<CommonPrefixes>"), 25);
        QCOMPARE(folders.body.count("<Contents>"), 0);
    }

    void rayJobFetchesItsWorkingDirFromS3()
    {
        QProcess python;
        const QString zip = m_dir.filePath(QStringLiteral("capsule.zip"));
        python.start(QStringLiteral("python3"), {QStringLiteral("-c"), QStringLiteral(
            "import zipfile,sys\nz=zipfile.ZipFile(sys.argv[1],'w')\nz.writestr('c/run.py','print(\"ran from s3\")\\n')\nz.close()\n"), zip});
        QVERIFY(python.waitForFinished());
        QCOMPARE(send("PUT", QStringLiteral("/starforge/capsules/c.zip"), readAll(zip)).status, 200);
        const QString url = presign(QStringLiteral("/starforge/capsules/c.zip"), 3600).toString(QUrl::FullyEncoded);
        const QString image = QStringLiteral("rayproject/ray:2.55.1");
        const QJsonObject container{{QStringLiteral("name"), QStringLiteral("ray-head")}, {QStringLiteral("image"), image}};
        const QJsonObject head{{QStringLiteral("rayStartParams"), QJsonObject()},
                               {QStringLiteral("template"), QJsonObject{{QStringLiteral("spec"), QJsonObject{{QStringLiteral("containers"), QJsonArray{container}}}}}}};
        const QJsonObject spec{{QStringLiteral("entrypoint"), QStringLiteral("python3 run.py")},
                               {QStringLiteral("runtimeEnvYAML"), QStringLiteral("working_dir: '%1'\n").arg(url)},
                               {QStringLiteral("rayClusterSpec"), QJsonObject{{QStringLiteral("headGroupSpec"), head}}}};
        const QByteArray job = QJsonDocument(QJsonObject{{QStringLiteral("apiVersion"), QStringLiteral("ray.io/v1")}, {QStringLiteral("kind"), QStringLiteral("RayJob")},
                                                         {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), QStringLiteral("froms3")}}},
                                                         {QStringLiteral("spec"), spec}}).toJson();
        QCOMPARE(m_http->send("POST", QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs"), job).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(m_http->get(QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs/froms3")).json()
                                      .value(QStringLiteral("status")).toObject().value(QStringLiteral("jobStatus")).toString(), QStringLiteral("SUCCEEDED"), 30000);
        const QJsonArray pods = m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=job-name%3Dfroms3")).json().value(QStringLiteral("items")).toArray();
        const QString pod = pods.first().toObject().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString();
        // Ray says SUCCEEDED from its own record; the submitter pod's `ray job logs --follow` may
        // print the driver's last lines a moment later, as with the real operator.
        QTRY_VERIFY_WITH_TIMEOUT(m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods/%1/log").arg(pod)).body.contains("ran from s3"), 15000);
    }
};

QTEST_GUILESS_MAIN(TestSandboxS3)
#include "tst_sandbox_s3.moc"
