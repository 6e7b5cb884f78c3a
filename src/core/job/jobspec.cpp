#include "core/job/jobspec.h"

#include "core/job/checkpointforecast.h"
#include "core/job/hydraoverride.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

namespace Starforge::Job {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(JobSpec)
};

bool isDns1123Label(const QString &s, int maxLength)
{
    static const QRegularExpression re(QStringLiteral("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"));
    return !s.isEmpty() && s.size() <= maxLength && re.match(s).hasMatch();
}

bool isDns1035Label(const QString &s, int maxLength)
{
    return isDns1123Label(s, maxLength) && s.at(0).isLetter();
}

// Known keys per object: a misspelt key is an error, not a silently ignored setting.
void unknownKeys(const QJsonObject &object, const QStringList &known, const QString &where, QStringList &problems)
{
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!known.contains(it.key())) {
            problems << Text::tr("%1%2: unknown field; known fields are %3.")
                            .arg(where, it.key(), known.join(QStringLiteral(", ")));
        }
    }
}

QString typeName(const QJsonValue &v)
{
    switch (v.type()) {
    case QJsonValue::Null: return QStringLiteral("null");
    case QJsonValue::Bool: return QStringLiteral("a boolean");
    case QJsonValue::Double: return QStringLiteral("a number");
    case QJsonValue::String: return QStringLiteral("a string");
    case QJsonValue::Array: return QStringLiteral("a list");
    case QJsonValue::Object: return Text::tr("an object");
    case QJsonValue::Undefined: break;
    }
    return QStringLiteral("missing");
}

// Typed readers that record a problem instead of guessing.
struct Reader
{
    QStringList &problems;

    QString string(const QJsonObject &o, const QString &key, const QString &where, bool required = false) const
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined() || v.isNull()) {
            if (required) problems << Text::tr("%1%2: required.").arg(where, key);
            return {};
        }
        if (!v.isString()) {
            problems << Text::tr("%1%2: must be a string, not %3.").arg(where, key, typeName(v));
            return {};
        }
        return v.toString();
    }
    int integer(const QJsonObject &o, const QString &key, const QString &where, int fallback) const
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined()) {
            return fallback;
        }
        const double d = v.toDouble(-1e300);
        if (!v.isDouble() || d != static_cast<double>(static_cast<qint64>(d)) || d < -1e9 || d > 1e9) {
            problems << Text::tr("%1%2: must be a whole number, not %3.").arg(where, key, v.isDouble() ? QString::number(d) : typeName(v));
            return fallback;
        }
        return static_cast<int>(d);
    }
    bool boolean(const QJsonObject &o, const QString &key, const QString &where, bool fallback) const
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined()) {
            return fallback;
        }
        if (!v.isBool()) {
            problems << Text::tr("%1%2: must be true or false, not %3.").arg(where, key, typeName(v));
            return fallback;
        }
        return v.toBool();
    }
    QStringList strings(const QJsonObject &o, const QString &key, const QString &where) const
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined()) {
            return {};
        }
        if (!v.isArray()) {
            problems << Text::tr("%1%2: must be a list of strings, not %3.").arg(where, key, typeName(v));
            return {};
        }
        QStringList out;
        const QJsonArray a = v.toArray();
        for (qsizetype i = 0; i < a.size(); ++i) {
            if (!a.at(i).isString()) {
                problems << Text::tr("%1%2[%3]: must be a string, not %4.").arg(where, key).arg(i).arg(typeName(a.at(i)));
            } else {
                out << a.at(i).toString();
            }
        }
        return out;
    }
};

