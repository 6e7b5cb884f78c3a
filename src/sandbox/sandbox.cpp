#include "sandbox/sandbox.h"

#include "core/config/settingsschema.h"
#include "sandbox/api/authorizer.h"
#include "sandbox/controllers/serviceaccounttokens.h"
#include "sandbox/api/status.h"
#include "sandbox/api/structuralschema.h"
#include "sandbox/cluster/eventrecorder.h"
#include "sandbox/cluster/fleet.h"
#include "sandbox/cluster/kubelet.h"
#include "sandbox/cluster/resourcequota.h"
#include "sandbox/cluster/scheduler.h"
#include "sandbox/controllers/controllerutil.h"
#include "sandbox/controllers/jobcontroller.h"
#include "sandbox/cluster/eviction.h"
#include "sandbox/controllers/rayclustercontroller.h"
#include "sandbox/controllers/rayjobcontroller.h"
#include "sandbox/credential/credentialstate.h"
#include "sandbox/credential/exectoken.h"
#include "sandbox/crds/kuberaycrds.h"
#include "sandbox/http/httpserver.h"
#include "sandbox/s3/s3server.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"
#include "sandbox/tls/certificates.h"
#include "sandbox/util/ownerfiles.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QRandomGenerator>
#include <QSaveFile>
#include <QSslCertificate>
#include <QSet>
#include <QCoreApplication>
#include <QJsonArray>
#include <QTimer>

Q_LOGGING_CATEGORY(lcSandbox, "starforge.sandbox")

namespace Starforge::Sandbox {

namespace {

Result<void> writeFile(const QString &path, const QByteArray &data)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        return Error::io(QStringLiteral("cannot write %1: %2").arg(path, file.errorString()));
    }
    file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    file.write(data);
    if (!file.commit()) {
        return Error::io(QStringLiteral("cannot write %1: %2").arg(path, file.errorString()));
    }
    return {};
}

QByteArray randomToken()
{
    QByteArray bytes(24, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(bytes.data()), bytes.size() / 4);
    return bytes.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals);
}

// The `ray` stand-in: next to an installed tree, else in the build tree.
QString toolsDir()
{
    const QString installed = QCoreApplication::applicationDirPath() + QStringLiteral("/../share/starforge-sandbox/bin");
    if (QFileInfo::exists(installed + QStringLiteral("/ray"))) {
        return QDir::cleanPath(installed);
    }
    return QStringLiteral(STARFORGE_SANDBOX_BUILD_TOOLS_DIR);
}

// A YAML scalar that reads back as exactly this string (a JSON string is a YAML double-quoted one),
// so paths with spaces, colons or '#' survive.
QString yamlString(const QString &value)
{
    const QByteArray array = QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact);
    return QString::fromUtf8(array.mid(1, array.size() - 2));
}

// The NeMo-RL stand-in, beside the tools in both layouts (share/starforge-sandbox/nemo-rl).
QString nemoRlStandInDir()
{
    return QDir::cleanPath(toolsDir() + QStringLiteral("/../nemo-rl"));
}

// A CRD's v1 schema as a KubeRay release serves it, built once per process and release.
const StructuralSchema *crdSchema(const QString &resource, const QVersionNumber &kuberay)
{
    static QHash<QString, std::optional<StructuralSchema>> schemas;
    const QString key = resource + u'@' + kuberay.toString();
    auto it = schemas.find(key);
    if (it == schemas.end()) {
        std::optional<StructuralSchema> schema;
        if (auto parsed = StructuralSchema::fromCrd(KubeRayCrds::crd(resource, kuberay), QStringLiteral("v1"))) {
            schema = *parsed;
        }
        it = schemas.insert(key, schema);
    }
    return it->has_value() ? &**it : nullptr;
}

