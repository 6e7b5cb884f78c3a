#pragma once

// What the token may do, checked at connect with SelfSubjectAccessReviews (which every
// authenticated user may create), and turned into features the user cannot use and why:
// "Capacity heatmap: cannot list nodes at the cluster scope". One review per permission a
// feature needs (docs/kubernetes-facts.md, "Permissions"), sent in parallel.

#include "core/kube/apierror.h"

#include <QList>
#include <QObject>
#include <QString>

#include <optional>

namespace Starforge::Kube {

class KubeClient;

struct Permission
{
    QString verb;
    QString group;          // "" for the core group
    QString resource;       // "pods"
    QString subresource;    // "log", "proxy" or empty
    bool clusterWide = false; // all namespaces (or a cluster-scoped resource)
    QString resourceName;   // one object only ("rayjobs.ray.io"); empty: every object

    // "list nodes at the cluster scope", "get pods/log in namespace ml"
    QString describe(const QString &ns) const;
};

struct Feature
{
    QString id;             // "jobs", "capacity", ...
    QString title;          // for people
    QList<Permission> needs;

    // The features of the app and what each needs (docs/kubernetes.md, "Permissions").
    // Every request the app sends is covered by one of these, so a token the check passes can
    // do what the feature does (`starforge-cli cluster-setup` grants exactly these).
    static QList<Feature> all();
};

// What the operator probe reads (operatorprobe.h): the rayjobs.ray.io CRD. Not a feature: a
// token without it still works and the app assumes the oldest KubeRay release.
Permission operatorProbePermission();

// The Role (or ClusterRole) rules that grant everything a feature needs, as YAML a cluster
// administrator can paste under `rules:`.
QString roleRules(const Feature &feature);

struct FeatureAccess
{
    Feature feature;
    bool allowed = true;
    QStringList missing;    // one sentence per permission denied
};

struct PermissionReport
{
    QString ns;
    QList<FeatureAccess> features;
    std::optional<ApiError> error;   // the reviews themselves failed (401, no server)

    QList<FeatureAccess> unavailable() const;
    bool allAllowed() const { return !error && unavailable().isEmpty(); }
    // "Everything is available." or one line per unavailable feature.
    QString summary() const;
};

class PermissionCheck final : public QObject
{
    Q_OBJECT
public:
    PermissionCheck(KubeClient *client, QString ns, QList<Feature> features = Feature::all(), QObject *parent = nullptr);

    void start();

Q_SIGNALS:
    void finished(const Starforge::Kube::PermissionReport &report);

private:
    void finish();

    KubeClient *m_client;
    PermissionReport m_report;
    int m_pending = 0;
};

} // namespace Starforge::Kube
