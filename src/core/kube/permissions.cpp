#include "core/kube/permissions.h"

#include "core/kube/clustersetup.h"
#include "core/kube/kubeclient.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace Starforge::Kube {

QString Permission::describe(const QString &ns) const
{
    const QString what = subresource.isEmpty() ? resource : resource + QLatin1Char('/') + subresource;
    QString qualified = group.isEmpty() ? what : what + QStringLiteral(" (") + group + QLatin1Char(')');
    if (!resourceName.isEmpty()) qualified += QLatin1Char(' ') + resourceName;
    return clusterWide ? PermissionCheck::tr("%1 %2 at the cluster scope").arg(verb, qualified)
                       : PermissionCheck::tr("%1 %2 in namespace %3").arg(verb, qualified, ns);
}

QList<Feature> Feature::all()
{
    const auto p = [](const char *verb, const char *group, const char *resource, const char *sub = "", bool cluster = false) {
        return Permission{QLatin1String(verb), QLatin1String(group), QLatin1String(resource), QLatin1String(sub), cluster, QString()};
    };
    // Each verb is one the feature's code sends: jobs gets a RayJob (submit's dedup, a job's
    // snapshot) and patches it (the delete mark, core/job/jobactions.cpp); logs and the
    // playground get a pod (is the container still running, is it a playground pod).
    return {
        {QStringLiteral("jobs"), PermissionCheck::tr("Submitting and tracking jobs"),
         {p("create", "ray.io", "rayjobs"), p("get", "ray.io", "rayjobs"), p("list", "ray.io", "rayjobs"), p("watch", "ray.io", "rayjobs"),
          p("patch", "ray.io", "rayjobs"), p("delete", "ray.io", "rayjobs"), p("get", "ray.io", "rayclusters"),
          p("list", "ray.io", "rayclusters"), p("watch", "ray.io", "rayclusters"), p("list", "", "pods"), p("watch", "", "pods")}},
        {QStringLiteral("events"), PermissionCheck::tr("Event timeline and diagnosis"),
         {p("list", "", "events"), p("watch", "", "events")}},
        {QStringLiteral("logs"), PermissionCheck::tr("Live logs"), {p("get", "", "pods"), p("get", "", "pods", "log")}},
        {QStringLiteral("capacity"), PermissionCheck::tr("Capacity heatmap and fit verdicts"),
         {p("list", "", "nodes", "", true), p("watch", "", "nodes", "", true), p("list", "", "pods", "", true),
          p("watch", "", "pods", "", true)}},
        {QStringLiteral("playground"), PermissionCheck::tr("Playground chat"),
         {p("create", "", "pods"), p("get", "", "pods"), p("list", "", "pods"), p("delete", "", "pods"), p("get", "", "pods", "proxy"),
          p("create", "", "pods", "proxy")}},
    };
}

Permission operatorProbePermission()
{
    return Permission{QStringLiteral("get"), QStringLiteral("apiextensions.k8s.io"), QStringLiteral("customresourcedefinitions"), {}, true,
                      QStringLiteral("rayjobs.ray.io")};
}

QString roleRules(const Feature &feature)
{
    // The same merge the administrator's setup uses (clustersetup.h), so both read alike.
    QStringList blocks;
    for (const AccessRule &rule : accessRules({feature}, false)) {
        QString block = rulesYaml({rule});
        // untranslated: a comment in the YAML an administrator pastes
        if (rule.clusterWide) block.insert(block.indexOf(u'\n'), QStringLiteral(" (in a ClusterRole)"));   // after "# needed by: ..."
        blocks << block;
    }
    return blocks.join(u'\n');
}

QList<FeatureAccess> PermissionReport::unavailable() const
{
    QList<FeatureAccess> out;
    for (const FeatureAccess &f : features) {
        if (!f.allowed) {
            out.append(f);
        }
    }
    return out;
}

QString PermissionReport::summary() const
{
    if (error) {
        return error->message;
    }
    const QList<FeatureAccess> denied = unavailable();
    if (denied.isEmpty()) {
        return PermissionCheck::tr("The token may use every feature in namespace %1.").arg(ns);
    }
    QStringList lines;
    for (const FeatureAccess &f : denied) {
        lines << PermissionCheck::tr("%1 is unavailable: the token cannot %2.").arg(f.feature.title, f.missing.join(QStringLiteral(", ")));
    }
    return lines.join(QLatin1Char('\n'));
}

PermissionCheck::PermissionCheck(KubeClient *client, QString ns, QList<Feature> features, QObject *parent)
    : QObject(parent)
    , m_client(client)
{
    m_report.ns = std::move(ns);
    for (Feature &f : features) {
        m_report.features.append(FeatureAccess{std::move(f), true, {}});
    }
}

void PermissionCheck::start()
{
    // One review per distinct permission, shared by the features that need it.
    QHash<QString, QList<std::pair<int, Permission>>> reviews;
    for (int i = 0; i < m_report.features.size(); ++i) {
        for (const Permission &permission : std::as_const(m_report.features[i].feature.needs)) {
            reviews[permission.describe(m_report.ns)].append({i, permission});
        }
    }
    m_pending = static_cast<int>(reviews.size());
    if (m_pending == 0) {
        finish();
        return;
    }
    for (auto it = reviews.cbegin(); it != reviews.cend(); ++it) {
        const Permission permission = it.value().first().second;
        QJsonObject attributes{{QStringLiteral("verb"), permission.verb},
                               {QStringLiteral("group"), permission.group},
                               {QStringLiteral("resource"), permission.resource}};
        if (!permission.subresource.isEmpty()) {
            attributes.insert(QStringLiteral("subresource"), permission.subresource);
        }
        if (!permission.resourceName.isEmpty()) {
            attributes.insert(QStringLiteral("name"), permission.resourceName);
        }
        if (!permission.clusterWide) {
            attributes.insert(QStringLiteral("namespace"), m_report.ns);
        }
        const QJsonObject review{{QStringLiteral("apiVersion"), QStringLiteral("authorization.k8s.io/v1")},
                                 {QStringLiteral("kind"), QStringLiteral("SelfSubjectAccessReview")},
                                 {QStringLiteral("spec"), QJsonObject{{QStringLiteral("resourceAttributes"), attributes}}}};
        ApiRequest request;
        request.method = "POST";
        request.path = QStringLiteral("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews");
        request.body = QJsonDocument(review).toJson(QJsonDocument::Compact);
        request.what = tr("check whether the token may %1").arg(it.key());
        const auto users = it.value();
        const QString described = it.key();
        m_client->send(request, this, [this, users, described](const ApiResult &result) {
            if (!result.ok()) {
                if (!m_report.error) {
                    m_report.error = *result.error;
                }
            } else {
                const QJsonObject status = result.json().value(QLatin1String("status")).toObject();
                if (!status.value(QLatin1String("allowed")).toBool()) {
                    for (const auto &user : users) {
                        FeatureAccess &access = m_report.features[user.first];
                        access.allowed = false;
                        const QString reason = status.value(QLatin1String("reason")).toString();
                        access.missing << (reason.isEmpty() ? described : described + QStringLiteral(" (") + reason + QLatin1Char(')'));
                    }
                }
            }
            if (--m_pending == 0) {
                finish();
            }
        });
    }
}

void PermissionCheck::finish()
{
    for (FeatureAccess &f : m_report.features) {
        f.missing.sort();
    }
    Q_EMIT finished(m_report);
}

} // namespace Starforge::Kube
