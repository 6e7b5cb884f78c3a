// RayJobs admitted against KubeRay v1.7's CRD schema, as the API server admits custom
// resources: KubeRay's own samples pass, broken ones get 422 with the apiextensions causes,
// unknown fields are pruned with a warning or refused under fieldValidation=Strict.

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
};

QTEST_GUILESS_MAIN(TestCrdAdmission)
#include "tst_crd_admission.moc"
