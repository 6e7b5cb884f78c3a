#pragma once

// Whether a job's checkpoints will be ones vLLM can serve, known before it is submitted. The
// runner asks NeMo-RL for a consolidated Hugging Face tree beside every checkpoint
// (++checkpointing.save_consolidated=true), but NeMo-RL v0.7 writes one only on the DTensor v2
// path with safetensors and no LoRA; with DTensor v1 (the dpo and rm configs), Megatron,
// torch_save or LoRA it is silently ignored, and with checkpointing.enabled false there is no
// checkpoint at all (docs/nemo-rl.md, "Checkpoints vLLM can serve").
//
// The forecast reads the recipe's config from the code folder, follows its `defaults` the way
// NeMo-RL's load_config does (a path or a list of paths, relative to the file that names them,
// the last parent winning, the child on top), and applies the overrides to the few keys that
// decide. A parent inside the image (…/examples/configs/<name>.yaml) cannot be read from here;
// for v0.7.0's own example configs the deciding values are known (checkpointforecast.cpp), any
// other leaves the forecast Unknown rather than guessing.

#include <QJsonObject>
#include <QJsonValue>
#include <QString>

namespace Starforge::Job {

struct JobSpec;

// The recipe's config as NeMo-RL will load it: the `defaults` chain merged (above), then the
// overrides applied in order. A known example config of the image contributes only its
// deciding values: the checkpointing switch, the policy backend and policy.generation.backend.
struct RecipeConfig
{
    bool known = false;          // false: some part could not be read; values is empty
    QString unreadable;          // the first config that could not be read, when !known
    QJsonObject values;

    // A dotted key ("policy.generation.backend"); Undefined when absent.
    QJsonValue value(const QString &dotted) const;
    static RecipeConfig forSpec(const JobSpec &spec);
};

struct CheckpointForecast
{
    enum class Backend { Unknown, DTensorV2, DTensorV1, Megatron };

    bool known = false;          // false: a parent config could not be read; nothing is claimed
    bool checkpoints = true;     // checkpointing.enabled
    Backend backend = Backend::Unknown;
    bool lora = false;
    QString saveFormat;          // checkpointing.model_save_format; empty: safetensors
    QString unreadable;          // the first config that could not be read, when !known

    // A consolidated HF tree will sit beside each checkpoint.
    bool chatReady() const;
    // NeMo-RL's script that makes an HF tree from what the backend writes, relative to the
    // NeMo-RL checkout; empty when none applies (or the tree is there already).
    QString converter() const;
    // The warning for the wizard's review page and `starforge-cli submit`; empty when the
    // checkpoints will be chat-ready or nothing is known.
    QString warning() const;

    static QString backendName(Backend backend);  // "dtensor_v2", "dtensor_v1", "megatron", "unknown"
    static CheckpointForecast forSpec(const JobSpec &spec);
};

} // namespace Starforge::Job
