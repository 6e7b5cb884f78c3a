// The kubelet's image pulls: the pull policy against the images "already on the machine", the
// Pulling / Pulled / ErrImagePull / ImagePullBackOff events and waiting reasons, and the
// private registry, which answers 401 unless an imagePullSecrets Secret holds credentials for
// its host, matched as the kubelet's credential keyring matches docker config "auths" keys.

#include "sandbox/cluster/kubelet.h"

#include "sandbox/cluster/kubeletpod.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTimer>
#include <QUrl>

namespace Starforge::Sandbox {

using namespace KubeletCommon;

namespace {

// "host/path/name:tag" or "…@sha256:…" → "host/path/name".
QString repositoryOf(const QString &ref)
{
    QString repository = ref;
    if (const qsizetype at = repository.indexOf(u'@'); at >= 0) {
        repository.truncate(at);
    } else if (const qsizetype colon = repository.lastIndexOf(u':'); colon > repository.lastIndexOf(u'/')) {
        repository.truncate(colon);
    }
    return repository;
}

// A docker config "auths" key against a repository ("host/path/name"), as the kubelet's keyring
// matches them: the scheme and a /v1/ or /v2/ path prefix dropped, the host equal part by part
// (a part may be a glob such as "*"), the port equal, and the key's path a prefix of the
// repository's path.
bool authsKeyMatches(const QString &key, const QString &repository)
{
    QString k = key;
    for (const char *scheme : {"https://", "http://"}) {
        if (k.startsWith(QLatin1String(scheme))) k = k.mid(qstrlen(scheme));
    }
    const qsizetype slash = k.indexOf(u'/');
    const QString keyHost = slash < 0 ? k : k.left(slash);
    QString keyPath = slash < 0 ? QString() : k.mid(slash);
    if (keyPath.startsWith(QLatin1String("/v1/")) || keyPath.startsWith(QLatin1String("/v2/"))) keyPath = keyPath.mid(3);
    if (keyPath == QLatin1String("/")) keyPath.clear();
    const QString host = repository.section(u'/', 0, 0);
    const QString path = repository.mid(host.size());
    if (!path.startsWith(keyPath) || keyHost.section(u':', 1) != host.section(u':', 1)) {
        return false;
    }
    const QStringList globParts = keyHost.section(u':', 0, 0).toLower().split(u'.');
    const QStringList parts = host.section(u':', 0, 0).toLower().split(u'.');
    if (globParts.size() != parts.size()) {
        return false;
    }
    for (qsizetype i = 0; i < parts.size(); ++i) {
        const QRegularExpression glob(QRegularExpression::anchoredPattern(
            QRegularExpression::wildcardToRegularExpression(globParts[i], QRegularExpression::UnanchoredWildcardConversion)));
        if (!glob.match(parts[i]).hasMatch()) return false;
    }
    return true;
}

} // namespace

QString Kubelet::normalizeImage(const QString &image)
{
    QString name = image;
    QString digestOrTag;
    const qsizetype at = name.indexOf(u'@');
    if (at >= 0) {
        digestOrTag = name.mid(at);
        name.truncate(at);
    } else {
        const qsizetype colon = name.lastIndexOf(u':');
        if (colon > name.lastIndexOf(u'/')) {
            digestOrTag = name.mid(colon);
            name.truncate(colon);
        } else {
            digestOrTag = QStringLiteral(":latest");
        }
    }
    const QString first = name.section(u'/', 0, 0);
    const bool hasRegistry = name.contains(u'/') && (first.contains(u'.') || first.contains(u':') || first == QLatin1String("localhost"));
    if (!hasRegistry) {
        name = QStringLiteral("docker.io/") + (name.contains(u'/') ? name : QStringLiteral("library/") + name);
    }
    return name + digestOrTag;
}

void Kubelet::pull(Pod &pod, Container &container)
{
    // The kubelet reads the pod's pull secrets on every sync and says which it could not get.
    if (const QStringList missing = missingPullSecrets(pod); !missing.isEmpty()) {
        record(pod, QStringLiteral("Warning"), QStringLiteral("FailedToRetrieveImagePullSecret"),
               QStringLiteral("Unable to retrieve some image pull secrets (%1); attempting to pull the image may not succeed.")
                   .arg(missing.join(QStringLiteral(", "))), {});
    }
    const QString image = container.image();
    const QString policy = container.spec.value(QStringLiteral("imagePullPolicy")).toString(
        image.endsWith(QLatin1String(":latest")) || !normalizeImage(image).section(u'/', -1).contains(u':') || !image.contains(u':')
            ? QStringLiteral("Always") : QStringLiteral("IfNotPresent"));
    const bool present = m_options.presentImages.contains(image) || m_options.presentImages.contains(normalizeImage(image));
    const QString field = container.fieldPath();
    if (present && policy != QLatin1String("Always")) {
        record(pod, QStringLiteral("Normal"), QStringLiteral("Pulled"),
               QStringLiteral("Container image %1 already present on machine").arg(quoted(image)), field);
        container.pulled = true;
        run(pod, container);
        return;
    }
    if (!present && policy == QLatin1String("Never")) {
        container.waitingReason = QStringLiteral("ErrImageNeverPull");
        container.waitingMessage = QStringLiteral("Container image %1 is not present with pull policy of Never").arg(quoted(image));
        record(pod, QStringLiteral("Warning"), QStringLiteral("ErrImageNeverPull"), container.waitingMessage, field);
        syncStatus(pod);
        return;
    }
    record(pod, QStringLiteral("Normal"), QStringLiteral("Pulling"), QStringLiteral("Pulling image %1").arg(quoted(image)), field);
    const QString ref = normalizeImage(image);
    const bool privateImage = isPrivate(ref);
    if (present || (privateImage && hasPullCredentials(pod, ref))) {
        record(pod, QStringLiteral("Normal"), QStringLiteral("Pulled"),
               QStringLiteral("Successfully pulled image %1 in 412ms (412ms including waiting). Image size: 52428800 bytes.").arg(quoted(image)), field);
        container.pulled = true;
        run(pod, container);
        return;
    }
    if (privateImage) {
        // The registry's 401 as containerd reports it: its bearer challenge sends containerd to
        // the token endpoint, which refuses an anonymous token (docs/kubernetes-facts.md, "Kubelet messages").
        const QString host = ref.section(u'/', 0, 0);
        const QString repository = repositoryOf(ref).section(u'/', 1);
        const QString tokenUrl = QStringLiteral("https://%1/token?scope=%2&service=%3")
                                     .arg(host, QString::fromLatin1(QUrl::toPercentEncoding(QStringLiteral("repository:%1:pull").arg(repository))),
                                          QString::fromLatin1(QUrl::toPercentEncoding(host)));
        pullFailed(pod, container,
                   QStringLiteral("rpc error: code = Unknown desc = failed to pull and unpack image %1: failed to resolve reference %1: "
                                  "failed to authorize: failed to fetch anonymous token: unexpected status from GET request to %2: 401 Unauthorized")
                       .arg(quoted(ref), tokenUrl),
                   field);
        return;
    }
    pullFailed(pod, container,
               QStringLiteral("rpc error: code = NotFound desc = failed to pull and unpack image %1: failed to resolve reference %1: %2: not found")
                   .arg(quoted(ref), ref),
               field);
}

void Kubelet::pullFailed(Pod &pod, Container &container, const QString &error, const QString &field)
{
    const QString image = container.image();
    record(pod, QStringLiteral("Warning"), QStringLiteral("Failed"), QStringLiteral("Failed to pull image %1: %2").arg(quoted(image), error), field);
    record(pod, QStringLiteral("Warning"), QStringLiteral("Failed"), QStringLiteral("Error: ErrImagePull"), field);
    container.waitingReason = QStringLiteral("ErrImagePull");
    container.waitingMessage = error;
    ++container.pullFailures;
    syncStatus(pod);
    // Then the back-off, doubling up to five minutes, with a new pull attempt after each.
    const int backoff = std::min(m_options.imagePullBackoffMs << std::min(container.pullFailures - 1, 5), 300000);
    QTimer::singleShot(std::min(1000, backoff / 2), pod.context.get(), [this, uid = pod.uid, c = &container, image, field] {
        const auto p = m_pods.value(uid);
        if (!p) return;
        c->waitingReason = QStringLiteral("ImagePullBackOff");
        c->waitingMessage = QStringLiteral("Back-off pulling image %1").arg(quoted(image));
        record(*p, QStringLiteral("Normal"), QStringLiteral("BackOff"), c->waitingMessage, field);
        record(*p, QStringLiteral("Warning"), QStringLiteral("Failed"), QStringLiteral("Error: ImagePullBackOff"), field);
        syncStatus(*p);
    });
    QTimer::singleShot(backoff, pod.context.get(), [this, uid = pod.uid, c = &container] {
        if (const auto p = m_pods.value(uid)) {
            pull(*p, *c);
        }
    });
}

bool Kubelet::isPrivate(const QString &ref) const
{
    return !m_options.privateRegistry.isEmpty() && ref.startsWith(m_options.privateRegistry);
}

QStringList Kubelet::missingPullSecrets(const Pod &pod) const
{
    QStringList missing;
    for (const QJsonValue &v : pod.object.value(QStringLiteral("spec")).toObject().value(QStringLiteral("imagePullSecrets")).toArray()) {
        const QString name = v.toObject().value(QStringLiteral("name")).toString();
        if (!name.isEmpty() && !m_store->get(secretType().storage, pod.ns, name)) {
            missing << name;
        }
    }
    return missing;
}

bool Kubelet::hasPullCredentials(const Pod &pod, const QString &ref) const
{
    // The kubelet looks credentials up for the repository: the reference without tag or digest.
    const QString repository = repositoryOf(ref);
    for (const QJsonValue &v : pod.object.value(QStringLiteral("spec")).toObject().value(QStringLiteral("imagePullSecrets")).toArray()) {
        const ObjectPtr secret = m_store->get(secretType().storage, pod.ns, v.toObject().value(QStringLiteral("name")).toString());
        // Only kubernetes.io/dockerconfigjson Secrets with a .dockerconfigjson key count.
        if (!secret || secret->object.value(QStringLiteral("type")).toString() != QLatin1String("kubernetes.io/dockerconfigjson")) {
            continue;
        }
        const QByteArray config = QByteArray::fromBase64(
            secret->object.value(QStringLiteral("data")).toObject().value(QStringLiteral(".dockerconfigjson")).toString().toLatin1());
        const QJsonObject auths = QJsonDocument::fromJson(config).object().value(QStringLiteral("auths")).toObject();
        for (auto it = auths.begin(); it != auths.end(); ++it) {
            const QJsonObject entry = it.value().toObject();
            QString username = entry.value(QStringLiteral("username")).toString();
            QString password = entry.value(QStringLiteral("password")).toString();
            if (const QString auth = entry.value(QStringLiteral("auth")).toString(); !auth.isEmpty()) {
                const QString decoded = QString::fromUtf8(QByteArray::fromBase64(auth.toLatin1()));
                username = decoded.section(u':', 0, 0);
                password = decoded.section(u':', 1);
            }
            if (!username.isEmpty() && !password.isEmpty() && authsKeyMatches(it.key(), repository)) {
                return true; // the sandbox's registry takes any user name and password
            }
        }
    }
    return false;
}

} // namespace Starforge::Sandbox
