#pragma once

// How far a job's training has come, read from its driver log: runner.pex adds a line
// `STARFORGE_PROGRESS {json}` after each NeMo-RL step and epoch banner, checkpoint line, summary
// metric and log-directory line, for each checkpoint it sees on the shared storage, and at the
// start and the exit (src/runner/starforge_runner/runner.py, docs/jobspec.md, "The runner"). The
// records, as the runner writes them (keys sorted):
//   {"kind": "start", "job": ID, "files": N, "argv": [...]}
//   {"kind": "log_dir", "path": "/starforge/jobs/ID/logs/exp_001"}
//   {"epoch": 1, "kind": "epoch", "total": 2}
//   {"kind": "step", "step": 3, "total": 10}          step and total within the epoch
//   {"kind": "metric", "name": "Loss" | "Avg Reward" | "Accuracy" | "Validation Loss" | …,
//    "value": 0.43 | "nan" | "inf" | "-inf"}
//   {"kind": "checkpoint", "step": 14}                 a save started; 14 is the global step
//   {"kind": "checkpoint_saved", "path": ".../step_14", "step": 14}
//   {"kind": "servable", "step": 14, "path": ..., "tokenizer": ..., "backend": ...,
//    "consolidated": true, "converter": ""}           step_14/ is complete (see ServableCheckpoint)
//   {"kind": "checkpoint_removed", "step": 4}          keep_top_k deleted a saved step
//   {"checkpoints": [{"step": 14, "path": ..., …}, …], "kind": "servable_checkpoints"}
//                                                      once training has exited: every servable
//                                                      step still there, which replaces the list
//                                                      (a long run's rotated log loses the early
//                                                      servable records)
//   {"kind": "done", "reason": "Max number of steps has been reached, …"}
//   {"kind": "exit", "code": 0}
// NeMo-RL prints a step's metrics after its banner, so a metric belongs to the last step seen.
// Its Step banner counts within the epoch; the checkpoint line has the global step. A run that
// ends by running out of epochs prints no end line: the exit ends it. Every other line
// (NeMo-RL's own output, Ray's) is ignored, and so is a progress line that does not parse: a log
// is not trusted input. Pure: feeding lines is the caller's work (the Jobs panel from a
// LogStream, the CLI from an archived log).

#include <QByteArrayView>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>

#include <optional>

class QIODevice;

namespace Starforge::Job {

struct ProgressPoint
{
    int step = 0;                    // the global step (steps of the epochs before included): the plots' x
    QMap<QString, double> metrics;   // by the runner's canonical name ("Loss", "Avg Reward", "Total step time"); NaN kept
    int epoch = 0;                   // 0 when the log had no Epoch banner before it
    int stepInEpoch = 0;             // as the Step banner counts
};

// A finished checkpoint step and what vLLM can do with it, decided by the runner from the files
// (runner.py servable()). Only DTensor v2 with checkpointing.save_consolidated writes an HF tree
// (policy/weights/model/consolidated/); DCP (DTensor v1, v2 with torch_save) and Megatron
// checkpoints need NeMo-RL's converter first; v2's sharded safetensors have none.
struct ServableCheckpoint
{
    int step = 0;
    QString path;            // what vLLM serves (the consolidated HF tree when consolidated)
    QString tokenizerPath;   // step_N/policy/tokenizer; empty when the step has none (v0.7's Megatron worker writes none)
    QString backend;         // "dtensor_v2", "dtensor_v1", "megatron", "unknown"
    bool consolidated = false;
    QString converter;       // NeMo-RL script that makes an HF tree when !consolidated, else empty

    // The runner's keys ("step", "path", "tokenizer", "backend", "consolidated", "converter"), as
    // its servable record has them, `status --json` shows them and the job record keeps them.
    QJsonObject toJson() const;
    // nullopt without a step, a path or the consolidated flag.
    static std::optional<ServableCheckpoint> fromJson(const QJsonObject &json);

    bool operator==(const ServableCheckpoint &) const = default;
};

class JobProgress
{
public:
    // The most steps kept for plots: a long run keeps its latest ones.
    static constexpr int MaxPoints = 10000;

