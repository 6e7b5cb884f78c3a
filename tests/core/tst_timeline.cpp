// The timeline's layout from a job's objects and events (Events::Timeline): lanes per object with
// pods under their groups (known pods by their labels, gone ones by their names), marks and
// spans (core/v1 counts and the events.k8s.io series), phases from the RayJob's own times and
// from recorded state changes, the axis, and the text `starforge-cli events --timeline` prints.

#include "core/events/timeline.h"

#include <QJsonArray>
#include <QRegularExpression>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Events;

namespace {

const QString Job = QStringLiteral("grpo-kq7x2m");
const QString Cluster = QStringLiteral("grpo-kq7x2m-x2kqz");
const QDateTime T0 = QDateTime(QDate(2026, 12, 4), QTime(14, 0, 0), Qt::UTC);

QString at(int seconds)
{
    return T0.addSecs(seconds).toString(Qt::ISODate);
}

QJsonObject kubeEvent(const QString &name, const QString &kind, const QString &object, const QString &type, const QString &reason, int first,
                  int last, int count = 1)
{
    return QJsonObject{{QStringLiteral("apiVersion"), QStringLiteral("v1")},
                       {QStringLiteral("kind"), QStringLiteral("Event")},
                       {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("namespace"), QStringLiteral("team")}}},
                       {QStringLiteral("involvedObject"), QJsonObject{{QStringLiteral("kind"), kind}, {QStringLiteral("name"), object}}},
                       {QStringLiteral("type"), type},
                       {QStringLiteral("reason"), reason},
                       {QStringLiteral("message"), QString(reason + QStringLiteral(" happened"))},
                       {QStringLiteral("firstTimestamp"), at(first)},
                       {QStringLiteral("lastTimestamp"), at(last)},
                       {QStringLiteral("count"), QJsonValue(count)}};
}

// An events.k8s.io/v1 event with a series: no first/last timestamps, eventTime and the series.
QJsonObject seriesEvent(const QString &name, const QString &pod, int eventTime, int lastObserved, int count)
{
    return QJsonObject{{QStringLiteral("apiVersion"), QStringLiteral("events.k8s.io/v1")},
                       {QStringLiteral("kind"), QStringLiteral("Event")},
                       {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("namespace"), QStringLiteral("team")}}},
                       {QStringLiteral("regarding"), QJsonObject{{QStringLiteral("kind"), QStringLiteral("Pod")}, {QStringLiteral("name"), pod}}},
                       {QStringLiteral("type"), QStringLiteral("Warning")},
                       {QStringLiteral("reason"), QStringLiteral("FailedScheduling")},
                       {QStringLiteral("note"), QStringLiteral("0/4 nodes are available: 4 Insufficient nvidia.com/gpu.")},
                       {QStringLiteral("eventTime"), T0.addSecs(eventTime).toString(Qt::ISODateWithMs)},
                       {QStringLiteral("series"), QJsonObject{{QStringLiteral("count"), QJsonValue(count)},
                                                              {QStringLiteral("lastObservedTime"), T0.addSecs(lastObserved).toString(Qt::ISODateWithMs)}}}};
}

QJsonObject pod(const QString &name, int created, const QJsonObject &labels)
{
    return QJsonObject{{QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name},
                                                                {QStringLiteral("namespace"), QStringLiteral("team")},
                                                                {QStringLiteral("creationTimestamp"), at(created)},
                                                                {QStringLiteral("labels"), labels}}},
                       {QStringLiteral("status"), QJsonObject{{QStringLiteral("phase"), QStringLiteral("Pending")}}}};
}

QJsonObject rayJob(const QJsonObject &status)
{
    QJsonObject s = status;
    s.insert(QStringLiteral("rayClusterName"), Cluster);
    return QJsonObject{{QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), Job},
                                                                {QStringLiteral("namespace"), QStringLiteral("team")},
                                                                {QStringLiteral("creationTimestamp"), at(0)}}},
                       {QStringLiteral("status"), s}};
}

