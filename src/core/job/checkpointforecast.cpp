#include "core/job/checkpointforecast.h"

#include "core/job/hydraoverride.h"
#include "core/job/jobspec.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonObject>

#include <yaml-cpp/yaml.h>

namespace Starforge::Job {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(CheckpointForecast)
};

// The values that decide, after each v0.7.0 example config's own `defaults` chain (read at the
// tag: examples/configs/*.yaml). dpo.yaml and rm.yaml leave _v2 out, which NeMo-RL reads as
// false (lm_policy.py); the grpo_math_*_megatron family turns checkpointing off. Every one with
// a policy.generation generates with vLLM; the sft, dpo and rm configs have none (nullptr).
struct KnownConfig
{
    const char *name;
    bool megatron;
    bool v2;
    bool checkpoints;
    const char *generation;
};
constexpr KnownConfig KnownConfigs[] = {
    {"grpo_math_1B.yaml", false, true, true, "vllm"},
    {"grpo_math_8B.yaml", false, true, true, "vllm"},
    {"sft.yaml", false, true, true, nullptr},
    {"sft_vlm_3B.yaml", false, true, true, nullptr},
    {"sft_openmathinstruct2.yaml", false, true, true, nullptr},
    {"dpo.yaml", false, false, true, nullptr},
    {"rm.yaml", false, false, true, nullptr},
    {"distillation_math.yaml", false, true, true, "vllm"},
    {"ppo_math_1B.yaml", false, true, true, "vllm"},
    {"vlm_grpo_3B.yaml", false, true, true, "vllm"},
    {"grpo_math_1B_megatron.yaml", true, true, false, "vllm"},
    {"grpo_math_8B_megatron.yaml", true, true, false, "vllm"},
    {"grpo_math_8B_megatron_fp8.yaml", true, true, false, "vllm"},
    {"grpo_math_70B_megatron.yaml", true, true, false, "vllm"},
    {"grpo_math_70B_megatron_fp8.yaml", true, true, false, "vllm"},
    {"grpo_math_qwen30ba3b_megatron.yaml", true, true, false, "vllm"},
    {"audio_grpo_3B_megatron.yaml", true, true, false, "vllm"},
    {"vlm_grpo_3B_megatron.yaml", true, true, true, "vllm"},
    {"distillation_math_megatron.yaml", true, true, true, "vllm"},
    {"ppo_math_1B_megatron.yaml", true, true, true, "vllm"},
    {"sft_openmathinstruct2_megatron.yaml", true, true, true, nullptr},
};

QJsonValue toJson(const YAML::Node &node)
{
    if (node.IsMap()) {
        QJsonObject out;
        for (const auto &entry : node) out.insert(QString::fromStdString(entry.first.as<std::string>()), toJson(entry.second));
        return out;
    }
    if (node.IsSequence()) {
        QJsonArray out;
        for (const auto &item : node) out.append(toJson(item));
        return out;
    }
    if (node.IsNull()) return QJsonValue::Null;
    const QString text = QString::fromStdString(node.Scalar());
    if (node.Tag() != "!") {   // plain, not quoted
        if (text.compare(QLatin1String("true"), Qt::CaseInsensitive) == 0) return true;
        if (text.compare(QLatin1String("false"), Qt::CaseInsensitive) == 0) return false;
    }
    return text;
}

// OmegaConf.merge for mappings: the child's keys over the parent's, maps merged key by key.
void mergeInto(QJsonObject &base, const QJsonObject &child)
{
    for (auto it = child.begin(); it != child.end(); ++it) {
        if (it->isObject() && base.value(it.key()).isObject()) {
            QJsonObject nested = base.value(it.key()).toObject();
            mergeInto(nested, it->toObject());
            base.insert(it.key(), nested);
        } else {
            base.insert(it.key(), *it);
        }
    }
}

QJsonValue lookup(const QJsonObject &config, const QString &dotted)
{
    QJsonValue at = config;
    for (const QString &part : dotted.split(u'.')) {
        if (!at.isObject()) return QJsonValue::Undefined;
        at = at.toObject().value(part);
    }
    return at;
}

void assign(QJsonObject &config, const QStringList &path, const QJsonValue &value, bool remove)
{
    if (path.size() == 1) {
        if (remove) config.remove(path.first());
        else config.insert(path.first(), value);
        return;
    }
    QJsonObject nested = config.value(path.first()).toObject();
    assign(nested, path.mid(1), value, remove);
    config.insert(path.first(), nested);
}