// Why NeMo-RL v0.7 cannot run the recipe with a generation pool, or empty when it can.
QString secondPoolRefusal(const JobSpec &spec)
{
    const Recipe &recipe = spec.recipe;
    const QString &a = recipe.algorithm;
    if (a == QLatin1String("sft") || a == QLatin1String("dpo") || a == QLatin1String("rm") || a == QLatin1String("vlm_sft")) {
        return Text::tr("its config has no policy.generation, so the generation pool's overrides would make a partial one that "
                           "NeMo-RL's config check refuses (backend and max_new_tokens missing), after the job has waited for its GPUs.");
    }
    if (a == QLatin1String("ppo")) {
        return Text::tr("NeMo-RL's PPO requires colocated generation (it asserts policy.generation.colocated.enabled).");
    }
    if (a == QLatin1String("distillation")) {
        // The last override of the backend wins, as in Hydra; without one, the config's value
        // through its defaults chain decides. A config that cannot be read here (a parent in the
        // image that is not a known example) leaves only the overrides to go by.
        QString overridden;
        static const QRegularExpression backendOverride(QStringLiteral("^\\+{0,2}policy\\.generation\\.backend=(.*)$"));
        for (const QString &o : recipe.overrides) {
            if (const auto m = backendOverride.match(o); m.hasMatch()) overridden = m.captured(1).remove(u'\'').remove(u'"').trimmed();
        }
        QString backend = overridden;
        if (const RecipeConfig config = RecipeConfig::forSpec(spec); config.known) {
            backend = config.value(QStringLiteral("policy.generation.backend")).toString();
        }
        if (!backend.isEmpty() && backend != QLatin1String("vllm")) {
            // distillation.py setup() fails on it once the job has its GPUs; say it before.
            const QString source = overridden.isEmpty() ? Text::tr("the config %1 sets policy.generation.backend: %2").arg(recipe.config, backend)
                                                        : Text::tr("the overrides set policy.generation.backend=%1").arg(backend);
            const QString reason = backend == QLatin1String("megatron")
                ? Text::tr("it asserts \"Non-colocated inference is not supported for Megatron generation backends. Please use vLLM backend "
                     "for generation.\"")
                : Text::tr("its setup makes a generation engine for vllm and megatron only");
            return Text::tr("NeMo-RL's distillation generates on a separate pool only with the vLLM backend (%1), and %2.").arg(reason, source);
        }
    }
    return {};
}

} // namespace

QStringList JobSpec::algorithms()
{
    return {QStringLiteral("grpo"), QStringLiteral("sft"), QStringLiteral("dpo"), QStringLiteral("rm"),
            QStringLiteral("distillation"), QStringLiteral("ppo"), QStringLiteral("vlm_grpo"), QStringLiteral("vlm_sft")};
}

QStringList JobSpec::generationPoolAlgorithms()
{
    return {QStringLiteral("grpo"), QStringLiteral("vlm_grpo"), QStringLiteral("distillation")};
}

int JobSpec::totalNodes() const
{
    int n = 0;
    for (const Pool &p : pools) n += p.nodes;
    return n;
}

int JobSpec::totalGpus() const
{
    int n = 0;
    for (const Pool &p : pools) n += p.nodes * p.gpusPerNode;
    return n;
}

QString JobSpec::scriptPath() const
{
    return recipe.script.isEmpty() ? QStringLiteral("examples/run_%1.py").arg(recipe.algorithm) : recipe.script;
}

QString JobSpec::codePath() const
{
    const QDir base(sourceDir.isEmpty() ? QDir::currentPath() : sourceDir);
    return QDir::cleanPath(base.absoluteFilePath(code));
}

