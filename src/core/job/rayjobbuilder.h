#pragma once

// The RayJob for a JobSpec and its uploaded Capsule (docs/design.md, "The submit path", step 4;
// docs/jobspec.md maps every field). Pure: the same input gives the same object, so the
// wizard's review page, `starforge-cli manifest` and the submitter show and send one thing.

#include "core/config/settingsschema.h"
#include "core/job/jobspec.h"
#include "core/util/result.h"

#include <QJsonObject>
#include <QString>
#include <QUrl>
#include <QVersionNumber>

namespace Starforge::Config {
class EffectiveConfig;
}

namespace Starforge::Job {

// Labels and annotations by which the app finds its own objects.
namespace Labels {
inline constexpr char ManagedBy[] = "app.kubernetes.io/managed-by";
inline constexpr char ManagedByValue[] = "starforge";
inline constexpr char JobId[] = "starforge.dev/job-id";
inline constexpr char JobName[] = "starforge.dev/job-name";
inline constexpr char Pool[] = "starforge.dev/pool";
inline constexpr char CapsuleSha256[] = "starforge.dev/capsule-sha256";
// The SHA-256 of the Capsule's manifest.json, which the runner checks (docs/capsule.md, "Code
// integrity"); also in every Ray container as FORGE_MANIFEST_SHA256.
inline constexpr char ManifestSha256[] = "starforge.dev/manifest-sha256";
inline constexpr char JobSpec[] = "starforge.dev/jobspec";
// Whose the job is: the label holds ownerLabelValue() (for kubectl -l), the annotation of the
// same key the owner's name (ownership.h).
inline constexpr char Owner[] = "starforge.dev/owner";
// The bucket the job's archive goes to (archiveBucketAddress()).
inline constexpr char ArchiveBucket[] = "starforge.dev/archive-bucket";
// The pre-running deadline the job was submitted with, for the owner's tracker on any KubeRay
// (spec.preRunningDeadlineSeconds exists from 1.6 only).
inline constexpr char PreRunningDeadline[] = "starforge.dev/prerunning-deadline-seconds";
// Set just before a user's delete: the job goes without an archive, and trackers let it go.
inline constexpr char DeleteRequested[] = "starforge.dev/delete-requested";
} // namespace Labels

// The FORGE_* settings the manifest depends on. A default-made one holds the settings table's
// defaults (the table is the one place a default is written).
struct ClusterSettings
{
    QString ns = def("FORGE_K8S_NAMESPACE");
    QString image = def("FORGE_IMAGE_NEMO_RL");
    QString vllmImage = def("FORGE_IMAGE_VLLM");   // the playground's pods
    QString nemoRlDir = def("FORGE_NEMO_RL_DIR");
    QString gpuNodeLabel = def("FORGE_K8S_GPU_NODE_LABEL");
    QString shmSize = def("FORGE_K8S_SHM_SIZE");
    QString storageRoot = def("FORGE_STORAGE_ROOT");
    QString storagePvc = def("FORGE_K8S_STORAGE_PVC");
    QString storageMount = def("FORGE_K8S_STORAGE_MOUNT");   // empty: storageRoot
    bool storageShared = Config::SettingsSchema::defaultBoolean(QStringLiteral("FORGE_K8S_STORAGE_SHARED"));
    QString corpusPvc = def("FORGE_K8S_CORPUS_PVC");
    QString rayVersion = def("FORGE_KUBERAY_RAY_VERSION");
    int ttlSeconds = Config::SettingsSchema::defaultInteger(QStringLiteral("FORGE_KUBERAY_TTL_SECONDS"));
    int preRunningDeadlineSeconds = Config::SettingsSchema::defaultInteger(QStringLiteral("FORGE_KUBERAY_PRERUNNING_DEADLINE_S"));
    bool gpuPassthrough = Config::SettingsSchema::defaultBoolean(QStringLiteral("FORGE_K8S_GPU_PASSTHROUGH"));
    // Whose the jobs are and where they are archived (ownership.h). fromConfig takes FORGE_OWNER
    // and the S3 endpoint and bucket; a Session puts the cluster's name for the user in owner
    // when FORGE_OWNER is empty. The builder refuses a job without an owner.
    QString owner;
    QString archiveBucket;

    static ClusterSettings fromConfig(const Config::EffectiveConfig &config);

private:
    static QString def(const char *key) { return Config::SettingsSchema::defaultValue(QLatin1String(key)); }
};

struct CapsuleLocation
{
    QString sha256;              // hex of the zip bytes
    QUrl url;                    // presigned https URL, or an http URL on HTTP-only storage
    QString manifestSha256;      // hex of manifest.json's bytes (CapsuleResult::manifestSha256())
};

struct RayJobInput
{
    JobSpec spec;
    QString jobId;               // six lowercase letters and digits (newJobId())
    CapsuleLocation capsule;
    ClusterSettings settings;
    QVersionNumber operatorVersion = QVersionNumber(1, 7); // preRunningDeadlineSeconds from 1.6
};

class RayJobBuilder
{
public:
    // The RayJob object, or every reason it cannot be built (the JobSpec's own problems, those
    // against the settings, a bad job id or Capsule location).
    static Result<QJsonObject> build(const RayJobInput &input);

    static QString rayJobName(const JobSpec &spec, const QString &jobId);
    // The Ray custom resource that pins work to a pool: "starforge_pool_<name>".
    static QString poolResource(const Pool &pool);
    static QString newJobId();
    // True for text shaped like newJobId()'s: six characters of its alphabet.
    static bool isJobId(const QString &text);
    // Where the init container (Cluster::CapsuleInitContainerName, which the diagnosis engine
    // recognises) puts the Capsule on HTTP-only storage, for a file:// working_dir.
    static QString capsuleMountPath() { return QStringLiteral("/starforge-capsule"); }
};

} // namespace Starforge::Job
