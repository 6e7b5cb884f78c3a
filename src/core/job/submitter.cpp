#include "core/job/submitter.h"

#include "core/kube/kubeclient.h"
#include "core/kube/resourcekind.h"
#include "core/kube/resources.h"
#include "core/s3/multipartupload.h"
#include "core/s3/s3client.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QNetworkReply>
#include <QTimer>

namespace Starforge::Job {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(Submitter)
};

} // namespace

Q_LOGGING_CATEGORY(lcSubmitter, "starforge.core.submitter")

int capsuleUrlLifetimeSeconds(const ClusterSettings &settings)
{
    return std::clamp(settings.preRunningDeadlineSeconds + 3600, 3600, 7 * 24 * 3600);
}

QString defaultRunnerPexPath()
{
    return QCoreApplication::applicationDirPath() + QStringLiteral("/../share/starforge/runner.pex");
}

CapsuleOptions capsuleOptionsFor(const JobSpec &spec, const QString &outputPath, const QString &runnerPexPath, const QString &sourceDir)
{
    CapsuleOptions capsule;
    capsule.sourceDir = sourceDir.isEmpty() ? spec.codePath() : sourceDir;
    capsule.outputPath = outputPath;
    capsule.jobSpecJson = spec.canonicalJson();
    capsule.runnerPexPath = runnerPexPath;
    capsule.excludePatterns = spec.excludes;
    // A jobspec.json at the folder's top is a JobSpec (this one or another of the folder's):
    // the Capsule's own jobspec.json takes its place.
    capsule.excludePatterns << QStringLiteral("/jobspec.json");
    if (!spec.sourcePath.isEmpty()) {
        const QString relative = QDir(capsule.sourceDir).relativeFilePath(spec.sourcePath);
        if (!relative.startsWith(QLatin1String("../"))) {
            capsule.excludePatterns << QLatin1Char('/') + relative;
        }
    }
    return capsule;
}

Submitter::Submitter(Kube::KubeClient *kube, S3::S3Client *s3, SubmitOptions options, QObject *parent)
    : QObject(parent)
    , m_kube(kube)
    , m_s3(s3)
    , m_options(std::move(options))
{
}

Submitter::~Submitter()
{
    if (m_kubeRequest) {
        m_kubeRequest->abort();
    }
}

void Submitter::setStage(Stage stage)
{
    if (m_stage != stage) {
        m_stage = stage;
        Q_EMIT stageChanged(stage);
    }
}

void Submitter::start()
{
    const JobSpec &spec = m_options.spec;
    QStringList problems = spec.problems();
    problems += spec.problemsWith(m_options.settings.storageShared, !m_options.settings.corpusPvc.isEmpty());
    if (!problems.isEmpty()) {
        fail(Error::invalid(problems.join(QLatin1Char('\n'))));
        return;
    }
    if (!QFileInfo(m_options.runnerPexPath).isFile()) {
        fail(Error::internal(tr("runner.pex was not found at %1; build the project (it is packed at build time).").arg(m_options.runnerPexPath)));
        return;
    }
    m_submission.jobId = m_options.jobId.isEmpty() ? RayJobBuilder::newJobId() : m_options.jobId;
    m_submission.rayJobName = RayJobBuilder::rayJobName(spec, m_submission.jobId);
    m_workDir = std::make_unique<QTemporaryDir>(temporaryCapsuleFolderTemplate());   // named for the start-up clean-up
    if (!m_workDir->isValid()) {
        fail(Error::io(tr("Cannot make a temporary folder for the Capsule: %1.").arg(m_workDir->errorString())));
        return;
    }
    setStage(Stage::Building);
    if (m_result) {
        return;
    }
    if (m_options.prebuiltCapsule && QFileInfo(m_options.prebuiltCapsule->zipPath).isFile()) {
        // Taken on the next turn, as a build's end would be: a listener of stageChanged sees
        // Building first, and may still cancel.
        QTimer::singleShot(0, this, [this] {
            if (m_result) return;
            Q_EMIT progress(m_options.prebuiltCapsule->size, m_options.prebuiltCapsule->size);
            takeCapsule(*m_options.prebuiltCapsule);
        });
        return;
    }
    const CapsuleOptions capsule = capsuleOptionsFor(spec, m_workDir->filePath(QStringLiteral("capsule.zip")), m_options.runnerPexPath);
    m_builder = std::make_unique<CapsuleBuilder>();
    connect(m_builder.get(), &CapsuleBuilder::progress, this, [this](const CapsuleProgress &p) { Q_EMIT progress(p.bytesDone, p.bytesTotal); });
    connect(m_builder.get(), &CapsuleBuilder::finished, this, &Submitter::onCapsuleBuilt);
    m_builder->start(capsule);
}

