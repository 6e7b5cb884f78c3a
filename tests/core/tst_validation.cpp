// Every validation rule: accepted values with their canonical form, rejected values with a
// message that says what to write instead.

#include "core/config/validation.h"
#include "support/testutil.h"

#include <QTest>

using namespace Starforge;

namespace {
using Validator = std::function<Result<QString>(const QString &)>;
}

class TestValidation : public QObject
{
    Q_OBJECT

private:
    void addRows()
    {
        QTest::addColumn<QString>("rule");
        QTest::addColumn<QString>("input");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("expected"); // canonical value, or a fragment of the message
    }
    static Validator validator(const QString &rule)
    {
        using namespace Validation;
        if (rule == u"url") return url;
        if (rule == u"quantity") return quantity;
        if (rule == u"labelKey") return labelKey;
        if (rule == u"dns1123Label") return dns1123Label;
        if (rule == u"dns1123Subdomain") return dns1123Subdomain;
        if (rule == u"integer") return [](const QString &t) { return integer(t, 0, 604800); };
        if (rule == u"boolean") return boolean;
        if (rule == u"absolutePath") return absolutePath;
        if (rule == u"imageReference") return imageReference;
        if (rule == u"bucketName") return bucketName;
        if (rule == u"version") return version;
        if (rule == u"caFile") return caFile;
        if (rule == u"caData") return caData;
        if (rule == u"profileName") return profileName;
        if (rule == u"proxyUrl") return proxyUrl;
        return {};
    }
    static void row(const char *name, const char *rule, const QString &input, bool valid, const QString &expected)
    {
        QTest::newRow(name) << QString::fromLatin1(rule) << input << valid << expected;
    }

private Q_SLOTS:
    void rules_data()
    {
        addRows();
        const QString s; // readability
        // URLs
        row("url https port", "url", QStringLiteral("https://api.example.com:6443"), true, QStringLiteral("https://api.example.com:6443"));
        row("url trailing slash trimmed", "url", QStringLiteral(" https://10.0.0.1:6443/ "), true, QStringLiteral("https://10.0.0.1:6443"));
        row("url http path", "url", QStringLiteral("http://127.0.0.1:7480/s3"), true, QStringLiteral("http://127.0.0.1:7480/s3"));
        row("url ipv6", "url", QStringLiteral("https://[::1]:6443"), true, QStringLiteral("https://[::1]:6443"));
        row("url empty", "url", s, false, QStringLiteral("a URL is required"));
        row("url no scheme", "url", QStringLiteral("api.example.com:6443"), false, QStringLiteral("write it as https://api.example.com:6443"));
        row("url ftp", "url", QStringLiteral("ftp://files.example.com"), false, QStringLiteral("only https:// and http://"));
        row("url user info", "url", QStringLiteral("https://admin:pw@k8s.example"), false, QStringLiteral("carries user credentials"));
        row("url query", "url", QStringLiteral("https://k8s.example/?a=b"), false, QStringLiteral("query or fragment"));
        row("url no host", "url", QStringLiteral("https:///path"), false, QStringLiteral("no host name"));
        // Quantities
        row("quantity Gi", "quantity", QStringLiteral("64Gi"), true, QStringLiteral("64Gi"));
        row("quantity milli", "quantity", QStringLiteral("500m"), true, QStringLiteral("500m"));
        row("quantity decimal", "quantity", QStringLiteral("1.5G"), true, QStringLiteral("1.5G"));
        row("quantity exponent", "quantity", QStringLiteral("1e3"), true, QStringLiteral("1e3"));
        row("quantity plain", "quantity", QStringLiteral("1024"), true, QStringLiteral("1024"));
        row("quantity GB", "quantity", QStringLiteral("64GB"), false, QStringLiteral("Kubernetes writes 64Gi (binary) or 64G"));
        row("quantity word", "quantity", QStringLiteral("lots"), false, QStringLiteral("e.g. 64Gi"));
        row("quantity negative", "quantity", QStringLiteral("-1Gi"), false, QStringLiteral("negative"));
        row("quantity empty", "quantity", s, false, QStringLiteral("a quantity is required"));
        // Label keys
        row("label prefixed", "labelKey", QStringLiteral("starforge/gpu-series"), true, QStringLiteral("starforge/gpu-series"));
        row("label dotted prefix", "labelKey", QStringLiteral("nvidia.com/gpu.product"), true, QStringLiteral("nvidia.com/gpu.product"));
        row("label bare", "labelKey", QStringLiteral("gpu"), true, QStringLiteral("gpu"));
        row("label two slashes", "labelKey", QStringLiteral("a/b/c"), false, QStringLiteral("more than one '/'"));
        row("label bad prefix", "labelKey", QStringLiteral("Bad_Prefix/x"), false, QStringLiteral("prefix"));
        row("label long name", "labelKey", QStringLiteral("x/") + QString(64, u'a'), false, QStringLiteral("1 to 63"));
        row("label empty", "labelKey", s, false, QStringLiteral("label key is required"));
        // DNS-1123 labels
        row("label ns", "dns1123Label", QStringLiteral("ml-team"), true, QStringLiteral("ml-team"));
        row("label ns upper", "dns1123Label", QStringLiteral("ML"), false, QStringLiteral("lowercase"));
        row("label ns trailing dash", "dns1123Label", QStringLiteral("team-"), false, QStringLiteral("start and end"));
        row("label ns too long", "dns1123Label", QString(64, u'a'), false, QStringLiteral("63"));
        row("label ns dot", "dns1123Label", QStringLiteral("a.b"), false, QString());
        // DNS-1123 subdomains
        row("subdomain", "dns1123Subdomain", QStringLiteral("starforge-storage"), true, QStringLiteral("starforge-storage"));
        row("subdomain dotted", "dns1123Subdomain", QStringLiteral("data.v2"), true, QStringLiteral("data.v2"));
        row("subdomain empty part", "dns1123Subdomain", QStringLiteral("a..b"), false, QStringLiteral("empty part"));
        row("subdomain too long", "dns1123Subdomain", QString(254, u'a'), false, QStringLiteral("253"));
        row("subdomain underscore", "dns1123Subdomain", QStringLiteral("my_pvc"), false, QString());
        // Integers (0..604800 here)
        row("int", "integer", QStringLiteral("600"), true, QStringLiteral("600"));
        row("int spaces", "integer", QStringLiteral(" 42 "), true, QStringLiteral("42"));
        row("int zero", "integer", QStringLiteral("0"), true, QStringLiteral("0"));
        row("int word", "integer", QStringLiteral("ten"), false, QStringLiteral("not a whole number"));
        row("int fraction", "integer", QStringLiteral("1.5"), false, QStringLiteral("not a whole number"));
        row("int high", "integer", QStringLiteral("604801"), false, QStringLiteral("from 0 to 604800"));
        row("int negative", "integer", QStringLiteral("-1"), false, QStringLiteral("out of range"));
        // Booleans
        row("bool true", "boolean", QStringLiteral("true"), true, QStringLiteral("true"));
        row("bool YES", "boolean", QStringLiteral("YES"), true, QStringLiteral("true"));
        row("bool 0", "boolean", QStringLiteral("0"), true, QStringLiteral("false"));
        row("bool off", "boolean", QStringLiteral("Off"), true, QStringLiteral("false"));
        row("bool maybe", "boolean", QStringLiteral("maybe"), false, QStringLiteral("write true or false"));
        // Paths
        row("path", "absolutePath", QStringLiteral("/opt/nemo-rl/"), true, QStringLiteral("/opt/nemo-rl"));
        row("path root", "absolutePath", QStringLiteral("/"), true, QStringLiteral("/"));
        row("path relative", "absolutePath", QStringLiteral("opt/nemo-rl"), false, QStringLiteral("start it with '/'"));
        row("path dotdot", "absolutePath", QStringLiteral("/a/../b"), false, QStringLiteral("'..'"));
        // Images
        row("image tagged", "imageReference", QStringLiteral("nvcr.io/nvidia/nemo-rl:v0.7.0"), true, QStringLiteral("nvcr.io/nvidia/nemo-rl:v0.7.0"));
        row("image port", "imageReference", QStringLiteral("localhost:5000/x/y:1"), true, QStringLiteral("localhost:5000/x/y:1"));
        row("image digest", "imageReference", QStringLiteral("vllm/vllm-openai@sha256:") + QString(64, u'a'), true,
            QStringLiteral("vllm/vllm-openai@sha256:") + QString(64, u'a'));
        row("image short digest", "imageReference", QStringLiteral("vllm/vllm-openai@sha256:abc"), false, QStringLiteral("sha256:<64 hex digits>"));
        row("image space", "imageReference", QStringLiteral("vllm openai"), false, QStringLiteral("contains a space"));
        row("image upper", "imageReference", QStringLiteral("Vllm/Openai"), false, QStringLiteral("not an image reference"));
        row("image empty", "imageReference", s, false, QStringLiteral("an image is required"));
        // Buckets
        row("bucket", "bucketName", QStringLiteral("starforge"), true, QStringLiteral("starforge"));
        row("bucket short", "bucketName", QStringLiteral("ab"), false, QStringLiteral("3 to 63"));
        row("bucket upper", "bucketName", QStringLiteral("Starforge"), false, QStringLiteral("lowercase"));
        row("bucket ip", "bucketName", QStringLiteral("192.168.1.1"), false, QString());
        // Versions
        row("version", "version", QStringLiteral("2.55.1"), true, QStringLiteral("2.55.1"));
        row("version two", "version", QStringLiteral("2.55"), true, QStringLiteral("2.55"));
        row("version word", "version", QStringLiteral("latest"), false, QStringLiteral("major.minor.patch"));
        // CA file and data
        row("ca file", "caFile", Testing::dataPath(QStringLiteral("kubeconfig/ca.pem")), true, Testing::dataPath(QStringLiteral("kubeconfig/ca.pem")));
        row("ca file missing", "caFile", QStringLiteral("/nonexistent/ca.pem"), false, QStringLiteral("does not exist"));
        row("ca file relative", "caFile", QStringLiteral("ca.pem"), false, QStringLiteral("absolute path"));
        row("ca file not pem", "caFile", Testing::dataPath(QStringLiteral("kubeconfig/token.txt")), false, QStringLiteral("no PEM certificate"));
        const QString caBase64 = QString::fromLatin1(Testing::readAll(Testing::dataPath(QStringLiteral("kubeconfig/ca.pem"))).toBase64());
        row("ca data", "caData", caBase64, true, caBase64);
        row("ca data not base64", "caData", QStringLiteral("not base64 !!"), false, QStringLiteral("not base64"));
        row("ca data not pem", "caData", QStringLiteral("aGVsbG8="), false, QStringLiteral("no PEM certificate"));
        // Proxies: what Net::proxyFor can use, nothing more
        row("proxy http", "proxyUrl", QStringLiteral("http://squid.lab:3128"), true, QStringLiteral("http://squid.lab:3128"));
        row("proxy socks5", "proxyUrl", QStringLiteral(" socks5://127.0.0.1:1080 "), true, QStringLiteral("socks5://127.0.0.1:1080"));
        row("proxy socks5h", "proxyUrl", QStringLiteral("socks5h://gate:1080"), true, QStringLiteral("socks5h://gate:1080"));
        row("proxy https refused", "proxyUrl", QStringLiteral("https://tls.corp:3129"), false, QStringLiteral("give the proxy's plain http:// address"));
        row("proxy ftp", "proxyUrl", QStringLiteral("ftp://x:21"), false, QStringLiteral("a proxy is http:// or socks5://"));
        row("proxy no scheme", "proxyUrl", QStringLiteral("squid:3128"), false, QStringLiteral("not a proxy URL"));
        // Profile names
        row("profile", "profileName", QStringLiteral("lab-h100"), true, QStringLiteral("lab-h100"));
        row("profile dots", "profileName", QStringLiteral("team.prod_2"), true, QStringLiteral("team.prod_2"));
        row("profile slash", "profileName", QStringLiteral("a/b"), false, QStringLiteral("not a profile name"));
        row("profile dash first", "profileName", QStringLiteral("-x"), false, QStringLiteral("starting with a letter or digit"));
        row("profile empty", "profileName", s, false, QStringLiteral("required"));
    }

