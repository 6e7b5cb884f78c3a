// The capacity engine at the sandbox's scale:5000 shape (5,000 nodes: 40 % h200, 30 % h100,
// 20 % a100, 10 % CPU; ten pods per node, four of them holding a GPU), built from synthetic
// typed views: a full recompute, the series summaries, a fit verdict, and the cost of one pod
// event applied incrementally (to the model, and through the tracker from pod JSON as an
// informer delivers it), and a pod's view read from its JSON text as the informer's reader does
// (Pod::usageFromJsonText) against parsing it into a QJsonObject first. Prints a table; the
// median of several rounds.
//
// Then the question a person asks, with a peer: "does this job fit now?", from nothing, against
// a starforge-sandbox process serving the same scale fleet. Starforge: the two informers the
// app runs (nodes; pods not finished), the CapacityTracker and the fit verdict. The peer: what
// a person would script with kubectl, `kubectl get nodes -o json` and `kubectl get pods -A -o
// json` (the same field selector) read by a short Python script that sums GPUs per node and
// places the pools the same way (best fit, largest pods first, one pod per node). Both verdicts
// are printed; they must agree.
//
//     build/bin/bench_capacity [--nodes 5000] [--no-peer]

#include "core/cluster/capacity.h"
#include "core/kube/informer.h"
#include "core/kube/kubeclient.h"
#include "eventloop.h"
#include "peer.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTextStream>

#include <algorithm>
#include <functional>

using namespace Starforge;
using namespace Starforge::Cluster;
using Starforge::Bench::spin;

namespace {

constexpr int Nodes = 5000;
constexpr int PodsPerNode = 10;
constexpr int GpuPodsPerNode = 4;

QString seriesOf(int i)
{
    const int bucket = i % 10;
    return bucket < 4 ? QStringLiteral("h200") : bucket < 7 ? QStringLiteral("h100") : bucket < 9 ? QStringLiteral("a100") : QStringLiteral("cpu");
}

QList<Kube::Node> makeNodes()
{
    QList<Kube::Node> nodes;
    nodes.reserve(Nodes);
    for (int i = 0; i < Nodes; ++i) {
        Kube::Node n;
        n.name = QStringLiteral("%1-%2").arg(seriesOf(i)).arg(i, 5, 10, QLatin1Char('0'));
        n.series = seriesOf(i);
        n.gpuCapacity = n.gpuAllocatable = n.series == QLatin1String("cpu") ? 0 : 8;
        n.ready = true;
        n.unschedulable = i % 97 == 0;   // a few cordoned nodes, as a real fleet has
        nodes << n;
    }
    return nodes;
}

QList<Kube::Pod> makePods(const QList<Kube::Node> &nodes)
{
    QList<Kube::Pod> pods;
    pods.reserve(Nodes * PodsPerNode);
    for (const Kube::Node &n : nodes) {
        for (int j = 0; j < PodsPerNode; ++j) {
            Kube::Pod p;
            p.ns = QStringLiteral("background");
            p.name = QStringLiteral("%1-bg-%2").arg(n.name).arg(j);
            p.nodeName = n.name;
            p.phase = QStringLiteral("Running");
            p.gpuRequests = n.gpuAllocatable > 0 && j < GpuPodsPerNode ? 1 : 0;
            pods << p;
        }
    }
    return pods;
}

QJsonObject podJson(const QString &name, const QString &node, int gpus, const QString &phase)
{
    return QJsonObject{
        {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("namespace"), QStringLiteral("ml")}}},
        {QStringLiteral("spec"), QJsonObject{{QStringLiteral("nodeName"), node},
                                             {QStringLiteral("containers"), QJsonArray{QJsonObject{
                                                 {QStringLiteral("name"), QStringLiteral("main")},
                                                 {QStringLiteral("resources"), QJsonObject{{QStringLiteral("limits"), QJsonObject{{QStringLiteral("nvidia.com/gpu"), QString::number(gpus)}}}}}}}}}},
        {QStringLiteral("status"), QJsonObject{{QStringLiteral("phase"), phase}}}};
}

double medianMs(int rounds, const std::function<void()> &work)
{
    QList<double> times;
    for (int i = 0; i < rounds; ++i) {
        QElapsedTimer t;
        t.start();
        work();
        times << t.nsecsElapsed() / 1e6;
    }
    std::sort(times.begin(), times.end());
    return times.at(times.size() / 2);
}

// The peer's verdict: the lists from kubectl, then the sums and the placement in Python.
const char PeerScript[] = R"(
import json, subprocess, sys
kubectl, kubeconfig, cache, label = sys.argv[1:5]
pools = json.loads(sys.argv[5])
def get(*what):
    return json.loads(subprocess.run([kubectl, "--kubeconfig", kubeconfig, "--cache-dir", cache, "get", *what, "-o", "json"],
                                     check=True, capture_output=True).stdout)
