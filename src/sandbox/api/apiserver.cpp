#include "sandbox/api/apiserver.h"

#include "sandbox/api/protobuf.h"
#include "sandbox/api/selectors.h"
#include "sandbox/api/status.h"
#include "sandbox/api/tables.h"
#include "sandbox/api/watchstream.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"
#include "sandbox/util/names.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QTimer>

Q_LOGGING_CATEGORY(lcApi, "starforge.sandbox.api")

namespace Starforge::Sandbox {

namespace {

const QByteArray JsonType = "application/json";
const QByteArray AggregatedType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";


// The API server's object-name checks, with its texts: DNS-1123 labels for namespaces,
// subdomains for everything else.
QString nameProblem(const QString &name, bool label)
{
    static const QRegularExpression subdomain(QStringLiteral("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"));
    static const QRegularExpression labelRe(QStringLiteral("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"));
    const int max = label ? 63 : 253;
    if (name.size() > max) {
        return QStringLiteral("must be no more than %1 characters").arg(max);
    }
    if ((label ? labelRe : subdomain).match(name).hasMatch()) {
        return {};
    }
    return label ? QStringLiteral("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
                                  "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
                                  "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
                 : QStringLiteral("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                                  "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                                  "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
}

QJsonValue mergePatch(const QJsonValue &target, const QJsonValue &patch)
{
    if (!patch.isObject()) {
        return patch;
    }
    QJsonObject out = target.isObject() ? target.toObject() : QJsonObject();
    const QJsonObject p = patch.toObject();
    for (auto it = p.begin(); it != p.end(); ++it) {
        if (it.value().isNull()) {
            out.remove(it.key());
        } else {
            out.insert(it.key(), mergePatch(out.value(it.key()), it.value()));
        }
    }
    return out;
}

QString verbFor(const QByteArray &method, bool named, bool watching)
{
    if (method == "GET" || method == "HEAD") {
        return named ? QStringLiteral("get") : watching ? QStringLiteral("watch") : QStringLiteral("list");
    }
    if (method == "POST") return QStringLiteral("create");
    if (method == "PUT") return QStringLiteral("update");
    if (method == "PATCH") return QStringLiteral("patch");
    if (method == "DELETE") return named ? QStringLiteral("delete") : QStringLiteral("deletecollection");
    return QString::fromLatin1(method).toLower();
}

// kubectl asks for server-side printing with "application/json;as=Table;v=v1;g=meta.k8s.io".
bool wantsTable(const Http::Request &request)
{
    const QByteArray accept = request.header("accept");
    return accept.contains("as=Table") && accept.contains("g=meta.k8s.io");
}

bool truthy(const QString &v)
{
    return v == QLatin1String("1") || v == QLatin1String("true");
}

QJsonObject listContinue(quint64 rv, const QString &key, qint64 offset)
{
    return QJsonObject{{QStringLiteral("v"), QStringLiteral("meta.k8s.io/v1")},
                       {QStringLiteral("rv"), static_cast<qint64>(rv)},
                       {QStringLiteral("start"), key},
                       {QStringLiteral("offset"), offset}};
}

} // namespace

// --- Faults ----------------------------------------------------------------------------------

QJsonObject Faults::toJson() const
{
    return QJsonObject{{QStringLiteral("rate429"), rate429},
                       {QStringLiteral("rate500"), rate500},
                       {QStringLiteral("delayMs"), delayMs},
                       {QStringLiteral("dropWatchesAfterMs"), dropWatchesAfterMs},
                       {QStringLiteral("dropLogsAfterMs"), dropLogsAfterMs},
                       {QStringLiteral("s3PartFailureRate"), s3PartFailureRate}};
}

Result<Faults> Faults::fromJson(const QJsonObject &json, const Faults &base)
{
    Faults f = base;
    for (auto it = json.begin(); it != json.end(); ++it) {
        const QString key = it.key();
        const double v = it.value().toDouble(-1);
        const bool rate = key == QLatin1String("rate429") || key == QLatin1String("rate500")
            || key == QLatin1String("s3PartFailureRate");
        if (rate && (v < 0 || v > 1)) {
            return Error::invalid(QStringLiteral("fault %1 must be a fraction between 0 and 1").arg(key));
        }
        if (!rate && (v < 0 || v > 3600000)) {
            return Error::invalid(QStringLiteral("fault %1 must be milliseconds between 0 and 3600000").arg(key));
        }
        if (key == QLatin1String("rate429")) f.rate429 = v;
        else if (key == QLatin1String("rate500")) f.rate500 = v;
        else if (key == QLatin1String("s3PartFailureRate")) f.s3PartFailureRate = v;
        else if (key == QLatin1String("delayMs")) f.delayMs = static_cast<int>(v);
        else if (key == QLatin1String("dropWatchesAfterMs")) f.dropWatchesAfterMs = static_cast<int>(v);
        else if (key == QLatin1String("dropLogsAfterMs")) f.dropLogsAfterMs = static_cast<int>(v);
        else return Error::invalid(QStringLiteral("unknown fault '%1'; known: rate429, rate500, delayMs, dropWatchesAfterMs, "
                                                  "dropLogsAfterMs, s3PartFailureRate").arg(key));
    }
    return f;
}

Result<Faults> Faults::parse(const QString &spec)
{
    QJsonObject json;
    for (const QString &part : spec.split(u',', Qt::SkipEmptyParts)) {
        const qsizetype eq = part.indexOf(u'=');
        bool ok = false;
        const double v = eq > 0 ? part.mid(eq + 1).toDouble(&ok) : 0;
        if (!ok) {
            return Error::invalid(QStringLiteral("cannot read the fault '%1': write NAME=NUMBER, e.g. rate500=0.1").arg(part));
        }
        json.insert(part.left(eq).trimmed(), v);
    }
    return fromJson(json, Faults());
}

// --- ApiServer -------------------------------------------------------------------------------

ApiServer::ApiServer(ObjectStore *store, Authorizer *authorizer, QObject *parent)
    : QObject(parent)
    , m_store(store)
    , m_authorizer(authorizer)
    , m_random(QRandomGenerator::securelySeeded())
{
}

ApiServer::~ApiServer() = default;

void ApiServer::setFaults(const Faults &faults)
{
    m_faults = faults;
}

void ApiServer::dropWatches()
{
    const auto watches = m_watches;
    for (const auto &w : watches) {
        if (w) {
            w->cut();
        }
    }
    m_watches.clear();
}

int ApiServer::openWatchCount() const
{
    return static_cast<int>(std::count_if(m_watches.cbegin(), m_watches.cend(), [](const auto &w) { return !w.isNull(); }));
}

void ApiServer::setSubresourceHandler(const QString &storage, const QString &subresource, SubresourceHandler handler)
{
    m_subresources.insert(storage + u'/' + subresource, std::move(handler));
}

void ApiServer::setAdmission(const QString &storage, Admission admission)
{
    m_admission.insert(storage, std::move(admission));
}

void ApiServer::setPrinterColumns(const QString &storage, std::function<QJsonArray()> columns)
{
    m_printerColumnSources.insert(storage, std::move(columns));
}

QJsonArray ApiServer::printerColumns(const QString &storage)
{
    if (!m_printerColumns.contains(storage)) {
        const auto source = m_printerColumnSources.constFind(storage);
        m_printerColumns.insert(storage, source == m_printerColumnSources.cend() ? QJsonArray() : (*source)());
    }
    return m_printerColumns.value(storage);
}

void ApiServer::respondTable(Http::Responder *responder, const ResourceType &type, const std::vector<QJsonObject> &objects,
                             const Http::Request &request, const QJsonObject &listMetadata)
{
    const QJsonObject table = Tables::build(type, objects, printerColumns(type.storage),
                                            request.queryValue(QStringLiteral("includeObject")), listMetadata);
    responder->respond(200, "application/json;as=Table;v=v1;g=meta.k8s.io", QJsonDocument(table).toJson(QJsonDocument::Compact) + '\n');
}

void ApiServer::respondStatus(Http::Responder *responder, const QJsonObject &status, const Http::Headers &extra)
{
    responder->respond(status.value(QStringLiteral("code")).toInt(500), JsonType, Status::json(status), extra);
}

void ApiServer::respondJson(Http::Responder *responder, int code, const QJsonObject &object)
{
    responder->respond(code, JsonType, QJsonDocument(object).toJson(QJsonDocument::Compact) + '\n');
}

void ApiServer::handle(const Http::Request &request, Http::Responder *responder)
{
    const QByteArray authorization = request.header("authorization");
    const User *user = m_authorizer->authenticate(authorization);
    const bool publicInfo = request.path == QLatin1String("/version") || request.path == QLatin1String("/healthz")
        || request.path == QLatin1String("/livez") || request.path == QLatin1String("/readyz");
    if (!user && !(publicInfo && authorization.isEmpty())) {
        // Wrong token, or no token where anonymous access is not allowed.
        respondStatus(responder, Status::unauthorized());
        return;
    }
    if (!user) {
        static const User anonymous{QStringLiteral("system:anonymous"), {}, {}};
        serveNonResource(request, responder, anonymous);
        return;
    }
    const bool isResource = request.path.startsWith(QLatin1String("/api/")) || request.path.startsWith(QLatin1String("/apis/"));
    const bool faultsApply = isResource && !request.path.startsWith(QLatin1String("/sandbox/"));
    if (faultsApply) {
        const double roll = m_random.generateDouble();
        if (roll < m_faults.rate429) {
            respondStatus(responder, Status::tooManyRequests(1), {{"Retry-After", "1"}});
            return;
        }
        if (roll < m_faults.rate429 + m_faults.rate500) {
            respondStatus(responder, Status::internalError(QStringLiteral("injected fault: the sandbox answers 500 at rate %1")
                                                               .arg(m_faults.rate500)));
            return;
        }
        if (m_faults.delayMs > 0) {
            QPointer<Http::Responder> guard(responder);
            const Http::Request copy = request;
            const User *who = user;
            QTimer::singleShot(m_faults.delayMs, this, [this, guard, copy, who] {
                if (guard && !guard->isFinished()) {
                    serve(copy, guard, *who);
                }
            });
            return;
        }
    }
    serve(request, responder, *user);
}

void ApiServer::serve(const Http::Request &request, Http::Responder *responder, const User &user)
{
    if (request.path.startsWith(QLatin1String("/sandbox/"))) {
        serveControl(request, responder, user);
        return;
    }
    if (serveNonResource(request, responder, user)) {
        return;
    }
    const auto info = parseRequestInfo(request);
    if (!info) {
        respondStatus(responder, Status::routeNotFound());
        return;
    }
    Attributes attributes{info->verb, info->group,
                          info->subresource.isEmpty() ? info->resource : info->resource + u'/' + info->subresource,
                          info->ns, info->name, {}, true};
    if (!m_authorizer->allowed(user, attributes)) {
        const QString qualified = info->group.isEmpty() ? info->resource : info->resource + u'.' + info->group;
        const QString subject = info->name.isEmpty() ? qualified : QStringLiteral("%1 \"%2\"").arg(qualified, info->name);
        respondStatus(responder, Status::make(403, QStringLiteral("Forbidden"),
                                              QStringLiteral("%1 is forbidden: %2").arg(subject, Authorizer::denial(user, attributes)),
                                              Status::details(info->name, info->group, info->resource)));
        return;
    }
    const ResourceType &type = *info->type;
    if (!info->subresource.isEmpty() && info->subresource != QLatin1String("status")) {
        const auto handler = m_subresources.constFind(type.storage + u'/' + info->subresource);
        if (handler == m_subresources.cend()) {
            respondStatus(responder, Status::routeNotFound());
            return;
        }
        (*handler)(*info, request, responder);
        return;
    }
    if (type.storage == QLatin1String("selfsubjectaccessreviews.authorization.k8s.io")) {
        accessReview(*info, request, responder, user);
        return;
    }
    if (type.storage == QLatin1String("selfsubjectrulesreviews.authorization.k8s.io")) {
        rulesReview(request, responder, user);
        return;
    }
    if (!type.verbs.contains(info->verb)) {
        respondStatus(responder, Status::methodNotAllowed());
        return;
    }
    if (info->verb == QLatin1String("list")) list(*info, request, responder);
    else if (info->verb == QLatin1String("watch")) watch(*info, request, responder);
    else if (info->verb == QLatin1String("get")) get(*info, request, responder);
    else if (info->verb == QLatin1String("create")) create(*info, request, responder);
    else if (info->verb == QLatin1String("update")) update(*info, request, responder);
    else if (info->verb == QLatin1String("patch")) patch(*info, request, responder);
    else if (info->verb == QLatin1String("delete")) remove(*info, request, responder);
    else respondStatus(responder, Status::methodNotAllowed());
}

std::optional<RequestInfo> ApiServer::parseRequestInfo(const Http::Request &request) const
{
    // Empty segments ("namespaces//pods") name nothing: 404, as the API server's router says.
    QString trimmed = request.path.mid(1);
    if (trimmed.endsWith(u'/')) trimmed.chop(1); // a proxy path's trailing slash is kept below
    QStringList s = trimmed.split(u'/', Qt::KeepEmptyParts);
    const qsizetype proxyAt = s.indexOf(QStringLiteral("proxy"));
    for (qsizetype i = 0; i < s.size() && (proxyAt < 0 || i < proxyAt); ++i) {
        if (s[i].isEmpty()) {
            return std::nullopt;
        }
    }
    RequestInfo info;
    if (s.size() >= 2 && s[0] == QLatin1String("api")) {
        info.version = s[1];
        s = s.mid(2);
    } else if (s.size() >= 3 && s[0] == QLatin1String("apis")) {
        info.group = s[1];
        info.version = s[2];
        s = s.mid(3);
    } else {
        return std::nullopt;
    }
    if (s.isEmpty()) {
        return std::nullopt;
    }
    if (s[0] == QLatin1String("namespaces") && s.size() >= 3) {
        info.ns = s[1];
        s = s.mid(2);
    } else if (s[0] == QLatin1String("namespaces") && s.size() == 2) {
        info.resource = s[0];
        info.name = s[1];
        s.clear();
    }
    if (!s.isEmpty()) {
        info.resource = s.value(0);
        info.name = s.value(1);
        info.subresource = s.value(2);
        info.rest = s.mid(3).join(u'/');
        if (s.size() > 3 && info.subresource != QLatin1String("proxy")) {
            return std::nullopt;
        }
        if (info.subresource == QLatin1String("proxy") && request.path.endsWith(u'/')) {
            info.rest += u'/';
        }
    }
    info.type = ResourceTypes::find(info.group, info.version, info.resource);
    if (!info.type || (!info.ns.isEmpty() && !info.type->namespaced)) {
        return std::nullopt;
    }
    if (!info.subresource.isEmpty() && !info.type->subresources.contains(info.subresource)) {
        return std::nullopt;
    }
    info.isResource = true;
    info.verb = verbFor(request.method, !info.name.isEmpty(), truthy(request.queryValue(QStringLiteral("watch"))));
    return info;
}

bool ApiServer::serveNonResource(const Http::Request &request, Http::Responder *responder, const User &user)
{
    const QString &path = request.path;
    QStringList segments = path.split(u'/', Qt::SkipEmptyParts);
    const bool discovery = path == QLatin1String("/api") || path == QLatin1String("/apis")
        || (segments.size() == 2 && segments[0] == QLatin1String("api"))
        || (segments.size() == 3 && segments[0] == QLatin1String("apis"));
    const bool known = discovery || path == QLatin1String("/version") || path == QLatin1String("/healthz")
        || path == QLatin1String("/livez") || path == QLatin1String("/readyz") || path.startsWith(QLatin1String("/openapi"));
    if (!known) {
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
        respondJson(responder, 200, QJsonObject{{QStringLiteral("major"), QStringLiteral("1")},
                                                {QStringLiteral("minor"), QStringLiteral("32")},
                                                {QStringLiteral("gitVersion"), QStringLiteral("v1.32.4-starforge-sandbox")},
                                                {QStringLiteral("gitCommit"), QStringLiteral("0000000000000000000000000000000000000000")},
                                                {QStringLiteral("gitTreeState"), QStringLiteral("clean")},
                                                {QStringLiteral("buildDate"), QStringLiteral("2026-01-01T00:00:00Z")},
                                                {QStringLiteral("goVersion"), QStringLiteral("go1.23.6")},
                                                {QStringLiteral("compiler"), QStringLiteral("gc")},
                                                {QStringLiteral("platform"), QStringLiteral("linux/amd64")}});
        return true;
    }
    if (!discovery) {
        if (path.startsWith(QLatin1String("/openapi"))) {
            // Not served: kubectl create/apply need --validate=false against the sandbox.
            respondStatus(responder, Status::routeNotFound());
        } else {
            responder->respond(200, "text/plain; charset=utf-8", "ok");
        }
        return true;
    }
    serveDiscovery(request, responder, segments);
    return true;
}

void ApiServer::serveDiscovery(const Http::Request &request, Http::Responder *responder, const QStringList &segments)
{
    const bool aggregated = request.header("accept").contains("as=APIGroupDiscoveryList")
        && request.header("accept").contains("v=v2");
    const auto resourceEntries = [](const QString &groupVersion) {
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
                const QStringList verbs = sub == QLatin1String("status") ? QStringList{QStringLiteral("get"), QStringLiteral("patch"), QStringLiteral("update")}
                                        : sub == QLatin1String("log") ? QStringList{QStringLiteral("get")}
                                        : QStringList{QStringLiteral("create"), QStringLiteral("delete"), QStringLiteral("get"),
                                                      QStringLiteral("patch"), QStringLiteral("update")};
                resources.append(QJsonObject{{QStringLiteral("name"), QString(t.plural + u'/' + sub)}, {QStringLiteral("singularName"), QString()},
                                             {QStringLiteral("namespaced"), t.namespaced},
                                             {QStringLiteral("kind"), sub == QLatin1String("status") ? t.kind : QStringLiteral("Pod")},
                                             {QStringLiteral("verbs"), QJsonArray::fromStringList(verbs)}});
            }
        }
        return resources;
    };
    const auto aggregatedGroup = [](const QString &group) {
        QJsonArray versions;
        QStringList seen;
        for (const ResourceType &t : ResourceTypes::all()) {
            if (t.group != group || seen.contains(t.version)) {
                continue;
            }
            seen << t.version;
            QJsonArray resources;
            for (const ResourceType &r : ResourceTypes::all()) {
                if (r.group != group || r.version != t.version) {
                    continue;
                }
                QJsonObject entry{{QStringLiteral("resource"), r.plural},
                                  {QStringLiteral("responseKind"), QJsonObject{{QStringLiteral("group"), r.group},
                                                                               {QStringLiteral("version"), r.version},
                                                                               {QStringLiteral("kind"), r.kind}}},
                                  {QStringLiteral("scope"), r.namespaced ? QStringLiteral("Namespaced") : QStringLiteral("Cluster")},
                                  {QStringLiteral("singularResource"), r.singular},
                                  {QStringLiteral("verbs"), QJsonArray::fromStringList(r.verbs)}};
                if (!r.shortNames.isEmpty()) entry.insert(QStringLiteral("shortNames"), QJsonArray::fromStringList(r.shortNames));
                if (!r.categories.isEmpty()) entry.insert(QStringLiteral("categories"), QJsonArray::fromStringList(r.categories));
                QJsonArray subs;
                for (const QString &sub : r.subresources) {
                    subs.append(QJsonObject{{QStringLiteral("subresource"), sub},
                                            {QStringLiteral("responseKind"), QJsonObject{{QStringLiteral("group"), r.group},
                                                                                         {QStringLiteral("version"), r.version},
                                                                                         {QStringLiteral("kind"), r.kind}}},
                                            {QStringLiteral("verbs"), QJsonArray{QStringLiteral("get")}}});
                }
                if (!subs.isEmpty()) entry.insert(QStringLiteral("subresources"), subs);
                resources.append(entry);
            }
            versions.append(QJsonObject{{QStringLiteral("version"), t.version}, {QStringLiteral("resources"), resources},
                                        {QStringLiteral("freshness"), QStringLiteral("Current")}});
        }
        return QJsonObject{{QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), group}}},
                           {QStringLiteral("versions"), versions}};
    };
    const auto aggregatedList = [](const QJsonArray &items) {
        return QJsonObject{{QStringLiteral("kind"), QStringLiteral("APIGroupDiscoveryList")},
                           {QStringLiteral("apiVersion"), QStringLiteral("apidiscovery.k8s.io/v2")},
                           {QStringLiteral("metadata"), QJsonObject()}, {QStringLiteral("items"), items}};
    };

    if (segments.size() == 1 && segments[0] == QLatin1String("api")) {
        if (aggregated) {
            responder->respond(200, AggregatedType,
                               QJsonDocument(aggregatedList({aggregatedGroup(QString())})).toJson(QJsonDocument::Compact));
            return;
        }
        respondJson(responder, 200, QJsonObject{{QStringLiteral("kind"), QStringLiteral("APIVersions")},
                                                {QStringLiteral("versions"), QJsonArray{QStringLiteral("v1")}},
                                                {QStringLiteral("serverAddressByClientCIDRs"),
                                                 QJsonArray{QJsonObject{{QStringLiteral("clientCIDR"), QStringLiteral("0.0.0.0/0")},
                                                                        {QStringLiteral("serverAddress"), m_serverAddress}}}}});
        return;
    }
    QStringList groups;
    for (const ResourceType &t : ResourceTypes::all()) {
        if (!t.group.isEmpty() && !groups.contains(t.group)) {
            groups << t.group;
        }
    }
    if (segments.size() == 1) {
        if (aggregated) {
            QJsonArray items;
            for (const QString &g : groups) {
                items.append(aggregatedGroup(g));
            }
            responder->respond(200, AggregatedType, QJsonDocument(aggregatedList(items)).toJson(QJsonDocument::Compact));
            return;
        }
        QJsonArray list;
        for (const QString &g : groups) {
            const ResourceType *first = nullptr;
            for (const ResourceType &t : ResourceTypes::all()) {
                if (t.group == g) {
                    first = &t;
                    break;
                }
            }
            const QJsonObject gv{{QStringLiteral("groupVersion"), first->apiVersion()}, {QStringLiteral("version"), first->version}};
            list.append(QJsonObject{{QStringLiteral("name"), g}, {QStringLiteral("versions"), QJsonArray{gv}},
                                    {QStringLiteral("preferredVersion"), gv}});
        }
        respondJson(responder, 200, QJsonObject{{QStringLiteral("kind"), QStringLiteral("APIGroupList")},
                                                {QStringLiteral("apiVersion"), QStringLiteral("v1")},
                                                {QStringLiteral("groups"), list}});
        return;
    }
    const QString groupVersion = segments[0] == QLatin1String("api") ? segments[1] : segments[1] + u'/' + segments[2];
    if (!ResourceTypes::groupVersions().contains(groupVersion)) {
        respondStatus(responder, Status::routeNotFound());
        return;
    }
    respondJson(responder, 200, QJsonObject{{QStringLiteral("kind"), QStringLiteral("APIResourceList")},
                                            {QStringLiteral("apiVersion"), QStringLiteral("v1")},
                                            {QStringLiteral("groupVersion"), groupVersion},
                                            {QStringLiteral("resources"), resourceEntries(groupVersion)}});
}

