// The API server's collection reads: list (limit and continue, selectors, remainingItemCount,
// resourceVersionMatch=Exact, server-side Tables) and watch (resourceVersion, timeoutSeconds,
// bookmarks, 410 as an ERROR event). Each handler reads its query one named step at a time; a
// step that refuses the request returns the Status to answer with.

#include "sandbox/api/apiserver.h"

#include "sandbox/api/selectors.h"
#include "sandbox/api/status.h"
#include "sandbox/api/watchstream.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

#include <QJsonDocument>

#include <algorithm>

namespace Starforge::Sandbox {

namespace {

// The Status a step answers the request with, or nothing when the step passed.
using Refusal = std::optional<QJsonObject>;

struct Selectors
{
    LabelSelector labels;
    FieldSelector fields;

    bool filters() const { return !labels.isEmpty() || !fields.isEmpty(); }
};

// labelSelector and fieldSelector, with the fields checked against what the type can select on.
Refusal readSelectors(const ResourceType &type, const Http::Request &request, Selectors &selectors)
{
    auto labels = LabelSelector::parse(request.queryValue(QStringLiteral("labelSelector")));
    if (!labels) {
        return Status::badRequest(labels.error().message);
    }
    auto fields = FieldSelector::parse(request.queryValue(QStringLiteral("fieldSelector")));
    if (!fields) {
        return Status::badRequest(fields.error().message);
    }
    if (auto checked = fields->check([&](const QString &f) {
            return f == QLatin1String("metadata.name") || f == QLatin1String("metadata.namespace") || type.fieldLabels.contains(f);
        }); !checked) {
        return Status::badRequest(checked.error().message);
    }
    selectors = {*labels, *fields};
    return std::nullopt;
}

Refusal readLimit(const Http::Request &request, qint64 &limit)
{
    bool ok = true;
    const QString text = request.queryValue(QStringLiteral("limit"));
    limit = text.isEmpty() ? 0 : text.toLongLong(&ok);
    if (!ok || limit < 0) {
        return Status::badRequest(QStringLiteral("limit: Invalid value: \"%1\": must be a non-negative integer").arg(text));
    }
    return std::nullopt;
}

// resourceVersionMatch=Exact: the sandbox keeps no old snapshots, so only the current
// resourceVersion can be read exactly.
Refusal checkExactResourceVersion(const ObjectStore &store, const Http::Request &request)
{
    if (request.queryValue(QStringLiteral("resourceVersionMatch")) != QLatin1String("Exact")) {
        return std::nullopt;
    }
    bool ok = false;
    const quint64 rv = request.queryValue(QStringLiteral("resourceVersion")).toULongLong(&ok);
    if (!ok || rv != store.currentResourceVersion()) {
        return Status::make(410, QStringLiteral("Expired"), QStringLiteral("The resourceVersion for the provided list is too old."));
    }
    return std::nullopt;
}

// Where a page starts. A continue token carries the first page's resourceVersion (every page of
// one list reports it), the key the previous page ended on, and how many objects came before,
// for remainingItemCount.
struct PageStart
{
    QString afterKey;
    qint64 offset = 0;
    quint64 resourceVersion = 0;
};

QByteArray encodeContinue(const PageStart &next)
{
    const QJsonObject token{{QStringLiteral("v"), QStringLiteral("meta.k8s.io/v1")},
                            {QStringLiteral("rv"), static_cast<qint64>(next.resourceVersion)},
                            {QStringLiteral("start"), next.afterKey},
                            {QStringLiteral("offset"), next.offset}};
    return QJsonDocument(token).toJson(QJsonDocument::Compact).toBase64(QByteArray::Base64UrlEncoding);
}

Refusal readContinue(const ObjectStore &store, const Http::Request &request, PageStart &start)
{
    start = {{}, 0, store.currentResourceVersion()};
    const QString text = request.queryValue(QStringLiteral("continue"));
    if (text.isEmpty()) {
        return std::nullopt;
    }
    const QJsonObject token = QJsonDocument::fromJson(QByteArray::fromBase64(text.toLatin1(), QByteArray::Base64UrlEncoding)).object();
    if (!token.contains(QStringLiteral("rv")) || !token.contains(QStringLiteral("start"))) {
        return Status::badRequest(QStringLiteral("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"));
    }
    const auto tokenRv = static_cast<quint64>(token.value(QStringLiteral("rv")).toInteger());
    if (tokenRv < store.oldestWatchableResourceVersion()) {
        return Status::make(410, QStringLiteral("Expired"),
                            QStringLiteral("The provided continue parameter is too old to display a consistent list result. You can "
                                           "start a new list without the continue parameter."));
    }
    start.afterKey = token.value(QStringLiteral("start")).toString();
    start.offset = std::clamp<qint64>(token.value(QStringLiteral("offset")).toInteger(), 0, 1LL << 40);
    start.resourceVersion = tokenRv;
    return std::nullopt;
}

// One page of a list: the items as JSON already joined with commas (or the objects for a Table),
// and what the list metadata needs to say whether more follow.
struct Page
{
    QByteArray items;
    std::vector<QJsonObject> tableObjects;
    qint64 emitted = 0;
    qint64 remaining = 0;      // objects after the page, counted only without selectors
    bool more = false;
    QString lastKey;
};

Page collectPage(const ObjectStore &store, const ResourceType &type, const QString &ns, const Selectors &selectors, qint64 limit,
                 const QString &afterKey, bool table)
{
    Page page;
    const bool filtered = selectors.filters();
    store.visit(type.storage, ns, afterKey, [&](const ObjectPtr &object) {
        if (limit > 0 && page.emitted >= limit) {
            page.more = true;
            // Across the whole storage the count is known; within a namespace, count the rest.
            if (filtered || ns.isEmpty()) {
                return false;
            }
            ++page.remaining;
            return true;
        }
        QJsonObject shaped;
        if (type.converts() || filtered) {
            shaped = type.converts() ? type.fromStorage(object->object) : object->object;
        }
        page.lastKey = ObjectStore::keyOf(object->ns, object->name);
        if (filtered) {
            const QJsonObject labels = shaped.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("labels")).toObject();
            if (!selectors.labels.matches(labels)
                || !selectors.fields.matches([&](const QString &f) { return ResourceTypes::fieldValue(type, shaped, f); })) {
                return true;
            }
        }
        if (table) {
            page.tableObjects.push_back(type.converts() ? shaped : object->object);
        } else {
            if (page.emitted > 0) {
                page.items += ',';
            }
            if (type.converts()) {
                shaped.remove(QStringLiteral("kind"));
                shaped.remove(QStringLiteral("apiVersion"));
                page.items += QJsonDocument(shaped).toJson(QJsonDocument::Compact);
            } else {
                page.items += object->json(!type.builtin);
            }
        }
        ++page.emitted;
        return true;
    });
    return page;
}

QJsonObject listMetadata(const ObjectStore &store, const ResourceType &type, const QString &ns, bool filtered,
                         const PageStart &start, const Page &page)
{
    QJsonObject metadata{{QStringLiteral("resourceVersion"), QString::number(start.resourceVersion)}};
    if (!page.more) {
        return metadata;
    }
    const PageStart next{page.lastKey, start.offset + page.emitted, start.resourceVersion};
    metadata.insert(QStringLiteral("continue"), QString::fromLatin1(encodeContinue(next)));
    if (!filtered) {
        // Across the whole storage, an estimate, as the API allows: objects may have come or gone
        // since the first page.
        const qint64 remaining = ns.isEmpty() ? std::max<qint64>(0, store.count(type.storage) - next.offset) : page.remaining;
        metadata.insert(QStringLiteral("remainingItemCount"), remaining);
    }
    return metadata;
}

// The <Kind>List document, written around the items already encoded rather than through a
// QJsonDocument of the whole list, which would parse and re-encode every object.
QByteArray listBody(const ResourceType &type, const QJsonObject &metadata, const QByteArray &items)
{
    QByteArray body;
    body.reserve(items.size() + 256);
    body += "{\"kind\":\"" + type.kind.toUtf8() + "List\",\"apiVersion\":\"" + type.apiVersion().toUtf8() + "\",\"metadata\":"
        + QJsonDocument(metadata).toJson(QJsonDocument::Compact) + ",\"items\":[" + items + "]}\n";
    return body;
}

// resourceVersion to watch from; 0 (or none) means the current state first, as ADDED events.
Refusal readWatchStart(const Http::Request &request, quint64 &from)
{
    const QString text = request.queryValue(QStringLiteral("resourceVersion"));
    from = 0;
    if (text.isEmpty() || text == QLatin1String("0")) {
        return std::nullopt;
    }
    bool ok = false;
    from = text.toULongLong(&ok);
    if (!ok) {
        return Status::badRequest(QStringLiteral("invalid resource version \"%1\"").arg(text));
    }
    return std::nullopt;
}

Refusal readWatchTimeout(const Http::Request &request, QRandomGenerator &random, qint64 &timeoutSeconds)
{
    bool ok = true;
    const QString text = request.queryValue(QStringLiteral("timeoutSeconds"));
    timeoutSeconds = text.isEmpty() ? 0 : text.toLongLong(&ok);
    if (!ok || timeoutSeconds < 0) {
        return Status::badRequest(QStringLiteral("timeoutSeconds: Invalid value: \"%1\"").arg(text));
    }
    if (timeoutSeconds == 0) {
        // The API server's default: random in [minRequestTimeout, 2 × minRequestTimeout), 1800 s.
        timeoutSeconds = 1800 + random.bounded(1800);
    }
    timeoutSeconds = std::min<qint64>(timeoutSeconds, 2147483); // fits a QTimer's milliseconds
    return std::nullopt;
}

// Past admission, errors on a watch are an ERROR event in a 200 stream, not an HTTP error.
void answerExpiredWatch(Http::Responder *responder, quint64 from, quint64 oldest)
{
    responder->beginStream(200, ApiServer::JsonContentType);
    const QJsonObject status = Status::make(410, QStringLiteral("Expired"),
                                            QStringLiteral("too old resource version: %1 (%2)").arg(from).arg(oldest));
    responder->write("{\"type\":\"ERROR\",\"object\":" + QJsonDocument(status).toJson(QJsonDocument::Compact) + "}\n");
    responder->end();
}

} // namespace

