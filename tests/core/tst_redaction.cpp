// Credentials never reach a log line: headers, bearer tokens, presigned-URL signatures, key=value
// forms, JWTs, known token formats, long base64 and hex, PEM private keys and registered secret
// values; and the installed handler applies it to qDebug & co. Prose around the same words
// ("Use a bearer token instead", "token: missing") and public digests stay as they are.

#include "core/logging/logging.h"

#include <QTest>

using namespace Starforge;

namespace {

// Realistic shapes and lengths (made up; none of them grants anything).
const QString eksToken = QStringLiteral(
    "k8s-aws-v1.aHR0cHM6Ly9zdHMudXMtZWFzdC0xLmFtYXpvbmF3cy5jb20vP0FjdGlvbj1HZXRDYWxsZXJJZGVudGl0eSZWZXJzaW9uPTIwMTEtMDYtMTUm"
    "WC1BbXotQWxnb3JpdGhtPUFXUzQtSE1BQy1TSEEyNTYmWC1BbXotQ3JlZGVudGlhbD1BU0lBWlEzRFFYS1E3RVhBTVBMRSUyRjIwMjQwNTAxJTJGdXMt"
    "ZWFzdC0xJTJGc3RzJTJGYXdzNF9yZXF1ZXN0JlgtQW16LURhdGU9MjAyNDA1MDFUMTAxNTAwWiZYLUFtei1FeHBpcmVzPTYwJlgtQW16LVNpZ25lZEhl"
    "YWRlcnM9aG9zdCUzQngtazhzLWF3cy1pZCZYLUFtei1TaWduYXR1cmU9M2YxYzBhOGU1YjdkOWYyYTRjNmU4YjBkMWYzYTVjN2U5YjJkNGY2YThjMGUx"
    "YjNkNWY3YTljMmU0YjZkOGYwYQ");
const QString gkeToken = QStringLiteral(
    "ya29.a0AfB_byu89k1d5A0hecBlmqSnCcgCTD76lcnuh1Ls_2WlFkKAve-Tnmo66IV9B4-B8P6K_CSdzvEFzo9JdoMLPfByFOGyTgeWBefONSix0Ez776h"
    "EHDZ2gxNbO1NkO63SzeQQz3cyXu_W0a2C-mlPJn_e8a4R-KNoH7K_GqVMuzkyIcY6aBAcqyaHiC");
const QString saJwt = QStringLiteral(
    "eyJhbGciOiJSUzI1NiIsImtpZCI6IlhrM3c5eVFwMkxyVDBiWjh2SG5DNG1KZDZzR2ExZlVlNW9XaU43Y0toWXMifQ."
    "eyJhdWQiOlsiaHR0cHM6Ly9rdWJlcm5ldGVzLmRlZmF1bHQuc3ZjLmNsdXN0ZXIubG9jYWwiXSwiZXhwIjoxNzE0NTYxMjAwLCJpYXQiOjE3MTQ1NTc2MDAs"
    "ImlzcyI6Imh0dHBzOi8va3ViZXJuZXRlcy5kZWZhdWx0LnN2Yy5jbHVzdGVyLmxvY2FsIiwia3ViZXJuZXRlcy5pbyI6eyJuYW1lc3BhY2UiOiJzdGFyZm9y"
    "Z2UiLCJzZXJ2aWNlYWNjb3VudCI6eyJuYW1lIjoic3RhcmZvcmdlLXJ1bm5lciIsInVpZCI6IjZmMGUyYzFhLTNiNGQtNGU1Zi04YTliLTBjMWQyZTNmNGE1"
    "YiJ9fSwibmJmIjoxNzE0NTU3NjAwLCJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6c3RhcmZvcmdlOnN0YXJmb3JnZS1ydW5uZXIifQ."
    "xHScaiDb89sR6WNYCLvkMTEXPdsa3LXL7KETTUa1FtOz0hPxYt4v3CsYKbx0Hb0rFzsCS1epVzHwFz5ESAVYl0DGPAQoKm5S2k0KSFmhm4oJhwn9CPOqzi5l"
    "biB8AZK1Tcr0NiBoVv1lubUZFKjACMiYNP__tCAIg1Pq19weZnUcXWxtJSDaS0Lhl2rpyZqf6DCsC400LSefCWFVhcu-E_Qfo81vqfl0B0Aa3TAbRDMZezjB"
    "6HpnoqfeFkSgpsPfK_GmfiyTkHswBbtKpru2nfOYLQ2XQZUb7faS2kEMdvldHNBLMUSEx3undUWrsy1em0TsN1w-tSwf23XZ3Iw0NB");
const QString awsSecretKey = QStringLiteral("f7ot6IXkKMvrjHa3Ni3epJ26fvjuo4LfrBfL4mtU");
const QString pemBody = QStringLiteral("vLxr/QTMvzlYEqlgUsnnR23wAink5v/mqomG7V/t1bCIr8CiE++uwfmzowiqibJZ");
const QString pemBlock = QStringLiteral("-----BEGIN PRIVATE KEY-----\n"
                                        "vLxr/QTMvzlYEqlgUsnnR23wAink5v/mqomG7V/t1bCIr8CiE++uwfmzowiqibJZ\n"
                                        "snWNB1l+vvZZ1UxnKn+Y5Hnf4HxHPqJYZw55O7PDLssjO+hLf3bT/GFkCVAUMXxy\n"
                                        "RuNTKBJEGB7xB4vA5bPObEyiIVAmiKuBAGZaRe36g4wk6nAWeo5ghRwNN/71Vufy\n"
                                        "-----END PRIVATE KEY-----");
const QString capsuleSha = QStringLiteral("528b5fe19b5fbee17098a7f3b1eb496271ff4a04293e91af966a3b70770d8666");
const QString hexKey = QStringLiteral("bae47e559b563dafabdba5e2ef29643862e13709d40f139cd804b692a3d184ea");

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

