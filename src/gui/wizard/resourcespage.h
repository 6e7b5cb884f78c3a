#pragma once

// Page 3 of the submission wizard: the pools (one or two rows: name, series, nodes, GPUs per
// node), each with the live fit verdict (Cluster::CapacityModel::fit, the model the heatmap
// draws) and its sentence, redone whenever the capacity tracker reports a change; the storage
// and corpus volumes, off with the reason when the profile has no such claim; the rule that a
// multi-node job needs shared storage, shown where the pools are. Next is blocked by an error
// (the core's messages, a pool that can never fit), not by FitsWhenFree, which only waits.

#include "core/cluster/capacity.h"
#include "core/job/jobspec.h"

#include <QPointer>
#include <QWizardPage>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QLineEdit;

namespace Starforge::Gui {

class SubmitWizard;

class ResourcesPage final : public QWizardPage
{
    Q_OBJECT
public:
    explicit ResourcesPage(SubmitWizard *wizard);

    void load(const Job::JobSpec &spec);
    void apply(Job::JobSpec &spec) const;

    void initializePage() override;
    bool isComplete() const override;

    // The verdict shown for a pool row ("FitsNow", ...; empty while capacity is unknown) and its sentence.
    QString verdictOf(int row) const;
    QString sentenceOf(int row) const;

Q_SIGNALS:
    // The verdicts were computed again (after a capacity change or an edit).
    void verdictsUpdated();

private:
    void addPoolRow(const Job::Pool &pool);
    void followCapacity();
    void fillSeries();
    void refresh();

    struct Row
    {
        QLineEdit *name;
        QComboBox *series;
        QSpinBox *nodes;
        QSpinBox *gpus;
        QLabel *verdict;
    };

    SubmitWizard *m_wizard;
    QTableWidget *m_pools;
    QPushButton *m_addPool;
    QPushButton *m_removePool;
    QLabel *m_capacityNote;
    QLabel *m_poolsWarning;   // valid but not exact: two pools of different series
    QCheckBox *m_storage;
    QLabel *m_storageNote;
    QCheckBox *m_corpus;
    QLabel *m_corpusNote;
    QLabel *m_problems;
    // Shown when a pool can never fit: the page asks before it lets such a job go.
    QCheckBox *m_submitAnyway;
    QList<Row> m_rows;
    QPointer<Cluster::CapacityTracker> m_followed;
    QStringList m_verdicts;
    QStringList m_sentences;
    bool m_complete = false;
    bool m_loading = true;   // until load()
};

} // namespace Starforge::Gui
