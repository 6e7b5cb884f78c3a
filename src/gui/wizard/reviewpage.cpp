#include "gui/wizard/reviewpage.h"

#include "core/job/checkpointforecast.h"

#include "core/job/rayjobbuilder.h"
#include "core/job/submitter.h"
#include "core/s3/s3client.h"
#include "core/session/session.h"
#include "gui/palettefollow.h"
#include "gui/wizard/jsonhighlighter.h"
#include "gui/wizard/submitwizard.h"
#include "models/codetreemodel.h"

#include <QClipboard>
#include <QDir>
#include <QFileInfo>
#include <QFontDatabase>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QVBoxLayout>

namespace Starforge::Gui {

ReviewPage::ReviewPage(SubmitWizard *wizard)
    : QWizardPage(wizard)
    , m_wizard(wizard)
    , m_json(new QPlainTextEdit(this))
    , m_copy(new QPushButton(tr("&Copy RayJob"), this))
    , m_save(new QPushButton(tr("&Save JobSpec…"), this))
    , m_capsule(new QLabel(this))
    , m_deadline(new QLabel(this))
    , m_warnings(new QLabel(this))
    , m_problems(new QLabel(this))
{
    setTitle(tr("Review"));
    setSubTitle(tr("The RayJob this creates, exactly as it will be sent (only the Capsule URL's signature is made again), and the Capsule."));
    setButtonText(QWizard::NextButton, tr("S&ubmit"));
    m_json->setObjectName(QStringLiteral("rayJobText"));
    m_json->setAccessibleName(tr("The RayJob, as JSON"));
    m_json->setReadOnly(true);
    m_json->setTextInteractionFlags(Qt::TextSelectableByKeyboard | Qt::TextSelectableByMouse);
    m_json->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_json->setLineWrapMode(QPlainTextEdit::NoWrap);
    new JsonHighlighter(m_json->document());
    m_copy->setObjectName(QStringLiteral("copyRayJobButton"));
    m_copy->setAccessibleName(tr("Copy the RayJob to the clipboard"));
    m_save->setObjectName(QStringLiteral("saveJobSpecButton"));
    m_save->setAccessibleName(tr("Save the JobSpec to a file"));
    for (QLabel *label : {m_capsule, m_deadline, m_warnings, m_problems}) {
        label->setWordWrap(true);
        label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    }
    m_capsule->setObjectName(QStringLiteral("reviewCapsule"));
    m_deadline->setObjectName(QStringLiteral("reviewDeadline"));
    m_warnings->setObjectName(QStringLiteral("reviewWarnings"));
    followTone(m_warnings, Tones::Tone::Warning);   // cautions; Submit stays on
    m_warnings->setTextFormat(Qt::PlainText);
    m_problems->setObjectName(QStringLiteral("reviewProblems"));
    followTone(m_problems, Tones::Tone::Error);

    auto *layout = new QVBoxLayout(this);
    auto *jsonLabel = new QLabel(tr("&RayJob (ray.io/v1):"), this);
    jsonLabel->setBuddy(m_json);
    layout->addWidget(jsonLabel);
    layout->addWidget(m_json, 1);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_copy);
    buttons->addWidget(m_save);
    buttons->addStretch(1);
    layout->addLayout(buttons);
    layout->addWidget(m_capsule);
    layout->addWidget(m_deadline);
    layout->addWidget(m_warnings);
    layout->addWidget(m_problems);

    connect(m_copy, &QPushButton::clicked, this, [this] { QGuiApplication::clipboard()->setText(rayJobText()); });
    connect(m_save, &QPushButton::clicked, this, [this] {
        const QString start = m_wizard->spec().sourcePath.isEmpty() ? QDir(m_wizard->spec().codePath()).filePath(QStringLiteral("jobspec.json"))
                                                                     : m_wizard->spec().sourcePath;
        const QString path = m_wizard->chooseSaveFile ? m_wizard->chooseSaveFile(this, start) : QString();
        if (path.isEmpty()) return;
        const Result<void> saved = saveJobSpec(path);
        m_problems->setText(saved ? QString() : saved.error().message);
        m_capsule->setToolTip(saved ? tr("Saved to %1").arg(path) : QString());
    });
}

ReviewPage::~ReviewPage() = default;

QString ReviewPage::rayJobText() const
{
    return m_json->toPlainText();
}

Result<void> ReviewPage::saveJobSpec(const QString &path) const
{
    Job::JobSpec spec = m_wizard->spec();
    // Paths in a JobSpec are relative to its own file.
    spec.code = QDir(QFileInfo(path).absolutePath()).relativeFilePath(spec.codePath());
    if (spec.code.isEmpty()) spec.code = QStringLiteral(".");
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(QJsonDocument(spec.toJson()).toJson(QJsonDocument::Indented)) < 0 || !file.commit()) {
        return Error::io(tr("Cannot save the JobSpec to %1: %2. Choose another folder.").arg(path, file.errorString()));
    }
    return {};
}

