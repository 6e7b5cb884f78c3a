#pragma once

// Page 1 of the submission wizard: the code folder as a file tree with sizes (Models::
// CodeTreeModel over Job::listCapsuleTree, walked off the GUI thread), what the excludes leave
// out and by which pattern, the Capsule's file count and estimated size, and the job's name,
// checked as it is typed.

#include "core/job/capsule.h"
#include "core/job/jobspec.h"

#include <QFutureWatcher>
#include <QTimer>
#include <QWizardPage>

#include <optional>

class QLabel;
class QLineEdit;
class QPushButton;
class QTreeView;

namespace Starforge::Models {
class CodeTreeModel;
}

namespace Starforge::Gui {

class SubmitWizard;

class CodePage final : public QWizardPage
{
    Q_OBJECT
public:
    explicit CodePage(SubmitWizard *wizard);
    ~CodePage() override;

    void load(const Job::JobSpec &spec);
    void apply(Job::JobSpec &spec) const;
    QString folder() const;
    const std::optional<Job::CapsuleListing> &listing() const { return m_listing; }
    bool isListing() const { return m_watcher.isRunning() || m_rescan.isActive(); }

    bool isComplete() const override;

private:
    void rescan();
    void onListed();
    void refresh();

    SubmitWizard *m_wizard;
    QLineEdit *m_folder;
    QPushButton *m_browse;
    QLineEdit *m_name;
    QLabel *m_nameProblem;
    QLineEdit *m_excludes;
    QTreeView *m_tree;
    Models::CodeTreeModel *m_model;
    QLabel *m_summary;
    QLabel *m_problems;
    QTimer m_rescan;
    QFutureWatcher<Result<Job::CapsuleListing>> m_watcher;
    std::optional<Job::CapsuleListing> m_listing;
    QString m_listingError;
    QString m_initialFolder;
};

} // namespace Starforge::Gui
