#pragma once

// Reads kubeconfig files as kubectl does (a KUBECONFIG list is merged, the first file to define a
// name wins, relative paths are relative to the file that holds them) and turns one context into
// profile settings. Bearer tokens, token files, client certificates (files or inline data) and
// exec credential plugins are taken; auth providers (removed from kubectl in 1.26) and basic
// auth are reported as not supported.

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

// What importing a context gives: settings for the profile and the secrets for the keychain.
struct KubeconfigImport
{
    QString contextName;
    QMap<QString, QString> values;  // FORGE_* -> canonical value, validated
    // FORGE_K8S_TOKEN and FORGE_K8S_CLIENT_KEY_DATA, each present: an empty value clears one an
    // earlier import left in the keychain.
    QMap<QString, QString> secrets;
    // What was taken from which kubeconfig field: "user.client-key-data → FORGE_K8S_CLIENT_KEY_DATA
    // (keychain)", for the user to check.
    QStringList taken;
    QStringList notes;              // things the user should know (e.g. TLS verification is off)

    bool hasSecret(const QString &key) const { return !secrets.value(key).isEmpty(); }
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
        QString tlsServerName;
    };
    struct User
    {
        QString token;
        QString tokenFile;
        QString clientCertificate;        // a path, resolved
        QByteArray clientCertificateData; // base64 as in the file
        QString clientKey;                // a path, resolved
        QByteArray clientKeyData;         // base64 as in the file
        QString execJson;                 // the exec stanza as JSON, command resolved
        QStringList unsupported;          // the auth methods present that we cannot use
    };

    Result<void> merge(const QByteArray &yaml, const QString &source, const QString &directory);

    QList<KubeconfigContext> m_contexts;
    QMap<QString, Cluster> m_clusters;
    QMap<QString, User> m_users;
    QString m_currentContext;
};

} // namespace Starforge::Config