std::optional<QJsonObject> admitCustomResource(const ResourceType &type, QJsonObject &object, const QString &fieldValidation,
                                               QStringList &warnings, const QVersionNumber &kuberay)
{
    const StructuralSchema *schema = crdSchema(type.plural, kuberay);
    if (!schema) {
        return Status::internalError(QStringLiteral("the sandbox has no schema for %1").arg(type.qualifiedName()));
    }
    const QString name = object.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString();
    const StructuralSchema::Outcome outcome = schema->admit(object);
    if (!outcome.unknownFields.isEmpty()) {
        if (fieldValidation == QLatin1String("Strict")) {
            QStringList parts;
            for (const QString &f : outcome.unknownFields) parts << QStringLiteral("unknown field \"%1\"").arg(f);
            return Status::badRequest(QStringLiteral("%1 in version \"%2\" cannot be handled as a %3: strict decoding error: %4")
                                          .arg(type.kind, type.apiVersion(), type.kind, parts.join(QStringLiteral(", "))));
        }
        if (fieldValidation == QLatin1String("Warn")) {
            for (const QString &f : outcome.unknownFields) warnings << QStringLiteral("unknown field \"%1\"").arg(f);
        }
    }
    if (!outcome.causes.isEmpty()) {
        // "RayJob.ray.io \"x\" is invalid: …", with details naming the plain kind.
        QJsonObject status = Status::invalid(type.kind + u'.' + type.group, type.group, name, outcome.causes);
        QJsonObject details = status.value(QStringLiteral("details")).toObject();
        details.insert(QStringLiteral("kind"), type.kind);
        status.insert(QStringLiteral("details"), details);
        return status;
    }
    return std::nullopt;
}

// The API server's handling of a Secret: stringData merged into data (base64) and dropped, the
// type defaulted to Opaque, and the docker config types' required key.
std::optional<QJsonObject> admitSecret(QJsonObject &object)
{
    QJsonObject data = object.value(QStringLiteral("data")).toObject();
    const QJsonObject stringData = object.value(QStringLiteral("stringData")).toObject();
    for (auto it = stringData.begin(); it != stringData.end(); ++it) {
        data.insert(it.key(), QString::fromLatin1(it.value().toString().toUtf8().toBase64()));
    }
    object.remove(QStringLiteral("stringData"));
    if (!data.isEmpty()) {
        object.insert(QStringLiteral("data"), data);
    }
    const QString type = object.value(QStringLiteral("type")).toString();
    if (type.isEmpty()) {
        object.insert(QStringLiteral("type"), QStringLiteral("Opaque"));
    }
    const QString name = object.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString();
    // The API server's validation of a token Secret: it must name its ServiceAccount.
    if (type == QLatin1String(ServiceAccountTokenController::TokenType)
        && object.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("annotations")).toObject().value(
               QLatin1String(ServiceAccountTokenController::NameAnnotation)).toString().isEmpty()) {
        return Status::invalid(QStringLiteral("Secret"), QString(), name,
                               QJsonArray{Status::cause(QStringLiteral("FieldValueRequired"),
                                                        QStringLiteral("metadata.annotations[kubernetes.io/service-account.name]"),
                                                        QStringLiteral("Required value"))});
    }
    for (const auto &[secretType, key] : {std::pair{"kubernetes.io/dockerconfigjson", ".dockerconfigjson"}, std::pair{"kubernetes.io/dockercfg", ".dockercfg"}}) {
        if (type == QLatin1String(secretType) && !data.contains(QLatin1String(key))) {
            return Status::invalid(QStringLiteral("Secret"), QString(), name,
                                   QJsonArray{Status::cause(QStringLiteral("FieldValueRequired"), QStringLiteral("data[%1]").arg(QLatin1String(key)),
                                                            QStringLiteral("Required value"))});
        }
    }
    return std::nullopt;
}

QJsonObject namespaceObject(const QString &name)
{
    return QJsonObject{{QStringLiteral("apiVersion"), QStringLiteral("v1")},
                       {QStringLiteral("kind"), QStringLiteral("Namespace")},
                       {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name},
                                                                {QStringLiteral("labels"), QJsonObject{{QStringLiteral("kubernetes.io/metadata.name"), name}}}}},
                       {QStringLiteral("spec"), QJsonObject{{QStringLiteral("finalizers"), QJsonArray{QStringLiteral("kubernetes")}}}},
                       {QStringLiteral("status"), QJsonObject{{QStringLiteral("phase"), QStringLiteral("Active")}}}};
}

} // namespace

Sandbox::Sandbox(QObject *parent) : QObject(parent) {}

Sandbox::~Sandbox()
{
    stop();
}