// The deciding values of a known example config, as a config fragment.
std::optional<QJsonObject> knownFragment(const QString &path)
{
    const qsizetype at = path.lastIndexOf(QLatin1String("examples/configs/"));
    if (at < 0) return std::nullopt;
    const QString name = path.mid(at + qsizetype(qstrlen("examples/configs/")));
    for (const KnownConfig &known : KnownConfigs) {
        if (name != QLatin1String(known.name)) continue;
        QJsonObject fragment;
        assign(fragment, {QStringLiteral("checkpointing"), QStringLiteral("enabled")}, known.checkpoints, false);
        assign(fragment, {QStringLiteral("policy"), QStringLiteral("megatron_cfg"), QStringLiteral("enabled")}, known.megatron, false);
        assign(fragment, {QStringLiteral("policy"), QStringLiteral("dtensor_cfg"), QStringLiteral("enabled")}, !known.megatron, false);
        if (known.v2) assign(fragment, {QStringLiteral("policy"), QStringLiteral("dtensor_cfg"), QStringLiteral("_v2")}, true, false);
        if (known.generation) {
            assign(fragment, {QStringLiteral("policy"), QStringLiteral("generation"), QStringLiteral("backend")},
                   QString::fromLatin1(known.generation), false);
        }
        return fragment;
    }
    return std::nullopt;
}

struct Loader
{
    QString codeRoot;
    QString unreadable;

    // The config at path with its parents merged in, or nothing when some part cannot be read.
    std::optional<QJsonObject> load(const QString &path, int depth)
    {
        if (depth > 16) {
            unreadable = path;
            return std::nullopt;
        }
        const QString clean = QDir::cleanPath(path);
        const bool inCode = QFileInfo(clean).isAbsolute() && clean.startsWith(codeRoot + u'/');
        if (!inCode || !QFileInfo(clean).isFile()) {
            if (auto known = knownFragment(clean)) return known;
            unreadable = path;
            return std::nullopt;
        }
        QJsonObject config;
        try {
            config = toJson(YAML::LoadFile(QFile::encodeName(clean).toStdString())).toObject();
        } catch (const YAML::Exception &) {
            unreadable = path;
            return std::nullopt;
        }
        QStringList parents;
        const QJsonValue defaults = config.take(QStringLiteral("defaults"));
        if (defaults.isString()) parents << defaults.toString();
        for (const QJsonValue &d : defaults.toArray()) parents << d.toString();
        QJsonObject merged;
        const QString dir = QFileInfo(clean).absolutePath();
        for (const QString &parent : parents) {
            // load_config_with_inheritance: a path starting with "/" as it is, else beside this file.
            const QString resolved = parent.startsWith(u'/') ? parent : dir + u'/' + parent;
            auto loaded = load(resolved, depth + 1);
            if (!loaded) return std::nullopt;
            mergeInto(merged, *loaded);
        }
        mergeInto(merged, config);
        return merged;
    }
};

QJsonValue overrideValue(const QString &text)
{
    QString value = text.mid(text.indexOf(u'=') + 1).trimmed();
    if (value.size() >= 2 && (value.front() == u'\'' || value.front() == u'"') && value.back() == value.front()) {
        return value.mid(1, value.size() - 2);
    }
    if (value.compare(QLatin1String("true"), Qt::CaseInsensitive) == 0) return true;
    if (value.compare(QLatin1String("false"), Qt::CaseInsensitive) == 0) return false;
    if (value.compare(QLatin1String("null"), Qt::CaseInsensitive) == 0) return QJsonValue::Null;
    return value;
}

} // namespace

QJsonValue RecipeConfig::value(const QString &dotted) const
{
    return lookup(values, dotted);
}

RecipeConfig RecipeConfig::forSpec(const JobSpec &spec)
{
    RecipeConfig out;
    if (spec.recipe.config.isEmpty()) return out;
    Loader loader{QDir::cleanPath(spec.codePath()), {}};
    auto config = loader.load(QDir(spec.codePath()).absoluteFilePath(spec.recipe.config), 0);
    if (!config) {
        out.unreadable = loader.unreadable;
        return out;
    }
    // The overrides in order, as parse_hydra_overrides applies them.
    for (const QString &text : spec.recipe.overrides) {
        const HydraOverride parsed = HydraOverride::parse(text);
        if (!parsed.ok() || parsed.key.isEmpty()) continue;
        assign(*config, parsed.key.split(u'.'), parsed.hasValue ? overrideValue(text) : QJsonValue(),
               parsed.type == HydraOverride::Type::Delete);
    }
    out.known = true;
    out.values = *config;
    return out;
}

