#include "core/config/kubeconfig.h"

#include "core/config/settingsschema.h"
#include "core/logging/logging.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

#include <QDir>
#include <QFile>
#include <QFileInfo>

namespace Starforge::Config {

namespace {

QString text(const YAML::Node &node, const char *key)
{
    const YAML::Node child = node[key];
    if (!child || !child.IsScalar()) {
        return QString();
    }
    return QString::fromStdString(child.Scalar());
}

bool flag(const YAML::Node &node, const char *key)
{
    const YAML::Node child = node[key];
    if (!child || !child.IsScalar()) {
        return false;
    }
    const QString value = QString::fromStdString(child.Scalar()).toLower();
    return value == u"true" || value == u"yes" || value == u"1";
}

QString resolvePath(const QString &path, const QString &directory)
{
    if (path.isEmpty()) {
        return path;
    }
    QString expanded = path;
    if (expanded.startsWith(QStringLiteral("~/"))) {
        expanded = QDir::homePath() + expanded.mid(1);
    }
    return QDir::cleanPath(QDir(directory).absoluteFilePath(expanded));
}

} // namespace

QStringList Kubeconfig::defaultPaths()
{
    const QString fromEnv = qEnvironmentVariable("KUBECONFIG");
    if (!fromEnv.isEmpty()) {
        QStringList paths = fromEnv.split(u':', Qt::SkipEmptyParts);
        return paths;
    }
    return {QDir::homePath() + QStringLiteral("/.kube/config")};
}

Result<Kubeconfig> Kubeconfig::load(const QStringList &paths)
{
    Kubeconfig config;
    bool any = false;
    for (const QString &path : paths) {
        QFile file(path);
        if (!file.exists()) {
            // kubectl skips missing entries of a KUBECONFIG list; only a single named file must exist.
            if (paths.size() == 1) {
                return Error::notFound(QStringLiteral("the kubeconfig %1 does not exist; give its path, e.g. ~/.kube/config").arg(path));
            }
            continue;
        }
        if (!file.open(QIODevice::ReadOnly)) {
            return Error::io(QStringLiteral("cannot read the kubeconfig %1: %2").arg(path, file.errorString()));
        }
        if (auto merged = config.merge(file.readAll(), path, QFileInfo(path).absolutePath()); !merged) {
            return merged.error();
        }
        any = true;
    }
    if (!any) {
        return Error::notFound(QStringLiteral("none of the kubeconfig files exist: %1").arg(paths.join(QStringLiteral(", "))));
    }
    return config;
}

Result<Kubeconfig> Kubeconfig::fromYaml(const QByteArray &yaml, const QString &directory)
{
    Kubeconfig config;
    if (auto merged = config.merge(yaml, QStringLiteral("the kubeconfig"), directory); !merged) {
        return merged.error();
    }
    return config;
}

Result<void> Kubeconfig::merge(const QByteArray &yaml, const QString &source, const QString &directory)
{
    // yaml-cpp reports errors by exception; they stop here.
    try {
        const YAML::Node root = YAML::Load(yaml.toStdString());
        if (!root || root.IsNull()) {
            return {}; // an empty file contributes nothing, as with kubectl
        }
        if (!root.IsMap()) {
            return Error::invalid(QStringLiteral("%1 is not a kubeconfig: its top level is not a mapping").arg(source));
        }
        if (m_currentContext.isEmpty()) {
            m_currentContext = text(root, "current-context");
        }
        const YAML::Node clusters = root["clusters"];
        if (clusters && clusters.IsSequence()) {
            for (const YAML::Node &entry : clusters) {
                const QString name = text(entry, "name");
                const YAML::Node c = entry["cluster"];
                if (name.isEmpty() || !c || !c.IsMap() || m_clusters.contains(name)) {
                    continue;
                }
                Cluster cluster;
                cluster.server = text(c, "server");
                cluster.caFile = resolvePath(text(c, "certificate-authority"), directory);
                cluster.caData = text(c, "certificate-authority-data").toLatin1();
                cluster.insecure = flag(c, "insecure-skip-tls-verify");
                cluster.proxyUrl = text(c, "proxy-url");
                m_clusters.insert(name, cluster);
            }
        }
        const YAML::Node users = root["users"];
        if (users && users.IsSequence()) {
            for (const YAML::Node &entry : users) {
                const QString name = text(entry, "name");
                const YAML::Node u = entry["user"];
                if (name.isEmpty() || m_users.contains(name)) {
                    continue;
                }
                User user;
                if (u && u.IsMap()) {
                    user.token = text(u, "token");
                    user.tokenFile = resolvePath(text(u, "tokenFile"), directory);
                    if (u["client-certificate"] || u["client-certificate-data"] || u["client-key"] || u["client-key-data"]) {
                        user.unsupported.append(QStringLiteral("client certificates"));
                    }
                    if (u["exec"]) {
                        const QString command = text(u["exec"], "command");
                        user.unsupported.append(command.isEmpty() ? QStringLiteral("an exec credential plugin")
                                                                  : QStringLiteral("the exec credential plugin '%1'").arg(command));
                    }
                    if (u["auth-provider"]) {
                        user.unsupported.append(QStringLiteral("the auth provider '%1'").arg(text(u["auth-provider"], "name")));
                    }
                    if (u["username"] || u["password"]) {
                        user.unsupported.append(QStringLiteral("basic authentication (username and password)"));
                    }
                }
                m_users.insert(name, user);
            }
        }
        const YAML::Node contexts = root["contexts"];
        if (contexts && contexts.IsSequence()) {
            for (const YAML::Node &entry : contexts) {
                const QString name = text(entry, "name");
                const YAML::Node c = entry["context"];
                if (name.isEmpty() || !c || !c.IsMap()) {
                    continue;
                }
                const bool known = std::any_of(m_contexts.cbegin(), m_contexts.cend(),
                                               [&name](const KubeconfigContext &k) { return k.name == name; });
                if (known) {
                    continue;
                }
                m_contexts.append({name, text(c, "cluster"), text(c, "user"), text(c, "namespace")});
            }
        }
    } catch (const YAML::Exception &e) {
        return Error::invalid(QStringLiteral("%1 is not valid YAML: %2").arg(source, QString::fromStdString(e.what())));
    }
    return {};
}

QStringList Kubeconfig::contextNames() const
{
    QStringList names;
    for (const KubeconfigContext &c : m_contexts) {
        names.append(c.name);
    }
    return names;
}

Result<KubeconfigImport> Kubeconfig::importContext(const QString &requested) const
{
    const QString name = requested.isEmpty() ? m_currentContext : requested;
    if (name.isEmpty()) {
        return Error::invalid(QStringLiteral("the kubeconfig has no current-context; choose one of: %1")
                                  .arg(contextNames().join(QStringLiteral(", "))));
    }
    const auto it = std::find_if(m_contexts.cbegin(), m_contexts.cend(), [&name](const KubeconfigContext &c) { return c.name == name; });
    if (it == m_contexts.cend()) {
        return Error::notFound(QStringLiteral("the kubeconfig has no context '%1'; it has: %2")
                                   .arg(name, contextNames().isEmpty() ? QStringLiteral("none") : contextNames().join(QStringLiteral(", "))));
    }
    if (!m_clusters.contains(it->cluster)) {
        return Error::invalid(QStringLiteral("context '%1' names the cluster '%2', which the kubeconfig does not define").arg(name, it->cluster));
    }
    const Cluster cluster = m_clusters.value(it->cluster);
    const User user = m_users.value(it->user);
    if (!it->user.isEmpty() && !m_users.contains(it->user)) {
        return Error::invalid(QStringLiteral("context '%1' names the user '%2', which the kubeconfig does not define").arg(name, it->user));
    }

    KubeconfigImport result;
    result.contextName = name;
    if (user.token.isEmpty() && user.tokenFile.isEmpty()) {
        if (!user.unsupported.isEmpty()) {
            return Error::unsupported(QStringLiteral("context '%1' signs in with %2, which Starforge does not support yet. "
                                                     "Use a bearer token instead, e.g. a ServiceAccount token from "
                                                     "`kubectl create token <serviceaccount> -n <namespace>`, and set it as FORGE_K8S_TOKEN.")
                                          .arg(name, user.unsupported.join(QStringLiteral(" and "))));
        }
        return Error::invalid(QStringLiteral("context '%1' has no token or tokenFile for user '%2'; add one, or set FORGE_K8S_TOKEN after import")
                                  .arg(name, it->user));
    }
    if (!user.unsupported.isEmpty()) {
        result.notes.append(QStringLiteral("the user also has %1, which Starforge ignores; the token is used").arg(user.unsupported.join(QStringLiteral(" and "))));
    }
    if (!cluster.proxyUrl.isEmpty()) {
        result.notes.append(QStringLiteral("the cluster's proxy-url %1 is not used; set the proxy in the environment (https_proxy)").arg(cluster.proxyUrl));
    }

    auto put = [&result, &name](const QString &key, const QString &value) -> Result<void> {
        const auto checked = SettingsSchema::validate(key, value);
        if (!checked) {
            return Error::invalid(QStringLiteral("context '%1': %2").arg(name, checked.error().message));
        }
        if (!checked->isEmpty()) {
            result.values.insert(key, *checked);
        }
        return {};
    };
    if (cluster.server.isEmpty()) {
        return Error::invalid(QStringLiteral("cluster '%1' of context '%2' has no server URL").arg(it->cluster, name));
    }
    if (auto ok = put(QStringLiteral("FORGE_K8S_API_SERVER"), cluster.server); !ok) {
        return ok.error();
    }
    if (!cluster.caData.isEmpty()) {
        if (auto ok = put(QStringLiteral("FORGE_K8S_CA_DATA"), QString::fromLatin1(cluster.caData)); !ok) {
            return ok.error();
        }
    } else if (!cluster.caFile.isEmpty()) {
        if (auto ok = put(QStringLiteral("FORGE_K8S_CA_FILE"), cluster.caFile); !ok) {
            return ok.error();
        }
    }
    if (cluster.insecure) {
        result.values.insert(QStringLiteral("FORGE_K8S_INSECURE_SKIP_TLS_VERIFY"), QStringLiteral("true"));
        result.notes.append(QStringLiteral("the cluster skips TLS verification (insecure-skip-tls-verify); the window will show a warning"));
    }
    if (!it->namespaceName.isEmpty()) {
        if (auto ok = put(QStringLiteral("FORGE_K8S_NAMESPACE"), it->namespaceName); !ok) {
            return ok.error();
        }
    }
    if (!user.token.isEmpty()) {
        result.token = user.token;
        Logging::addSecret(user.token);
    } else if (auto ok = put(QStringLiteral("FORGE_K8S_TOKEN_FILE"), user.tokenFile); !ok) {
        return ok.error();
    }
    qCInfo(lcKubeconfig) << "imported context" << name << "server" << cluster.server;
    return result;
}

} // namespace Starforge::Config
