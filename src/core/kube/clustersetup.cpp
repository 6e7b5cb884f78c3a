#include "core/kube/clustersetup.h"

#include "core/config/validation.h"

#include <QCoreApplication>

#include <algorithm>

namespace Starforge::Kube {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(ClusterSetup)
};

int verbRank(const QString &verb)
{
    static const QStringList order{QStringLiteral("get"),   QStringLiteral("list"),  QStringLiteral("watch"), QStringLiteral("create"),
                                   QStringLiteral("update"), QStringLiteral("patch"), QStringLiteral("delete")};
    const qsizetype i = order.indexOf(verb);
    return i < 0 ? static_cast<int>(order.size()) : static_cast<int>(i);
}

QString qualifiedResource(const Permission &p)
{
    return p.subresource.isEmpty() ? p.resource : p.resource + u'/' + p.subresource;
}

QString quoted(const QStringList &items)
{
    QStringList out;
    for (const QString &item : items) out << u'"' + item + u'"';
    return u'[' + out.join(QStringLiteral(", ")) + u']';
}

} // namespace

bool AccessRule::allows(const Permission &permission) const
{
    return permission.group == group && qualifiedResource(permission) == resource && verbs.contains(permission.verb)
        && (resourceName.isEmpty() || resourceName == permission.resourceName) && (clusterWide || !permission.clusterWide);
}

QList<AccessRule> accessRules(const QList<Feature> &features, bool operatorProbe)
{
    QList<AccessRule> rules;
    const auto add = [&rules](const Permission &p, const QString &need) {
        const QString resource = qualifiedResource(p);
        auto it = std::find_if(rules.begin(), rules.end(), [&](const AccessRule &r) {
            return r.group == p.group && r.resource == resource && r.resourceName == p.resourceName && r.clusterWide == p.clusterWide;
        });
        if (it == rules.end()) {
            rules.append(AccessRule{p.group, resource, p.resourceName, p.clusterWide, {}, {}});
            it = rules.end() - 1;
        }
        if (!it->verbs.contains(p.verb)) it->verbs.append(p.verb);
        if (!it->neededBy.contains(need)) it->neededBy.append(need);
    };
    for (const Feature &feature : features) {
        for (const Permission &p : feature.needs) add(p, feature.id);
    }
    if (operatorProbe) add(operatorProbePermission(), QLatin1String(OperatorProbeNeed));
    for (AccessRule &rule : rules) {
        std::stable_sort(rule.verbs.begin(), rule.verbs.end(), [](const QString &a, const QString &b) { return verbRank(a) < verbRank(b); });
    }
    // The Role's rules first, then the ClusterRole's, each in the order they were first needed.
    std::stable_partition(rules.begin(), rules.end(), [](const AccessRule &r) { return !r.clusterWide; });
    return rules;
}

QString rulesYaml(const QList<AccessRule> &rules)
{
    QStringList lines;
    for (const AccessRule &r : rules) {
        // untranslated: YAML for the administrator, the same in every language
        lines << QStringLiteral("# needed by: %1").arg(r.neededBy.join(QStringLiteral(", ")))
              << QStringLiteral("- apiGroups: [\"%1\"]").arg(r.group) << QStringLiteral("  resources: [\"%1\"]").arg(r.resource);
        if (!r.resourceName.isEmpty()) lines << QStringLiteral("  resourceNames: [\"%1\"]").arg(r.resourceName);
        lines << QStringLiteral("  verbs: %1").arg(quoted(r.verbs));
    }
    return lines.join(u'\n');
}

Result<void> ClusterSetup::validate() const
{
    if (auto ok = Validation::dns1123Label(ns); !ok) {
        return Error::invalid(QStringLiteral("--namespace %1: %2").arg(ns, ok.error().message));
    }
    // The token Secret's name is the longest made from the account; Role and binding names
    // only need to be path segments, which a subdomain is.
    if (auto ok = Validation::dns1123Subdomain(serviceAccount); !ok) {
        return Error::invalid(Text::tr("--user %1: %2").arg(serviceAccount, ok.error().message));
    }
    if (auto ok = Validation::dns1123Subdomain(tokenSecretName()); !ok) {
        return Error::invalid(Text::tr("--user %1 is too long for its token Secret's name: %2").arg(serviceAccount, ok.error().message));
    }
    return {};
}

