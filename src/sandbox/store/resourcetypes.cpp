#include "sandbox/store/resourcetypes.h"

#include <QJsonArray>
#include <QJsonValue>

#include <tuple>

namespace Starforge::Sandbox {

namespace {

const QStringList allVerbs = {QStringLiteral("create"), QStringLiteral("delete"), QStringLiteral("deletecollection"),
                              QStringLiteral("get"), QStringLiteral("list"), QStringLiteral("patch"),
                              QStringLiteral("update"), QStringLiteral("watch")};

ResourceType make(QString group, QString version, QString plural, QString singular, QString kind, bool namespaced,
                  QStringList shortNames = {}, QStringList fieldLabels = {}, QStringList subresources = {})
{
    ResourceType t;
    t.group = std::move(group);
    t.version = std::move(version);
    t.plural = std::move(plural);
    t.singular = std::move(singular);
    t.kind = std::move(kind);
    t.namespaced = namespaced;
    t.shortNames = std::move(shortNames);
    t.verbs = allVerbs;
    t.fieldLabels = std::move(fieldLabels);
    t.subresources = std::move(subresources);
    t.storage = t.qualifiedName();
    return t;
}

QList<ResourceType> buildTypes()
{
    QList<ResourceType> types;
    auto ns = make({}, QStringLiteral("v1"), QStringLiteral("namespaces"), QStringLiteral("namespace"),
                   QStringLiteral("Namespace"), false, {QStringLiteral("ns")}, {QStringLiteral("status.phase")},
                   {QStringLiteral("status")});
    ns.verbs = {QStringLiteral("create"), QStringLiteral("delete"), QStringLiteral("get"), QStringLiteral("list"),
                QStringLiteral("patch"), QStringLiteral("update"), QStringLiteral("watch")};
    types << ns;
    types << make({}, QStringLiteral("v1"), QStringLiteral("nodes"), QStringLiteral("node"), QStringLiteral("Node"),
                  false, {QStringLiteral("no")}, {QStringLiteral("spec.unschedulable")},
                  {QStringLiteral("status"), QStringLiteral("proxy")});
    types << make({}, QStringLiteral("v1"), QStringLiteral("pods"), QStringLiteral("pod"), QStringLiteral("Pod"), true,
                  {QStringLiteral("po")},
                  {QStringLiteral("spec.nodeName"), QStringLiteral("spec.restartPolicy"), QStringLiteral("spec.schedulerName"),
                   QStringLiteral("spec.serviceAccountName"), QStringLiteral("spec.hostNetwork"), QStringLiteral("status.phase"),
                   QStringLiteral("status.podIP"), QStringLiteral("status.podIPs"), QStringLiteral("status.nominatedNodeName")},
                  {QStringLiteral("status"), QStringLiteral("log"), QStringLiteral("proxy"), QStringLiteral("eviction")});
    // ResourceQuota: checked at pod create, its status kept by the sandbox's quota controller
    // (sandbox/cluster/resourcequota.h).
    types << make({}, QStringLiteral("v1"), QStringLiteral("resourcequotas"), QStringLiteral("resourcequota"),
                  QStringLiteral("ResourceQuota"), true, {QStringLiteral("quota")}, {}, {QStringLiteral("status")});
    types << make({}, QStringLiteral("v1"), QStringLiteral("services"), QStringLiteral("service"), QStringLiteral("Service"),
                  true, {QStringLiteral("svc")}, {}, {QStringLiteral("status"), QStringLiteral("proxy")});
    // Secrets: what the kubelet reads for imagePullSecrets and env secretKeyRef (the sandbox's
    // admission merges stringData into data and checks the docker config types' key).
    types << make({}, QStringLiteral("v1"), QStringLiteral("secrets"), QStringLiteral("secret"), QStringLiteral("Secret"), true,
                  {}, {QStringLiteral("type")});
    // ServiceAccounts and their token Secrets (filled by sandbox/controllers/serviceaccounttokens.h),
    // and RBAC's Roles, ClusterRoles and bindings, which the authorizer reads (api/authorizer.h).
    types << make({}, QStringLiteral("v1"), QStringLiteral("serviceaccounts"), QStringLiteral("serviceaccount"),
                  QStringLiteral("ServiceAccount"), true, {QStringLiteral("sa")});
    for (const auto &[plural, singular, kind, namespaced] :
         {std::tuple{"roles", "role", "Role", true}, std::tuple{"rolebindings", "rolebinding", "RoleBinding", true},
          std::tuple{"clusterroles", "clusterrole", "ClusterRole", false},
          std::tuple{"clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding", false}}) {
        types << make(QStringLiteral("rbac.authorization.k8s.io"), QStringLiteral("v1"), QLatin1String(plural), QLatin1String(singular),
                      QLatin1String(kind), namespaced);
    }
    types << make({}, QStringLiteral("v1"), QStringLiteral("events"), QStringLiteral("event"), QStringLiteral("Event"), true,
                  {QStringLiteral("ev")},
                  {QStringLiteral("involvedObject.kind"), QStringLiteral("involvedObject.namespace"),
                   QStringLiteral("involvedObject.name"), QStringLiteral("involvedObject.uid"),
                   QStringLiteral("involvedObject.apiVersion"), QStringLiteral("involvedObject.resourceVersion"),
                   QStringLiteral("involvedObject.fieldPath"), QStringLiteral("reason"), QStringLiteral("reportingComponent"),
                   QStringLiteral("source"), QStringLiteral("type")});
    types << make(QStringLiteral("batch"), QStringLiteral("v1"), QStringLiteral("jobs"), QStringLiteral("job"),
                  QStringLiteral("Job"), true, {}, {QStringLiteral("status.successful")}, {QStringLiteral("status")});
    auto events = make(QStringLiteral("events.k8s.io"), QStringLiteral("v1"), QStringLiteral("events"), QStringLiteral("event"),
                       QStringLiteral("Event"), true, {QStringLiteral("ev")},
                       {QStringLiteral("regarding.kind"), QStringLiteral("regarding.namespace"), QStringLiteral("regarding.name"),
                        QStringLiteral("regarding.uid"), QStringLiteral("regarding.apiVersion"),
                        QStringLiteral("regarding.resourceVersion"), QStringLiteral("regarding.fieldPath"),
                        QStringLiteral("reportingController"), QStringLiteral("reason"), QStringLiteral("type"),
                        QStringLiteral("source")});
    events.storage = QStringLiteral("events");
    events.fromStorage = coreEventToEventsV1;
    events.toStorage = eventsV1ToCoreEvent;
    types << events;
    auto rayjobs = make(QStringLiteral("ray.io"), QStringLiteral("v1"), QStringLiteral("rayjobs"), QStringLiteral("rayjob"),
                        QStringLiteral("RayJob"), true, {}, {}, {QStringLiteral("status")});
    rayjobs.builtin = false;
    rayjobs.categories = {QStringLiteral("all")};
    types << rayjobs;
    auto rayclusters = make(QStringLiteral("ray.io"), QStringLiteral("v1"), QStringLiteral("rayclusters"),
                            QStringLiteral("raycluster"), QStringLiteral("RayCluster"), true, {}, {}, {QStringLiteral("status")});
    rayclusters.builtin = false;
    rayclusters.categories = {QStringLiteral("all")};
    types << rayclusters;
    // KubeRay's CRDs, read-only: what the sandbox's KubeRay release installed (clients read the
    // schema to tell the release).
    auto crds = make(QStringLiteral("apiextensions.k8s.io"), QStringLiteral("v1"), QStringLiteral("customresourcedefinitions"),
                     QStringLiteral("customresourcedefinition"), QStringLiteral("CustomResourceDefinition"), false,
                     {QStringLiteral("crd"), QStringLiteral("crds")}, {}, {QStringLiteral("status")});
    crds.verbs = {QStringLiteral("get"), QStringLiteral("list"), QStringLiteral("watch")};
    crds.categories = {QStringLiteral("api-extensions")};
    types << crds;
    auto ssar = make(QStringLiteral("authorization.k8s.io"), QStringLiteral("v1"), QStringLiteral("selfsubjectaccessreviews"),
                     QString(), QStringLiteral("SelfSubjectAccessReview"), false);
    ssar.verbs = {QStringLiteral("create")};
    types << ssar;
    auto ssrr = make(QStringLiteral("authorization.k8s.io"), QStringLiteral("v1"), QStringLiteral("selfsubjectrulesreviews"),
                     QString(), QStringLiteral("SelfSubjectRulesReview"), false);
    ssrr.verbs = {QStringLiteral("create")};
    types << ssrr;
    auto ssr = make(QStringLiteral("authentication.k8s.io"), QStringLiteral("v1"), QStringLiteral("selfsubjectreviews"),
                    QString(), QStringLiteral("SelfSubjectReview"), false);
    ssr.verbs = {QStringLiteral("create")};
    types << ssr;
    return types;
}

QJsonValue at(const QJsonObject &object, const QString &path)
{
    QJsonValue value = object;
    for (const QString &part : path.split(u'.')) {
        value = value.toObject().value(part);
    }
    return value;
}

QString text(const QJsonValue &value)
{
    if (value.isBool()) {
        return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    }
    if (value.isDouble()) {
        return QString::number(value.toInteger());
    }
    return value.toString();
}

QJsonValue rename(const QJsonObject &from, const QString &key)
{
    return from.contains(key) ? from.value(key) : QJsonValue(QJsonValue::Undefined);
}

} // namespace

const QList<ResourceType> &ResourceTypes::all()
{
    static const QList<ResourceType> types = buildTypes();
    return types;
}

const ResourceType *ResourceTypes::find(const QString &group, const QString &version, const QString &plural)
{
    for (const ResourceType &t : all()) {
        if (t.group == group && t.version == version && t.plural == plural) {
            return &t;
        }
    }
    return nullptr;
}

const ResourceType *ResourceTypes::byKind(const QString &apiVersion, const QString &kind)
{
    for (const ResourceType &t : all()) {
        if (t.apiVersion() == apiVersion && t.kind == kind) {
            return &t;
        }
    }
    return nullptr;
}

const ResourceType *ResourceTypes::storageType(const QString &storage)
{
    for (const ResourceType &t : all()) {
        if (t.storage == storage && !t.converts()) {
            return &t;
        }
    }
    return nullptr;
}

QStringList ResourceTypes::groupVersions()
{
    QStringList out;
    for (const ResourceType &t : all()) {
        if (!out.contains(t.apiVersion())) {
            out << t.apiVersion();
        }
    }
    return out;
}

std::optional<QString> ResourceTypes::fieldValue(const ResourceType &type, const QJsonObject &object, const QString &label)
{
    if (label == QLatin1String("metadata.name") || label == QLatin1String("metadata.namespace")) {
        return text(at(object, label));
    }
    if (!type.fieldLabels.contains(label)) {
        return std::nullopt;
    }
    if (label == QLatin1String("source")) {
        // The component, falling back to the reporting component, as the event strategy does.
        const bool v1 = type.group == QLatin1String("events.k8s.io");
        const QString component = text(at(object, v1 ? QStringLiteral("deprecatedSource.component")
                                                     : QStringLiteral("source.component")));
        return component.isEmpty()
            ? text(object.value(v1 ? QStringLiteral("reportingController") : QStringLiteral("reportingComponent")))
            : component;
    }
    if (label == QLatin1String("spec.unschedulable") || label == QLatin1String("spec.hostNetwork")) {
        return at(object, label).toBool() ? QStringLiteral("true") : QStringLiteral("false");
    }
    if (label == QLatin1String("status.podIPs")) {
        const QJsonArray ips = at(object, label).toArray();
        return ips.isEmpty() ? QString() : ips.first().toObject().value(QStringLiteral("ip")).toString();
    }
    return text(at(object, label));
}

void ResourceTypes::applyDefaults(const ResourceType &type, QJsonObject &object)
{
    if (type.storage != QLatin1String("pods")) {
        return;
    }
    QJsonObject spec = object.value(QStringLiteral("spec")).toObject();
    for (const char *list : {"initContainers", "containers"}) {
        const QString key = QString::fromLatin1(list);
        if (!spec.contains(key)) continue;
        QJsonArray containers = spec.value(key).toArray();
        for (qsizetype i = 0; i < containers.size(); ++i) {
            QJsonObject c = containers.at(i).toObject();
            QJsonObject resources = c.value(QStringLiteral("resources")).toObject();
            const QJsonObject limits = resources.value(QStringLiteral("limits")).toObject();
            QJsonObject requests = resources.value(QStringLiteral("requests")).toObject();
            for (auto it = limits.begin(); it != limits.end(); ++it) {
                if (!requests.contains(it.key())) requests.insert(it.key(), it.value());
            }
            if (!requests.isEmpty()) {
                resources.insert(QStringLiteral("requests"), requests);
                c.insert(QStringLiteral("resources"), resources);
            }
            if (!c.contains(QStringLiteral("terminationMessagePath"))) {
                c.insert(QStringLiteral("terminationMessagePath"), QStringLiteral("/dev/termination-log"));
                c.insert(QStringLiteral("terminationMessagePolicy"), QStringLiteral("File"));
            }
            containers.replace(i, c);
        }
        spec.insert(key, containers);
    }
    if (!spec.contains(QStringLiteral("restartPolicy"))) spec.insert(QStringLiteral("restartPolicy"), QStringLiteral("Always"));
    if (!spec.contains(QStringLiteral("schedulerName"))) spec.insert(QStringLiteral("schedulerName"), QStringLiteral("default-scheduler"));
    if (!spec.contains(QStringLiteral("terminationGracePeriodSeconds"))) spec.insert(QStringLiteral("terminationGracePeriodSeconds"), 30);
    if (!spec.contains(QStringLiteral("dnsPolicy"))) spec.insert(QStringLiteral("dnsPolicy"), QStringLiteral("ClusterFirst"));
    object.insert(QStringLiteral("spec"), spec);
}

QJsonObject coreEventToEventsV1(const QJsonObject &core)
{
    QJsonObject out;
    out.insert(QStringLiteral("apiVersion"), QStringLiteral("events.k8s.io/v1"));
    out.insert(QStringLiteral("kind"), QStringLiteral("Event"));
    out.insert(QStringLiteral("metadata"), core.value(QStringLiteral("metadata")));
    const auto copy = [&](const QString &from, const QString &to) {
        const QJsonValue v = rename(core, from);
        if (!v.isUndefined() && !v.isNull()) {
            out.insert(to, v);
        }
    };
    copy(QStringLiteral("eventTime"), QStringLiteral("eventTime"));
    copy(QStringLiteral("series"), QStringLiteral("series"));
    copy(QStringLiteral("reportingComponent"), QStringLiteral("reportingController"));
    copy(QStringLiteral("reportingInstance"), QStringLiteral("reportingInstance"));
    copy(QStringLiteral("action"), QStringLiteral("action"));
    copy(QStringLiteral("reason"), QStringLiteral("reason"));
    copy(QStringLiteral("involvedObject"), QStringLiteral("regarding"));
    copy(QStringLiteral("related"), QStringLiteral("related"));
    copy(QStringLiteral("message"), QStringLiteral("note"));
    copy(QStringLiteral("type"), QStringLiteral("type"));
    copy(QStringLiteral("source"), QStringLiteral("deprecatedSource"));
    copy(QStringLiteral("firstTimestamp"), QStringLiteral("deprecatedFirstTimestamp"));
    copy(QStringLiteral("lastTimestamp"), QStringLiteral("deprecatedLastTimestamp"));
    copy(QStringLiteral("count"), QStringLiteral("deprecatedCount"));
    if (!out.contains(QStringLiteral("eventTime"))) {
        // Required on this API, yet kube-apiserver serves a legacy event's as null (docs/sandbox.md, "Required fields").
        out.insert(QStringLiteral("eventTime"), QJsonValue::Null);
    }
    return out;
}

QJsonObject eventsV1ToCoreEvent(const QJsonObject &events)
{
    QJsonObject out;
    out.insert(QStringLiteral("apiVersion"), QStringLiteral("v1"));
    out.insert(QStringLiteral("kind"), QStringLiteral("Event"));
    out.insert(QStringLiteral("metadata"), events.value(QStringLiteral("metadata")));
    const auto copy = [&](const QString &from, const QString &to) {
        const QJsonValue v = rename(events, from);
        if (!v.isUndefined()) {
            out.insert(to, v);
        }
    };
    copy(QStringLiteral("eventTime"), QStringLiteral("eventTime"));
    copy(QStringLiteral("series"), QStringLiteral("series"));
    copy(QStringLiteral("reportingController"), QStringLiteral("reportingComponent"));
    copy(QStringLiteral("reportingInstance"), QStringLiteral("reportingInstance"));
    copy(QStringLiteral("action"), QStringLiteral("action"));
    copy(QStringLiteral("reason"), QStringLiteral("reason"));
    copy(QStringLiteral("regarding"), QStringLiteral("involvedObject"));
    copy(QStringLiteral("related"), QStringLiteral("related"));
    copy(QStringLiteral("note"), QStringLiteral("message"));
    copy(QStringLiteral("type"), QStringLiteral("type"));
    copy(QStringLiteral("deprecatedSource"), QStringLiteral("source"));
    copy(QStringLiteral("deprecatedFirstTimestamp"), QStringLiteral("firstTimestamp"));
    copy(QStringLiteral("deprecatedLastTimestamp"), QStringLiteral("lastTimestamp"));
    copy(QStringLiteral("deprecatedCount"), QStringLiteral("count"));
    return out;
}

} // namespace Starforge::Sandbox
