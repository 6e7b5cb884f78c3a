// The capacity heatmap at the sandbox's scale:5000 shape (5,000 nodes: 40 % h200, 30 % h100,
// 20 % a100, 10 % CPU; ten pods per node, four of them holding a GPU; every 97th node
// cordoned), in the GPU Capacity panel as the window shows it, on the platform the
// environment gives (offscreen when none is set):
//  - a full repaint of the heatmap: fitted to the view (every node on screen) and zoomed in to
//    48 px cells (the visible part), the median and the worst of 30 repaints;
//  - an update storm: 1,000 node or pod events a second for 5 s fed to the CapacityTracker on
//    the GUI thread (pods bound and deleted, nodes cordoned and uncordoned) while the panel
//    repaints, with the longest GUI-thread stall measured as the largest gap between the
//    ticks of a 1 ms timer.
// Prints a table; asserts nothing.
//
//     build/bin/bench_heatmap [--nodes 5000] [--seconds 5]

#include "repaint.h"
#include "core/cluster/capacity.h"
#include "gui/capacity/capacityheatmapview.h"
#include "gui/capacity/capacitypanel.h"
#include "models/capacitynodesmodel.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonObject>
#include <QTimer>

#include <algorithm>
#include <cstdio>

using namespace Starforge;

namespace {

QString seriesOf(int i)
{
    const int bucket = i % 10;
    return bucket < 4 ? QStringLiteral("h200") : bucket < 7 ? QStringLiteral("h100") : bucket < 9 ? QStringLiteral("a100") : QStringLiteral("cpu");
}

QString nodeName(int i)
{
    return QStringLiteral("%1-%2").arg(seriesOf(i)).arg(i, 5, 10, QLatin1Char('0'));
}

QJsonObject nodeJson(int i, bool cordoned)
{
    const int gpus = seriesOf(i) == QLatin1String("cpu") ? 0 : 8;
    const QJsonObject count{{QStringLiteral("nvidia.com/gpu"), QString::number(gpus)}};
    return QJsonObject{
        {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), nodeName(i)}, {QStringLiteral("labels"), QJsonObject{{QStringLiteral("starforge/gpu-series"), seriesOf(i)}}}}},
        {QStringLiteral("spec"), QJsonObject{{QStringLiteral("unschedulable"), cordoned}}},
        {QStringLiteral("status"), QJsonObject{{QStringLiteral("capacity"), count}, {QStringLiteral("allocatable"), count},
                                               {QStringLiteral("conditions"), QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("Ready")}, {QStringLiteral("status"), QStringLiteral("True")}}}}}}};
}

