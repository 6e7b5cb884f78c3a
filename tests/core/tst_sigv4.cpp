// SigV4 against every case of the AWS signing test suite (header and query forms) and the S3
// documentation examples, byte for byte: canonical request, string to sign, signature.

#include "core/s3/sigv4.h"
#include "support/testutil.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace Starforge;
using namespace Starforge::S3;
using namespace Starforge::Testing;

namespace {

struct SuiteRequest
{
    SigningRequest request;
    QByteArray body;
};

// request.txt: "METHOD TARGET HTTP/1.1", header lines (continuations folded in), blank, body.
SuiteRequest parseRequest(const QByteArray &text)
{
    SuiteRequest out;
    const qsizetype blank = text.indexOf("\n\n");
    const QByteArray head = blank < 0 ? text : text.left(blank);
    out.body = blank < 0 ? QByteArray() : text.mid(blank + 2);
    const QList<QByteArray> lines = head.split('\n');
    const QByteArray first = lines.first();
    const QByteArray method = first.left(first.indexOf(' '));
    const QByteArray target = first.mid(method.size() + 1, first.lastIndexOf(' ') - method.size() - 1);
    out.request.method = method;
    const qsizetype question = target.indexOf('?');
    // The suite's paths are raw; an S3 client encodes a key once.
    out.request.path = SigV4::uriEncode(question < 0 ? target : target.left(question), false);
    if (question >= 0) {
        for (const QByteArray &pair : target.mid(question + 1).split('&')) {
            const qsizetype eq = pair.indexOf('=');
            out.request.query.append({QByteArray::fromPercentEncoding(eq < 0 ? pair : pair.left(eq)),
                                      QByteArray::fromPercentEncoding(eq < 0 ? QByteArray() : pair.mid(eq + 1))});
        }
    }
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray &line = lines[i];
        if (line.isEmpty()) {
            continue;
        }
        if ((line.at(0) == ' ' || line.at(0) == '\t') && !out.request.headers.isEmpty()) {
            out.request.headers.last().second += '\n' + line;
            continue;
        }
        const qsizetype colon = line.indexOf(':');
        out.request.headers.append({line.left(colon), line.mid(colon + 1)});
    }
    return out;
}

QByteArray file(const QString &dir, const QByteArray &name)
{
    return readAll(dir + u'/' + QString::fromLatin1(name));
}

} // namespace

