#pragma once

// Reads kubeconfig files as kubectl does (a KUBECONFIG list is merged, the first file to define a
// name wins, relative paths are relative to the file that holds them) and turns one context into
// profile settings. Bearer tokens and token files are supported; client certificates, exec
// plugins, auth providers and basic auth are reported as not supported yet.

#include "core/util/result.h"

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

namespace Starforge::Config {

struct KubeconfigContext
{
    QString name;
    QString cluster;
    QString user;
    QString namespaceName;
};

// What importing a context gives: settings for the profile and, when the kubeconfig holds one, a
// token for the keychain.
struct KubeconfigImport
{
    QString contextName;
    QMap<QString, QString> values; // FORGE_* -> canonical value, validated
    QString token;                 // empty when the user authenticates with a token file
    QStringList notes;             // things the user should know (e.g. TLS verification is off)
};

class Kubeconfig final
{
public:
    // $KUBECONFIG (colon-separated) when set, else ~/.kube/config.
    static QStringList defaultPaths();

    static Result<Kubeconfig> load(const QStringList &paths);
    static Result<Kubeconfig> fromYaml(const QByteArray &yaml, const QString &directory);

    QStringList contextNames() const;
    QString currentContext() const { return m_currentContext; }

    // An empty name selects the current context.
    Result<KubeconfigImport> importContext(const QString &name = QString()) const;

private:
    struct Cluster
    {
        QString server;
        QString caFile;
        QByteArray caData; // base64 text as in the file
        bool insecure = false;
        QString proxyUrl;
    };
    struct User
    {
        QString token;
        QString tokenFile;
        QStringList unsupported; // the auth methods present that we cannot use
    };

    Result<void> merge(const QByteArray &yaml, const QString &source, const QString &directory);

    QList<KubeconfigContext> m_contexts;
    QMap<QString, Cluster> m_clusters;
    QMap<QString, User> m_users;
    QString m_currentContext;
};

} // namespace Starforge::Config
