#include "core/config/settingsschema.h"

#include "core/config/validation.h"

#include <QMap>

#include <algorithm>

namespace Starforge::Config {

namespace {

QList<SettingDefinition> buildTable()
{
    using T = SettingType;
    // The groups, in the order the dialog and docs/configuration.md show them (groups()).
    const QString cluster = QStringLiteral("Cluster");
    const QString signIn = QStringLiteral("Sign-in");
    const QString network = QStringLiteral("Network");
    const QString pods = QStringLiteral("GPUs and pods");
    const QString images = QStringLiteral("Images");
    const QString storage = QStringLiteral("Storage");
    const QString s3 = QStringLiteral("Object storage (S3)");
    const QString kuberay = QStringLiteral("KubeRay");

    QList<SettingDefinition> t;
    // Positional, with the optional fields last, so each entry reads as one row of the table.
    auto add = [&t](const QString &key, const QString &label, T type, const QString &defaultValue, const QString &group,
                    const QString &help, bool optional = true, qint64 minimum = 0, qint64 maximum = 0,
                    const QStringList &choices = {}) {
        t.append(SettingDefinition{key, label, type, defaultValue, group, help, optional, minimum, maximum, choices});
    };

    add(QStringLiteral("FORGE_K8S_API_SERVER"), QStringLiteral("API server"), T::Url, QString(), cluster,
         QStringLiteral("URL of the Kubernetes API server, e.g. https://api.example.com:6443. Required to connect. "
                        "Plain http:// is accepted only for this machine (kubectl proxy on 127.0.0.1), since the token would otherwise cross the network unencrypted."));
    add(QStringLiteral("FORGE_K8S_NAMESPACE"), QStringLiteral("Namespace"), T::Dns1123Label, QStringLiteral("starforge"), cluster,
         QStringLiteral("Namespace where RayJobs, their pods and playground pods are created."), false);
    add(QStringLiteral("FORGE_OWNER"), QStringLiteral("Job owner"), T::String, QString(), cluster,
         QStringLiteral("Whose the jobs submitted with this profile are, recorded on each RayJob (starforge.dev/owner). The app "
                        "archives, stops and deletes only its owner's jobs and shows everyone else's read-only. Empty: the "
                        "user name the cluster knows the credentials by (a SelfSubjectReview), the same on every workstation."));
    add(QStringLiteral("FORGE_DEFAULT_FLEET_KIND"), QStringLiteral("Backend"), T::Enum, QStringLiteral("kuberay"), cluster,
         QStringLiteral("Which backend runs jobs. Only kuberay (one ephemeral RayCluster per job, as a RayJob) exists."),
         false, 0, 0, {QStringLiteral("kuberay")});

    add(QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("Token"), T::Secret, QString(), signIn,
         QStringLiteral("Bearer token (e.g. a ServiceAccount token) with RayJob and Pod permissions in the namespace. "
                        "Kept only in the OS keychain."));
    add(QStringLiteral("FORGE_K8S_TOKEN_FILE"), QStringLiteral("Token file"), T::AbsolutePath, QString(), signIn,
         QStringLiteral("A file to read the bearer token from at every connect, as kubeconfig's tokenFile. "
                        "Used when FORGE_K8S_TOKEN is not set."));
    add(QStringLiteral("FORGE_K8S_CLIENT_CERT_FILE"), QStringLiteral("Client certificate file"), T::CertificateFile, QString(), signIn,
         QStringLiteral("PEM file of the client certificate presented in the TLS handshake (kubeconfig's client-certificate; "
                        "kind, minikube and kubeadm's admin.conf sign in this way). Needs a client key."));
    add(QStringLiteral("FORGE_K8S_CLIENT_CERT_DATA"), QStringLiteral("Client certificate (inline)"), T::CertificateData, QString(), signIn,
         QStringLiteral("The same certificate as base64 of the PEM text (client-certificate-data). Takes precedence over "
                        "FORGE_K8S_CLIENT_CERT_FILE."));
    add(QStringLiteral("FORGE_K8S_CLIENT_KEY_FILE"), QStringLiteral("Client key file"), T::AbsolutePath, QString(), signIn,
         QStringLiteral("PEM file of the client certificate's private key, RSA or EC, unencrypted (client-key). The path is "
                        "kept, never the key."));
    add(QStringLiteral("FORGE_K8S_CLIENT_KEY_DATA"), QStringLiteral("Client key (inline)"), T::Secret, QString(), signIn,
         QStringLiteral("The client key as base64 of the PEM text (client-key-data). Kept only in the OS keychain; takes "
                        "precedence over FORGE_K8S_CLIENT_KEY_FILE."));
    add(QStringLiteral("FORGE_K8S_EXEC"), QStringLiteral("Credential plugin"), T::ExecPlugin, QString(), signIn,
         QStringLiteral("An exec credential plugin, as the kubeconfig's user.exec in JSON: apiVersion, command, args, env, "
                        "interactiveMode, provideClusterInfo, installHint (aws eks get-token, gke-gcloud-auth-plugin, kubelogin). "
                        "Run as kubectl runs it; its token or certificate stays in memory. Takes precedence over tokens."));

    add(QStringLiteral("FORGE_K8S_CA_FILE"), QStringLiteral("CA certificates file"), T::CaFile, QString(), network,
         QStringLiteral("PEM file with the CA certificates that sign the API server's certificate. "
                        "Without it (and without FORGE_K8S_CA_DATA) the system CA store is used."));
    add(QStringLiteral("FORGE_K8S_CA_DATA"), QStringLiteral("CA certificates (inline)"), T::CaData, QString(), network,
         QStringLiteral("The same CA bundle as base64 of the PEM text (kubeconfig's certificate-authority-data). "
                        "Takes precedence over FORGE_K8S_CA_FILE."));
    add(QStringLiteral("FORGE_K8S_TLS_SERVER_NAME"), QStringLiteral("TLS server name"), T::String, QString(), network,
         QStringLiteral("Server name to verify the API server's certificate against and send in SNI, when it differs from "
                        "the URL's host (kubeconfig's tls-server-name)."));
    add(QStringLiteral("FORGE_K8S_PROXY_URL"), QStringLiteral("Proxy"), T::ProxyUrl, QString(), network,
         QStringLiteral("Proxy for the API server: http:// or socks5:// (kubeconfig's proxy-url); socks5 proxies resolve host names, as "
                        "with kubectl. Empty: "
                        "HTTPS_PROXY, HTTP_PROXY and NO_PROXY from the environment, as kubectl reads them."));
    add(QStringLiteral("FORGE_K8S_INSECURE_SKIP_TLS_VERIFY"), QStringLiteral("Skip certificate check"), T::Boolean, QStringLiteral("false"), network,
         QStringLiteral("Skip verifying the API server's certificate. Only for throw-away clusters: "
                        "the window shows a warning while it is on."), false);

    add(QStringLiteral("FORGE_K8S_GPU_NODE_LABEL"), QStringLiteral("GPU series node label"), T::LabelKey, QStringLiteral("starforge/gpu-series"), pods,
         QStringLiteral("Node label whose value is the GPU series (h200, h100, ...). One source for capacity "
                        "figures and for the nodeSelector of every pool."), false);
    add(QStringLiteral("FORGE_K8S_GPU_PASSTHROUGH"), QStringLiteral("Request GPUs from Kubernetes"), T::Boolean, QStringLiteral("true"), pods,
         QStringLiteral("Request nvidia.com/gpu for Ray pods. false only for GPU-less test clusters (kind, CI): "
                        "Ray's logical GPUs stay."), false);
    add(QStringLiteral("FORGE_K8S_SHM_SIZE"), QStringLiteral("Shared memory per pod"), T::Quantity, QStringLiteral("64Gi"), pods,
         QStringLiteral("Size of the in-memory /dev/shm volume of every Ray pod; Ray's object store lives there."), false);

    add(QStringLiteral("FORGE_IMAGE_NEMO_RL"), QStringLiteral("NeMo-RL image"), T::ImageReference, QStringLiteral("nvcr.io/nvidia/nemo-rl:v0.7.0"), images,
         QStringLiteral("Container image of the head, worker and submitter pods: NeMo-RL with Ray."), false);
    add(QStringLiteral("FORGE_NEMO_RL_DIR"), QStringLiteral("NeMo-RL folder in the image"), T::AbsolutePath, QStringLiteral("/opt/nemo-rl"), images,
         QStringLiteral("Where NeMo-RL is installed inside the image; the runner starts its examples/ scripts from there."), false);
    add(QStringLiteral("FORGE_IMAGE_VLLM"), QStringLiteral("vLLM image"), T::ImageReference, QStringLiteral("vllm/vllm-openai:v0.20.0"), images,
         QStringLiteral("Container image of playground pods, serving an OpenAI-compatible API with vLLM."), false);

    add(QStringLiteral("FORGE_STORAGE_ROOT"), QStringLiteral("Storage root in pods"), T::AbsolutePath, QStringLiteral("/starforge"), storage,
         QStringLiteral("The one storage root inside pods: jobs/<id>/ checkpoints and logs go under it."), false);
    add(QStringLiteral("FORGE_K8S_STORAGE_PVC"), QStringLiteral("Storage claim"), T::Dns1123Subdomain, QStringLiteral("starforge-storage"), storage,
         QStringLiteral("PersistentVolumeClaim mounted at the storage root in every Ray pod."));
    add(QStringLiteral("FORGE_K8S_STORAGE_SHARED"), QStringLiteral("Claim shared between nodes"), T::Boolean, QStringLiteral("true"), storage,
         QStringLiteral("Whether the storage claim is shared between nodes (ReadWriteMany). When false, jobs with "
                        "more than one node are rejected before submission."), false);
    add(QStringLiteral("FORGE_K8S_STORAGE_MOUNT"), QStringLiteral("Claim mount path"), T::AbsolutePath, QString(), storage,
         QStringLiteral("Mount path of the storage claim when pods cannot mount it at the storage root. "
                        "Empty: mount at FORGE_STORAGE_ROOT."));
    add(QStringLiteral("FORGE_K8S_CORPUS_PVC"), QStringLiteral("Corpus claim"), T::Dns1123Subdomain, QString(), storage,
         QStringLiteral("Optional read-only claim with training corpora, mounted into Ray pods of jobs that ask for it."));

    add(QStringLiteral("FORGE_S3_ENDPOINT"), QStringLiteral("Endpoint"), T::Url, QString(), s3,
         QStringLiteral("URL of the S3-compatible object store that carries Capsules, logs and job history. "
                        "https:// gives presigned working_dir URLs; http:// switches to the init-container download."));
    add(QStringLiteral("FORGE_S3_BUCKET"), QStringLiteral("Bucket"), T::BucketName, QStringLiteral("starforge"), s3,
         QStringLiteral("Bucket for capsules/<sha256>.zip and jobs/<id>/."), false);
    add(QStringLiteral("FORGE_S3_REGION"), QStringLiteral("Region"), T::String, QStringLiteral("us-east-1"), s3,
         QStringLiteral("Region used in SigV4 signatures. Most S3-compatible servers accept us-east-1."), false);
    add(QStringLiteral("FORGE_S3_PATH_STYLE"), QStringLiteral("Path-style addressing"), T::Boolean, QStringLiteral("true"), s3,
         QStringLiteral("Address buckets as endpoint/bucket/key (path style) rather than bucket.endpoint/key "
                        "(virtual-host style). Most self-hosted servers need path style."), false);
    add(QStringLiteral("FORGE_S3_CA_FILE"), QStringLiteral("CA certificates file"), T::CaFile, QString(), s3,
         QStringLiteral("PEM file of the CA that signed the S3 endpoint's certificate, for a self-hosted store. "
                        "Without it the system CA store is used."));
    add(QStringLiteral("FORGE_S3_PROXY"), QStringLiteral("Proxy"), T::ProxyUrl, QString(), s3,
         QStringLiteral("Proxy for the object store: http:// or socks5://. Empty: HTTPS_PROXY, HTTP_PROXY and "
                        "NO_PROXY from the environment."));
    add(QStringLiteral("FORGE_S3_ACCESS_KEY"), QStringLiteral("Access key"), T::Secret, QString(), s3,
         QStringLiteral("S3 access key id. Kept only in the OS keychain."));
    add(QStringLiteral("FORGE_S3_SECRET_KEY"), QStringLiteral("Secret key"), T::Secret, QString(), s3,
         QStringLiteral("S3 secret access key. Kept only in the OS keychain."));

    add(QStringLiteral("FORGE_KUBERAY_RAY_VERSION"), QStringLiteral("Ray version"), T::Version, QStringLiteral("2.55.1"), kuberay,
         QStringLiteral("rayVersion of every RayCluster: the Ray release in the image, compatible with the operator."), false);
    // Three days: a job that ends on Friday evening while the laptop is shut still has its
    // RayCluster (head and worker logs) when the app or `jobs --follow` runs again on Monday
    // (docs/jobs.md, "Keeping logs while nobody watches").
    add(QStringLiteral("FORGE_KUBERAY_TTL_SECONDS"), QStringLiteral("Keep a finished cluster (s)"), T::Integer, QStringLiteral("259200"), kuberay,
         QStringLiteral("ttlSecondsAfterFinished: seconds the operator keeps a finished job's RayCluster (the head and "
                        "worker pods with their logs) before deleting it, whether or not the logs were archived. Logs "
                        "are archived only while the app or `starforge-cli jobs --follow` runs, so this is how long a "
                        "finished job may wait for one of them; past it the head and worker logs are lost. Meanwhile "
                        "the job's idle Ray pods keep their GPUs."),
         false, 0, 7 * 24 * 3600);
    add(QStringLiteral("FORGE_KUBERAY_PRERUNNING_DEADLINE_S"), QStringLiteral("Start deadline (s)"), T::Integer, QStringLiteral("1800"), kuberay,
         QStringLiteral("Seconds a job may spend before running (image pulls, scheduling) before it is failed and "
                        "deleted, with the events that explain why kept."), false, 1, 7 * 24 * 3600);
    return t;
}

int editDistance(const QString &a, const QString &b)
{
    QList<int> previous(b.size() + 1);
    QList<int> current(b.size() + 1);
    for (qsizetype j = 0; j <= b.size(); ++j) {
        previous[j] = int(j);
    }
    for (qsizetype i = 1; i <= a.size(); ++i) {
        current[0] = int(i);
        for (qsizetype j = 1; j <= b.size(); ++j) {
            const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
            current[j] = qMin(qMin(previous[j] + 1, current[j - 1] + 1), previous[j - 1] + cost);
        }
        std::swap(previous, current);
    }
    return previous[b.size()];
}

} // namespace

const QList<SettingGroup> &SettingsSchema::groups()
{
    static const QList<SettingGroup> list = [] {
        const QMap<QString, QString> about{
            {QStringLiteral("Cluster"), QStringLiteral("Which Kubernetes cluster and namespace jobs go to, and whose they are.")},
            {QStringLiteral("Sign-in"), QStringLiteral("How the app proves who you are to the API server: one of a token, a client certificate or a credential plugin.")},
            {QStringLiteral("Network"), QStringLiteral("How the API server's certificate is checked and which proxy reaches it.")},
            {QStringLiteral("GPUs and pods"), QStringLiteral("How GPU nodes are recognised and what every Ray pod is given.")},
            {QStringLiteral("Images"), QStringLiteral("The container images training jobs and playground pods run.")},
            {QStringLiteral("Storage"), QStringLiteral("The shared volume in the pods where checkpoints and logs are written.")},
            {QStringLiteral("Object storage (S3)"), QStringLiteral("The bucket that carries your code to the cluster and keeps job history and archived logs.")},
            {QStringLiteral("KubeRay"), QStringLiteral("What every RayJob asks of the KubeRay operator: the Ray release, deadlines and clean-up.")},
        };
        QList<SettingGroup> groups;
        for (const SettingDefinition &d : all()) {
            if (groups.isEmpty() || groups.constLast().name != d.group) {
                Q_ASSERT_X(std::none_of(groups.cbegin(), groups.cend(), [&d](const SettingGroup &g) { return g.name == d.group; }),
                           "SettingsSchema::groups", "a group's settings must be contiguous in the table");
                Q_ASSERT_X(about.contains(d.group), "SettingsSchema::groups", "every group has its sentence");
                groups.append({d.group, about.value(d.group)});
            }
        }
        return groups;
    }();
    return list;
}

const QList<SettingDefinition> &SettingsSchema::all()
{
    static const QList<SettingDefinition> table = buildTable();
    return table;
}

QString SettingsSchema::defaultValue(const QString &key)
{
    const SettingDefinition *d = find(key);
    Q_ASSERT_X(d, "SettingsSchema::defaultValue", "not a setting");
    return d ? d->defaultValue : QString();
}

int SettingsSchema::defaultInteger(const QString &key)
{
    return defaultValue(key).toInt();
}

bool SettingsSchema::defaultBoolean(const QString &key)
{
    return defaultValue(key) == u"true";
}

const SettingDefinition *SettingsSchema::find(const QString &key)
{
    for (const SettingDefinition &d : all()) {
        if (d.key == key) {
            return &d;
        }
    }
    return nullptr;
}

QStringList SettingsSchema::secretKeys()
{
    QStringList keys;
    for (const SettingDefinition &d : all()) {
        if (d.isSecret()) {
            keys.append(d.key);
        }
    }
    return keys;
}

QString SettingsSchema::typeName(SettingType type)
{
    switch (type) {
    case SettingType::String: return QStringLiteral("text");
    case SettingType::Enum: return QStringLiteral("choice");
    case SettingType::Url: return QStringLiteral("URL");
    case SettingType::Quantity: return QStringLiteral("Kubernetes quantity");
    case SettingType::LabelKey: return QStringLiteral("label key");
    case SettingType::Dns1123Label: return QStringLiteral("DNS-1123 label");
    case SettingType::Dns1123Subdomain: return QStringLiteral("DNS-1123 subdomain");
    case SettingType::Integer: return QStringLiteral("integer");
    case SettingType::Boolean: return QStringLiteral("boolean");
    case SettingType::AbsolutePath: return QStringLiteral("absolute path");
    case SettingType::ImageReference: return QStringLiteral("image reference");
    case SettingType::BucketName: return QStringLiteral("bucket name");
    case SettingType::Version: return QStringLiteral("version");
    case SettingType::CaFile: return QStringLiteral("PEM file");
    case SettingType::CaData: return QStringLiteral("base64 PEM");
    case SettingType::CertificateFile: return QStringLiteral("PEM file");
    case SettingType::CertificateData: return QStringLiteral("base64 PEM");
    case SettingType::ProxyUrl: return QStringLiteral("proxy URL");
    case SettingType::ExecPlugin: return QStringLiteral("exec plugin (JSON)");
    case SettingType::Secret: return QStringLiteral("secret (keychain)");
    }
    return QString();
}

Result<QString> SettingsSchema::validate(const SettingDefinition &definition, const QString &value)
{
    const QString trimmed = value.trimmed();
    if (trimmed.isEmpty()) {
        if (definition.optional) {
            return QString();
        }
        return Error::invalid(QStringLiteral("%1 must not be empty; its default is '%2'").arg(definition.key, definition.defaultValue));
    }

    Result<QString> checked = QString();
    switch (definition.type) {
    case SettingType::String:
    case SettingType::Secret:
        // Secrets are opaque; only surrounding whitespace (a pasted newline) is dropped.
        checked = trimmed;
        break;
    case SettingType::Enum:
        if (definition.choices.contains(trimmed)) {
            checked = trimmed;
        } else {
            checked = Error::invalid(QStringLiteral("'%1' is not one of: %2").arg(trimmed, definition.choices.join(QStringLiteral(", "))));
        }
        break;
    case SettingType::Url: checked = Validation::url(trimmed); break;
    case SettingType::Quantity: checked = Validation::quantity(trimmed); break;
    case SettingType::LabelKey: checked = Validation::labelKey(trimmed); break;
    case SettingType::Dns1123Label: checked = Validation::dns1123Label(trimmed); break;
    case SettingType::Dns1123Subdomain: checked = Validation::dns1123Subdomain(trimmed); break;
    case SettingType::Integer: checked = Validation::integer(trimmed, definition.minimum, definition.maximum); break;
    case SettingType::Boolean: checked = Validation::boolean(trimmed); break;
    case SettingType::AbsolutePath: checked = Validation::absolutePath(trimmed); break;
    case SettingType::ImageReference: checked = Validation::imageReference(trimmed); break;
    case SettingType::BucketName: checked = Validation::bucketName(trimmed); break;
    case SettingType::Version: checked = Validation::version(trimmed); break;
    case SettingType::CaFile: checked = Validation::caFile(trimmed); break;
    case SettingType::CaData: checked = Validation::caData(trimmed); break;
    case SettingType::CertificateFile: checked = Validation::certificateFile(trimmed); break;
    case SettingType::CertificateData: checked = Validation::certificateData(trimmed); break;
    case SettingType::ProxyUrl: checked = Validation::proxyUrl(trimmed); break;
    case SettingType::ExecPlugin: checked = Validation::execPlugin(trimmed); break;
    }
    if (!checked) {
        return Error::invalid(definition.key + QStringLiteral(": ") + checked.error().message);
    }
    return checked;
}

Result<QString> SettingsSchema::validate(const QString &key, const QString &value)
{
    const SettingDefinition *definition = find(key);
    if (!definition) {
        const QString suggestion = suggestKey(key);
        return Error::invalid(QStringLiteral("%1 is not a setting%2; `starforge-cli settings` lists them")
                                  .arg(key, suggestion.isEmpty() ? QString() : QStringLiteral(" (did you mean %1?)").arg(suggestion)));
    }
    return validate(*definition, value);
}

QString SettingsSchema::suggestKey(const QString &unknown)
{
    const QString upper = unknown.toUpper();
    QString best;
    int bestDistance = 4; // beyond three edits a suggestion is noise
    for (const SettingDefinition &d : all()) {
        const int distance = qMin(editDistance(upper, d.key), editDistance(QStringLiteral("FORGE_") + upper, d.key));
        if (distance < bestDistance) {
            bestDistance = distance;
            best = d.key;
        }
    }
    return best;
}

} // namespace Starforge::Config
