#pragma once

// Bearer-token authentication and RBAC-style authorization. The sandbox's own token is a
// cluster admin; an optional RBAC file adds users with fewer rights:
//   {"users": [{"name": "viewer", "token": "…",
//               "rules": [{"apiGroups": [""], "resources": ["pods", "pods/log"],
//                          "verbs": ["get", "list", "watch"], "namespaces": ["starforge"]}]}]}
// Every authenticated user may also create self-subject reviews and read discovery, as the
// system:basic-user and system:discovery roles allow on a real cluster.

#include "core/util/result.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

namespace Starforge::Sandbox {

struct RbacRule
{
    QStringList apiGroups;
    QStringList resources;      // "pods", "pods/log", "*"
    QStringList verbs;
    QStringList resourceNames;  // empty: every name
    QStringList namespaces;     // empty: every namespace and cluster-scoped objects
    QStringList nonResourceURLs;
};

struct User
{
    QString name;
    QByteArray token;
    QList<RbacRule> rules;
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
    // Adds the users of an RBAC file; the message says what is wrong with it.
    Result<void> loadRbacFile(const QString &path);

    const User *authenticate(const QByteArray &authorizationHeader) const;
    bool allowed(const User &user, const Attributes &a) const;
    // The rules that apply in a namespace, for SelfSubjectRulesReview.
    QList<RbacRule> rulesIn(const User &user, const QString &ns) const;
    // "User \"x\" cannot list resource \"pods\" in API group \"\" in the namespace \"ns\"".
    static QString denial(const User &user, const Attributes &a);

private:
    static QList<RbacRule> defaultRules();
    QList<User> m_users;
};

} // namespace Starforge::Sandbox
