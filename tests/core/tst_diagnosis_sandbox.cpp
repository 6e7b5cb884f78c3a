// Each diagnosis cause from a real situation on the sandbox cluster: RayJobs that cannot be
// scheduled (GPUs short, a series nobody has, alone and beside a tainted and a cordoned node, a
// taint, a cordon, memory), images that cannot be pulled (absent, private without a pull
// secret, pull policy Never), a failing capsule download (init container and Ray's
// working_dir), a missing Secret, a crash loop, the pre-running deadline and a ResourceQuota
// that stops the head pod (no pod at all).
// The job's RayJob, RayCluster, pods, events and submitter log are read back by the app's own
// Job::fetchJobSnapshot; capacity comes from the engine fed by real informers.

#include "core/cluster/capacity.h"
#include "core/cluster/diagnosis.h"
#include "core/events/timeline.h"
#include "core/job/jobsnapshot.h"
#include "core/kube/informer.h"
#include "core/kube/kubeclient.h"
#include "sandbox/sandbox.h"
#include "support/sandboxfixture.h"
#include "support/testutil.h"

#include <QHash>
#include <QJsonArray>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

using namespace Starforge;
using namespace Starforge::Cluster;
using namespace Starforge::Testing;

namespace {

const QString RayImage = QStringLiteral("rayproject/ray:2.55.1");
const QString Present = QStringLiteral("registry.example/present:1");
const QString SeriesLabel = defaultSeriesLabel();

QJsonObject container(const QString &name, const QString &image = RayImage, int gpus = 0, const QJsonObject &extra = {})
{
    QJsonObject c{{QStringLiteral("name"), name}, {QStringLiteral("image"), image}};
    if (gpus > 0) {
        c.insert(QStringLiteral("resources"), QJsonObject{{QStringLiteral("limits"), QJsonObject{{QStringLiteral("nvidia.com/gpu"), QString::number(gpus)}}}});
    }
    for (auto it = extra.begin(); it != extra.end(); ++it) c.insert(it.key(), it.value());
    return c;
}

QJsonObject podSpec(const QJsonArray &containers, const QString &series = {}, const QJsonObject &extra = {})
{
    QJsonObject spec{{QStringLiteral("containers"), containers}};
    if (!series.isEmpty()) spec.insert(QStringLiteral("nodeSelector"), QJsonObject{{SeriesLabel, series}});
    for (auto it = extra.begin(); it != extra.end(); ++it) spec.insert(it.key(), it.value());
    return spec;
}

QJsonObject workers(const QString &group, int replicas, const QJsonObject &spec)
{
    return QJsonObject{{QStringLiteral("groupName"), group}, {QStringLiteral("replicas"), replicas}, {QStringLiteral("minReplicas"), replicas},
                       {QStringLiteral("maxReplicas"), replicas}, {QStringLiteral("rayStartParams"), QJsonObject()},
                       {QStringLiteral("template"), QJsonObject{{QStringLiteral("spec"), spec}}}};
}

QJsonObject rayJob(const QString &name, const QJsonObject &headSpec, const QJsonArray &workerGroups = {}, const QJsonObject &extra = {})
{
    QJsonObject cluster{{QStringLiteral("rayVersion"), QStringLiteral("2.55.1")},
                        {QStringLiteral("headGroupSpec"), QJsonObject{{QStringLiteral("rayStartParams"), QJsonObject()},
                                                                      {QStringLiteral("template"), QJsonObject{{QStringLiteral("spec"), headSpec}}}}}};
    if (!workerGroups.isEmpty()) cluster.insert(QStringLiteral("workerGroupSpecs"), workerGroups);
    QJsonObject spec{{QStringLiteral("entrypoint"), QStringLiteral("python3 main.py")},
                     {QStringLiteral("shutdownAfterJobFinishes"), true},
                     {QStringLiteral("ttlSecondsAfterFinished"), 300},
                     {QStringLiteral("rayClusterSpec"), cluster}};
    for (auto it = extra.begin(); it != extra.end(); ++it) spec.insert(it.key(), it.value());
    return QJsonObject{{QStringLiteral("apiVersion"), QStringLiteral("ray.io/v1")}, {QStringLiteral("kind"), QStringLiteral("RayJob")},
                       {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}}}, {QStringLiteral("spec"), spec}};
}

QJsonObject headOnly()
{
    return podSpec(QJsonArray{container(QStringLiteral("ray-head"))});
}

} // namespace