void Submitter::onCapsuleBuilt()
{
    takeCapsule(m_builder->result());
}

void Submitter::takeCapsule(const Result<CapsuleResult> &built)
{
    if (m_cancelled) {
        finish(Error::invalid(tr("Submission cancelled while the Capsule was being built; nothing was sent.")), Stage::Cancelled);
        return;
    }
    if (!built) {
        fail(built.error());
        return;
    }
    m_capsule = *built;
    m_submission.capsuleSha256 = QString::fromLatin1(built->sha256);
    m_submission.capsuleSize = built->size;
    setStage(Stage::Checking);
    if (m_result) {
        return;   // cancelled by a listener of stageChanged
    }
    // The HEAD runs under its own context: a cancel deletes it, which aborts the request.
    m_headContext = std::make_unique<QObject>();
    m_s3->headObject(built->objectKey(), m_headContext.get(), [this](Result<S3::ObjectHead> head) {
        m_headContext.release()->deleteLater();
        // The same bytes are there only when the object carries the Capsule's SHA-256, recorded
        // when it was uploaded. The size says nothing: another zip of the same size (an object
        // overwritten, an upload by another tool) would be taken for this one. Anything else
        // under the address is overwritten.
        if (head && head->size == m_submission.capsuleSize && QString::fromLatin1(head->sha256) == m_submission.capsuleSha256) {
            create(1);   // nothing to upload
        } else if (head || head.error().code == Error::Code::NotFound) {
            if (head) {
                qCInfo(lcSubmitter).noquote()
                    << QStringLiteral("The object at the Capsule's address has %1 bytes and SHA-256 %2; uploading the Capsule again.")
                           .arg(head->size)
                           .arg(head->sha256.isEmpty() ? Text::tr("(none recorded)") : QString::fromLatin1(head->sha256));
            }
            upload();
        } else {
            fail(Error::unavailable(tr("Checking the bucket for the Capsule failed: %1").arg(head.error().message)));
        }
    });
}

void Submitter::upload()
{
    setStage(Stage::Uploading);
    if (m_result) {
        return;
    }
    const CapsuleResult &built = *m_capsule;
    S3::MultipartOptions options;
    options.sha256Hex = built.sha256;   // what the next submission's HEAD compares
    m_upload.reset(m_s3->uploadFile(built.objectKey(), built.zipPath, options));
    connect(m_upload.get(), &S3::MultipartUpload::progress, this, &Submitter::progress);
    connect(m_upload.get(), &S3::MultipartUpload::finished, this, [this] {
        const Result<void> uploaded = m_upload->result();
        m_upload.release()->deleteLater();
        if (m_cancelled) {
            finish(Error::invalid(tr("Submission cancelled during the upload; the unfinished upload was aborted.")), Stage::Cancelled);
        } else if (!uploaded) {
            fail(uploaded.error());
        } else {
            m_submission.uploadedBytes = m_submission.capsuleSize;
            verifyUpload();
        }
    });
}

