// Runs compared (RunComparisonModel and the Compare window's plot): two runs' progress read from
// their driver logs as the runner prints them, under QAbstractItemModelTester; the series
// against the step and the wall time (the sum of the step times); the CSV checked against the
// logs it came from; and the plot's legend values under a keyboard cursor, its log scale, and
// the PNG it exports.

#include "gui/jobs/comparewindow.h"
#include "models/runcomparisonmodel.h"

#include <QAbstractItemModelTester>
#include <QImage>
#include <QKeyEvent>
#include <QLocale>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace Starforge;
using Models::RunComparisonModel;

namespace {

// A driver log: steps 1..n with Loss, Avg Reward and Total step time, as runner.pex prints them
// (a value that is not a number as the string "nan").
QByteArray driverLog(int steps, double lossScale, double stepTime, bool nanAt2 = false)
{
    QByteArray log = "Starting GRPO\n";
    for (int s = 1; s <= steps; ++s) {
        log += "STARFORGE_PROGRESS {\"kind\": \"step\", \"step\": " + QByteArray::number(s) + ", \"total\": " + QByteArray::number(steps) + "}\n";
        const QByteArray loss = nanAt2 && s == 2 ? QByteArray("\"nan\"") : QByteArray::number(lossScale / s, 'g', QLocale::FloatingPointShortest);
        log += "STARFORGE_PROGRESS {\"kind\": \"metric\", \"name\": \"Loss\", \"value\": " + loss + "}\n";
        log += "STARFORGE_PROGRESS {\"kind\": \"metric\", \"name\": \"Avg Reward\", \"value\": " + QByteArray::number(0.1 * s, 'g', QLocale::FloatingPointShortest) + "}\n";
        log += "STARFORGE_PROGRESS {\"kind\": \"metric\", \"name\": \"Total step time\", \"value\": " + QByteArray::number(stepTime, 'g', QLocale::FloatingPointShortest) + "}\n";
    }
    return log;
}

} // namespace

