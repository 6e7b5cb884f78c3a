#pragma once

// What a cluster administrator applies so that Starforge works in a namespace: the Namespace, a
// ServiceAccount with a token Secret, a Role with the namespaced rules and a ClusterRole with the
// cluster-wide ones, each bound to the ServiceAccount (docs/cluster-setup.md). The rules are built
// from Feature::all() and the operator probe's permission (permissions.h), the same table the
// permission check reviews, so what the YAML grants and what the app checks cannot drift apart:
// one rule per resource, carrying the union of the verbs the features need on it.

#include "core/kube/permissions.h"
#include "core/util/result.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace Starforge::Kube {

// One RBAC rule of the setup, and what needs it.
struct AccessRule
{
    QString group;           // "" for the core group
    QString resource;        // "pods", "pods/log"
    QString resourceName;    // one object only; empty: every object
    bool clusterWide = false; // in the ClusterRole, else in the Role
    QStringList verbs;       // in RBAC's usual order: get, list, watch, create, update, patch, delete
    QStringList neededBy;    // feature ids ("jobs", ...) and "kuberay" for the operator probe

    // Whether this rule alone allows the permission, as RBAC decides it: a cluster-wide rule
    // allows the namespaced request too, a namespaced one never a cluster-wide request.
    bool allows(const Permission &permission) const;
};

// The id the operator probe's rule is needed by (ConnectionTest's "kuberay" check).
inline constexpr char OperatorProbeNeed[] = "kuberay";

// The rules granting everything these features need (and the operator probe's read when asked),
// one per group, resource, object name and scope, in the order the features first need them.
QList<AccessRule> accessRules(const QList<Feature> &features = Feature::all(), bool operatorProbe = true);

// The rules as YAML list items (what goes under `rules:`), each with a comment naming what needs it.
QString rulesYaml(const QList<AccessRule> &rules);

struct ClusterSetup
{
    QString ns;                 // FORGE_K8S_NAMESPACE of the profile that will use it
    QString serviceAccount = defaultServiceAccount();
    QList<AccessRule> rules = accessRules();

    static QString defaultServiceAccount() { return QStringLiteral("starforge-user"); }

    // The names the objects get: the Role and RoleBinding take the ServiceAccount's name; the
    // ClusterRole and ClusterRoleBinding, which are not in a namespace, "<namespace>-<account>".
    QString roleName() const { return serviceAccount; }
    QString clusterRoleName() const { return ns + u'-' + serviceAccount; }
    QString tokenSecretName() const { return serviceAccount + QStringLiteral("-token"); }
    // system:serviceaccount:<namespace>:<account>, the user the token signs in as.
    // untranslated: the user name Kubernetes gives a ServiceAccount
    QString userName() const { return QStringLiteral("system:serviceaccount:%1:%2").arg(ns, serviceAccount); }

    // The namespace must be a DNS-1123 label and the names made from the account valid object
    // names; the error says which value to change.
    Result<void> validate() const;
    // Multi-document YAML for `kubectl apply -f -`. Not translated: it is read by kubectl.
    QString yaml() const;
};

} // namespace Starforge::Kube