TimelineInput pendingJob()
{
    TimelineInput input;
    input.rayJob = rayJob(QJsonObject{{QStringLiteral("jobDeploymentStatus"), QStringLiteral("Initializing")},
                                      {QStringLiteral("startTime"), at(2)}});
    input.pods = {pod(Cluster + QStringLiteral("-head-abcde"), 3, QJsonObject{{QStringLiteral("ray.io/node-type"), QStringLiteral("head")},
                                                                              {QStringLiteral("ray.io/cluster"), Cluster}}),
                  pod(Cluster + QStringLiteral("-gpu-worker-fghij"), 4, QJsonObject{{QStringLiteral("ray.io/node-type"), QStringLiteral("worker")},
                                                                                    {QStringLiteral("ray.io/group"), QStringLiteral("gpu")},
                                                                                    {QStringLiteral("ray.io/cluster"), Cluster}})};
    input.events = {
        kubeEvent(QStringLiteral("e1"), QStringLiteral("RayJob"), Job, QStringLiteral("Normal"), QStringLiteral("CreatedRayCluster"), 1, 1),
        kubeEvent(QStringLiteral("e2"), QStringLiteral("RayCluster"), Cluster, QStringLiteral("Normal"), QStringLiteral("CreatedHeadPod"), 3, 3),
        kubeEvent(QStringLiteral("e3"), QStringLiteral("Pod"), Cluster + QStringLiteral("-head-abcde"), QStringLiteral("Warning"),
              QStringLiteral("FailedScheduling"), 4, 124, 9),
        seriesEvent(QStringLiteral("e4"), Cluster + QStringLiteral("-gpu-worker-fghij"), 5, 125, 7),
        // A worker that is gone: only its events remember it.
        kubeEvent(QStringLiteral("e5"), QStringLiteral("Pod"), Cluster + QStringLiteral("-gpu-worker-zzzzz"), QStringLiteral("Normal"),
              QStringLiteral("Scheduled"), 10, 10),
        kubeEvent(QStringLiteral("e6"), QStringLiteral("Pod"), Cluster + QStringLiteral("-gpu-worker-zzzzz"), QStringLiteral("Normal"),
              QStringLiteral("Killing"), 40, 40),
    };
    input.now = T0.addSecs(130);
    return input;
}

int laneTitled(const Timeline &t, const QString &title)
{
    for (int i = 0; i < t.lanes.size(); ++i) {
        if (t.lanes.at(i).title == title)
            return i;
    }
    return -1;
}

} // namespace