void ReviewPage::initializePage()
{
    m_ready = false;
    m_rayJob = {};
    m_spec = m_wizard->spec();
    m_json->setPlainText(tr("Building the Capsule to know its content address…"));
    m_capsule->clear();
    m_problems->clear();
    m_deadline->clear();
    // What is valid but will not do what it seems to: pools of two series, checkpoints the
    // playground cannot serve.
    QStringList warnings = m_spec.warnings();
    if (const QString checkpoints = Job::CheckpointForecast::forSpec(m_spec).warning(); !checkpoints.isEmpty()) warnings << checkpoints;
    m_warnings->setText(warnings.join(u'\n'));
    m_warnings->setVisible(!warnings.isEmpty());
    Q_EMIT completeChanged();
    m_builder = std::make_unique<Job::CapsuleBuilder>();
    m_work = std::make_unique<QTemporaryDir>(Job::temporaryCapsuleFolderTemplate());
    connect(m_builder.get(), &Job::CapsuleBuilder::finished, this, &ReviewPage::onCapsuleBuilt);
    m_builder->start(Job::capsuleOptionsFor(m_spec, m_work->filePath(QStringLiteral("capsule.zip")), Job::defaultRunnerPexPath()));
}

void ReviewPage::cleanupPage()
{
    m_builder.reset();   // cancels a build under way
    m_work.reset();
}

std::optional<Job::CapsuleResult> ReviewPage::builtCapsule() const
{
    if (!m_builder || m_builder->isRunning() || !m_builder->result())
        return std::nullopt;
    return *m_builder->result();
}

void ReviewPage::onCapsuleBuilt()
{
    const Result<Job::CapsuleResult> &built = m_builder->result();
    const auto fail = [this](const QString &text) {
        m_json->setPlainText(QString());
        m_problems->setText(text);
        Q_EMIT reviewReady();
    };
    if (!built) {
        fail(tr("The Capsule cannot be built: %1").arg(built.error().message));
        return;
    }
    m_capsule->setText(tr("Capsule %1…: %2 files, %3 zipped (object capsules/%4.zip). The bucket is asked for it before any upload: "
                          "an unchanged folder is not uploaded again.")
                           .arg(QString::fromLatin1(built->sha256.left(12)))
                           .arg(built->fileCount)
                           .arg(Models::CodeTreeModel::formatSize(built->size), QString::fromLatin1(built->sha256)));
    Session *session = m_wizard->session();
    if (!session || !session->isUp()) {
        fail(tr("Not connected: connect to a cluster (the profile in the toolbar) to see and submit the RayJob."));
        return;
    }
    const auto bucket = session->bucket();
    if (!bucket) {
        fail(bucket.error().message);
        return;
    }
    Job::RayJobInput input;
    input.spec = m_spec;
    input.jobId = m_wizard->jobId();
    input.settings = session->settings();
    input.operatorVersion = session->operatorVersion().assumed();
    input.capsule.sha256 = QString::fromLatin1(built->sha256);
    input.capsule.manifestSha256 = QString::fromLatin1(built->manifestSha256());
    const auto url = (*bucket)->presignedGetUrl(built->objectKey(), Job::capsuleUrlLifetimeSeconds(input.settings));
    if (!url) {
        fail(url.error().message);
        return;
    }
    input.capsule.url = *url;
    const auto rayJob = Job::RayJobBuilder::build(input);
    if (!rayJob) {
        fail(rayJob.error().message);
        return;
    }
    m_rayJob = *rayJob;
    m_json->setPlainText(QString::fromUtf8(QJsonDocument(m_rayJob).toJson(QJsonDocument::Indented)));
    const QString release = input.operatorVersion.toString();
    const int deadline = input.settings.preRunningDeadlineSeconds;
    const QString enforcedBy = session->operatorVersion().hasPreRunningDeadline()
        ? tr("KubeRay %1 enforces it (spec.preRunningDeadlineSeconds, from 1.6), and the app as well").arg(release)
        : tr("this app enforces it: KubeRay %1 predates spec.preRunningDeadlineSeconds (1.6), so it is an annotation the app's tracker reads")
              .arg(release);
    m_deadline->setText(tr("Pre-running deadline: %1 s (FORGE_KUBERAY_PRERUNNING_DEADLINE_S); %2. TTL after it ends: %3 s "
                           "(FORGE_KUBERAY_TTL_SECONDS, ttlSecondsAfterFinished, which KubeRay %4 applies).")
                            .arg(deadline)
                            .arg(enforcedBy)
                            .arg(input.settings.ttlSeconds)
                            .arg(release));
    m_ready = true;
    Q_EMIT completeChanged();
    Q_EMIT reviewReady();
}

bool ReviewPage::isComplete() const
{
    return m_ready;
}

} // namespace Starforge::Gui
