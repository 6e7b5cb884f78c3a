// A job's finished checkpoints for the job detail: a growing list appends rows (a view keeps
// its selection), a step removed by keep_top_k resets, each row says whether vLLM can serve it
// or which NeMo-RL converter it needs. Under QAbstractItemModelTester throughout.

#include "models/checkpointsmodel.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Models;

namespace {

Job::ServableCheckpoint consolidated(int step)
{
    const QString base = QStringLiteral("/starforge/jobs/x7k2pq/checkpoints/step_%1/policy").arg(step);
    return {step, base + QStringLiteral("/weights/model/consolidated"), base + QStringLiteral("/tokenizer"), QStringLiteral("dtensor_v2"), true, QString()};
}

} // namespace

class TestCheckpointsModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void growsByRowsAndResetsOnRemoval()
    {
        CheckpointsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.setCheckpoints({consolidated(2)});
        model.setCheckpoints({consolidated(2), consolidated(4)});
        QCOMPARE(inserted.size(), 2);
        QCOMPARE(reset.size(), 0);
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.index(1, CheckpointsModel::StepColumn).data().toInt(), 4);
        model.setCheckpoints({consolidated(2), consolidated(4)});   // the same: nothing
        QCOMPARE(inserted.size(), 2);
        model.setCheckpoints({consolidated(4), consolidated(6)});   // keep_top_k removed step 2
        QCOMPARE(reset.size(), 1);
        QCOMPARE(model.index(0, CheckpointsModel::StepColumn).data().toInt(), 4);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    void saysWhatVllmCanDo()
    {
        CheckpointsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        Job::ServableCheckpoint megatron{8, QStringLiteral("/s/step_8/policy/weights"), QStringLiteral("/s/step_8/policy/tokenizer"),
                                         QStringLiteral("megatron"), false, QStringLiteral("examples/converters/convert_megatron_to_hf.py")};
        Job::ServableCheckpoint sharded{9, QStringLiteral("/s/step_9/policy/weights"), QStringLiteral("/s/step_9/policy/tokenizer"),
                                        QStringLiteral("dtensor_v2"), false, QString()};
        model.setCheckpoints({consolidated(3), megatron, sharded});
        QCOMPARE(model.index(0, CheckpointsModel::ChatColumn).data().toString(), QStringLiteral("Ready to chat"));
        QCOMPARE(model.index(0, 0).data(CheckpointsModel::ChatReadyRole).toBool(), true);
        QCOMPARE(model.index(0, 0).data(CheckpointsModel::TokenizerPathRole).toString(), consolidated(3).tokenizerPath);
        QVERIFY(model.index(0, CheckpointsModel::PathColumn).data(Qt::ToolTipRole).toString().contains(QStringLiteral("with the tokenizer")));
        QCOMPARE(model.index(1, CheckpointsModel::ChatColumn).data().toString(),
                 QStringLiteral("Convert first: examples/converters/convert_megatron_to_hf.py"));
        QCOMPARE(model.index(1, CheckpointsModel::BackendColumn).data().toString(), QStringLiteral("megatron"));
        QCOMPARE(model.index(2, CheckpointsModel::ChatColumn).data().toString(), QStringLiteral("No Hugging Face weights"));
        QCOMPARE(model.index(1, 0).data(Qt::AccessibleTextRole).toString(),
                 QStringLiteral("Step 8, Convert first: examples/converters/convert_megatron_to_hf.py, /s/step_8/policy/weights"));
        QCOMPARE(model.headerData(CheckpointsModel::ChatColumn, Qt::Horizontal).toString(), QStringLiteral("Chat"));
    }
};

QTEST_GUILESS_MAIN(TestCheckpointsModel)
#include "tst_checkpointsmodel.moc"