class TestDiagnosisSandbox : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<SandboxHttp> m_http;
    std::unique_ptr<Kube::KubeClient> m_client;
    std::unique_ptr<Kube::Informer> m_nodes;
    std::unique_ptr<Kube::Informer> m_pods;
    std::unique_ptr<CapacityTracker> m_tracker;
    const QString m_base = QStringLiteral("/api/v1/namespaces/starforge");
    const QString m_rayjobs = QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs");

    // What a case changed, undone by cleanup() whether the case passed or not, so that one
    // failure cannot spread into the cases after it.
    QStringList m_submitted;
    QSet<QString> m_patchedNodes;
    QHash<QString, qint64> m_idleUsed;   // GPUs in use per series before any case ran
    QStringList m_quotas;                // ResourceQuotas a case made

    void submit(const QJsonObject &job)
    {
        m_submitted << job[QStringLiteral("metadata")][QStringLiteral("name")].toString();
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(job).toJson()).status, 201);
    }

    void patchNode(const QString &node, const QByteArray &patch)
    {
        m_patchedNodes.insert(node);
        QCOMPARE(m_http->send("PATCH", QStringLiteral("/api/v1/nodes/") + node, patch, "application/merge-patch+json").status, 200);
    }

    // What the app gathers about one job (Job::fetchJobSnapshot, as the tracker and
    // `starforge-cli diagnose` do): the RayJob, its RayCluster, the Ray and submitter pods, the
    // events about any of them (including pods that are gone) and the submitter's log.
    std::optional<Job::JobSnapshot> snapshotOf(const QString &name)
    {
        Job::SnapshotRequest request = Job::SnapshotRequest::of(QStringLiteral("starforge"), name, true);
        request.rayJobName = name;
        std::optional<Result<Job::JobSnapshot>> snapshot;
        Job::fetchJobSnapshot(m_client.get(), request, this, [&snapshot](Result<Job::JobSnapshot> s) { snapshot = std::move(s); });
        if (!QTest::qWaitFor([&] { return snapshot.has_value(); }, 10000) || !*snapshot) {
            qWarning() << "no snapshot of" << name << (snapshot ? snapshot->error().message : QStringLiteral("(no answer)"));
            return std::nullopt;
        }
        return **snapshot;
    }

    Diagnosis diagnoseJob(const QString &name)
    {
        const auto snapshot = snapshotOf(name);
        return snapshot ? diagnose(snapshot->diagnosisInput(&m_tracker->model(), SeriesLabel)) : Diagnosis{};
    }

    // The evidence is on the job's timeline (the Events panel rings it, `events --timeline`
    // stars it): each evidence event an item on the lane of the object it is about.
    void expectEvidenceOnTimeline(const QString &job)
    {
        const auto snapshot = snapshotOf(job);
        QVERIFY(snapshot);
        const Diagnosis d = diagnose(snapshot->diagnosisInput(&m_tracker->model(), SeriesLabel));
        Events::TimelineInput input;
        input.rayJob = snapshot->rayJob;
        input.rayCluster = snapshot->rayCluster;
        input.pods = snapshot->pods;
        input.events = snapshot->events;
        input.now = QDateTime::currentDateTimeUtc();
        const Events::Timeline timeline = Events::Timeline::build(input);
        QStringList keys;
        for (const Kube::Event &e : d.evidence) {
            const QString key = e.ns + u'/' + e.name;
            keys << key;
            const int item = timeline.indexOfKey(key);
            QVERIFY2(item >= 0, qPrintable(QStringLiteral("evidence %1 (%2) is not on the timeline").arg(key, e.reason)));
            const Events::Lane &lane = timeline.lanes.at(timeline.items.at(item).lane);
            QCOMPARE(lane.objectKind, e.regardingKind);
            QCOMPARE(lane.objectName, e.regardingName);
        }
        if (!keys.isEmpty())
            QVERIFY2(timeline.toText(60, keys).contains(u'*'), qPrintable(timeline.toText(60, keys)));
    }

    // Waits for the cause, then checks the sentence carries each part.
    void expect(const QString &job, Cause cause, const QStringList &parts, bool needEvidence = true)
    {
        QTRY_COMPARE_WITH_TIMEOUT(diagnoseJob(job).causeId(), causeId(cause), 20000);
        // The capacity numbers follow the informers a moment behind the objects.
        for (const QString &part : parts) {
            QTRY_VERIFY2_WITH_TIMEOUT(diagnoseJob(job).message.contains(part),
                                      qPrintable(QStringLiteral("%1\n  lacks: %2").arg(diagnoseJob(job).message, part)), 30000);
        }
        const Diagnosis d = diagnoseJob(job);
        QStringList evidence;
        for (const Kube::Event &e : d.evidence) evidence << e.regardingKind + u'/' + e.reason;
        qInfo().noquote() << d.causeId() << d.message << "| evidence:" << evidence.join(QStringLiteral(", "));
        QCOMPARE(d.cause, cause);
        if (needEvidence) QVERIFY2(!d.evidence.isEmpty(), qPrintable(d.message));
        const QJsonObject json = d.toJson();
        QCOMPARE(json.value(QStringLiteral("cause")).toString(), causeId(cause));
        QCOMPARE(json.value(QStringLiteral("evidence")).toArray().size(), d.evidence.size());
        expectEvidenceOnTimeline(job);
    }

    void remove(const QString &job)
    {
        QCOMPARE(m_http->send("DELETE", m_rayjobs + u'/' + job, R"({"propagationPolicy":"Background"})").status, 200);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(Testing::installEnglishPlurals());   // the diagnoses' English as the apps show it
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("h200:2x8,h100:1x8,a100:1x8,cpu:1x0");
        options.presentImages = {RayImage, Present};
        options.crashLoopBackoffMs = 200;
        options.imagePullBackoffMs = 400;
        options.jobRetryBackoffMs = 200;
        QString error;
        QVERIFY2(startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
        Kube::ClientConfig config;
        config.server = m_sandbox->apiServerUrl();
        config.token = m_sandbox->token();
        config.tls.caCertificates = QSslCertificate::fromData(m_sandbox->caCertificatePem(), QSsl::Pem);
        config.ns = QStringLiteral("starforge");
        m_client = std::make_unique<Kube::KubeClient>(config);
        m_nodes = std::make_unique<Kube::Informer>(m_client.get(), Kube::ResourceKind::nodes());
        m_pods = std::make_unique<Kube::Informer>(m_client.get(), Kube::ResourceKind::pods());
        m_tracker = std::make_unique<CapacityTracker>(SeriesLabel);
        m_tracker->attach(m_nodes.get(), m_pods.get());
        m_nodes->start();
        m_pods->start();
        QTRY_VERIFY_WITH_TIMEOUT(m_tracker->isSynced(), 10000);
        QCOMPARE(m_tracker->model().seriesNames(), (QStringList{QStringLiteral("a100"), QStringLiteral("h100"), QStringLiteral("h200")}));
        for (const QString &series : m_tracker->model().seriesNames()) m_idleUsed.insert(series, m_tracker->model().series(series).used);
    }

    // Every RayJob a case made and the pod "hog" deleted (404 is fine: the case did it), every
    // node it patched untainted and uncordoned, and the capacity model back to an idle fleet.
    void cleanup()
    {
        for (const QString &job : std::exchange(m_submitted, {})) {
            const int status = m_http->send("DELETE", m_rayjobs + u'/' + job, R"({"propagationPolicy":"Background"})").status;
            QVERIFY2(status == 200 || status == 404, qPrintable(job));
        }
        for (const QString &quota : std::exchange(m_quotas, {})) {
            QCOMPARE(m_http->send("DELETE", m_base + QStringLiteral("/resourcequotas/") + quota).status, 200);
        }
        const int hog = m_http->send("DELETE", m_base + QStringLiteral("/pods/hog")).status;
        QVERIFY(hog == 200 || hog == 404);
        for (const QString &node : std::exchange(m_patchedNodes, {})) {
            QCOMPARE(m_http->send("PATCH", QStringLiteral("/api/v1/nodes/") + node, R"({"spec":{"taints":null,"unschedulable":false}})",
                                  "application/merge-patch+json").status, 200);
            QTRY_COMPARE_WITH_TIMEOUT(m_tracker->model().node(node)->block, Block::None, 10000);
        }
        for (auto it = m_idleUsed.cbegin(); it != m_idleUsed.cend(); ++it) {
            QTRY_COMPARE_WITH_TIMEOUT(m_tracker->model().series(it.key()).used, it.value(), 20000);
        }
    }

    void cleanupTestCase()
    {
        m_tracker.reset();
        m_pods.reset();
        m_nodes.reset();
        m_client.reset();
        m_http.reset();
        m_sandbox.reset();
    }

    void insufficientGpu()
    {
        // Another team's pod holds 4 GPUs of one h200 node; the job wants two whole h200 nodes.
        const QJsonObject hog{{QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("Pod")},
                              {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), QStringLiteral("hog")}}},
                              {QStringLiteral("spec"), podSpec(QJsonArray{container(QStringLiteral("main"), Present, 4,
                                                                                    QJsonObject{{QStringLiteral("command"), QJsonArray{QStringLiteral("sleep"), QStringLiteral("600")}}})},
                                                               QStringLiteral("h200"))}};
        QCOMPARE(m_http->send("POST", m_base + QStringLiteral("/pods"), QJsonDocument(hog).toJson()).status, 201);
        QTRY_VERIFY_WITH_TIMEOUT(m_tracker->model().series(QStringLiteral("h200")).used == 4, 10000);
        submit(rayJob(QStringLiteral("gpu"), headOnly(),
                      QJsonArray{workers(QStringLiteral("policy"), 2, podSpec(QJsonArray{container(QStringLiteral("ray-worker"), RayImage, 8)}, QStringLiteral("h200")))}));
        expect(QStringLiteral("gpu"), Cause::InsufficientGpu,
               {QStringLiteral("asks for 8 GPUs on one h200 node"), QStringLiteral("largest free h200 node has 4"),
                QStringLiteral("4 of 16 h200 GPUs are free on 2 schedulable nodes"), QStringLiteral("Insufficient nvidia.com/gpu")});
        remove(QStringLiteral("gpu"));
        QCOMPARE(m_http->send("DELETE", m_base + QStringLiteral("/pods/hog")).status, 200);
        QTRY_COMPARE_WITH_TIMEOUT(m_tracker->model().series(QStringLiteral("h200")).used, 0, 10000);
    }

    void noNodeMatchesSelector()
    {
        submit(rayJob(QStringLiteral("nosel"), headOnly(),
                      QJsonArray{workers(QStringLiteral("policy"), 1, podSpec(QJsonArray{container(QStringLiteral("ray-worker"), RayImage, 8)}, QStringLiteral("b300")))}));
        expect(QStringLiteral("nosel"), Cause::NoNodeMatchesSelector,
               {QStringLiteral("asks for starforge/gpu-series=b300"), QStringLiteral("none of the 5 nodes has it"),
                QStringLiteral("known series: a100, h100, h200"), QStringLiteral("8 GPUs asked")});
        remove(QStringLiteral("nosel"));
    }

    void untoleratedTaint()
    {
        patchNode(QStringLiteral("a100-00"), R"({"spec":{"taints":[{"key":"dedicated","value":"infra","effect":"NoSchedule"}]}})");
        submit(rayJob(QStringLiteral("taint"), headOnly(),
                      QJsonArray{workers(QStringLiteral("policy"), 1, podSpec(QJsonArray{container(QStringLiteral("ray-worker"), RayImage, 8)}, QStringLiteral("a100")))}));
        expect(QStringLiteral("taint"), Cause::UntoleratedTaint,
               {QStringLiteral("asks for 8 GPUs on one a100 node"), QStringLiteral("rules out 1 of 5 nodes ({dedicated: infra} on 1 node)"),
                QStringLiteral("tainted a100 nodes: a100-00 dedicated=infra:NoSchedule")});
        remove(QStringLiteral("taint"));
        patchNode(QStringLiteral("a100-00"), R"({"spec":{"taints":null}})");
        QTRY_COMPARE_WITH_TIMEOUT(m_tracker->model().node(QStringLiteral("a100-00"))->block, Block::None, 10000);
    }

    void nodesCordoned()
    {
        patchNode(QStringLiteral("h100-00"), R"({"spec":{"unschedulable":true}})");
        submit(rayJob(QStringLiteral("cordon"), headOnly(),
                      QJsonArray{workers(QStringLiteral("policy"), 1, podSpec(QJsonArray{container(QStringLiteral("ray-worker"), RayImage, 8)}, QStringLiteral("h100")))}));
        expect(QStringLiteral("cordon"), Cause::NodesCordoned,
               {QStringLiteral("asks for 8 GPUs on one h100 node"), QStringLiteral("1 of 5 nodes are cordoned"), QStringLiteral("cordoned h100 nodes: h100-00"),
                QStringLiteral("node(s) were unschedulable")});
        remove(QStringLiteral("cordon"));
        patchNode(QStringLiteral("h100-00"), R"({"spec":{"unschedulable":false}})");
        QTRY_COMPARE_WITH_TIMEOUT(m_tracker->model().node(QStringLiteral("h100-00"))->block, Block::None, 10000);
    }

    // The control-plane node of a kind cluster (tainted, no series) and a cordoned node: the
    // scheduler counts them under their taint and cordon, not the selector, so only the capacity
    // model tells that no node has the series asked.
    void noNodeMatchesSelectorBesideTaintedAndCordonedNodes()
    {
        patchNode(QStringLiteral("cpu-00"), R"({"spec":{"taints":[{"key":"node-role.kubernetes.io/control-plane","effect":"NoSchedule"}]}})");
        patchNode(QStringLiteral("h100-00"), R"({"spec":{"unschedulable":true}})");
        QTRY_COMPARE_WITH_TIMEOUT(m_tracker->model().node(QStringLiteral("cpu-00"))->block, Block::Tainted, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(m_tracker->model().node(QStringLiteral("h100-00"))->block, Block::Cordoned, 10000);
        submit(rayJob(QStringLiteral("nobody"), headOnly(),
                      QJsonArray{workers(QStringLiteral("policy"), 1, podSpec(QJsonArray{container(QStringLiteral("ray-worker"), RayImage, 8)}, QStringLiteral("b200")))}));
        expect(QStringLiteral("nobody"), Cause::NoNodeMatchesSelector,
               {QStringLiteral("asks for starforge/gpu-series=b200"), QStringLiteral("none of the 5 nodes has it"),
                QStringLiteral("known series: a100, h100, h200"), QStringLiteral("the scheduler's other reasons matter only once a node has series b200"),
                QStringLiteral("1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"), QStringLiteral("1 node(s) were unschedulable")});
        remove(QStringLiteral("nobody"));
        patchNode(QStringLiteral("cpu-00"), R"({"spec":{"taints":null}})");
        patchNode(QStringLiteral("h100-00"), R"({"spec":{"unschedulable":false}})");
        QTRY_COMPARE_WITH_TIMEOUT(m_tracker->model().node(QStringLiteral("cpu-00"))->block, Block::None, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(m_tracker->model().node(QStringLiteral("h100-00"))->block, Block::None, 10000);
    }

    void imagePullNotFound()
    {
        submit(rayJob(QStringLiteral("pull"), podSpec(QJsonArray{container(QStringLiteral("ray-head"), QStringLiteral("registry.example/nemo-rl:absent"))})));
        expect(QStringLiteral("pull"), Cause::ImagePullNotFound,
               {QStringLiteral("Image \"registry.example/nemo-rl:absent\" cannot be pulled for container ray-head of the head pod pull-"),
                QStringLiteral("the registry does not have it"), QStringLiteral("registry.example/nemo-rl:absent: not found")});
        // The RayCluster's HeadPodReady carries the head container's waiting reason, as v1.7 does.
        const auto headReady = [this]() -> QJsonObject {
            for (const QJsonValue &c : m_http->send("GET", QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayclusters")).json()[QStringLiteral("items")].toArray()) {
                if (!c[QStringLiteral("metadata")][QStringLiteral("name")].toString().startsWith(QStringLiteral("pull-"))) continue;
                for (const QJsonValue &cond : c[QStringLiteral("status")][QStringLiteral("conditions")].toArray()) {
                    if (cond[QStringLiteral("type")].toString() == u"HeadPodReady") return cond.toObject();
                }
            }
            return {};
        };
        QTRY_VERIFY2_WITH_TIMEOUT(headReady().value(QStringLiteral("reason")).toString().contains(QStringLiteral("ImagePull")),
                                  QJsonDocument(headReady()).toJson().constData(), 10000);
        QVERIFY2(headReady().value(QStringLiteral("message")).toString().contains(QStringLiteral("ray-head: ")), QJsonDocument(headReady()).toJson().constData());
        remove(QStringLiteral("pull"));
    }

    void imagePullUnauthorized()
    {
        // An image of the sandbox's private registry and no imagePullSecrets: the registry's 401.
        const QString image = QStringLiteral("registry.sandbox.internal/private/nemo-rl:2");
        submit(rayJob(QStringLiteral("private"), podSpec(QJsonArray{container(QStringLiteral("ray-head"), image)})));
        expect(QStringLiteral("private"), Cause::ImagePullUnauthorized,
               {QStringLiteral("Image \"registry.sandbox.internal/private/nemo-rl:2\" cannot be pulled for container ray-head of the head pod private-"),
                QStringLiteral("the registry refuses access without credentials the cluster has"),
                QStringLiteral("failed to fetch anonymous token: unexpected status from GET request to "
                               "https://registry.sandbox.internal/token?scope=repository%3Aprivate%2Fnemo-rl%3Apull&service=registry.sandbox.internal: "
                               "401 Unauthorized")});
        // The evidence: the kubelet's pull failure, ErrImagePull and the back-off, all about that container.
        const auto evidence = [this]() -> QStringList {
            QStringList out;
            for (const Kube::Event &e : diagnoseJob(QStringLiteral("private")).evidence) {
                out << QStringLiteral("%1 %2 %3: %4").arg(e.regardingKind, e.regardingFieldPath, e.reason, e.message);
            }
            return out;
        };
        const QString field = QStringLiteral("Pod spec.containers{ray-head} ");
        const QStringList expected{
            field + QStringLiteral("Failed: Failed to pull image \"%1\": rpc error: code = Unknown desc = failed to pull and unpack image \"%1\": "
                                   "failed to resolve reference \"%1\": failed to authorize: failed to fetch anonymous token: "
                                   "unexpected status from GET request to https://registry.sandbox.internal/token?"
                                   "scope=repository%3Aprivate%2Fnemo-rl%3Apull&service=registry.sandbox.internal: 401 Unauthorized").arg(image),
            field + QStringLiteral("Failed: Error: ErrImagePull"),
            field + QStringLiteral("BackOff: Back-off pulling image \"%1\"").arg(image),
            field + QStringLiteral("Failed: Error: ImagePullBackOff")};
        const auto hasAll = [&] {
            const QStringList seen = evidence();
            return std::all_of(expected.cbegin(), expected.cend(), [&](const QString &x) { return seen.contains(x); });
        };
        QTRY_VERIFY2_WITH_TIMEOUT(hasAll(), qPrintable(evidence().join(u'\n')), 10000);
        const QStringList seen = evidence();
        QCOMPARE(seen.size(), expected.size());
        remove(QStringLiteral("private"));
    }

    void imagePullFailed()
    {
        // pullPolicy Never and the image not on the node: a pull failure that is neither.
        submit(rayJob(QStringLiteral("never"), podSpec(QJsonArray{container(QStringLiteral("ray-head"), QStringLiteral("registry.example/nemo-rl:local"), 0,
                                                                             QJsonObject{{QStringLiteral("imagePullPolicy"), QStringLiteral("Never")}})})));
        expect(QStringLiteral("never"), Cause::ImagePullFailed,
               {QStringLiteral("Image \"registry.example/nemo-rl:local\""), QStringLiteral("the pull failed"),
                QStringLiteral("is not present with pull policy of Never")});
        remove(QStringLiteral("never"));
    }

    void capsuleDownloadFailedInTheInitContainer()
    {
        const QJsonObject fetch = container(QString::fromLatin1(CapsuleInitContainerName), Present, 0,
                                            QJsonObject{{QStringLiteral("command"), QJsonArray{QStringLiteral("sh"), QStringLiteral("-c"),
                                                                                             QStringLiteral("echo 'GET capsule: 404 Not Found' >&2; exit 22")}}});
        submit(rayJob(QStringLiteral("capsule"), podSpec(QJsonArray{container(QStringLiteral("ray-head"))}, {},
                                                         QJsonObject{{QStringLiteral("initContainers"), QJsonArray{fetch}}})));
        expect(QStringLiteral("capsule"), Cause::CapsuleDownloadFailed,
               {QStringLiteral("init container fetch-capsule of the head pod capsule-"), QStringLiteral("exited with code 22")});
        remove(QStringLiteral("capsule"));
    }

    void capsuleDownloadFailedInRaysWorkingDir()
    {
        const QString missing = m_dir.filePath(QStringLiteral("capsules/missing.zip"));
        submit(rayJob(QStringLiteral("wdir"), headOnly(), {},
                      QJsonObject{{QStringLiteral("runtimeEnvYAML"), QStringLiteral("working_dir: file://%1\n").arg(missing)}}));
        expect(QStringLiteral("wdir"), Cause::CapsuleDownloadFailed,
               {QStringLiteral("Ray could not fetch the working_dir of job wdir"), QStringLiteral("runtime_env setup failed"), missing}, false);
        remove(QStringLiteral("wdir"));
    }

    void containerConfigError()
    {
        const QJsonObject env{{QStringLiteral("env"), QJsonArray{QJsonObject{
            {QStringLiteral("name"), QStringLiteral("HF_TOKEN")},
            {QStringLiteral("valueFrom"), QJsonObject{{QStringLiteral("secretKeyRef"), QJsonObject{{QStringLiteral("name"), QStringLiteral("hf-token")},
                                                                                                 {QStringLiteral("key"), QStringLiteral("token")}}}}}}}}};
        submit(rayJob(QStringLiteral("config"), podSpec(QJsonArray{container(QStringLiteral("ray-head"), RayImage, 0, env)})));
        expect(QStringLiteral("config"), Cause::ContainerConfigError,
               {QStringLiteral("Container ray-head of the head pod config-"), QStringLiteral("cannot be created from its configuration: secret \"hf-token\" not found")});
        remove(QStringLiteral("config"));
    }

    void crashLoop()
    {
        const QJsonObject crasher = container(QStringLiteral("metrics"), Present, 0,
                                              QJsonObject{{QStringLiteral("command"), QJsonArray{QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("echo boom; exit 1")}}});
        submit(rayJob(QStringLiteral("crash"), podSpec(QJsonArray{container(QStringLiteral("ray-head")), crasher})));
        expect(QStringLiteral("crash"), Cause::CrashLoop,
               {QStringLiteral("Container metrics of the head pod crash-"), QStringLiteral("keeps crashing: it exited with code 1 and was restarted")});
        remove(QStringLiteral("crash"));
    }

    void preRunningDeadlineExceeded()
    {
        submit(rayJob(QStringLiteral("deadline"), headOnly(),
                      QJsonArray{workers(QStringLiteral("policy"), 1, podSpec(QJsonArray{container(QStringLiteral("ray-worker"), RayImage, 16)}, QStringLiteral("h200")))},
                      QJsonObject{{QStringLiteral("preRunningDeadlineSeconds"), 1}}));
        expect(QStringLiteral("deadline"), Cause::PreRunningDeadlineExceeded,
               {QStringLiteral("Job deadline did not reach Running within its pre-running deadline of 1 s"), QStringLiteral("Before that: Not enough free GPUs"),
                QStringLiteral("Insufficient nvidia.com/gpu")});
        remove(QStringLiteral("deadline"));
    }

    // A ResourceQuota of 4 GPUs and a head pod that asks for 8: the API server refuses the pod
    // (the real 403 text), KubeRay's FailedToCreateHeadPod carries it, no pod exists, and the
    // diagnosis names the quota with its numbers. Raising the quota lets the head be created.
    void quotaStopsTheHeadPod()
    {
        const QString quotas = m_base + QStringLiteral("/resourcequotas");
        const QJsonObject quota{{QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("ResourceQuota")},
                                {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), QStringLiteral("team-gpus")}}},
                                {QStringLiteral("spec"), QJsonObject{{QStringLiteral("hard"), QJsonObject{{QStringLiteral("requests.nvidia.com/gpu"), QStringLiteral("4")},
                                                                                                          {QStringLiteral("pods"), QStringLiteral("20")}}}}}};
        QCOMPARE(m_http->send("POST", quotas, QJsonDocument(quota).toJson()).status, 201);
        m_quotas << QStringLiteral("team-gpus");
        // The quota controller fills in status.hard and status.used.
        QTRY_COMPARE_WITH_TIMEOUT(m_http->send("GET", quotas + QStringLiteral("/team-gpus")).json()[QStringLiteral("status")][QStringLiteral("used")]
                                      [QStringLiteral("requests.nvidia.com/gpu")].toString(),
                                  QStringLiteral("0"), 5000);

        // A pod of 8 GPUs straight to the API: the quota admission's 403.
        const QJsonObject big{{QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("Pod")},
                              {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), QStringLiteral("hog")}}},
                              {QStringLiteral("spec"), podSpec(QJsonArray{container(QStringLiteral("main"), Present, 8)})}};
        const auto refused = m_http->send("POST", m_base + QStringLiteral("/pods"), QJsonDocument(big).toJson());
        QCOMPARE(refused.status, 403);
        QCOMPARE(refused.json().value(QStringLiteral("reason")).toString(), QStringLiteral("Forbidden"));
        QCOMPARE(refused.json().value(QStringLiteral("message")).toString(),
                 QStringLiteral("pods \"hog\" is forbidden: exceeded quota: team-gpus, requested: requests.nvidia.com/gpu=8, "
                                "used: requests.nvidia.com/gpu=0, limited: requests.nvidia.com/gpu=4"));

        submit(rayJob(QStringLiteral("quota"), podSpec(QJsonArray{container(QStringLiteral("ray-head"), RayImage, 8)}, QStringLiteral("h200"))));
        expect(QStringLiteral("quota"), Cause::QuotaExceeded,
               {QStringLiteral("ResourceQuota team-gpus in namespace starforge does not allow the head pod"),
                QStringLiteral("requests.nvidia.com/gpu: asks 8, 0 already used of 4")});
        const Diagnosis d = diagnoseJob(QStringLiteral("quota"));
        QCOMPARE(d.evidence.first().reason, QStringLiteral("FailedToCreateHeadPod"));
        QVERIFY2(d.evidence.first().message.startsWith(QStringLiteral("Failed to create head Pod starforge/, pods \"quota-")), qPrintable(d.evidence.first().message));
        QVERIFY2(d.evidence.first().message.contains(QStringLiteral("-head-")), qPrintable(d.evidence.first().message));

        // Raised: the retry creates the head, and the refusal is history.
        QCOMPARE(m_http->send("PATCH", quotas + QStringLiteral("/team-gpus"), R"({"spec":{"hard":{"requests.nvidia.com/gpu":"16"}}})",
                              "application/merge-patch+json").status, 200);
        QTRY_VERIFY_WITH_TIMEOUT(diagnoseJob(QStringLiteral("quota")).cause != Cause::QuotaExceeded, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(m_http->send("GET", quotas + QStringLiteral("/team-gpus")).json()[QStringLiteral("status")][QStringLiteral("used")]
                                      [QStringLiteral("requests.nvidia.com/gpu")].toString(),
                                  QStringLiteral("8"), 10000);
        remove(QStringLiteral("quota"));
    }

    // A ResourceQuota on memory requests that the head (50Mi) fits and the submitter (KubeRay's
    // default 200Mi) does not: the Job controller's FailedCreate carries the API's 403, no
    // submitter pod exists, nothing counts against the backoff limit, and the diagnosis names
    // the quota for the submitter. Raising the quota lets the submitter be created.
    void quotaStopsTheSubmitterPod()
    {
        const QString quotas = m_base + QStringLiteral("/resourcequotas");
        const QJsonObject quota{{QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("ResourceQuota")},
                                {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), QStringLiteral("team-memory")}}},
                                {QStringLiteral("spec"), QJsonObject{{QStringLiteral("hard"), QJsonObject{{QStringLiteral("requests.memory"), QStringLiteral("150Mi")}}}}}};
        QCOMPARE(m_http->send("POST", quotas, QJsonDocument(quota).toJson()).status, 201);
        m_quotas << QStringLiteral("team-memory");
        const QJsonObject small{{QStringLiteral("resources"), QJsonObject{{QStringLiteral("requests"), QJsonObject{{QStringLiteral("memory"), QStringLiteral("50Mi")}}}}}};
        submit(rayJob(QStringLiteral("subquota"), podSpec(QJsonArray{container(QStringLiteral("ray-head"), RayImage, 0, small)})));
        expect(QStringLiteral("subquota"), Cause::QuotaExceeded,
               {QStringLiteral("ResourceQuota team-memory in namespace starforge does not allow the submitter pod"), QStringLiteral("requests.memory")});
        const Diagnosis d = diagnoseJob(QStringLiteral("subquota"));
        QCOMPARE(d.evidence.first().reason, QStringLiteral("FailedCreate"));
        QCOMPARE(d.evidence.first().regardingKind, QStringLiteral("Job"));
        QVERIFY2(d.evidence.first().message.startsWith(QStringLiteral("Error creating: pods \"subquota-")), qPrintable(d.evidence.first().message));
        QVERIFY2(d.evidence.first().message.contains(QStringLiteral("is forbidden: exceeded quota: team-memory, requested: requests.memory=")),
                 qPrintable(d.evidence.first().message));
        // Not a failure of the Job: nothing counted, no condition.
        const QJsonObject job = m_http->send("GET", QStringLiteral("/apis/batch/v1/namespaces/starforge/jobs/subquota")).json();
        QCOMPARE(job[QStringLiteral("status")][QStringLiteral("failed")].toInt(), 0);
        QVERIFY(job[QStringLiteral("status")][QStringLiteral("conditions")].toArray().isEmpty());

        // Raised: the submitter is created at once (the quota change), and the refusal is history.
        QCOMPARE(m_http->send("PATCH", quotas + QStringLiteral("/team-memory"), R"({"spec":{"hard":{"requests.memory":"4Gi"}}})",
                              "application/merge-patch+json").status, 200);
        QTRY_VERIFY_WITH_TIMEOUT(diagnoseJob(QStringLiteral("subquota")).cause != Cause::QuotaExceeded, 10000);
        remove(QStringLiteral("subquota"));
    }

    void unknown()
    {
        // A memory request no node can hold: the scheduler says so, but it is not a GPU cause.
        const QJsonObject huge{{QStringLiteral("resources"), QJsonObject{{QStringLiteral("limits"), QJsonObject{{QStringLiteral("memory"), QStringLiteral("100Ti")}}}}}};
        submit(rayJob(QStringLiteral("unknown"), headOnly(),
                      QJsonArray{workers(QStringLiteral("policy"), 1, podSpec(QJsonArray{container(QStringLiteral("ray-worker"), RayImage, 0, huge)}))}));
        expect(QStringLiteral("unknown"), Cause::Unknown,
               {QStringLiteral("No known cause: the worker policy pod unknown-"), QStringLiteral("Insufficient memory")});
        remove(QStringLiteral("unknown"));
    }
};

QTEST_GUILESS_MAIN(TestDiagnosisSandbox)
#include "tst_diagnosis_sandbox.moc"
