// The timeline's table model under QAbstractItemModelTester: its rows are the timeline's items,
// a live update that only adds later events inserts rows (views keep their selection), one that
// changes the order resets; the evidence role, keys, tooltips and sort values.

#include "models/timelinemodel.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

using namespace Starforge;
using Models::TimelineModel;

namespace {

const QDateTime T0 = QDateTime(QDate(2026, 12, 4), QTime(9, 0, 0), Qt::UTC);

QJsonObject kubeEvent(const QString &name, const QString &pod, const QString &type, const QString &reason, int first, int last, int count)
{
    return QJsonObject{{QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("namespace"), QStringLiteral("ns")}}},
                       {QStringLiteral("involvedObject"), QJsonObject{{QStringLiteral("kind"), QStringLiteral("Pod")}, {QStringLiteral("name"), pod}}},
                       {QStringLiteral("type"), type},
                       {QStringLiteral("reason"), reason},
                       {QStringLiteral("message"), QStringLiteral("message of %1").arg(name)},
                       {QStringLiteral("firstTimestamp"), T0.addSecs(first).toString(Qt::ISODate)},
                       {QStringLiteral("lastTimestamp"), T0.addSecs(last).toString(Qt::ISODate)},
                       {QStringLiteral("count"), QJsonValue(count)}};
}

Events::Timeline timelineOf(const QList<QJsonObject> &events)
{
    Events::TimelineInput input;
    input.rayJobName = QStringLiteral("job-a");
    input.events = events;
    return Events::Timeline::build(input);
}

} // namespace

class TestTimelineModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void rowsAreTheItems()
    {
        TimelineModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        model.setTimeline(timelineOf({kubeEvent(QStringLiteral("a"), QStringLiteral("job-a-x-head-1"), QStringLiteral("Warning"), QStringLiteral("FailedScheduling"), 0, 60, 5),
                                      kubeEvent(QStringLiteral("b"), QStringLiteral("job-a-x-head-1"), QStringLiteral("Normal"), QStringLiteral("Scheduled"), 70, 70, 1)}),
                          {QStringLiteral("ns/a")});
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.columnCount(), int(TimelineModel::ColumnCount));
        const QModelIndex a = model.index(0, TimelineModel::ReasonColumn);
        QCOMPARE(a.data().toString(), QStringLiteral("FailedScheduling"));
        QCOMPARE(model.index(0, TimelineModel::CountColumn).data().toInt(), 5);
        QCOMPARE(model.index(0, TimelineModel::ObjectColumn).data().toString(), QStringLiteral("job-a-x-head-1"));
        QVERIFY(a.data(TimelineModel::WarningRole).toBool());
        QVERIFY(a.data(TimelineModel::EvidenceRole).toBool());
        QVERIFY(!model.index(1, 0).data(TimelineModel::EvidenceRole).toBool());
        QCOMPARE(a.data(TimelineModel::KeyRole).toString(), QStringLiteral("ns/a"));
        QCOMPARE(a.data(TimelineModel::StartRole).toDateTime(), T0);
        QCOMPARE(a.data(TimelineModel::EndRole).toDateTime(), T0.addSecs(60));
        QCOMPARE(model.index(0, TimelineModel::TimeColumn).data(TimelineModel::SortRole).toLongLong(), T0.addSecs(60).toMSecsSinceEpoch());
        QVERIFY(a.data(Qt::ForegroundRole).isValid());
        QVERIFY(!model.index(1, TimelineModel::ReasonColumn).data(Qt::ForegroundRole).isValid());
        // The tooltip is the whole event: what, where, how often, the message.
        const QString tip = a.data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.startsWith(QStringLiteral("Warning FailedScheduling on job-a-x-head-1, seen 5 times from")), qPrintable(tip));
        QVERIFY(tip.endsWith(QStringLiteral(": message of a")));
        QCOMPARE(a.data(Qt::AccessibleTextRole).toString(), QStringLiteral("Warning FailedScheduling on job-a-x-head-1"));
        QCOMPARE(model.rowOfKey(QStringLiteral("ns/b")), 1);
        QCOMPARE(model.rowOfKey(QStringLiteral("ns/none")), -1);
    }

    void laterEventsAreInserted()
    {
        TimelineModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QList<QJsonObject> events{kubeEvent(QStringLiteral("a"), QStringLiteral("job-a-x-head-1"), QStringLiteral("Normal"), QStringLiteral("Scheduled"), 0, 0, 1)};
        model.setTimeline(timelineOf(events));
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy layout(&model, &TimelineModel::layoutOfTimelineChanged);
        // A live update: the same event seen again (count 2), and a later one.
        events = {kubeEvent(QStringLiteral("a"), QStringLiteral("job-a-x-head-1"), QStringLiteral("Normal"), QStringLiteral("Scheduled"), 0, 30, 2),
                  kubeEvent(QStringLiteral("b"), QStringLiteral("job-a-x-head-1"), QStringLiteral("Normal"), QStringLiteral("Pulled"), 40, 40, 1)};
        model.setTimeline(timelineOf(events));
        QCOMPARE(inserted.size(), 1);
        QCOMPARE(inserted.first().at(1).toInt(), 1);
        QCOMPARE(reset.size(), 0);
        QCOMPARE(changed.size(), 1);
        QCOMPARE(layout.size(), 1);
        QCOMPARE(model.index(0, TimelineModel::CountColumn).data().toInt(), 2);

        // An earlier event appears (the journal had one Kubernetes dropped): the order changes.
        events.prepend(kubeEvent(QStringLiteral("z"), QStringLiteral("job-a-x-head-1"), QStringLiteral("Normal"), QStringLiteral("Created"), -10, -10, 1));
        model.setTimeline(timelineOf(events));
        QCOMPARE(reset.size(), 1);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.index(0, TimelineModel::ReasonColumn).data().toString(), QStringLiteral("Created"));
        QCOMPARE(model.rowOfKey(QStringLiteral("ns/a")), 1);

        model.clear();
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.rowOfKey(QStringLiteral("ns/a")), -1);
    }
};

QTEST_GUILESS_MAIN(TestTimelineModel)
#include "tst_timelinemodel.moc"