Result<JobSpec> JobSpec::fromJson(const QByteArray &json)
{
    QJsonParseError parseError{};
    const QJsonDocument document = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        return Error::invalid(Text::tr("The JobSpec is not valid JSON: %1 at byte %2.").arg(parseError.errorString()).arg(parseError.offset));
    }
    if (!document.isObject()) {
        return Error::invalid(Text::tr("The JobSpec must be a JSON object."));
    }
    const QJsonObject root = document.object();
    QStringList problems;
    Reader read{problems};
    JobSpec spec;
    unknownKeys(root, {QStringLiteral("version"), QStringLiteral("name"), QStringLiteral("code"), QStringLiteral("excludes"),
                       QStringLiteral("recipe"), QStringLiteral("image"), QStringLiteral("env"), QStringLiteral("secretEnv"), QStringLiteral("pools"),
                       QStringLiteral("storage"), QStringLiteral("corpus")},
                QString(), problems);
    spec.version = read.integer(root, QStringLiteral("version"), QString(), -1);
    if (!root.contains(QLatin1String("version"))) {
        problems << Text::tr("version: required; this app writes and reads version %1.").arg(CurrentVersion);
    } else if (spec.version != CurrentVersion && root.value(QLatin1String("version")).isDouble()) {
        problems << Text::tr("version: %1 is not supported; this app reads version %2.").arg(spec.version).arg(CurrentVersion);
    }
    spec.name = read.string(root, QStringLiteral("name"), QString(), true);
    if (root.contains(QLatin1String("code"))) spec.code = read.string(root, QStringLiteral("code"), QString());
    spec.excludes = read.strings(root, QStringLiteral("excludes"), QString());
    spec.image = read.string(root, QStringLiteral("image"), QString());
    spec.storage = read.boolean(root, QStringLiteral("storage"), QString(), true);
    spec.corpus = read.boolean(root, QStringLiteral("corpus"), QString(), false);

    const QJsonValue recipeValue = root.value(QLatin1String("recipe"));
    if (!recipeValue.isObject()) {
        problems << Text::tr("recipe: required, an object with algorithm (or script), config and overrides.");
    } else {
        const QJsonObject recipe = recipeValue.toObject();
        const QString where = QStringLiteral("recipe.");
        unknownKeys(recipe, {QStringLiteral("algorithm"), QStringLiteral("script"), QStringLiteral("config"), QStringLiteral("overrides")},
                    where, problems);
        spec.recipe.algorithm = read.string(recipe, QStringLiteral("algorithm"), where);
        spec.recipe.script = read.string(recipe, QStringLiteral("script"), where);
        spec.recipe.config = read.string(recipe, QStringLiteral("config"), where);
        spec.recipe.overrides = read.strings(recipe, QStringLiteral("overrides"), where);
    }

    const QJsonValue envValue = root.value(QLatin1String("env"));
    if (envValue.isObject()) {
        const QJsonObject env = envValue.toObject();
        for (auto it = env.begin(); it != env.end(); ++it) {
            if (!it.value().isString()) {
                problems << Text::tr("env.%1: must be a string (quote numbers), not %2.").arg(it.key(), typeName(it.value()));
            } else {
                spec.env.insert(it.key(), it.value().toString());
            }
        }
    } else if (!envValue.isUndefined()) {
        problems << Text::tr("env: must be an object of names to strings, not %1.").arg(typeName(envValue));
    }

    const QJsonValue secretEnvValue = root.value(QLatin1String("secretEnv"));
    if (secretEnvValue.isObject()) {
        const QJsonObject secretEnv = secretEnvValue.toObject();
        for (auto it = secretEnv.begin(); it != secretEnv.end(); ++it) {
            const QString where = QStringLiteral("secretEnv.%1.").arg(it.key());
            if (!it.value().isObject()) {
                problems << Text::tr("secretEnv.%1: must be {\"secret\": NAME, \"key\": KEY} naming a Kubernetes Secret, not %2; the value "
                               "itself never goes in the JobSpec.")
                                .arg(it.key(), typeName(it.value()));
                continue;
            }
            const QJsonObject ref = it.value().toObject();
            unknownKeys(ref, {QStringLiteral("secret"), QStringLiteral("key")}, where, problems);
            spec.secretEnv.insert(it.key(), SecretRef{read.string(ref, QStringLiteral("secret"), where, true),
                                                      read.string(ref, QStringLiteral("key"), where, true)});
        }
    } else if (!secretEnvValue.isUndefined()) {
        problems << Text::tr("secretEnv: must be an object of names to {\"secret\": NAME, \"key\": KEY}, not %1.").arg(typeName(secretEnvValue));
    }

    const QJsonValue poolsValue = root.value(QLatin1String("pools"));
    if (!poolsValue.isArray()) {
        problems << Text::tr("pools: required, a list like [{\"name\": \"train\", \"series\": \"h200\", \"nodes\": 1, \"gpusPerNode\": 8}].");
    } else {
        const QJsonArray pools = poolsValue.toArray();
        for (qsizetype i = 0; i < pools.size(); ++i) {
            const QString where = QStringLiteral("pools[%1].").arg(i);
            if (!pools.at(i).isObject()) {
                problems << Text::tr("pools[%1]: must be an object, not %2.").arg(i).arg(typeName(pools.at(i)));
                continue;
            }
            const QJsonObject p = pools.at(i).toObject();
            unknownKeys(p, {QStringLiteral("name"), QStringLiteral("series"), QStringLiteral("nodes"), QStringLiteral("gpusPerNode")}, where, problems);
            Pool pool;
            pool.name = read.string(p, QStringLiteral("name"), where, true);
            pool.series = read.string(p, QStringLiteral("series"), where, true);
            pool.nodes = read.integer(p, QStringLiteral("nodes"), where, 1);
            pool.gpusPerNode = read.integer(p, QStringLiteral("gpusPerNode"), where, 8);
            spec.pools.append(pool);
        }
    }
    if (problems.isEmpty()) {
        problems = spec.problems();
    }
    if (!problems.isEmpty()) {
        return Error::invalid(Text::tr("The JobSpec has %n problem(s):", nullptr, static_cast<int>(problems.size()))
                              + QLatin1Char('\n') + problems.join(QLatin1Char('\n')));
    }
    return spec;
}

