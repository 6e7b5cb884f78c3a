#pragma once

// The playground's launch form: what to serve (a checkpoint's path under the storage root, a
// model name, or a finished job's checkpoint chosen in the Job dock), the GPU series and how
// many GPUs (vLLM's tensor parallel size), how long the pod may live, and an optional context
// length. What is wrong is listed under the form as it is typed (PlaygroundPod::problems, each
// naming its field) and Launch stays off until nothing is; the series offered are the cluster's,
// with their free GPUs now.

#include "core/playground/playgroundpod.h"

#include <QDialog>

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace Starforge::Cluster {
class CapacityTracker;
}

namespace Starforge::Gui {

class LaunchDialog final : public QDialog
{
    Q_OBJECT
public:
    // capacity may be null; while the dialog is open the series list follows it.
    LaunchDialog(const Job::ClusterSettings &settings, const Cluster::CapacityTracker *capacity, QWidget *parent = nullptr);

    void setRequest(const Playground::LaunchRequest &request);
    // A sentence above the form (why this launch: Extend's explanation).
    void setNote(const QString &text);
    Playground::LaunchRequest request() const;
    QStringList problems() const;

    // The parts, for tests.
    QLineEdit *modelEdit() const { return m_model; }
    QComboBox *seriesCombo() const { return m_series; }
    QSpinBox *gpusSpin() const { return m_gpus; }
    QSpinBox *hoursSpin() const { return m_hours; }
    QLabel *problemsLabel() const { return m_problems; }
    QLabel *noteLabel() const { return m_note; }
    QDialogButtonBox *buttons() const { return m_buttons; }

private:
    void check();
    void fillSeries(const Cluster::CapacityTracker *capacity);

    Job::ClusterSettings m_settings;
    Playground::LaunchRequest m_fromJob;   // the job and step when opened from a checkpoint
    QLineEdit *m_model;
    QLineEdit *m_tokenizer;
    QComboBox *m_series;
    QSpinBox *m_gpus;
    QSpinBox *m_hours;
    QSpinBox *m_maxLen;
    QLabel *m_problems;
    QLabel *m_note;
    QDialogButtonBox *m_buttons;
};

} // namespace Starforge::Gui