void ApiServer::serveControl(const Http::Request &request, Http::Responder *responder, const User &user)
{
    const Attributes attributes{request.method == "GET" ? QStringLiteral("get") : QStringLiteral("update"), {}, {}, {}, {},
                                request.path, false};
    if (!m_authorizer->allowed(user, attributes)) {
        respondStatus(responder, Status::make(403, QStringLiteral("Forbidden"),
                                              QStringLiteral("forbidden: %1").arg(Authorizer::denial(user, attributes))));
        return;
    }
    if (request.path == QLatin1String("/sandbox/v1/faults")) {
        if (request.method == "GET") {
            respondJson(responder, 200, m_faults.toJson());
            return;
        }
        if (request.method == "PUT" || request.method == "PATCH") {
            const QJsonDocument doc = QJsonDocument::fromJson(request.body);
            auto faults = Faults::fromJson(doc.object(), request.method == "PATCH" ? m_faults : Faults());
            if (!doc.isObject() || !faults) {
                respondStatus(responder, Status::badRequest(faults ? QStringLiteral("the body must be a JSON object of faults")
                                                                   : faults.error().message));
                return;
            }
            m_faults = *faults;
            qCInfo(lcApi) << "faults now" << m_faults.toJson();
            respondJson(responder, 200, m_faults.toJson());
            return;
        }
    }
    if (request.method == "POST" && request.path == QLatin1String("/sandbox/v1/faults/drop-watches")) {
        const int n = openWatchCount();
        dropWatches();
        respondJson(responder, 200, QJsonObject{{QStringLiteral("dropped"), n}});
        return;
    }
    if (request.method == "POST" && request.path == QLatin1String("/sandbox/v1/faults/expire-history")) {
        m_store->expireHistory();
        respondJson(responder, 200, QJsonObject{{QStringLiteral("oldestWatchable"),
                                                 QString::number(m_store->oldestWatchableResourceVersion())}});
        return;
    }
    respondStatus(responder, Status::routeNotFound());
}