Result<void> Sandbox::start(const SandboxOptions &options)
{
    if (!options.address.isLoopback()) {
        return Error::invalid(QStringLiteral("the sandbox listens on loopback addresses only (127.0.0.1 or ::1), not %1")
                                  .arg(options.address.toString()));
    }
    if (!KubeRayCrds::isSupported(options.kuberayVersion)) {
        return Error::invalid(QStringLiteral("the sandbox can be KubeRay %1 to %2, not %3")
                                  .arg(KubeRayCrds::Oldest.toString(), KubeRayCrds::Newest.toString(), options.kuberayVersion.toString()));
    }
    if (options.connectionFile.isEmpty()) {
        return Error::invalid(QStringLiteral("the sandbox needs --connection-file FILE to tell clients where it is"));
    }
    auto fleet = FleetSpec::parse(options.fleet.isEmpty() ? FleetSpec::defaultSpec() : options.fleet);
    if (!fleet) {
        return fleet.error();
    }

    if (options.tokenTtlSeconds < 0) {
        return Error::invalid(QStringLiteral("the token lifetime is a number of seconds, 0 for tokens that never expire, not %1")
                                  .arg(options.tokenTtlSeconds));
    }

    if (options.nemoRlStepSeconds && !(*options.nemoRlStepSeconds >= 0)) {
        return Error::invalid(QStringLiteral("the NeMo-RL stand-in's step time is a number of seconds, 0 or more, not %1")
                                  .arg(*options.nemoRlStepSeconds));
    }

    m_token = randomToken();
    m_credentialSecret = QByteArray(32, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(m_credentialSecret.data()), m_credentialSecret.size() / 4);
    m_tokenTtlSeconds = options.tokenTtlSeconds;
    m_store = std::make_unique<ObjectStore>();
    m_authorizer = std::make_unique<Authorizer>(m_token);
    m_authorizer->acceptExecTokens(m_credentialSecret);
    if (!options.rbacFile.isEmpty()) {
        if (auto loaded = m_authorizer->loadRbacFile(options.rbacFile); !loaded) {
            return loaded.error();
        }
    }
    m_api = std::make_unique<ApiServer>(m_store.get(), m_authorizer.get());
    m_api->setFaults(options.faults);
    m_api->setSeed(options.seed);
    m_api->setBookmarkIntervalMs(options.bookmarkIntervalMs);

    const QString host = options.address.toString();
    auto tls = Tls::generate({host == QLatin1String("::1") ? host : QStringLiteral("127.0.0.1")}, {QStringLiteral("localhost")});
    if (!tls) {
        return tls.error();
    }
    m_tls = *tls;
    m_caPem = tls->caCertificatePem;
    // ServiceAccount tokens, signed with a key of this start's own, and RBAC objects count.
    QByteArray serviceAccountKey(32, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(serviceAccountKey.data()), serviceAccountKey.size() / 4);
    m_authorizer->useObjectStore(m_store.get(), serviceAccountKey);
    m_serviceAccountTokens = std::make_unique<ServiceAccountTokenController>(m_store.get(), serviceAccountKey, m_caPem);
    m_server = std::make_unique<Http::Server>([this](const Http::Request &request, Http::Responder *responder) {
        m_api->handle(request, responder);
    });
    m_server->setTls(QSslCertificate(tls->serverCertificatePem, QSsl::Pem), QSslKey(tls->serverKeyPem, QSsl::Ec, QSsl::Pem));
    // Client certificates are checked against the cluster CA, as kubeadm's --client-ca-file is.
    m_server->setClientCa(QSslCertificate::fromData(tls->caCertificatePem, QSsl::Pem));
    if (!m_server->listen(options.address, options.port)) {
        return Error::unavailable(QStringLiteral("cannot listen on %1:%2: %3").arg(host).arg(options.port).arg(m_server->errorString()));
    }
    m_api->setServerAddress(QStringLiteral("%1:%2").arg(host).arg(m_server->port()));

    // S3 on its own port, same CA, its own key pair.
    m_bucket = options.bucket;
    m_s3AccessKey = "SANDBOX" + randomToken().left(13).toUpper();
    m_s3SecretKey = randomToken() + randomToken().left(8);
    S3Server::Options s3;
    s3.dataDir = QFileInfo(options.connectionFile).absoluteFilePath() + QStringLiteral(".state/s3");
    s3.accessKey = m_s3AccessKey;
    s3.secretKey = m_s3SecretKey;
    s3.buckets = {m_bucket};
    s3.seed = options.seed;
    s3.partFailureRate = [this] { return m_api->faults().s3PartFailureRate; };
    m_s3 = std::make_unique<S3Server>(s3);
    m_s3->setHoldUploads(m_api->faults().holdS3Uploads);
    connect(m_api.get(), &ApiServer::faultsChanged, m_s3.get(), [this](const Faults &faults) { m_s3->setHoldUploads(faults.holdS3Uploads); });
    m_s3Server = std::make_unique<Http::Server>([this](const Http::Request &request, Http::Responder *responder) {
        m_s3->handle(request, responder);
    });
    m_s3Server->setTls(QSslCertificate(tls->serverCertificatePem, QSsl::Pem), QSslKey(tls->serverKeyPem, QSsl::Ec, QSsl::Pem));
    if (!m_s3Server->listen(options.address, 0)) {
        return Error::unavailable(QStringLiteral("cannot listen for S3 on %1: %2").arg(host, m_s3Server->errorString()));
    }

    const ResourceType *namespaces = ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("namespaces"));
    for (const QString &ns : {QStringLiteral("default"), QStringLiteral("kube-system"), QStringLiteral("background"), options.ns}) {
        (void)m_store->create(*namespaces, namespaceObject(ns));
    }
    createFleet(*m_store, *fleet, options.seriesLabel, QStringLiteral("background"));
    // KubeRay's CRDs, installed as the chosen release installs them.
    m_kuberayVersion = QVersionNumber(options.kuberayVersion.majorVersion(), options.kuberayVersion.minorVersion());
    const ResourceType *crds = ResourceTypes::find(QStringLiteral("apiextensions.k8s.io"), QStringLiteral("v1"),
                                                   QStringLiteral("customresourcedefinitions"));
    for (const char *plural : {"rayjobs", "rayclusters"}) {
        (void)m_store->create(*crds, KubeRayCrds::served(QLatin1String(plural), m_kuberayVersion, nowRfc3339()));
    }
    m_events = std::make_unique<EventRecorder>(m_store.get());
    m_scheduler = std::make_unique<Scheduler>(m_store.get(), m_events.get());

    m_presentImages = options.presentImages;
    if (m_presentImages.isEmpty()) {
        for (const char *key : {"FORGE_IMAGE_NEMO_RL", "FORGE_IMAGE_VLLM"}) {
            if (const auto *d = Config::SettingsSchema::find(QString::fromLatin1(key))) {
                m_presentImages << d->defaultValue;
            }
        }
    }
    m_stateDir = QFileInfo(options.connectionFile).absoluteFilePath() + QStringLiteral(".state");
    // The storage root: the directory of the storage claim every Ray pod mounts at
    // FORGE_STORAGE_ROOT (the same path), so the app reads jobs/<id>/ where the pods wrote them.
    m_storageRoot = m_stateDir + QStringLiteral("/storage");
    if (!makeOwnerOnlyPath(m_stateDir) || !makeOwnerOnlyPath(m_storageRoot)) {
        return Error::io(QStringLiteral("cannot create the sandbox's storage directory %1").arg(m_storageRoot));
    }
    // The corpus claim's directory, so a JobSpec with "corpus": true (examples/grpo-two-pools)
    // runs here unchanged. The NeMo-RL stand-in reads no data, so one file says what it is; pods
    // mount it read-only (the RayJob builder's readOnly claim).
    m_corpusDir = m_stateDir + QStringLiteral("/corpus");
    if (!makeOwnerOnlyPath(m_corpusDir)) {
        return Error::io(QStringLiteral("cannot create the sandbox's corpus directory %1").arg(m_corpusDir));
    }
    if (auto ok = writeFile(m_corpusDir + QStringLiteral("/README.txt"),
                            "The starforge-sandbox corpus claim (" + corpusClaim().toUtf8()
                                + "), mounted read-only at /corpus in the Ray pods of jobs that ask for the corpus.\n");
        !ok) {
        return ok.error();
    }
    m_nemoRlDir = nemoRlStandInDir();
    Kubelet::Options kubelet;
    kubelet.stateDir = m_stateDir;
    kubelet.presentImages = QSet<QString>(m_presentImages.cbegin(), m_presentImages.cend());
    kubelet.crashLoopBackoffMs = options.crashLoopBackoffMs;
    kubelet.imagePullBackoffMs = options.imagePullBackoffMs;
    kubelet.toolsDir = toolsDir();
    kubelet.tokenRate = options.tokenRate;
    if (options.nemoRlStepSeconds) {
        kubelet.nemoRlStepSeconds = QString::number(*options.nemoRlStepSeconds);
    }
    if (const auto *d = Config::SettingsSchema::find(QStringLiteral("FORGE_IMAGE_VLLM"))) {
        kubelet.vllmImages.insert(d->defaultValue);
    }
    for (const QString &image : options.vllmImages) {
        kubelet.vllmImages.insert(image);
    }
    kubelet.privateRegistry = options.privateRegistry;
    kubelet.shim = shim();
    // The storage claim the app's jobs mount at FORGE_STORAGE_ROOT is that very directory.
    if (const auto *d = Config::SettingsSchema::find(QStringLiteral("FORGE_K8S_STORAGE_PVC"))) {
        kubelet.claimDirs.insert(d->defaultValue, m_storageRoot);
    }
    kubelet.claimDirs.insert(corpusClaim(), m_corpusDir);
    kubelet.caFile = QFileInfo(options.connectionFile).absoluteFilePath() + QStringLiteral(".ca.pem");
    m_kubelet = std::make_unique<Kubelet>(m_store.get(), m_events.get(), kubelet);
    m_jobs = std::make_unique<JobController>(m_store.get(), m_events.get(), options.seed, options.jobRetryBackoffMs);
    m_rayClusters = std::make_unique<RayClusterController>(m_store.get(), m_events.get(), options.seed,
                                                          RayClusterController::Options{options.injectInitContainer, options.injectProbes});
    RayJobController::Options rayJobs;
    rayJobs.rayStateDir = m_stateDir + QStringLiteral("/ray");
    rayJobs.statusCheckTimeoutSeconds = options.rayJobStatusCheckTimeoutSeconds;
    rayJobs.transitionGraceSeconds = options.rayJobTransitionGraceSeconds;
    rayJobs.submitterFinishedTimeoutSeconds = options.rayJobSubmitterFinishedTimeoutSeconds;
    m_rayJobs = std::make_unique<RayJobController>(m_store.get(), m_events.get(), options.seed, rayJobs);
    m_rayJobs->setOperatorOptions({options.deleteRayJobAfterJobFinishes,
                                   options.rayJobDeletionPolicy.value_or(m_kuberayVersion >= QVersionNumber(1, 6))});
    for (const char *plural : {"rayjobs", "rayclusters"}) {
        const QString storage = QStringLiteral("%1.ray.io").arg(QLatin1String(plural));
        m_api->setAdmission(storage, [kuberay = m_kuberayVersion](const ResourceType &type, QJsonObject &object,
                                                                   const QString &fieldValidation, QStringList &warnings) {
            return admitCustomResource(type, object, fieldValidation, warnings, kuberay);
        });
        m_api->setPrinterColumns(storage, [plural, kuberay = m_kuberayVersion] {
            const StructuralSchema *schema = crdSchema(QString::fromLatin1(plural), kuberay);
            return schema ? schema->printerColumns() : QJsonArray();
        });
    }
    m_quotas = std::make_unique<QuotaController>(m_store.get());
    // Quota admission at pod create (an update of an existing pod is not charged again).
    m_api->setAdmission(QStringLiteral("pods"), [store = m_store.get()](const ResourceType &, QJsonObject &object, const QString &,
                                                                        QStringList &) -> std::optional<QJsonObject> {
        const QJsonObject meta = object.value(QStringLiteral("metadata")).toObject();
        const QString ns = meta.value(QStringLiteral("namespace")).toString();
        const QString name = meta.value(QStringLiteral("name")).toString();
        if (store->get(QStringLiteral("pods"), ns, name)) return std::nullopt;
        if (const auto exceeded = ResourceQuotas::exceeded(*store, ns, object)) return ResourceQuotas::forbiddenStatus(name, *exceeded);
        return std::nullopt;
    });
    m_api->setAdmission(QStringLiteral("secrets"), [](const ResourceType &, QJsonObject &object, const QString &, QStringList &) {
        return admitSecret(object);
    });
    m_api->setSubresourceHandler(QStringLiteral("pods"), QStringLiteral("log"),
                                 [this](const RequestInfo &info, const Http::Request &request, Http::Responder *responder) {
                                     m_kubelet->serveLogs(info, request, responder);
                                     // The fault: a follow cut mid-stream, as a restarting API server does.
                                     if (const int dropMs = m_api->faults().dropLogsAfterMs; dropMs > 0) {
                                         QTimer::singleShot(dropMs, responder, [responder] { responder->abortConnection(); });
                                     }
                                 });
    m_api->setSubresourceHandler(QStringLiteral("pods"), QStringLiteral("eviction"),
                                 [this](const RequestInfo &info, const Http::Request &request, Http::Responder *responder) {
                                     Eviction::serve(*m_store, info, request, responder);
                                 });
    m_api->setSubresourceHandler(QStringLiteral("pods"), QStringLiteral("proxy"),
                                 [this](const RequestInfo &info, const Http::Request &request, Http::Responder *responder) {
                                     m_kubelet->serveProxy(info, request, responder);
                                 });

    if (auto written = writeFiles(options); !written) {
        stop();
        return written.error();
    }
    qCInfo(lcSandbox) << "sandbox ready at" << apiServerUrl().toString() << "with" << fleet->nodeCount() << "nodes";
    return {};
}

