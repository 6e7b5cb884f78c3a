// The API server's non-resource paths: /version, the health checks, and discovery (/api,
// /apis, /api/v1, /apis/<group>/<version>) in both the legacy documents and the aggregated
// apidiscovery.k8s.io/v2 form that kubectl and client-go ask for first. Every document is built
// from ResourceTypes, so a type added there is discoverable without touching this file.

#include "sandbox/api/apiserver.h"

#include "sandbox/api/status.h"
#include "sandbox/store/resourcetypes.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>

namespace Starforge::Sandbox {

namespace {

const QByteArray AggregatedType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

bool isDiscoveryPath(const QString &path, const QStringList &segments)
{
    return path == QLatin1String("/api") || path == QLatin1String("/apis")
        || (segments.size() == 2 && segments[0] == QLatin1String("api"))
        || (segments.size() == 3 && segments[0] == QLatin1String("apis"));
}

bool isHealthPath(const QString &path)
{
    return path == QLatin1String("/healthz") || path == QLatin1String("/livez") || path == QLatin1String("/readyz");
}

bool wantsAggregated(const Http::Request &request)
{
    const QByteArray accept = request.header("accept");
    return accept.contains("as=APIGroupDiscoveryList") && accept.contains("v=v2");
}

QJsonObject versionInfo()
{
    return QJsonObject{{QStringLiteral("major"), QStringLiteral("1")},
                       {QStringLiteral("minor"), QStringLiteral("32")},
                       {QStringLiteral("gitVersion"), QStringLiteral("v1.32.4-starforge-sandbox")},
                       {QStringLiteral("gitCommit"), QStringLiteral("0000000000000000000000000000000000000000")},
                       {QStringLiteral("gitTreeState"), QStringLiteral("clean")},
                       {QStringLiteral("buildDate"), QStringLiteral("2026-01-01T00:00:00Z")},
                       {QStringLiteral("goVersion"), QStringLiteral("go1.23.6")},
                       {QStringLiteral("compiler"), QStringLiteral("gc")},
                       {QStringLiteral("platform"), QStringLiteral("linux/amd64")}};
}

// The verbs discovery lists for a subresource: status is read and written like the object,
// log is read only, eviction is created only, the rest (proxy) takes every HTTP verb.
QStringList subresourceVerbs(const QString &subresource)
{
    if (subresource == QLatin1String("status")) {
        return {QStringLiteral("get"), QStringLiteral("patch"), QStringLiteral("update")};
    }
    if (subresource == QLatin1String("log")) {
        return {QStringLiteral("get")};
    }
    if (subresource == QLatin1String("eviction")) {
        return {QStringLiteral("create")};
    }
    return {QStringLiteral("create"), QStringLiteral("delete"), QStringLiteral("get"), QStringLiteral("patch"), QStringLiteral("update")};
}

// The group, version and kind a subresource takes and answers with: pods/eviction a
// policy/v1 Eviction (kubectl drain looks for exactly that before it evicts), proxy the
// kind's ProxyOptions, log a Pod, status the object's own kind.
struct SubresourceKind
{
    QString group;
    QString version;
    QString kind;
};
SubresourceKind subresourceKind(const ResourceType &t, const QString &subresource)
{
    if (subresource == QLatin1String("eviction")) return {QStringLiteral("policy"), QStringLiteral("v1"), QStringLiteral("Eviction")};
    if (subresource == QLatin1String("proxy")) return {t.group, t.version, t.kind + QStringLiteral("ProxyOptions")};
    if (subresource == QLatin1String("log")) return {QString(), QStringLiteral("v1"), QStringLiteral("Pod")};
    return {t.group, t.version, t.kind};
}

// The "resources" of an APIResourceList: each type of the group version, then its subresources
// as "<plural>/<subresource>" entries.
QJsonArray legacyResourceEntries(const QString &groupVersion)
{
    QJsonArray resources;
    for (const ResourceType &t : ResourceTypes::all()) {
        if (t.apiVersion() != groupVersion) {
            continue;
        }
        QJsonObject r{{QStringLiteral("name"), t.plural}, {QStringLiteral("singularName"), t.singular},
                      {QStringLiteral("namespaced"), t.namespaced}, {QStringLiteral("kind"), t.kind},
                      {QStringLiteral("verbs"), QJsonArray::fromStringList(t.verbs)}};
        if (!t.shortNames.isEmpty()) r.insert(QStringLiteral("shortNames"), QJsonArray::fromStringList(t.shortNames));
        if (!t.categories.isEmpty()) r.insert(QStringLiteral("categories"), QJsonArray::fromStringList(t.categories));
        resources.append(r);
        for (const QString &sub : t.subresources) {
            const SubresourceKind k = subresourceKind(t, sub);
            QJsonObject entry{{QStringLiteral("name"), QString(t.plural + u'/' + sub)}, {QStringLiteral("singularName"), QString()},
                              {QStringLiteral("namespaced"), t.namespaced}, {QStringLiteral("kind"), k.kind},
                              {QStringLiteral("verbs"), QJsonArray::fromStringList(subresourceVerbs(sub))}};
            if (k.group != t.group || k.version != t.version) {
                // Only a subresource of another group names it (as pods/eviction does).
                entry.insert(QStringLiteral("group"), k.group);
                entry.insert(QStringLiteral("version"), k.version);
            }
            resources.append(entry);
        }
    }
    return resources;
}

QJsonObject legacyResourceList(const QString &groupVersion)
{
    return QJsonObject{{QStringLiteral("kind"), QStringLiteral("APIResourceList")},
                       {QStringLiteral("apiVersion"), QStringLiteral("v1")},
                       {QStringLiteral("groupVersion"), groupVersion},
                       {QStringLiteral("resources"), legacyResourceEntries(groupVersion)}};
}

QJsonObject legacyCoreVersions(const QString &serverAddress)
{
    return QJsonObject{{QStringLiteral("kind"), QStringLiteral("APIVersions")},
                       {QStringLiteral("versions"), QJsonArray{QStringLiteral("v1")}},
                       {QStringLiteral("serverAddressByClientCIDRs"),
                        QJsonArray{QJsonObject{{QStringLiteral("clientCIDR"), QStringLiteral("0.0.0.0/0")},
                                               {QStringLiteral("serverAddress"), serverAddress}}}}};
}

// The named groups (the core group "" is served under /api), in ResourceTypes' order.
QStringList namedGroups()
{
    QStringList groups;
    for (const ResourceType &t : ResourceTypes::all()) {
        if (!t.group.isEmpty() && !groups.contains(t.group)) {
            groups << t.group;
        }
    }
    return groups;
}

// An APIGroupList: each group with its first version as the only and preferred one.
QJsonObject legacyGroupList()
{
    QJsonArray list;
    for (const QString &g : namedGroups()) {
        const QList<ResourceType> &types = ResourceTypes::all();
        const auto first = std::find_if(types.cbegin(), types.cend(), [&](const ResourceType &t) { return t.group == g; });
        const QJsonObject gv{{QStringLiteral("groupVersion"), first->apiVersion()}, {QStringLiteral("version"), first->version}};
        list.append(QJsonObject{{QStringLiteral("name"), g}, {QStringLiteral("versions"), QJsonArray{gv}},
                                {QStringLiteral("preferredVersion"), gv}});
    }
    return QJsonObject{{QStringLiteral("kind"), QStringLiteral("APIGroupList")},
                       {QStringLiteral("apiVersion"), QStringLiteral("v1")},
                       {QStringLiteral("groups"), list}};
}

QJsonObject responseKind(const ResourceType &r)
{
    return QJsonObject{{QStringLiteral("group"), r.group}, {QStringLiteral("version"), r.version}, {QStringLiteral("kind"), r.kind}};
}

// One resource of an APIGroupDiscovery version, its subresources nested in it.
QJsonObject aggregatedResource(const ResourceType &r)
{
    QJsonObject entry{{QStringLiteral("resource"), r.plural},
                      {QStringLiteral("responseKind"), responseKind(r)},
                      {QStringLiteral("scope"), r.namespaced ? QStringLiteral("Namespaced") : QStringLiteral("Cluster")},
                      {QStringLiteral("singularResource"), r.singular},
                      {QStringLiteral("verbs"), QJsonArray::fromStringList(r.verbs)}};
    if (!r.shortNames.isEmpty()) entry.insert(QStringLiteral("shortNames"), QJsonArray::fromStringList(r.shortNames));
    if (!r.categories.isEmpty()) entry.insert(QStringLiteral("categories"), QJsonArray::fromStringList(r.categories));
    QJsonArray subs;
    for (const QString &sub : r.subresources) {
        const SubresourceKind k = subresourceKind(r, sub);
        subs.append(QJsonObject{{QStringLiteral("subresource"), sub},
                                {QStringLiteral("responseKind"), QJsonObject{{QStringLiteral("group"), k.group}, {QStringLiteral("version"), k.version},
                                                                             {QStringLiteral("kind"), k.kind}}},
                                {QStringLiteral("verbs"), QJsonArray::fromStringList(subresourceVerbs(sub))}});
    }
    if (!subs.isEmpty()) entry.insert(QStringLiteral("subresources"), subs);
    return entry;
}

// An APIGroupDiscovery: every version of the group, each with all its resources.
QJsonObject aggregatedGroup(const QString &group)
{
    QJsonArray versions;
    QStringList seen;
    for (const ResourceType &t : ResourceTypes::all()) {
        if (t.group != group || seen.contains(t.version)) {
            continue;
        }
        seen << t.version;
        QJsonArray resources;
        for (const ResourceType &r : ResourceTypes::all()) {
            if (r.group == group && r.version == t.version) {
                resources.append(aggregatedResource(r));
            }
        }
        versions.append(QJsonObject{{QStringLiteral("version"), t.version}, {QStringLiteral("resources"), resources},
                                    {QStringLiteral("freshness"), QStringLiteral("Current")}});
    }
    return QJsonObject{{QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), group}}},
                       {QStringLiteral("versions"), versions}};
}

