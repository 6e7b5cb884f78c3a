#pragma once

// The whole sandbox cluster in one object: the store, the API server over TLS, the fleet, and
// the connection file that tells clients where it is. starforge-sandbox is a thin main around
// this; tests that need a cluster in-process use it directly.
//
// Clients can authenticate in the three ways real clusters ask for, each a context of the
// kubeconfig it writes: the sandbox's bearer token (starforge-sandbox, the current context), a
// client certificate from the sandbox's CA (starforge-sandbox-cert), and an exec credential
// plugin, starforge-sandbox-credential (starforge-sandbox-exec).

#include "core/util/result.h"
#include "sandbox/api/apiserver.h"
#include "sandbox/faults.h"
#include "sandbox/tls/certificates.h"

#include <QHostAddress>
#include <QObject>
#include <QString>
#include <QUrl>
#include <QVersionNumber>

#include <memory>
#include <optional>

namespace Starforge::Sandbox {

class ObjectStore;
class Authorizer;
class EventRecorder;
class Scheduler;
class Kubelet;
class JobController;
class RayClusterController;
class RayJobController;
class QuotaController;
class ServiceAccountTokenController;
class S3Server;
namespace Http {
class Server;
}

struct SandboxOptions
{
    QHostAddress address = QHostAddress::LocalHost;
    quint16 port = 0;
    QString connectionFile;      // written once the sandbox is ready; removed at stop
    QString fleet;               // FleetSpec text; empty: the default fleet
    quint32 seed = 1;
    QString rbacFile;
    Faults faults;
    QString ns = QStringLiteral("starforge");
    QString seriesLabel = QStringLiteral("starforge/gpu-series");
    int bookmarkIntervalMs = 60000;
    // Images "already on the machine"; empty: the FORGE_IMAGE_* defaults.
    QStringList presentImages;
    int crashLoopBackoffMs = 10000;
    int imagePullBackoffMs = 10000;
    int jobRetryBackoffMs = 10000;
    // The RayJob operator's settings (KubeRay's defaults): how long the dashboard may be
    // unreachable (RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS), how long a terminal Ray status may wait
    // for the deployment status (RAYJOB_DEPLOYMENT_STATUS_TRANSITION_GRACE_PERIOD_SECONDS), and
    // how long a finished submitter waits for Ray (a constant, 30 s, in the operator).
    int rayJobStatusCheckTimeoutSeconds = 300;
    int rayJobTransitionGraceSeconds = 300;
    int rayJobSubmitterFinishedTimeoutSeconds = 30;
    QStringList vllmImages;      // besides the FORGE_IMAGE_VLLM default
    // Images under this prefix need an imagePullSecrets Secret (kubernetes.io/dockerconfigjson)
    // with credentials for its host, else the pull fails with the runtime's 401; empty: none.
    QString privateRegistry = QStringLiteral("registry.sandbox.internal/private/");
    double tokenRate = 50;       // the vLLM stand-in's generation speed
    // Each training step of the NeMo-RL stand-in, in seconds (its STARFORGE_FAKE_STEP_SECONDS in
    // every container); unset: the stand-in's own default, 0.2 s. Tests that run the examples'
    // hundreds of steps unchanged make it short.
    std::optional<double> nemoRlStepSeconds;
    QString bucket = QStringLiteral("starforge");
    // The KubeRay release to be (1.4 to 1.7): the RayJob CRD it serves and admits against, see
    // crds/kuberaycrds.h. Older releases lack fields, so e.g. preRunningDeadlineSeconds is pruned
    // below 1.6 and the controller never sees it.
    QVersionNumber kuberayVersion = QVersionNumber(1, 7);
    // The operator's DELETE_RAYJOB_CR_AFTER_JOB_FINISHES=true: shutdownAfterJobFinishes deletes
    // the RayJob itself at the TTL, not only its RayCluster.
    bool deleteRayJobAfterJobFinishes = false;
    // The operator's ENABLE_INIT_CONTAINER_INJECTION and ENABLE_PROBES_INJECTION (on unless
    // "false"): workers' wait-gcs-ready init container, the Ray containers' probes.
    bool injectInitContainer = true;
    bool injectProbes = true;
    // The operator's RayJobDeletionPolicy feature gate (spec.deletionStrategy); unset: on from
    // 1.6 (beta, on by default), off below.
    std::optional<bool> rayJobDeletionPolicy;
    // The lifetime of the tokens starforge-sandbox-credential mints (F.credential.json); 0: they
    // never expire.
    qint64 tokenTtlSeconds = 3600;
};

class Sandbox final : public QObject
{
    Q_OBJECT
public:
    explicit Sandbox(QObject *parent = nullptr);
    ~Sandbox() override;

    Result<void> start(const SandboxOptions &options);
    void stop();