Result<void> Sandbox::writeFiles(const SandboxOptions &options)
{
    const QFileInfo info(options.connectionFile);
    if (!QDir().mkpath(info.absolutePath())) {
        return Error::io(QStringLiteral("cannot create the directory of %1").arg(options.connectionFile));
    }
    const QString base = info.absoluteFilePath();
    m_caFile = base + QStringLiteral(".ca.pem");
    m_kubeconfigFile = base + QStringLiteral(".kubeconfig");
    m_clientCertFile = base + QStringLiteral(".client.crt");
    m_clientKeyFile = base + QStringLiteral(".client.key");
    m_credentialStateFile = base + QStringLiteral(".credential.json");
    // Each file owner-only and atomic, and noted so stop() removes it.
    const auto write = [this](const QString &path, const QByteArray &data) {
        auto ok = writeFile(path, data);
        if (ok) {
            m_writtenFiles << path;
        }
        return ok;
    };
    if (auto ok = write(m_caFile, m_caPem); !ok) {
        return ok;
    }
    const QString server = apiServerUrl().toString();

    // The certificate user, an admin as kubeadm's admin.conf is.
    const auto client = issueClientCertificate(QLatin1String(Credential::CertUser), {QLatin1String(Credential::MastersGroup)},
                                               QDateTime::currentDateTimeUtc().addDays(30));
    if (!client) {
        return client.error();
    }
    if (auto ok = write(m_clientCertFile, client->certificatePem); !ok) {
        return ok;
    }
    if (auto ok = write(m_clientKeyFile, client->keyPem); !ok) {
        return ok;
    }
    // What the credential tool needs to mint tokens this server accepts.
    Credential::State state;
    state.server = server;
    state.secret = m_credentialSecret;
    state.tokenTtlSeconds = m_tokenTtlSeconds;
    state.clientCertificateFile = m_clientCertFile;
    state.clientKeyFile = m_clientKeyFile;
    state.clientCertificateNotAfter = QSslCertificate(client->certificatePem, QSsl::Pem).expiryDate().toUTC();
    if (auto ok = write(m_credentialStateFile, QJsonDocument(state.toJson()).toJson()); !ok) {
        return ok;
    }

    const QString tool = credentialTool();
    const QString installHint = QStringLiteral("starforge-sandbox-credential is built and installed with starforge-sandbox, "
                                               "in the same bin directory; build the sandbox, or use the context %1 or %2.")
                                    .arg(QLatin1String(KubeconfigContext::Token), QLatin1String(KubeconfigContext::Cert));
    const QJsonObject execPlugin{{QStringLiteral("apiVersion"), QStringLiteral("client.authentication.k8s.io/v1")},
                                 {QStringLiteral("command"), tool},
                                 {QStringLiteral("args"), QJsonArray{QStringLiteral("--state"), m_credentialStateFile}},
                                 {QStringLiteral("interactiveMode"), QStringLiteral("IfAvailable")},
                                 {QStringLiteral("provideClusterInfo"), true},
                                 {QStringLiteral("installHint"), installHint}};

    // One cluster, three users, a context each; the token context stays the current one.
    const QString context = QStringLiteral("- name: %1\n  context:\n    cluster: starforge-sandbox\n    user: %2\n    namespace: %3\n");
    const QString ns = yamlString(options.ns);
    const QByteArray kubeconfig =
        (QStringLiteral("apiVersion: v1\nkind: Config\nclusters:\n- name: starforge-sandbox\n  cluster:\n    server: %1\n"
                        "    certificate-authority: %2\n").arg(yamlString(server), yamlString(m_caFile))
         + QStringLiteral("users:\n- name: sandbox-admin\n  user:\n    token: %1\n").arg(yamlString(QString::fromLatin1(m_token)))
         + QStringLiteral("- name: %1\n  user:\n    client-certificate: %2\n    client-key: %3\n")
               .arg(QLatin1String(KubeconfigContext::Cert), yamlString(m_clientCertFile), yamlString(m_clientKeyFile))
         + QStringLiteral("- name: %1\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: %2\n"
                          "      args:\n      - --state\n      - %3\n      interactiveMode: IfAvailable\n"
                          "      provideClusterInfo: true\n      installHint: %4\n")
               .arg(QLatin1String(KubeconfigContext::Exec), yamlString(tool), yamlString(m_credentialStateFile), yamlString(installHint))
         + QStringLiteral("contexts:\n") + context.arg(QLatin1String(KubeconfigContext::Token), QStringLiteral("sandbox-admin"), ns)
         + context.arg(QLatin1String(KubeconfigContext::Cert), QLatin1String(KubeconfigContext::Cert), ns)
         + context.arg(QLatin1String(KubeconfigContext::Exec), QLatin1String(KubeconfigContext::Exec), ns)
         + QStringLiteral("current-context: %1\n").arg(QLatin1String(KubeconfigContext::Token)))
            .toUtf8();
    if (auto ok = write(m_kubeconfigFile, kubeconfig); !ok) {
        return ok;
    }
    const QJsonObject forge{{QStringLiteral("FORGE_K8S_API_SERVER"), server},
                            {QStringLiteral("FORGE_K8S_CA_FILE"), m_caFile},
                            {QStringLiteral("FORGE_K8S_NAMESPACE"), options.ns},
                            {QStringLiteral("FORGE_K8S_GPU_NODE_LABEL"), options.seriesLabel},
                            {QStringLiteral("FORGE_K8S_TOKEN"), QString::fromLatin1(m_token)},
                            {QStringLiteral("FORGE_S3_ENDPOINT"), s3Endpoint().toString()},
                            {QStringLiteral("FORGE_S3_CA_FILE"), m_caFile},
                            {QStringLiteral("FORGE_S3_BUCKET"), m_bucket},
                            {QStringLiteral("FORGE_S3_REGION"), QStringLiteral("us-east-1")},
                            {QStringLiteral("FORGE_S3_PATH_STYLE"), QStringLiteral("true")},
                            {QStringLiteral("FORGE_S3_ACCESS_KEY"), QString::fromLatin1(m_s3AccessKey)},
                            {QStringLiteral("FORGE_S3_SECRET_KEY"), QString::fromLatin1(m_s3SecretKey)},
                            {QStringLiteral("FORGE_NEMO_RL_DIR"), m_nemoRlDir},
                            {QStringLiteral("FORGE_STORAGE_ROOT"), m_storageRoot},
                            {QStringLiteral("FORGE_K8S_CORPUS_PVC"), corpusClaim()},
                            {QStringLiteral("FORGE_IMAGE_NEMO_RL"), m_presentImages.value(0)},
                            {QStringLiteral("FORGE_IMAGE_VLLM"), m_presentImages.value(1, m_presentImages.value(0))}};
    const QJsonObject connection{{QLatin1String(ConnectionFile::ApiServer), server},
                                 {QLatin1String(ConnectionFile::CaFile), m_caFile},
                                 {QLatin1String(ConnectionFile::Token), QString::fromLatin1(m_token)},
                                 {QLatin1String(ConnectionFile::Namespace), options.ns},
                                 {QLatin1String(ConnectionFile::Kubeconfig), m_kubeconfigFile},
                                 {QLatin1String(ConnectionFile::ClientCertFile), m_clientCertFile},
                                 {QLatin1String(ConnectionFile::ClientKeyFile), m_clientKeyFile},
                                 {QLatin1String(ConnectionFile::ExecPlugin), execPlugin},
                                 {QLatin1String(ConnectionFile::CredentialTool), tool},
                                 {QLatin1String(ConnectionFile::S3Endpoint), s3Endpoint().toString()},
                                 {QLatin1String(ConnectionFile::Bucket), m_bucket},
                                 {QLatin1String(ConnectionFile::AccessKey), QString::fromLatin1(m_s3AccessKey)},
                                 {QLatin1String(ConnectionFile::SecretKey), QString::fromLatin1(m_s3SecretKey)},
                                 {QLatin1String(ConnectionFile::Forge), forge},
                                 {QStringLiteral("presentImages"), QJsonArray::fromStringList(m_presentImages)},
                                 {QStringLiteral("privateRegistry"), options.privateRegistry},
                                 {QStringLiteral("pid"), QCoreApplication::applicationPid()}};
    // Written last and atomically: a client that sees the file can connect.
    if (auto ok = write(base, QJsonDocument(connection).toJson()); !ok) {
        return ok;
    }
    m_connectionFile = base;
    return {};
}