        // Authorization headers, also as JSON, quoted and as Go prints a header map.
        QTest::newRow("authorization json") << QStringLiteral("{\"Authorization\": \"Bearer sk-proj-Q8vXz2LmN4pR7tY1\", \"Accept\": \"text/plain\"}")
                                            << QStringLiteral("sk-proj-Q8vXz2LmN4pR7tY1") << QStringLiteral("\"Accept\": \"text/plain\"");
        QTest::newRow("authorization go map") << QStringLiteral("headers map[Authorization:[Bearer %1] User-Agent:[starforge]]").arg(saJwt)
                                              << saJwt.left(40) << QStringLiteral("User-Agent:[starforge]");
        QTest::newRow("authorization word after scheme") << QStringLiteral("'authorization': 'Bearer zzz-top-secret'")
                                                         << QStringLiteral("zzz-top-secret") << QStringLiteral("'authorization': 'Bearer ");
        QTest::newRow("authorization raw value") << QStringLiteral("Authorization: 9f8e7d6c5b4a3f2e1d0c") << QStringLiteral("9f8e7d6c5b4a3f2e1d0c")
                                                 << QStringLiteral("Authorization: ");
        QTest::newRow("proxy authorization basic") << QStringLiteral("Proxy-Authorization: Basic YWxpY2U6czNjcjN0LVBhNTU=")
                                                   << QStringLiteral("YWxpY2U6czNjcjN0LVBhNTU=") << QStringLiteral("Proxy-Authorization: Basic");
        QTest::newRow("basic credentials alone") << QStringLiteral("retrying with basic YWxpY2U6czNjcjN0LVBhNTU= now")
                                                 << QStringLiteral("YWxpY2U6czNjcjN0LVBhNTU=") << QStringLiteral("now");
        QTest::newRow("sigv4 without label") << QStringLiteral("signed: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20240501/us-east-1/s3/aws4_request, "
                                                               "SignedHeaders=host;x-amz-date, Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024 (retry 2)")
                                             << QStringLiteral("fe5f80f77d5fa3beca038a248ff027d0") << QStringLiteral("(retry 2)");

        // Bearer tokens by their shape.
        QTest::newRow("bearer jwt") << QStringLiteral("using bearer %1").arg(saJwt) << saJwt.mid(100, 40) << QStringLiteral("using bearer");
        QTest::newRow("bearer eks") << QStringLiteral("Bearer %1 expires in 14m").arg(eksToken) << eksToken.mid(11, 40) << QStringLiteral("expires in 14m");
        QTest::newRow("bearer long random") << QStringLiteral("bearer Zk3PqW9xLmR7tYvB2nC5dF8g.") << QStringLiteral("Zk3PqW9xLmR7tYvB2nC5dF8g")
                                            << QStringLiteral("bearer <redacted>.");