QJsonObject podJson(const QString &name, const QString &node, int gpus)
{
    return QJsonObject{
        {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("namespace"), QStringLiteral("background")}}},
        {QStringLiteral("spec"), QJsonObject{{QStringLiteral("nodeName"), node},
                                             {QStringLiteral("containers"), QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("main")},
                                                 {QStringLiteral("resources"), QJsonObject{{QStringLiteral("limits"), QJsonObject{{QStringLiteral("nvidia.com/gpu"), QString::number(gpus)}}}}}}}}}},
        {QStringLiteral("status"), QJsonObject{{QStringLiteral("phase"), QStringLiteral("Running")}}}};
}


} // namespace

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addHelpOption();
    parser.addOption({QStringLiteral("nodes"), QStringLiteral("Nodes in the fleet."), QStringLiteral("n"), QStringLiteral("5000")});
    parser.addOption({QStringLiteral("seconds"), QStringLiteral("Length of the update storm."), QStringLiteral("s"), QStringLiteral("5")});
    parser.process(app);
    const int nodes = std::max(1, parser.value(QStringLiteral("nodes")).toInt());
    const int seconds = std::max(1, parser.value(QStringLiteral("seconds")).toInt());

    Cluster::CapacityTracker tracker;
    QElapsedTimer fillTime;
    fillTime.start();
    for (int i = 0; i < nodes; ++i) {
        tracker.nodeAdded(nodeJson(i, i % 97 == 0));
        const bool gpu = seriesOf(i) != QLatin1String("cpu");
        for (int j = 0; j < 10; ++j) tracker.podAdded(podJson(QStringLiteral("%1-bg-%2").arg(nodeName(i)).arg(j), nodeName(i), gpu && j < 4 ? 1 : 0));
    }
    const double fillMs = double(fillTime.nsecsElapsed()) / 1e6;

    Gui::CapacityPanel panel;
    panel.resize(900, 1000);
    panel.show();
    QElapsedTimer attach;
    attach.start();
    panel.setTracker(&tracker);
    QCoreApplication::processEvents();
    const double attachMs = double(attach.nsecsElapsed()) / 1e6;
    Gui::CapacityHeatmapView *view = panel.view();
    view->zoomToFit();
    QCoreApplication::processEvents();
    const int fitted = view->cellSize();
    const Bench::Repaint overview = Bench::repaintTimes(view->viewport(), 30);
    view->setCellSize(48);
    QCoreApplication::processEvents();
    const Bench::Repaint zoomed = Bench::repaintTimes(view->viewport(), 30);
    view->setCellSize(fitted);
    QCoreApplication::processEvents();

    // The storm: every 10 ms, 10 events; a 1 ms timer's largest gap is the longest stall.
    QElapsedTimer clock;
    clock.start();
    qint64 lastTick = 0;
    qint64 worstGap = 0;
    QList<qint64> gaps;
    QTimer ticker;
    ticker.setTimerType(Qt::PreciseTimer);
    ticker.setInterval(1);
    QObject::connect(&ticker, &QTimer::timeout, &app, [&] {
        const qint64 now = clock.nsecsElapsed();
        if (lastTick > 0) {
            worstGap = std::max(worstGap, now - lastTick);
            gaps << now - lastTick;
        }
        lastTick = now;
    });
    int applied = 0;
    quint32 seed = 11;
    const auto next = [&seed](quint32 n) {
        seed = seed * 1103515245u + 12345u;
        return (seed >> 8) % n;
    };
    QTimer feeder;
    feeder.setTimerType(Qt::PreciseTimer);
    feeder.setInterval(10);
    QObject::connect(&feeder, &QTimer::timeout, &app, [&] {
        for (int k = 0; k < 10; ++k) {
            const int i = int(next(quint32(nodes)));
            switch (next(4)) {
            case 0: tracker.nodeAdded(nodeJson(i, next(2) == 0)); break;
            case 1: tracker.podDeleted(podJson(QStringLiteral("storm-%1").arg(i), nodeName(i), 0)); break;
            default: tracker.podAdded(podJson(QStringLiteral("storm-%1").arg(i), nodeName(i), int(next(5)))); break;
            }
            ++applied;
        }
    });
    ticker.start();
    feeder.start();
    QTimer::singleShot(seconds * 1000, &app, [&] { app.quit(); });
    QElapsedTimer stormTime;
    stormTime.start();
    app.exec();
    const double stormS = double(stormTime.nsecsElapsed()) / 1e9;
    std::sort(gaps.begin(), gaps.end());
    const double p99 = gaps.isEmpty() ? 0 : double(gaps.at(qsizetype(double(gaps.size()) * 0.99))) / 1e6;

    std::printf("Capacity heatmap, %d nodes, %d pods, QT_QPA_PLATFORM=%s, panel %dx%d\n\n", nodes, nodes * 10,
                qPrintable(QGuiApplication::platformName()), panel.width(), panel.height());
    std::printf("| measure | figure | target |\n|---|---|---|\n");
    std::printf("| tracker filled from JSON (%d nodes, %d pods) | %.0f ms | – |\n", nodes, nodes * 10, fillMs);
    std::printf("| panel takes the tracker (rows inserted, first layout) | %.1f ms | – |\n", attachMs);
    std::printf("| full repaint, fitted (%d px cells, %d cells shown) | median %.2f ms, worst %.2f ms | < 16 ms |\n", fitted, view->shownCellCount(),
                overview.median, overview.worst);
    std::printf("| repaint at 48 px cells (visible part) | median %.2f ms, worst %.2f ms | < 16 ms |\n", zoomed.median, zoomed.worst);
    std::printf("| update storm: events applied | %d in %.1f s (%.0f/s) | 1,000/s |\n", applied, stormS, applied / stormS);
    std::printf("| longest GUI-thread stall during the storm | %.1f ms (99th percentile gap %.1f ms) | < 50 ms |\n", double(worstGap) / 1e6, p99);
    return 0;
}