void ApiServer::list(const RequestInfo &info, const Http::Request &request, Http::Responder *responder)
{
    const ResourceType &type = *info.type;
    auto labels = LabelSelector::parse(request.queryValue(QStringLiteral("labelSelector")));
    if (!labels) {
        respondStatus(responder, Status::badRequest(labels.error().message));
        return;
    }
    auto fields = FieldSelector::parse(request.queryValue(QStringLiteral("fieldSelector")));
    if (!fields) {
        respondStatus(responder, Status::badRequest(fields.error().message));
        return;
    }
    if (auto checked = fields->check([&](const QString &f) {
            return f == QLatin1String("metadata.name") || f == QLatin1String("metadata.namespace") || type.fieldLabels.contains(f);
        }); !checked) {
        respondStatus(responder, Status::badRequest(checked.error().message));
        return;
    }
    bool limitOk = true;
    const QString limitText = request.queryValue(QStringLiteral("limit"));
    const qint64 limit = limitText.isEmpty() ? 0 : limitText.toLongLong(&limitOk);
    if (!limitOk || limit < 0) {
        respondStatus(responder, Status::badRequest(QStringLiteral("limit: Invalid value: \"%1\": must be a non-negative integer").arg(limitText)));
        return;
    }
    const QString rvText = request.queryValue(QStringLiteral("resourceVersion"));
    const QString match = request.queryValue(QStringLiteral("resourceVersionMatch"));
    if (match == QLatin1String("Exact")) {
        bool ok = false;
        const quint64 rv = rvText.toULongLong(&ok);
        if (!ok || rv != m_store->currentResourceVersion()) {
            // The sandbox keeps no old snapshots; only the current resourceVersion can be read exactly.
            respondStatus(responder, Status::make(410, QStringLiteral("Expired"),
                                                  QStringLiteral("The resourceVersion for the provided list is too old.")));
            return;
        }
    }

    QString startAfter;
    qint64 offset = 0; // objects before this page, for remainingItemCount
    quint64 listRv = m_store->currentResourceVersion();
    const QString continueToken = request.queryValue(QStringLiteral("continue"));
    if (!continueToken.isEmpty()) {
        const QJsonObject token = QJsonDocument::fromJson(QByteArray::fromBase64(continueToken.toLatin1(),
                                                                                 QByteArray::Base64UrlEncoding)).object();
        if (!token.contains(QStringLiteral("rv")) || !token.contains(QStringLiteral("start"))) {
            respondStatus(responder, Status::badRequest(QStringLiteral("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")));
            return;
        }
        const auto tokenRv = static_cast<quint64>(token.value(QStringLiteral("rv")).toInteger());
        if (tokenRv < m_store->oldestWatchableResourceVersion()) {
            respondStatus(responder, Status::make(410, QStringLiteral("Expired"),
                                                  QStringLiteral("The provided continue parameter is too old to display a consistent list "
                                                                 "result. You can start a new list without the continue parameter.")));
            return;
        }
        startAfter = token.value(QStringLiteral("start")).toString();
        offset = std::clamp<qint64>(token.value(QStringLiteral("offset")).toInteger(), 0, 1LL << 40);
        listRv = tokenRv;
    }

    const bool filtered = !labels->isEmpty() || !fields->isEmpty();
    const bool table = wantsTable(request);
    std::vector<QJsonObject> tableObjects;
    QByteArray items;
    qint64 emitted = 0;
    qint64 remaining = 0; // objects after the page, counted only without selectors
    bool more = false;
    QString lastKey;
    m_store->visit(type.storage, info.ns, startAfter, [&](const ObjectPtr &object) {
        if (limit > 0 && emitted >= limit) {
            more = true;
            // Across the whole storage the count is known; within a namespace, count the rest.
            if (filtered || info.ns.isEmpty()) {
                return false;
            }
            ++remaining;
            return true;
        }
        QJsonObject shaped;
        if (type.converts() || filtered) {
            shaped = type.converts() ? type.fromStorage(object->object) : object->object;
        }
        if (filtered) {
            const QJsonObject lbls = shaped.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("labels")).toObject();
            if (!labels->matches(lbls)
                || !fields->matches([&](const QString &f) { return ResourceTypes::fieldValue(type, shaped, f); })) {
                lastKey = ObjectStore::keyOf(object->ns, object->name);
                return true;
            }
        }
        if (table) {
            tableObjects.push_back(type.converts() ? shaped : object->object);
            lastKey = ObjectStore::keyOf(object->ns, object->name);
            ++emitted;
            return true;
        }
        if (emitted > 0) {
            items += ',';
        }
        if (type.converts()) {
            shaped.remove(QStringLiteral("kind"));
            shaped.remove(QStringLiteral("apiVersion"));
            items += QJsonDocument(shaped).toJson(QJsonDocument::Compact);
        } else {
            items += object->json(!type.builtin);
        }
        lastKey = ObjectStore::keyOf(object->ns, object->name);
        ++emitted;
        return true;
    });
    QJsonObject metadata{{QStringLiteral("resourceVersion"), QString::number(listRv)}};
    if (more) {
        metadata.insert(QStringLiteral("continue"),
                        QString::fromLatin1(QJsonDocument(listContinue(listRv, lastKey, offset + emitted)).toJson(QJsonDocument::Compact)
                                                .toBase64(QByteArray::Base64UrlEncoding)));
        if (!filtered) {
            if (info.ns.isEmpty()) {
                // An estimate, as the API allows: objects may have come or gone since the first page.
                remaining = std::max<qint64>(0, m_store->count(type.storage) - offset - emitted);
            }
            metadata.insert(QStringLiteral("remainingItemCount"), remaining);
        }
    }
    if (table) {
        respondTable(responder, type, tableObjects, request, metadata);
        return;
    }
    QByteArray body;
    body.reserve(items.size() + 256);
    body += "{\"kind\":\"" + type.kind.toUtf8() + "List\",\"apiVersion\":\"" + type.apiVersion().toUtf8() + "\",\"metadata\":"
        + QJsonDocument(metadata).toJson(QJsonDocument::Compact) + ",\"items\":[" + items + "]}\n";
    responder->respond(200, JsonType, body);
}