void Submitter::verifyUpload()
{
    // What the bucket now holds under the content address must be exactly as long as the zip,
    // and carry its SHA-256 (a concurrent upload of other bytes would carry another).
    m_headContext = std::make_unique<QObject>();
    m_s3->headObject(m_capsule->objectKey(), m_headContext.get(), [this](Result<S3::ObjectHead> head) {
        m_headContext.release()->deleteLater();
        if (!head) {
            fail(Error::unavailable(tr("The uploaded Capsule cannot be checked in the bucket: %1").arg(head.error().message)));
        } else if (head->size != m_submission.capsuleSize) {
            fail(Error::unavailable(tr("The uploaded Capsule does not check out: the bucket has %1 bytes, the Capsule %2.")
                                        .arg(head->size).arg(m_submission.capsuleSize)));
        } else if (!head->sha256.isEmpty() && QString::fromLatin1(head->sha256) != m_submission.capsuleSha256) {
            fail(Error::unavailable(tr("The uploaded Capsule does not check out: the bucket has an object with SHA-256 %1 under its "
                                       "address. Submit again.").arg(QString::fromLatin1(head->sha256))));
        } else {
            if (head->sha256.isEmpty()) {
                // The job is still safe (the runner and the init container check the bytes);
                // only the next submission of this tree cannot skip the upload.
                qCWarning(lcSubmitter) << "the bucket did not keep the Capsule's" << S3::Sha256MetadataHeader
                                       << "metadata; every submission will upload it again";
            }
            create(1);
        }
    });
}

void Submitter::create(int attempt)
{
    setStage(Stage::Creating);
    if (m_result || m_cancelled) {
        return;
    }
    if (m_rayJob.isEmpty()) {
        const auto url = m_s3->presignedGetUrl(m_capsule->objectKey(), capsuleUrlLifetimeSeconds(m_options.settings));
        if (!url) {
            fail(url.error());
            return;
        }
        RayJobInput input;
        input.spec = m_options.spec;
        input.jobId = m_submission.jobId;
        input.capsule = {m_submission.capsuleSha256, *url, QString::fromLatin1(m_capsule->manifestSha256())};
        input.settings = m_options.settings;
        input.operatorVersion = m_options.operatorVersion;
        auto built = RayJobBuilder::build(input);
        if (!built) {
            fail(built.error());
            return;
        }
        m_rayJob = *built;
    }
    Kube::ApiRequest request;
    request.method = "POST";
    request.path = Kube::ResourceKind::rayJobs().path(m_options.settings.ns);
    request.body = QJsonDocument(m_rayJob).toJson(QJsonDocument::Compact);
    request.what = tr("create the RayJob %1").arg(m_submission.rayJobName);
    request.timeoutMs = m_options.createTimeoutMs;
    m_createSent = true;
    m_kubeRequest = m_kube->send(request, this, [this, attempt](const Kube::ApiResult &result) {
        if (m_cancelled) {
            return;
        }
        if (result.ok()) {
            succeed(result.json());
            return;
        }
        const Kube::ApiError &error = *result.error;
        if (error.isTransient() || error.kind == Kube::ApiError::Kind::Conflict) {
            // It may have been created even so (a timeout after the server acted, or an earlier
            // attempt that got through): look before sending it again.
            check(attempt, error.message);
            return;
        }
        fail(error.toError());
    });
}

void Submitter::check(int attempt, const QString &why)
{
    Kube::ApiRequest request;
    request.path = Kube::ResourceKind::rayJobs().path(m_options.settings.ns, m_submission.rayJobName);
    request.what = tr("check whether the RayJob %1 was created").arg(m_submission.rayJobName);
    request.timeoutMs = m_options.createTimeoutMs;
    m_kubeRequest = m_kube->send(request, this, [this, attempt, why](const Kube::ApiResult &result) {
        if (m_cancelled) {
            return;
        }
        if (result.ok()) {
            const Kube::RayJob found = Kube::RayJob::fromJson(result.json());
            if (found.labels.value(QLatin1String(Labels::JobId)).toString() == m_submission.jobId) {
                succeed(result.json());
            } else {
                fail(Error::invalid(tr("A RayJob named %1 already exists and is not this submission; nothing was changed.")
                                        .arg(m_submission.rayJobName)));
            }
            return;
        }
        if (attempt >= m_options.createAttempts) {
            fail(Error::unavailable(tr("The RayJob could not be created after %1 attempts: %2").arg(attempt).arg(why)));
            return;
        }
        if (result.error->kind == Kube::ApiError::Kind::NotFound) {
            retryLater([this, attempt] { create(attempt + 1); });
        } else {
            retryLater([this, attempt, why] { check(attempt + 1, why); });
        }
    });
}