QByteArray aggregatedList(const QJsonArray &groups)
{
    return QJsonDocument(QJsonObject{{QStringLiteral("kind"), QStringLiteral("APIGroupDiscoveryList")},
                                     {QStringLiteral("apiVersion"), QStringLiteral("apidiscovery.k8s.io/v2")},
                                     {QStringLiteral("metadata"), QJsonObject()}, {QStringLiteral("items"), groups}})
        .toJson(QJsonDocument::Compact);
}

} // namespace

bool ApiServer::serveNonResource(const Http::Request &request, Http::Responder *responder, const User &user)
{
    const QString &path = request.path;
    const QStringList segments = path.split(u'/', Qt::SkipEmptyParts);
    const bool discovery = isDiscoveryPath(path, segments);
    const bool known = discovery || path == QLatin1String("/version") || isHealthPath(path) || path.startsWith(QLatin1String("/openapi"));
    if (!known) {
        // Anything outside /api/ and /apis/ is no route; inside them it is a resource path.
        if (!path.startsWith(QLatin1String("/api/")) && !path.startsWith(QLatin1String("/apis/"))) {
            respondStatus(responder, Status::routeNotFound());
            return true;
        }
        return false;
    }
    const Attributes attributes{QStringLiteral("get"), {}, {}, {}, {}, path, false};
    if (!m_authorizer->allowed(user, attributes)) {
        respondStatus(responder, Status::make(403, QStringLiteral("Forbidden"),
                                              QStringLiteral("forbidden: %1").arg(Authorizer::denial(user, attributes))));
        return true;
    }
    if (path == QLatin1String("/version")) {
        respondJson(responder, 200, versionInfo());
    } else if (path.startsWith(QLatin1String("/openapi"))) {
        // Not served: kubectl create/apply need --validate=false against the sandbox.
        respondStatus(responder, Status::routeNotFound());
    } else if (isHealthPath(path)) {
        responder->respond(200, "text/plain; charset=utf-8", "ok");
    } else {
        serveDiscovery(request, responder, segments);
    }
    return true;
}

