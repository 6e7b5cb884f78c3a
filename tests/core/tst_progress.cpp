// JobProgress over driver-log lines exactly as runner.pex writes them (json.dumps with sorted
// keys, src/runner/starforge_runner/runner.py), with and without the kubelet's timestamps, mixed
// with NeMo-RL's own output and with lines that only look like progress.

#include "core/job/progress.h"

#include <QBuffer>
#include <QFile>
#include <QTest>

#include <cmath>

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
        QCOMPARE(p.summary(), QStringLiteral("epoch 1/2, step 2/3 (global step 2)"));
        QCOMPARE(p.globalStep(), 2);
        QCOMPARE(p.points().size(), 2);
        QCOMPARE(p.points().at(0).step, 1);
        QCOMPARE(p.points().at(0).metrics.value(QStringLiteral("Loss")), 0.9);
        QCOMPARE(p.points().at(0).metrics.value(QStringLiteral("Avg Reward")), 0.1);
        QVERIFY(std::isnan(p.points().at(1).metrics.value(QStringLiteral("Loss"))));   // the runner's "nan": a diverged loss
        QCOMPARE(p.points().at(1).metrics.value(QStringLiteral("Total step time")), 12.5);
        QCOMPARE(p.latest(QStringLiteral("Avg Reward")), std::optional<double>(0.1));   // from step 1: step 2 had none
        QCOMPARE(p.latest(QStringLiteral("Accuracy")), std::nullopt);
        QCOMPARE(p.doneReason(), QStringLiteral("Max number of steps has been reached, stopping training early"));
        QCOMPARE(p.exitCode(), std::optional<int>(0));
        QVERIFY(p.done());
    }

    // tests/data/nemo-rl/<algorithm>.runner.log: NeMo-RL v0.7.0's driver output per algorithm as
    // runner.pex passes it on with its records (tst_runner checks the runner still writes these).
    void algorithmLogs_data()
    {
        QTest::addColumn<QString>("algorithm");
        for (const char *a : {"grpo", "sft", "dpo", "rm", "distillation", "ppo"}) QTest::newRow(a) << QString::fromLatin1(a);
    }

    void algorithmLogs()
    {
        QFETCH(QString, algorithm);
        QFile file(QStringLiteral(SF_TEST_DATA_DIR "/nemo-rl/%1.runner.log").arg(algorithm));
        QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(file.fileName()));
        const JobProgress p = JobProgress::fromLog(file.readAll());
        QCOMPARE(p.logDirectory(), QStringLiteral("/starforge/jobs/k2x7pq/logs/exp_003"));
        QCOMPARE(p.exitCode(), std::optional<int>(0));
        QVERIFY(p.done());
        QVERIFY(p.servableCheckpoints().isEmpty());   // the fixtures have no storage behind them
        const auto latest = [&](const char *metric) { return p.latest(QLatin1String(metric)); };
        const auto series = [&](const char *metric) {
            QList<double> values;
            for (const ProgressPoint &point : p.points()) values << point.metrics.value(QLatin1String(metric), -1);
            return values;
        };
        const QString stepLimit = QStringLiteral("Max number of steps has been reached, stopping training early");
        if (algorithm == QLatin1String("grpo")) {
            QCOMPARE(p.summary(), QStringLiteral("step 2/2"));
            QCOMPARE(p.globalStep(), 2);
            QCOMPARE(series("Loss"), (QList<double>{0.0123, 0.0098}));
            QCOMPARE(series("Avg Reward"), (QList<double>{0.4375, 0.5156}));
            QCOMPARE(latest("Validation Accuracy"), std::optional<double>(0.5312));   // `• Accuracy:` under `📊 Validation Results:`
            QCOMPARE(latest("Accuracy"), std::nullopt);
            QCOMPARE(latest("Total step time"), std::optional<double>(41.27));
            QCOMPARE(p.doneReason(), stepLimit);
        } else if (algorithm == QLatin1String("sft")) {
            // Two epochs of 2 steps: the banner's count restarts, the checkpoint lines and the
            // points count globally; the epochs ran out, so the exit ends it.
            QCOMPARE(p.epoch(), 2);
            QCOMPARE(p.totalEpochs(), 2);
            QCOMPARE(p.stepInEpoch(), 2);
            QCOMPARE(p.totalSteps(), 2);
            QCOMPARE(p.globalStep(), 4);
            QCOMPARE(p.currentGlobalStep(), 4);
            QCOMPARE(p.summary(), QStringLiteral("epoch 2/2, step 2/2 (global step 4)"));
            QCOMPARE(p.points().size(), 4);
            QList<int> steps, epochs, inEpoch;
            for (const ProgressPoint &point : p.points()) {
                steps << point.step;
                epochs << point.epoch;
                inEpoch << point.stepInEpoch;
            }
            QCOMPARE(steps, (QList<int>{1, 2, 3, 4}));
            QCOMPARE(epochs, (QList<int>{1, 1, 2, 2}));
            QCOMPARE(inEpoch, (QList<int>{1, 2, 1, 2}));
            QCOMPARE(series("Loss"), (QList<double>{1.4, 1.3, 1.2, 1.1}));
            QCOMPARE(latest("Validation Loss"), std::optional<double>(1.0742));
            QCOMPARE(p.doneReason(), QStringLiteral("Ran all epochs"));
        } else if (algorithm == QLatin1String("dpo")) {
            QCOMPARE(series("Loss"), (QList<double>{0.6731, 0.6531}));   // `• loss:`, lower case
            QCOMPARE(series("Accuracy"), (QList<double>{0.55, 0.6}));
            QCOMPARE(latest("Validation Loss"), std::optional<double>(0.6521));
            QCOMPARE(latest("Validation Accuracy"), std::optional<double>(0.6094));
            QCOMPARE(p.doneReason(), stepLimit);
        } else if (algorithm == QLatin1String("rm")) {
            QCOMPARE(p.summary(), QStringLiteral("step 3/3"));
            const QList<double> loss = series("Loss");
            QCOMPARE(loss.size(), 3);
            QCOMPARE(loss.at(0), 0.693);
            QVERIFY(std::isnan(loss.at(1)));
            QCOMPARE(loss.at(2), 0.6012);
            QCOMPARE(p.doneReason(), QStringLiteral("Ran all epochs"));   // max_num_steps -1: no end line
            QVERIFY2(p.details().startsWith(QStringLiteral("step 3/3, Loss 0.6012, Accuracy 0.8")), qPrintable(p.details()));
        } else if (algorithm == QLatin1String("distillation")) {
            QCOMPARE(series("Loss"), (QList<double>{0.15, 0.1}));
            QCOMPARE(series("Mean Generation Length"), (QList<double>{290.5, 290.5}));
            QCOMPARE(latest("Validation Accuracy"), std::optional<double>(0.4219));
            QCOMPARE(latest("Accuracy"), std::nullopt);
            QCOMPARE(p.doneReason(), stepLimit);
        } else if (algorithm == QLatin1String("ppo")) {
            // `• Policy Loss:` unformatted, after the inner `• Policy loss:` lines of the PPO epochs.
            QCOMPARE(series("Loss"), (QList<double>{0.012345678901234, 0.009876543210987}));
            QCOMPARE(series("Critic Loss"), (QList<double>{0.25, 0.25}));
            QCOMPARE(series("Avg Reward"), (QList<double>{0.45, 0.5}));
            QCOMPARE(p.summary(), QStringLiteral("step 2/2"));   // the inner "▶ Step 1/2..." lines are not banners
            QCOMPARE(p.doneReason(), stepLimit);
        } else {
            QFAIL("unknown algorithm");
        }
    }

    // Saves as the runner sees them on the storage: started (the checkpoint line), saved (step_N/
    // is there), servable once safe, removed by keep_top_k.
    void checkpoints()
    {
        JobProgress p;
        const auto feed = [&](const char *record) { return p.feed(QByteArray(QByteArray("STARFORGE_PROGRESS ") + record)); };
        QVERIFY(feed(R"({"kind": "step", "step": 2, "total": 4})"));
        QVERIFY(feed(R"({"kind": "checkpoint", "step": 2})"));
        QCOMPARE(p.lastCheckpoint(), 2);
        QCOMPARE(p.lastSavedCheckpoint(), 0);
        QVERIFY(!p.savedCheckpoint(2));
        QVERIFY(feed(R"({"kind": "checkpoint_saved", "path": "/s/step_2", "step": 2})"));
        QVERIFY(p.savedCheckpoint(2));
        QVERIFY(feed(R"({"kind": "step", "step": 4, "total": 4})"));
        QVERIFY(feed(R"({"kind": "checkpoint", "step": 4})"));
        QCOMPARE(p.details(), QStringLiteral("step 4/4, last checkpoint step 2, saving step 4"));
        QVERIFY(feed(R"({"kind": "checkpoint_saved", "path": "/s/step_4", "step": 4})"));
        QCOMPARE(p.details(), QStringLiteral("step 4/4, last checkpoint step 4"));
        QVERIFY(feed(R"({"backend": "dtensor_v2", "consolidated": true, "converter": "", "kind": "servable", "path": "/s/step_2/policy/weights/model/consolidated", "step": 2, "tokenizer": "/s/step_2/policy/tokenizer"})"));
        QVERIFY(!feed(R"({"backend": "megatron", "consolidated": false, "kind": "servable", "path": "", "step": 3})"));   // no path
        QVERIFY(!feed(R"({"backend": "megatron", "kind": "servable", "path": "/s/step_3", "step": 3})"));   // no consolidated
        QVERIFY(feed(R"({"backend": "megatron", "consolidated": false, "converter": "examples/converters/convert_megatron_to_hf.py", "kind": "servable", "path": "/s/step_4/policy/weights/iter_0000000", "step": 4, "tokenizer": "/s/step_4/policy/tokenizer"})"));
        QCOMPARE(p.servableCheckpoints().size(), 2);
        const ServableCheckpoint first{2, QStringLiteral("/s/step_2/policy/weights/model/consolidated"), QStringLiteral("/s/step_2/policy/tokenizer"),
                                       QStringLiteral("dtensor_v2"), true, QString()};
        QCOMPARE(p.servableCheckpoints().at(0), first);
        QCOMPARE(p.servableCheckpoints().at(1).backend, QStringLiteral("megatron"));
        QVERIFY(!p.servableCheckpoints().at(1).consolidated);
        QCOMPARE(p.servableCheckpoints().at(1).converter, QStringLiteral("examples/converters/convert_megatron_to_hf.py"));
        QVERIFY(feed(R"({"kind": "checkpoint_removed", "step": 2})"));
        QVERIFY(!p.savedCheckpoint(2));
        QCOMPARE(p.lastSavedCheckpoint(), 4);
        QCOMPARE(p.servableCheckpoints().size(), 1);
        QCOMPARE(p.servableCheckpoints().at(0).step, 4);
        QVERIFY(!feed(R"({"kind": "checkpoint_saved", "step": -1})"));
        QVERIFY(!feed(R"({"kind": "log_dir", "path": 3})"));

        // The runner's list at the exit replaces what the records before it made: step 4 went
        // without a checkpoint_removed record, step 6 came without a servable one.
        QVERIFY(!feed(R"({"checkpoints": {"step": 6}, "kind": "servable_checkpoints"})"));   // not a list
        QVERIFY(feed(R"({"checkpoints": [{"backend": "dtensor_v2", "consolidated": true, "converter": "", "path": "/s/step_6/policy/weights/model/consolidated", "step": 6, "tokenizer": "/s/step_6/policy/tokenizer"}], "kind": "servable_checkpoints"})"));
        QCOMPARE(p.servableCheckpoints().size(), 1);
        QCOMPARE(p.servableCheckpoints().at(0).step, 6);
        QVERIFY(!p.savedCheckpoint(4));
        QCOMPARE(p.lastSavedCheckpoint(), 6);

        // A long run whose rotated log kept only its tail: the list alone is the whole list, in
        // step order, an entry without a path left out.
        const JobProgress tail = JobProgress::fromLog(QByteArrayLiteral(
            "(PolicyWorker pid=12) saving...\n"
            "2026-12-03T10:00:00.123456789Z STARFORGE_PROGRESS {\"checkpoints\": ["
            "{\"backend\": \"megatron\", \"consolidated\": false, \"converter\": \"examples/converters/convert_megatron_to_hf.py\", "
            "\"path\": \"/s/step_300/policy/weights/iter_0000000\", \"step\": 300, \"tokenizer\": \"\"}, "
            "{\"backend\": \"dtensor_v2\", \"consolidated\": true, \"converter\": \"\", \"path\": \"/s/step_100/policy/weights/model/consolidated\", "
            "\"step\": 100, \"tokenizer\": \"/s/step_100/policy/tokenizer\"}, "
            "{\"backend\": \"dtensor_v2\", \"consolidated\": true, \"path\": \"\", \"step\": 150}, "
            "{\"backend\": \"dtensor_v2\", \"consolidated\": true, \"converter\": \"\", \"path\": \"/s/step_200/policy/weights/model/consolidated\", "
            "\"step\": 200, \"tokenizer\": \"/s/step_200/policy/tokenizer\"}], \"kind\": \"servable_checkpoints\"}\n"
            "STARFORGE_PROGRESS {\"code\": 0, \"kind\": \"exit\"}\n"));
        QCOMPARE(tail.servableCheckpoints().size(), 3);
        QCOMPARE(tail.servableCheckpoints().at(0),
                 (ServableCheckpoint{100, QStringLiteral("/s/step_100/policy/weights/model/consolidated"), QStringLiteral("/s/step_100/policy/tokenizer"),
                                     QStringLiteral("dtensor_v2"), true, QString()}));
        QCOMPARE(tail.servableCheckpoints().at(1).step, 200);
        QCOMPARE(tail.servableCheckpoints().at(2),
                 (ServableCheckpoint{300, QStringLiteral("/s/step_300/policy/weights/iter_0000000"), QString(), QStringLiteral("megatron"), false,
                                     QStringLiteral("examples/converters/convert_megatron_to_hf.py")}));
        QCOMPARE(tail.lastSavedCheckpoint(), 300);
        QVERIFY(tail.savedCheckpoint(100));
        QVERIFY(!tail.savedCheckpoint(150));
        QVERIFY(tail.done());
    }

    // What the archiver keeps in the job record: the runner's last list, read from the log's tail
    // alone; a list cut by the tail's start, one inside another line, or none at all is no list.
    void checkpointListAtTheEnd()
    {
        const QByteArray early = QByteArrayLiteral(
            "STARFORGE_PROGRESS {\"checkpoints\": [], \"kind\": \"servable_checkpoints\"}\n");
        const QByteArray list = QByteArrayLiteral(
            "2026-12-03T10:00:00.123456789Z STARFORGE_PROGRESS {\"checkpoints\": [{\"backend\": \"dtensor_v1\", \"consolidated\": false, "
            "\"converter\": \"examples/converters/convert_dcp_to_hf.py\", \"path\": \"/s/step_3/policy/weights\", \"step\": 3, "
            "\"tokenizer\": \"/s/step_3/policy/tokenizer\"}], \"kind\": \"servable_checkpoints\"}\r\n");
        const QByteArray echoed = QByteArrayLiteral(
            "(raylet) STARFORGE_PROGRESS {\"checkpoints\": [{\"consolidated\": true, \"path\": \"/x\", \"step\": 9}], \"kind\": \"servable_checkpoints\"}\n");
        const QByteArray after = QByteArrayLiteral("STARFORGE_PROGRESS {\"code\": 0, \"kind\": \"exit\"}\n"
                                                   "INFO worker.py:1 -- the job finished\n");
        const QByteArray filler = QByteArray(100000, 'x') + '\n';
        const auto at = [](QByteArray data, qint64 tail) {
            QBuffer buffer(&data);
            buffer.open(QIODevice::ReadOnly);
            return servableCheckpointsAtTheEnd(buffer, tail);
        };
        const auto found = at(early + filler + list + echoed + after, 4096);
        QVERIFY(found.has_value());
        QCOMPARE(found->size(), 1);
        QCOMPARE(found->first(), (ServableCheckpoint{3, QStringLiteral("/s/step_3/policy/weights"), QStringLiteral("/s/step_3/policy/tokenizer"),
                                                     QStringLiteral("dtensor_v1"), false, QStringLiteral("examples/converters/convert_dcp_to_hf.py")}));
        // The same list starting before the tail: cut, so not read; the earlier, empty one is
        // not in the tail either.
        QVERIFY(!at(early + filler + list + after, after.size() + 40).has_value());
        QVERIFY(!at(filler + after, 4096).has_value());
        QVERIFY(!at(echoed + after, 4096).has_value());
        // A log that is all tail: an empty list is a list.
        const auto empty = at(early + after, 4096);
        QVERIFY(empty.has_value());
        QVERIFY(empty->isEmpty());
    }

    // A resumed run's log starts past step 1 of the global count: the checkpoint line says where.
    void globalStepFromTheCheckpointLine()
    {
        const JobProgress p = JobProgress::fromLog(
            "STARFORGE_PROGRESS {\"epoch\": 3, \"kind\": \"epoch\", \"total\": 5}\n"
            "STARFORGE_PROGRESS {\"kind\": \"step\", \"step\": 1, \"total\": 10}\n"
            "STARFORGE_PROGRESS {\"kind\": \"checkpoint\", \"step\": 21}\n"
            "STARFORGE_PROGRESS {\"kind\": \"step\", \"step\": 2, \"total\": 10}\n");
        QCOMPARE(p.globalStep(), 21);
        QCOMPARE(p.currentGlobalStep(), 22);
        QCOMPARE(p.summary(), QStringLiteral("epoch 3/5, step 2/10 (global step 22)"));
        QCOMPARE(p.points().size(), 2);
        QCOMPARE(p.points().at(0).step, 21);
        QCOMPARE(p.points().at(1).step, 22);
    }

    void theExitEndsARun()
    {
        JobProgress ranOut = JobProgress::fromLog("STARFORGE_PROGRESS {\"kind\": \"step\", \"step\": 3, \"total\": 3}\n");
        QVERIFY(!ranOut.done());
        QCOMPARE(ranOut.doneReason(), QString());
        QVERIFY(ranOut.feed("STARFORGE_PROGRESS {\"code\": 0, \"kind\": \"exit\"}"));
        QVERIFY(ranOut.done());
        QCOMPARE(ranOut.doneReason(), QStringLiteral("Ran all epochs"));
        const JobProgress failed = JobProgress::fromLog("STARFORGE_PROGRESS {\"code\": 1, \"kind\": \"exit\"}\n");
        QVERIFY(failed.done());
        QCOMPARE(failed.doneReason(), QStringLiteral("Exited with code 1"));
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