void ApiServer::watch(const RequestInfo &info, const Http::Request &request, Http::Responder *responder)
{
    const ResourceType &type = *info.type;
    auto labels = LabelSelector::parse(request.queryValue(QStringLiteral("labelSelector")));
    auto fields = FieldSelector::parse(request.queryValue(QStringLiteral("fieldSelector")));
    if (!labels || !fields) {
        respondStatus(responder, Status::badRequest(!labels ? labels.error().message : fields.error().message));
        return;
    }
    if (auto checked = fields->check([&](const QString &f) {
            return f == QLatin1String("metadata.name") || f == QLatin1String("metadata.namespace") || type.fieldLabels.contains(f);
        }); !checked) {
        respondStatus(responder, Status::badRequest(checked.error().message));
        return;
    }
    const QString rvText = request.queryValue(QStringLiteral("resourceVersion"));
    quint64 from = 0;
    if (!rvText.isEmpty() && rvText != QLatin1String("0")) {
        bool ok = false;
        from = rvText.toULongLong(&ok);
        if (!ok) {
            respondStatus(responder, Status::badRequest(QStringLiteral("invalid resource version \"%1\"").arg(rvText)));
            return;
        }
    }
    bool timeoutOk = true;
    const QString timeoutText = request.queryValue(QStringLiteral("timeoutSeconds"));
    qint64 timeoutSeconds = timeoutText.isEmpty() ? 0 : timeoutText.toLongLong(&timeoutOk);
    if (!timeoutOk || timeoutSeconds < 0) {
        respondStatus(responder, Status::badRequest(QStringLiteral("timeoutSeconds: Invalid value: \"%1\"").arg(timeoutText)));
        return;
    }
    if (timeoutSeconds == 0) {
        // The API server's default: random in [minRequestTimeout, 2 × minRequestTimeout), 1800 s.
        timeoutSeconds = 1800 + m_random.bounded(1800);
    }
    timeoutSeconds = std::min<qint64>(timeoutSeconds, 2147483); // fits a QTimer's milliseconds

    WatchStream::Options options;
    options.ns = info.ns;
    options.labels = *labels;
    options.fields = *fields;
    options.bookmarks = truthy(request.queryValue(QStringLiteral("allowWatchBookmarks")));
    options.timeoutMs = static_cast<int>(std::min<qint64>(timeoutSeconds * 1000, 2147483000));
    options.bookmarkIntervalMs = m_bookmarkIntervalMs;
    options.dropAfterMs = m_faults.dropWatchesAfterMs;

    if (from != 0 && from < m_store->oldestWatchableResourceVersion()) {
        // Past admission, errors on a watch are an ERROR event in a 200 stream, not an HTTP error.
        responder->beginStream(200, JsonType);
        const QJsonObject status = Status::make(410, QStringLiteral("Expired"),
                                                QStringLiteral("too old resource version: %1 (%2)")
                                                    .arg(from).arg(m_store->oldestWatchableResourceVersion()));
        responder->write("{\"type\":\"ERROR\",\"object\":" + QJsonDocument(status).toJson(QJsonDocument::Compact) + "}\n");
        responder->end();
        return;
    }
    auto *stream = new WatchStream(m_store, type, options, responder, this);
    m_watches.removeAll(nullptr);
    m_watches.append(stream);
    stream->start(from);
}

