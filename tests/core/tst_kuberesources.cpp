// Typed views over Kubernetes JSON: the upstream round-trip fixtures and real captures (both
// Event shapes, a Node with GPUs added), GPU requests by kubectl's rules, KubeRay's sample
// RayJobs with the status shapes of docs/kuberay.md, the submitter Job, and garbage that must
// read as empty rather than crash.

#include "core/kube/quantity.h"
#include "core/kube/resources.h"
#include "support/testutil.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

#include <limits>

using namespace Starforge;
using namespace Starforge::Kube;
using namespace Starforge::Testing;

namespace {
QJsonObject fixture(const char *name)
{
    return QJsonDocument::fromJson(readAll(dataPath(QStringLiteral("kubernetes/") + QLatin1String(name)))).object();
}

QJsonObject kuberay(const char *name)
{
    const QJsonObject o = QJsonDocument::fromJson(readAll(dataPath(QStringLiteral("kuberay/") + QLatin1String(name)))).object();
    Q_ASSERT(!o.isEmpty());
    return o;
}

QJsonObject json(const char *text)
{
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(QByteArray(text), &error);
    if (error.error != QJsonParseError::NoError) {
        qFatal("test JSON does not parse: %s", qPrintable(error.errorString()));
    }
    return document.object();
}

// obj with the value at a path of object keys replaced, the objects on the way created.
QJsonObject with(QJsonObject obj, QStringList path, const QJsonValue &value)
{
    const QString key = path.takeFirst();
    obj.insert(key, path.isEmpty() ? value : with(obj.value(key).toObject(), path, value));
    return obj;
}

constexpr qint64 Gi = qint64(1024) * 1024 * 1024;

// The status of a RayJob that ran on a ready cluster, shaped as docs/kuberay.md, "RayJob
// status", describes and as KubeRay v1.7 writes it.
const char *const finishedStatus = R"({
    "jobStatus": "SUCCEEDED", "jobDeploymentStatus": "Complete", "jobId": "grpo-7b-x2k9q",
    "rayClusterName": "grpo-7b-bn7vz", "dashboardURL": "grpo-7b-bn7vz-head-svc.team-a.svc.cluster.local:8265",
    "message": "Job finished successfully.", "startTime": "2026-12-03T09:00:00Z", "endTime": "2026-12-03T10:30:05Z",
    "failed": 1, "succeeded": 1, "observedGeneration": 1,
    "rayJobInfo": {"startTime": "2026-12-03T09:02:11Z", "endTime": "2026-12-03T10:30:01Z"},
    "rayClusterStatus": {
        "state": "ready", "desiredWorkerReplicas": 2, "readyWorkerReplicas": 2, "availableWorkerReplicas": 2,
        "minWorkerReplicas": 1, "maxWorkerReplicas": 4, "desiredCPU": "34", "desiredMemory": "260Gi", "desiredGPU": "16",
        "desiredTPU": "0", "lastUpdateTime": "2026-12-03T09:03:00Z",
        "endpoints": {"client": "10001", "dashboard": "8265", "gcs-server": "6379", "metrics": "8080"},
        "head": {"podIP": "10.0.3.7", "podName": "grpo-7b-bn7vz-head-8mqlz", "serviceIP": "10.96.0.12", "serviceName": "grpo-7b-bn7vz-head-svc"},
        "conditions": [
            {"type": "HeadPodReady", "status": "True", "reason": "HeadPodRunningAndReady", "lastTransitionTime": "2026-12-03T09:01:40Z"},
            {"type": "RayClusterProvisioned", "status": "True", "reason": "AllPodRunningAndReadyFirstTime", "message": ""}]}})";
} // namespace

