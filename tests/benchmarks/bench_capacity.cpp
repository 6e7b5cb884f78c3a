// The capacity engine at the sandbox's scale:5000 shape (5,000 nodes: 40 % h200, 30 % h100,
// 20 % a100, 10 % CPU; ten pods per node, four of them holding a GPU), built from synthetic
// typed views: a full recompute, the series summaries, a fit verdict, and the cost of one pod
// event applied incrementally (to the model, and through the tracker from pod JSON as an
// informer delivers it), and a pod's view read from its JSON text as the informer's reader does
// (Pod::usageFromJsonText) against parsing it into a QJsonObject first. Prints a table; the
// median of several rounds.

#include "core/cluster/capacity.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTextStream>

#include <algorithm>
#include <functional>

using namespace Starforge;
using namespace Starforge::Cluster;

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

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
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
    return 0;
}
