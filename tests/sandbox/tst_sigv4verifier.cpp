// The sandbox S3 endpoint's own SigV4 check against published vectors, not against the app's
// signer: AWS's signing test suite (tests/data/sigv4/aws-c-auth-v4, both the header and the
// presigned form of every case, as signed requests on the wire) and AWS's S3 documentation
// examples (tests/data/sigv4/s3-examples.json); tests/data/sigv4/SOURCE.md says where they come
// from. Each signed request must verify with the intermediate values AWS publishes, a changed
// byte must not, and the S3 rules (payload hash, expiry, skew, one auth form) give S3's errors.

#include "sandbox/s3/sigv4verifier.h"
#include "support/testutil.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Sandbox;
using namespace Starforge::Testing;

namespace {

// A raw HTTP/1.1 request as the suite writes it, read the way the sandbox's HTTP server stores
// one: names lower-cased, a repeated header joined with ',', a folded line appended to the value.
Http::Request parseRaw(const QByteArray &text)
{
    Http::Request request;
    const qsizetype headEnd = text.indexOf("\n\n");
    const QList<QByteArray> lines = text.left(headEnd < 0 ? text.size() : headEnd).split('\n');
    request.body = headEnd < 0 ? QByteArray() : text.mid(headEnd + 2);
    const QByteArray first = lines.value(0);
    // "GET /example space/ HTTP/1.1": the target may hold spaces.
    request.method = first.left(first.indexOf(' '));
    request.target = first.mid(request.method.size() + 1, first.lastIndexOf(' ') - request.method.size() - 1);
    request.path = QString::fromUtf8(QByteArray::fromPercentEncoding(request.target.left(request.target.indexOf('?'))));
    QByteArray last;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray &line = lines[i];
        if (line.startsWith(' ') || line.startsWith('\t')) {
            request.headers[last] += ' ' + line;
            continue;
        }
        const qsizetype colon = line.indexOf(':');
        last = line.left(colon).trimmed().toLower();
        const QByteArray value = line.mid(colon + 1).trimmed();
        request.headers[last] = request.headers.contains(last) ? request.headers[last] + ',' + value : value;
    }
    return request;
}

QDateTime utc(const QString &text, const QString &format)
{
    QDateTime t = QDateTime::fromString(text, format);
    t.setTimeSpec(Qt::UTC);
    return t;
}

QByteArray file(const QString &dir, const QString &name)
{
    return readAll(dir + u'/' + name);
}

// The signed headers and payload hash a request names, as the verifier will read them.
QList<QByteArray> signedHeadersOf(const Http::Request &request)
{
    const QByteArray authorization = request.header("authorization");
    if (!authorization.isEmpty()) {
        const qsizetype at = authorization.indexOf("SignedHeaders=") + 14;
        return authorization.mid(at, authorization.indexOf(',', at) - at).split(';');
    }
    for (const auto &[name, value] : SigV4Verifier::decodeQuery(request.target.mid(request.target.indexOf('?') + 1))) {
        if (name == "X-Amz-SignedHeaders") return value.split(';');
    }
    return {};
}

// An S3 example from s3-examples.json as the request that reaches the server.
Http::Request exampleRequest(const QJsonObject &example)
{
    Http::Request request;
    request.method = example.value(QStringLiteral("method")).toString().toUtf8();
    if (example.value(QStringLiteral("mode")).toString() == u"query") {
        const QString url = example.value(QStringLiteral("presigned_url")).toString(example.value(QStringLiteral("botocore_presigned_url")).toString());
        const qsizetype pathAt = url.indexOf(u'/', url.indexOf(QStringLiteral("//")) + 2);
        request.target = url.mid(pathAt).toUtf8();
        request.headers.insert("host", example.value(QStringLiteral("host")).toString().toUtf8());
        return request;
    }
    QByteArrayList query;
    for (const QJsonValue &q : example.value(QStringLiteral("query")).toArray()) {
        query << QUrl::toPercentEncoding(q.toArray().at(0).toString()) + '=' + QUrl::toPercentEncoding(q.toArray().at(1).toString());
    }
    request.target = example.value(QStringLiteral("path")).toString().toUtf8() + (query.isEmpty() ? QByteArray() : '?' + query.join('&'));
    const QJsonObject headers = example.value(QStringLiteral("headers")).toObject();
    for (auto it = headers.begin(); it != headers.end(); ++it) {
        request.headers.insert(it.key().toLower().toUtf8(), it.value().toString().toUtf8());
    }
    request.headers.insert("authorization", example.value(QStringLiteral("authorization")).toString().toUtf8());
    request.body = example.value(QStringLiteral("body")).toString().toUtf8();
    return request;
}

} // namespace

class TestSigV4Verifier : public QObject
{
    Q_OBJECT

    QJsonObject m_examples;

    QJsonObject example(const QString &name) const
    {
        for (const QJsonValue &c : m_examples.value(QStringLiteral("cases")).toArray()) {
            if (c[QStringLiteral("name")].toString() == name) return c.toObject();
        }
        return {};
    }