QStringList JobSpec::problems() const
{
    QStringList out;
    if (!isDns1035Label(name, MaxNameLength)) {
        out << Text::tr("name: \"%1\" must be 1-%2 characters of lowercase letters, digits and '-', start with a letter and end with "
                  "a letter or digit (it becomes the RayJob's name).").arg(name).arg(MaxNameLength);
    }
    if (code.isEmpty()) {
        out << Text::tr("code: must name the code folder (\".\" for the JobSpec's own folder).");
    }
    if (recipe.algorithm.isEmpty() == recipe.script.isEmpty()) {
        out << Text::tr("recipe: give either algorithm (%1) or script, not both or neither.").arg(algorithms().join(QStringLiteral(", ")));
    } else if (!recipe.algorithm.isEmpty() && !algorithms().contains(recipe.algorithm)) {
        out << Text::tr("recipe.algorithm: \"%1\" is not one of %2; use script for another entry point.")
                   .arg(recipe.algorithm, algorithms().join(QStringLiteral(", ")));
    }
    if (!recipe.script.isEmpty() && (!recipe.script.endsWith(QLatin1String(".py")) || recipe.script.contains(QLatin1String("..")))) {
        out << Text::tr("recipe.script: \"%1\" must be a .py path without \"..\".").arg(recipe.script);
    }
    if (recipe.config.isEmpty()) {
        out << Text::tr("recipe.config: required, the YAML config inside the code folder.");
    } else if (QDir::isAbsolutePath(recipe.config) || recipe.config.contains(QLatin1String(".."))) {
        out << Text::tr("recipe.config: \"%1\" must be a path inside the code folder (relative, without \"..\"), since it ships in the Capsule.")
                   .arg(recipe.config);
    }
    for (qsizetype i = 0; i < recipe.overrides.size(); ++i) {
        const QString &o = recipe.overrides.at(i);
        // NeMo-RL hands each line to Hydra 1.3's override parser once the job's GPUs are up, so a
        // line it would refuse (or a sweep, which one run cannot take) is refused here instead.
        if (o.contains(QLatin1Char('\n'))) {
            out << Text::tr("recipe.overrides[%1]: must be one line.").arg(i);
        } else if (const auto problem = HydraOverride::check(o)) {
            out << Text::tr("recipe.overrides[%1]: %2").arg(QString::number(i), *problem);
        }
    }
    static const QRegularExpression envName(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
    for (auto it = env.cbegin(); it != env.cend(); ++it) {
        if (!envName.match(it.key()).hasMatch()) {
            out << Text::tr("env.%1: not a valid environment variable name (letters, digits, '_', not starting with a digit).").arg(it.key());
        } else if (it.key().startsWith(QLatin1String("RAY_")) || it.key().startsWith(QLatin1String("FORGE_"))) {
            out << Text::tr("env.%1: names starting with RAY_ or FORGE_ are set by Ray and Starforge; choose another name.").arg(it.key());
        }
    }
    static const QRegularExpression dnsSubdomain(QStringLiteral("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"));
    static const QRegularExpression secretKey(QStringLiteral("^[-._a-zA-Z0-9]+$"));
    for (auto it = secretEnv.cbegin(); it != secretEnv.cend(); ++it) {
        if (!envName.match(it.key()).hasMatch()) {
            out << Text::tr("secretEnv.%1: not a valid environment variable name (letters, digits, '_', not starting with a digit).").arg(it.key());
        } else if (it.key().startsWith(QLatin1String("RAY_")) || it.key().startsWith(QLatin1String("FORGE_"))) {
            out << Text::tr("secretEnv.%1: names starting with RAY_ or FORGE_ are set by Ray and Starforge; choose another name.").arg(it.key());
        } else if (env.contains(it.key())) {
            out << Text::tr("secretEnv.%1: also set in env; give it in one of them.").arg(it.key());
        }
        if (!it->secret.isEmpty() && (it->secret.size() > 253 || !dnsSubdomain.match(it->secret).hasMatch())) {
            out << Text::tr("secretEnv.%1.secret: \"%2\" is not a Secret name (lowercase letters, digits, '-' and '.').").arg(it.key(), it->secret);
        }
        if (!it->key.isEmpty() && (it->key.size() > 253 || !secretKey.match(it->key).hasMatch())) {
            out << Text::tr("secretEnv.%1.key: \"%2\" is not a Secret key (letters, digits, '-', '_' and '.').").arg(it.key(), it->key);
        }
    }
    if (pools.isEmpty()) {
        out << Text::tr("pools: at least one pool is needed (the first is where the Ray head runs).");
    }
    if (pools.size() > 2) {
        out << Text::tr("pools: at most two pools, training and generation (NeMo-RL's non-colocated generation); %1 given.").arg(pools.size());
    }
    QStringList names;
    for (qsizetype i = 0; i < pools.size(); ++i) {
        const Pool &p = pools.at(i);
        if (!isDns1123Label(p.name, 15)) {
            out << Text::tr("pools[%1].name: \"%2\" must be 1-15 lowercase letters, digits or '-' (it names the worker group).").arg(i).arg(p.name);
        } else if (names.contains(p.name)) {
            out << Text::tr("pools[%1].name: \"%2\" is used twice.").arg(i).arg(p.name);
        }
        names << p.name;
        static const QRegularExpression labelValue(QStringLiteral("^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$"));
        if (!labelValue.match(p.series).hasMatch()) {
            out << Text::tr("pools[%1].series: \"%2\" is not a node label value (up to 63 letters, digits, '-', '_', '.').").arg(i).arg(p.series);
        }
        if (p.nodes < 1 || p.nodes > 1024) {
            out << Text::tr("pools[%1].nodes: must be between 1 and 1024, not %2.").arg(i).arg(p.nodes);
        }
        if (p.gpusPerNode < 1 || p.gpusPerNode > 64) {
            out << Text::tr("pools[%1].gpusPerNode: must be between 1 and 64, not %2.").arg(i).arg(p.gpusPerNode);
        }
    }
    // A second pool is NeMo-RL's non-colocated generation, which only the algorithms that
    // generate during training have (docs/jobspec.md, "Pools").
    if (pools.size() == 2 && !recipe.algorithm.isEmpty()) {
        const QString why = secondPoolRefusal(*this);
        if (!why.isEmpty()) {
            out << Text::tr("pools[1]: %1 takes one pool; %2 Remove the second pool, or choose grpo, vlm_grpo or distillation.")
                       .arg(recipe.algorithm, why);
        }
    }
    if (pools.size() == 2 && pools.at(0).gpusPerNode != pools.at(1).gpusPerNode) {
        out << Text::tr("pools[1].gpusPerNode: must equal pools[0].gpusPerNode (%1): NeMo-RL requires dedicated generation nodes to have "
                  "as many GPUs as the training nodes.").arg(pools.at(0).gpusPerNode);
    }
    return out;
}

QStringList JobSpec::warnings() const
{
    QStringList out;
    if (pools.size() == 2 && pools.at(0).series != pools.at(1).series) {
        out << Text::tr("pools: training on %1 and generation on %2 is a request Ray may not honour: NeMo-RL's placement groups ask only "
                  "for CPUs and GPUs, so training can land on the %2 nodes and generation on the %1 nodes. Pools of one series "
                  "are exact.").arg(pools.at(0).series, pools.at(1).series);
    }
    return out;
}

QStringList JobSpec::problemsWith(bool storageShared, bool corpusConfigured) const
{
    QStringList out;
    if (totalNodes() > 1 && !storageShared) {
        out << Text::tr("pools: this job runs on %1 nodes, but the storage is not shared between nodes (FORGE_K8S_STORAGE_SHARED=false): "
                  "checkpoints written on one node would be missing on the others. Use one node, or a ReadWriteMany volume and set "
                  "FORGE_K8S_STORAGE_SHARED=true.").arg(totalNodes());
    }
    if (corpus && !corpusConfigured) {
        out << Text::tr("corpus: the job asks for the corpus volume, but the profile has none; set FORGE_K8S_CORPUS_PVC or set corpus to false.");
    }
    return out;
}

Result<JobSpec> JobSpec::load(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        return Error::io(Text::tr("Cannot read the JobSpec %1: %2.").arg(path, file.errorString()));
    }
    const QByteArray bytes = file.read(4 * 1024 * 1024 + 1);
    if (bytes.size() > 4 * 1024 * 1024) {
        return Error::invalid(Text::tr("The JobSpec %1 is larger than 4 MiB; it should describe the job, not carry data.").arg(path));
    }
    auto spec = fromJson(bytes);
    if (!spec) {
        return Error::invalid(Text::tr("%1: %2").arg(path, spec.error().message));
    }
    JobSpec out = std::move(spec).value();
    out.sourceDir = QFileInfo(path).absolutePath();
    out.sourcePath = QFileInfo(path).absoluteFilePath();
    const QFileInfo code(out.codePath());
    if (!code.isDir()) {
        return Error::invalid(Text::tr("%1: code: the folder %2 does not exist (paths are relative to the JobSpec's folder).").arg(path, out.codePath()));
    }
    if (!QFileInfo(QDir(out.codePath()).filePath(out.recipe.config)).isFile()) {
        return Error::invalid(Text::tr("%1: recipe.config: %2 is not a file in the code folder %3.").arg(path, out.recipe.config, out.codePath()));
    }
    // fromJson checked the spec before its folder was known: the checks that read the config
    // (a distillation pool's generation backend) look at the right file now.
    if (const QStringList problems = out.problems(); !problems.isEmpty()) {
        return Error::invalid(Text::tr("%1: %2").arg(path, Text::tr("The JobSpec has %n problem(s):", nullptr,
                                                                                  static_cast<int>(problems.size()))
                                                          + QLatin1Char('\n') + problems.join(QLatin1Char('\n'))));
    }
    return out;
}