nodes = get("nodes")["items"]
pods = get("pods", "-A", "--field-selector=status.phase!=Succeeded,status.phase!=Failed")["items"]
def gpus(resources):
    r = resources or {}
    v = (r.get("requests") or {}).get("nvidia.com/gpu") or (r.get("limits") or {}).get("nvidia.com/gpu") or "0"
    return int(v)
used = {}
for p in pods:
    n = p["spec"].get("nodeName")
    if not n: continue
    app = sum(gpus(c.get("resources")) for c in p["spec"].get("containers", []))
    init = max([gpus(c.get("resources")) for c in p["spec"].get("initContainers", [])] or [0])
    used[n] = used.get(n, 0) + max(app, init)
free, alloc = {}, {}
for n in nodes:
    name, series = n["metadata"]["name"], n["metadata"].get("labels", {}).get(label)
    ready = any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"].get("conditions", []))
    taints = [t for t in n["spec"].get("taints", []) if t["effect"] in ("NoSchedule", "NoExecute")
              and not (t["key"] == "nvidia.com/gpu" and t["effect"] == "NoSchedule")]
    if not series or n["spec"].get("unschedulable") or not ready or taints: continue
    a = int(n["status"].get("allocatable", {}).get("nvidia.com/gpu", "0"))
    alloc.setdefault(series, {})[name] = a
    free.setdefault(series, {})[name] = max(0, a - used.get(name, 0))
def place(room):
    taken = set()
    for pool in sorted(pools, key=lambda p: -p["gpusPerNode"]):
        for _ in range(pool["nodes"]):
            fits = sorted((g, n) for n, g in room.get(pool["series"], {}).items() if g >= pool["gpusPerNode"] and n not in taken)
            if not fits: return False
            taken.add(fits[0][1])
    return True
print("FitsNow" if place(free) else "FitsWhenFree" if place(alloc) else "NeverFits")
)";


