// The merged view's merge (src/core/logs/logmerge.h): times parsed as the kubelet writes them,
// lines of several pods put in time order, equal times in the pods' fixed order, a line without
// a time after the line before it, CRLF endings, a line that arrives late within the hold-back
// window put in its place, and one that arrives later than that shown rather than lost.

#include "core/logs/logmerge.h"

#include <QDateTime>
#include <QTest>

using namespace Starforge::Logs;

namespace {

QList<QByteArray> lines(const QByteArray &merged)
{
    QList<QByteArray> out = merged.split('\n');
    if (!out.isEmpty() && out.last().isEmpty()) out.removeLast();
    return out;
}

} // namespace

class TestLogMerge : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parsesTheKubeletsTimes()
    {
        QCOMPARE(parseRfc3339Nanos("1970-01-01T00:00:00Z"), std::optional<qint64>(0));
        const qint64 seconds = QDateTime(QDate(2026, 12, 3), QTime(10, 15, 2), Qt::UTC).toSecsSinceEpoch();
        QCOMPARE(parseRfc3339Nanos("2026-12-03T10:15:02.123456789Z"), std::optional<qint64>(seconds * 1000000000 + 123456789));
        // The kubelet trims trailing zeros of the fraction: .5 is half a second.
        QCOMPARE(parseRfc3339Nanos("2026-12-03T10:15:02.5Z"), std::optional<qint64>(seconds * 1000000000 + 500000000));
        QCOMPARE(parseRfc3339Nanos("2026-12-03T12:15:02.5+02:00"), std::optional<qint64>(seconds * 1000000000 + 500000000));
        QCOMPARE(parseRfc3339Nanos("2024-02-29T00:00:00Z"),
                 std::optional<qint64>(QDateTime(QDate(2024, 2, 29), QTime(0, 0), Qt::UTC).toSecsSinceEpoch() * 1000000000));
        QVERIFY(!parseRfc3339Nanos("2026-12-03T10:15:02.Z"));
        QVERIFY(!parseRfc3339Nanos("2026-12-03T10:15:02"));      // no zone
        QVERIFY(!parseRfc3339Nanos("2026-13-03T10:15:02Z"));
        QVERIFY(!parseRfc3339Nanos("Traceback (most recent call last):"));
        QVERIFY(!parseRfc3339Nanos("2026-12-03T10:15:02Zjunk"));
    }

    void ordersLinesAcrossPodsByTime()
    {
        LogMerger merger({"head", "worker gpu-0"}, 1000);
        merger.addRaw(0, "2026-12-03T10:00:01Z head one", 0);
        merger.addRaw(0, "2026-12-03T10:00:03.5Z head two", 0);
        merger.addRaw(1, "2026-12-03T10:00:02.25Z worker one", 0);
        merger.addRaw(1, "2026-12-03T10:00:04Z worker two", 0);
        merger.finish(0);
        merger.finish(1);
        qint64 count = 0;
        QCOMPARE(lines(merger.take(0, &count)), (QList<QByteArray>{"[head] head one", "[worker gpu-0] worker one", "[head] head two",
                                                                     "[worker gpu-0] worker two"}));
        QCOMPARE(count, 4);
        QCOMPARE(merger.pendingLines(), 0);
    }

    void equalTimesKeepThePodOrderAndTheirOwnOrder()
    {
        LogMerger merger({"submitter", "head", "worker gpu-0"}, 1000);
        // Added in the reverse of the pods' order; two lines of one pod share a time too.
        merger.addRaw(2, "2026-12-03T10:00:01.000000001Z w", 0);
        merger.addRaw(1, "2026-12-03T10:00:01.000000001Z h1", 0);
        merger.addRaw(1, "2026-12-03T10:00:01.000000001Z h2", 0);
        merger.addRaw(0, "2026-12-03T10:00:01.000000001Z s", 0);
        merger.addRaw(0, "2026-12-03T10:00:01.000000002Z later", 0);
        QCOMPARE(lines(merger.takeAll()), (QList<QByteArray>{"[submitter] s", "[head] h1", "[head] h2", "[worker gpu-0] w", "[submitter] later"}));
    }

    void aLineWithoutATimeFollowsTheLineBeforeIt()
    {
        LogMerger merger({"a", "b"}, 1000);
        merger.addRaw(0, "no time at all, before any", 0);   // first of its pod: first
        merger.addRaw(0, "2026-12-03T10:00:01Z a1", 0);
        merger.add(0, {}, "the rest of a1, cut for length", 0);
        merger.addRaw(1, "2026-12-03T10:00:01.5Z b1", 0);
        merger.addRaw(0, "2026-12-03T10:00:02Z a2", 0);
        merger.finish(0);
        merger.finish(1);
        QCOMPARE(lines(merger.take(0)),
                 (QList<QByteArray>{"[a] no time at all, before any", "[a] a1", "[a] the rest of a1, cut for length", "[b] b1", "[a] a2"}));
    }

    void crlfEndingsAreDropped()
    {
        LogMerger merger({"a", "b"}, 1000);
        merger.addRaw(0, "2026-12-03T10:00:01Z windows\r", 0);
        merger.addRaw(1, "2026-12-03T10:00:00Z a \r in the middle stays\r", 0);
        merger.add(0, "2026-12-03T10:00:02Z", "split off\r", 0);
        QCOMPARE(merger.takeAll(), QByteArray("[b] a \r in the middle stays\n[a] windows\n[a] split off\n"));
    }

    void aLateLineWithinTheWindowTakesItsPlace()
    {
        LogMerger merger({"a", "b"}, 100);
        merger.addRaw(0, "2026-12-03T10:00:01Z a1", 0);
        merger.addRaw(0, "2026-12-03T10:00:03Z a3", 0);
        // b has said nothing yet: it could still have something earlier, so nothing goes.
        QCOMPARE(merger.take(10), QByteArray());
        QCOMPARE(merger.pendingLines(), 2);
        // b's line of second 2 arrives 50 ms later, within the window: between a's two.
        merger.addRaw(1, "2026-12-03T10:00:02Z b2", 50);
        // Both pods have passed a1 and b2 now, so they go at once; a3 waits, as b may still
        // send a line before second 3.
        QCOMPARE(lines(merger.take(60)), (QList<QByteArray>{"[a] a1", "[b] b2"}));
        QCOMPARE(merger.take(99), QByteArray());
        // Once a3 has waited the window, it goes.
        QCOMPARE(lines(merger.take(100)), (QList<QByteArray>{"[a] a3"}));
        QCOMPARE(merger.pendingLines(), 0);
    }

    void aQuietPodHoldsLinesBackOnlyForTheWindow()
    {
        LogMerger merger({"busy", "quiet"}, 1000);
        merger.addRaw(0, "2026-12-03T10:00:01Z one", 0);
        merger.addRaw(0, "2026-12-03T10:00:02Z two", 400);
        QCOMPARE(merger.take(999), QByteArray());
        QCOMPARE(lines(merger.take(1000)), (QList<QByteArray>{"[busy] one"}));
        QCOMPARE(lines(merger.take(1400)), (QList<QByteArray>{"[busy] two"}));
    }

    void aLineLaterThanTheWindowIsShownNotLost()
    {
        LogMerger merger({"a", "b"}, 100);
        merger.addRaw(0, "2026-12-03T10:00:05Z a5", 0);
        QCOMPARE(lines(merger.take(200)), (QList<QByteArray>{"[a] a5"}));
        // b reconnects and sends a line of second 4 after a5 went out: it comes next.
        merger.addRaw(1, "2026-12-03T10:00:04Z b4", 210);
        merger.addRaw(0, "2026-12-03T10:00:06Z a6", 215);
        QCOMPARE(lines(merger.take(220)), (QList<QByteArray>{"[b] b4"}));
        merger.finish(1);
        QCOMPARE(lines(merger.take(220)), (QList<QByteArray>{"[a] a6"}));
    }

    void aPodsOwnLinesStayInTheirOrder()
    {
        // A line stamped earlier than the one before it of the same pod stays after it.
        LogMerger merger({"a", "b"}, 1000);
        merger.addRaw(0, "2026-12-03T10:00:03Z a3", 0);
        merger.addRaw(0, "2026-12-03T10:00:01Z a-skewed", 0);
        merger.addRaw(1, "2026-12-03T10:00:02Z b2", 0);
        QCOMPARE(lines(merger.takeAll()), (QList<QByteArray>{"[b] b2", "[a] a3", "[a] a-skewed"}));
    }
};

QTEST_GUILESS_MAIN(TestLogMerge)
#include "tst_logmerge.moc"
