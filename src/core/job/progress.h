#pragma once

// How far a job's training has come, read from its driver log: runner.pex adds a line
// `STARFORGE_PROGRESS {json}` after each NeMo-RL step and epoch banner, checkpoint, summary
// metric and at the start and the exit (src/runner/starforge_runner/runner.py, docs/jobspec.md,
// "The runner"). The records, as the runner writes them (keys sorted):
//   {"kind": "start", "job": ID, "files": N, "argv": [...]}
//   {"kind": "step", "step": 3, "total": 10}
//   {"epoch": 1, "kind": "epoch", "total": 2}
//   {"kind": "metric", "name": "Loss" | "Avg Reward" | "Accuracy" | "Mean Generation Length" |
//                      "Total step time", "value": 0.43}
//   {"kind": "checkpoint", "step": 3}
//   {"kind": "done", "reason": "Max number of steps has been reached, …"}
//   {"kind": "exit", "code": 0}
// NeMo-RL prints a step's metrics after its banner, so a metric belongs to the last step seen.
// Every other line (NeMo-RL's own output, Ray's) is ignored, and so is a progress line that
// does not parse: a log is not trusted input. Pure: feeding lines is the caller's work (the
// Jobs panel from a LogStream, the CLI from an archived log).

#include <QByteArrayView>
#include <QList>
#include <QMap>
#include <QString>

#include <optional>

namespace Starforge::Job {

struct ProgressPoint
{
    int step = 0;
    QMap<QString, double> metrics;   // by NeMo-RL's name ("Loss", "Avg Reward", "Total step time")
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

    int step() const { return m_step; }              // 0 before the first step banner
    int totalSteps() const { return m_totalSteps; }
    int epoch() const { return m_epoch; }
    int totalEpochs() const { return m_totalEpochs; }
    int lastCheckpoint() const { return m_lastCheckpoint; }   // 0: none yet
    bool started() const { return m_started; }
    QString doneReason() const { return m_doneReason; }       // why training stopped, once it has
    std::optional<int> exitCode() const { return m_exitCode; }
    const QList<ProgressPoint> &points() const { return m_points; }
    // The last value of a metric, if any step reported it.
    std::optional<double> latest(const QString &metric) const;

    // "step 120/500", "epoch 1/2, step 3/10", or empty before the first banner.
    QString summary() const;
    // The summary with the latest metrics and checkpoint: "step 2/3, Loss 0.5, Avg Reward 0.1,
    // last checkpoint step 2"; empty before the first banner.
    QString details() const;

private:
    int m_step = 0;
    int m_totalSteps = 0;
    int m_epoch = 0;
    int m_totalEpochs = 0;
    int m_lastCheckpoint = 0;
    bool m_started = false;
    QString m_doneReason;
    std::optional<int> m_exitCode;
    QList<ProgressPoint> m_points;
};

} // namespace Starforge::Job