// "Does it fit now?" from nothing on a sandbox process at scale:nodes, ours against the peer's.
int verdictFromNothing(const QString &nodes, bool withPeer, const FitRequest &request)
{
    QTemporaryDir dir;
    const QString connection = dir.filePath(QStringLiteral("conn.json"));
    QProcess sandbox;
    sandbox.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    sandbox.start(QCoreApplication::applicationDirPath() + QStringLiteral("/starforge-sandbox"),
                  {QStringLiteral("--connection-file"), connection, QStringLiteral("--fleet"), QStringLiteral("scale:") + nodes});
    if (!spin([&] { return QFile::exists(connection) || sandbox.state() == QProcess::NotRunning; }, 300000) || !QFile::exists(connection)) {
        std::fprintf(stderr, "bench_capacity: the sandbox did not start\n");
        return 2;
    }
    QThread::msleep(200);
    QFile connFile(connection);
    (void)connFile.open(QIODevice::ReadOnly);
    const QJsonObject conn = QJsonDocument::fromJson(connFile.readAll()).object();

    Kube::ClientConfig config;
    config.server = QUrl(conn.value(QStringLiteral("apiServer")).toString());
    config.token = conn.value(QStringLiteral("token")).toString().toLatin1();
    config.tls.caCertificates = QSslCertificate::fromPath(conn.value(QStringLiteral("caFile")).toString());
    config.timeoutMs = 120000;
    QElapsedTimer t;
    t.start();
    Kube::KubeClient client(config);
    Kube::Informer nodeInformer(&client, Kube::ResourceKind::nodes());
    Kube::InformerOptions podOptions;
    podOptions.fieldSelector = QStringLiteral("status.phase!=Succeeded,status.phase!=Failed");   // as the Session's
    Kube::Informer podInformer(&client, Kube::ResourceKind::pods(), podOptions);
    CapacityTracker tracker;
    tracker.attach(&nodeInformer, &podInformer);
    nodeInformer.start();
    podInformer.start();
    if (!spin([&] { return tracker.isSynced(); }, 600000)) {
        std::fprintf(stderr, "bench_capacity: the informers did not sync\n");
        return 2;
    }
    const Fit ours = tracker.model().fit(request).fit;
    const double oursMs = t.nsecsElapsed() / 1e6;
    nodeInformer.stop();
    podInformer.stop();

    QString peerVerdict;
    Bench::PeerFigure peerMs = Bench::PeerFigure::missing(QStringLiteral("--no-peer"));
    const QString kubectl = QStandardPaths::findExecutable(QStringLiteral("kubectl"));
    const QString kubectlVersion = Bench::kubectlVersion(QStringLiteral("kubectl"));
    if (withPeer && kubectl.isEmpty()) peerMs = Bench::PeerFigure::missing(QStringLiteral("kubectl is not installed"));
    if (withPeer && !kubectl.isEmpty()) {
        const QString kubeconfig = conn.value(QStringLiteral("kubeconfig")).toString();
        const QString cache = dir.filePath(QStringLiteral("cache"));
        QProcess warm;   // kubectl's discovery cache, as on a workstation that has used it before
        warm.start(kubectl, {QStringLiteral("--kubeconfig"), kubeconfig, QStringLiteral("--cache-dir"), cache, QStringLiteral("get"),
                             QStringLiteral("nodes"), QStringLiteral("-o"), QStringLiteral("name")});
        warm.waitForFinished(600000);
        QJsonArray pools;
        for (const PoolRequest &p : request.pools) {
            pools.append(QJsonObject{{QStringLiteral("series"), p.series}, {QStringLiteral("nodes"), p.nodes}, {QStringLiteral("gpusPerNode"), p.gpusPerNode}});
        }
        QProcess script;
        t.restart();
        script.start(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"), QString::fromLatin1(PeerScript), kubectl, kubeconfig, cache,
                                                          defaultSeriesLabel(), QString::fromUtf8(QJsonDocument(pools).toJson(QJsonDocument::Compact))});
        const bool finished = script.waitForFinished(600000);
        const double ms = t.nsecsElapsed() / 1e6;
        const QString failure = Bench::processFailure(QStringLiteral("kubectl + python3"), script, finished);
        peerVerdict = QString::fromUtf8(script.readAllStandardOutput()).trimmed();
        peerMs = failure.isEmpty() ? Bench::PeerFigure::measured(ms) : Bench::PeerFigure::missing(failure);
    }
    sandbox.terminate();
    sandbox.waitForFinished(30000);

    std::printf("\n\"Does the job fit now?\" from nothing, starforge-sandbox --fleet scale:%s (its own process)\n\n", qPrintable(nodes));
    std::printf("| measure | starforge | peer | ratio |\n|---|---|---|---|\n");
    std::printf("| lists, sums and fit verdict (2 pools) | %.0f ms (%s) | kubectl %s x2 + python3: %s%s | %s |\n", oursMs,
                qPrintable(fitName(ours)), qPrintable(kubectlVersion), qPrintable(peerMs.text(0, QStringLiteral(" ms"))),
                peerVerdict.isEmpty() ? "" : qPrintable(QStringLiteral(" (%1)").arg(peerVerdict)), qPrintable(peerMs.value ? peerMs.ratio(oursMs, true) + QStringLiteral(" faster") : QStringLiteral("–")));
    if (peerMs.value && peerVerdict != fitName(ours)) {
        std::fprintf(stderr, "bench_capacity: the verdicts differ: ours %s, the peer's %s\n", qPrintable(fitName(ours)), qPrintable(peerVerdict));
        return 1;
    }
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    const QCommandLineOption nodesOption(QStringLiteral("nodes"), QStringLiteral("Nodes of the sandbox fleet for the verdict from nothing."),
                                         QStringLiteral("N"), QStringLiteral("5000"));
    const QCommandLineOption noPeerOption(QStringLiteral("no-peer"), QStringLiteral("Do not run the kubectl + Python peer."));
    parser.addOptions({nodesOption, noPeerOption});
    parser.addHelpOption();
    parser.process(app);
    QTextStream out(stdout);
    const QList<Kube::Node> nodes = makeNodes();
    const QList<Kube::Pod> pods = makePods(nodes);

    CapacityModel model;
    const double build = medianMs(5, [&] { model = CapacityModel::build(nodes, pods); });
    int sink = 0;
    const double summaries = medianMs(5, [&] {
        for (int i = 0; i < 1000; ++i) {
            for (const SeriesSummary &s : model.allSeries()) sink += s.free;
        }
    }) / 1000;
    const FitRequest request{{PoolRequest{QStringLiteral("policy"), QStringLiteral("h200"), 64, 8},
                              PoolRequest{QStringLiteral("generation"), QStringLiteral("h100"), 32, 4}}};
    Fit verdict = Fit::NeverFits;
    const double fit = medianMs(5, [&] { verdict = model.fit(request).fit; });

    // One pod event: a job pod bound to a node, then finishing, as a watch delivers them. The
    // views are made beforehand so only the model's work is timed.
    constexpr int Events = 20000;
    QList<Kube::Pod> jobPods;
    jobPods.reserve(Events);
    for (int i = 0; i < Events; ++i) {
        Kube::Pod p;
        p.ns = QStringLiteral("ml");
        p.name = QStringLiteral("job-%1").arg(i % 1000);
        p.nodeName = nodes.at((i * 7919) % Nodes).name;
        p.phase = i % 3 == 0 ? QStringLiteral("Succeeded") : QStringLiteral("Running");
        p.gpuRequests = 1 + i % 4;
        jobPods << p;
    }
    const double modelEvent = medianMs(5, [&] {
        for (const Kube::Pod &p : std::as_const(jobPods)) model.setPod(p);
    }) * 1e6 / Events;

    CapacityTracker tracker;
    for (const Kube::Node &n : nodes) {
        QJsonObject labels{{defaultSeriesLabel(), n.series}};
        tracker.nodeAdded(QJsonObject{
            {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), n.name}, {QStringLiteral("labels"), labels}}},
            {QStringLiteral("status"), QJsonObject{{QStringLiteral("allocatable"), QJsonObject{{QStringLiteral("nvidia.com/gpu"), QString::number(n.gpuAllocatable)}}},
                                                   {QStringLiteral("conditions"), QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("Ready")},
                                                                                                        {QStringLiteral("status"), QStringLiteral("True")}}}}}}});
    }
    QList<QJsonObject> events;
    for (int i = 0; i < 20000; ++i) {
        events << podJson(QStringLiteral("job-%1").arg(i % 1000), nodes.at((i * 7919) % Nodes).name, 1 + i % 4,
                          i % 3 == 0 ? QStringLiteral("Succeeded") : QStringLiteral("Running"));
    }
    const double trackerEvent = medianMs(3, [&] {
        for (const QJsonObject &e : std::as_const(events)) tracker.podAdded(e);
    }) * 1e6 / events.size();

    // A pod as the sandbox's scale fleet serves it, about a kilobyte of text.
    const QByteArray podText = R"({"metadata":{"creationTimestamp":"2026-12-03T21:36:18Z","labels":{"app":"background","team":"other"},)"
                               R"("name":"h200-00001-bg-3","namespace":"background","resourceVersion":"39506",)"
                               R"("uid":"0117a0ca-f02b-4b85-ab64-f06424842357"},"spec":{"containers":[{"image":"registry.example/background:1",)"
                               R"("name":"main","resources":{"limits":{"cpu":"2","memory":"8Gi","nvidia.com/gpu":"1"},)"
                               R"("requests":{"cpu":"2","memory":"8Gi","nvidia.com/gpu":"1"}},"terminationMessagePath":"/dev/termination-log",)"
                               R"("terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","nodeName":"h200-00001","restartPolicy":"Always",)"
                               R"("schedulerName":"default-scheduler","terminationGracePeriodSeconds":30},"status":{"conditions":[)"
                               R"({"status":"True","type":"PodScheduled"},{"status":"True","type":"Ready"}],"containerStatuses":[)"
                               R"({"image":"registry.example/background:1","name":"main","ready":true,"restartCount":0,)"
                               R"("state":{"running":{"startedAt":"2026-12-03T21:36:18Z"}}}],"hostIP":"127.0.0.1","phase":"Running",)"
                               R"("podIP":"127.0.0.1","startTime":"2026-12-03T21:36:18Z"}})";
    constexpr int Reads = 20000;
    const double viaObject = medianMs(3, [&] {
        for (int i = 0; i < Reads; ++i) sink += Kube::Pod::fromJson(QJsonDocument::fromJson(podText).object()).gpuRequests;
    }) * 1e6 / Reads;
    const double fromText = medianMs(3, [&] {
        for (int i = 0; i < Reads; ++i) sink += Kube::Pod::usageFromJsonText(podText).value_or(Kube::Pod{}).gpuRequests;
    }) * 1e6 / Reads;

    out << "bench_capacity: " << Nodes << " nodes, " << pods.size() << " pods (scale:5000 shape), median of rounds\n\n";
    out << "| measure | value |\n| --- | --- |\n";
    out << "| full recompute (build from typed views) | " << QString::number(build, 'f', 1) << " ms |\n";
    out << "| all series summaries (4 series) | " << QString::number(summaries * 1000, 'f', 1) << " us |\n";
    out << "| fit verdict, 2 pools (64 x 8 h200, 32 x 4 h100) | " << QString::number(fit, 'f', 2) << " ms (" << fitName(verdict) << ") |\n";
    out << "| one pod event, model (setPod) | " << QString::number(modelEvent, 'f', 0) << " ns |\n";
    out << "| one pod event, tracker from pod JSON (parse + setPod + signals) | " << QString::number(trackerEvent / 1000, 'f', 2) << " us |\n";
    out << "| a pod's view from its text (" << podText.size() << " bytes): QJsonDocument, then Pod::fromJson | "
        << QString::number(viaObject / 1000, 'f', 2) << " us |\n";
    out << "| a pod's view from its text: Pod::usageFromJsonText (the tracker's informer reader) | "
        << QString::number(fromText / 1000, 'f', 2) << " us |\n";
    out << "\n(checksum " << sink % 7 << ")\n";
    out.flush();
    return verdictFromNothing(parser.value(nodesOption), !parser.isSet(noPeerOption), request);
}