class TestKubeResources : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void eventShapes()
    {
        // Legacy recorder (a real kubelet event): count and lastTimestamp.
        const Event pulled = Event::fromJson(fixture("k9s-real.event-pulled.json"));
        QCOMPARE(pulled.reason, QStringLiteral("Pulled"));
        QCOMPARE(pulled.type, QStringLiteral("Normal"));
        QCOMPARE(pulled.message, QStringLiteral("Successfully pulled image \"blang/busybox-bash\""));
        QCOMPARE(pulled.count, 1);
        QCOMPARE(pulled.lastSeen, QDateTime(QDate(2019, 8, 30), QTime(20, 43, 5), Qt::UTC));
        QVERIFY(!pulled.regardingName.isEmpty());
        QCOMPARE(pulled.reportingComponent, QStringLiteral("kubelet")); // from source.component

        // core/v1 with every field: series wins for last seen and count.
        const Event core = Event::fromJson(fixture("api-roundtrip.core.v1.Event.json"));
        QCOMPARE(core.lastSeen, QDateTime(QDate(2002, 1, 1), QTime(1, 1, 1, 0), Qt::UTC));
        QCOMPARE(core.count, 1);
        QCOMPARE(core.reportingComponent, QStringLiteral("reportingComponentValue"));

        // events.k8s.io/v1: regarding and note.
        const Event v1 = Event::fromJson(fixture("api-roundtrip.events.k8s.io.v1.Event.json"));
        QCOMPARE(v1.message, QStringLiteral("noteValue"));
        QCOMPARE(v1.reportingComponent, QStringLiteral("reportingControllerValue"));
        QVERIFY(!v1.regardingName.isEmpty());
        QVERIFY(v1.lastSeen.isValid());

        // New recorder without series: eventTime; no count means 1.
        const Event fresh = Event::fromJson(QJsonObject{{QStringLiteral("eventTime"), QStringLiteral("2026-12-03T10:00:00.123456Z")},
                                                        {QStringLiteral("involvedObject"), QJsonObject{{QStringLiteral("name"), QStringLiteral("p")}}}});
        QCOMPARE(fresh.lastSeen, QDateTime(QDate(2026, 12, 3), QTime(10, 0, 0, 123), Qt::UTC));
        QCOMPARE(fresh.count, 1);
    }

    void nodeWithGpus()
    {
        QJsonObject node = fixture("k9s-real.node-minikube.json");
        QJsonObject status = node.value(QStringLiteral("status")).toObject();
        for (const char *key : {"capacity", "allocatable"}) {
            QJsonObject r = status.value(QLatin1String(key)).toObject();
            r.insert(QStringLiteral("nvidia.com/gpu"), QStringLiteral("8"));
            status.insert(QLatin1String(key), r);
        }
        node.insert(QStringLiteral("status"), status);
        QJsonObject meta = node.value(QStringLiteral("metadata")).toObject();
        QJsonObject labels = meta.value(QStringLiteral("labels")).toObject();
        labels.insert(QStringLiteral("starforge/gpu-series"), QStringLiteral("h200"));
        meta.insert(QStringLiteral("labels"), labels);
        node.insert(QStringLiteral("metadata"), meta);
        const Node n = Node::fromJson(node, QStringLiteral("starforge/gpu-series"));
        QCOMPARE(n.name, QStringLiteral("minikube"));
        QCOMPARE(n.series, QStringLiteral("h200"));
        QCOMPARE(n.gpuCapacity, 8);
        QCOMPARE(n.gpuAllocatable, 8);
        QVERIFY(n.ready);
        QCOMPARE(n.readyReason, QStringLiteral("KubeletReady"));
        QVERIFY(!n.unschedulable);
        const Node roundtrip = Node::fromJson(fixture("api-roundtrip.core.v1.Node.json"), QStringLiteral("x"));
        QVERIFY(roundtrip.unschedulable);
        QVERIFY(!roundtrip.taints.isEmpty());
    }

    void podGpuRequestsAndStates()
    {
        const QJsonObject pod = QJsonDocument::fromJson(R"({"metadata":{"name":"w","namespace":"ns"},
            "spec":{"nodeName":"h200-00","initContainers":[{"name":"init","resources":{"limits":{"nvidia.com/gpu":"8"}}}],
                    "containers":[{"name":"a","resources":{"limits":{"nvidia.com/gpu":"2"}}},{"name":"b","resources":{"requests":{"nvidia.com/gpu":"1"}}}]},
            "status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/3 nodes are available"}],
                      "containerStatuses":[{"name":"a","restartCount":2,"state":{"waiting":{"reason":"ImagePullBackOff","message":"Back-off"}}}]}})").object();
        const Pod p = Pod::fromJson(pod);
        QCOMPARE(p.gpuRequests, 8); // the init container's 8 exceeds the containers' 3
        QCOMPARE(p.condition(QStringLiteral("PodScheduled"))->reason, QStringLiteral("Unschedulable"));
        QVERIFY(!p.condition(QStringLiteral("Ready")));
        QCOMPARE(p.containers.first().state, QStringLiteral("waiting"));
        QCOMPARE(p.containers.first().reason, QStringLiteral("ImagePullBackOff"));
        QCOMPARE(p.containers.first().restartCount, 2);
    }

    void garbageReadsAsEmpty()
    {
        const QJsonObject garbage = QJsonDocument::fromJson(R"({"metadata":7,"spec":[1,2],"status":{"conditions":"x","containerStatuses":[null,3,{"state":5}],
            "capacity":{"nvidia.com/gpu":{"a":1}}},"series":"s","count":"many","regarding":null})").object();
        const Pod p = Pod::fromJson(garbage);
        QVERIFY(p.name.isEmpty());
        QCOMPARE(p.gpuRequests, 0);
        QCOMPARE(p.containers.size(), 3);
        const Node n = Node::fromJson(garbage, QStringLiteral("x"));
        QCOMPARE(n.gpuCapacity, 0);
        const Event e = Event::fromJson(garbage);
        QCOMPARE(e.count, 1);
        QVERIFY(!e.lastSeen.isValid());
    }

    void rayJobSample()
    {
        const RayJob job = RayJob::fromJson(kuberay("ray-job.sample.json"));
        QCOMPARE(job.name, QStringLiteral("rayjob-sample"));
        QCOMPARE(job.entrypoint, QStringLiteral("python /home/ray/samples/sample_code.py"));
        QVERIFY(job.runtimeEnvYAML.contains(QStringLiteral("requests==2.26.0")));
        QCOMPARE(job.effectiveSubmissionMode(), QStringLiteral("K8sJobMode"));
        QVERIFY(!job.shutdownAfterJobFinishes);
        QVERIFY(!job.activeDeadlineSeconds);
        QVERIFY(!job.preRunningDeadlineSeconds);
        QCOMPARE(job.backoffLimit, 0);
        QVERIFY(job.hasRayClusterSpec);
        QVERIFY(job.clusterSelector.isEmpty());
        QCOMPARE(job.rayClusterSpec.rayVersion, QStringLiteral("2.52.0"));

        const RayGroup &head = job.rayClusterSpec.head;
        QVERIFY(head.isHead);
        QCOMPARE(head.groupName, QStringLiteral("headgroup"));
        QCOMPARE(head.image, QStringLiteral("rayproject/ray:2.52.0"));
        QCOMPARE(head.limits.value(QStringLiteral("memory")), 5 * Gi * 1000);
        QCOMPARE(head.requests.value(QStringLiteral("memory")), 2 * Gi * 1000);
        QCOMPARE(head.requests.value(QStringLiteral("cpu")), 1000);
        QCOMPARE(head.gpusPerPod, 0);
        QCOMPARE(head.desiredPods(), 1);

        QCOMPARE(job.rayClusterSpec.workers.size(), 1);
        const RayGroup &small = job.rayClusterSpec.workers.first();
        QCOMPARE(small.groupName, QStringLiteral("small-group"));
        QCOMPARE(small.replicas, 1);
        QCOMPARE(small.minReplicas, 1);
        QCOMPARE(small.maxReplicas, 5);
        QCOMPARE(small.numOfHosts, 1);
        QCOMPARE(small.requests.value(QStringLiteral("cpu")), 200);   // the request, not the 1-CPU limit
        QCOMPARE(small.limits.value(QStringLiteral("cpu")), 1000);
        QVERIFY(!small.limits.contains(QStringLiteral("memory")));
        QCOMPARE(small.desiredPods(), 1);
        QCOMPARE(job.rayClusterSpec.desiredGpus(), 0);

        // A RayJob just created has no status: nothing is terminal yet.
        QVERIFY(job.jobDeploymentStatus.isEmpty());
        QVERIFY(!job.isTerminal());
        QVERIFY(!job.isJobStatusTerminal());
        QVERIFY(!job.hasRayClusterStatus);
        QVERIFY(!job.startTime.isValid());
    }

    void rayJobResourcesSample()
    {
        const RayJob job = RayJob::fromJson(kuberay("ray-job.resources.json"));
        const RayGroup &head = job.rayClusterSpec.head;
        QCOMPARE(head.rayStartParams.value(QStringLiteral("num-gpus")).toString(), QStringLiteral("2"));
        QCOMPARE(head.rayStartParams.value(QStringLiteral("resources")).toString(),
                 QStringLiteral("\"{\\\"resource1\\\": 2, \\\"resource2\\\": 3}\""));
        // num-gpus in rayStartParams is Ray's view only; the pod asks the scheduler for none.
        QCOMPARE(head.gpusPerPod, 0);
        QCOMPARE(job.rayClusterSpec.workers.first().requests.value(QStringLiteral("memory")), 1 * Gi * 1000);
    }

    void rayJobWithGpusAndDeadlines()
    {
        QJsonObject o = kuberay("ray-job.sample.json");
        QJsonObject spec = o.value(QStringLiteral("spec")).toObject();
        spec.insert(QStringLiteral("submissionMode"), QStringLiteral("HTTPMode"));
        spec.insert(QStringLiteral("shutdownAfterJobFinishes"), true);
        spec.insert(QStringLiteral("ttlSecondsAfterFinished"), 600);
        spec.insert(QStringLiteral("activeDeadlineSeconds"), 86400);
        spec.insert(QStringLiteral("preRunningDeadlineSeconds"), 900);
        spec.insert(QStringLiteral("backoffLimit"), 2);
        spec.insert(QStringLiteral("suspend"), true);
        QJsonObject cluster = spec.value(QStringLiteral("rayClusterSpec")).toObject();
        QJsonArray workers = cluster.value(QStringLiteral("workerGroupSpecs")).toArray();
        QJsonObject worker = workers.at(0).toObject();
        worker.insert(QStringLiteral("replicas"), 2);
        worker = with(worker, QStringList{QStringLiteral("template"), QStringLiteral("spec"), QStringLiteral("nodeSelector")},
                      QJsonObject{{QStringLiteral("starforge/gpu-series"), QStringLiteral("h200")}});
        QJsonObject container = worker.value(QStringLiteral("template")).toObject().value(QStringLiteral("spec")).toObject()
                                    .value(QStringLiteral("containers")).toArray().at(0).toObject();
        container = with(container, QStringList{QStringLiteral("resources"), QStringLiteral("limits"), QStringLiteral("nvidia.com/gpu")},
                         QStringLiteral("8"));
        worker = with(worker, QStringList{QStringLiteral("template"), QStringLiteral("spec"), QStringLiteral("containers")}, QJsonArray{container});
        workers.replace(0, worker);
        cluster.insert(QStringLiteral("workerGroupSpecs"), workers);
        spec.insert(QStringLiteral("rayClusterSpec"), cluster);
        o.insert(QStringLiteral("spec"), spec);

        const RayJob job = RayJob::fromJson(o);
        QCOMPARE(job.effectiveSubmissionMode(), QStringLiteral("HTTPMode"));
        QVERIFY(job.shutdownAfterJobFinishes);
        QVERIFY(job.suspend);
        QCOMPARE(job.ttlSecondsAfterFinished, 600);
        QCOMPARE(job.activeDeadlineSeconds, std::optional<int>(86400));
        QCOMPARE(job.preRunningDeadlineSeconds, std::optional<int>(900));
        QCOMPARE(job.backoffLimit, 2);
        const RayGroup &w = job.rayClusterSpec.workers.first();
        QCOMPARE(w.gpusPerPod, 8);
        QCOMPARE(w.limits.value(QStringLiteral("nvidia.com/gpu")), 8000);
        QCOMPARE(w.requests.value(QStringLiteral("nvidia.com/gpu")), 8000);   // a limit alone is the request
        QCOMPARE(w.nodeSelector.value(QStringLiteral("starforge/gpu-series")).toString(), QStringLiteral("h200"));
        QCOMPARE(w.desiredPods(), 2);
        QCOMPARE(job.rayClusterSpec.desiredGpus(), 16);
    }

    void rayJobStates_data()
    {
        QTest::addColumn<QString>("deployment");
        QTest::addColumn<QString>("jobStatus");
        QTest::addColumn<bool>("terminal");
        QTest::addColumn<bool>("succeeded");
        QTest::addColumn<bool>("jobStatusTerminal");
        // docs/kuberay.md, "RayJob status": terminal is Complete or Failed, plus ValidationFailed
        // in practice; Complete covers STOPPED; Suspended is parked and Retrying transient.
        QTest::newRow("new") << QString() << QString() << false << false << false;
        QTest::newRow("initializing") << QStringLiteral("Initializing") << QString() << false << false << false;
        QTest::newRow("waiting") << QStringLiteral("Waiting") << QString() << false << false << false;
        QTest::newRow("running, submitter not started") << QStringLiteral("Running") << QString() << false << false << false;
        QTest::newRow("running") << QStringLiteral("Running") << QStringLiteral("RUNNING") << false << false << false;
        QTest::newRow("running, pending in Ray") << QStringLiteral("Running") << QStringLiteral("PENDING") << false << false << false;
        QTest::newRow("ray done, deployment lagging") << QStringLiteral("Running") << QStringLiteral("SUCCEEDED") << false << false << true;
        QTest::newRow("complete") << QStringLiteral("Complete") << QStringLiteral("SUCCEEDED") << true << true << true;
        QTest::newRow("complete but stopped") << QStringLiteral("Complete") << QStringLiteral("STOPPED") << true << false << true;
        QTest::newRow("failed") << QStringLiteral("Failed") << QStringLiteral("FAILED") << true << false << true;
        QTest::newRow("failed before submission") << QStringLiteral("Failed") << QString() << true << false << false;
        QTest::newRow("validation failed") << QStringLiteral("ValidationFailed") << QString() << true << false << false;
        QTest::newRow("retrying") << QStringLiteral("Retrying") << QStringLiteral("FAILED") << false << false << true;
        QTest::newRow("suspending") << QStringLiteral("Suspending") << QStringLiteral("RUNNING") << false << false << false;
        QTest::newRow("suspended") << QStringLiteral("Suspended") << QString() << false << false << false;
        QTest::newRow("unknown future state") << QStringLiteral("Queued") << QString() << false << false << false;
    }

    void rayJobStates()
    {
        QFETCH(QString, deployment);
        QFETCH(QString, jobStatus);
        QFETCH(bool, terminal);
        QFETCH(bool, succeeded);
        QFETCH(bool, jobStatusTerminal);
        const RayJob job = RayJob::fromJson(QJsonObject{
            {QStringLiteral("status"), QJsonObject{{QStringLiteral("jobDeploymentStatus"), deployment}, {QStringLiteral("jobStatus"), jobStatus}}}});
        QCOMPARE(job.jobDeploymentStatus, deployment);
        QCOMPARE(job.jobStatus, jobStatus);
        QCOMPARE(job.isTerminal(), terminal);
        QCOMPARE(job.isSucceeded(), succeeded);
        QCOMPARE(job.isJobStatusTerminal(), jobStatusTerminal);
        QCOMPARE(job.isSuspended(), deployment == QLatin1String("Suspended"));
    }

    void rayJobFinishedStatus()
    {
        QJsonObject o = kuberay("ray-job.sample.json");
        o = with(o, QStringList{QStringLiteral("metadata"), QStringLiteral("namespace")}, QStringLiteral("team-a"));
        o = with(o, QStringList{QStringLiteral("metadata"), QStringLiteral("uid")}, QStringLiteral("5e1c0a47-1d2b-4c1f-9a3e-0f5d7c9b2a11"));
        o = with(o, QStringList{QStringLiteral("metadata"), QStringLiteral("creationTimestamp")}, QStringLiteral("2026-12-03T08:59:58Z"));
        o = with(o, QStringList{QStringLiteral("metadata"), QStringLiteral("labels")}, QJsonObject{{QStringLiteral("starforge/run"), QStringLiteral("grpo-7b")}});
        o = with(o, QStringList{QStringLiteral("metadata"), QStringLiteral("annotations")}, QJsonObject{{QStringLiteral("starforge/capsule"), QStringLiteral("sha256:ab")}});
        o.insert(QStringLiteral("status"), json(finishedStatus));
        const RayJob job = RayJob::fromJson(o);
        QCOMPARE(job.ns, QStringLiteral("team-a"));
        QCOMPARE(job.uid, QStringLiteral("5e1c0a47-1d2b-4c1f-9a3e-0f5d7c9b2a11"));
        QCOMPARE(job.creationTimestamp, QDateTime(QDate(2026, 12, 3), QTime(8, 59, 58), Qt::UTC));
        QCOMPARE(job.labels.value(QStringLiteral("starforge/run")).toString(), QStringLiteral("grpo-7b"));
        QCOMPARE(job.annotations.value(QStringLiteral("starforge/capsule")).toString(), QStringLiteral("sha256:ab"));
        QVERIFY(job.isTerminal());
        QVERIFY(job.isSucceeded());
        QCOMPARE(job.jobId, QStringLiteral("grpo-7b-x2k9q"));
        QCOMPARE(job.rayClusterName, QStringLiteral("grpo-7b-bn7vz"));
        QCOMPARE(job.dashboardURL, QStringLiteral("grpo-7b-bn7vz-head-svc.team-a.svc.cluster.local:8265"));
        QCOMPARE(job.message, QStringLiteral("Job finished successfully."));
        QVERIFY(job.reason.isEmpty());
        QCOMPARE(job.startTime, QDateTime(QDate(2026, 12, 3), QTime(9, 0), Qt::UTC));
        QCOMPARE(job.endTime, QDateTime(QDate(2026, 12, 3), QTime(10, 30, 5), Qt::UTC));
        QCOMPARE(job.failed, 1);
        QCOMPARE(job.succeeded, 1);

        QVERIFY(job.hasRayClusterStatus);
        const RayClusterStatus &cs = job.rayClusterStatus;
        QVERIFY(cs.isReady());
        QCOMPARE(cs.desiredWorkerReplicas, 2);
        QCOMPARE(cs.readyWorkerReplicas, 2);
        QCOMPARE(cs.availableWorkerReplicas, 2);
        QCOMPARE(cs.minWorkerReplicas, 1);
        QCOMPARE(cs.maxWorkerReplicas, 4);
        QCOMPARE(cs.desiredGpus, 16);
        QCOMPARE(cs.headPodIP, QStringLiteral("10.0.3.7"));
        QCOMPARE(cs.headPodName, QStringLiteral("grpo-7b-bn7vz-head-8mqlz"));
        QCOMPARE(cs.headServiceName, QStringLiteral("grpo-7b-bn7vz-head-svc"));
        QCOMPARE(cs.headServiceIP, QStringLiteral("10.96.0.12"));
        QCOMPARE(cs.endpoints.value(QStringLiteral("dashboard")).toString(), QStringLiteral("8265"));
        QCOMPARE(cs.lastUpdateTime, QDateTime(QDate(2026, 12, 3), QTime(9, 3), Qt::UTC));
        QCOMPARE(cs.conditions.size(), 2);
        QVERIFY(cs.condition(QStringLiteral("HeadPodReady"))->isTrue());
        QCOMPARE(cs.condition(QStringLiteral("HeadPodReady"))->lastTransitionTime, QDateTime(QDate(2026, 12, 3), QTime(9, 1, 40), Qt::UTC));
        QCOMPARE(cs.condition(QStringLiteral("RayClusterProvisioned"))->reason, QStringLiteral("AllPodRunningAndReadyFirstTime"));
        QVERIFY(!cs.condition(QStringLiteral("RayClusterReplicaFailure")));
    }

    void rayJobFailures()
    {
        // A deadline while a worker stays Pending: Failed, no Ray status, the cluster not ready.
        const RayJob deadline = RayJob::fromJson(json(R"({"spec":{"activeDeadlineSeconds":600},"status":{
            "jobDeploymentStatus":"Failed","reason":"DeadlineExceeded",
            "message":"The RayJob has passed the activeDeadlineSeconds. StartTime: 2026-12-03T09:00:00Z. ActiveDeadlineSeconds: 600",
            "startTime":"2026-12-03T09:00:00Z","endTime":"2026-12-03T09:10:00Z","failed":1,"succeeded":0,
            "rayClusterName":"grpo-7b-bn7vz",
            "rayClusterStatus":{"desiredWorkerReplicas":2,"readyWorkerReplicas":1,"availableWorkerReplicas":1,
                "conditions":[{"type":"HeadPodReady","status":"True","reason":"HeadPodRunningAndReady"},
                              {"type":"RayClusterProvisioned","status":"False","reason":"RayClusterPodsProvisioning"}]}}})"));
        QVERIFY(deadline.isTerminal());
        QVERIFY(!deadline.isSucceeded());
        QCOMPARE(deadline.reason, QStringLiteral("DeadlineExceeded"));
        QCOMPARE(deadline.activeDeadlineSeconds, std::optional<int>(600));
        QVERIFY(!deadline.rayClusterStatus.isReady());
        QCOMPARE(deadline.rayClusterStatus.readyWorkerReplicas, 1);
        QVERIFY(!deadline.rayClusterStatus.condition(QStringLiteral("RayClusterProvisioned"))->isTrue());

        // v1.5+: an invalid spec gets ValidationFailed with the validation error as the message.
        const RayJob invalid = RayJob::fromJson(json(R"({"status":{"jobDeploymentStatus":"ValidationFailed","reason":"ValidationFailed",
            "message":"The RayJob spec is invalid default/x: The RayJob spec is invalid: ttlSecondsAfterFinished is only supported when shutdownAfterJobFinishes is set"}})"));
        QVERIFY(invalid.isTerminal());
        QVERIFY(invalid.message.contains(QStringLiteral("shutdownAfterJobFinishes")));

        // The submitter finished but Ray never reported a final status: Failed, jobStatus forced.
        const RayJob grace = RayJob::fromJson(json(R"({"status":{"jobDeploymentStatus":"Failed","jobStatus":"FAILED",
            "reason":"JobDeploymentStatusTransitionGracePeriodExceeded"}})"));
        QVERIFY(grace.isTerminal());
        QVERIFY(grace.isJobStatusTerminal());

        // An existing cluster by selector: no rayClusterSpec.
        const RayJob selected = RayJob::fromJson(json(R"({"spec":{"clusterSelector":{"ray.io/cluster":"shared"},"submissionMode":"HTTPMode"}})"));
        QVERIFY(!selected.hasRayClusterSpec);
        QCOMPARE(selected.clusterSelector.value(QStringLiteral("ray.io/cluster")).toString(), QStringLiteral("shared"));
        QCOMPARE(selected.rayClusterSpec.workers.size(), 0);
    }

    void rayClusterOwnedByRayJob()
    {
        QJsonObject o{{QStringLiteral("apiVersion"), QStringLiteral("ray.io/v1")},
                      {QStringLiteral("kind"), QStringLiteral("RayCluster")},
                      {QStringLiteral("spec"), kuberay("ray-job.sample.json").value(QStringLiteral("spec")).toObject().value(QStringLiteral("rayClusterSpec"))}};
        o.insert(QStringLiteral("metadata"), json(R"({"name":"rayjob-sample-bn7vz","namespace":"team-a","uid":"c1",
            "creationTimestamp":"2026-12-03T09:00:01Z",
            "labels":{"ray.io/originated-from-cr-name":"rayjob-sample","ray.io/originated-from-crd":"RayJob","ray.io/job-submission-mode":"K8sJobMode"},
            "annotations":{"note":"copied from the RayJob"},
            "ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"not-the-controller","uid":"x"},
                               {"apiVersion":"ray.io/v1","kind":"RayJob","name":"rayjob-sample","uid":"r1","controller":true,"blockOwnerDeletion":true}]})"));
        o.insert(QStringLiteral("status"), json(finishedStatus).value(QStringLiteral("rayClusterStatus")));
        const RayCluster c = RayCluster::fromJson(o);
        QCOMPARE(c.name, QStringLiteral("rayjob-sample-bn7vz"));
        QCOMPARE(c.ns, QStringLiteral("team-a"));
        QCOMPARE(c.uid, QStringLiteral("c1"));
        QCOMPARE(c.creationTimestamp, QDateTime(QDate(2026, 12, 3), QTime(9, 0, 1), Qt::UTC));
        QCOMPARE(c.annotations.value(QStringLiteral("note")).toString(), QStringLiteral("copied from the RayJob"));
        QCOMPARE(c.originRayJob(), QStringLiteral("rayjob-sample"));
        QVERIFY(c.controller);
        QCOMPARE(c.controller->kind, QStringLiteral("RayJob"));
        QCOMPARE(c.controller->name, QStringLiteral("rayjob-sample"));
        QCOMPARE(c.controller->uid, QStringLiteral("r1"));
        QCOMPARE(c.spec.rayVersion, QStringLiteral("2.52.0"));
        QCOMPARE(c.spec.head.image, QStringLiteral("rayproject/ray:2.52.0"));
        QCOMPARE(c.spec.workers.first().groupName, QStringLiteral("small-group"));
        QVERIFY(c.status.isReady());
        QCOMPARE(c.status.headServiceName, QStringLiteral("grpo-7b-bn7vz-head-svc"));

        // Suspended by the RayJob: state and condition, no head.
        const RayCluster parked = RayCluster::fromJson(json(R"({"metadata":{"name":"p","labels":{"ray.io/originated-from-cr-name":"x"}},
            "spec":{"suspend":true},"status":{"state":"suspended","conditions":[{"type":"RayClusterSuspended","status":"True"}]}})"));
        QVERIFY(parked.spec.suspend);
        QCOMPARE(parked.status.state, QStringLiteral("suspended"));
        QVERIFY(parked.status.condition(QStringLiteral("RayClusterSuspended"))->isTrue());
        QVERIFY(!parked.controller);
        QVERIFY(parked.originRayJob().isEmpty());   // the CRD label is missing
        QVERIFY(parked.status.headPodIP.isEmpty());
    }

    void workerGroupCounting()
    {
        auto group = [](const char *text) { return RayGroup::fromJson(json(text), false); };
        QCOMPARE(group(R"({"replicas":10,"minReplicas":1,"maxReplicas":5})").desiredPods(), 5);
        QCOMPARE(group(R"({"replicas":0,"minReplicas":2,"maxReplicas":5})").desiredPods(), 2);
        QCOMPARE(group(R"({"replicas":3,"minReplicas":0,"maxReplicas":5,"numOfHosts":4})").desiredPods(), 12);
        QCOMPARE(group(R"({"replicas":3,"minReplicas":0,"maxReplicas":5,"suspend":true})").desiredPods(), 0);
        // maxReplicas and numOfHosts take KubeRay's defaults when absent.
        const RayGroup defaults = group(R"({"replicas":7})");
        QCOMPARE(defaults.maxReplicas, std::numeric_limits<int>::max());
        QCOMPARE(defaults.numOfHosts, 1);
        QCOMPARE(defaults.desiredPods(), 7);
        // Invalid bounds and extremes count without overflow.
        QCOMPARE(group(R"({"replicas":3,"minReplicas":4,"maxReplicas":2})").desiredPods(), 4);
        QCOMPARE(group(R"({"replicas":-3,"minReplicas":-9,"maxReplicas":2})").desiredPods(), 0);
        QCOMPARE(group(R"({"replicas":2147483647,"numOfHosts":2147483647})").desiredPods(),
                 qint64(std::numeric_limits<int>::max()) * std::numeric_limits<int>::max());
        QCOMPARE(group(R"({"replicas":2,"numOfHosts":-1})").desiredPods(), 2);
    }

    void submitterJob()
    {
        const char *meta = R"("metadata":{"name":"grpo-7b","namespace":"team-a","uid":"j1",
            "labels":{"ray.io/originated-from-cr-name":"grpo-7b","ray.io/originated-from-crd":"RayJob"},
            "ownerReferences":[{"apiVersion":"ray.io/v1","kind":"RayJob","name":"grpo-7b","uid":"r1","controller":true}]})";
        const Job running = Job::fromJson(json(qPrintable(QStringLiteral(R"({%1,"spec":{"backoffLimit":2},
            "status":{"active":1,"startTime":"2026-12-03T09:02:00Z"}})").arg(QLatin1String(meta)))));
        QCOMPARE(running.name, QStringLiteral("grpo-7b"));
        QCOMPARE(running.ns, QStringLiteral("team-a"));
        QCOMPARE(running.uid, QStringLiteral("j1"));
        QCOMPARE(running.labels.value(QStringLiteral("ray.io/originated-from-crd")).toString(), QStringLiteral("RayJob"));
        QCOMPARE(running.ownerRayJob(), QStringLiteral("grpo-7b"));
        QCOMPARE(running.backoffLimit, std::optional<int>(2));
        QCOMPARE(running.active, 1);
        QCOMPARE(running.startTime, QDateTime(QDate(2026, 12, 3), QTime(9, 2), Qt::UTC));
        QVERIFY(!running.isFinished());
        QVERIFY(!running.completionTime.isValid());

        // Three pods failed (backoffLimit 2): FailureTarget, then Failed.
        const Job failed = Job::fromJson(json(qPrintable(QStringLiteral(R"({%1,"spec":{"backoffLimit":2},"status":{"failed":3,
            "startTime":"2026-12-03T09:02:00Z","conditions":[
              {"type":"FailureTarget","status":"True","reason":"BackoffLimitExceeded","message":"Job has reached the specified backoff limit"},
              {"type":"Failed","status":"True","reason":"BackoffLimitExceeded","message":"Job has reached the specified backoff limit",
               "lastTransitionTime":"2026-12-03T09:05:00Z"}]}})").arg(QLatin1String(meta)))));
        QCOMPARE(failed.failed, 3);
        QVERIFY(failed.isFinished());
        QVERIFY(failed.isFailed());
        QCOMPARE(failed.condition(QStringLiteral("Failed"))->reason, QStringLiteral("BackoffLimitExceeded"));
        QCOMPARE(failed.condition(QStringLiteral("Failed"))->lastTransitionTime, QDateTime(QDate(2026, 12, 3), QTime(9, 5), Qt::UTC));

        const Job complete = Job::fromJson(json(R"({"status":{"succeeded":1,"startTime":"2026-12-03T09:02:00Z",
            "completionTime":"2026-12-03T10:30:04Z","conditions":[{"type":"SuccessCriteriaMet","status":"True"},{"type":"Complete","status":"True"}]}})"));
        QVERIFY(complete.isFinished());
        QVERIFY(!complete.isFailed());
        QCOMPARE(complete.succeeded, 1);
        QCOMPARE(complete.completionTime, QDateTime(QDate(2026, 12, 3), QTime(10, 30, 4), Qt::UTC));
        QVERIFY(!complete.backoffLimit);   // absent stays absent
        QVERIFY(complete.ownerRayJob().isEmpty());

        // Suspended, and a Failed condition that is not True.
        const Job suspended = Job::fromJson(json(R"({"status":{"conditions":[{"type":"Suspended","status":"True","reason":"JobSuspended"},
            {"type":"Failed","status":"False"}]}})"));
        QVERIFY(suspended.condition(QStringLiteral("Suspended"))->isTrue());
        QVERIFY(!suspended.isFinished());

        // Owned by something else as controller: no RayJob.
        const Job cron = Job::fromJson(json(R"({"metadata":{"ownerReferences":[{"kind":"CronJob","name":"nightly","controller":true},
            {"kind":"RayJob","name":"not-controller"}]}})"));
        QCOMPARE(cron.controller->kind, QStringLiteral("CronJob"));
        QVERIFY(cron.ownerRayJob().isEmpty());
    }

    void newViewsSurviveGarbage_data()
    {
        QTest::addColumn<QByteArray>("document");
        QTest::newRow("empty") << QByteArray("{}");
        QTest::newRow("wrong types everywhere") << QByteArray(R"({"metadata":{"name":7,"namespace":[],"labels":"x","annotations":[1],
            "ownerReferences":{"controller":true},"creationTimestamp":12},
            "spec":{"entrypoint":{"a":1},"runtimeEnvYAML":true,"activeDeadlineSeconds":"60","preRunningDeadlineSeconds":1.5,
                "backoffLimit":null,"ttlSecondsAfterFinished":"10","suspend":"true","shutdownAfterJobFinishes":1,
                "rayClusterSpec":{"rayVersion":2.52,"headGroupSpec":[],"workerGroupSpecs":{"replicas":3}}},
            "status":{"jobStatus":1,"jobDeploymentStatus":["Complete"],"startTime":"yesterday","endTime":"2026-13-45T99:99:99Z",
                "failed":"1","succeeded":-1,"rayClusterStatus":"ready","conditions":{"type":"Failed"}}})");
        QTest::newRow("arrays instead of objects") << QByteArray(R"({"metadata":[],"spec":[{"rayClusterSpec":{}}],"status":[[]],
            "rayClusterSpec":[],"headGroupSpec":[]})");
        QTest::newRow("huge numbers") << QByteArray(R"({"spec":{"activeDeadlineSeconds":1e300,"preRunningDeadlineSeconds":-1e300,
            "backoffLimit":9223372036854775807,"ttlSecondsAfterFinished":2147483648,
            "rayClusterSpec":{"headGroupSpec":{"template":{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"9P"}}}]}}},
                "workerGroupSpecs":[{"replicas":1e308,"minReplicas":-2147483649,"maxReplicas":1.7e308,"numOfHosts":4294967296,
                    "template":{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"8E","cpu":"1e18"}}}],
                                        "initContainers":[{"resources":{"requests":{"nvidia.com/gpu":"9P"}}}]}}}]}},
            "status":{"failed":1e20,"rayClusterStatus":{"desiredGPU":"9P","readyWorkerReplicas":4294967297,"head":{"podIP":1e5}}}})");
        QTest::newRow("nested garbage in groups") << QByteArray(R"({"spec":{"rayClusterSpec":{"workerGroupSpecs":[null,1,"x",[],
            {"template":{"spec":{"containers":{"0":{"image":"i"}},"nodeSelector":["a"]}}},
            {"template":{"spec":{"containers":[null,{"image":"second"}]}}},
            {"template":{"spec":{"containers":[]}}}]}}})");
    }

    void newViewsSurviveGarbage()
    {
        QFETCH(QByteArray, document);
        const QJsonObject o = QJsonDocument::fromJson(document).object();
        QVERIFY(!o.isEmpty() || document == "{}");
        const RayJob job = RayJob::fromJson(o);
        const RayCluster cluster = RayCluster::fromJson(o);
        const Job batch = Job::fromJson(o);
        const RayClusterStatus status = RayClusterStatus::fromJson(o.value(QStringLiteral("status")).toObject());
        // Mistyped fields read as empty; out-of-range numbers as absent or zero.
        QVERIFY(job.name.isEmpty());
        QVERIFY(job.jobDeploymentStatus.isEmpty());
        QVERIFY(!job.isTerminal());
        QVERIFY(!job.activeDeadlineSeconds);
        QVERIFY(!job.preRunningDeadlineSeconds);
        QCOMPARE(job.backoffLimit, 0);
        QCOMPARE(job.ttlSecondsAfterFinished, 0);
        QVERIFY(!job.suspend);
        QVERIFY(!job.startTime.isValid());
        QVERIFY(!job.endTime.isValid());
        QCOMPARE(job.rayClusterStatus.readyWorkerReplicas, 0);
        QVERIFY(job.rayClusterStatus.headPodIP.isEmpty());
        QCOMPARE(job.failed, 0);
        QVERIFY(cluster.labels.isEmpty());
        QVERIFY(!cluster.controller);
        QVERIFY(!batch.isFinished());
        QVERIFY(status.conditions.isEmpty());
        QVERIFY(job.rayClusterSpec.desiredGpus() >= 0);
        for (const RayGroup &g : job.rayClusterSpec.workers) {
            QVERIFY(g.desiredPods() >= 0);
            QVERIFY(g.gpusPerPod >= 0);
        }
    }

    void extremesSaturate()
    {
        // GPUs beyond int saturate instead of wrapping to a negative or small count.
        const RayJob job = RayJob::fromJson(QJsonDocument::fromJson(QByteArray(R"({"spec":{
            "rayClusterSpec":{"headGroupSpec":{"template":{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"9P"}}}]}}},
            "workerGroupSpecs":[{"replicas":2147483647,"numOfHosts":2147483647,
                "template":{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"9P"}}}]}}}]}},
            "status":{"rayClusterStatus":{"desiredGPU":"9P"}}})")).object());
        QCOMPARE(job.rayClusterSpec.head.gpusPerPod, std::numeric_limits<int>::max());
        QCOMPARE(job.rayClusterSpec.desiredGpus(), std::numeric_limits<qint64>::max());
        QCOMPARE(job.rayClusterStatus.desiredGpus, std::numeric_limits<int>::max());
        const Pod pod = Pod::fromJson(QJsonDocument::fromJson(R"({"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"9P"}}}]}})").object());
        QCOMPARE(pod.gpuRequests, std::numeric_limits<int>::max());
    }

    void sandboxCaptures()
    {
        QHash<QString, RayJob> jobs;
        for (const QJsonValue &item : kuberay("sandbox-list-rayjobs.json").value(QStringLiteral("items")).toArray()) {
            const RayJob job = RayJob::fromJson(item.toObject());
            jobs.insert(job.name, job);
        }
        QCOMPARE(jobs.size(), 2);
        const RayJob ok = jobs.value(QStringLiteral("rayjob-ok"));
        QVERIFY(ok.isTerminal());
        QVERIFY(ok.isSucceeded());
        QCOMPARE(ok.ns, QStringLiteral("starforge"));
        QVERIFY(ok.shutdownAfterJobFinishes);
        QCOMPARE(ok.rayClusterSpec.workers.first().gpusPerPod, 8);
        QCOMPARE(ok.rayClusterSpec.desiredGpus(), 8);
        QVERIFY(ok.endTime.isValid());
        QVERIFY(ok.rayClusterStatus.isReady());
        QVERIFY(ok.rayClusterStatus.condition(QStringLiteral("HeadPodReady"))->isTrue());
        QCOMPARE(ok.dashboardURL, ok.rayClusterName + QStringLiteral("-head-svc.starforge.svc.cluster.local:8265"));

        // The image cannot be pulled: Initializing with the cluster's own account of why.
        const RayJob stuck = jobs.value(QStringLiteral("rayjob-sample"));
        QCOMPARE(stuck.jobDeploymentStatus, QStringLiteral("Initializing"));
        QVERIFY(!stuck.isTerminal());
        QVERIFY(stuck.hasRayClusterStatus);
        QVERIFY(!stuck.rayClusterStatus.isReady());
        QCOMPARE(stuck.rayClusterStatus.condition(QStringLiteral("HeadPodReady"))->reason, QStringLiteral("HeadPodNotFound"));

        const QJsonArray submitters = kuberay("sandbox-list-jobs.json").value(QStringLiteral("items")).toArray();
        QCOMPARE(submitters.size(), 1);
        const Job submitter = Job::fromJson(submitters.at(0).toObject());
        QCOMPARE(submitter.ownerRayJob(), QStringLiteral("rayjob-ok"));
        QCOMPARE(submitter.controller->uid, ok.uid);
        QVERIFY(submitter.isFinished());
        QVERIFY(!submitter.isFailed());
        QCOMPARE(submitter.succeeded, 1);
    }

    // Inputs fuzz_kube_views found (tests/fuzz/corpus/kube_views/regression-*), kept here so the
    // g++ suite guards them without clang.
    void fuzzRegressions()
    {
        // Two containers of 9P GPUs: the sum left qint64 (undefined behaviour, a negative count).
        const Pod pod = Pod::fromJson(QJsonDocument::fromJson(readAll(
            QStringLiteral(SF_SOURCE_DIR "/tests/fuzz/corpus/kube_views/regression-pod-gpu-sum-overflow.json"))).object());
        QCOMPARE(pod.gpuRequests, std::numeric_limits<int>::max());
        // An exponent beyond int read as 0, so "1e99999999999" was one unit.
        QCOMPARE(parseQuantityMilli(QStringLiteral("1e99999999999")), std::nullopt);
        QCOMPARE(parseQuantityMilli(QStringLiteral("1e+3")), std::optional<qint64>(1'000'000));
        QCOMPARE(parseQuantityMilli(QStringLiteral("15e-1")), std::optional<qint64>(1500));
    }
};

QTEST_APPLESS_MAIN(TestKubeResources)
#include "tst_kuberesources.moc"
