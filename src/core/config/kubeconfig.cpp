#include "core/config/kubeconfig.h"

#include "core/config/execplugin.h"
#include "core/config/settingsschema.h"
#include "core/net/clientidentity.h"
#include "core/logging/logging.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace Starforge::Config {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text { Q_DECLARE_TR_FUNCTIONS(Kubeconfig) };

// "A" or "A and B": what a user signs in with that Starforge does not support (at most the two).
QString joinedWithAnd(const QStringList &items)
{
    if (items.size() == 2) {
        return Text::tr("%1 and %2").arg(items.at(0), items.at(1));
    }
    return items.join(QStringLiteral(", "));
}

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

// A YAML node as JSON, for the exec stanza (strings, lists, maps; booleans where YAML says so).
QJsonValue toJson(const YAML::Node &node)
{
    if (node.IsSequence()) {
        QJsonArray array;
        for (const YAML::Node &item : node) array.append(toJson(item));
        return array;
    }
    if (node.IsMap()) {
        QJsonObject object;
        for (const auto &entry : node) object.insert(QString::fromStdString(entry.first.as<std::string>()), toJson(entry.second));
        return object;
    }
    if (node.IsScalar()) {
        const QString value = QString::fromStdString(node.Scalar());
        if (node.Tag() != "!" && (value == u"true" || value == u"false")) return value == u"true";
        return value;
    }
    return QJsonValue();
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
                return Error::notFound(Text::tr("the kubeconfig %1 does not exist; give its path, e.g. ~/.kube/config").arg(path));
            }
            continue;
        }
        if (!file.open(QIODevice::ReadOnly)) {
            return Error::io(Text::tr("cannot read the kubeconfig %1: %2").arg(path, file.errorString()));
        }
        if (auto merged = config.merge(file.readAll(), path, QFileInfo(path).absolutePath()); !merged) {
            return merged.error();
        }
        any = true;
    }
    if (!any) {
        return Error::notFound(Text::tr("none of the kubeconfig files exist: %1").arg(paths.join(QStringLiteral(", "))));
    }
    return config;
}

