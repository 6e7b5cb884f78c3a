#pragma once

// The API resources the app reads and writes, and the REST paths to them
// (/api/v1/... for the core group, /apis/GROUP/VERSION/... for the others).

#include <QString>

namespace Starforge::Kube {

struct ResourceKind
{
    QString group;      // "" for the core group
    QString version;
    QString plural;     // "pods", "rayjobs"
    QString kind;       // "Pod", "RayJob"
    bool namespaced = true;

    // The collection (no name) or one object; ns is ignored for cluster-scoped kinds and an
    // empty ns on a namespaced kind means all namespaces.
    QString path(const QString &ns = {}, const QString &name = {}, const QString &subresource = {}) const;
    QString apiVersion() const { return group.isEmpty() ? version : group + QLatin1Char('/') + version; }
    // "pods", "rayjobs.ray.io": as the API server names a resource in its messages.
    QString qualifiedName() const { return group.isEmpty() ? plural : plural + QLatin1Char('.') + group; }

    static const ResourceKind &nodes();
    static const ResourceKind &pods();
    static const ResourceKind &services();
    static const ResourceKind &events();        // core/v1
    static const ResourceKind &eventsV1();      // events.k8s.io/v1
    static const ResourceKind &jobs();          // batch/v1
    static const ResourceKind &rayJobs();       // ray.io/v1
    static const ResourceKind &rayClusters();   // ray.io/v1
    static const ResourceKind &namespaces();
};

} // namespace Starforge::Kube