void ApiServer::get(const RequestInfo &info, const Http::Request &request, Http::Responder *responder)
{
    const ResourceType &type = *info.type;
    const ObjectPtr object = m_store->get(type.storage, info.ns, info.name);
    if (!object) {
        respondStatus(responder, Status::notFound(type.qualifiedName(), info.name, type.group, type.plural));
        return;
    }
    if (wantsTable(request)) {
        respondTable(responder, type, {type.converts() ? type.fromStorage(object->object) : object->object}, request,
                     QJsonObject{{QStringLiteral("resourceVersion"), QString::number(object->resourceVersion)}});
        return;
    }
    if (type.converts()) {
        respondJson(responder, 200, type.fromStorage(object->object));
        return;
    }
    responder->respond(200, JsonType, object->json(true) + '\n');
}

void ApiServer::create(const RequestInfo &info, const Http::Request &request, Http::Responder *responder)
{
    const ResourceType &type = *info.type;
    if (!info.name.isEmpty()) {
        respondStatus(responder, Status::methodNotAllowed());
        return;
    }
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(request.body, &parseError);
    if (!doc.isObject()) {
        respondStatus(responder, Status::badRequest(QStringLiteral("couldn't get version/kind; json parse error: %1")
                                                        .arg(parseError.error == QJsonParseError::NoError
                                                                 ? QStringLiteral("the body is not a JSON object")
                                                                 : parseError.errorString())));
        return;
    }
    QJsonObject object = doc.object();
    const QString apiVersion = object.value(QStringLiteral("apiVersion")).toString();
    const QString kind = object.value(QStringLiteral("kind")).toString();
    if (apiVersion.isEmpty() || kind.isEmpty()) {
        respondStatus(responder, Status::badRequest(QStringLiteral("Object 'Kind' is missing in '%1'")
                                                        .arg(QString::fromUtf8(request.body.left(200)))));
        return;
    }
    if (apiVersion != type.apiVersion() || kind != type.kind) {
        respondStatus(responder, Status::badRequest(QStringLiteral("the API version in the data (%1) does not match the expected API version (%2)")
                                                        .arg(apiVersion, type.apiVersion())));
        return;
    }
    QJsonObject metadata = object.value(QStringLiteral("metadata")).toObject();
    const QString bodyNs = metadata.value(QStringLiteral("namespace")).toString();
    if (type.namespaced) {
        if (!bodyNs.isEmpty() && bodyNs != info.ns) {
            respondStatus(responder, Status::badRequest(QStringLiteral("the namespace of the provided object does not match the namespace sent on the request")));
            return;
        }
        metadata.insert(QStringLiteral("namespace"), info.ns);
        const ResourceType *nsType = ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("namespaces"));
        if (!m_store->get(nsType->storage, QString(), info.ns)) {
            respondStatus(responder, Status::notFound(QStringLiteral("namespaces"), info.ns, QString(), QStringLiteral("namespaces")));
            return;
        }
    }
    QString name = metadata.value(QStringLiteral("name")).toString();
    const QString generateName = metadata.value(QStringLiteral("generateName")).toString();
    if (name.isEmpty() && !generateName.isEmpty()) {
        name = generateName + randomSuffix(m_random, 5);
        metadata.insert(QStringLiteral("name"), name);
    }
    QJsonArray causes;
    if (name.isEmpty()) {
        causes.append(Status::cause(QStringLiteral("FieldValueRequired"), QStringLiteral("metadata.name"),
                                    QStringLiteral("Required value: name or generateName is required")));
    } else {
        const QString problem = nameProblem(name, type.plural == QLatin1String("namespaces"));
        if (!problem.isEmpty()) {
            causes.append(Status::cause(QStringLiteral("FieldValueInvalid"), QStringLiteral("metadata.name"),
                                        QStringLiteral("Invalid value: \"%1\": %2").arg(name, problem)));
        }
    }
    if (!causes.isEmpty()) {
        respondStatus(responder, Status::invalid(type.kind, type.group, name, causes));
        return;
    }
    object.insert(QStringLiteral("metadata"), metadata);
    if (!type.builtin && type.subresources.contains(QStringLiteral("status"))) {
        object.remove(QStringLiteral("status")); // the status subresource owns it
    }
    Http::Headers headers;
    if (!admit(type, object, request, responder, headers)) {
        return;
    }
    if (type.converts()) {
        object = type.toStorage(object);
    }
    const ResourceType *storageType = type.converts() ? ResourceTypes::storageType(type.storage) : &type;
    auto created = m_store->create(*storageType, object);
    if (std::holds_alternative<StoreError>(created)) {
        // The store's only refusal of a checked create is a taken name.
        respondStatus(responder, Status::make(409, QStringLiteral("AlreadyExists"),
                                              QStringLiteral("%1 \"%2\" already exists").arg(type.qualifiedName(), name),
                                              Status::details(name, type.group, type.plural)));
        return;
    }
    const ObjectPtr stored = std::get<ObjectPtr>(created);
    if (type.converts()) {
        respondJson(responder, 201, type.fromStorage(stored->object));
        return;
    }
    responder->respond(201, JsonType, stored->json(true) + '\n', headers);
}

