// RayJobs admitted against KubeRay v1.7's CRD schema, as the API server admits custom
// resources: KubeRay's own samples pass, broken ones get 422 with the apiextensions causes,
// unknown fields are pruned with a warning or refused under fieldValidation=Strict. The CRDs
// themselves are served (apiextensions.k8s.io/v1, read-only), and a sandbox pretending to be an
// older KubeRay serves and admits that release's RayJob schema: below 1.6 no
// preRunningDeadlineSeconds, so the field is pruned and no deadline is enforced.

#include "sandbox/sandbox.h"
#include "sandbox/util/yaml.h"
#include "support/sandboxfixture.h"
#include "support/testutil.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Testing;

class TestCrdAdmission : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<SandboxHttp> m_http;
    const QString m_rayjobs = QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs");

    QJsonObject sample(const QString &file)
    {
        const auto docs = Sandbox::Yaml::allToJson(readAll(dataPath(QStringLiteral("kuberay/") + file)));
        for (const QJsonValue &doc : docs.value()) {
            if (doc.toObject().value(QStringLiteral("kind")).toString() == QLatin1String("RayJob")) {
                QJsonObject job = doc.toObject();
                QJsonObject meta = job.value(QStringLiteral("metadata")).toObject();
                meta.remove(QStringLiteral("namespace"));
                job.insert(QStringLiteral("metadata"), meta);
                return job;
            }
        }
        return {};
    }

    static QJsonObject with(QJsonObject object, const QStringList &path, const QJsonValue &value)
    {
        // Sets object[path...] = value, creating objects on the way (array indices as digits).
        std::function<QJsonValue(QJsonValue, int)> set = [&](QJsonValue node, int depth) -> QJsonValue {
            if (depth == path.size()) return value;
            bool isIndex = false;
            const int index = path[depth].toInt(&isIndex);
            if (isIndex) {
                QJsonArray a = node.toArray();
                a.replace(index, set(a.at(index), depth + 1));
                return a;
            }
            QJsonObject o = node.toObject();
            if (value.isUndefined() && depth == path.size() - 1) {
                o.remove(path[depth]);
                return o;
            }
            o.insert(path[depth], set(o.value(path[depth]), depth + 1));
            return o;
        };
        return set(object, 0).toObject();
    }