class TestTimeline : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void lanesOfAPendingJob()
    {
        const Timeline t = Timeline::build(pendingJob());
        QStringList titles;
        for (const Lane &lane : t.lanes)
            titles << QString(lane.depth * 2, u' ') + lane.title;
        QCOMPARE(titles, QStringList({QStringLiteral("RayJob ") + Job, QStringLiteral("RayCluster ") + Cluster, QStringLiteral("head"),
                                      QStringLiteral("  ") + Cluster + QStringLiteral("-head-abcde"), QStringLiteral("workers gpu"),
                                      QStringLiteral("  ") + Cluster + QStringLiteral("-gpu-worker-fghij"),
                                      QStringLiteral("  ") + Cluster + QStringLiteral("-gpu-worker-zzzzz")}));
        // Pods appear as they were created; the gone one lived from its first event to its last.
        const Lane &gone = t.lanes.at(laneTitled(t, Cluster + QStringLiteral("-gpu-worker-zzzzz")));
        QCOMPARE(gone.created, T0.addSecs(10));
        QCOMPARE(gone.ended, T0.addSecs(40));
        const Lane &head = t.lanes.at(laneTitled(t, Cluster + QStringLiteral("-head-abcde")));
        QCOMPARE(head.created, T0.addSecs(3));
        QVERIFY(!head.ended.isValid());
    }

    void eachEventOnItsObjectsLane()
    {
        const Timeline t = Timeline::build(pendingJob());
        QCOMPARE(t.items.size(), 6);
        QCOMPARE(t.lanes.at(t.items.at(t.indexOfKey(QStringLiteral("team/e1"))).lane).objectKind, QStringLiteral("RayJob"));
        QCOMPARE(t.lanes.at(t.items.at(t.indexOfKey(QStringLiteral("team/e2"))).lane).objectKind, QStringLiteral("RayCluster"));
        QCOMPARE(t.items.at(t.indexOfKey(QStringLiteral("team/e3"))).lane, laneTitled(t, Cluster + QStringLiteral("-head-abcde")));
        QCOMPARE(t.items.at(t.indexOfKey(QStringLiteral("team/e6"))).lane, laneTitled(t, Cluster + QStringLiteral("-gpu-worker-zzzzz")));
        // Ordered by first sighting.
        for (int i = 1; i < t.items.size(); ++i)
            QVERIFY(t.items.at(i - 1).start <= t.items.at(i).start);
        QCOMPARE(t.itemsOfLane(laneTitled(t, Cluster + QStringLiteral("-gpu-worker-zzzzz"))).size(), 2);
    }

    void repeatedEventsAreSpans()
    {
        const Timeline t = Timeline::build(pendingJob());
        // core/v1: count with first and last timestamps.
        const TimelineItem &legacy = t.items.at(t.indexOfKey(QStringLiteral("team/e3")));
        QVERIFY(legacy.isSpan());
        QCOMPARE(legacy.event.count, 9);
        QCOMPARE(legacy.start, T0.addSecs(4));
        QCOMPARE(legacy.end, T0.addSecs(124));
        QVERIFY(legacy.warning());
        // events.k8s.io/v1: eventTime is the first, the series' lastObservedTime the last.
        const TimelineItem &series = t.items.at(t.indexOfKey(QStringLiteral("team/e4")));
        QVERIFY(series.isSpan());
        QCOMPARE(series.event.count, 7);
        QCOMPARE(series.start, T0.addSecs(5));
        QCOMPARE(series.end, T0.addSecs(125));
        // Seen once: a mark.
        QVERIFY(!t.items.at(t.indexOfKey(QStringLiteral("team/e1"))).isSpan());
    }

    void phasesFromTheRayJobsTimes()
    {
        TimelineInput input = pendingJob();
        Timeline t = Timeline::build(input);
        QCOMPARE(t.phases.size(), 2);
        QCOMPARE(t.phases.at(0).phase, Phase::Pending);
        QCOMPARE(t.phases.at(0).start, T0);
        QCOMPARE(t.phases.at(1).phase, Phase::Initializing);
        QCOMPARE(t.phases.at(1).start, T0.addSecs(2));
        // A job still going: the axis runs to now.
        QCOMPARE(t.start, T0);
        QCOMPARE(t.end, T0.addSecs(130));
        QCOMPARE(t.now, T0.addSecs(130));
        QCOMPARE(t.phases.last().end, t.end);

        // Ran and failed: Ray accepted it at 130 s, it ended at 300 s.
        input.rayJob = rayJob(QJsonObject{{QStringLiteral("jobDeploymentStatus"), QStringLiteral("Failed")},
                                          {QStringLiteral("jobStatus"), QStringLiteral("FAILED")},
                                          {QStringLiteral("startTime"), at(2)},
                                          {QStringLiteral("endTime"), at(300)},
                                          {QStringLiteral("rayJobInfo"), QJsonObject{{QStringLiteral("startTime"), at(130)}}}});
        input.now = T0.addSecs(1000);
        t = Timeline::build(input);
        QStringList phases;
        for (const PhaseBand &band : t.phases)
            phases << phaseName(band.phase);
        QCOMPARE(phases, QStringList({QStringLiteral("Pending"), QStringLiteral("Initializing"), QStringLiteral("Running"), QStringLiteral("Failed")}));
        // An ended job's axis ends with it, not at now.
        QCOMPARE(t.end, T0.addSecs(300));
        QVERIFY(!t.now.isValid());
        QCOMPARE(t.phaseAt(T0.addSecs(200)), Phase::Running);
        QCOMPARE(t.phaseAt(T0.addSecs(60)), Phase::Initializing);
    }

    void phasesFromRecordedStates()
    {
        TimelineInput input = pendingJob();
        // The journal saw it suspended (Kueue), resumed, then run.
        input.states = {StateChange{T0.addSecs(20), QStringLiteral("Suspended"), QString()},
                        StateChange{T0.addSecs(60), QStringLiteral("Initializing"), QString()},
                        StateChange{T0.addSecs(90), QStringLiteral("Running"), QStringLiteral("PENDING")},
                        StateChange{T0.addSecs(100), QStringLiteral("Running"), QStringLiteral("RUNNING")}};
        const Timeline t = Timeline::build(input);
        QStringList phases;
        for (const PhaseBand &band : t.phases)
            phases << phaseName(band.phase) + u'@' + QString::number(T0.secsTo(band.start));
        // Before the first record the RayJob's own times; PENDING in Ray is still Initializing.
        QCOMPARE(phases, QStringList({QStringLiteral("Pending@0"), QStringLiteral("Initializing@2"), QStringLiteral("Suspended@20"),
                                      QStringLiteral("Initializing@60"), QStringLiteral("Running@100")}));
    }

    void phaseOfEachStatus_data()
    {
        QTest::addColumn<QString>("deployment");
        QTest::addColumn<QString>("job");
        QTest::addColumn<Phase>("phase");
        QTest::newRow("new") << QString() << QString() << Phase::Pending;
        QTest::newRow("initializing") << QStringLiteral("Initializing") << QString() << Phase::Initializing;
        QTest::newRow("waiting") << QStringLiteral("Waiting") << QString() << Phase::Initializing;
        QTest::newRow("runtime env") << QStringLiteral("Running") << QStringLiteral("PENDING") << Phase::Initializing;
        QTest::newRow("running") << QStringLiteral("Running") << QStringLiteral("RUNNING") << Phase::Running;
        QTest::newRow("retrying") << QStringLiteral("Retrying") << QStringLiteral("RUNNING") << Phase::Running;
        QTest::newRow("suspending") << QStringLiteral("Suspending") << QString() << Phase::Suspended;
        QTest::newRow("succeeded") << QStringLiteral("Complete") << QStringLiteral("SUCCEEDED") << Phase::Succeeded;
        QTest::newRow("stopped") << QStringLiteral("Complete") << QStringLiteral("STOPPED") << Phase::Stopped;
        QTest::newRow("failed") << QStringLiteral("Failed") << QStringLiteral("FAILED") << Phase::Failed;
        QTest::newRow("validation") << QStringLiteral("ValidationFailed") << QString() << Phase::Failed;
    }

    void phaseOfEachStatus()
    {
        QFETCH(QString, deployment);
        QFETCH(QString, job);
        QFETCH(Phase, phase);
        QCOMPARE(phaseOf(StateChange{T0, deployment, job}), phase);
    }

    void goneJobFromItsEventsAlone()
    {
        // The RayJob, its cluster and pods are gone (an archive without objects, or the journal
        // alone): the lanes come from the events' objects and names.
        TimelineInput input;
        input.rayJobName = Job;
        input.events = {
            kubeEvent(QStringLiteral("a"), QStringLiteral("RayCluster"), Cluster, QStringLiteral("Normal"), QStringLiteral("CreatedHeadPod"), 0, 0),
            kubeEvent(QStringLiteral("b"), QStringLiteral("Pod"), Cluster + QStringLiteral("-head-abcde"), QStringLiteral("Normal"),
                  QStringLiteral("Pulled"), 5, 5),
            kubeEvent(QStringLiteral("c"), QStringLiteral("Pod"), Cluster + QStringLiteral("-train-pool-worker-q2w4e"), QStringLiteral("Normal"),
                  QStringLiteral("Pulled"), 6, 6),
            kubeEvent(QStringLiteral("d"), QStringLiteral("Job"), Job, QStringLiteral("Warning"), QStringLiteral("BackoffLimitExceeded"), 50, 50),
            kubeEvent(QStringLiteral("e"), QStringLiteral("Pod"), Job + QStringLiteral("-8xk2p"), QStringLiteral("Normal"), QStringLiteral("Started"), 20, 20),
            kubeEvent(QStringLiteral("f"), QStringLiteral("Pod"), QStringLiteral("a-very-long-cluster-name-cut-at-fifty-head-x9z8y"), QStringLiteral("Normal"),
                  QStringLiteral("Started"), 7, 7),
        };
        const Timeline t = Timeline::build(input);
        QStringList titles;
        for (const Lane &lane : t.lanes)
            titles << QString(lane.depth * 2, u' ') + lane.title;
        QCOMPARE(titles, QStringList({QStringLiteral("RayJob ") + Job, QStringLiteral("RayCluster ") + Cluster, QStringLiteral("head"),
                                      QStringLiteral("  ") + Cluster + QStringLiteral("-head-abcde"),
                                      QStringLiteral("  a-very-long-cluster-name-cut-at-fifty-head-x9z8y"), QStringLiteral("workers train-pool"),
                                      QStringLiteral("  ") + Cluster + QStringLiteral("-train-pool-worker-q2w4e"), QStringLiteral("submitter"),
                                      QStringLiteral("  ") + Job + QStringLiteral("-8xk2p")}));
        // The submitter Job's own event is on the submitter lane.
        QCOMPARE(t.lanes.at(t.items.at(t.indexOfKey(QStringLiteral("team/d"))).lane).kind, LaneKind::Submitter);
        QVERIFY(t.phases.isEmpty());
        QCOMPARE(t.start, T0);
        QCOMPARE(t.end, T0.addSecs(50));
    }

    void anEventWithoutTimeIsLeftOut()
    {
        TimelineInput input = pendingJob();
        QJsonObject timeless = kubeEvent(QStringLiteral("x"), QStringLiteral("Pod"), Cluster + QStringLiteral("-head-abcde"), QStringLiteral("Normal"),
                                     QStringLiteral("Odd"), 0, 0);
        timeless.remove(QStringLiteral("firstTimestamp"));
        timeless.remove(QStringLiteral("lastTimestamp"));
        input.events.append(timeless);
        input.events.append(QJsonObject{{QStringLiteral("garbage"), true}});
        const Timeline t = Timeline::build(input);
        QCOMPARE(t.items.size(), 6);
        QCOMPARE(t.indexOfKey(QStringLiteral("team/x")), -1);
    }

    void textForATerminal()
    {
        const Timeline t = Timeline::build(pendingJob());
        const QString text = t.toText(50, {QStringLiteral("team/e3")});
        const QStringList lines = text.split(u'\n');
        // The header, the phase strip, then one row per lane.
        QVERIFY2(lines.at(0).startsWith(QStringLiteral("2026-12-04 14:00:00 → 14:02:10 UTC, 2m 10s")), qPrintable(text));
        QVERIFY(lines.at(1).startsWith(QStringLiteral("phase")));
        QVERIFY2(lines.at(1).contains(QStringLiteral("PI")), qPrintable(lines.at(1)));
        QCOMPARE(lines.at(1).size(), 34 + 50);
        QVERIFY(lines.at(2).startsWith(QStringLiteral("RayJob ") + Job));
        // The head pod: its FailedScheduling span (#) ending in the evidence mark (*).
        QCOMPARE(lines.at(4), QStringLiteral("head"));
        const QString headRow = lines.at(5);
        QVERIFY2(headRow.startsWith(QStringLiteral("  grpo-kq7x2m-x2kqz-head-abcde ")), qPrintable(headRow));
        QVERIFY2(headRow.contains(QStringLiteral("##")) && headRow.contains(u'*'), qPrintable(headRow));
        // The worker's series span is a repeated warning without the evidence star.
        QCOMPARE(lines.at(6), QStringLiteral("workers gpu"));
        const QString workerRow = lines.at(7);
        QVERIFY2(workerRow.contains(QStringLiteral("##")) && workerRow.contains(u'!') && !workerRow.contains(u'*'), qPrintable(workerRow));
        // The events listed with their lane; the evidence starred, spans with their count and end.
        QVERIFY2(text.contains(QRegularExpression(QStringLiteral("\\n\\* \\+0:04–2:04 +grpo-kq7x2m-x2kqz-head-abcde +Warning FailedScheduling ×9: "))),
                 qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("marks:")));
        QVERIFY(Timeline().toText().contains(QStringLiteral("No events")));
    }
};

QTEST_GUILESS_MAIN(TestTimeline)
#include "tst_timeline.moc"
