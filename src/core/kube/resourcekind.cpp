#include "core/kube/resourcekind.h"

#include <QUrl>

namespace Starforge::Kube {

QString ResourceKind::path(const QString &ns, const QString &name, const QString &subresource) const
{
    QString out = group.isEmpty() ? QString(QStringLiteral("/api/") + version)
                                  : QString(QStringLiteral("/apis/") + group + QLatin1Char('/') + version);
    if (namespaced && !ns.isEmpty()) {
        out += QStringLiteral("/namespaces/") + QString::fromLatin1(QUrl::toPercentEncoding(ns));
    }
    out += QLatin1Char('/') + plural;
    if (!name.isEmpty()) {
        // ":" stays: proxy subresources name "pod:port" or "scheme:pod:port".
        out += QLatin1Char('/') + QString::fromLatin1(QUrl::toPercentEncoding(name, ":"));
        if (!subresource.isEmpty()) {
            out += QLatin1Char('/') + subresource;
        }
    }
    return out;
}

#define SF_KIND(fn, g, v, p, k, ns)                                                                \
    const ResourceKind &ResourceKind::fn()                                                         \
    {                                                                                              \
        static const ResourceKind kind{QStringLiteral(g), QStringLiteral(v), QStringLiteral(p),    \
                                       QStringLiteral(k), ns};                                     \
        return kind;                                                                               \
    }

SF_KIND(nodes, "", "v1", "nodes", "Node", false)
SF_KIND(pods, "", "v1", "pods", "Pod", true)
SF_KIND(services, "", "v1", "services", "Service", true)
SF_KIND(events, "", "v1", "events", "Event", true)
SF_KIND(eventsV1, "events.k8s.io", "v1", "events", "Event", true)
SF_KIND(jobs, "batch", "v1", "jobs", "Job", true)
SF_KIND(rayJobs, "ray.io", "v1", "rayjobs", "RayJob", true)
SF_KIND(rayClusters, "ray.io", "v1", "rayclusters", "RayCluster", true)
SF_KIND(namespaces, "", "v1", "namespaces", "Namespace", false)

#undef SF_KIND

} // namespace Starforge::Kube
