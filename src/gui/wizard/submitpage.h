#pragma once

// Page 5 of the submission wizard: runs Job::Submitter (the one `starforge-cli submit` runs)
// and shows its stages, the bytes of the current one and the rate, "0 bytes: already in the
// bucket" when the Capsule was there before. Cancel stops it the way the core cleans up (no
// zip, no unfinished upload, no RayJob). A failure says what to do; Try again resubmits with
// the same job id (never a second job), and Back leaves every page as it was.

#include <QElapsedTimer>
#include <QPointer>
#include <QWizardPage>

#include <functional>

class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;

namespace Starforge::Job {
class Submitter;
}

namespace Starforge::Gui {

class SubmitWizard;

class SubmitPage final : public QWizardPage
{
    Q_OBJECT
public:
    explicit SubmitPage(SubmitWizard *wizard);
    ~SubmitPage() override;

    void initializePage() override;
    void cleanupPage() override;
    bool isComplete() const override;

    bool isSubmitting() const;
    // Cancels the submission under way; then() runs once it has cleaned up.
    void cancel(std::function<void()> then);
    QString errorText() const;

private:
    void start();
    void onStage(int stage);
    void onProgress(qint64 done, qint64 total);
    void onFinished();

    SubmitWizard *m_wizard;
    QListWidget *m_stages;
    QProgressBar *m_progress;
    QLabel *m_bytes;
    QLabel *m_error;
    QPushButton *m_retry;
    QPointer<Job::Submitter> m_submitter;
    QElapsedTimer m_stageClock;
    std::function<void()> m_afterCancel;
    bool m_done = false;
    bool m_sawUpload = false;
};

} // namespace Starforge::Gui