private Q_SLOTS:
    void initTestCase()
    {
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("cpu:1x0");
        QString error;
        QVERIFY2(startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
    }
    void cleanupTestCase()
    {
        m_http.reset();
        m_sandbox.reset();
    }

    void kuberaySamplesAreAdmitted_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("ray-job.sample.yaml") << "ray-job.sample.yaml";
        QTest::newRow("ray-job.resources.yaml") << "ray-job.resources.yaml";
    }

    void kuberaySamplesAreAdmitted()
    {
        QFETCH(QString, file);
        const QJsonObject job = sample(file);
        QVERIFY(!job.isEmpty());
        const HttpReply created = m_http->send("POST", m_rayjobs + QStringLiteral("?fieldValidation=Strict"), QJsonDocument(job).toJson());
        QVERIFY2(created.status == 201, created.body.constData());
        // Schema defaults are applied, as the API server does: e.g. a worker group's numOfHosts.
        const QJsonObject group = created.json().value(QStringLiteral("spec")).toObject().value(QStringLiteral("rayClusterSpec")).toObject()
                                      .value(QStringLiteral("workerGroupSpecs")).toArray().first().toObject();
        QCOMPARE(group.value(QStringLiteral("numOfHosts")).toInt(), 1);
        QCOMPARE(m_http->send("DELETE", m_rayjobs + u'/' + job.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString()).status, 200);
    }

    void brokenRayJobsGetTheCauses_data()
    {
        QTest::addColumn<QStringList>("path");
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("reason");
        QTest::addColumn<QString>("message");
        QTest::newRow("entrypoint is a number")
            << QStringList{QStringLiteral("spec"), QStringLiteral("entrypoint")} << QJsonValue(5) << "spec.entrypoint" << "FieldValueInvalid"
            << "Invalid value: \"integer\": spec.entrypoint in body must be of type string: \"integer\"";
        QTest::newRow("deadline below the minimum")
            << QStringList{QStringLiteral("spec"), QStringLiteral("preRunningDeadlineSeconds")} << QJsonValue(0) << "spec.preRunningDeadlineSeconds"
            << "FieldValueInvalid" << "Invalid value: 0: spec.preRunningDeadlineSeconds in body should be greater than or equal to 1";
        QTest::newRow("worker group without a name")
            << QStringList{QStringLiteral("spec"), QStringLiteral("rayClusterSpec"), QStringLiteral("workerGroupSpecs"), QStringLiteral("0"), QStringLiteral("groupName")}
            << QJsonValue(QJsonValue::Undefined) << "spec.rayClusterSpec.workerGroupSpecs[0].groupName" << "FieldValueRequired" << "Required value";
        QTest::newRow("rayStartParams value not a string")
            << QStringList{QStringLiteral("spec"), QStringLiteral("rayClusterSpec"), QStringLiteral("headGroupSpec"), QStringLiteral("rayStartParams"), QStringLiteral("num-cpus")}
            << QJsonValue(1) << "spec.rayClusterSpec.headGroupSpec.rayStartParams.num-cpus" << "FieldValueInvalid"
            << "Invalid value: \"integer\": spec.rayClusterSpec.headGroupSpec.rayStartParams.num-cpus in body must be of type string: \"integer\"";
    }

    void brokenRayJobsGetTheCauses()
    {
        QFETCH(QStringList, path);
        QFETCH(QJsonValue, value);
        QFETCH(QString, field);
        QFETCH(QString, reason);
        QFETCH(QString, message);
        QJsonObject job = with(sample(QStringLiteral("ray-job.sample.yaml")), path, value);
        job = with(job, {QStringLiteral("metadata"), QStringLiteral("name")}, QStringLiteral("broken"));
        const HttpReply reply = m_http->send("POST", m_rayjobs, QJsonDocument(job).toJson());
        QCOMPARE(reply.status, 422);
        QCOMPARE(reply.reason(), QStringLiteral("Invalid"));
        QCOMPARE(reply.message(), QStringLiteral("RayJob.ray.io \"broken\" is invalid: %1: %2").arg(field, message));
        const QJsonObject details = reply.json().value(QStringLiteral("details")).toObject();
        QCOMPARE(details.value(QStringLiteral("kind")).toString(), QStringLiteral("RayJob"));
        QCOMPARE(details.value(QStringLiteral("group")).toString(), QStringLiteral("ray.io"));
        const QJsonObject cause = details.value(QStringLiteral("causes")).toArray().first().toObject();
        QCOMPARE(cause.value(QStringLiteral("field")).toString(), field);
        QCOMPARE(cause.value(QStringLiteral("reason")).toString(), reason);
        QCOMPARE(m_http->get(m_rayjobs + QStringLiteral("/broken")).status, 404); // nothing half-created
    }

    void unknownFieldsArePrunedOrRefused()
    {
        QJsonObject job = with(sample(QStringLiteral("ray-job.sample.yaml")), {QStringLiteral("spec"), QStringLiteral("entrypointTypo")}, QStringLiteral("x"));
        job = with(job, {QStringLiteral("metadata"), QStringLiteral("name")}, QStringLiteral("typo"));
        const HttpReply strict = m_http->send("POST", m_rayjobs + QStringLiteral("?fieldValidation=Strict"), QJsonDocument(job).toJson());
        QCOMPARE(strict.status, 400);
        QCOMPARE(strict.message(), QStringLiteral("RayJob in version \"ray.io/v1\" cannot be handled as a RayJob: strict decoding error: unknown field \"spec.entrypointTypo\""));
        const HttpReply warned = m_http->send("POST", m_rayjobs, QJsonDocument(job).toJson());
        QCOMPARE(warned.status, 201);
        QCOMPARE(warned.headers.value("warning"), QByteArray("299 - \"unknown field \\\"spec.entrypointTypo\\\"\""));
        QVERIFY(!warned.json().value(QStringLiteral("spec")).toObject().contains(QStringLiteral("entrypointTypo")));
        // Status sent on create is dropped: the status subresource owns it.
        QJsonObject withStatus = with(job, {QStringLiteral("status"), QStringLiteral("jobStatus")}, QStringLiteral("SUCCEEDED"));
        withStatus = with(withStatus, {QStringLiteral("metadata"), QStringLiteral("name")}, QStringLiteral("status-sent"));
        const HttpReply created = m_http->send("POST", m_rayjobs + QStringLiteral("?fieldValidation=Ignore"), QJsonDocument(withStatus).toJson());
        QCOMPARE(created.status, 201);
        QVERIFY(created.json().value(QStringLiteral("status")).toObject().value(QStringLiteral("jobStatus")).toString() != QLatin1String("SUCCEEDED"));
    }

    void crdsAreServed()
    {
        const QString crds = QStringLiteral("/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
        const HttpReply list = m_http->get(crds);
        QCOMPARE(list.status, 200);
        QCOMPARE(list.json().value(QStringLiteral("kind")).toString(), QStringLiteral("CustomResourceDefinitionList"));
        QStringList names;
        for (const QJsonValue &item : list.json().value(QStringLiteral("items")).toArray()) {
            names << item.toObject().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString();
        }
        QCOMPARE(names, (QStringList{QStringLiteral("rayclusters.ray.io"), QStringLiteral("rayjobs.ray.io")}));

        const QJsonObject crd = m_http->get(crds + QStringLiteral("/rayjobs.ray.io")).json();
        QCOMPARE(crd.value(QStringLiteral("kind")).toString(), QStringLiteral("CustomResourceDefinition"));
        QCOMPARE(crd.value(QStringLiteral("apiVersion")).toString(), QStringLiteral("apiextensions.k8s.io/v1"));
        const QJsonObject meta = crd.value(QStringLiteral("metadata")).toObject();
        QVERIFY(!meta.value(QStringLiteral("uid")).toString().isEmpty());
        QVERIFY(!meta.value(QStringLiteral("resourceVersion")).toString().isEmpty());
        QCOMPARE(meta.value(QStringLiteral("generation")).toInt(), 1);
        QVERIFY(!meta.contains(QStringLiteral("namespace")));
        const QJsonObject spec = crd.value(QStringLiteral("spec")).toObject();
        QCOMPARE(spec.value(QStringLiteral("group")).toString(), QStringLiteral("ray.io"));
        QCOMPARE(spec.value(QStringLiteral("names")).toObject().value(QStringLiteral("kind")).toString(), QStringLiteral("RayJob"));
        QCOMPARE(spec.value(QStringLiteral("conversion")).toObject().value(QStringLiteral("strategy")).toString(), QStringLiteral("None"));
        const QJsonObject status = crd.value(QStringLiteral("status")).toObject();
        QCOMPARE(status.value(QStringLiteral("storedVersions")).toArray(), QJsonArray{QStringLiteral("v1")});
        QCOMPARE(status.value(QStringLiteral("acceptedNames")).toObject().value(QStringLiteral("plural")).toString(), QStringLiteral("rayjobs"));
        QCOMPARE(status.value(QStringLiteral("conditions")).toArray().at(1).toObject().value(QStringLiteral("type")).toString(), QStringLiteral("Established"));
        // v1.7's schema, as embedded.
        const QStringList fields = schemaFields(crd);
        QVERIFY(fields.contains(QStringLiteral("status.jobStatusCheckFailureStartTime")));
        QVERIFY(fields.contains(QStringLiteral("spec.preRunningDeadlineSeconds")));
        QVERIFY(fields.contains(QStringLiteral("spec.deletionStrategy")));

        const HttpReply missing = m_http->get(crds + QStringLiteral("/nothing.ray.io"));
        QCOMPARE(missing.status, 404);
        QCOMPARE(missing.message(), QStringLiteral("customresourcedefinitions.apiextensions.k8s.io \"nothing.ray.io\" not found"));
        // Read-only: the sandbox's KubeRay is installed once.
        QCOMPARE(m_http->send("DELETE", crds + QStringLiteral("/rayjobs.ray.io")).status, 405);
        // Discovery lists the group and the resource.
        const QJsonArray resources = m_http->get(QStringLiteral("/apis/apiextensions.k8s.io/v1")).json().value(QStringLiteral("resources")).toArray();
        QVERIFY(std::any_of(resources.begin(), resources.end(), [](const QJsonValue &r) {
            return r.toObject().value(QStringLiteral("name")).toString() == QLatin1String("customresourcedefinitions")
                && !r.toObject().value(QStringLiteral("namespaced")).toBool();
        }));
    }

    void olderReleasesServeAndAdmitTheirSchema_data()
    {
        QTest::addColumn<QString>("version");
        QTest::addColumn<bool>("preRunningDeadline");
        QTest::addColumn<bool>("deletionStrategy");
        QTest::newRow("1.6") << "1.6" << true << true;
        QTest::newRow("1.5") << "1.5" << false << true;
        QTest::newRow("1.4") << "1.4" << false << false;
    }

    void olderReleasesServeAndAdmitTheirSchema()
    {
        QFETCH(QString, version);
        QFETCH(bool, preRunningDeadline);
        QFETCH(bool, deletionStrategy);
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn-%1.json").arg(version));
        options.fleet = QStringLiteral("cpu:1x0");
        options.kuberayVersion = QVersionNumber::fromString(version);
        std::unique_ptr<Sandbox::Sandbox> sandbox;
        std::unique_ptr<SandboxHttp> http;
        QString error;
        QVERIFY2(startSandbox(sandbox, http, options, &error), qPrintable(error));

        const QStringList fields = schemaFields(http->get(QStringLiteral("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/rayjobs.ray.io")).json());
        QVERIFY(!fields.contains(QStringLiteral("status.jobStatusCheckFailureStartTime")));
        QCOMPARE(fields.contains(QStringLiteral("spec.preRunningDeadlineSeconds")), preRunningDeadline);
        QCOMPARE(fields.contains(QStringLiteral("spec.deletionStrategy")), deletionStrategy);
        QCOMPARE(fields.contains(QStringLiteral("spec.deletionPolicy")), !deletionStrategy);

        // The sample's image is not on the nodes, so the cluster never becomes ready: only the
        // pre-running deadline can end the job, and only where the schema kept the field.
        QJsonObject job = with(sample(QStringLiteral("ray-job.sample.yaml")), {QStringLiteral("spec"), QStringLiteral("preRunningDeadlineSeconds")}, 1);
        job = with(job, {QStringLiteral("metadata"), QStringLiteral("name")}, QStringLiteral("deadline"));
        const HttpReply strict = http->send("POST", m_rayjobs + QStringLiteral("?fieldValidation=Strict"), QJsonDocument(job).toJson());
        QCOMPARE(strict.status, preRunningDeadline ? 201 : 400);
        if (!preRunningDeadline) {
            QCOMPARE(strict.message(), QStringLiteral("RayJob in version \"ray.io/v1\" cannot be handled as a RayJob: strict decoding error: "
                                                      "unknown field \"spec.preRunningDeadlineSeconds\""));
            const HttpReply pruned = http->send("POST", m_rayjobs, QJsonDocument(job).toJson());
            QCOMPARE(pruned.status, 201);
            QCOMPARE(pruned.headers.value("warning"), QByteArray("299 - \"unknown field \\\"spec.preRunningDeadlineSeconds\\\"\""));
            QVERIFY(!pruned.json().value(QStringLiteral("spec")).toObject().contains(QStringLiteral("preRunningDeadlineSeconds")));
        }
        const auto deployment = [&http, this] {
            return http->get(m_rayjobs + QStringLiteral("/deadline")).json().value(QStringLiteral("status")).toObject()
                .value(QStringLiteral("jobDeploymentStatus")).toString();
        };
        if (preRunningDeadline) {
            QTRY_COMPARE_WITH_TIMEOUT(deployment(), QStringLiteral("Failed"), 10000);
        } else {
            QTRY_COMPARE_WITH_TIMEOUT(deployment(), QStringLiteral("Initializing"), 10000);
            QTest::qWait(2500);
            QCOMPARE(deployment(), QStringLiteral("Initializing"));
        }
    }

    void unsupportedReleaseIsRefused()
    {
        Sandbox::Sandbox sandbox;
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn-old.json"));
        options.kuberayVersion = QVersionNumber(1, 3);
        const auto started = sandbox.start(options);
        QVERIFY(!started.ok());
        QCOMPARE(started.error().message, QStringLiteral("the sandbox can be KubeRay 1.4 to 1.7, not 1.3"));
    }

private:
    // "spec.x", "status.y": the top-level fields of the CRD's v1 schema.
    static QStringList schemaFields(const QJsonObject &crd)
    {
        QStringList out;
        for (const QJsonValue &v : crd.value(QStringLiteral("spec")).toObject().value(QStringLiteral("versions")).toArray()) {
            if (v.toObject().value(QStringLiteral("name")).toString() != QLatin1String("v1")) continue;
            const QJsonObject properties = v.toObject().value(QStringLiteral("schema")).toObject().value(QStringLiteral("openAPIV3Schema")).toObject()
                                               .value(QStringLiteral("properties")).toObject();
            for (const QString &section : {QStringLiteral("spec"), QStringLiteral("status")}) {
                for (const QString &key : properties.value(section).toObject().value(QStringLiteral("properties")).toObject().keys()) {
                    out << section + u'.' + key;
                }
            }
        }
        return out;
    }
};

QTEST_GUILESS_MAIN(TestCrdAdmission)
#include "tst_crd_admission.moc"