bool CheckpointForecast::chatReady() const
{
    return known && checkpoints && backend == Backend::DTensorV2 && !lora
        && (saveFormat.isEmpty() || saveFormat == QLatin1String("safetensors"));
}

QString CheckpointForecast::converter() const
{
    if (!known || !checkpoints || chatReady()) return {};
    if (backend == Backend::Megatron) {
        return lora ? QStringLiteral("examples/converters/convert_lora_to_hf.py") : QStringLiteral("examples/converters/convert_megatron_to_hf.py");
    }
    // DCP checkpoints (v1, or v2 with torch_save); a v2 LoRA adapter has no converter script.
    if (backend == Backend::DTensorV1 || (backend == Backend::DTensorV2 && !lora)) return QStringLiteral("examples/converters/convert_dcp_to_hf.py");
    return {};
}

QString CheckpointForecast::warning() const
{
    if (!known || chatReady()) return {};
    const QString convert = converter().isEmpty()
        ? QString()
        : Text::tr(" Convert a step with NeMo-RL's %1 before the playground can serve it.").arg(converter());
    if (!checkpoints) {
        return Text::tr("checkpoints: the config does not turn checkpointing on (checkpointing.enabled is false or missing), so this job "
                  "saves nothing the playground can serve. Add ++checkpointing.enabled=true to keep its weights.");
    }
    if (backend == Backend::Megatron) {
        return Text::tr("checkpoints: this job trains with Megatron (policy.megatron_cfg.enabled), which writes no Hugging Face weights, "
                  "so its checkpoints will not be chat-ready.") + convert;
    }
    if (backend == Backend::DTensorV1) {
        return Text::tr("checkpoints: this job uses NeMo-RL's DTensor v1 worker (policy.dtensor_cfg._v2 is not true, as in the dpo and rm "
                  "configs), which ignores save_consolidated, so its checkpoints will not be chat-ready. Add "
                  "++policy.dtensor_cfg._v2=true to get a consolidated model, or convert later.") + convert;
    }
    if (lora) {
        return Text::tr("checkpoints: with LoRA (policy.dtensor_cfg.lora_cfg.enabled) NeMo-RL saves an adapter, not a consolidated model, "
                  "so its checkpoints will not be chat-ready; merge the adapter into its base model before serving it.");
    }
    return Text::tr("checkpoints: checkpointing.model_save_format is %1, and NeMo-RL consolidates only safetensors checkpoints, so this "
              "job's checkpoints will not be chat-ready.").arg(saveFormat) + convert;
}

QString CheckpointForecast::backendName(Backend backend)
{
    switch (backend) {
    case Backend::DTensorV2: return QStringLiteral("dtensor_v2");
    case Backend::DTensorV1: return QStringLiteral("dtensor_v1");
    case Backend::Megatron: return QStringLiteral("megatron");
    case Backend::Unknown: break;
    }
    return QStringLiteral("unknown");
}

CheckpointForecast CheckpointForecast::forSpec(const JobSpec &spec)
{
    CheckpointForecast out;
    const RecipeConfig config = RecipeConfig::forSpec(spec);
    if (!config.known) {
        out.unreadable = config.unreadable;
        return out;
    }
    const auto flag = [&](const char *key, bool fallback) {
        const QJsonValue v = config.value(QString::fromLatin1(key));
        return v.isBool() ? v.toBool() : fallback;
    };
    out.known = true;
    out.checkpoints = flag("checkpointing.enabled", false);
    const QJsonValue format = config.value(QStringLiteral("checkpointing.model_save_format"));
    out.saveFormat = format.isString() ? format.toString() : QString();
    if (flag("policy.megatron_cfg.enabled", false)) {
        out.backend = Backend::Megatron;
        out.lora = flag("policy.megatron_cfg.peft.enabled", false);
    } else {
        // lm_policy.py: an absent _v2 is false, the V1 worker.
        out.backend = flag("policy.dtensor_cfg._v2", false) ? Backend::DTensorV2 : Backend::DTensorV1;
        out.lora = flag("policy.dtensor_cfg.lora_cfg.enabled", false);
    }
    return out;
}

} // namespace Starforge::Job
