#pragma once

// Authentication and RBAC-style authorization, as kube-apiserver does them.
//
// Authentication tries, in kube-apiserver's order, and the first that succeeds decides:
//  1. a client certificate the TLS handshake verified against the client CA (the sandbox's CA):
//     the subject's CN is the user name and each O a group;
//  2. a bearer token: the sandbox's own (user sandbox-admin), an RBAC file user's, or an exec
//     token minted by starforge-sandbox-credential (sandbox/credential/exectoken.h; user
//     starforge-exec-user), checked for its signature and expiry.
// Credentials that do not hold (a certificate from another CA or out of date, an unknown or
// expired token) make the request nobody's, which the API layer answers with 401; no credentials
// at all make it system:anonymous. Every authenticated user is also in group
// system:authenticated.
//
// Authorization: group system:masters is cluster admin (as kubeadm's admin.conf user is); the
// sandbox's token and the exec tokens are in it. An optional RBAC file grants rules to users by
// name and to groups:
//   {"users": [{"name": "viewer", "token": "…", "groups": ["team-a"],
//               "rules": [{"apiGroups": [""], "resources": ["pods", "pods/log"],
//                          "verbs": ["get", "list", "watch"], "namespaces": ["starforge"]}]}],
//    "groups": [{"name": "team-a",
//                "rules": [{"apiGroups": ["ray.io"], "resources": ["rayjobs"], "verbs": ["*"]}]}]}
// A user's "token" is optional: without one the user is matched by name only (a certificate's
// CN); "groups" are the groups the token's user is in. A group's rules apply to everyone in it,
// whichever way they authenticated. Every authenticated user may also create self-subject
// reviews and read discovery, as the system:basic-user and system:discovery roles allow.
//
// With an object store (useObjectStore), RBAC objects grant rules as kube-apiserver's RBAC
// authorizer does: a ClusterRoleBinding its ClusterRole's rules everywhere, a RoleBinding its Role's
// (or ClusterRole's) rules in its own namespace only; subjects are users, groups and
// ServiceAccounts (a ServiceAccount subject without a namespace is in the binding's). And a
// ServiceAccount's token Secret authenticates (controllers/serviceaccounttokens.h): the token is
// a JWT signed with the sandbox's key (HS256 here; kube-apiserver signs with its service account
// key), accepted while its Secret still holds it and the ServiceAccount with that uid exists, as
// the legacy token authenticator checks. Its user is system:serviceaccount:<namespace>:<name>,
// in groups system:serviceaccounts and system:serviceaccounts:<namespace>. Changes apply to the
// next request: nothing is cached.

#include "core/util/result.h"
#include "sandbox/http/httpserver.h"

#include <QByteArray>
#include <QDateTime>
#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace Starforge::Sandbox {

class ObjectStore;

struct RbacRule
{
    QStringList apiGroups;
    QStringList resources;      // "pods", "pods/log", "*"
    QStringList verbs;
    QStringList resourceNames;  // empty: every name
    QStringList namespaces;     // empty: every namespace and cluster-scoped objects
    QStringList nonResourceURLs;
};

// Who a request is, with the rules that apply to it (from its name and groups).
struct User
{
    QString name;
    QStringList groups;
    QList<RbacRule> rules;

    bool isAnonymous() const { return groups.contains(QLatin1String("system:unauthenticated")); }
};

struct Attributes
{
    QString verb;
    QString group;
    QString resource;     // with "/subresource" when there is one
    QString ns;
    QString name;
    QString path;         // for non-resource requests
    bool isResource = true;
};

class Authorizer
{
public:
    explicit Authorizer(const QByteArray &adminToken);
    // Adds the users and groups of an RBAC file; the message says what is wrong with it.
    Result<void> loadRbacFile(const QString &path);
    // Accepts exec tokens signed with this secret (the one in the credential tool's state file).
    void acceptExecTokens(const QByteArray &secret);

    // The request's user from its Authorization header and TLS client certificate; nullopt when
    // it offered credentials and none holds (401).
    std::optional<User> authenticate(const QByteArray &authorizationHeader, const Http::ClientCertificate &certificate = {},
                                     const QDateTime &now = QDateTime::currentDateTimeUtc()) const;
    // RBAC objects and ServiceAccount tokens in this store count from now on; key signs the tokens.
    void useObjectStore(const ObjectStore *store, const QByteArray &serviceAccountKey);
    // A ServiceAccount token as the token controller writes it into a token Secret.
    static QByteArray serviceAccountToken(const QByteArray &key, const QString &ns, const QString &account, const QString &accountUid,
                                          const QString &secretName);
    bool allowed(const User &user, const Attributes &a) const;
    // The rules that apply in a namespace, for SelfSubjectRulesReview.
    QList<RbacRule> rulesIn(const User &user, const QString &ns) const;
    // "User \"x\" cannot list resource \"pods\" in API group \"\" in the namespace \"ns\"".
    static QString denial(const User &user, const Attributes &a);

private:
    struct TokenUser
    {
        QByteArray token;
        QString name;
        QStringList groups;
    };

    std::optional<User> fromCertificate(const Http::ClientCertificate &certificate, const QDateTime &now) const;
    std::optional<User> fromToken(const QByteArray &authorizationHeader, const QDateTime &now) const;
    // The user with system:authenticated added and its rules gathered.
    User resolve(const QString &name, QStringList groups) const;
    static QList<RbacRule> defaultRules();
    std::optional<User> fromServiceAccountToken(const QByteArray &token) const;
    // The rules the store's bindings give the user: ClusterRoleBindings' everywhere, and the
    // RoleBindings' of namespace ns (when not empty) limited to it.
    QList<RbacRule> boundRules(const User &user, const QString &ns) const;

    QList<TokenUser> m_tokens;
    QHash<QString, QList<RbacRule>> m_userRules;
    QHash<QString, QStringList> m_userGroups;
    QHash<QString, QList<RbacRule>> m_groupRules;
    QByteArray m_execSecret;
    const ObjectStore *m_store = nullptr;
    QByteArray m_serviceAccountKey;
};

} // namespace Starforge::Sandbox