Result<Kubeconfig> Kubeconfig::fromYaml(const QByteArray &yaml, const QString &directory)
{
    Kubeconfig config;
    if (auto merged = config.merge(yaml, Text::tr("the kubeconfig"), directory); !merged) {
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
            return Error::invalid(Text::tr("%1 is not a kubeconfig: its top level is not a mapping").arg(source));
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
                cluster.tlsServerName = text(c, "tls-server-name");
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
                    user.clientCertificate = resolvePath(text(u, "client-certificate"), directory);
                    user.clientCertificateData = text(u, "client-certificate-data").toLatin1();
                    user.clientKey = resolvePath(text(u, "client-key"), directory);
                    user.clientKeyData = text(u, "client-key-data").toLatin1();
                    if (u["exec"] && u["exec"].IsMap()) {
                        QJsonObject exec = toJson(u["exec"]).toObject();
                        // As client-go does: a command with a path separator is relative to the
                        // kubeconfig that names it; a bare name is looked up on PATH when run.
                        const QString command = exec.value(QStringLiteral("command")).toString();
                        if (command.contains(QLatin1Char('/'))) exec.insert(QStringLiteral("command"), resolvePath(command, directory));
                        user.execJson = QString::fromUtf8(QJsonDocument(exec).toJson(QJsonDocument::Compact));
                    }
                    if (u["auth-provider"]) {
                        user.unsupported.append(Text::tr("the auth provider '%1'").arg(text(u["auth-provider"], "name")));
                    }
                    if (u["username"] || u["password"]) {
                        user.unsupported.append(Text::tr("basic authentication (username and password)"));
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
        return Error::invalid(Text::tr("%1 is not valid YAML: %2").arg(source, QString::fromStdString(e.what())));
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
        return Error::invalid(Text::tr("the kubeconfig has no current-context; choose one of: %1")
                                  .arg(contextNames().join(QStringLiteral(", "))));
    }
    const auto it = std::find_if(m_contexts.cbegin(), m_contexts.cend(), [&name](const KubeconfigContext &c) { return c.name == name; });
    if (it == m_contexts.cend()) {
        return Error::notFound(Text::tr("the kubeconfig has no context '%1'; it has: %2")
                                   .arg(name, contextNames().isEmpty() ? Text::tr("none") : contextNames().join(QStringLiteral(", "))));
    }
    if (!m_clusters.contains(it->cluster)) {
        return Error::invalid(Text::tr("context '%1' names the cluster '%2', which the kubeconfig does not define").arg(name, it->cluster));
    }
    const Cluster cluster = m_clusters.value(it->cluster);
    const User user = m_users.value(it->user);
    if (!it->user.isEmpty() && !m_users.contains(it->user)) {
        return Error::invalid(Text::tr("context '%1' names the user '%2', which the kubeconfig does not define").arg(name, it->user));
    }

    KubeconfigImport result;
    result.contextName = name;
    const bool hasCertificate = !user.clientCertificate.isEmpty() || !user.clientCertificateData.isEmpty();
    const bool hasKey = !user.clientKey.isEmpty() || !user.clientKeyData.isEmpty();
    const bool hasToken = !user.token.isEmpty() || !user.tokenFile.isEmpty();
    if (!hasToken && !hasCertificate && user.execJson.isEmpty()) {
        if (!user.unsupported.isEmpty()) {
            return Error::unsupported(Text::tr("context '%1' signs in with %2, which Starforge does not support. Use a token, "
                                               "a client certificate or an exec credential plugin (what kubectl supports today).")
                                          .arg(name, joinedWithAnd(user.unsupported)));
        }
        return Error::invalid(Text::tr("context '%1' gives user '%2' no token, client certificate or exec plugin; add one to the "
                                       "kubeconfig, or set FORGE_K8S_TOKEN after import")
                                  .arg(name, it->user));
    }
    if (hasCertificate != hasKey) {
        return Error::invalid(hasCertificate
                                  ? Text::tr("context '%1': user '%2' has a client certificate but no client key; kubectl needs both as well")
                                        .arg(name, it->user)
                                  : Text::tr("context '%1': user '%2' has a client key but no client certificate; kubectl needs both as well")
                                        .arg(name, it->user));
    }
    if (!user.unsupported.isEmpty()) {
        result.notes.append(Text::tr("the user also has %1, which Starforge ignores").arg(joinedWithAnd(user.unsupported)));
    }

    auto put = [&result, &name](const QString &key, const QString &value, const QString &field) -> Result<void> {
        const auto checked = SettingsSchema::validate(key, value);
        if (!checked) {
            //: %2: the kubeconfig field ("cluster 'c' server"), %3: what is wrong with its value
            return Error::invalid(Text::tr("context '%1', %2: %3").arg(name, field, checked.error().message));
        }
        if (!checked->isEmpty()) {
            result.values.insert(key, *checked);
            result.taken.append(Text::tr("%1 → %2").arg(field, key));
        }
        return {};
    };
    auto putSecret = [&result](const QString &key, const QString &value, const QString &field) {
        result.secrets.insert(key, value);
        if (!value.isEmpty()) {
            Logging::addSecret(value);
            result.taken.append(Text::tr("%1 → %2 (in the keychain)").arg(field, key));
        }
    };
    if (cluster.server.isEmpty()) {
        return Error::invalid(Text::tr("cluster '%1' of context '%2' has no server URL").arg(it->cluster, name));
    }
    // A field of the kubeconfig as the user finds it there; the field's name is the kubeconfig's own.
    const auto clusterField = [&it](const QString &field) {
        //: %2: a kubeconfig field name (server, certificate-authority-data, ...), as written in the file
        return Text::tr("cluster '%1' %2").arg(it->cluster, field);
    };
    if (auto ok = put(QStringLiteral("FORGE_K8S_API_SERVER"), cluster.server, clusterField(QStringLiteral("server"))); !ok) return ok.error();
    if (!cluster.caData.isEmpty()) {
        if (auto ok = put(QStringLiteral("FORGE_K8S_CA_DATA"), QString::fromLatin1(cluster.caData), clusterField(QStringLiteral("certificate-authority-data"))); !ok) {
            return ok.error();
        }
    } else if (!cluster.caFile.isEmpty()) {
        if (auto ok = put(QStringLiteral("FORGE_K8S_CA_FILE"), cluster.caFile, clusterField(QStringLiteral("certificate-authority"))); !ok) {
            return ok.error();
        }
    }
    if (!cluster.tlsServerName.isEmpty()) {
        if (auto ok = put(QStringLiteral("FORGE_K8S_TLS_SERVER_NAME"), cluster.tlsServerName, clusterField(QStringLiteral("tls-server-name"))); !ok) {
            return ok.error();
        }
    }
    if (!cluster.proxyUrl.isEmpty()) {
        if (auto ok = put(QStringLiteral("FORGE_K8S_PROXY_URL"), cluster.proxyUrl, clusterField(QStringLiteral("proxy-url"))); !ok) {
            return ok.error();
        }
    }
    if (cluster.insecure) {
        result.values.insert(QStringLiteral("FORGE_K8S_INSECURE_SKIP_TLS_VERIFY"), QStringLiteral("true"));
        result.taken.append(Text::tr("%1 → %2").arg(clusterField(QStringLiteral("insecure-skip-tls-verify")),
                                                     QStringLiteral("FORGE_K8S_INSECURE_SKIP_TLS_VERIFY")));
        result.notes.append(Text::tr("the cluster skips TLS verification (insecure-skip-tls-verify); the window will show a warning"));
    }
    if (!it->namespaceName.isEmpty()) {
        if (auto ok = put(QStringLiteral("FORGE_K8S_NAMESPACE"), it->namespaceName, Text::tr("context '%1' namespace").arg(name)); !ok) {
            return ok.error();
        }
    }
    const auto userField = [&it](const QString &field) {
        //: %2: a kubeconfig field name (token, client-key-data, ...), as written in the file
        return Text::tr("user '%1' %2").arg(it->user, field);
    };
    putSecret(QStringLiteral("FORGE_K8S_TOKEN"), user.token, userField(QStringLiteral("token")));
    if (user.token.isEmpty() && !user.tokenFile.isEmpty()) {
        if (auto ok = put(QStringLiteral("FORGE_K8S_TOKEN_FILE"), user.tokenFile, userField(QStringLiteral("tokenFile"))); !ok) return ok.error();
    }
    if (!user.clientCertificateData.isEmpty()) {
        if (auto ok = put(QStringLiteral("FORGE_K8S_CLIENT_CERT_DATA"), QString::fromLatin1(user.clientCertificateData),
                          userField(QStringLiteral("client-certificate-data")));
            !ok) {
            return ok.error();
        }
    } else if (!user.clientCertificate.isEmpty()) {
        if (auto ok = put(QStringLiteral("FORGE_K8S_CLIENT_CERT_FILE"), user.clientCertificate, userField(QStringLiteral("client-certificate"))); !ok) {
            return ok.error();
        }
    }
    // An inline key is a secret: it goes to the keychain, never into the settings file. A key
    // file stays a path.
    putSecret(QStringLiteral("FORGE_K8S_CLIENT_KEY_DATA"), QString::fromLatin1(user.clientKeyData), userField(QStringLiteral("client-key-data")));
    if (user.clientKeyData.isEmpty() && !user.clientKey.isEmpty()) {
        if (auto ok = put(QStringLiteral("FORGE_K8S_CLIENT_KEY_FILE"), user.clientKey, userField(QStringLiteral("client-key"))); !ok) return ok.error();
    }
    if (hasCertificate) {
        // Said now rather than at the first connection: an expired certificate, a wrong key.
        QByteArray certificate = QByteArray::fromBase64(user.clientCertificateData);
        QByteArray key = QByteArray::fromBase64(user.clientKeyData);
        auto readFile = [](const QString &path) {
            QFile file(path);
            return file.open(QIODevice::ReadOnly) ? file.read(1024 * 1024) : QByteArray();
        };
        if (certificate.isEmpty()) certificate = readFile(user.clientCertificate);
        if (key.isEmpty()) key = readFile(user.clientKey);
        const auto identity = Net::ClientIdentity::fromPem(certificate, Text::tr("user '%1' client certificate").arg(it->user), key,
                                                           Text::tr("user '%1' client key").arg(it->user));
        if (!identity) {
            result.notes.append(Text::tr("connecting will fail until this is fixed: %1").arg(identity.error().message));
        } else {
            result.notes.append(Text::tr("signs in with the client certificate %1, valid until %2")
                                    .arg(identity->subject(), identity->certificate.expiryDate().toUTC().toString(QStringLiteral("yyyy-MM-dd"))));
        }
    }
    if (!user.execJson.isEmpty()) {
        if (auto ok = put(QStringLiteral("FORGE_K8S_EXEC"), user.execJson, userField(QStringLiteral("exec"))); !ok) return ok.error();
        const auto plugin = ExecPlugin::parse(user.execJson);
        result.notes.append(Text::tr("signs in by running %1 when connecting and before its credential expires").arg(plugin->command));
        if (hasToken || hasCertificate) {
            result.notes.append(Text::tr("the exec plugin's credential is used instead of the user's token"));
        }
    }
    qCInfo(lcKubeconfig) << "imported context" << name << "server" << cluster.server; // untranslated: a log line
    return result;
}

} // namespace Starforge::Config