void ApiServer::update(const RequestInfo &info, const Http::Request &request, Http::Responder *responder)
{
    const ResourceType &type = *info.type;
    const QJsonDocument doc = QJsonDocument::fromJson(request.body);
    if (!doc.isObject()) {
        respondStatus(responder, Status::badRequest(QStringLiteral("couldn't get version/kind; json parse error: the body is not a JSON object")));
        return;
    }
    QJsonObject object = doc.object();
    QJsonObject metadata = object.value(QStringLiteral("metadata")).toObject();
    if (metadata.value(QStringLiteral("name")).toString() != info.name) {
        respondStatus(responder, Status::badRequest(QStringLiteral("the name of the object (%1) does not match the name on the URL (%2)")
                                                        .arg(metadata.value(QStringLiteral("name")).toString(), info.name)));
        return;
    }
    const ObjectPtr current = m_store->get(type.storage, info.ns, info.name);
    if (!current) {
        respondStatus(responder, Status::notFound(type.qualifiedName(), info.name, type.group, type.plural));
        return;
    }
    if (info.subresource == QLatin1String("status")) {
        // The status subresource changes status only; the main resource ignores status changes of CRDs.
        QJsonObject merged = current->object;
        merged.insert(QStringLiteral("status"), object.value(QStringLiteral("status")));
        object = merged;
    } else if (!type.builtin) {
        object.insert(QStringLiteral("status"), current->object.value(QStringLiteral("status")));
    }
    metadata.insert(QStringLiteral("namespace"), info.ns);
    object.insert(QStringLiteral("metadata"), metadata);
    std::optional<quint64> expected;
    if (const QString rv = metadata.value(QStringLiteral("resourceVersion")).toString(); !rv.isEmpty()) {
        expected = rv.toULongLong();
    }
    Http::Headers headers;
    if (!admit(type, object, request, responder, headers)) {
        return;
    }
    const ResourceType *storageType = type.converts() ? ResourceTypes::storageType(type.storage) : &type;
    auto result = m_store->update(*storageType, type.converts() ? type.toStorage(object) : object, expected);
    if (auto *error = std::get_if<StoreError>(&result)) {
        respondStatus(responder, error->kind == StoreError::Kind::Conflict
                                     ? Status::make(409, QStringLiteral("Conflict"), error->message,
                                                    Status::details(info.name, type.group, type.plural))
                                     : Status::notFound(type.qualifiedName(), info.name, type.group, type.plural));
        return;
    }
    responder->respond(200, JsonType, std::get<ObjectPtr>(result)->json(true) + '\n', headers);
}

