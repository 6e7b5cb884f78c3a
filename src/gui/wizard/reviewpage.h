#pragma once

// Page 4 of the submission wizard: the RayJob the submission will create, as read-only JSON
// with syntax colour (Copy puts it on the clipboard), made the way `starforge-cli manifest`
// makes it: the Capsule is built to know its true content address, a GET URL is presigned, and
// Job::RayJobBuilder builds the object for the wizard's job id. Only the URL's signature
// differs from what the submit sends (it is signed again then). Also the Capsule's summary,
// the deadline and TTL with the KubeRay release that enforces them, and "Save JobSpec…".

#include "core/job/capsule.h"
#include "core/job/jobspec.h"

#include <QJsonObject>
#include <QTemporaryDir>
#include <QWizardPage>

#include <memory>
#include <optional>

class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace Starforge::Gui {

class SubmitWizard;

class ReviewPage final : public QWizardPage
{
    Q_OBJECT
public:
    explicit ReviewPage(SubmitWizard *wizard);
    ~ReviewPage() override;

    void initializePage() override;
    void cleanupPage() override;
    bool isComplete() const override;

    QString rayJobText() const;
    // The Capsule built for the RayJob shown, and the JobSpec it was built from; nullopt while
    // it builds or when it could not be built. Its zip lives until the page is left backwards.
    std::optional<Job::CapsuleResult> builtCapsule() const;
    const Job::JobSpec &reviewedSpec() const { return m_spec; }
    // Writes the JobSpec as the pages hold it to path (code relative to the file's folder).
    Result<void> saveJobSpec(const QString &path) const;

Q_SIGNALS:
    // The RayJob is shown (or why it cannot be).
    void reviewReady();

private:
    void onCapsuleBuilt();

    SubmitWizard *m_wizard;
    QPlainTextEdit *m_json;
    QPushButton *m_copy;
    QPushButton *m_save;
    QLabel *m_capsule;
    QLabel *m_deadline;
    QLabel *m_warnings;
    QLabel *m_problems;
    std::unique_ptr<QTemporaryDir> m_work;
    std::unique_ptr<Job::CapsuleBuilder> m_builder;
    Job::JobSpec m_spec;
    QJsonObject m_rayJob;
    bool m_ready = false;
};

} // namespace Starforge::Gui