class TestRunComparison : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void modelSeriesAndCsv()
    {
        RunComparisonModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setRun(QStringLiteral("bcdfgh"), QStringLiteral("grpo-a"), Job::JobProgress::fromLog(driverLog(4, 1.0, 2.5)));
        model.setRun(QStringLiteral("cdfghj"), QStringLiteral("grpo, b"), Job::JobProgress::fromLog(driverLog(3, 2.0, 4.0, true)));
        QCOMPARE(model.rowCount(), 7);
        QCOMPARE(model.metrics(), (QStringList{QStringLiteral("Loss"), QStringLiteral("Avg Reward"), QStringLiteral("Total step time")}));
        // Against the step; against the wall time (2.5 s a step: 2.5, 5, 7.5, 10).
        const QList<QPointF> a = model.series(QStringLiteral("bcdfgh"), QStringLiteral("Loss"), RunComparisonModel::Axis::Step);
        QCOMPARE(a, (QList<QPointF>{{1, 1.0}, {2, 0.5}, {3, 1.0 / 3}, {4, 0.25}}));
        const QList<QPointF> wall = model.series(QStringLiteral("bcdfgh"), QStringLiteral("Avg Reward"), RunComparisonModel::Axis::WallTime);
        QCOMPARE(wall.size(), 4);
        QCOMPARE(wall.at(3).x(), 10.0);
        // The NaN at step 2 is left out of the line.
        QCOMPARE(model.series(QStringLiteral("cdfghj"), QStringLiteral("Loss"), RunComparisonModel::Axis::Step).size(), 2);
        // Replacing a run (it grew) keeps one row set per run.
        model.setRun(QStringLiteral("bcdfgh"), QStringLiteral("grpo-a"), Job::JobProgress::fromLog(driverLog(5, 1.0, 2.5)));
        QCOMPARE(model.rowCount(), 8);

        // The CSV: a header, a row per run and step, each value as the log printed it.
        const QStringList lines = model.toCsv().split(QStringLiteral("\r\n"), Qt::SkipEmptyParts);
        QCOMPARE(lines.first(), QStringLiteral("Run,Step,Wall time (s),Loss,Avg Reward,Total step time"));
        QCOMPARE(lines.size(), 1 + 8);
        QCOMPARE(lines.at(1), QStringLiteral("grpo-a,1,2.5,1,0.1,2.5"));
        // Each value as the log wrote it: the same text, not a rounding of it.
        const QByteArray log = driverLog(5, 1.0, 2.5);
        const QStringList third = lines.at(3).split(u',');
        QCOMPARE(third.mid(0, 3), (QStringList{QStringLiteral("grpo-a"), QStringLiteral("3"), QStringLiteral("7.5")}));
        QVERIFY2(log.contains(QByteArray("\"Loss\", \"value\": " + third.at(3).toUtf8() + "}")), qPrintable(third.at(3)));
        QVERIFY2(log.contains(QByteArray("\"Avg Reward\", \"value\": " + third.at(4).toUtf8() + "}")), qPrintable(third.at(4)));
        QCOMPARE(lines.at(7), QStringLiteral("\"grpo, b\",2,8,nan,0.2,4"));   // quoted: the label has a comma
        model.removeRun(QStringLiteral("bcdfgh"));
        QCOMPARE(model.rowCount(), 3);
    }

    void plotCursorLogScaleAndPng()
    {
        RunComparisonModel model;
        model.setRun(QStringLiteral("bcdfgh"), QStringLiteral("grpo-a"), Job::JobProgress::fromLog(driverLog(4, 1.0, 2.5)));
        model.setRun(QStringLiteral("cdfghj"), QStringLiteral("grpo-b"), Job::JobProgress::fromLog(driverLog(4, 2.0, 4.0)));
        Gui::ComparePlot plot;
        plot.setModel(&model);
        plot.setMetric(QStringLiteral("Loss"));
        plot.resize(640, 360);
        plot.show();
        QVERIFY(QTest::qWaitForWindowExposed(&plot));
        // The keys walk the steps; the values of both runs are said there.
        plot.setFocus();
        QTest::keyClick(&plot, Qt::Key_Home);
        QCOMPARE(plot.cursorX(), 1.0);
        QTest::keyClick(&plot, Qt::Key_Right);
        QCOMPARE(plot.cursorX(), 2.0);
        QCOMPARE(plot.valuesAtCursor(), (QStringList{QStringLiteral("grpo-a: 0.5"), QStringLiteral("grpo-b: 1")}));
        QVERIFY2(plot.accessibleDescription().contains(QStringLiteral("At the cursor: grpo-a: 0.5, grpo-b: 1")), qPrintable(plot.accessibleDescription()));
        // Log scale: the same values read back; nothing at or below zero here.
        plot.setLogScale(true);
        QCOMPARE(plot.hiddenOnLogScale(), 0);
        QCOMPARE(plot.valuesAtCursor(), (QStringList{QStringLiteral("grpo-a: 0.5"), QStringLiteral("grpo-b: 1")}));
        // A PNG of the plot as drawn, both runs' colours in it.
        QTemporaryDir dir;
        const QString png = dir.filePath(QStringLiteral("runs.png"));
        QVERIFY(plot.grab().save(png, "PNG"));
        const QImage image(png);
        QCOMPARE(image.size(), plot.size() * plot.devicePixelRatio());
        bool sawA = false, sawB = false;
        for (int y = 0; y < image.height(); ++y) {
            for (int x = 0; x < image.width(); ++x) {
                const QColor c = image.pixelColor(x, y);
                sawA = sawA || c == Gui::ComparePlot::colorOf(0);
                sawB = sawB || c == Gui::ComparePlot::colorOf(1);
            }
        }
        QVERIFY(sawA && sawB);
    }
};

QTEST_MAIN(TestRunComparison)
#include "tst_runcomparison.moc"