class TestSigV4 : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void awsSuite_data()
    {
        QTest::addColumn<QString>("dir");
        QTest::addColumn<QString>("mode");
        const QDir suite(dataPath(QStringLiteral("sigv4/aws-c-auth-v4")));
        const QStringList cases = suite.entryList(QDir::Dirs | QDir::NoDotAndDotDot);
        QVERIFY(cases.size() >= 20);
        for (const QString &c : cases) {
            QTest::newRow(qPrintable(c + QStringLiteral(" header"))) << suite.filePath(c) << QStringLiteral("header");
            QTest::newRow(qPrintable(c + QStringLiteral(" query"))) << suite.filePath(c) << QStringLiteral("query");
        }
    }

    void awsSuite()
    {
        QFETCH(QString, dir);
        QFETCH(QString, mode);
        const QJsonObject context = QJsonDocument::fromJson(file(dir, "context.json")).object();
        const QJsonObject creds = context.value(QStringLiteral("credentials")).toObject();
        Credentials credentials{creds.value(QStringLiteral("access_key_id")).toString().toUtf8(),
                                creds.value(QStringLiteral("secret_access_key")).toString().toUtf8(),
                                creds.value(QStringLiteral("token")).toString().toUtf8()};
        SuiteRequest parsed = parseRequest(file(dir, "request.txt"));
        const bool signBody = context.value(QStringLiteral("sign_body")).toBool();
        parsed.request.payloadHash = signBody ? SigV4::sha256Hex(parsed.body) : SigV4::EmptyPayloadHash;
        SigningParams params;
        params.region = context.value(QStringLiteral("region")).toString();
        params.service = context.value(QStringLiteral("service")).toString();
        params.time = QDateTime::fromString(context.value(QStringLiteral("timestamp")).toString(), Qt::ISODate);
        params.normalizePath = context.value(QStringLiteral("normalize")).toBool();
        params.signPayloadHeader = signBody;
        params.omitSessionTokenFromSignature = context.value(QStringLiteral("omit_session_token")).toBool();
        const Signature s = mode == QLatin1String("header")
            ? SigV4::signHeaders(parsed.request, credentials, params)
            : SigV4::presign(parsed.request, credentials, params, context.value(QStringLiteral("expiration_in_seconds")).toInt());
        const QByteArray prefix = mode.toLatin1();
        QCOMPARE(s.canonicalRequest, file(dir, QByteArray(prefix + "-canonical-request.txt")));
        QCOMPARE(s.stringToSign, file(dir, QByteArray(prefix + "-string-to-sign.txt")));
        QCOMPARE(s.signature, file(dir, QByteArray(prefix + "-signature.txt")).trimmed());
    }

    void s3Examples_data()
    {
        QTest::addColumn<QJsonObject>("example");
        const QJsonObject all = QJsonDocument::fromJson(readAll(dataPath(QStringLiteral("sigv4/s3-examples.json")))).object();
        for (const QJsonValue &c : all.value(QStringLiteral("cases")).toArray()) {
            QJsonObject example = c.toObject();
            for (const char *key : {"credentials", "region", "service", "x_amz_date"}) {
                if (!example.contains(QLatin1String(key))) example.insert(QLatin1String(key), all.value(QLatin1String(key)));
            }
            QTest::newRow(qPrintable(example.value(QStringLiteral("name")).toString())) << example;
        }
    }

    void s3Examples()
    {
        QFETCH(QJsonObject, example);
        const QJsonObject creds = example.value(QStringLiteral("credentials")).toObject();
        const Credentials credentials{creds.value(QStringLiteral("access_key_id")).toString().toUtf8(),
                                      creds.value(QStringLiteral("secret_access_key")).toString().toUtf8(), {}};
        SigningRequest request;
        request.method = example.value(QStringLiteral("method")).toString().toUtf8();
        request.path = SigV4::uriEncode(example.value(QStringLiteral("path")).toString().toUtf8(), false);
        for (const QJsonValue &q : example.value(QStringLiteral("query")).toArray()) {
            request.query.append({q.toArray().at(0).toString().toUtf8(), q.toArray().at(1).toString().toUtf8()});
        }
        const QJsonObject headers = example.value(QStringLiteral("headers")).toObject();
        if (headers.isEmpty()) {
            request.headers.append({"Host", example.value(QStringLiteral("host")).toString().toUtf8()});
        }
        for (auto it = headers.begin(); it != headers.end(); ++it) {
            request.headers.append({it.key().toUtf8(), it.value().toString().toUtf8()});
        }
        SigningParams params;
        params.region = example.value(QStringLiteral("region")).toString();
        params.service = example.value(QStringLiteral("service")).toString();
        params.time = QDateTime::fromString(example.value(QStringLiteral("x_amz_date")).toString(), QStringLiteral("yyyyMMddTHHmmssZ"));
        params.time.setTimeSpec(Qt::UTC);
        const bool query = example.value(QStringLiteral("mode")).toString() == QLatin1String("query");
        request.payloadHash = query ? example.value(QStringLiteral("payload_hash")).toString().toUtf8()
                                    : SigV4::sha256Hex(example.value(QStringLiteral("body")).toString().toUtf8());
        const Signature s = query ? SigV4::presign(request, credentials, params, example.value(QStringLiteral("expires")).toInt())
                                  : SigV4::signHeaders(request, credentials, params);
        QCOMPARE(QString::fromUtf8(s.canonicalRequest), example.value(QStringLiteral("canonical_request")).toString());
        QCOMPARE(QString::fromUtf8(s.stringToSign), example.value(QStringLiteral("string_to_sign")).toString());
        QCOMPARE(QString::fromUtf8(s.signature), example.value(QStringLiteral("documented_signature")).toString());
        if (!query) {
            QCOMPARE(QString::fromUtf8(s.authorization), example.value(QStringLiteral("authorization")).toString());
        } else {
            QByteArrayList parts;
            for (const auto &[name, value] : s.addedQuery) parts << name + '=' + SigV4::uriEncode(value, true);
            const QString url = QStringLiteral("https://%1%2?%3").arg(example.value(QStringLiteral("host")).toString(),
                                                                      QString::fromUtf8(request.path), QString::fromUtf8(parts.join('&')));
            const QString expected = example.value(QStringLiteral("presigned_url")).toString(example.value(QStringLiteral("botocore_presigned_url")).toString());
            QCOMPARE(url, expected);
        }
    }
};

QTEST_APPLESS_MAIN(TestSigV4)
#include "tst_sigv4.moc"
