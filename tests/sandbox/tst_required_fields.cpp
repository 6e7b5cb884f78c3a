// Fidelity: what the sandbox serves deserializes in the official Kubernetes clients, which refuse
// an object that lacks a field the OpenAPI schema marks required (the Python client raises
// "Invalid value for `machine_id`, must not be `None`"). A table of served lists and objects →
// the required fields of the models found at each path, checked on every object there after a
// pod, a failed pod and a RayJob ran. The required lists are the ones in docs/sandbox.md
// ("Required fields").

#include "sandbox/sandbox.h"
#include "support/sandboxfixture.h"
#include "support/sandboxjobs.h"
#include "support/testutil.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Testing;

namespace {

const QString Present = QStringLiteral("registry.example/present:1");

struct RequiredAt
{
    QString model;     // the OpenAPI model, for the failure message
    QString path;      // from the response's root: a.b, "[]" for every element of an array
    QStringList fields;
};

// The objects at path (none when an optional part of it is absent).
QList<QJsonObject> objectsAt(const QJsonValue &root, const QString &path)
{
    QList<QJsonValue> current{root};
    for (const QString &step : path.split(u'.', Qt::SkipEmptyParts)) {
        QList<QJsonValue> next;
        const bool each = step.endsWith(QLatin1String("[]"));
        const QString key = each ? step.chopped(2) : step;
        for (const QJsonValue &v : std::as_const(current)) {
            const QJsonValue child = key.isEmpty() ? v : v.toObject().value(key);
            if (each) {
                for (const QJsonValue &e : child.toArray()) next << e;
            } else if (!child.isUndefined() && !child.isNull()) {
                next << child;
            }
        }
        current = next;
    }
    QList<QJsonObject> out;
    for (const QJsonValue &v : std::as_const(current)) out << v.toObject();
    return out;
}

// The required fields of the models the sandbox serves (docs/sandbox.md, "Required fields").
const QList<RequiredAt> &podRules()
{
    static const QList<RequiredAt> rules{
        {QStringLiteral("v1.PodSpec"), QStringLiteral("items[].spec"), {QStringLiteral("containers")}},
        {QStringLiteral("v1.Container"), QStringLiteral("items[].spec.containers[]"), {QStringLiteral("name")}},
        {QStringLiteral("v1.Container"), QStringLiteral("items[].spec.initContainers[]"), {QStringLiteral("name")}},
        {QStringLiteral("v1.EnvVar"), QStringLiteral("items[].spec.containers[].env[]"), {QStringLiteral("name")}},
        {QStringLiteral("v1.VolumeMount"), QStringLiteral("items[].spec.containers[].volumeMounts[]"), {QStringLiteral("name"), QStringLiteral("mountPath")}},
        {QStringLiteral("v1.Volume"), QStringLiteral("items[].spec.volumes[]"), {QStringLiteral("name")}},
        {QStringLiteral("v1.OwnerReference"), QStringLiteral("items[].metadata.ownerReferences[]"),
         {QStringLiteral("apiVersion"), QStringLiteral("kind"), QStringLiteral("name"), QStringLiteral("uid")}},
        {QStringLiteral("v1.PodCondition"), QStringLiteral("items[].status.conditions[]"), {QStringLiteral("type"), QStringLiteral("status")}},
        {QStringLiteral("v1.ContainerStatus"), QStringLiteral("items[].status.containerStatuses[]"),
         {QStringLiteral("name"), QStringLiteral("ready"), QStringLiteral("restartCount"), QStringLiteral("image"), QStringLiteral("imageID")}},
        {QStringLiteral("v1.ContainerStatus"), QStringLiteral("items[].status.initContainerStatuses[]"),
         {QStringLiteral("name"), QStringLiteral("ready"), QStringLiteral("restartCount"), QStringLiteral("image"), QStringLiteral("imageID")}},
        {QStringLiteral("v1.ContainerStateTerminated"), QStringLiteral("items[].status.containerStatuses[].state.terminated"), {QStringLiteral("exitCode")}},
        {QStringLiteral("v1.ContainerStateTerminated"), QStringLiteral("items[].status.containerStatuses[].lastState.terminated"), {QStringLiteral("exitCode")}},
        {QStringLiteral("v1.ContainerStateTerminated"), QStringLiteral("items[].status.initContainerStatuses[].state.terminated"), {QStringLiteral("exitCode")}},
    };
    return rules;
}

struct Served
{
    QString url;
    QList<RequiredAt> rules;
};

QList<Served> servedTable()
{
    const QStringList nodeInfo{QStringLiteral("machineID"), QStringLiteral("systemUUID"), QStringLiteral("bootID"), QStringLiteral("kernelVersion"),
                               QStringLiteral("osImage"), QStringLiteral("containerRuntimeVersion"), QStringLiteral("kubeletVersion"),
                               QStringLiteral("kubeProxyVersion"), QStringLiteral("operatingSystem"), QStringLiteral("architecture")};
    return {
        {QStringLiteral("/api/v1/nodes"),
         {{QStringLiteral("v1.NodeSystemInfo"), QStringLiteral("items[].status.nodeInfo"), nodeInfo},
          {QStringLiteral("v1.NodeCondition"), QStringLiteral("items[].status.conditions[]"), {QStringLiteral("type"), QStringLiteral("status")}},
          {QStringLiteral("v1.NodeAddress"), QStringLiteral("items[].status.addresses[]"), {QStringLiteral("type"), QStringLiteral("address")}},
          {QStringLiteral("v1.Taint"), QStringLiteral("items[].spec.taints[]"), {QStringLiteral("key"), QStringLiteral("effect")}},
          {QStringLiteral("v1.DaemonEndpoint"), QStringLiteral("items[].status.daemonEndpoints.kubeletEndpoint"), {QStringLiteral("Port")}}}},
        {QStringLiteral("/api/v1/pods"), podRules()},
        {QStringLiteral("/api/v1/events"),
         {{QStringLiteral("core.v1.Event"), QStringLiteral("items[]"), {QStringLiteral("metadata"), QStringLiteral("involvedObject")}}}},
        {QStringLiteral("/apis/events.k8s.io/v1/events"),
         {{QStringLiteral("events.v1.EventSeries"), QStringLiteral("items[].series"), {QStringLiteral("count"), QStringLiteral("lastObservedTime")}}}},
        {QStringLiteral("/apis/batch/v1/jobs"),
         {{QStringLiteral("v1.JobSpec"), QStringLiteral("items[].spec"), {QStringLiteral("template")}},
          {QStringLiteral("v1.PodSpec"), QStringLiteral("items[].spec.template.spec"), {QStringLiteral("containers")}},
          {QStringLiteral("v1.Container"), QStringLiteral("items[].spec.template.spec.containers[]"), {QStringLiteral("name")}},
          {QStringLiteral("v1.JobCondition"), QStringLiteral("items[].status.conditions[]"), {QStringLiteral("type"), QStringLiteral("status")}},
          {QStringLiteral("v1.OwnerReference"), QStringLiteral("items[].metadata.ownerReferences[]"),
           {QStringLiteral("apiVersion"), QStringLiteral("kind"), QStringLiteral("name"), QStringLiteral("uid")}}}},
        {QStringLiteral("/api/v1/services"),
         {{QStringLiteral("v1.ServicePort"), QStringLiteral("items[].spec.ports[]"), {QStringLiteral("port")}}}},
        {QStringLiteral("/apis/apiextensions.k8s.io/v1/customresourcedefinitions"),
         {{QStringLiteral("v1.CustomResourceDefinition"), QStringLiteral("items[]"), {QStringLiteral("spec")}},
          {QStringLiteral("v1.CustomResourceDefinitionSpec"), QStringLiteral("items[].spec"),
           {QStringLiteral("group"), QStringLiteral("names"), QStringLiteral("scope"), QStringLiteral("versions")}},
          {QStringLiteral("v1.CustomResourceDefinitionNames"), QStringLiteral("items[].spec.names"), {QStringLiteral("kind"), QStringLiteral("plural")}},
          {QStringLiteral("v1.CustomResourceDefinitionVersion"), QStringLiteral("items[].spec.versions[]"),
           {QStringLiteral("name"), QStringLiteral("served"), QStringLiteral("storage")}},
          {QStringLiteral("v1.CustomResourceDefinitionCondition"), QStringLiteral("items[].status.conditions[]"),
           {QStringLiteral("type"), QStringLiteral("status")}},
          {QStringLiteral("v1.CustomResourceDefinitionNames"), QStringLiteral("items[].status.acceptedNames"),
           {QStringLiteral("kind"), QStringLiteral("plural")}}}},
        {QStringLiteral("/version"),
         {{QStringLiteral("version.Info"), QString(),
           {QStringLiteral("major"), QStringLiteral("minor"), QStringLiteral("gitVersion"), QStringLiteral("gitCommit"), QStringLiteral("gitTreeState"),
            QStringLiteral("buildDate"), QStringLiteral("goVersion"), QStringLiteral("compiler"), QStringLiteral("platform")}}}},
        {QStringLiteral("/api"),
         {{QStringLiteral("v1.APIVersions"), QString(), {QStringLiteral("versions"), QStringLiteral("serverAddressByClientCIDRs")}},
          {QStringLiteral("v1.ServerAddressByClientCIDR"), QStringLiteral("serverAddressByClientCIDRs[]"),
           {QStringLiteral("clientCIDR"), QStringLiteral("serverAddress")}}}},
        {QStringLiteral("/apis"),
         {{QStringLiteral("v1.APIGroupList"), QString(), {QStringLiteral("groups")}},
          {QStringLiteral("v1.APIGroup"), QStringLiteral("groups[]"), {QStringLiteral("name"), QStringLiteral("versions")}},
          {QStringLiteral("v1.GroupVersionForDiscovery"), QStringLiteral("groups[].versions[]"), {QStringLiteral("groupVersion"), QStringLiteral("version")}}}},
        {QStringLiteral("/api/v1"),
         {{QStringLiteral("v1.APIResourceList"), QString(), {QStringLiteral("groupVersion"), QStringLiteral("resources")}},
          {QStringLiteral("v1.APIResource"), QStringLiteral("resources[]"),
           {QStringLiteral("name"), QStringLiteral("singularName"), QStringLiteral("namespaced"), QStringLiteral("kind"), QStringLiteral("verbs")}}}},
        {QStringLiteral("/apis/ray.io/v1"),
         {{QStringLiteral("v1.APIResourceList"), QString(), {QStringLiteral("groupVersion"), QStringLiteral("resources")}},
          {QStringLiteral("v1.APIResource"), QStringLiteral("resources[]"),
           {QStringLiteral("name"), QStringLiteral("singularName"), QStringLiteral("namespaced"), QStringLiteral("kind"), QStringLiteral("verbs")}}}},
        {QStringLiteral("/apis/batch/v1"),
         {{QStringLiteral("v1.APIResource"), QStringLiteral("resources[]"),
           {QStringLiteral("name"), QStringLiteral("singularName"), QStringLiteral("namespaced"), QStringLiteral("kind"), QStringLiteral("verbs")}}}},
    };
}

// "model at path: field missing" for each required field that is absent or null.
QStringList missingFields(const QString &url, const QJsonValue &root, const QList<RequiredAt> &rules)
{
    QStringList missing;
    for (const RequiredAt &rule : rules) {
        for (const QJsonObject &o : objectsAt(root, rule.path)) {
            for (const QString &field : rule.fields) {
                const QJsonValue v = o.value(field);
                if (v.isUndefined() || v.isNull()) {
                    missing << QStringLiteral("%1 %2 at %3: %4 (%5)").arg(url, rule.model, rule.path.isEmpty() ? QStringLiteral("/") : rule.path, field,
                                                                          o.value(QStringLiteral("name")).toString());
                }
            }
        }
    }
    missing.removeDuplicates();
    return missing;
}

} // namespace