void Submitter::retryLater(const std::function<void()> &again)
{
    QTimer::singleShot(m_backoff.next(), this, [this, again] {
        if (!m_cancelled) {
            again();
        }
    });
}

void Submitter::succeed(const QJsonObject &created)
{
    m_submission.rayJob = created;
    finish(m_submission, Stage::Done);
}

void Submitter::fail(const Error &error)
{
    finish(error, Stage::Failed);
}

void Submitter::cancel()
{
    if (m_result || m_cancelled) {
        return;
    }
    m_cancelled = true;
    switch (m_stage) {
    case Stage::Idle:
        finish(Error::invalid(tr("Submission cancelled before it started.")), Stage::Cancelled);
        return;
    case Stage::Building:
        if (m_builder && m_builder->isRunning()) {
            m_builder->cancel();   // finished() follows
        } else {
            finish(Error::invalid(tr("Submission cancelled; nothing was sent.")), Stage::Cancelled);
        }
        return;
    case Stage::Checking:
        m_headContext.reset();   // aborts the HEAD; its callback never runs
        finish(Error::invalid(tr("Submission cancelled; nothing was sent.")), Stage::Cancelled);
        return;
    case Stage::Uploading:
        if (m_upload) {
            m_upload->cancel();    // aborts the multipart upload on the server; finished() follows
        } else {
            m_headContext.reset(); // the HEAD that verifies the upload, if it runs
            finish(Error::invalid(tr("Submission cancelled; nothing was sent.")), Stage::Cancelled);
        }
        return;
    case Stage::Creating:
        cleanUpAfterCancel();
        return;
    default:
        return;
    }
}

void Submitter::cleanUpAfterCancel()
{
    if (m_kubeRequest) {
        m_kubeRequest->abort();
    }
    if (!m_createSent) {
        finish(Error::invalid(tr("Submission cancelled; no job was created.")), Stage::Cancelled);
        return;
    }
    // The create may have reached the server: delete what carries this submission's name, and
    // look again, since an aborted create can still land after the delete.
    Kube::ApiRequest request;
    request.method = "DELETE";
    request.path = Kube::ResourceKind::rayJobs().path(m_options.settings.ns, m_submission.rayJobName);
    request.body = R"({"propagationPolicy":"Background"})";
    request.what = tr("delete the RayJob %1").arg(m_submission.rayJobName);
    auto remaining = std::make_shared<int>(3);
    auto attemptDelete = std::make_shared<std::function<void()>>();
    *attemptDelete = [this, request, remaining, attemptDelete] {
        m_kube->send(request, this, [this, remaining, attemptDelete](const Kube::ApiResult &deleted) {
            Kube::ApiRequest look;
            look.path = Kube::ResourceKind::rayJobs().path(m_options.settings.ns, m_submission.rayJobName);
            m_kube->send(look, this, [this, remaining, attemptDelete, deleted](const Kube::ApiResult &found) {
                const bool gone = found.error && found.error->kind == Kube::ApiError::Kind::NotFound;
                if (gone || *remaining <= 1) {
                    *attemptDelete = {};   // the retry loop ends: break its reference to itself
                }
                if (gone) {
                    finish(Error::invalid(tr("Submission cancelled; the RayJob %1 was deleted.").arg(m_submission.rayJobName)), Stage::Cancelled);
                } else if (--*remaining > 0) {
                    QTimer::singleShot(200, this, [attemptDelete] { (*attemptDelete)(); });
                } else {
                    finish(Error::unavailable(tr("Submission cancelled, but the RayJob %1 could not be deleted: %2")
                                                  .arg(m_submission.rayJobName, deleted.error ? deleted.error->message : found.error ? found.error->message : tr("it is still there"))),
                           Stage::Cancelled);
                }
            });
        });
    };
    (*attemptDelete)();
}

void Submitter::finish(Result<Submission> result, Stage stage)
{
    if (m_result) {
        return;
    }
    m_result = std::move(result);
    m_workDir.reset();   // the local zip goes; the bucket keeps the content-addressed copy
    setStage(stage);
    Q_EMIT finished();
}

} // namespace Starforge::Job
