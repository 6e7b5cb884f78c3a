// The API server's front: authentication, the injected faults, routing a request to its handler
// after RBAC, and the small handlers (get, the /sandbox/ control API). Discovery, the collection
// reads, the writes and the access reviews have files of their own (discovery.cpp,
// listwatch.cpp, writes.cpp, reviews.cpp).

#include "sandbox/api/apiserver.h"

#include "sandbox/api/status.h"
#include "sandbox/api/tables.h"
#include "sandbox/api/watchstream.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QTimer>

Q_LOGGING_CATEGORY(lcApi, "starforge.sandbox.api")

namespace Starforge::Sandbox {

namespace {

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

} // namespace

const QByteArray ApiServer::JsonContentType = QByteArrayLiteral("application/json");

bool ApiServer::wantsTable(const Http::Request &request)
{
    const QByteArray accept = request.header("accept");
    return accept.contains("as=Table") && accept.contains("g=meta.k8s.io");
}

bool ApiServer::isTrue(const QString &queryValue)
{
    return queryValue == QLatin1String("1") || queryValue == QLatin1String("true");
}

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
    Q_EMIT faultsChanged(m_faults);
}

QList<RecordedRequest> ApiServer::requestRecord() const
{
    return QList<RecordedRequest>(m_record.cbegin(), m_record.cend());
}

void ApiServer::clearRequestRecord()
{
    m_record.clear();
}

void ApiServer::record(const Http::Request &request, Http::Responder *responder)
{
    const qsizetype question = request.target.indexOf('?');
    m_record.push_back(RecordedRequest{++m_recorded, request.method, request.path,
                                       question < 0 ? QString() : QString::fromLatin1(request.target.mid(question + 1)), 0});
    if (m_record.size() > static_cast<size_t>(RequestRecordLimit)) {
        m_record.pop_front();
    }
    // The answer may come much later (a delay, a watch): find the entry by its number then, if
    // the bound has not dropped it meanwhile.
    const quint64 sequence = m_recorded;
    connect(responder, &Http::Responder::answered, this, [this, sequence](int code) {
        if (m_record.empty() || sequence < m_record.front().sequence) {
            return;
        }
        m_record[static_cast<size_t>(sequence - m_record.front().sequence)].code = code;
    });
    Q_EMIT requestRecorded(m_record.back());
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
    responder->respond(status.value(QStringLiteral("code")).toInt(500), JsonContentType, Status::json(status), extra);
}

void ApiServer::respondJson(Http::Responder *responder, int code, const QJsonObject &object)
{
    responder->respond(code, JsonContentType, QJsonDocument(object).toJson(QJsonDocument::Compact) + '\n');
}

void ApiServer::handle(const Http::Request &request, Http::Responder *responder)
{
    if (request.path.startsWith(QLatin1String("/api/")) || request.path.startsWith(QLatin1String("/apis/"))) {
        record(request, responder);
    }
    const std::optional<User> user = m_authorizer->authenticate(request.header("authorization"), request.clientCertificate);
    const bool publicInfo = request.path == QLatin1String("/version") || request.path == QLatin1String("/healthz")
        || request.path == QLatin1String("/livez") || request.path == QLatin1String("/readyz");
    if (!user || (user->isAnonymous() && !publicInfo)) {
        // Credentials that do not hold (a wrong or expired token, a certificate from another CA),
        // or none where anonymous access is not allowed.
        respondStatus(responder, Status::unauthorized());
        return;
    }
    if (user->isAnonymous()) {
        serveNonResource(request, responder, *user);
        return;
    }
    if (injectFault(request, responder, *user)) {
        return;
    }
    serve(request, responder, *user);
}

bool ApiServer::injectFault(const Http::Request &request, Http::Responder *responder, const User &user)
{
    // Faults hit paths under /api/ and /apis/ (resources, and group-version discovery with
    // them); /version, /api, /apis and the /sandbox/ control API stay reliable, so a test can
    // always switch the faults off again.
    const bool isResource = request.path.startsWith(QLatin1String("/api/")) || request.path.startsWith(QLatin1String("/apis/"));
    if (!isResource) {
        return false;
    }
    // Counted before the roll, so a test gets exactly the failures it asked for.
    if (request.method == "POST" && m_faults.next500Creates > 0) {
        --m_faults.next500Creates;
        Q_EMIT faultsChanged(m_faults);
        respondStatus(responder, Status::internalError(QStringLiteral("injected fault: the sandbox answers 500 to this create (%1 more to come)")
                                                           .arg(m_faults.next500Creates)));
        return true;
    }
    // One roll decides between 429, 500 and an answer, so the two rates add up as fractions.
    const double roll = m_random.generateDouble();
    if (roll < m_faults.rate429) {
        respondStatus(responder, Status::tooManyRequests(1), {{"Retry-After", "1"}});
        return true;
    }
    if (roll < m_faults.rate429 + m_faults.rate500) {
        respondStatus(responder, Status::internalError(QStringLiteral("injected fault: the sandbox answers 500 at rate %1")
                                                           .arg(m_faults.rate500)));
        return true;
    }
    if (m_faults.delayMs > 0) {
        QPointer<Http::Responder> guard(responder);
        const Http::Request copy = request;
        QTimer::singleShot(m_faults.delayMs, this, [this, guard, copy, user] {
            if (guard && !guard->isFinished()) {
                serve(copy, guard, user);
            }
        });
        return true;
    }
    return false;
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
    if (type.storage == QLatin1String("selfsubjectreviews.authentication.k8s.io")) {
        selfReview(responder, user);
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
    info.verb = verbFor(request.method, !info.name.isEmpty(), isTrue(request.queryValue(QStringLiteral("watch"))));
    return info;
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
            Q_EMIT faultsChanged(m_faults);
            qCInfo(lcApi) << "faults now" << m_faults.toJson();
            respondJson(responder, 200, m_faults.toJson());
            return;
        }
    }
    if (request.method == "GET" && request.path == QLatin1String("/sandbox/v1/requests")) {
        // The request record, for tests outside the process (kubectl, the e2e script).
        QJsonArray items;
        for (const RecordedRequest &r : m_record) {
            items.append(QJsonObject{{QStringLiteral("sequence"), QString::number(r.sequence)},
                                     {QStringLiteral("method"), QString::fromLatin1(r.method)},
                                     {QStringLiteral("path"), r.path},
                                     {QStringLiteral("query"), r.query},
                                     {QStringLiteral("code"), r.code}});
        }
        respondJson(responder, 200, QJsonObject{{QStringLiteral("items"), items},
                                                {QStringLiteral("limit"), RequestRecordLimit},
                                                {QStringLiteral("openWatches"), openWatchCount()}});
        return;
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
    responder->respond(200, JsonContentType, object->json(true) + '\n');
}

} // namespace Starforge::Sandbox