QString Sandbox::credentialTool()
{
    const QString beside = QCoreApplication::applicationDirPath() + QStringLiteral("/starforge-sandbox-credential");
    if (QFileInfo(beside).isExecutable()) {
        return beside;
    }
    return QStringLiteral(STARFORGE_SANDBOX_BUILD_CREDENTIAL_TOOL);
}

QString Sandbox::shim()
{
    const QString beside = QCoreApplication::applicationDirPath() + QStringLiteral("/starforge-sandbox-shim");
    if (QFileInfo(beside).isExecutable()) {
        return beside;
    }
    return QStringLiteral(STARFORGE_SANDBOX_BUILD_SHIM);
}

Result<Tls::Issued> Sandbox::issueClientCertificate(const QString &commonName, const QStringList &organizations,
                                                    const QDateTime &notAfter) const
{
    if (m_tls.caKeyPem.isEmpty()) {
        return Error::invalid(QStringLiteral("the sandbox has no CA until it starts"));
    }
    return Tls::issueClientCertificate(m_tls, commonName, organizations, notAfter);
}

void Sandbox::stop()
{
    if (m_server) {
        m_server->close();
    }
    if (m_s3Server) {
        m_s3Server->close();
    }
    // Stops every container process; their files go with the state directory.
    m_quotas.reset();
    m_serviceAccountTokens.reset();
    m_rayJobs.reset();
    m_rayClusters.reset();
    m_jobs.reset();
    m_kubelet.reset();
    if (!m_stateDir.isEmpty()) {
        QDir(m_stateDir).removeRecursively();
        m_stateDir.clear();
    }
    // Every file writeFiles wrote, also after a start that failed half-way.
    for (const QString &file : std::as_const(m_writtenFiles)) {
        QFile::remove(file);
    }
    m_writtenFiles.clear();
    m_connectionFile.clear();
}

QUrl Sandbox::s3Endpoint() const
{
    if (!m_s3Server) {
        return {};
    }
    QUrl url;
    url.setScheme(QStringLiteral("https"));
    url.setHost(m_s3Server->address().toString());
    url.setPort(m_s3Server->port());
    return url;
}

QUrl Sandbox::apiServerUrl() const
{
    if (!m_server) {
        return {};
    }
    QUrl url;
    url.setScheme(QStringLiteral("https"));
    url.setHost(m_server->address().toString());
    url.setPort(m_server->port());
    return url;
}

} // namespace Starforge::Sandbox
