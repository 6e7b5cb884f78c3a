// JobProgress over driver-log lines exactly as runner.pex writes them (json.dumps with sorted
// keys, src/runner/starforge_runner/runner.py), with and without the kubelet's timestamps, mixed
// with NeMo-RL's own output and with lines that only look like progress.

#include "core/job/progress.h"

#include <QTest>

using namespace Starforge::Job;

namespace {

// A short GRPO run as the driver log has it: NeMo-RL's banners and bullets, each followed by the
// runner's record.
const QByteArray Log = QByteArrayLiteral(
    "STARFORGE_PROGRESS {\"argv\": [\"python\"], \"files\": 12, \"job\": \"k2x7pq\", \"kind\": \"start\"}\n"
    "========================= Epoch 1/2 =========================\n"
    "STARFORGE_PROGRESS {\"epoch\": 1, \"kind\": \"epoch\", \"total\": 2}\n"
    "========================= Step 1/3 =========================\n"
    "STARFORGE_PROGRESS {\"kind\": \"step\", \"step\": 1, \"total\": 3}\n"
    "  \xe2\x80\xa2 Loss: 0.9\n"
    "STARFORGE_PROGRESS {\"kind\": \"metric\", \"name\": \"Loss\", \"value\": 0.9}\n"
    "  \xe2\x80\xa2 Avg Reward: 0.1\n"
    "STARFORGE_PROGRESS {\"kind\": \"metric\", \"name\": \"Avg Reward\", \"value\": 0.1}\n"
    "(raylet) a worker said STARFORGE_PROGRESS {\"kind\": \"step\", \"step\": 99, \"total\": 99}\n"
    "========================= Step 2/3 =========================\n"
    "STARFORGE_PROGRESS {\"kind\": \"step\", \"step\": 2, \"total\": 3}\n"
    "STARFORGE_PROGRESS {\"kind\": \"metric\", \"name\": \"Loss\", \"value\": 0.5}\n"
    "STARFORGE_PROGRESS {\"kind\": \"metric\", \"name\": \"Total step time\", \"value\": 12.5}\n"
    "Saving checkpoint for step 2...\n"
    "STARFORGE_PROGRESS {\"kind\": \"checkpoint\", \"step\": 2}\n"
    "STARFORGE_PROGRESS {not json\n"
    "STARFORGE_PROGRESS {\"kind\": \"step\", \"step\": -4, \"total\": 3}\n"
    "STARFORGE_PROGRESS {\"kind\": \"metric\", \"name\": \"Loss\", \"value\": \"nan\"}\n"
    "Max number of steps has been reached, stopping training early\n"
    "STARFORGE_PROGRESS {\"kind\": \"done\", \"reason\": \"Max number of steps has been reached, stopping training early\"}\n"
    "STARFORGE_PROGRESS {\"code\": 0, \"kind\": \"exit\"}\n");

} // namespace

class TestProgress : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void readsARun()
    {
        const JobProgress p = JobProgress::fromLog(Log);
        QVERIFY(p.started());
        QCOMPARE(p.step(), 2);   // the raylet's line and the negative step change nothing
        QCOMPARE(p.totalSteps(), 3);
        QCOMPARE(p.epoch(), 1);
        QCOMPARE(p.totalEpochs(), 2);
        QCOMPARE(p.lastCheckpoint(), 2);
        QCOMPARE(p.summary(), QStringLiteral("epoch 1/2, step 2/3"));
        QCOMPARE(p.points().size(), 2);
        QCOMPARE(p.points().at(0).step, 1);
        QCOMPARE(p.points().at(0).metrics.value(QStringLiteral("Loss")), 0.9);
        QCOMPARE(p.points().at(0).metrics.value(QStringLiteral("Avg Reward")), 0.1);
        QCOMPARE(p.points().at(1).metrics.value(QStringLiteral("Loss")), 0.5);   // not the "nan" string
        QCOMPARE(p.points().at(1).metrics.value(QStringLiteral("Total step time")), 12.5);
        QCOMPARE(p.latest(QStringLiteral("Avg Reward")), std::optional<double>(0.1));   // from step 1: step 2 had none
        QCOMPARE(p.latest(QStringLiteral("Accuracy")), std::nullopt);
        QCOMPARE(p.doneReason(), QStringLiteral("Max number of steps has been reached, stopping training early"));
        QCOMPARE(p.exitCode(), std::optional<int>(0));
    }

    void timestampsAndLineEnds()
    {
        JobProgress p;
        QVERIFY(p.feed("2026-12-03T10:00:00.123456789Z STARFORGE_PROGRESS {\"kind\": \"step\", \"step\": 7, \"total\": 500}\r\n"));
        QCOMPARE(p.summary(), QStringLiteral("step 7/500"));
        QVERIFY(!p.feed("worker STARFORGE_PROGRESS {\"kind\": \"step\", \"step\": 8, \"total\": 500}"));   // not a timestamp
        QVERIFY(!p.feed("2026-12-03T10:00:01Z some text STARFORGE_PROGRESS {\"kind\": \"step\", \"step\": 9, \"total\": 500}"));
        QCOMPARE(p.step(), 7);
        QVERIFY(!p.feed("STARFORGE_PROGRESS {\"kind\": \"metric\", \"name\": \"Loss\", \"value\": 1e999}"));   // not finite
        QVERIFY(!p.feed("STARFORGE_PROGRESS {\"kind\": \"teleport\"}"));
        QVERIFY(!p.feed("STARFORGE_PROGRESS [1, 2]"));
        QVERIFY(!p.feed(""));
    }

    void emptyBeforeTheFirstStep()
    {
        const JobProgress p = JobProgress::fromLog("NeMo-RL is starting\nSTARFORGE_PROGRESS {\"kind\": \"metric\", \"name\": \"Loss\", \"value\": 1}\n");
        QCOMPARE(p.summary(), QString());
        QVERIFY(p.points().isEmpty());   // a metric before any step belongs to none
        QVERIFY(!p.started());
    }

    void keepsTheLatestSteps()
    {
        JobProgress p;
        for (int step = 1; step <= JobProgress::MaxPoints + 5; ++step) {
            p.feed(QByteArray(QByteArray("STARFORGE_PROGRESS {\"kind\": \"step\", \"step\": ") + QByteArray::number(step) + ", \"total\": 20000}"));
        }
        QCOMPARE(p.points().size(), JobProgress::MaxPoints);
        QCOMPARE(p.points().first().step, 6);
        QCOMPARE(p.step(), JobProgress::MaxPoints + 5);
    }
};

QTEST_GUILESS_MAIN(TestProgress)
#include "tst_progress.moc"
