#include "core/config/settingsschema.h"

#include "core/config/validation.h"

#include <QCoreApplication>
#include <QMap>

#include <algorithm>

namespace Starforge::Config {

namespace {

// The translation context of the table's texts (QT_TRANSLATE_NOOP below) and of this file's
// messages (lupdate reads it from the macro).
constexpr const char *Context = "SettingsSchema";
struct Text { Q_DECLARE_TR_FUNCTIONS(SettingsSchema) };

QList<SettingDefinition> buildTable()
{
    using T = SettingType;
    // The groups, in the order the dialog and docs/configuration.md show them (groups()).
    const char *cluster = QT_TRANSLATE_NOOP("SettingsSchema", "Cluster");
    const char *signIn = QT_TRANSLATE_NOOP("SettingsSchema", "Sign-in");
    const char *network = QT_TRANSLATE_NOOP("SettingsSchema", "Network");
    const char *pods = QT_TRANSLATE_NOOP("SettingsSchema", "GPUs and pods");
    const char *images = QT_TRANSLATE_NOOP("SettingsSchema", "Images");
    const char *storage = QT_TRANSLATE_NOOP("SettingsSchema", "Storage");
    const char *s3 = QT_TRANSLATE_NOOP("SettingsSchema", "Object storage (S3)");
    const char *kuberay = QT_TRANSLATE_NOOP("SettingsSchema", "KubeRay");

    QList<SettingDefinition> t;
    // Positional, with the optional fields last, so each entry reads as one row of the table. The
    // label, group and help are the English source texts, marked for lupdate where they stand;
    // they are translated where they are shown (SettingDefinition::translatedLabel() ...).
    auto add = [&t](const QString &key, const char *label, T type, const QString &defaultValue, const char *group,
                    const char *help, bool optional = true, qint64 minimum = 0, qint64 maximum = 0,
                    const QStringList &choices = {}) {
        t.append(SettingDefinition{key, QString::fromUtf8(label), type, defaultValue, QString::fromUtf8(group), QString::fromUtf8(help),
                                   optional, minimum, maximum, choices});
    };

    add(QStringLiteral("FORGE_K8S_API_SERVER"), QT_TRANSLATE_NOOP("SettingsSchema", "API server"), T::Url, QString(), cluster,
         QT_TRANSLATE_NOOP("SettingsSchema", "URL of the Kubernetes API server, e.g. https://api.example.com:6443. Required to connect. "
                                             "Plain http:// is accepted only for this machine (kubectl proxy on 127.0.0.1), since the token would otherwise cross the network unencrypted."));
    add(QStringLiteral("FORGE_K8S_NAMESPACE"), QT_TRANSLATE_NOOP("SettingsSchema", "Namespace"), T::Dns1123Label, QStringLiteral("starforge"), cluster,
         QT_TRANSLATE_NOOP("SettingsSchema", "Namespace where RayJobs, their pods and playground pods are created."), false);
    add(QStringLiteral("FORGE_OWNER"), QT_TRANSLATE_NOOP("SettingsSchema", "Job owner"), T::String, QString(), cluster,
         QT_TRANSLATE_NOOP("SettingsSchema", "Whose the jobs submitted with this profile are, recorded on each RayJob (starforge.dev/owner). The app "
                                             "archives, stops and deletes only its owner's jobs and shows everyone else's read-only. Empty: the "
                                             "user name the cluster knows the credentials by (a SelfSubjectReview), the same on every workstation."));
    add(QStringLiteral("FORGE_DEFAULT_FLEET_KIND"), QT_TRANSLATE_NOOP("SettingsSchema", "Backend"), T::Enum, QStringLiteral("kuberay"), cluster,
         QT_TRANSLATE_NOOP("SettingsSchema", "Which backend runs jobs. Only kuberay (one ephemeral RayCluster per job, as a RayJob) exists."),
         false, 0, 0, {QStringLiteral("kuberay")});

    add(QStringLiteral("FORGE_K8S_TOKEN"), QT_TRANSLATE_NOOP("SettingsSchema", "Token"), T::Secret, QString(), signIn,
         QT_TRANSLATE_NOOP("SettingsSchema", "Bearer token (e.g. a ServiceAccount token) with RayJob and Pod permissions in the namespace. "
                                             "Kept only in the OS keychain."));
    add(QStringLiteral("FORGE_K8S_TOKEN_FILE"), QT_TRANSLATE_NOOP("SettingsSchema", "Token file"), T::AbsolutePath, QString(), signIn,
         QT_TRANSLATE_NOOP("SettingsSchema", "A file to read the bearer token from at every connect, as kubeconfig's tokenFile. "
                                             "Used when FORGE_K8S_TOKEN is not set."));
    add(QStringLiteral("FORGE_K8S_CLIENT_CERT_FILE"), QT_TRANSLATE_NOOP("SettingsSchema", "Client certificate file"), T::CertificateFile, QString(), signIn,
         QT_TRANSLATE_NOOP("SettingsSchema", "PEM file of the client certificate presented in the TLS handshake (kubeconfig's client-certificate; "
                                             "kind, minikube and kubeadm's admin.conf sign in this way). Needs a client key."));
    add(QStringLiteral("FORGE_K8S_CLIENT_CERT_DATA"), QT_TRANSLATE_NOOP("SettingsSchema", "Client certificate (inline)"), T::CertificateData, QString(), signIn,
         QT_TRANSLATE_NOOP("SettingsSchema", "The same certificate as base64 of the PEM text (client-certificate-data). Takes precedence over "
                                             "FORGE_K8S_CLIENT_CERT_FILE."));
    add(QStringLiteral("FORGE_K8S_CLIENT_KEY_FILE"), QT_TRANSLATE_NOOP("SettingsSchema", "Client key file"), T::AbsolutePath, QString(), signIn,
         QT_TRANSLATE_NOOP("SettingsSchema", "PEM file of the client certificate's private key, RSA or EC, unencrypted (client-key). The path is "
                                             "kept, never the key."));
    add(QStringLiteral("FORGE_K8S_CLIENT_KEY_DATA"), QT_TRANSLATE_NOOP("SettingsSchema", "Client key (inline)"), T::Secret, QString(), signIn,
         QT_TRANSLATE_NOOP("SettingsSchema", "The client key as base64 of the PEM text (client-key-data). Kept only in the OS keychain; takes "
                                             "precedence over FORGE_K8S_CLIENT_KEY_FILE."));
    add(QStringLiteral("FORGE_K8S_EXEC"), QT_TRANSLATE_NOOP("SettingsSchema", "Credential plugin"), T::ExecPlugin, QString(), signIn,
         QT_TRANSLATE_NOOP("SettingsSchema", "An exec credential plugin, as the kubeconfig's user.exec in JSON: apiVersion, command, args, env, "
                                             "interactiveMode, provideClusterInfo, installHint (aws eks get-token, gke-gcloud-auth-plugin, kubelogin). "
                                             "Run as kubectl runs it; its token or certificate stays in memory. Takes precedence over tokens."));

    add(QStringLiteral("FORGE_K8S_CA_FILE"), QT_TRANSLATE_NOOP("SettingsSchema", "CA certificates file"), T::CaFile, QString(), network,
         QT_TRANSLATE_NOOP("SettingsSchema", "PEM file with the CA certificates that sign the API server's certificate. "
                                             "Without it (and without FORGE_K8S_CA_DATA) the system CA store is used."));
    add(QStringLiteral("FORGE_K8S_CA_DATA"), QT_TRANSLATE_NOOP("SettingsSchema", "CA certificates (inline)"), T::CaData, QString(), network,
         QT_TRANSLATE_NOOP("SettingsSchema", "The same CA bundle as base64 of the PEM text (kubeconfig's certificate-authority-data). "
                                             "Takes precedence over FORGE_K8S_CA_FILE."));
    add(QStringLiteral("FORGE_K8S_TLS_SERVER_NAME"), QT_TRANSLATE_NOOP("SettingsSchema", "TLS server name"), T::String, QString(), network,
         QT_TRANSLATE_NOOP("SettingsSchema", "Server name to verify the API server's certificate against and send in SNI, when it differs from "
                                             "the URL's host (kubeconfig's tls-server-name)."));
    add(QStringLiteral("FORGE_K8S_PROXY_URL"), QT_TRANSLATE_NOOP("SettingsSchema", "Proxy"), T::ProxyUrl, QString(), network,
         QT_TRANSLATE_NOOP("SettingsSchema", "Proxy for the API server: http:// or socks5:// (kubeconfig's proxy-url); socks5 proxies resolve host names, as "
                                             "with kubectl. Empty: "
                                             "HTTPS_PROXY, HTTP_PROXY and NO_PROXY from the environment, as kubectl reads them."));
    add(QStringLiteral("FORGE_K8S_INSECURE_SKIP_TLS_VERIFY"), QT_TRANSLATE_NOOP("SettingsSchema", "Skip certificate check"), T::Boolean, QStringLiteral("false"), network,
         QT_TRANSLATE_NOOP("SettingsSchema", "Skip verifying the API server's certificate. Only for throw-away clusters: "
                                             "the window shows a warning while it is on."), false);

    add(QStringLiteral("FORGE_K8S_GPU_NODE_LABEL"), QT_TRANSLATE_NOOP("SettingsSchema", "GPU series node label"), T::LabelKey, QStringLiteral("starforge/gpu-series"), pods,
         QT_TRANSLATE_NOOP("SettingsSchema", "Node label whose value is the GPU series (h200, h100, ...). One source for capacity "
                                             "figures and for the nodeSelector of every pool."), false);
    add(QStringLiteral("FORGE_K8S_GPU_PASSTHROUGH"), QT_TRANSLATE_NOOP("SettingsSchema", "Request GPUs from Kubernetes"), T::Boolean, QStringLiteral("true"), pods,
         QT_TRANSLATE_NOOP("SettingsSchema", "Request nvidia.com/gpu for Ray pods. false only for GPU-less test clusters (kind, CI): "
                                             "Ray's logical GPUs stay."), false);
    add(QStringLiteral("FORGE_K8S_SHM_SIZE"), QT_TRANSLATE_NOOP("SettingsSchema", "Shared memory per pod"), T::Quantity, QStringLiteral("64Gi"), pods,
         QT_TRANSLATE_NOOP("SettingsSchema", "Size of the in-memory /dev/shm volume of every Ray pod; Ray's object store lives there."), false);

    add(QStringLiteral("FORGE_IMAGE_NEMO_RL"), QT_TRANSLATE_NOOP("SettingsSchema", "NeMo-RL image"), T::ImageReference, QStringLiteral("nvcr.io/nvidia/nemo-rl:v0.7.0"), images,
         QT_TRANSLATE_NOOP("SettingsSchema", "Container image of the head, worker and submitter pods: NeMo-RL with Ray."), false);
    add(QStringLiteral("FORGE_NEMO_RL_DIR"), QT_TRANSLATE_NOOP("SettingsSchema", "NeMo-RL folder in the image"), T::AbsolutePath, QStringLiteral("/opt/nemo-rl"), images,
         QT_TRANSLATE_NOOP("SettingsSchema", "Where NeMo-RL is installed inside the image; the runner starts its examples/ scripts from there."), false);
    add(QStringLiteral("FORGE_IMAGE_VLLM"), QT_TRANSLATE_NOOP("SettingsSchema", "vLLM image"), T::ImageReference, QStringLiteral("vllm/vllm-openai:v0.20.0"), images,
         QT_TRANSLATE_NOOP("SettingsSchema", "Container image of playground pods, serving an OpenAI-compatible API with vLLM."), false);

    add(QStringLiteral("FORGE_STORAGE_ROOT"), QT_TRANSLATE_NOOP("SettingsSchema", "Storage root in pods"), T::AbsolutePath, QStringLiteral("/starforge"), storage,
         QT_TRANSLATE_NOOP("SettingsSchema", "The one storage root inside pods: jobs/<id>/ checkpoints and logs go under it."), false);
    add(QStringLiteral("FORGE_K8S_STORAGE_PVC"), QT_TRANSLATE_NOOP("SettingsSchema", "Storage claim"), T::Dns1123Subdomain, QStringLiteral("starforge-storage"), storage,
         QT_TRANSLATE_NOOP("SettingsSchema", "PersistentVolumeClaim mounted at the storage root in every Ray pod."));
    add(QStringLiteral("FORGE_K8S_STORAGE_SHARED"), QT_TRANSLATE_NOOP("SettingsSchema", "Claim shared between nodes"), T::Boolean, QStringLiteral("true"), storage,
         QT_TRANSLATE_NOOP("SettingsSchema", "Whether the storage claim is shared between nodes (ReadWriteMany). When false, jobs with "
                                             "more than one node are rejected before submission."), false);
    add(QStringLiteral("FORGE_K8S_STORAGE_MOUNT"), QT_TRANSLATE_NOOP("SettingsSchema", "Claim mount path"), T::AbsolutePath, QString(), storage,
         QT_TRANSLATE_NOOP("SettingsSchema", "Mount path of the storage claim when pods cannot mount it at the storage root. "
                                             "Empty: mount at FORGE_STORAGE_ROOT."));
    add(QStringLiteral("FORGE_K8S_CORPUS_PVC"), QT_TRANSLATE_NOOP("SettingsSchema", "Corpus claim"), T::Dns1123Subdomain, QString(), storage,
         QT_TRANSLATE_NOOP("SettingsSchema", "Optional read-only claim with training corpora, mounted into Ray pods of jobs that ask for it."));

    add(QStringLiteral("FORGE_S3_ENDPOINT"), QT_TRANSLATE_NOOP("SettingsSchema", "Endpoint"), T::Url, QString(), s3,
         QT_TRANSLATE_NOOP("SettingsSchema", "URL of the S3-compatible object store that carries Capsules, logs and job history. "
                                             "https:// gives presigned working_dir URLs; http:// switches to the init-container download."));
    add(QStringLiteral("FORGE_S3_BUCKET"), QT_TRANSLATE_NOOP("SettingsSchema", "Bucket"), T::BucketName, QStringLiteral("starforge"), s3,
         QT_TRANSLATE_NOOP("SettingsSchema", "Bucket for capsules/<sha256>.zip and jobs/<id>/."), false);
    add(QStringLiteral("FORGE_S3_REGION"), QT_TRANSLATE_NOOP("SettingsSchema", "Region"), T::String, QStringLiteral("us-east-1"), s3,
         QT_TRANSLATE_NOOP("SettingsSchema", "Region used in SigV4 signatures. Most S3-compatible servers accept us-east-1."), false);
    add(QStringLiteral("FORGE_S3_PATH_STYLE"), QT_TRANSLATE_NOOP("SettingsSchema", "Path-style addressing"), T::Boolean, QStringLiteral("true"), s3,
         QT_TRANSLATE_NOOP("SettingsSchema", "Address buckets as endpoint/bucket/key (path style) rather than bucket.endpoint/key "
                                             "(virtual-host style). Most self-hosted servers need path style."), false);
    add(QStringLiteral("FORGE_S3_CA_FILE"), QT_TRANSLATE_NOOP("SettingsSchema", "CA certificates file"), T::CaFile, QString(), s3,
         QT_TRANSLATE_NOOP("SettingsSchema", "PEM file of the CA that signed the S3 endpoint's certificate, for a self-hosted store. "
                                             "Without it the system CA store is used."));
    add(QStringLiteral("FORGE_S3_PROXY"), QT_TRANSLATE_NOOP("SettingsSchema", "Proxy"), T::ProxyUrl, QString(), s3,
         QT_TRANSLATE_NOOP("SettingsSchema", "Proxy for the object store: http:// or socks5://. Empty: HTTPS_PROXY, HTTP_PROXY and "
                                             "NO_PROXY from the environment."));
    add(QStringLiteral("FORGE_S3_ACCESS_KEY"), QT_TRANSLATE_NOOP("SettingsSchema", "Access key"), T::Secret, QString(), s3,
         QT_TRANSLATE_NOOP("SettingsSchema", "S3 access key id. Kept only in the OS keychain."));
    add(QStringLiteral("FORGE_S3_SECRET_KEY"), QT_TRANSLATE_NOOP("SettingsSchema", "Secret key"), T::Secret, QString(), s3,
         QT_TRANSLATE_NOOP("SettingsSchema", "S3 secret access key. Kept only in the OS keychain."));

    add(QStringLiteral("FORGE_KUBERAY_RAY_VERSION"), QT_TRANSLATE_NOOP("SettingsSchema", "Ray version"), T::Version, QStringLiteral("2.55.1"), kuberay,
         QT_TRANSLATE_NOOP("SettingsSchema", "rayVersion of every RayCluster: the Ray release in the image, compatible with the operator."), false);
    // Three days: a job that ends on Friday evening while the laptop is shut still has its
    // RayCluster (head and worker logs) when the app or `jobs --follow` runs again on Monday
    // (docs/jobs.md, "Keeping logs while nobody watches").
    add(QStringLiteral("FORGE_KUBERAY_TTL_SECONDS"), QT_TRANSLATE_NOOP("SettingsSchema", "Keep a finished cluster (s)"), T::Integer, QStringLiteral("259200"), kuberay,
         QT_TRANSLATE_NOOP("SettingsSchema", "ttlSecondsAfterFinished: seconds the operator keeps a finished job's RayCluster (the head and "
                                             "worker pods with their logs) before deleting it, whether or not the logs were archived. Logs "
                                             "are archived only while the app or `starforge-cli jobs --follow` runs, so this is how long a "
                                             "finished job may wait for one of them; past it the head and worker logs are lost. Meanwhile "
                                             "the job's idle Ray pods keep their GPUs."),
         false, 0, 7 * 24 * 3600);
    add(QStringLiteral("FORGE_KUBERAY_PRERUNNING_DEADLINE_S"), QT_TRANSLATE_NOOP("SettingsSchema", "Start deadline (s)"), T::Integer, QStringLiteral("1800"), kuberay,
         QT_TRANSLATE_NOOP("SettingsSchema", "Seconds a job may spend before running (image pulls, scheduling) before it is failed and "
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
        // Keyed by the group's English name (the table's group field); the sentences are English
        // source text, translated where shown (SettingGroup::translatedAbout()).
        const QMap<QString, const char *> about{
            {QStringLiteral("Cluster"), QT_TRANSLATE_NOOP("SettingsSchema", "Which Kubernetes cluster and namespace jobs go to, and whose they are.")},
            {QStringLiteral("Sign-in"), QT_TRANSLATE_NOOP("SettingsSchema", "How the app proves who you are to the API server: one of a token, a client certificate or a credential plugin.")},
            {QStringLiteral("Network"), QT_TRANSLATE_NOOP("SettingsSchema", "How the API server's certificate is checked and which proxy reaches it.")},
            // untranslated: the key is the group's English name as the table holds it (translated above)
            {QStringLiteral("GPUs and pods"), QT_TRANSLATE_NOOP("SettingsSchema", "How GPU nodes are recognised and what every Ray pod is given.")},
            {QStringLiteral("Images"), QT_TRANSLATE_NOOP("SettingsSchema", "The container images training jobs and playground pods run.")},
            {QStringLiteral("Storage"), QT_TRANSLATE_NOOP("SettingsSchema", "The shared volume in the pods where checkpoints and logs are written.")},
            // untranslated: the key is the group's English name as the table holds it (translated above)
            {QStringLiteral("Object storage (S3)"), QT_TRANSLATE_NOOP("SettingsSchema", "The bucket that carries your code to the cluster and keeps job history and archived logs.")},
            {QStringLiteral("KubeRay"), QT_TRANSLATE_NOOP("SettingsSchema", "What every RayJob asks of the KubeRay operator: the Ray release, deadlines and clean-up.")},
        };
        QList<SettingGroup> groups;
        for (const SettingDefinition &d : all()) {
            if (groups.isEmpty() || groups.constLast().name != d.group) {
                Q_ASSERT_X(std::none_of(groups.cbegin(), groups.cend(), [&d](const SettingGroup &g) { return g.name == d.group; }),
                           // untranslated: an assertion's message, for developers
                           "SettingsSchema::groups", "a group's settings must be contiguous in the table");
                Q_ASSERT_X(about.contains(d.group), "SettingsSchema::groups", "every group has its sentence");
                groups.append({d.group, QString::fromUtf8(about.value(d.group))});
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

namespace {

// The English names of the types (the CLI's --json and docs/configuration.md), marked for lupdate;
// typeDisplayName() translates them.
const char *typeSource(SettingType type)
{
    switch (type) {
    case SettingType::String: return QT_TRANSLATE_NOOP("SettingsSchema", "text");
    case SettingType::Enum: return QT_TRANSLATE_NOOP("SettingsSchema", "choice");
    case SettingType::Url: return QT_TRANSLATE_NOOP("SettingsSchema", "URL");
    case SettingType::Quantity: return QT_TRANSLATE_NOOP("SettingsSchema", "Kubernetes quantity");
    case SettingType::LabelKey: return QT_TRANSLATE_NOOP("SettingsSchema", "label key");
    case SettingType::Dns1123Label: return QT_TRANSLATE_NOOP("SettingsSchema", "DNS-1123 label");
    case SettingType::Dns1123Subdomain: return QT_TRANSLATE_NOOP("SettingsSchema", "DNS-1123 subdomain");
    case SettingType::Integer: return QT_TRANSLATE_NOOP("SettingsSchema", "integer");
    case SettingType::Boolean: return QT_TRANSLATE_NOOP("SettingsSchema", "boolean");
    case SettingType::AbsolutePath: return QT_TRANSLATE_NOOP("SettingsSchema", "absolute path");
    case SettingType::ImageReference: return QT_TRANSLATE_NOOP("SettingsSchema", "image reference");
    case SettingType::BucketName: return QT_TRANSLATE_NOOP("SettingsSchema", "bucket name");
    case SettingType::Version: return QT_TRANSLATE_NOOP("SettingsSchema", "version");
    case SettingType::CaFile: return QT_TRANSLATE_NOOP("SettingsSchema", "PEM file");
    case SettingType::CaData: return QT_TRANSLATE_NOOP("SettingsSchema", "base64 PEM");
    case SettingType::CertificateFile: return QT_TRANSLATE_NOOP("SettingsSchema", "PEM file");
    case SettingType::CertificateData: return QT_TRANSLATE_NOOP("SettingsSchema", "base64 PEM");
    case SettingType::ProxyUrl: return QT_TRANSLATE_NOOP("SettingsSchema", "proxy URL");
    case SettingType::ExecPlugin: return QT_TRANSLATE_NOOP("SettingsSchema", "exec plugin (JSON)");
    case SettingType::Secret: return QT_TRANSLATE_NOOP("SettingsSchema", "secret (keychain)");
    }
    return "";
}

} // namespace

QString SettingsSchema::typeName(SettingType type)
{
    return QString::fromUtf8(typeSource(type));
}

QString SettingsSchema::typeDisplayName(SettingType type)
{
    return QCoreApplication::translate(Context, typeSource(type));
}

QString SettingsSchema::translate(const QString &source)
{
    return source.isEmpty() ? QString() : QCoreApplication::translate(Context, source.toUtf8().constData());
}

QString SettingDefinition::translatedLabel() const
{
    return SettingsSchema::translate(label);
}

QString SettingDefinition::translatedGroup() const
{
    return SettingsSchema::translate(group);
}

QString SettingDefinition::translatedHelp() const
{
    return SettingsSchema::translate(help);
}

QString SettingGroup::translatedName() const
{
    return SettingsSchema::translate(name);
}

QString SettingGroup::translatedAbout() const
{
    return SettingsSchema::translate(about);
}

Result<QString> SettingsSchema::validate(const SettingDefinition &definition, const QString &value)
{
    const QString trimmed = value.trimmed();
    if (trimmed.isEmpty()) {
        if (definition.optional) {
            return QString();
        }
        return Error::invalid(Text::tr("%1 must not be empty; its default is '%2'").arg(definition.key, definition.defaultValue));
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
            checked = Error::invalid(Text::tr("'%1' is not one of: %2").arg(trimmed, definition.choices.join(QStringLiteral(", "))));
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
        return Error::invalid(Text::tr("%1: %2").arg(definition.key, checked.error().message));
    }
    return checked;
}

Result<QString> SettingsSchema::validate(const QString &key, const QString &value)
{
    const SettingDefinition *definition = find(key);
    if (!definition) {
        const QString suggestion = suggestKey(key);
        if (suggestion.isEmpty()) {
            return Error::invalid(Text::tr("%1 is not a setting; `starforge-cli settings` lists them").arg(key));
        }
        return Error::invalid(Text::tr("%1 is not a setting (did you mean %2?); `starforge-cli settings` lists them").arg(key, suggestion));
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