void ApiServer::list(const RequestInfo &info, const Http::Request &request, Http::Responder *responder)
{
    const ResourceType &type = *info.type;
    Selectors selectors;
    qint64 limit = 0;
    PageStart start;
    Refusal refusal = readSelectors(type, request, selectors);
    if (!refusal) refusal = readLimit(request, limit);
    if (!refusal) refusal = checkExactResourceVersion(*m_store, request);
    if (!refusal) refusal = readContinue(*m_store, request, start);
    if (refusal) {
        respondStatus(responder, *refusal);
        return;
    }
    const bool table = wantsTable(request);
    const Page page = collectPage(*m_store, type, info.ns, selectors, limit, start.afterKey, table);
    const QJsonObject metadata = listMetadata(*m_store, type, info.ns, selectors.filters(), start, page);
    if (table) {
        respondTable(responder, type, page.tableObjects, request, metadata);
        return;
    }
    responder->respond(200, JsonContentType, listBody(type, metadata, page.items));
}

void ApiServer::watch(const RequestInfo &info, const Http::Request &request, Http::Responder *responder)
{
    const ResourceType &type = *info.type;
    Selectors selectors;
    quint64 from = 0;
    qint64 timeoutSeconds = 0;
    Refusal refusal = readSelectors(type, request, selectors);
    if (!refusal) refusal = readWatchStart(request, from);
    if (!refusal) refusal = readWatchTimeout(request, m_random, timeoutSeconds);
    if (refusal) {
        respondStatus(responder, *refusal);
        return;
    }
    if (from != 0 && from < m_store->oldestWatchableResourceVersion()) {
        answerExpiredWatch(responder, from, m_store->oldestWatchableResourceVersion());
        return;
    }
    WatchStream::Options options;
    options.ns = info.ns;
    options.labels = selectors.labels;
    options.fields = selectors.fields;
    options.bookmarks = isTrue(request.queryValue(QStringLiteral("allowWatchBookmarks")));
    options.timeoutMs = static_cast<int>(std::min<qint64>(timeoutSeconds * 1000, 2147483000));
    options.bookmarkIntervalMs = m_bookmarkIntervalMs;
    options.dropAfterMs = m_faults.dropWatchesAfterMs;
    auto *stream = new WatchStream(m_store, type, options, responder, this);
    m_watches.removeAll(nullptr);
    m_watches.append(stream);
    stream->start(from);
}

} // namespace Starforge::Sandbox