    // One line of the driver log, with or without its trailing newline (and with or without a
    // kubelet timestamp in front). True when it changed the progress.
    bool feed(QByteArrayView line);
    // Every line of a log.
    static JobProgress fromLog(QByteArrayView log);

    int step() const { return m_step; }              // within the epoch; 0 before the first step banner
    int stepInEpoch() const { return m_step; }
    int totalSteps() const { return m_totalSteps; }  // per epoch
    int epoch() const { return m_epoch; }
    int totalEpochs() const { return m_totalEpochs; }
    // The global step from the last checkpoint line ("Saving checkpoint for step N..."), 0 when none.
    int globalStep() const { return m_globalStep; }
    // The global step of the current step: the last checkpoint line's plus the steps since, else
    // the steps of the epochs before plus step(); 0 before the first step banner.
    int currentGlobalStep() const { return m_currentGlobalStep; }
    // The last save that started (the checkpoint line); 0: none yet.
    int lastCheckpoint() const { return m_lastCheckpoint; }
    // The last step whose step_N/ the runner saw, and whether a step's is there (not removed
    // since); after the servable_checkpoints record, the steps it lists.
    int lastSavedCheckpoint() const { return m_saved.isEmpty() ? 0 : m_saved.last(); }
    bool savedCheckpoint(int step) const { return m_saved.contains(step); }
    // Finished steps (a later step exists, or training ended), ascending; removed ones dropped.
    // The runner's servable_checkpoints record at the exit replaces the list as a whole.
    const QList<ServableCheckpoint> &servableCheckpoints() const { return m_servable; }
    // NeMo-RL's log directory for this run (logger.log_dir plus /exp_NNN); empty until printed.
    QString logDirectory() const { return m_logDirectory; }
    bool started() const { return m_started; }
    // Training is over: an end line, or the exit (a run that runs out of epochs prints none).
    bool done() const { return !m_doneReason.isEmpty() || m_exitCode.has_value(); }
    // Why training stopped, once it has: NeMo-RL's end line, else "Ran all epochs" for an exit 0
    // without one, else "Exited with code N".
    QString doneReason() const;
    std::optional<int> exitCode() const { return m_exitCode; }
    const QList<ProgressPoint> &points() const { return m_points; }
    // The last value of a metric, if any step reported it.
    std::optional<double> latest(const QString &metric) const;

    // "step 120/500", "epoch 2/3, step 4/10 (global step 14)", or empty before the first banner.
    // The global step is shown when there are several epochs or it differs from the step.
    QString summary() const;
    // The summary with the latest metrics and checkpoint: "step 2/3, Loss 0.5, Avg Reward 0.1,
    // last checkpoint step 2"; empty before the first banner. The checkpoint is the last saved one
    // (with "saving step N" while a later save runs), or, in a log without checkpoint_saved
    // records, the last started.
    QString details() const;

private:
    int m_step = 0;
    int m_totalSteps = 0;
    int m_epoch = 0;
    int m_totalEpochs = 0;
    int m_lastCheckpoint = 0;
    int m_globalStep = 0;
    int m_currentGlobalStep = 0;
    int m_stepsBefore = 0;   // global steps before the current epoch's first
    bool m_newEpoch = false; // an Epoch banner came after the last Step banner
    bool m_sawSaved = false;
    QList<int> m_saved;      // ascending
    QList<ServableCheckpoint> m_servable;
    QString m_logDirectory;
    bool m_started = false;
    QString m_doneReason;
    std::optional<int> m_exitCode;
    QList<ProgressPoint> m_points;
};

// The list of the runner's last servable_checkpoints record within the last tailBytes of a
// driver log, or nullopt when there is none there. The record comes when the training process
// exits, so only the exit record and Ray's last lines follow it: the archiver reads it from the
// tail without reading the whole log (which can be gigabytes).
std::optional<QList<ServableCheckpoint>> servableCheckpointsAtTheEnd(QIODevice &log, qint64 tailBytes = 4 * 1024 * 1024);

} // namespace Starforge::Job