void ApiServer::patch(const RequestInfo &info, const Http::Request &request, Http::Responder *responder)
{
    const ResourceType &type = *info.type;
    const QByteArray contentType = request.header("content-type").split(';').first().trimmed();
    if (contentType != "application/merge-patch+json" && contentType != "application/strategic-merge-patch+json") {
        respondStatus(responder, Status::make(415, QStringLiteral("UnsupportedMediaType"),
                                              QStringLiteral("the body of the request was in an unknown format - accepted media types include: "
                                                             "application/merge-patch+json, application/strategic-merge-patch+json")));
        return;
    }
    const QJsonDocument doc = QJsonDocument::fromJson(request.body);
    if (!doc.isObject()) {
        respondStatus(responder, Status::badRequest(QStringLiteral("error decoding patch: the body is not a JSON object")));
        return;
    }
    const ObjectPtr current = m_store->get(type.storage, info.ns, info.name);
    if (!current) {
        respondStatus(responder, Status::notFound(type.qualifiedName(), info.name, type.group, type.plural));
        return;
    }
    const QJsonObject currentShape = type.converts() ? type.fromStorage(current->object) : current->object;
    QJsonObject patched = mergePatch(currentShape, doc.object()).toObject();
    // The URL names the object: a patch cannot move it to another name or namespace.
    QJsonObject patchedMeta = patched.value(QStringLiteral("metadata")).toObject();
    patchedMeta.insert(QStringLiteral("name"), info.name);
    if (type.namespaced) patchedMeta.insert(QStringLiteral("namespace"), info.ns);
    patched.insert(QStringLiteral("metadata"), patchedMeta);
    patched.insert(QStringLiteral("apiVersion"), type.apiVersion());
    patched.insert(QStringLiteral("kind"), type.kind);
    if (info.subresource == QLatin1String("status")) {
        QJsonObject merged = currentShape;
        merged.insert(QStringLiteral("status"), patched.value(QStringLiteral("status")));
        patched = merged;
    } else if (!type.builtin) {
        patched.insert(QStringLiteral("status"), current->object.value(QStringLiteral("status")));
    }
    Http::Headers headers;
    if (!admit(type, patched, request, responder, headers)) {
        return;
    }
    const ResourceType *storageType = type.converts() ? ResourceTypes::storageType(type.storage) : &type;
    auto result = m_store->update(*storageType, type.converts() ? type.toStorage(patched) : patched);
    if (std::holds_alternative<StoreError>(result)) {
        respondStatus(responder, Status::notFound(type.qualifiedName(), info.name, type.group, type.plural));
        return;
    }
    responder->respond(200, JsonType, std::get<ObjectPtr>(result)->json(true) + '\n', headers);
}

void ApiServer::remove(const RequestInfo &info, const Http::Request &request, Http::Responder *responder)
{
    const ResourceType &type = *info.type;
    QString policy = request.queryValue(QStringLiteral("propagationPolicy"));
    if (!request.body.isEmpty()) {
        const QJsonObject options = QJsonDocument::fromJson(request.body).object();
        policy = options.value(QStringLiteral("propagationPolicy")).toString(policy);
        if (options.value(QStringLiteral("orphanDependents")).toBool()) {
            policy = QStringLiteral("Orphan");
        }
    }
    if (!policy.isEmpty() && policy != QLatin1String("Orphan") && policy != QLatin1String("Background")
        && policy != QLatin1String("Foreground")) {
        respondStatus(responder, Status::invalid(QStringLiteral("DeleteOptions"), QString(), QString(),
                                                 {Status::cause(QStringLiteral("FieldValueNotSupported"), QStringLiteral("propagationPolicy"),
                                                                QStringLiteral("Unsupported value: \"%1\": supported values: \"Foreground\", \"Background\", \"Orphan\"").arg(policy))}));
        return;
    }
    const ResourceType *storageType = type.converts() ? ResourceTypes::storageType(type.storage) : &type;
    auto result = m_store->remove(*storageType, info.ns, info.name, policy == QLatin1String("Orphan"));
    if (std::holds_alternative<StoreError>(result)) {
        respondStatus(responder, Status::notFound(type.qualifiedName(), info.name, type.group, type.plural));
        return;
    }
    const ObjectPtr deleted = std::get<ObjectPtr>(result);
    if (type.converts()) {
        respondJson(responder, 200, type.fromStorage(deleted->object));
        return;
    }
    responder->respond(200, JsonType, deleted->json(true) + '\n');
}