void ApiServer::serveDiscovery(const Http::Request &request, Http::Responder *responder, const QStringList &segments)
{
    const bool aggregated = wantsAggregated(request);
    if (segments.size() == 1 && segments[0] == QLatin1String("api")) {
        if (aggregated) {
            responder->respond(200, AggregatedType, aggregatedList({aggregatedGroup(QString())}));
        } else {
            respondJson(responder, 200, legacyCoreVersions(m_serverAddress));
        }
        return;
    }
    if (segments.size() == 1) { // /apis
        if (aggregated) {
            QJsonArray items;
            for (const QString &g : namedGroups()) {
                items.append(aggregatedGroup(g));
            }
            responder->respond(200, AggregatedType, aggregatedList(items));
        } else {
            respondJson(responder, 200, legacyGroupList());
        }
        return;
    }
    // /api/<version> or /apis/<group>/<version>: an APIResourceList whatever the Accept, since
    // aggregated discovery covers only /api and /apis.
    const QString groupVersion = segments[0] == QLatin1String("api") ? segments[1] : segments[1] + u'/' + segments[2];
    if (!ResourceTypes::groupVersions().contains(groupVersion)) {
        respondStatus(responder, Status::routeNotFound());
        return;
    }
    respondJson(responder, 200, legacyResourceList(groupVersion));
}

} // namespace Starforge::Sandbox