    // The examples' credentials and time, or an example's own.
    SigV4Verifier s3Verifier(const QDateTime &now, const QJsonObject &c = {}) const
    {
        const QJsonObject creds = c.value(QStringLiteral("credentials")).toObject(m_examples.value(QStringLiteral("credentials")).toObject());
        return SigV4Verifier({creds.value(QStringLiteral("access_key_id")).toString().toUtf8(),
                              creds.value(QStringLiteral("secret_access_key")).toString().toUtf8(), true, [now] { return now; }, 15 * 60});
    }

    QDateTime examplesTime(const QJsonObject &c = {}) const
    {
        return utc(c.value(QStringLiteral("x_amz_date")).toString(m_examples.value(QStringLiteral("x_amz_date")).toString()),
                   QStringLiteral("yyyyMMdd'T'HHmmss'Z'"));
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_examples = QJsonDocument::fromJson(readAll(dataPath(QStringLiteral("sigv4/s3-examples.json")))).object();
        QVERIFY(m_examples.value(QStringLiteral("cases")).toArray().size() >= 6);
    }

    void awsSuite_data()
    {
        QTest::addColumn<QString>("dir");
        QTest::addColumn<QString>("mode");
        const QDir suite(dataPath(QStringLiteral("sigv4/aws-c-auth-v4")));
        const QStringList cases = suite.entryList(QDir::Dirs | QDir::NoDotAndDotDot);
        QCOMPARE(cases.size(), 20);
        for (const QString &c : cases) {
            QTest::newRow(qPrintable(c + QStringLiteral(" header"))) << suite.filePath(c) << QStringLiteral("header");
            QTest::newRow(qPrintable(c + QStringLiteral(" query"))) << suite.filePath(c) << QStringLiteral("query");
        }
    }

    // Every case of the suite, as the signed request that would arrive, verifies; the verifier's
    // canonical request and string to sign are AWS's. The suite signs for the service "service",
    // so the verifier runs with the general rules (the payload hash is the body's), not S3's.
    void awsSuite()
    {
        QFETCH(QString, dir);
        QFETCH(QString, mode);
        const QJsonObject context = QJsonDocument::fromJson(file(dir, QStringLiteral("context.json"))).object();
        const QJsonObject creds = context.value(QStringLiteral("credentials")).toObject();
        const QDateTime now = QDateTime::fromString(context.value(QStringLiteral("timestamp")).toString(), Qt::ISODate);
        const SigV4Verifier verifier({creds.value(QStringLiteral("access_key_id")).toString().toUtf8(),
                                      creds.value(QStringLiteral("secret_access_key")).toString().toUtf8(),
                                      false, [now] { return now; }, 15 * 60});
        Http::Request request = parseRaw(file(dir, mode + QStringLiteral("-signed-request.txt")));

        const QList<QByteArray> signedHeaders = signedHeadersOf(request);
        QVERIFY(!signedHeaders.isEmpty());
        const QByteArray payloadHash = request.header("x-amz-content-sha256").isEmpty() ? SigV4Verifier::sha256Hex(request.body)
                                                                                        : request.header("x-amz-content-sha256");
        const QByteArray canonical = SigV4Verifier::canonicalRequest(request, signedHeaders, payloadHash);
        if (!(dir.endsWith(QLatin1String("post-sts-header-after")) && mode == u"query")) {
            QCOMPARE(canonical, file(dir, mode + QStringLiteral("-canonical-request.txt")));
        }
        const QByteArray scope = "20150830/" + context.value(QStringLiteral("region")).toString().toUtf8() + '/'
            + context.value(QStringLiteral("service")).toString().toUtf8() + "/aws4_request";
        if (!(dir.endsWith(QLatin1String("post-sts-header-after")) && mode == u"query")) {
            QCOMPARE(SigV4Verifier::stringToSign("20150830T123600Z", scope, canonical), file(dir, mode + QStringLiteral("-string-to-sign.txt")));
        }

        const auto verdict = verifier.verify(request);
        if (dir.endsWith(QLatin1String("post-sts-header-after")) && mode == u"query") {
            // This case signs without the session token and adds X-Amz-Security-Token to the query
            // afterwards, a form some services take; S3 signs every query parameter but the
            // signature, so the sandbox refuses it, as S3 would.
            QVERIFY(verdict);
            QCOMPARE(verdict->code, QByteArray("SignatureDoesNotMatch"));
            return;
        }
        QVERIFY2(!verdict, verdict ? qPrintable(QString::fromLatin1(verdict->code) + u' ' + verdict->message) : "");

        // One byte of a signed header changed, and the same signature no longer holds.
        request.headers["host"] = "example.amazonaws.org";
        const auto tampered = verifier.verify(request);
        QVERIFY(tampered);
        QCOMPARE(tampered->status, 403);
        QCOMPARE(tampered->code, QByteArray("SignatureDoesNotMatch"));
    }