bool ApiServer::admit(const ResourceType &type, QJsonObject &object, const Http::Request &request, Http::Responder *responder,
                      Http::Headers &headers)
{
    const auto admission = m_admission.constFind(type.storage);
    if (admission == m_admission.cend()) {
        return true;
    }
    QString validation = request.queryValue(QStringLiteral("fieldValidation"));
    if (validation.isEmpty()) {
        validation = QStringLiteral("Warn");
    }
    if (validation != QLatin1String("Strict") && validation != QLatin1String("Warn") && validation != QLatin1String("Ignore")) {
        respondStatus(responder, Status::badRequest(QStringLiteral("fieldValidation must be one of \"Ignore\", \"Warn\", or \"Strict\", not \"%1\"").arg(validation)));
        return false;
    }
    QStringList warnings;
    if (const auto status = (*admission)(type, object, validation, warnings)) {
        respondStatus(responder, *status);
        return false;
    }
    for (const QString &w : warnings) {
        headers.append({"Warning", "299 - \"" + w.toUtf8().replace('"', "\\\"") + '"'});
    }
    return true;
}

void ApiServer::accessReview(const RequestInfo &info, const Http::Request &request, Http::Responder *responder, const User &user)
{
    Q_UNUSED(info)
    QJsonObject spec;
    if (request.header("content-type").startsWith("application/vnd.kubernetes.protobuf")) {
        auto decoded = Protobuf::decodeSelfSubjectAccessReviewSpec(request.body);
        if (!decoded) {
            respondStatus(responder, Status::badRequest(decoded.error().message));
            return;
        }
        spec = *decoded;
    } else {
        spec = QJsonDocument::fromJson(request.body).object().value(QStringLiteral("spec")).toObject();
    }
    const QJsonObject resource = spec.value(QStringLiteral("resourceAttributes")).toObject();
    const QJsonObject nonResource = spec.value(QStringLiteral("nonResourceAttributes")).toObject();
    Attributes a;
    if (!resource.isEmpty()) {
        a.verb = resource.value(QStringLiteral("verb")).toString();
        a.group = resource.value(QStringLiteral("group")).toString();
        a.resource = resource.value(QStringLiteral("resource")).toString();
        const QString sub = resource.value(QStringLiteral("subresource")).toString();
        if (!sub.isEmpty()) {
            a.resource += u'/' + sub;
        }
        a.ns = resource.value(QStringLiteral("namespace")).toString();
        a.name = resource.value(QStringLiteral("name")).toString();
    } else if (!nonResource.isEmpty()) {
        a.isResource = false;
        a.verb = nonResource.value(QStringLiteral("verb")).toString();
        a.path = nonResource.value(QStringLiteral("path")).toString();
    } else {
        respondStatus(responder, Status::invalid(QStringLiteral("SelfSubjectAccessReview"), QStringLiteral("authorization.k8s.io"), QString(),
                                                 {Status::cause(QStringLiteral("FieldValueRequired"), QStringLiteral("spec.resourceAttributes"),
                                                                QStringLiteral("Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified"))}));
        return;
    }
    const bool allowed = m_authorizer->allowed(user, a);
    QJsonObject status{{QStringLiteral("allowed"), allowed}};
    if (allowed) {
        status.insert(QStringLiteral("reason"), QStringLiteral("allowed by the sandbox's RBAC rules for user \"%1\"").arg(user.name));
    }
    respondJson(responder, 201, QJsonObject{{QStringLiteral("kind"), QStringLiteral("SelfSubjectAccessReview")},
                                            {QStringLiteral("apiVersion"), QStringLiteral("authorization.k8s.io/v1")},
                                            {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("creationTimestamp"), QJsonValue::Null}}},
                                            {QStringLiteral("spec"), spec},
                                            {QStringLiteral("status"), status}});
}

void ApiServer::rulesReview(const Http::Request &request, Http::Responder *responder, const User &user)
{
    QString ns;
    if (request.header("content-type").startsWith("application/vnd.kubernetes.protobuf")) {
        auto decoded = Protobuf::decodeSelfSubjectRulesReviewNamespace(request.body);
        if (!decoded) {
            respondStatus(responder, Status::badRequest(decoded.error().message));
            return;
        }
        ns = *decoded;
    } else {
        ns = QJsonDocument::fromJson(request.body).object().value(QStringLiteral("spec")).toObject()
                 .value(QStringLiteral("namespace")).toString();
    }
    QJsonArray resourceRules;
    QJsonArray nonResourceRules;
    for (const RbacRule &r : m_authorizer->rulesIn(user, ns)) {
        if (!r.nonResourceURLs.isEmpty()) {
            nonResourceRules.append(QJsonObject{{QStringLiteral("verbs"), QJsonArray::fromStringList(r.verbs)},
                                                {QStringLiteral("nonResourceURLs"), QJsonArray::fromStringList(r.nonResourceURLs)}});
        } else {
            QJsonObject rule{{QStringLiteral("verbs"), QJsonArray::fromStringList(r.verbs)},
                             {QStringLiteral("apiGroups"), QJsonArray::fromStringList(r.apiGroups)},
                             {QStringLiteral("resources"), QJsonArray::fromStringList(r.resources)}};
            if (!r.resourceNames.isEmpty()) {
                rule.insert(QStringLiteral("resourceNames"), QJsonArray::fromStringList(r.resourceNames));
            }
            resourceRules.append(rule);
        }
    }
    respondJson(responder, 201, QJsonObject{{QStringLiteral("kind"), QStringLiteral("SelfSubjectRulesReview")},
                                            {QStringLiteral("apiVersion"), QStringLiteral("authorization.k8s.io/v1")},
                                            {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("creationTimestamp"), QJsonValue::Null}}},
                                            {QStringLiteral("spec"), QJsonObject{{QStringLiteral("namespace"), ns}}},
                                            {QStringLiteral("status"), QJsonObject{{QStringLiteral("resourceRules"), resourceRules},
                                                                                   {QStringLiteral("nonResourceRules"), nonResourceRules},
                                                                                   {QStringLiteral("incomplete"), false}}}});
}

} // namespace Starforge::Sandbox