    void rules()
    {
        QFETCH(QString, rule);
        QFETCH(QString, input);
        QFETCH(bool, valid);
        QFETCH(QString, expected);
        const Validator check = validator(rule);
        QVERIFY2(bool(check), qPrintable(rule));
        const Result<QString> result = check(input);
        if (valid) {
            QVERIFY2(result.ok(), qPrintable(result.ok() ? QString() : result.error().message));
            QCOMPARE(result.value(), expected);
        } else {
            QVERIFY2(!result.ok(), qPrintable(QStringLiteral("accepted: ") + (result.ok() ? result.value() : QString())));
            QCOMPARE(result.error().code, Error::Code::Invalid);
            QVERIFY2(result.error().message.contains(expected), qPrintable(result.error().message));
            QVERIFY(!result.error().message.isEmpty());
        }
    }

    void parseBoolean()
    {
        QCOMPARE(Validation::parseBoolean(QStringLiteral("on"), false), true);
        QCOMPARE(Validation::parseBoolean(QStringLiteral("NO"), true), false);
        QCOMPARE(Validation::parseBoolean(QStringLiteral("garbage"), true), true);
        QCOMPARE(Validation::parseBoolean(QStringLiteral("garbage"), false), false);
    }
};

QTEST_GUILESS_MAIN(TestValidation)
#include "tst_validation.moc"
