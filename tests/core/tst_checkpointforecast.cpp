// Before submitting, whether a job's checkpoints will be chat-ready: the recipe's config read
// with its `defaults` chain as NeMo-RL's load_config reads it (files of the code folder, and
// v0.7.0's own example configs by name), the overrides applied in order, and the backend,
// LoRA, save format and checkpointing switch deciding; with the converter to name and the
// warning to show. A parent that cannot be read makes no claim. The same reading decides
// whether a distillation job may generate on a second pool.

#include "core/job/checkpointforecast.h"
#include "core/job/jobspec.h"
#include "support/testutil.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Job;

class TestCheckpointForecast : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;

    JobSpec spec(const QByteArray &yaml, const QStringList &overrides = {})
    {
        const QString code = m_dir.filePath(QStringLiteral("code"));
        if (!QDir().mkpath(code + QStringLiteral("/configs"))) return {};
        Testing::writeFile(code + QStringLiteral("/configs/run.yaml"), yaml);
        JobSpec s;
        s.code = code;
        s.recipe.algorithm = QStringLiteral("grpo");
        s.recipe.config = QStringLiteral("configs/run.yaml");
        s.recipe.overrides = overrides;
        return s;
    }

private Q_SLOTS:
    void fromTheImagesExampleConfigs_data()
    {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<QStringList>("overrides");
        QTest::addColumn<QString>("backend");
        QTest::addColumn<bool>("chatReady");
        QTest::addColumn<QString>("converter");
        QTest::addColumn<QString>("warning");   // the start of it; empty: none
        const QByteArray grpo = "defaults: /opt/nemo-rl/examples/configs/grpo_math_1B.yaml\ngrpo:\n  max_num_steps: 10\n";
        const QByteArray dpo = "defaults: /opt/nemo-rl/examples/configs/dpo.yaml\n";
        const QByteArray megatron = "defaults:\n  - /opt/nemo-rl/examples/configs/grpo_math_1B_megatron.yaml\n";
        QTest::newRow("grpo, DTensor v2") << grpo << QStringList() << QStringLiteral("dtensor_v2") << true << QString() << QString();
        QTest::newRow("dpo, DTensor v1") << dpo << QStringList() << QStringLiteral("dtensor_v1") << false
                                         << QStringLiteral("examples/converters/convert_dcp_to_hf.py")
                                         << QStringLiteral("checkpoints: this job uses NeMo-RL's DTensor v1 worker");
        QTest::newRow("dpo made v2") << dpo << QStringList{QStringLiteral("++policy.dtensor_cfg._v2=true")} << QStringLiteral("dtensor_v2") << true
                                     << QString() << QString();
        QTest::newRow("grpo with _v2 deleted") << grpo << QStringList{QStringLiteral("~policy.dtensor_cfg._v2")} << QStringLiteral("dtensor_v1")
                                               << false << QStringLiteral("examples/converters/convert_dcp_to_hf.py")
                                               << QStringLiteral("checkpoints: this job uses NeMo-RL's DTensor v1 worker");
        QTest::newRow("megatron example, checkpointing off") << megatron << QStringList() << QStringLiteral("megatron") << false << QString()
                                                             << QStringLiteral("checkpoints: the config does not turn checkpointing on");
        QTest::newRow("megatron, checkpointing on") << megatron << QStringList{QStringLiteral("checkpointing.enabled=true")} << QStringLiteral("megatron")
                                                    << false << QStringLiteral("examples/converters/convert_megatron_to_hf.py")
                                                    << QStringLiteral("checkpoints: this job trains with Megatron");
        QTest::newRow("grpo with LoRA") << grpo << QStringList{QStringLiteral("policy.dtensor_cfg.lora_cfg.enabled=True")} << QStringLiteral("dtensor_v2")
                                        << false << QString() << QStringLiteral("checkpoints: with LoRA");
        QTest::newRow("grpo with torch_save") << grpo << QStringList{QStringLiteral("checkpointing.model_save_format='torch_save'")}
                                              << QStringLiteral("dtensor_v2") << false << QStringLiteral("examples/converters/convert_dcp_to_hf.py")
                                              << QStringLiteral("checkpoints: checkpointing.model_save_format is torch_save");
    }
    void fromTheImagesExampleConfigs()
    {
        QFETCH(QByteArray, yaml);
        QFETCH(QStringList, overrides);
        QFETCH(QString, backend);
        QFETCH(bool, chatReady);
        QFETCH(QString, converter);
        QFETCH(QString, warning);
        const CheckpointForecast f = CheckpointForecast::forSpec(spec(yaml, overrides));
        QVERIFY(f.known);
        QCOMPARE(CheckpointForecast::backendName(f.backend), backend);
        QCOMPARE(f.chatReady(), chatReady);
        QCOMPARE(f.converter(), converter);
        if (warning.isEmpty()) {
            QCOMPARE(f.warning(), QString());
        } else {
            QVERIFY2(f.warning().startsWith(warning), qPrintable(f.warning()));
            if (!converter.isEmpty()) QVERIFY2(f.warning().contains(converter), qPrintable(f.warning()));
        }
    }

    // A chain inside the code folder: a list of parents relative to the file naming them, the
    // last one winning, the child on top.
    void chainInTheCodeFolder()
    {
        const QString code = m_dir.filePath(QStringLiteral("code"));
        QVERIFY(QDir().mkpath(code + QStringLiteral("/configs/base")));
        QVERIFY(Testing::writeFile(code + QStringLiteral("/configs/base/a.yaml"),
                                   "checkpointing:\n  enabled: true\npolicy:\n  dtensor_cfg:\n    _v2: true\n  megatron_cfg:\n    enabled: false\n"));
        QVERIFY(Testing::writeFile(code + QStringLiteral("/configs/base/b.yaml"), "policy:\n  megatron_cfg:\n    enabled: true\n"));
        JobSpec s = spec("defaults: [base/a.yaml, base/b.yaml]\n");
        CheckpointForecast f = CheckpointForecast::forSpec(s);
        QVERIFY(f.known);
        QCOMPARE(f.backend, CheckpointForecast::Backend::Megatron);   // b after a
        QVERIFY(f.checkpoints);
        s = spec("defaults: [base/a.yaml, base/b.yaml]\npolicy:\n  megatron_cfg:\n    enabled: false\n");
        f = CheckpointForecast::forSpec(s);
        QCOMPARE(f.backend, CheckpointForecast::Backend::DTensorV2);  // the child over both
        QVERIFY(f.chatReady());
        // A quoted "false" is a string, not the boolean: YAML's rule, and NeMo-RL's.
        s = spec("defaults: base/a.yaml\npolicy:\n  dtensor_cfg:\n    _v2: 'false'\n");
        QCOMPARE(CheckpointForecast::forSpec(s).backend, CheckpointForecast::Backend::DTensorV1);
    }

    // A distillation job with a generation pool needs policy.generation.backend vllm, read from
    // the config through its defaults chain as NeMo-RL reads it, not only from an override: the
    // validation (JobSpec::problems, and so the wizard, RayJobBuilder and the Submitter) and
    // JobSpec::load refuse it with NeMo-RL's reason.
    void distillationGenerationBackend_data()
    {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<QStringList>("overrides");
        QTest::addColumn<QString>("backend");    // RecipeConfig's policy.generation.backend
        QTest::addColumn<QString>("refusal");    // part of the problem; empty: none
        const QByteArray megatron = "defaults: base.yaml\npolicy:\n  generation:\n    backend: megatron\n";
        QTest::newRow("config sets megatron, no override")
            << megatron << QStringList() << QStringLiteral("megatron")
            << QStringLiteral("only with the vLLM backend (it asserts \"Non-colocated inference is not supported for Megatron generation backends. "
                              "Please use vLLM backend for generation.\"), and the config configs/run.yaml sets policy.generation.backend: megatron.");
        QTest::newRow("its parent sets megatron") << QByteArray("defaults: megatron-base.yaml\n") << QStringList() << QStringLiteral("megatron")
                                                  << QStringLiteral("the config configs/run.yaml sets policy.generation.backend: megatron");
        QTest::newRow("config sets sglang") << QByteArray("defaults: base.yaml\npolicy:\n  generation:\n    backend: sglang\n") << QStringList()
                                            << QStringLiteral("sglang") << QStringLiteral("generation engine for vllm and megatron only");
        QTest::newRow("an override puts vllm back") << megatron << QStringList{QStringLiteral("policy.generation.backend=vllm")}
                                                    << QStringLiteral("vllm") << QString();
        QTest::newRow("an override sets megatron") << QByteArray("defaults: base.yaml\n") << QStringList{QStringLiteral("++policy.generation.backend=megatron")}
                                                   << QStringLiteral("megatron") << QStringLiteral("the overrides set policy.generation.backend=megatron");
        QTest::newRow("vllm from the code folder") << QByteArray("defaults: base.yaml\n") << QStringList() << QStringLiteral("vllm") << QString();
        QTest::newRow("the image's distillation_math.yaml") << QByteArray("defaults: /opt/nemo-rl/examples/configs/distillation_math.yaml\n")
                                                            << QStringList() << QStringLiteral("vllm") << QString();
    }
    void distillationGenerationBackend()
    {
        QFETCH(QByteArray, yaml);
        QFETCH(QStringList, overrides);
        QFETCH(QString, backend);
        QFETCH(QString, refusal);
        const QString code = m_dir.filePath(QStringLiteral("code"));
        QVERIFY(QDir().mkpath(code + QStringLiteral("/configs")));
        QVERIFY(Testing::writeFile(code + QStringLiteral("/configs/base.yaml"), "policy:\n  generation:\n    backend: vllm\n"));
        QVERIFY(Testing::writeFile(code + QStringLiteral("/configs/megatron-base.yaml"), "defaults: base.yaml\npolicy:\n  generation:\n    backend: megatron\n"));
        JobSpec s = spec(yaml, overrides);
        s.name = QStringLiteral("distill");
        s.recipe.algorithm = QStringLiteral("distillation");
        s.pools = {Pool{QStringLiteral("train"), QStringLiteral("h100"), 1, 8}, Pool{QStringLiteral("gen"), QStringLiteral("h100"), 1, 8}};
        const RecipeConfig config = RecipeConfig::forSpec(s);
        QVERIFY(config.known);
        QCOMPARE(config.value(QStringLiteral("policy.generation.backend")).toString(), backend);
        const QString problems = s.problems().join(u'\n');
        if (refusal.isEmpty()) {
            QVERIFY2(problems.isEmpty(), qPrintable(problems));
        } else {
            QVERIFY2(problems.startsWith(QStringLiteral("pools[1]: distillation takes one pool;")) && problems.contains(refusal), qPrintable(problems));
        }
        // One pool generates colocated, where NeMo-RL has no such rule.
        JobSpec single = s;
        single.pools.removeLast();
        QVERIFY(single.problems().isEmpty());
        // The JobSpec file, loaded from elsewhere: its own folder's config decides.
        QJsonObject recipe{{QStringLiteral("algorithm"), s.recipe.algorithm}, {QStringLiteral("config"), s.recipe.config},
                           {QStringLiteral("overrides"), QJsonArray::fromStringList(overrides)}};
        const QJsonObject json{{QStringLiteral("version"), 1}, {QStringLiteral("name"), s.name}, {QStringLiteral("code"), QStringLiteral(".")},
                               {QStringLiteral("recipe"), recipe}, {QStringLiteral("pools"), s.toJson().value(QStringLiteral("pools"))}};
        QVERIFY(Testing::writeFile(code + QStringLiteral("/jobspec.json"), QJsonDocument(json).toJson()));
        const auto loaded = JobSpec::load(code + QStringLiteral("/jobspec.json"));
        if (refusal.isEmpty()) {
            QVERIFY2(loaded, loaded ? "" : qPrintable(loaded.error().message));
        } else {
            QVERIFY(!loaded);
            QVERIFY2(loaded.error().message.contains(refusal), qPrintable(loaded.error().message));
        }
    }

    // What cannot be read claims nothing: another config of the image, a missing or broken file,
    // a cycle.
    void unknownClaimsNothing_data()
    {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<QString>("unreadable");
        QTest::newRow("a recipe of the image") << QByteArray("defaults: /opt/nemo-rl/examples/configs/recipes/llm/grpo-deepscaler-1.5b-8K.yaml\n")
                                               << QStringLiteral("recipes/llm/grpo-deepscaler-1.5b-8K.yaml");
        QTest::newRow("missing parent") << QByteArray("defaults: nothere.yaml\n") << QStringLiteral("nothere.yaml");
        QTest::newRow("outside the code") << QByteArray("defaults: ../../elsewhere.yaml\n") << QStringLiteral("elsewhere.yaml");
        QTest::newRow("broken yaml") << QByteArray("defaults: [\n") << QStringLiteral("run.yaml");
        QTest::newRow("itself") << QByteArray("defaults: run.yaml\n") << QStringLiteral("run.yaml");
    }
    void unknownClaimsNothing()
    {
        QFETCH(QByteArray, yaml);
        QFETCH(QString, unreadable);
        const CheckpointForecast f = CheckpointForecast::forSpec(spec(yaml));
        QVERIFY(!f.known);
        QVERIFY2(f.unreadable.endsWith(unreadable), qPrintable(f.unreadable));
        QVERIFY(!f.chatReady());
        QCOMPARE(f.warning(), QString());
        QCOMPARE(f.converter(), QString());
    }
};

QTEST_GUILESS_MAIN(TestCheckpointForecast)
#include "tst_checkpointforecast.moc"