        // Tokens with a known shape wherever they stand.
        QTest::newRow("eks exec credential") << QStringLiteral(R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","status":{"expirationTimestamp":"2024-05-01T10:15:00Z","token":"%1"}})").arg(eksToken)
                                             << eksToken.mid(11, 40) << QStringLiteral("2024-05-01T10:15:00Z");
        QTest::newRow("eks token alone") << QStringLiteral("aws eks get-token printed %1 for starforge-prod").arg(eksToken) << eksToken.right(40)
                                         << QStringLiteral("for starforge-prod");
        QTest::newRow("gke access token") << QStringLiteral(R"(gke-gcloud-auth-plugin: {"access_token": "%1", "token_expiry": "2024-05-01T11:00:00Z"})").arg(gkeToken)
                                          << gkeToken.mid(5, 40) << QStringLiteral("token_expiry");
        QTest::newRow("gke token alone") << QStringLiteral("cached %1 (59 min left)").arg(gkeToken) << gkeToken.mid(20, 40) << QStringLiteral("(59 min left)");
        QTest::newRow("serviceaccount jwt") << QStringLiteral("kubectl create token starforge-runner returned %1").arg(saJwt) << saJwt.right(40)
                                            << QStringLiteral("kubectl create token starforge-runner returned");

        // Keys and secrets in key=value forms.
        QTest::newRow("aws ini") << QStringLiteral("[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = %1\nregion = eu-west-1").arg(awsSecretKey)
                                 << awsSecretKey << QStringLiteral("region = eu-west-1");
        QTest::newRow("aws secret alone") << QStringLiteral("S3 rejected the key pair %1 for bucket starforge").arg(awsSecretKey) << awsSecretKey
                                          << QStringLiteral("for bucket starforge");
        QTest::newRow("aws example secret") << QStringLiteral("secret_access_key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
                                            << QStringLiteral("wJalrXUtnFEMI/K7MDENG") << QStringLiteral("secret_access_key: ");
        QTest::newRow("session token header") << QStringLiteral("X-Amz-Security-Token: FwoGZXIvYXdzEBYaDHq3cB7Vn2Lp9kR4sCKAAQ") << QStringLiteral("FwoGZXIvYXdzEBYaDHq3cB7Vn2Lp9kR4sCKAAQ")
                                              << QStringLiteral("X-Amz-Security-Token");
        QTest::newRow("json password") << QStringLiteral(R"({"username": "alice", "password": "c0rrect-h0rse!battery"})") << QStringLiteral("c0rrect")
                                       << QStringLiteral(R"("username": "alice")");
        QTest::newRow("client key data") << QStringLiteral("    client-key-data: LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCk1IY0NBUUVFSUw=")
                                         << QStringLiteral("LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0t") << QStringLiteral("client-key-data: ");
        QTest::newRow("env token") << QStringLiteral("FORGE_K8S_TOKEN=%1 starforge-cli jobs").arg(gkeToken) << gkeToken.mid(5, 40)
                                   << QStringLiteral("FORGE_K8S_TOKEN=<redacted> starforge-cli jobs");
        QTest::newRow("token flag") << QStringLiteral("kubectl --token Zk3PqW9xLmR7tYvB get pods") << QStringLiteral("Zk3PqW9xLmR7tYvB")
                                    << QStringLiteral("kubectl --token <redacted> get pods");
        QTest::newRow("from literal") << QStringLiteral("kubectl create secret generic s3 --from-literal=secret_key=%1").arg(awsSecretKey) << awsSecretKey
                                      << QStringLiteral("--from-literal=secret_key=");
        QTest::newRow("proxy userinfo") << QStringLiteral("proxy http://alice:pr0xy-Pa55@proxy.lab:3128 refused") << QStringLiteral("pr0xy-Pa55")
                                        << QStringLiteral("http://alice:<redacted>@proxy.lab:3128 refused");

        // PEM private keys, with line breaks and as JSON escapes them.
        QTest::newRow("pem block") << QStringLiteral("key file:\n%1\nend").arg(pemBlock) << pemBody
                                   << QStringLiteral("-----BEGIN PRIVATE KEY-----<redacted>-----END PRIVATE KEY-----\nend");
        QTest::newRow("pem rsa in json") << QStringLiteral(R"({"key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn\n-----END RSA PRIVATE KEY-----\n", "x": 1})")
                                         << QStringLiteral("MIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn") << QStringLiteral("\\n\", \"x\": 1}");
        QTest::newRow("pem cut off") << QStringLiteral("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ")
                                     << QStringLiteral("b3BlbnNzaC1rZXkt") << QStringLiteral("-----BEGIN OPENSSH PRIVATE KEY-----");

        // Long base64 and hex.
        QTest::newRow("long base64") << QStringLiteral("unexpected blob snWNB1l+vvZZ1UxnKn+Y5Hnf4HxHPqJYZw55O7PDLssjO+hLf3bT/GFkCVAUMXxy in reply")
                                     << QStringLiteral("snWNB1l+vvZZ1UxnKn") << QStringLiteral("in reply");
        QTest::newRow("long hex") << QStringLiteral("api key %1 rejected").arg(hexKey) << hexKey << QStringLiteral("api key <redacted> rejected");
        QTest::newRow("sandbox exec token") << QStringLiteral("exec plugin printed sfx1.alice.1714561200.%1").arg(hexKey) << hexKey
                                            << QStringLiteral("sfx1.alice.1714561200.<redacted>");
    }