QJsonObject JobSpec::toJson() const
{
    QJsonArray poolArray;
    for (const Pool &p : pools) {
        poolArray.append(QJsonObject{{QStringLiteral("name"), p.name}, {QStringLiteral("series"), p.series},
                                     {QStringLiteral("nodes"), p.nodes}, {QStringLiteral("gpusPerNode"), p.gpusPerNode}});
    }
    QJsonObject recipeObject{{QStringLiteral("config"), recipe.config},
                             {QStringLiteral("overrides"), QJsonArray::fromStringList(recipe.overrides)}};
    if (!recipe.algorithm.isEmpty()) recipeObject.insert(QStringLiteral("algorithm"), recipe.algorithm);
    if (!recipe.script.isEmpty()) recipeObject.insert(QStringLiteral("script"), recipe.script);
    QJsonObject envObject;
    for (auto it = env.cbegin(); it != env.cend(); ++it) envObject.insert(it.key(), it.value());
    QJsonObject out{{QStringLiteral("version"), version}, {QStringLiteral("name"), name}, {QStringLiteral("code"), code},
                    {QStringLiteral("recipe"), recipeObject}, {QStringLiteral("env"), envObject}, {QStringLiteral("pools"), poolArray},
                    {QStringLiteral("storage"), storage}, {QStringLiteral("corpus"), corpus}};
    if (!excludes.isEmpty()) out.insert(QStringLiteral("excludes"), QJsonArray::fromStringList(excludes));
    if (!image.isEmpty()) out.insert(QStringLiteral("image"), image);
    if (!secretEnv.isEmpty()) {
        QJsonObject secretObject;
        for (auto it = secretEnv.cbegin(); it != secretEnv.cend(); ++it) {
            secretObject.insert(it.key(), QJsonObject{{QStringLiteral("secret"), it->secret}, {QStringLiteral("key"), it->key}});
        }
        out.insert(QStringLiteral("secretEnv"), secretObject);
    }
    return out;
}

QByteArray JobSpec::canonicalJson() const
{
    // QJsonObject keeps keys sorted, so the compact form is canonical.
    return QJsonDocument(toJson()).toJson(QJsonDocument::Compact);
}

} // namespace Starforge::Job