class TestRequiredFields : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<SandboxHttp> m_http;

private Q_SLOTS:
    void initTestCase()
    {
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        // scale: the fleet with background pods (statuses written by the fleet, not the kubelet).
        options.fleet = QStringLiteral("scale:5");
        options.presentImages = {Present, jobTestImage()};
        options.crashLoopBackoffMs = 200;
        QString error;
        QVERIFY2(startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));

        // Pods that ran, failed, restarted and could not pull; a RayJob with its cluster, Service
        // and submitter Job; the events all of that recorded.
        const auto pod = [](const QString &name, const QString &script, const QString &image, const QString &policy) {
            return QJsonDocument(QJsonObject{
                {QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("Pod")},
                {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}}},
                {QStringLiteral("spec"), QJsonObject{{QStringLiteral("restartPolicy"), policy},
                                                     {QStringLiteral("initContainers"), QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("init")},
                                                                                                                {QStringLiteral("image"), Present},
                                                                                                                {QStringLiteral("command"), QJsonArray{QStringLiteral("true")}}}}},
                                                     {QStringLiteral("containers"),
                                                      QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("main")}, {QStringLiteral("image"), image},
                                                                             {QStringLiteral("command"), QJsonArray{QStringLiteral("sh"), QStringLiteral("-c"), script}}}}}}}})
                .toJson();
        };
        const QString pods = QStringLiteral("/api/v1/namespaces/starforge/pods");
        QCOMPARE(m_http->send("POST", pods, pod(QStringLiteral("done"), QStringLiteral("echo ok"), Present, QStringLiteral("Never"))).status, 201);
        QCOMPARE(m_http->send("POST", pods, pod(QStringLiteral("crashing"), QStringLiteral("exit 2"), Present, QStringLiteral("Always"))).status, 201);
        QCOMPARE(m_http->send("POST", pods, pod(QStringLiteral("unpulled"), QStringLiteral("true"), QStringLiteral("registry.example/absent:1"),
                                                QStringLiteral("Never"))).status, 201);
        QTemporaryDir drivers;
        QCOMPARE(m_http->send("POST", QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs"),
                              QJsonDocument(starforgeRayJob(QStringLiteral("fields"), QStringLiteral("f1elds"),
                                                            driverEntrypoint(drivers.path(), QStringLiteral("print('hi')\n")))).toJson()).status, 201);
        const auto rayJobStatus = [this]() -> QString {
            const QJsonObject status = m_http->get(QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs/fields-f1elds")).json()
                                           .value(QStringLiteral("status")).toObject();
            return status.value(QStringLiteral("jobDeploymentStatus")).toString() + u'/' + status.value(QStringLiteral("jobStatus")).toString();
        };
        // Complete, not only SUCCEEDED: Ray's status comes first, the submitter Job (and its
        // conditions) finishes after it.
        QTRY_COMPARE_WITH_TIMEOUT(rayJobStatus(), QStringLiteral("Complete/SUCCEEDED"), 30000);
        QTRY_VERIFY_WITH_TIMEOUT(m_http->get(pods + QStringLiteral("/crashing")).json().value(QStringLiteral("status")).toObject()
                                     .value(QStringLiteral("containerStatuses")).toArray().first().toObject().value(QStringLiteral("restartCount")).toInt() >= 1,
                                 10000);
        // A scheduling failure: events.k8s.io's recorder, a series when it repeats.
        QJsonObject unschedulable = QJsonDocument::fromJson(pod(QStringLiteral("nowhere"), QStringLiteral("true"), Present, QStringLiteral("Never"))).object();
        QJsonObject spec = unschedulable.value(QStringLiteral("spec")).toObject();
        spec.insert(QStringLiteral("nodeSelector"), QJsonObject{{QStringLiteral("starforge/gpu-series"), QStringLiteral("b200")}});
        unschedulable.insert(QStringLiteral("spec"), spec);
        QCOMPARE(m_http->send("POST", pods, QJsonDocument(unschedulable).toJson()).status, 201);
        QTRY_VERIFY_WITH_TIMEOUT(m_http->get(QStringLiteral("/apis/events.k8s.io/v1/namespaces/starforge/events?fieldSelector=reason%3DFailedScheduling"))
                                     .json().value(QStringLiteral("items")).toArray().size() >= 1, 10000);
    }
    void cleanupTestCase()
    {
        m_http.reset();
        m_sandbox.reset();
    }

    void servedObjectsHaveEveryRequiredField_data()
    {
        QTest::addColumn<QString>("url");
        QTest::addColumn<int>("row");
        const QList<Served> table = servedTable();
        for (int i = 0; i < table.size(); ++i) {
            QTest::newRow(qPrintable(table[i].url)) << table[i].url << i;
        }
    }
    void servedObjectsHaveEveryRequiredField()
    {
        QFETCH(QString, url);
        QFETCH(int, row);
        const auto reply = m_http->get(url);
        QCOMPARE(reply.status, 200);
        const QJsonObject root = reply.json();
        const Served served = servedTable().at(row);
        const QStringList missing = missingFields(url, root, served.rules);
        QVERIFY2(missing.isEmpty(), qPrintable(missing.join(u'\n')));
        // Each rule's path reached something, so the table checks what it says it checks
        // (taints, kubelet endpoints, the events.k8s.io series and init statuses may be absent).
        for (const RequiredAt &rule : served.rules) {
            const bool optional = rule.path.contains(QLatin1String("taints")) || rule.path.contains(QLatin1String("daemonEndpoints"))
                || rule.path.contains(QLatin1String("lastState")) || rule.path.contains(QLatin1String("ownerReferences"))
                || rule.path.contains(QLatin1String("volume")) || rule.path.contains(QLatin1String("env[]"))
                || rule.path.contains(QLatin1String("initContainerStatuses[].state")) || rule.path.endsWith(QLatin1String("series"));
            if (!optional) QVERIFY2(!objectsAt(root, rule.path).isEmpty(), qPrintable(url + u' ' + rule.path));
        }
    }

    void legacyEventsServedAsEventsV1HaveANullEventTime()
    {
        // The one required field a real API server leaves null: events.k8s.io/v1 serves the
        // kubelet's legacy events with "eventTime": null (docs/sandbox.md, "Required fields").
        const QJsonArray items = m_http->get(QStringLiteral("/apis/events.k8s.io/v1/events")).json().value(QStringLiteral("items")).toArray();
        QVERIFY(!items.isEmpty());
        for (const QJsonValue &v : items) {
            const QJsonObject e = v.toObject();
            QVERIFY(e.contains(QStringLiteral("eventTime")));
            if (e.value(QStringLiteral("eventTime")).isNull()) {
                QVERIFY2(e.value(QStringLiteral("deprecatedFirstTimestamp")).isString(), qPrintable(e.value(QStringLiteral("reason")).toString()));
            }
        }
    }

    void selfSubjectReviewsHaveTheirRequiredFields()
    {
        const auto access = m_http->send("POST", QStringLiteral("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"),
                                         R"({"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"list","resource":"pods","namespace":"starforge"}}})");
        QCOMPARE(access.status, 201);
        QCOMPARE(missingFields(QStringLiteral("selfsubjectaccessreviews"), access.json(),
                               {{QStringLiteral("v1.SelfSubjectAccessReview"), QString(), {QStringLiteral("spec"), QStringLiteral("status")}},
                                {QStringLiteral("v1.SubjectAccessReviewStatus"), QStringLiteral("status"), {QStringLiteral("allowed")}}}),
                 QStringList());
        const auto rules = m_http->send("POST", QStringLiteral("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"),
                                        R"({"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"starforge"}})");
        QCOMPARE(rules.status, 201);
        QCOMPARE(missingFields(QStringLiteral("selfsubjectrulesreviews"), rules.json(),
                               {{QStringLiteral("v1.SelfSubjectRulesReview"), QString(), {QStringLiteral("spec"), QStringLiteral("status")}},
                                {QStringLiteral("v1.SubjectRulesReviewStatus"), QStringLiteral("status"),
                                 {QStringLiteral("resourceRules"), QStringLiteral("nonResourceRules"), QStringLiteral("incomplete")}},
                                {QStringLiteral("v1.ResourceRule"), QStringLiteral("status.resourceRules[]"), {QStringLiteral("verbs")}},
                                {QStringLiteral("v1.NonResourceRule"), QStringLiteral("status.nonResourceRules[]"), {QStringLiteral("verbs")}}}),
                 QStringList());
    }
};

QTEST_GUILESS_MAIN(TestRequiredFields)
#include "tst_required_fields.moc"