    // Ordinary sentences and public values pass untouched, whatever words they share with the
    // labels of credentials.
    void prose_data()
    {
        QTest::addColumn<QString>("line");
        QTest::newRow("bearer token instead") << QStringLiteral("Use a bearer token instead");
        QTest::newRow("kubeconfig advice")
            << QStringLiteral("context 'eks' signs in with auth-provider, which Starforge does not support yet. Use a bearer token instead, e.g. a "
                              "ServiceAccount token from `kubectl create token <serviceaccount> -n <namespace>`, and set it as FORGE_K8S_TOKEN.");
        QTest::newRow("a bearer token") << QStringLiteral("the cluster wants a bearer token");
        QTest::newRow("bearer auth") << QStringLiteral("Bearer auth failed: 401 Unauthorized");
        QTest::newRow("bearer placeholder") << QStringLiteral("send Authorization: Bearer <token> or Authorization: Bearer $FORGE_K8S_TOKEN");
        QTest::newRow("keychain") << QStringLiteral("set the token in the keychain");
        QTest::newRow("token missing") << QStringLiteral("token: missing");
        QTest::newRow("token none") << QStringLiteral("token: (none), tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token");
        QTest::newRow("token variable") << QStringLiteral("token=$FORGE_K8S_TOKEN, secret_key=FORGE_S3_SECRET_KEY, password=%1");
        QTest::newRow("secret key wrong") << QStringLiteral("the secret key is wrong");
        QTest::newRow("secret key label") << QStringLiteral("secret key: not set; access_key: required");
        QTest::newRow("password expired") << QStringLiteral("password expired");
        QTest::newRow("password colon") << QStringLiteral("password: expired, authorization: denied");
        QTest::newRow("json placeholders") << QStringLiteral(R"({"token": "", "password": "<redacted>", "secret": "starforge-s3"})");
        QTest::newRow("capsule address") << QStringLiteral("GET https://s3.lab/starforge/capsules/%1.zip 200 (12 ms)").arg(capsuleSha);
        QTest::newRow("capsule sha256") << QStringLiteral(R"({"sha256": "%1", "zip": "capsule.zip"})").arg(capsuleSha);
        QTest::newRow("capsule mount") << QStringLiteral("runner reads /capsule/capsule-%1.zip").arg(capsuleSha);
        QTest::newRow("capsule check") << QStringLiteral("The Capsule's SHA-256 \"%1\" is not what the bucket has.").arg(capsuleSha);
        QTest::newRow("content sha256 header") << QStringLiteral("x-amz-content-sha256: %1").arg(capsuleSha);
        QTest::newRow("image digest") << QStringLiteral("pulled rayproject/ray@sha256:%1").arg(capsuleSha);
        QTest::newRow("etag") << QStringLiteral("ETag: \"d41d8cd98f00b204e9800998ecf8427e\"");
        QTest::newRow("zero commit") << QStringLiteral(R"("gitCommit": "0000000000000000000000000000000000000000")");
        QTest::newRow("kubectl create token") << QStringLiteral("kubectl create token starforge-runner -n starforge --duration=1h");
        QTest::newRow("kubectl secret") << QStringLiteral("kubectl get secret starforge-s3 -o jsonpath='{.data.secret_key}' | base64 -d");
        QTest::newRow("kubectl set credentials") << QStringLiteral("kubectl config set-credentials alice --token=<token> --client-key=alice.key");
        QTest::newRow("kubectl describe") << QStringLiteral("Mounts: /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-7x2kq (ro)");
        QTest::newRow("pod names") << QStringLiteral("RayCluster/starforge-abc123-raycluster-xyz9k head pod starforge-abc123-head-4hx2p is Running");
        QTest::newRow("mixed case path") << QStringLiteral("reading /home/alice/Projects/MyModel2024/TrainingRun/checkpoint_00012/model.safetensors");
        QTest::newRow("job and uid") << QStringLiteral("job k3x9qa uid 6f0e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b submitted as raysubmit_Q8vXz2LmN4pR7tY1");
        QTest::newRow("basic auth words") << QStringLiteral("Basic authentication is not supported; use Basic auth over TLS only");
        QTest::newRow("camel case") << QStringLiteral("serviceAccountToken: projected, ServiceAccountTokenVolumeProjection enabled");
    }

    void prose()
    {
        QFETCH(QString, line);
        QCOMPARE(Logging::redact(line), line);
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
