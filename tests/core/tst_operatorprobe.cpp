// The KubeRay version from the rayjobs.ray.io CRD: against the sandbox pretending to be KubeRay
// 1.7, 1.6, 1.5 and 1.4 (each release's schema over HTTPS), a token that may not read CRDs
// (Unknown, assume the oldest), a wrong token, a cancelled probe; the 404 and odd answers from
// the pure mapping.

#include "core/kube/kubeclient.h"
#include "core/kube/operatorprobe.h"
#include "support/sandboxfixture.h"
#include "support/testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Kube;

class TestOperatorProbe : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<Testing::SandboxHttp> m_http;

    bool start(const QVersionNumber &kuberay)
    {
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("cpu:1x0");
        options.kuberayVersion = kuberay;
        // A user who may work with RayJobs in the namespace but not read cluster-scoped objects.
        options.rbacFile = m_dir.filePath(QStringLiteral("rbac.json"));
        QString error;
        const bool ok = Testing::startSandbox(m_sandbox, m_http, options, &error);
        if (!ok) qWarning() << error;   // the caller's QVERIFY fails; this says why
        return ok;
    }

    ClientConfig config(const QByteArray &token = {}) const
    {
        ClientConfig c;
        c.server = m_sandbox->apiServerUrl();
        c.token = token.isEmpty() ? m_sandbox->token() : token;
        c.tls.caCertificates = QSslCertificate::fromData(m_sandbox->caCertificatePem(), QSsl::Pem);
        c.ns = QStringLiteral("starforge");
        return c;
    }

    // Runs a probe to its end. Empty, with problem saying why, when the probe was not running
    // after start(), never finished, or finished more than once.
    static std::optional<OperatorVersion> probe(KubeClient &client, QString *problem)
    {
        OperatorProbe probe(&client);
        std::optional<OperatorVersion> result;
        int calls = 0;
        connect(&probe, &OperatorProbe::finished, &probe, [&](const OperatorVersion &v) {
            result = v;
            ++calls;
        });
        probe.start();
        if (!probe.isRunning()) {
            *problem = QStringLiteral("the probe is not running after start()");
            return std::nullopt;
        }
        if (!Testing::waitFor(result, 20000)) {
            *problem = QStringLiteral("the probe did not finish within 20 s");
            return std::nullopt;
        }
        // A second finished() would be queued behind the first: let the loop run once more.
        QCoreApplication::processEvents();
        QCoreApplication::sendPostedEvents();
        QCoreApplication::processEvents();
        if (calls != 1) {
            *problem = QStringLiteral("finished came %1 times").arg(calls);
            return std::nullopt;
        }
        return result;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(Testing::writeFile(m_dir.filePath(QStringLiteral("rbac.json")), R"({"users":[{"name":"viewer","token":"viewer-token","rules":[
            {"apiGroups":["ray.io"],"resources":["rayjobs"],"verbs":["get","list","watch","create","delete"],"namespaces":["starforge"]}]}]})"));
    }
    void cleanup()
    {
        m_http.reset();
        m_sandbox.reset();
    }

    void detectsEachRelease_data()
    {
        QTest::addColumn<QVersionNumber>("kuberay");
        QTest::addColumn<QString>("evidence");
        QTest::addColumn<QString>("message");
        QTest::newRow("1.7") << QVersionNumber(1, 7) << "status.jobStatusCheckFailureStartTime"
                             << "KubeRay 1.7: the RayJob CustomResourceDefinition has status.jobStatusCheckFailureStartTime.";
        QTest::newRow("1.6") << QVersionNumber(1, 6) << "spec.preRunningDeadlineSeconds"
                             << "KubeRay 1.6: the RayJob CustomResourceDefinition has spec.preRunningDeadlineSeconds.";
        QTest::newRow("1.5") << QVersionNumber(1, 5) << "spec.deletionStrategy"
                             << "KubeRay 1.5: the RayJob CustomResourceDefinition has spec.deletionStrategy.";
        QTest::newRow("1.4") << QVersionNumber(1, 4) << ""
                             << "KubeRay 1.4 or older: the RayJob CustomResourceDefinition has none of spec.deletionStrategy, "
                                "spec.preRunningDeadlineSeconds, status.jobStatusCheckFailureStartTime.";
    }

    void detectsEachRelease()
    {
        QFETCH(QVersionNumber, kuberay);
        QFETCH(QString, evidence);
        QFETCH(QString, message);
        QVERIFY(start(kuberay));
        KubeClient client(config());
        QString problem;
        const std::optional<OperatorVersion> probed = probe(client, &problem);
        QVERIFY2(probed, qPrintable(problem));
        const OperatorVersion &v = *probed;
        QVERIFY2(v.detected(), qPrintable(v.message));
        QCOMPARE(v.version, kuberay);
        QCOMPARE(v.assumed(), kuberay);
        QCOMPARE(v.evidence, evidence);
        QCOMPARE(v.message, message);
        QVERIFY(!v.error);
        QCOMPARE(v.hasPreRunningDeadline(), kuberay >= QVersionNumber(1, 6));
    }

    void forbiddenIsUnknown()
    {
        QVERIFY(start(QVersionNumber(1, 7)));
        KubeClient client(config("viewer-token"));
        QString problem;
        const std::optional<OperatorVersion> probed = probe(client, &problem);
        QVERIFY2(probed, qPrintable(problem));
        const OperatorVersion &v = *probed;
        QCOMPARE(v.outcome, OperatorVersion::Outcome::Unknown);
        QVERIFY(v.error);
        QCOMPARE(v.error->kind, ApiError::Kind::Forbidden);
        QCOMPARE(v.error->httpStatus, 403);
        QCOMPARE(v.error->serverMessage,
                 QStringLiteral("customresourcedefinitions.apiextensions.k8s.io \"rayjobs.ray.io\" is forbidden: User \"viewer\" cannot get "
                                "resource \"customresourcedefinitions\" in API group \"apiextensions.k8s.io\" at the cluster scope"));
        // Callers fall back to the oldest release: no preRunningDeadlineSeconds in the RayJob.
        QCOMPARE(v.assumed(), QVersionNumber(1, 4));
        QVERIFY(!v.hasPreRunningDeadline());
        QVERIFY(v.version.isNull());
        QVERIFY2(v.message.startsWith(QLatin1String("The KubeRay version is unknown: the token may not read CustomResourceDefinitions")),
                 qPrintable(v.message));
        QVERIFY2(v.message.contains(QLatin1String("enforces the pre-running deadline itself")), qPrintable(v.message));
    }

    void wrongTokenFails()
    {
        QVERIFY(start(QVersionNumber(1, 7)));
        KubeClient client(config("not-the-token"));
        QString problem;
        const std::optional<OperatorVersion> probed = probe(client, &problem);
        QVERIFY2(probed, qPrintable(problem));
        const OperatorVersion &v = *probed;
        QCOMPARE(v.outcome, OperatorVersion::Outcome::Failed);
        QVERIFY(v.error);
        QCOMPARE(v.error->kind, ApiError::Kind::Unauthorized);
        QVERIFY2(v.message.startsWith(QLatin1String("The KubeRay version could not be read: The cluster did not accept the token")),
                 qPrintable(v.message));
        QVERIFY(!v.hasPreRunningDeadline());
    }

    void cancelledProbeNeverFinishes()
    {
        QVERIFY(start(QVersionNumber(1, 7)));
        KubeClient client(config());
        OperatorProbe probe(&client);
        int calls = 0;
        connect(&probe, &OperatorProbe::finished, &probe, [&calls] { ++calls; });
        // One run first, so the connection is up: Qt 6.4 stalls a request sent while another
        // one is aborted during the TLS/ALPN set-up of a fresh connection (until the timeout).
        probe.start();
        QTRY_COMPARE(calls, 1);
        probe.start();
        QVERIFY(probe.isRunning());
        probe.cancel();
        QVERIFY(!probe.isRunning());
        QTest::qWait(300);
        QCOMPARE(calls, 1);
        // Starting while running replaces the run: one finished.
        probe.start();
        probe.start();
        QTRY_COMPARE(calls, 2);
        QTest::qWait(200);
        QCOMPARE(calls, 2);
        QVERIFY(!probe.isRunning());
        // Destroyed while running: the request goes with it, nothing arrives.
        auto *doomed = new OperatorProbe(&client);
        connect(doomed, &OperatorProbe::finished, this, [&calls] { ++calls; });
        doomed->start();
        delete doomed;
        QTest::qWait(300);
        QCOMPARE(calls, 2);
    }

    void notFoundMeansNotInstalled()
    {
        // What a cluster without KubeRay answers (the sandbox always has it).
        const QByteArray body = QJsonDocument(QJsonObject{
            {QStringLiteral("kind"), QStringLiteral("Status")}, {QStringLiteral("apiVersion"), QStringLiteral("v1")},
            {QStringLiteral("status"), QStringLiteral("Failure")}, {QStringLiteral("reason"), QStringLiteral("NotFound")}, {QStringLiteral("code"), 404},
            {QStringLiteral("message"), QStringLiteral("customresourcedefinitions.apiextensions.k8s.io \"rayjobs.ray.io\" not found")}}).toJson();
        ApiResult result;
        result.status = 404;
        result.body = body;
        result.error = ApiError::fromHttp(404, body, {}, QStringLiteral("get the rayjobs.ray.io CustomResourceDefinition"));
        const OperatorVersion v = OperatorVersion::fromResult(result);
        QCOMPARE(v.outcome, OperatorVersion::Outcome::NotInstalled);
        QVERIFY2(v.message.startsWith(QLatin1String("KubeRay is not installed: the cluster has no rayjobs.ray.io CustomResourceDefinition")),
                 qPrintable(v.message));
        QCOMPARE(v.error->kind, ApiError::Kind::NotFound);
        QVERIFY(!v.detected());
    }

    void oddAnswers()
    {
        // A CRD from before ray.io/v1.
        const QJsonObject old{{QStringLiteral("kind"), QStringLiteral("CustomResourceDefinition")},
                              {QStringLiteral("spec"), QJsonObject{{QStringLiteral("versions"),
                                                                    QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("v1alpha1")},
                                                                                           {QStringLiteral("served"), true}}}}}}};
        const OperatorVersion unsupported = OperatorVersion::fromCrd(old);
        QCOMPARE(unsupported.outcome, OperatorVersion::Outcome::Unsupported);
        QVERIFY2(unsupported.message.contains(QLatin1String("serves no ray.io/v1")), qPrintable(unsupported.message));
        QCOMPARE(unsupported.assumed(), QVersionNumber(1, 4));

        // A 200 that is not a CRD (a proxy's page).
        ApiResult html;
        html.status = 200;
        html.body = "<html>login</html>";
        const OperatorVersion failed = OperatorVersion::fromResult(html);
        QCOMPARE(failed.outcome, OperatorVersion::Outcome::Failed);
        QCOMPARE(failed.error->kind, ApiError::Kind::Malformed);
        QVERIFY2(failed.message.contains(QLatin1String("not a CustomResourceDefinition")), qPrintable(failed.message));
    }
};

QTEST_GUILESS_MAIN(TestOperatorProbe)
#include "tst_operatorprobe.moc"
