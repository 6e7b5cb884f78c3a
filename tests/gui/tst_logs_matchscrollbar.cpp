// The match overview in the Logs dock's scroll bar (src/gui/logs/matchscrollbar.h): the
// matches' lines bucketed by pixel row, checked against a plain per-match computation, for a
// few hand-made cases, a million matches, and the ticks as painted.

#include "gui/logs/matchscrollbar.h"

#include <QImage>
#include <QSet>
#include <QTest>

#include <algorithm>

using Starforge::Gui::MatchScrollBar;

namespace {

// Every match's row, one by one: what markRows must give, the slow way.
QList<int> rowsOneByOne(const QList<qint64> &matches, qint64 total, int pixels)
{
    QList<int> rows;
    for (const qint64 line : matches) {
        const int row = int(double(line) * pixels / double(total));
        if (rows.isEmpty() || rows.last() != row) rows << row;
    }
    return rows;
}

} // namespace

class TestMatchScrollBar : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void bucketsMatchesByPixelRow()
    {
        QCOMPARE(MatchScrollBar::markRows({0, 5, 99}, 100, 10), (QList<int>{0, 9}));
        QCOMPARE(MatchScrollBar::markRows({10, 11, 19, 20}, 100, 10), (QList<int>{1, 2}));
        // Fewer lines than pixels: each line has rows of its own.
        QCOMPARE(MatchScrollBar::markRows({0, 1, 2}, 3, 300), (QList<int>{0, 100, 200}));
        // Lines 0-3 in row 0, 4-6 in row 1, 7-9 in row 2 of a 3-pixel strip over 10 lines.
        QCOMPARE(MatchScrollBar::markRows({3, 4, 6, 7}, 10, 3), (QList<int>{0, 1, 2}));
        QCOMPARE(MatchScrollBar::markRows({0, 3, 9}, 10, 3), (QList<int>{0, 2}));
        QCOMPARE(MatchScrollBar::markRows({}, 100, 10), QList<int>());
        QCOMPARE(MatchScrollBar::markRows({1, 2}, 0, 10), QList<int>());
        QCOMPARE(MatchScrollBar::markRows({1, 2}, 100, 0), QList<int>());
        QCOMPARE(MatchScrollBar::markRows({50, 150}, 100, 10), (QList<int>{5}));   // past the end: not a row
    }

    void aMillionMatchesAsOneByOne()
    {
        // A million matches in lines 5,000,000 to 5,999,999 of ten million, and every tenth
        // line of ten million, over a 937-pixel groove.
        QList<qint64> band;
        band.reserve(1000000);
        for (qint64 l = 5000000; l < 6000000; ++l) band << l;
        const QList<int> rows = MatchScrollBar::markRows(band, 10000000, 937);
        QCOMPARE(rows, rowsOneByOne(band, 10000000, 937));
        QCOMPARE(rows.first(), 468);
        QCOMPARE(rows.last(), 562);
        QList<qint64> spread;
        spread.reserve(1000000);
        for (qint64 l = 0; l < 10000000; l += 10) spread << l;
        QCOMPARE(MatchScrollBar::markRows(spread, 10000000, 937).size(), 937);
        QList<qint64> sparse{7, 123456, 8999999};
        QCOMPARE(MatchScrollBar::markRows(sparse, 9000000, 500), rowsOneByOne(sparse, 9000000, 500));
    }

    void paintsATickAtEachMarkedRow()
    {
        MatchScrollBar bar;
        bar.setRange(0, 1000);
        bar.resize(16, 400);
        bar.show();
        QVERIFY(QTest::qWaitForWindowExposed(&bar));
        QCOMPARE(bar.accessibleName(), QStringLiteral("Log position and match overview"));
        const QList<qint64> matches{100, 101, 700};
        bar.setMatches(matches, 1000);
        const int height = bar.grooveHeight();
        QVERIFY(height > 100);
        QCOMPARE(bar.marks(), MatchScrollBar::markRows(matches, 1000, height));
        QCOMPARE(bar.marks().size(), 2);
        QVERIFY2(bar.accessibleDescription().contains(QStringLiteral("3 search match")), qPrintable(bar.accessibleDescription()));

        const QRect groove = bar.grooveRect();
        const QImage image = bar.grab().toImage();
        const QColor tick(0xe0, 0x7a, 0x00);
        const int x = groove.center().x();
        QCOMPARE(image.pixelColor(x, groove.top() + bar.marks().last()), tick);   // n 700, below the handle
        QVERIFY(image.pixelColor(x, groove.top() + bar.marks().last() - 20) != tick);

        bar.setOverviewShown(false);
        QVERIFY(bar.marks().isEmpty());
        QVERIFY(bar.grab().toImage().pixelColor(x, groove.top() + MatchScrollBar::markRows(matches, 1000, height).last()) != tick);
    }
};

QTEST_MAIN(TestMatchScrollBar)
#include "tst_logs_matchscrollbar.moc"