    void s3Examples_data()
    {
        QTest::addColumn<QString>("name");
        for (const QJsonValue &c : m_examples.value(QStringLiteral("cases")).toArray()) {
            QTest::newRow(qPrintable(c[QStringLiteral("name")].toString())) << c[QStringLiteral("name")].toString();
        }
    }

    // AWS's S3 examples (header and presigned) verify under S3's rules, with the canonical
    // request and string to sign the documentation gives.
    void s3Examples()
    {
        QFETCH(QString, name);
        const QJsonObject c = example(name);
        const Http::Request request = exampleRequest(c);
        const QDateTime signedAt = examplesTime(c);
        const bool presigned = c.value(QStringLiteral("mode")).toString() == u"query";
        const QByteArray payloadHash = presigned ? QByteArrayLiteral("UNSIGNED-PAYLOAD") : request.header("x-amz-content-sha256");
        const QByteArray canonical = SigV4Verifier::canonicalRequest(request, signedHeadersOf(request), payloadHash);
        QCOMPARE(QString::fromUtf8(canonical), c.value(QStringLiteral("canonical_request")).toString());
        const auto verdict = s3Verifier(signedAt.addSecs(30), c).verify(request);
        QVERIFY2(!verdict, verdict ? qPrintable(QString::fromLatin1(verdict->code) + u' ' + verdict->message) : "");
    }

    void s3Refusals()
    {
        const QDateTime signedAt = examplesTime();

        // The PUT's body is not the one whose hash was signed.
        Http::Request put = exampleRequest(example(QStringLiteral("s3-put-object-dollar-key")));
        QVERIFY(!s3Verifier(signedAt).verify(put));
        put.body = "Welcome to Amazon S3!";
        auto refused = s3Verifier(signedAt).verify(put);
        QVERIFY(refused);
        QCOMPARE(refused->status, 400);
        QCOMPARE(refused->code, QByteArray("XAmzContentSHA256Mismatch"));

        // A header-signed request too far from the server's clock.
        const Http::Request get = exampleRequest(example(QStringLiteral("s3-get-object-range")));
        QVERIFY(!s3Verifier(signedAt.addSecs(15 * 60)).verify(get));
        refused = s3Verifier(signedAt.addSecs(15 * 60 + 1)).verify(get);
        QVERIFY(refused);
        QCOMPARE(refused->code, QByteArray("RequestTimeTooSkewed"));

        // S3 wants x-amz-content-sha256 on header-signed requests.
        Http::Request unhashed = get;
        unhashed.headers.remove("x-amz-content-sha256");
        refused = s3Verifier(signedAt).verify(unhashed);
        QVERIFY(refused);
        QCOMPARE(refused->code, QByteArray("InvalidRequest"));

        // A presigned URL past X-Amz-Expires; the same one within it.
        const Http::Request url = exampleRequest(example(QStringLiteral("s3-presigned-get")));
        QVERIFY(!s3Verifier(signedAt.addSecs(86400)).verify(url));
        refused = s3Verifier(signedAt.addSecs(86401)).verify(url);
        QVERIFY(refused);
        QCOMPARE(refused->status, 403);
        QCOMPARE(refused->message, QStringLiteral("Request has expired"));

        // Only one way of signing per request; the presigned form names its algorithm.
        Http::Request both = url;
        both.headers.insert("authorization", get.header("authorization"));
        refused = s3Verifier(signedAt).verify(both);
        QVERIFY(refused);
        QCOMPARE(refused->code, QByteArray("InvalidArgument"));
        Http::Request otherAlgorithm = url;
        otherAlgorithm.target.replace("X-Amz-Algorithm=AWS4-HMAC-SHA256", "X-Amz-Algorithm=AWS4-HMAC-SHA1");
        refused = s3Verifier(signedAt).verify(otherAlgorithm);
        QVERIFY(refused);
        QCOMPARE(refused->code, QByteArray("AuthorizationQueryParametersError"));

        // Another secret: the signature does not match, and S3 says what it signed.
        const SigV4Verifier wrongSecret({"AKIAIOSFODNN7EXAMPLE", "not-the-secret", true, [signedAt] { return signedAt; }, 900});
        refused = wrongSecret.verify(get);
        QVERIFY(refused);
        QCOMPARE(refused->code, QByteArray("SignatureDoesNotMatch"));
        QCOMPARE(refused->details.value(1).second, example(QStringLiteral("s3-get-object-range")).value(QStringLiteral("string_to_sign")).toString());
        // An unknown access key.
        const SigV4Verifier otherKey({"AKIDNOBODY", "x", true, [signedAt] { return signedAt; }, 900});
        QCOMPARE(otherKey.verify(get)->code, QByteArray("InvalidAccessKeyId"));
    }
};

QTEST_APPLESS_MAIN(TestSigV4Verifier)
#include "tst_sigv4verifier.moc"
