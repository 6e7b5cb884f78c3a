#pragma once

// Submits one JobSpec, the submit path of docs/design.md in one direction: validate -> build the
// Capsule -> HEAD it in the bucket (content address: an unchanged tree uploads nothing) ->
// multipart upload -> presign a GET that outlives the pre-running deadline -> create the
// RayJob.
//
// Safe to retry: the job id (and so the RayJob's name) is fixed before anything is sent, and a
// create that timed out or failed in transit is checked with a GET before it is repeated, so a
// job is never created twice. Cancel at any step leaves nothing behind: the Capsule build stops
// without a file, an unfinished multipart upload is aborted on the server, and a RayJob whose
// create was already sent is deleted. A Capsule that finished uploading stays in the bucket: it
// is content-addressed and another job may run from the same bytes.

#include "core/job/capsule.h"
#include "core/job/jobspec.h"
#include "core/job/rayjobbuilder.h"
#include "core/net/backoff.h"
#include "core/util/result.h"

#include <QObject>
#include <QPointer>
#include <QTemporaryDir>
#include <QUrl>
#include <QVersionNumber>

#include <functional>

#include <memory>
#include <optional>

namespace Starforge::Kube {
class KubeClient;
}
namespace Starforge::S3 {
class S3Client;
class S3Reply;
class MultipartUpload;
}
class QNetworkReply;

namespace Starforge::Job {

// The Capsule of a JobSpec: its code folder, excludes and canonical jobspec.json. The JobSpec
// file often sits in the code folder, beside others (jobspec.json, a debug variant); the
// Capsule carries the canonical form of the one submitted instead, so that file and a
// top-level jobspec.json stay out. sourceDir: the folder to pack when not the JobSpec's own code
// folder (`starforge-cli capsule build DIR --spec SPEC`). Every path that builds a Capsule (the
// submitter, `capsule build`, `manifest`, the wizard) comes through here.
CapsuleOptions capsuleOptionsFor(const JobSpec &spec, const QString &outputPath, const QString &runnerPexPath, const QString &sourceDir = {});

// runner.pex as installed beside the executables: <bin>/../share/starforge/runner.pex.
QString defaultRunnerPexPath();

// How long the Capsule's presigned URL lives: it must still work when Ray's pods finally start,
// which the pre-running deadline bounds; an hour on top covers a slow start. S3 allows at most
// seven days.
int capsuleUrlLifetimeSeconds(const ClusterSettings &settings);

struct SubmitOptions
{
    JobSpec spec;
    ClusterSettings settings;
    QVersionNumber operatorVersion = QVersionNumber(1, 7);
    QString runnerPexPath;        // the built runner.pex
    QString jobId;                // empty: a new one (give the same one to retry a submission)
    int createTimeoutMs = 30000;
    int createAttempts = 4;       // creates and checks, in all, before giving up
    // The Capsule of this spec, already built (the wizard's review page built it to show the
    // exact RayJob): sent as it is while its zip is there, so what was reviewed is what runs and
    // nothing is hashed and packed twice. Otherwise the Capsule is built here.
    std::optional<CapsuleResult> prebuiltCapsule;
};

struct Submission
{
    QString jobId;
    QString rayJobName;
    QString capsuleSha256;
    qint64 capsuleSize = 0;
    qint64 uploadedBytes = 0;     // 0 when the Capsule was already in the bucket
    QJsonObject rayJob;           // as created
};

class Submitter final : public QObject
{
    Q_OBJECT
public:
    enum class Stage { Idle, Building, Checking, Uploading, Creating, Done, Failed, Cancelled };
    Q_ENUM(Stage)

    Submitter(Kube::KubeClient *kube, S3::S3Client *s3, SubmitOptions options, QObject *parent = nullptr);
    ~Submitter() override;

    void start();
    // Stops at the current step and removes what this submission made; finished() follows.
    void cancel();

    Stage stage() const { return m_stage; }
    QString jobId() const { return m_submission.jobId; }
    // Valid after finished().
    const Result<Submission> &result() const { return *m_result; }

Q_SIGNALS:
    void stageChanged(Starforge::Job::Submitter::Stage stage);
    // Bytes of the current step (hashing and packing, or uploading).
    void progress(qint64 done, qint64 total);
    void finished();

private:
    void setStage(Stage stage);
    void onCapsuleBuilt();
    void takeCapsule(const Result<CapsuleResult> &built);
    void upload();
    void create(int attempt);
    void check(int attempt, const QString &why);
    void retryLater(const std::function<void()> &again);
    void verifyUpload();
    void succeed(const QJsonObject &created);
    void fail(const Error &error);
    void finish(Result<Submission> result, Stage stage);
    void cleanUpAfterCancel();

    Kube::KubeClient *m_kube;
    S3::S3Client *m_s3;
    SubmitOptions m_options;
    Stage m_stage = Stage::Idle;
    Submission m_submission;
    QJsonObject m_rayJob;
    std::optional<Result<Submission>> m_result;
    std::unique_ptr<QTemporaryDir> m_workDir;
    std::unique_ptr<CapsuleBuilder> m_builder;
    std::optional<CapsuleResult> m_capsule;    // built (or given), once the Building stage is over
    std::unique_ptr<S3::MultipartUpload> m_upload;
    std::unique_ptr<QObject> m_headContext;    // the HEAD in flight runs under it; deleting it aborts
    QPointer<QNetworkReply> m_kubeRequest;     // the create, check or delete in flight
    QUrl m_capsuleUrl;
    Net::Backoff m_backoff;        // between create and check attempts
    bool m_createSent = false;
    bool m_cancelled = false;
};

} // namespace Starforge::Job
