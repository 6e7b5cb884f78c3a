// Credentials never reach a log line: headers, bearer tokens, presigned-URL signatures, key=value
// forms, JWTs and registered secret values; and the installed handler applies it to qDebug & co.

#include "core/logging/logging.h"

#include <QTest>

using namespace Starforge;

namespace {
QStringList captured;
QtMessageHandler original = nullptr;
void capture(QtMsgType, const QMessageLogContext &, const QString &message)
{
    captured.append(message);
}
} // namespace

class TestRedaction : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void patterns_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<QString>("secret");
        QTest::addColumn<QString>("kept");
        QTest::newRow("authorization header") << QStringLiteral("Authorization: Bearer abc.def-123") << QStringLiteral("abc.def-123") << QStringLiteral("Authorization");
        QTest::newRow("bearer alone") << QStringLiteral("using bearer sk_live_9f8e7d6c") << QStringLiteral("sk_live_9f8e7d6c") << QStringLiteral("using bearer");
        QTest::newRow("sigv4 header") << QStringLiteral("authorization=AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/s3/aws4_request, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7")
                                      << QStringLiteral("AKIDEXAMPLE") << QStringLiteral("authorization");
        QTest::newRow("presigned url") << QStringLiteral("GET https://s3.lab/starforge/capsules/x.zip?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F2026&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
                                       << QStringLiteral("aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404") << QStringLiteral("capsules/x.zip");
        QTest::newRow("presigned credential") << QStringLiteral("url ...&X-Amz-Credential=AKIDEXAMPLE%2F2026&x=1") << QStringLiteral("AKIDEXAMPLE") << QStringLiteral("x=1");
        QTest::newRow("token key value") << QStringLiteral("config token=tok_1234567890 namespace=x") << QStringLiteral("tok_1234567890") << QStringLiteral("namespace=x");
        QTest::newRow("json secret key") << QStringLiteral(R"({"secret_key": "wJalrXUtnFEMI/K7MDENG", "bucket": "b"})") << QStringLiteral("wJalrXUtnFEMI/K7MDENG") << QStringLiteral("bucket");
        QTest::newRow("access key id") << QStringLiteral("access_key_id: AKIAIOSFODNN7EXAMPLE") << QStringLiteral("AKIAIOSFODNN7EXAMPLE") << QStringLiteral("access_key_id");
        QTest::newRow("password") << QStringLiteral("password=hunter2hunter2") << QStringLiteral("hunter2hunter2") << QStringLiteral("password");
        QTest::newRow("jwt") << QStringLiteral("sa token eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJpc3MiOiJrdWJlcm5ldGVzIn0.c2lnbmF0dXJl in use")
                             << QStringLiteral("eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ") << QStringLiteral("in use");
    }

    void patterns()
    {
        QFETCH(QString, line);
        QFETCH(QString, secret);
        QFETCH(QString, kept);
        const QString out = Logging::redact(line);
        QVERIFY2(!out.contains(secret), qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("<redacted>")), qPrintable(out));
        QVERIFY2(out.contains(kept), qPrintable(out));
    }

    void harmlessLinesAreUnchanged()
    {
        const QString line = QStringLiteral("GET /apis/ray.io/v1/namespaces/starforge/rayjobs?watch=1 200 (12 ms)");
        QCOMPARE(Logging::redact(line), line);
    }

    void registeredSecretsAnywhere()
    {
        Logging::addSecret(QStringLiteral("plain-looking-value-42"));
        Logging::addSecret(QStringLiteral("abc")); // too short to register safely
        QCOMPARE(Logging::redact(QStringLiteral("x plain-looking-value-42 y")), QStringLiteral("x <redacted> y"));
        QCOMPARE(Logging::redact(QStringLiteral("abc abc")), QStringLiteral("abc abc"));
    }

    void handlerRedactsMessages()
    {
        captured.clear();
        original = qInstallMessageHandler(capture);
        Logging::installRedactingMessageHandler();
        Logging::addSecret(QStringLiteral("handler-secret-value"));
        qWarning("Authorization: Bearer zzz-top-secret");
        qCWarning(lcConfig) << "value is" << QStringLiteral("handler-secret-value");
        qInstallMessageHandler(original);
        QCOMPARE(captured.size(), 2);
        QVERIFY2(!captured.at(0).contains(QStringLiteral("zzz-top-secret")), qPrintable(captured.at(0)));
        QVERIFY2(!captured.at(1).contains(QStringLiteral("handler-secret-value")), qPrintable(captured.at(1)));
    }
};

QTEST_GUILESS_MAIN(TestRedaction)
#include "tst_redaction.moc"
