#pragma once

// The JobSpec: the authoritative description of one training job, written by the wizard or by
// hand (docs/jobspec.md), validated before anything leaves the machine. Version 1:
//
//   {"version": 1, "name": "grpo-math",
//    "code": ".", "excludes": ["data/raw/"],
//    "recipe": {"algorithm": "grpo", "config": "configs/grpo.yaml", "overrides": ["grpo.max_num_steps=100"]},
//    "image": "nvcr.io/nvidia/nemo-rl:v0.7.0", "env": {"WANDB_MODE": "offline"},
//    "secretEnv": {"HF_TOKEN": {"secret": "hf", "key": "token"}},
//    "pools": [{"name": "train", "series": "h200", "nodes": 2, "gpusPerNode": 8}],
//    "storage": true, "corpus": false}
//
// Paths (code, recipe.config) are relative to the JobSpec's own file; recipe.config is also
// relative to the code folder once inside the Capsule.

#include "core/util/result.h"

#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

namespace Starforge::Job {

struct Pool
{
    QString name;        // DNS-1123 label; the worker group and Ray custom resource are named after it
    QString series;      // the value of the GPU series node label, e.g. "h200"
    int nodes = 1;
    int gpusPerNode = 8;
};

// An environment variable whose value stays in a Kubernetes Secret of the job's namespace: the
// Ray containers get it through secretKeyRef, so the value never passes through the app, the
// RayJob, its annotations or the archive.
struct SecretRef
{
    QString secret;      // the Secret's name
    QString key;         // the key in its data

    bool operator==(const SecretRef &other) const = default;
};

struct Recipe
{
    QString algorithm;   // grpo, sft, dpo, rm, distillation, ppo: examples/run_<algorithm>.py
    QString script;      // instead of algorithm: a script path inside the NeMo-RL checkout or the code
    QString config;      // the YAML config, relative to the code folder
    QStringList overrides; // Hydra override grammar: a.b=v, +a.b=v, ++a.b=v, ~a.b
};

struct JobSpec
{
    static constexpr int CurrentVersion = 1;

    int version = CurrentVersion;
    QString name;
    QString code = QStringLiteral(".");
    QStringList excludes;
    Recipe recipe;
    QString image;       // empty: FORGE_IMAGE_NEMO_RL
    QMap<QString, QString> env;
    QMap<QString, SecretRef> secretEnv;
    QList<Pool> pools;   // the first is the primary: the Ray head runs on its machine zero
    bool storage = true; // mount FORGE_K8S_STORAGE_PVC at the storage root
    bool corpus = false; // mount FORGE_K8S_CORPUS_PVC read-only

    // Not part of the format: the folder of the file it was loaded from, which relative paths
    // are resolved against (empty: the current directory).
    QString sourceDir;
    QString sourcePath;  // the file itself; left out of the Capsule when inside the code folder

    // Longest name: a RayJob name is at most 47 characters, and the app appends "-" and a
    // six-character job id.
    static constexpr int MaxNameLength = 40;

    // The algorithms with an examples/run_<name>.py entry point in NeMo-RL v0.7.
    static QStringList algorithms();
    // Those that can generate on a second pool (non-colocated generation): grpo, vlm_grpo,
    // distillation.
    static QStringList generationPoolAlgorithms();

    int totalNodes() const;
    int totalGpus() const;
    // examples/run_<algorithm>.py, or the script as given.
    QString scriptPath() const;
    // The code folder as an absolute path.
    QString codePath() const;

    // Reads and validates; every problem at once, one per line, each naming the field
    // ("pools[1].gpusPerNode: ..."). load() also checks that the code folder and the config exist.
    static Result<JobSpec> fromJson(const QByteArray &json);
    static Result<JobSpec> load(const QString &path);
    QJsonObject toJson() const;
    // Canonical bytes (sorted keys, compact): what goes into the Capsule as jobspec.json.
    QByteArray canonicalJson() const;

    // The problems of this spec alone (names, pools, recipe, env); empty when valid.
    QStringList problems() const;
    // What is valid but may not do what the spec seems to ask (two pools of different series);
    // shown beside the problems, never blocking.
    QStringList warnings() const;
    // Problems against the settings in force: a job with more than one node needs shared
    // storage (FORGE_K8S_STORAGE_SHARED), the corpus needs FORGE_K8S_CORPUS_PVC.
    QStringList problemsWith(bool storageShared, bool corpusConfigured) const;
};

} // namespace Starforge::Job
