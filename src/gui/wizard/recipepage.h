#pragma once

// Page 2 of the submission wizard: the NeMo-RL recipe (an algorithm, or a script from the code
// folder), the config file picked from the folder, the Hydra overrides as an editable list, the
// image (empty: the profile's FORGE_IMAGE_NEMO_RL), env and secretEnv as tables. Each row the
// core's JobSpec refuses (a RAY_ or FORGE_ name, a bad override) is marked in place with the
// core's message, and Next stays off.

#include "core/job/jobspec.h"

#include <QWizardPage>

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QTableWidget;

namespace Starforge::Gui {

class SubmitWizard;

class RecipePage final : public QWizardPage
{
    Q_OBJECT
public:
    explicit RecipePage(SubmitWizard *wizard);

    void load(const Job::JobSpec &spec);
    void apply(Job::JobSpec &spec) const;

    void initializePage() override;
    bool isComplete() const override;

private:
    void fillFileChoices();
    void refresh();
    void markRows();

    SubmitWizard *m_wizard;
    QComboBox *m_entry;
    QComboBox *m_script;
    QLabel *m_scriptLabel;
    QComboBox *m_config;
    QListWidget *m_overrides;
    QPushButton *m_addOverride;
    QPushButton *m_removeOverride;
    QLineEdit *m_image;
    QLabel *m_imageNote;
    QTableWidget *m_env;
    QPushButton *m_addEnv;
    QPushButton *m_removeEnv;
    QTableWidget *m_secretEnv;
    QPushButton *m_addSecret;
    QPushButton *m_removeSecret;
    QLabel *m_problems;
    bool m_loading = false;
    bool m_complete = false;
};

} // namespace Starforge::Gui