QString ClusterSetup::yaml() const
{
    QList<AccessRule> namespaced;
    QList<AccessRule> cluster;
    for (const AccessRule &r : rules) (r.clusterWide ? cluster : namespaced).append(r);

    QStringList docs;
    // untranslated: YAML for the administrator, the same in every language
    docs << QStringLiteral(
                "# Starforge in namespace %1 for ServiceAccount %2 (starforge-cli cluster-setup; docs/cluster-setup.md).\n"
                "# Apply with: kubectl apply -f FILE. The token, once the cluster has filled it in:\n"
                "#   kubectl -n %1 get secret %3 -o jsonpath='{.data.token}' | base64 -d\n"
                "apiVersion: v1\n"
                "kind: Namespace\n"
                "metadata:\n"
                "  name: %1")
                .arg(ns, serviceAccount, tokenSecretName());
    // untranslated: YAML
    docs << QStringLiteral("apiVersion: v1\n"
                           "kind: ServiceAccount\n"
                           "metadata:\n"
                           "  name: %2\n"
                           "  namespace: %1")
                .arg(ns, serviceAccount);
    // A long-lived token: the token controller fills data.token in (Kubernetes 1.24 and later
    // no longer make one per ServiceAccount by themselves).
    // untranslated: YAML
    docs << QStringLiteral("apiVersion: v1\n"
                           "kind: Secret\n"
                           "metadata:\n"
                           "  name: %3\n"
                           "  namespace: %1\n"
                           "  annotations:\n"
                           "    kubernetes.io/service-account.name: %2\n"
                           "type: kubernetes.io/service-account-token")
                .arg(ns, serviceAccount, tokenSecretName());
    const QString subjects = QStringLiteral("subjects:\n"
                                            "- kind: ServiceAccount\n"
                                            "  name: %2\n"
                                            "  namespace: %1")
                                 .arg(ns, serviceAccount);
    if (!namespaced.isEmpty()) {
        // untranslated: YAML
        docs << QStringLiteral("apiVersion: rbac.authorization.k8s.io/v1\n"
                               "kind: Role\n"
                               "metadata:\n"
                               "  name: %2\n"
                               "  namespace: %1\n"
                               "rules:\n")
                    .arg(ns, roleName())
                    + rulesYaml(namespaced);
        // untranslated: YAML
        docs << QStringLiteral("apiVersion: rbac.authorization.k8s.io/v1\n"
                               "kind: RoleBinding\n"
                               "metadata:\n"
                               "  name: %2\n"
                               "  namespace: %1\n"
                               "roleRef:\n"
                               "  apiGroup: rbac.authorization.k8s.io\n"
                               "  kind: Role\n"
                               "  name: %2\n")
                    .arg(ns, roleName())
                    + subjects;
    }
    if (!cluster.isEmpty()) {
        // untranslated: YAML
        docs << QStringLiteral("apiVersion: rbac.authorization.k8s.io/v1\n"
                               "kind: ClusterRole\n"
                               "metadata:\n"
                               "  name: %1\n"
                               "rules:\n")
                    .arg(clusterRoleName())
                    + rulesYaml(cluster);
        // untranslated: YAML
        docs << QStringLiteral("apiVersion: rbac.authorization.k8s.io/v1\n"
                               "kind: ClusterRoleBinding\n"
                               "metadata:\n"
                               "  name: %1\n"
                               "roleRef:\n"
                               "  apiGroup: rbac.authorization.k8s.io\n"
                               "  kind: ClusterRole\n"
                               "  name: %1\n")
                    .arg(clusterRoleName())
                    + subjects;
    }
    return docs.join(QStringLiteral("\n---\n")) + u'\n';
}

} // namespace Starforge::Kube
