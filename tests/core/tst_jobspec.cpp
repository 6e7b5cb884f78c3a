// The JobSpec format: the examples load, every rule names its field and says what to fix,
// relative paths resolve against the JobSpec's folder, and the canonical form is stable.

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

namespace {

const char Minimal[] = R"({"version":1,"name":"demo","recipe":{"algorithm":"grpo","config":"c.yaml"},"pools":[{"name":"train","series":"h200","nodes":1,"gpusPerNode":8}]})";

QString problemsOf(const QByteArray &json)
{
    const auto spec = JobSpec::fromJson(json);
    return spec ? QString() : spec.error().message;
}

} // namespace

class TestJobSpec : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void examplesLoad()
    {
        for (const char *example : {"grpo-math", "grpo-two-pools"}) {
            const QString path = QStringLiteral(SF_SOURCE_DIR "/examples/%1/jobspec.json").arg(QLatin1String(example));
            const auto spec = JobSpec::load(path);
            QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
            QCOMPARE(spec->codePath(), QDir::cleanPath(QStringLiteral(SF_SOURCE_DIR "/examples/%1").arg(QLatin1String(example))));
            QCOMPARE(spec->scriptPath(), QStringLiteral("examples/run_grpo.py"));
        }
        const auto two = JobSpec::load(QStringLiteral(SF_SOURCE_DIR "/examples/grpo-two-pools/jobspec.json"));
        QCOMPARE(two->pools.size(), 2);
        QCOMPARE(two->totalNodes(), 3);
        QCOMPARE(two->totalGpus(), 24);
        QVERIFY(two->corpus);
        QCOMPARE(two->env.value(QStringLiteral("HF_HUB_OFFLINE")), QStringLiteral("1"));
        QVERIFY(two->warnings().isEmpty());   // one series: the shape is exact
    }

    void minimalDefaults()
    {
        const auto spec = JobSpec::fromJson(Minimal);
        QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
        QCOMPARE(spec->code, QStringLiteral("."));
        QVERIFY(spec->storage);
        QVERIFY(!spec->corpus);
        QVERIFY(spec->image.isEmpty());
        // Round trip through the canonical form, byte for byte.
        const auto again = JobSpec::fromJson(spec->canonicalJson());
        QVERIFY(again);
        QCOMPARE(again->canonicalJson(), spec->canonicalJson());
    }

    void everyProblemNamesItsField_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("expected");
        QTest::newRow("not json") << QByteArray("{") << QStringLiteral("not valid JSON");
        QTest::newRow("array") << QByteArray("[]") << QStringLiteral("must be a JSON object");
        QTest::newRow("no version") << QByteArray(R"({"name":"a","recipe":{"algorithm":"grpo","config":"c"},"pools":[{"name":"p","series":"s"}]})")
                                    << QStringLiteral("version: required");
        QTest::newRow("future version") << QByteArray(R"({"version":2,"name":"a","recipe":{"algorithm":"grpo","config":"c"},"pools":[{"name":"p","series":"s"}]})")
                                        << QStringLiteral("version: 2 is not supported");
        QTest::newRow("misspelt key") << QByteArray(R"({"version":1,"name":"a","pool":[],"recipe":{"algorithm":"grpo","config":"c"},"pools":[{"name":"p","series":"s"}]})")
                                      << QStringLiteral("pool: unknown field");
        QTest::newRow("name uppercase") << QByteArray(R"({"version":1,"name":"Demo","recipe":{"algorithm":"grpo","config":"c"},"pools":[{"name":"p","series":"s"}]})")
                                        << QStringLiteral("name: \"Demo\" must be 1-40 characters");
        QTest::newRow("name starts with digit") << QByteArray(R"({"version":1,"name":"1job","recipe":{"algorithm":"grpo","config":"c"},"pools":[{"name":"p","series":"s"}]})")
                                                << QStringLiteral("start with a letter");
        QTest::newRow("name too long") << QByteArray(R"({"version":1,"name":"a23456789012345678901234567890123456789012","recipe":{"algorithm":"grpo","config":"c"},"pools":[{"name":"p","series":"s"}]})")
                                       << QStringLiteral("1-40 characters");
        QTest::newRow("unknown algorithm") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo_math","config":"c"},"pools":[{"name":"p","series":"s"}]})")
                                           << QStringLiteral("recipe.algorithm: \"grpo_math\" is not one of");
        QTest::newRow("both algorithm and script") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","script":"x.py","config":"c"},"pools":[{"name":"p","series":"s"}]})")
                                                   << QStringLiteral("either algorithm");
        QTest::newRow("config outside") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"../c.yaml"},"pools":[{"name":"p","series":"s"}]})")
                                        << QStringLiteral("recipe.config: \"../c.yaml\" must be a path inside the code folder");
        QTest::newRow("bad override") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c","overrides":["--steps 5"]},"pools":[{"name":"p","series":"s"}]})")
                                      << QStringLiteral("recipe.overrides[0]: Hydra cannot parse \"--steps 5\": token recognition error at: '-'");
        // Hydra's lexer takes no ';' in an unquoted value: the job would fail once its GPUs were up.
        QTest::newRow("override Hydra refuses") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c","overrides":["a=1; rm -rf /","grpo.max_num_steps=10"]},"pools":[{"name":"p","series":"s"}]})")
                                                << QStringLiteral("recipe.overrides[0]: Hydra cannot parse \"a=1; rm -rf /\": token recognition error at: ';' (character 4; quote the value: a='1; rm -rf /'");
        QTest::newRow("override sweep") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c","overrides":["policy.lr=1e-6,1e-5"]},"pools":[{"name":"p","series":"s"}]})")
                                        << QStringLiteral("recipe.overrides[0]: \"policy.lr=1e-6,1e-5\" is a sweep over 2 values");
        QTest::newRow("override two lines") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c","overrides":["a=1\nb=2"]},"pools":[{"name":"p","series":"s"}]})")
                                            << QStringLiteral("recipe.overrides[0]: must be one line.");
        QTest::newRow("override type") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c","overrides":[5]},"pools":[{"name":"p","series":"s"}]})")
                                       << QStringLiteral("recipe.overrides[0]: must be a string, not a number");
        QTest::newRow("env number") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c"},"env":{"N":1},"pools":[{"name":"p","series":"s"}]})")
                                    << QStringLiteral("env.N: must be a string (quote numbers)");
        QTest::newRow("env reserved") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c"},"env":{"RAY_ADDRESS":"x"},"pools":[{"name":"p","series":"s"}]})")
                                      << QStringLiteral("env.RAY_ADDRESS: names starting with RAY_ or FORGE_");
        QTest::newRow("secretEnv value inline") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c"},"secretEnv":{"HF_TOKEN":"hf_abc"},"pools":[{"name":"p","series":"s"}]})")
                                                << QStringLiteral("secretEnv.HF_TOKEN: must be {\"secret\": NAME, \"key\": KEY}");
        QTest::newRow("secretEnv no key") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c"},"secretEnv":{"HF_TOKEN":{"secret":"hf"}},"pools":[{"name":"p","series":"s"}]})")
                                          << QStringLiteral("secretEnv.HF_TOKEN.key");
        QTest::newRow("secretEnv bad secret name") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c"},"secretEnv":{"HF_TOKEN":{"secret":"HF Tokens","key":"t"}},"pools":[{"name":"p","series":"s"}]})")
                                                   << QStringLiteral("secretEnv.HF_TOKEN.secret: \"HF Tokens\" is not a Secret name");
        QTest::newRow("secretEnv bad key") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c"},"secretEnv":{"HF_TOKEN":{"secret":"hf","key":"a/b"}},"pools":[{"name":"p","series":"s"}]})")
                                           << QStringLiteral("secretEnv.HF_TOKEN.key: \"a/b\" is not a Secret key");
        QTest::newRow("secretEnv twice") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c"},"env":{"HF_TOKEN":"x"},"secretEnv":{"HF_TOKEN":{"secret":"hf","key":"t"}},"pools":[{"name":"p","series":"s"}]})")
                                         << QStringLiteral("secretEnv.HF_TOKEN: also set in env");
        QTest::newRow("secretEnv reserved") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c"},"secretEnv":{"FORGE_X":{"secret":"hf","key":"t"}},"pools":[{"name":"p","series":"s"}]})")
                                            << QStringLiteral("secretEnv.FORGE_X: names starting with RAY_ or FORGE_");
        QTest::newRow("no pools") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c"},"pools":[]})")
                                  << QStringLiteral("pools: at least one pool");
        QTest::newRow("three pools") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c"},"pools":[{"name":"a","series":"s"},{"name":"b","series":"s"},{"name":"c","series":"s"}]})")
                                     << QStringLiteral("at most two pools");
        QTest::newRow("zero gpus") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c"},"pools":[{"name":"p","series":"s","gpusPerNode":0}]})")
                                   << QStringLiteral("pools[0].gpusPerNode: must be between 1 and 64, not 0");
        QTest::newRow("fractional nodes") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c"},"pools":[{"name":"p","series":"s","nodes":1.5}]})")
                                          << QStringLiteral("pools[0].nodes: must be a whole number, not 1.5");
        QTest::newRow("duplicate pool") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c"},"pools":[{"name":"p","series":"s"},{"name":"p","series":"s"}]})")
                                        << QStringLiteral("pools[1].name: \"p\" is used twice");
        QTest::newRow("series label value") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c"},"pools":[{"name":"p","series":"h 200"}]})")
                                            << QStringLiteral("pools[0].series: \"h 200\" is not a node label value");
        QTest::newRow("unequal gpus") << QByteArray(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c"},"pools":[{"name":"t","series":"s","gpusPerNode":8},{"name":"g","series":"s","gpusPerNode":4}]})")
                                      << QStringLiteral("pools[1].gpusPerNode: must equal pools[0].gpusPerNode (8)");
    }
    void everyProblemNamesItsField()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, expected);
        const QString problems = problemsOf(json);
        QVERIFY2(problems.contains(expected), qPrintable(problems));
    }

    // A generation pool is refused for the algorithms NeMo-RL v0.7 cannot run that way, with
    // the reason, and accepted for grpo, vlm_grpo and distillation (with vLLM).
    void secondPoolPerAlgorithm_data()
    {
        QTest::addColumn<QString>("algorithm");
        QTest::addColumn<QString>("override");
        QTest::addColumn<QString>("expected");   // empty: no problem with the pools
        QTest::newRow("grpo") << QStringLiteral("grpo") << QString() << QString();
        QTest::newRow("vlm_grpo") << QStringLiteral("vlm_grpo") << QString() << QString();
        QTest::newRow("distillation") << QStringLiteral("distillation") << QString() << QString();
        QTest::newRow("distillation vllm") << QStringLiteral("distillation") << QStringLiteral("policy.generation.backend=vllm") << QString();
        QTest::newRow("distillation megatron") << QStringLiteral("distillation") << QStringLiteral("++policy.generation.backend=megatron")
                                               << QStringLiteral("only with the vLLM backend (it asserts \"Non-colocated inference is not supported "
                                                                 "for Megatron generation backends. Please use vLLM backend for generation.\"), and the "
                                                                 "overrides set policy.generation.backend=megatron.");
        for (const char *one : {"sft", "dpo", "rm", "vlm_sft"}) {
            QTest::newRow(one) << QString::fromLatin1(one) << QString()
                               << QStringLiteral("pools[1]: %1 takes one pool; its config has no policy.generation").arg(QString::fromLatin1(one));
        }
        QTest::newRow("ppo") << QStringLiteral("ppo") << QString() << QStringLiteral("pools[1]: ppo takes one pool; NeMo-RL's PPO requires colocated generation");
    }
    void secondPoolPerAlgorithm()
    {
        QFETCH(QString, algorithm);
        QFETCH(QString, override);
        QFETCH(QString, expected);
        QJsonObject recipe{{QStringLiteral("algorithm"), algorithm}, {QStringLiteral("config"), QStringLiteral("c.yaml")}};
        if (!override.isEmpty()) recipe.insert(QStringLiteral("overrides"), QJsonArray{override});
        const QJsonObject pool{{QStringLiteral("name"), QStringLiteral("train")}, {QStringLiteral("series"), QStringLiteral("h200")}};
        QJsonObject generation = pool;
        generation.insert(QStringLiteral("name"), QStringLiteral("gen"));
        const QJsonObject spec{{QStringLiteral("version"), 1}, {QStringLiteral("name"), QStringLiteral("a")}, {QStringLiteral("recipe"), recipe},
                               {QStringLiteral("pools"), QJsonArray{pool, generation}}};
        const QString problems = problemsOf(QJsonDocument(spec).toJson());
        if (expected.isEmpty()) {
            QVERIFY2(!problems.contains(QStringLiteral("pools")), qPrintable(problems));
        } else {
            QVERIFY2(problems.contains(expected), qPrintable(problems));
        }
        // One pool is always fine.
        QJsonObject single = spec;
        single.insert(QStringLiteral("pools"), QJsonArray{pool});
        QVERIFY(!problemsOf(QJsonDocument(single).toJson()).contains(QStringLiteral("pools")));
    }

    // Two pools of different series are valid but not exact: a warning says so; one series is exact.
    void poolsOfTwoSeriesWarn()
    {
        Job::JobSpec spec;
        spec.recipe.algorithm = QStringLiteral("grpo");
        spec.pools = {Job::Pool{QStringLiteral("train"), QStringLiteral("h200"), 1, 8}, Job::Pool{QStringLiteral("gen"), QStringLiteral("h100"), 1, 8}};
        QCOMPARE(spec.warnings().size(), 1);
        QVERIFY(spec.warnings().first().contains(QStringLiteral("training on h200 and generation on h100 is a request Ray may not honour")));
        spec.pools[1].series = QStringLiteral("h200");
        QVERIFY(spec.warnings().isEmpty());
    }

    // NeMo-RL's kind of overrides pass Hydra's grammar, and only the refused one is reported.
    void hydraOverrides()
    {
        const auto spec = JobSpec::fromJson(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c","overrides":[)"
                                            R"("policy.model_name=Qwen/Qwen2.5-1.5B","++policy.generation.colocated.enabled=false","~logger.wandb",)"
                                            R"("grpo.max_num_steps=10","policy.optimizer.kwargs.lr=5.0e-6","logger.wandb.name='run 1'",)"
                                            R"("data.prompt_file=${oc.env:HOME}/p.txt"]},"pools":[{"name":"p","series":"s"}]})");
        QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
        QCOMPARE(spec->recipe.overrides.size(), 7);
        const QString problems = problemsOf(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c","overrides":["a=1; rm -rf /","grpo.max_num_steps=10"]},"pools":[{"name":"p","series":"s"}]})");
        QVERIFY2(problems.startsWith(QStringLiteral("The JobSpec has 1 problem(s):")), qPrintable(problems));
        QVERIFY2(problems.contains(QStringLiteral("recipe.overrides[0]: Hydra cannot parse \"a=1; rm -rf /\"")), qPrintable(problems));
        QVERIFY(!problems.contains(QStringLiteral("recipe.overrides[1]")));
    }

    // A secretEnv survives the canonical form with its references only.
    void secretEnvRoundTrip()
    {
        const auto spec = JobSpec::fromJson(R"({"version":1,"name":"a","recipe":{"algorithm":"grpo","config":"c"},"secretEnv":{"HF_TOKEN":{"secret":"hf","key":"token"}},"pools":[{"name":"p","series":"s"}]})");
        QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
        QCOMPARE(spec->secretEnv.value(QStringLiteral("HF_TOKEN")), (SecretRef{QStringLiteral("hf"), QStringLiteral("token")}));
        const auto again = JobSpec::fromJson(spec->canonicalJson());
        QVERIFY(again);
        QCOMPARE(again->secretEnv, spec->secretEnv);
        QVERIFY(spec->canonicalJson().contains(R"("secretEnv":{"HF_TOKEN":{"key":"token","secret":"hf"}})"));
    }

    void allProblemsAtOnce()
    {
        const QString problems = problemsOf(R"({"version":1,"name":"Bad","recipe":{"algorithm":"x","config":"c"},"pools":[{"name":"p","series":"s","nodes":0}]})");
        QVERIFY(problems.startsWith(QStringLiteral("The JobSpec has 3 problem(s):")));
        QVERIFY(problems.contains(QStringLiteral("name:")) && problems.contains(QStringLiteral("recipe.algorithm:"))
                && problems.contains(QStringLiteral("pools[0].nodes:")));
    }

    void settingsRules()
    {
        auto spec = JobSpec::fromJson(Minimal).value();
        QVERIFY(spec.problemsWith(false, false).isEmpty());   // one node: local storage is fine
        spec.pools[0].nodes = 2;
        const QStringList shared = spec.problemsWith(false, false);
        QCOMPARE(shared.size(), 1);
        QVERIFY2(shared.first().contains(QStringLiteral("FORGE_K8S_STORAGE_SHARED=false")), qPrintable(shared.first()));
        QVERIFY(spec.problemsWith(true, false).isEmpty());
        spec.corpus = true;
        QVERIFY(spec.problemsWith(true, false).first().contains(QStringLiteral("FORGE_K8S_CORPUS_PVC")));
        QVERIFY(spec.problemsWith(true, true).isEmpty());
    }

    void pathsAreRelativeToTheJobSpecFile()
    {
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("specs")));
        QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("code/configs")));
        QVERIFY(Testing::writeFile(dir.filePath(QStringLiteral("code/configs/c.yaml")), "a: 1\n"));
        const QByteArray json = R"({"version":1,"name":"demo","code":"../code","recipe":{"algorithm":"sft","config":"configs/c.yaml"},"pools":[{"name":"p","series":"s"}]})";
        QVERIFY(Testing::writeFile(dir.filePath(QStringLiteral("specs/job.json")), json));
        // From another working directory, the paths still resolve against the file.
        const QString before = QDir::currentPath();
        QDir::setCurrent(QDir::tempPath());
        const auto spec = JobSpec::load(dir.filePath(QStringLiteral("specs/job.json")));
        QDir::setCurrent(before);
        QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
        QCOMPARE(spec->codePath(), QDir::cleanPath(dir.filePath(QStringLiteral("code"))));

        QVERIFY(Testing::writeFile(dir.filePath(QStringLiteral("specs/missing.json")),
                                   R"({"version":1,"name":"demo","code":"../nowhere","recipe":{"algorithm":"sft","config":"c.yaml"},"pools":[{"name":"p","series":"s"}]})"));
        const auto missing = JobSpec::load(dir.filePath(QStringLiteral("specs/missing.json")));
        QVERIFY(!missing);
        QVERIFY2(missing.error().message.contains(QStringLiteral("code: the folder")), qPrintable(missing.error().message));

        QVERIFY(Testing::writeFile(dir.filePath(QStringLiteral("specs/noconfig.json")),
                                   R"({"version":1,"name":"demo","code":"../code","recipe":{"algorithm":"sft","config":"other.yaml"},"pools":[{"name":"p","series":"s"}]})"));
        const auto noConfig = JobSpec::load(dir.filePath(QStringLiteral("specs/noconfig.json")));
        QVERIFY2(!noConfig && noConfig.error().message.contains(QStringLiteral("recipe.config: other.yaml is not a file")),
                 noConfig ? "" : qPrintable(noConfig.error().message));
        QVERIFY(!JobSpec::load(dir.filePath(QStringLiteral("specs/absent.json"))));
    }
};

QTEST_GUILESS_MAIN(TestJobSpec)
#include "tst_jobspec.moc"
