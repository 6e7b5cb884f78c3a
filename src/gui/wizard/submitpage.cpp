#include "gui/wizard/submitpage.h"

#include "core/job/submitter.h"
#include "core/session/session.h"
#include "gui/palettefollow.h"
#include "gui/wizard/reviewpage.h"
#include "gui/wizard/submitwizard.h"
#include "models/codetreemodel.h"

#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

namespace Starforge::Gui {

namespace {

using Stage = Job::Submitter::Stage;

const QList<Stage> ShownStages{Stage::Building, Stage::Checking, Stage::Uploading, Stage::Creating};

QString stageText(Stage stage)
{
    switch (stage) {
    case Stage::Building: return SubmitPage::tr("Build the Capsule");
    case Stage::Checking: return SubmitPage::tr("Check the bucket for it");
    case Stage::Uploading: return SubmitPage::tr("Upload it");
    case Stage::Creating: return SubmitPage::tr("Create the RayJob");
    default: return {};
    }
}

} // namespace

SubmitPage::SubmitPage(SubmitWizard *wizard)
    : QWizardPage(wizard)
    , m_wizard(wizard)
    , m_stages(new QListWidget(this))
    , m_progress(new QProgressBar(this))
    , m_bytes(new QLabel(this))
    , m_error(new QLabel(this))
    , m_retry(new QPushButton(tr("&Try again"), this))
{
    setTitle(tr("Submit"));
    setSubTitle(tr("Cancel stops at the current step and removes what this submission made."));
    m_stages->setObjectName(QStringLiteral("submitStages"));
    m_stages->setAccessibleName(tr("Submission steps"));
    m_stages->setMaximumHeight(110);
    m_progress->setObjectName(QStringLiteral("submitProgress"));
    m_progress->setAccessibleName(tr("Progress of the current step"));
    m_bytes->setObjectName(QStringLiteral("submitBytes"));
    m_bytes->setAccessibleName(tr("Bytes and rate"));
    m_error->setObjectName(QStringLiteral("submitError"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    followTone(m_error, Tones::Tone::Error);
    m_retry->setObjectName(QStringLiteral("retrySubmitButton"));
    m_retry->setAccessibleName(tr("Try the submission again"));
    m_retry->hide();
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_stages);
    layout->addWidget(m_progress);
    layout->addWidget(m_bytes);
    layout->addWidget(m_error);
    layout->addWidget(m_retry, 0, Qt::AlignLeft);
    layout->addStretch(1);
    connect(m_retry, &QPushButton::clicked, this, &SubmitPage::start);
}

SubmitPage::~SubmitPage() = default;

void SubmitPage::initializePage()
{
    start();
}

void SubmitPage::cleanupPage()
{
    // Back: only reachable when nothing runs (the button is off while it does).
    m_error->clear();
    m_retry->hide();
}

bool SubmitPage::isSubmitting() const
{
    return m_submitter && m_submitter->stage() != Stage::Done && m_submitter->stage() != Stage::Failed
        && m_submitter->stage() != Stage::Cancelled;
}

QString SubmitPage::errorText() const
{
    return m_error->text();
}

void SubmitPage::start()
{
    m_done = false;
    m_sawUpload = false;
    m_error->clear();
    m_retry->hide();
    m_stages->clear();
    for (Stage stage : ShownStages) {
        auto *item = new QListWidgetItem(QStringLiteral("   ") + stageText(stage), m_stages);
        item->setData(Qt::UserRole, static_cast<int>(stage));
    }
    m_progress->setRange(0, 0);
    m_bytes->clear();
    Session *session = m_wizard->session();
    const auto bucket = session ? session->bucket() : Result<S3::S3Client *>(Error::unavailable(tr("Not connected.")));
    if (!session || !session->isUp() || !session->kube() || !bucket) {
        m_error->setText(tr("Cannot submit: %1 Connect to the cluster (the profile in the toolbar), then press Try again.")
                             .arg(bucket ? tr("the cluster is not connected.") : bucket.error().message));
        m_retry->show();
        m_progress->setRange(0, 1);
        Q_EMIT completeChanged();
        return;
    }
    Job::SubmitOptions options;
    options.spec = m_wizard->spec();
    options.settings = session->settings();
    options.operatorVersion = session->operatorVersion().assumed();
    options.runnerPexPath = Job::defaultRunnerPexPath();
    options.jobId = m_wizard->jobId();   // a retry is the same job, never a second one
    // The Capsule the review page built and showed, when it is of this very JobSpec.
    if (const auto *review = qobject_cast<ReviewPage *>(m_wizard->page(SubmitWizard::ReviewPageId));
        review && review->reviewedSpec().toJson() == options.spec.toJson() && review->reviewedSpec().codePath() == options.spec.codePath())
        options.prebuiltCapsule = review->builtCapsule();
    delete m_submitter;
    m_submitter = new Job::Submitter(session->kube(), *bucket, options, this);
    connect(m_submitter, &Job::Submitter::stageChanged, this, [this](Stage stage) { onStage(static_cast<int>(stage)); });
    connect(m_submitter, &Job::Submitter::progress, this, &SubmitPage::onProgress);
    connect(m_submitter, &Job::Submitter::finished, this, &SubmitPage::onFinished);
    m_wizard->button(QWizard::BackButton)->setEnabled(false);
    m_submitter->start();
}

void SubmitPage::onStage(int value)
{
    const auto stage = static_cast<Stage>(value);
    if (stage == Stage::Failed || stage == Stage::Cancelled) {
        // The steps done keep their mark; the one that stopped says so.
        for (int i = 0; i < m_stages->count(); ++i) {
            QListWidgetItem *item = m_stages->item(i);
            if (item->text().startsWith(QStringLiteral("▶"))) item->setText(QStringLiteral("✗") + item->text().mid(1));
        }
        return;
    }
    m_stageClock.start();
    for (int i = 0; i < m_stages->count(); ++i) {
        QListWidgetItem *item = m_stages->item(i);
        const auto itemStage = static_cast<Stage>(item->data(Qt::UserRole).toInt());
        const int at = static_cast<int>(ShownStages.indexOf(itemStage));
        const int now = static_cast<int>(ShownStages.indexOf(stage));
        const QString mark = stage == Stage::Done || (now >= 0 && at < now) ? QStringLiteral("✓") : at == now ? QStringLiteral("▶") : QStringLiteral(" ");
        item->setText(mark + QStringLiteral("  ") + stageText(itemStage));
        if (at == now) m_stages->setCurrentItem(item);
    }
    m_progress->setRange(0, 0);
    if (stage == Stage::Uploading) m_sawUpload = true;
    if (stage == Stage::Creating && !m_sawUpload) m_bytes->setText(tr("0 bytes: already in the bucket"));
}

void SubmitPage::onProgress(qint64 done, qint64 total)
{
    if (total <= 0) return;
    m_progress->setRange(0, 1000);
    m_progress->setValue(static_cast<int>(done * 1000 / total));
    const double seconds = std::max<qint64>(1, m_stageClock.elapsed()) / 1000.0;
    const QString rate = Models::CodeTreeModel::formatSize(static_cast<qint64>(static_cast<double>(done) / seconds));
    const bool uploading = m_submitter && m_submitter->stage() == Stage::Uploading;
    m_bytes->setText(tr("%1: %2 of %3, %4/s")
                         .arg(uploading ? tr("Uploaded") : tr("Packed"), Models::CodeTreeModel::formatSize(done), Models::CodeTreeModel::formatSize(total), rate));
}

void SubmitPage::onFinished()
{
    const Result<Job::Submission> &result = m_submitter->result();
    m_progress->setRange(0, 1);
    m_wizard->button(QWizard::BackButton)->setEnabled(true);
    if (m_afterCancel) {
        auto then = std::move(m_afterCancel);
        m_afterCancel = nullptr;
        then();
        return;
    }
    if (!result) {
        onStage(static_cast<int>(Stage::Failed));
        m_progress->setValue(0);
        m_error->setText(tr("The submission failed: %1\nNothing of it was left on the cluster. Fix the cause, then press Try again "
                            "(the same job id, so never two jobs), or go Back to change the job.")
                             .arg(result.error().message));
        m_retry->show();
        m_retry->setFocus();
        Q_EMIT completeChanged();
        return;
    }
    const Job::Submission &s = *result;
    onStage(static_cast<int>(Stage::Done));
    m_progress->setValue(1);
    m_bytes->setText(s.uploadedBytes == 0 ? tr("0 bytes: already in the bucket")
                                          : tr("%1 uploaded").arg(Models::CodeTreeModel::formatSize(s.uploadedBytes)));
    m_done = true;
    Q_EMIT completeChanged();
    Q_EMIT m_wizard->submitted(s.jobId);
    m_wizard->accept();
}

void SubmitPage::cancel(std::function<void()> then)
{
    if (!isSubmitting()) {
        then();
        return;
    }
    m_afterCancel = std::move(then);
    setSubTitle(tr("Cancelling: removing what this submission made…"));
    m_submitter->cancel();
}

bool SubmitPage::isComplete() const
{
    return m_done;
}

} // namespace Starforge::Gui