    QUrl apiServerUrl() const;
    QByteArray token() const { return m_token; }
    QByteArray caCertificatePem() const { return m_caPem; }
    QString caFile() const { return m_caFile; }
    QString kubeconfigFile() const { return m_kubeconfigFile; }
    ObjectStore *store() const { return m_store.get(); }
    ApiServer *api() const { return m_api.get(); }
    QUrl s3Endpoint() const;
    QByteArray s3AccessKey() const { return m_s3AccessKey; }
    QByteArray s3SecretKey() const { return m_s3SecretKey; }
    QString bucket() const { return m_bucket; }
    S3Server *s3() const { return m_s3.get(); }
    // FORGE_NEMO_RL_DIR and FORGE_STORAGE_ROOT of the connection file: the NeMo-RL stand-in
    // (examples/run_<algorithm>.py) and the storage root inside the state directory.
    QString nemoRlDir() const { return m_nemoRlDir; }
    QString storageRoot() const { return m_storageRoot; }
    // The directory behind the corpus claim (corpusClaim(), the connection file's
    // FORGE_K8S_CORPUS_PVC), inside the state directory: jobs with "corpus": true mount it
    // read-only at /corpus, so every JobSpec runs here as it would on a cluster with a corpus.
    QString corpusDir() const { return m_corpusDir; }
    static QString corpusClaim() { return QStringLiteral("starforge-corpus"); }
    QVersionNumber kuberayVersion() const { return m_kuberayVersion; }
    // F.client.crt and F.client.key: CN=starforge-cert-user, O=system:masters, 30 days.
    QString clientCertFile() const { return m_clientCertFile; }
    QString clientKeyFile() const { return m_clientKeyFile; }
    // F.credential.json, the state starforge-sandbox-credential reads (--state).
    QString credentialStateFile() const { return m_credentialStateFile; }
    // The credential tool's absolute path: beside this executable when installed, else the build's.
    static QString credentialTool();
    // starforge-sandbox-shim, which every container runs under: found as the credential tool is.
    static QString shim();
    // Another certificate from the sandbox's CA (for tests: other users and groups, an expired one).
    Result<Tls::Issued> issueClientCertificate(const QString &commonName, const QStringList &organizations,
                                               const QDateTime &notAfter) const;

private:
    Result<void> writeFiles(const SandboxOptions &options);

    std::unique_ptr<ObjectStore> m_store;
    std::unique_ptr<Authorizer> m_authorizer;
    std::unique_ptr<ApiServer> m_api;
    std::unique_ptr<EventRecorder> m_events;
    std::unique_ptr<Scheduler> m_scheduler;
    std::unique_ptr<Kubelet> m_kubelet;
    std::unique_ptr<JobController> m_jobs;
    std::unique_ptr<RayClusterController> m_rayClusters;
    std::unique_ptr<RayJobController> m_rayJobs;
    std::unique_ptr<QuotaController> m_quotas;
    std::unique_ptr<ServiceAccountTokenController> m_serviceAccountTokens;
    std::unique_ptr<Http::Server> m_server;
    std::unique_ptr<S3Server> m_s3;
    std::unique_ptr<Http::Server> m_s3Server;
    QByteArray m_s3AccessKey;
    QByteArray m_s3SecretKey;
    QString m_bucket;
    QByteArray m_token;
    QByteArray m_caPem;
    Tls::Material m_tls;
    QByteArray m_credentialSecret;
    qint64 m_tokenTtlSeconds = 3600;
    QString m_caFile;
    QString m_kubeconfigFile;
    QString m_clientCertFile;
    QString m_clientKeyFile;
    QString m_credentialStateFile;
    QStringList m_writtenFiles;
    QString m_connectionFile;
    QString m_stateDir;
    QString m_storageRoot;
    QString m_corpusDir;
    QString m_nemoRlDir;
    QVersionNumber m_kuberayVersion;
    QStringList m_presentImages;
};

// Connection file keys, shared with the clients that read it.
namespace ConnectionFile {
inline constexpr char ApiServer[] = "apiServer";
inline constexpr char CaFile[] = "caFile";
inline constexpr char Token[] = "token";
inline constexpr char Namespace[] = "namespace";
inline constexpr char Kubeconfig[] = "kubeconfig";
inline constexpr char Forge[] = "forge";
inline constexpr char S3Endpoint[] = "s3Endpoint";
inline constexpr char Bucket[] = "bucket";
inline constexpr char AccessKey[] = "accessKey";
inline constexpr char SecretKey[] = "secretKey";
// The client certificate and key (PEM files) of the kubeconfig's starforge-sandbox-cert user.
inline constexpr char ClientCertFile[] = "clientCertFile";
inline constexpr char ClientKeyFile[] = "clientKeyFile";
// The kubeconfig's user.exec of starforge-sandbox-exec, as a JSON object with the kubeconfig's
// field names (apiVersion, command, args, interactiveMode, provideClusterInfo, installHint).
inline constexpr char ExecPlugin[] = "execPlugin";
// starforge-sandbox-credential's absolute path.
inline constexpr char CredentialTool[] = "credentialTool";
} // namespace ConnectionFile

// The kubeconfig's contexts (each with a user of the same name but the first, sandbox-admin).
namespace KubeconfigContext {
inline constexpr char Token[] = "starforge-sandbox";
inline constexpr char Cert[] = "starforge-sandbox-cert";
inline constexpr char Exec[] = "starforge-sandbox-exec";
} // namespace KubeconfigContext

} // namespace Starforge::Sandbox
