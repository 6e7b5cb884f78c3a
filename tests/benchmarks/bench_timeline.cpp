// The event timeline of a large job: 5,000 events over six hours on a RayJob, its RayCluster, a
// head and 64 worker pods in two groups and a submitter (a fifth of them warnings, a third seen
// repeatedly so drawn as spans), in the Events panel's TimelineView as the window shows it, on
// the platform the environment gives (offscreen when none is set):
//  - Timeline::build from the events' JSON, and the model taking it;
//  - a full repaint: fitted (every event on screen) and zoomed in 64×, the median and the worst
//    of 50 repaints;
//  - `starforge-cli events --timeline`'s text for the same job.
// No peer tool has a time-axis event view (Lens, Headlamp, k9s and the Ray dashboard list
// events), so there is no ratio to print. Prints a table; asserts nothing.
//
//     build/bin/bench_timeline [--events 5000]

#include "repaint.h"
#include "core/events/timeline.h"
#include "gui/events/timelineview.h"
#include "models/timelinemodel.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QJsonObject>
#include <QRandomGenerator>

#include <algorithm>
#include <cstdio>

using namespace Starforge;

namespace {


QList<QJsonObject> manyEvents(int count, const QDateTime &t0, const QString &job, const QString &cluster)
{
    QRandomGenerator random(42);
    QStringList objects{QStringLiteral("RayJob/") + job, QStringLiteral("RayCluster/") + cluster, QStringLiteral("Job/") + job,
                        QStringLiteral("Pod/") + cluster + QStringLiteral("-head-abcde"), QStringLiteral("Pod/") + job + QStringLiteral("-s8k2p")};
    for (int i = 0; i < 64; ++i)
        objects << QStringLiteral("Pod/%1-%2-worker-%3").arg(cluster, i % 2 ? QStringLiteral("rollout") : QStringLiteral("train")).arg(i, 5, 10, QLatin1Char('0'));
    const QStringList reasons{QStringLiteral("Scheduled"), QStringLiteral("Pulling"), QStringLiteral("Pulled"), QStringLiteral("Created"),
                              QStringLiteral("Started"), QStringLiteral("FailedScheduling"), QStringLiteral("BackOff"), QStringLiteral("Unhealthy")};
    QList<QJsonObject> events;
    events.reserve(count);
    for (int i = 0; i < count; ++i) {
        const QString object = objects.at(int(random.bounded(objects.size())));
        const int slash = int(object.indexOf(u'/'));
        const bool warning = random.bounded(5) == 0;
        const bool repeated = random.bounded(3) == 0;
        const int first = int(random.bounded(6 * 3600));
        const int last = repeated ? first + int(random.bounded(600)) : first;
        events << QJsonObject{
            {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), QStringLiteral("ev-%1").arg(i)}, {QStringLiteral("namespace"), QStringLiteral("team")}}},
            {QStringLiteral("involvedObject"), QJsonObject{{QStringLiteral("kind"), object.left(slash)}, {QStringLiteral("name"), object.mid(slash + 1)}}},
            {QStringLiteral("type"), warning ? QStringLiteral("Warning") : QStringLiteral("Normal")},
            {QStringLiteral("reason"), reasons.at(int(random.bounded(reasons.size())))},
            {QStringLiteral("message"), QStringLiteral("event number %1 with a message of some length, as the kubelet writes them").arg(i)},
            {QStringLiteral("firstTimestamp"), t0.addSecs(first).toString(Qt::ISODate)},
            {QStringLiteral("lastTimestamp"), t0.addSecs(last).toString(Qt::ISODate)},
            {QStringLiteral("count"), repeated ? 2 + int(random.bounded(40)) : 1}};
    }
    return events;
}

} // namespace

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addHelpOption();
    parser.addOption({QStringLiteral("events"), QStringLiteral("Events of the job."), QStringLiteral("n"), QStringLiteral("5000")});
    parser.process(app);
    const int count = std::max(1, parser.value(QStringLiteral("events")).toInt());

    const QDateTime t0(QDate(2026, 12, 4), QTime(8, 0), Qt::UTC);
    const QString job = QStringLiteral("grpo-math-kq7x2m");
    const QString cluster = job + QStringLiteral("-x2kqz");
    Events::TimelineInput input;
    input.rayJob = QJsonObject{{QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), job}, {QStringLiteral("creationTimestamp"), t0.toString(Qt::ISODate)}}},
                               {QStringLiteral("status"), QJsonObject{{QStringLiteral("jobDeploymentStatus"), QStringLiteral("Running")},
                                                                      {QStringLiteral("jobStatus"), QStringLiteral("RUNNING")},
                                                                      {QStringLiteral("rayClusterName"), cluster},
                                                                      {QStringLiteral("startTime"), t0.addSecs(5).toString(Qt::ISODate)},
                                                                      {QStringLiteral("rayJobInfo"), QJsonObject{{QStringLiteral("startTime"), t0.addSecs(900).toString(Qt::ISODate)}}}}}};
    input.events = manyEvents(count, t0, job, cluster);
    input.now = t0.addSecs(6 * 3600 + 700);

    QElapsedTimer buildTime;
    buildTime.start();
    const Events::Timeline timeline = Events::Timeline::build(input);
    const double buildMs = double(buildTime.nsecsElapsed()) / 1e6;

    Models::TimelineModel model;
    Gui::TimelineView view;
    view.setModel(&model);
    view.resize(1400, 700);
    view.show();
    QElapsedTimer takeTime;
    takeTime.start();
    model.setTimeline(timeline);
    const double takeMs = double(takeTime.nsecsElapsed()) / 1e6;
    QApplication::processEvents();

    view.zoomToFit();
    const Bench::Repaint fitted = Bench::repaintTimes(view.viewport(), 50);
    const double fitPps = view.pixelsPerSecond();
    view.setPixelsPerSecond(fitPps * 64);
    view.setCurrentIndex(model.index(int(model.rowCount() / 2), 0));
    view.scrollTo(view.currentIndex());
    const Bench::Repaint zoomed = Bench::repaintTimes(view.viewport(), 50);

    QElapsedTimer textTime;
    textTime.start();
    const QString text = timeline.toText(80);
    const double textMs = double(textTime.nsecsElapsed()) / 1e6;

    std::printf("Event timeline, %d events on %d lanes over %s, QT_QPA_PLATFORM=%s, view %dx%d\n\n", int(timeline.items.size()),
                int(timeline.lanes.size()), "6 h 12 min", qgetenv("QT_QPA_PLATFORM").constData(), view.viewport()->width(), view.viewport()->height());
    std::printf("| measure | figure | target |\n|---|---|---|\n");
    std::printf("| Timeline::build from the events' JSON | %.1f ms | – |\n", buildMs);
    std::printf("| model takes the timeline | %.2f ms | – |\n", takeMs);
    std::printf("| full repaint, fitted (%.4f px/s, every event on screen) | median %.2f ms, worst %.2f ms | < 16 ms |\n", fitPps, fitted.median, fitted.worst);
    std::printf("| repaint zoomed in 64x (the visible part) | median %.2f ms, worst %.2f ms | < 16 ms |\n", zoomed.median, zoomed.worst);
    std::printf("| `events --timeline` text (80 columns, %lld lines) | %.1f ms | – |\n", static_cast<long long>(text.count(u'\n')), textMs);
    std::printf("\nNo peer tool has a time-axis event view (they list events), so there is no ratio.\n");
    return 0;
}
