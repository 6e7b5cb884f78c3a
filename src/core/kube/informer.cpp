#include "core/kube/informer.h"

#include "core/kube/jsontext.h"
#include "core/kube/kubeclient.h"
#include "core/kube/watchdecoder.h"

#include <QCoreApplication>
#include <QFuture>
#include <QFutureWatcher>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QMetaMethod>
#include <QNetworkReply>
#include <QRandomGenerator>
#include <QtConcurrent/QtConcurrentRun>

namespace Starforge::Kube {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(Informer)
};

} // namespace

Q_LOGGING_CATEGORY(lcInformer, "starforge.core.kube.informer", QtWarningMsg)

namespace {

// Inactivity on a watch for this long means the connection is dead: a server that honours
// allowWatchBookmarks sends one about every minute.
constexpr int WatchIdleTimeoutMs = 180 * 1000;
// A clean end this soon with nothing received is a server refusing to hold a watch open.
constexpr qint64 ShortWatchMs = 1000;

QString resourceVersionOf(const QJsonObject &object)
{
    return object.value(QLatin1String("metadata")).toObject().value(QLatin1String("resourceVersion")).toString();
}

QString uidOf(const QJsonObject &object)
{
    return object.value(QLatin1String("metadata")).toObject().value(QLatin1String("uid")).toString();
}

// managedFields is often larger than the rest of the object and nothing in the app reads it.
QJsonObject trimmed(QJsonObject object)
{
    QJsonObject metadata = object.value(QLatin1String("metadata")).toObject();
    if (metadata.contains(QLatin1String("managedFields"))) {
        metadata.remove(QLatin1String("managedFields"));
        object.insert(QLatin1String("metadata"), metadata);
    }
    return object;
}

struct ListHead
{
    QString resourceVersion;
    QString continueToken;
};

// The list's metadata from the head of its body, without parsing the items: the API server
// writes kind, apiVersion and metadata before items. Anything else: nullopt, and the caller
// waits for the full parse.
std::optional<ListHead> peekListHead(const QByteArray &body)
{
    const qsizetype items = body.indexOf("\"items\":");
    if (items < 0 || items > 64 * 1024) {
        return std::nullopt;
    }
    QByteArray head = body.left(items).trimmed();
    if (!head.endsWith(',')) {
        return std::nullopt;
    }
    head.chop(1);
    head += '}';
    const QJsonObject object = QJsonDocument::fromJson(head).object();
    const QJsonValue metadata = object.value(QLatin1String("metadata"));
    if (!metadata.isObject()) {
        return std::nullopt;
    }
    return ListHead{metadata.toObject().value(QLatin1String("resourceVersion")).toString(),
                    metadata.toObject().value(QLatin1String("continue")).toString()};
}

namespace od = JsonText::od;

// metadata.resourceVersion and metadata.uid of a cached object, read back from its text.
struct Ids
{
    QByteArray resourceVersion;
    QByteArray uid;
};

Ids idsOf(QByteArrayView json)
{
    Ids ids;
    JsonText::ThreadText text(json);
    od::object root;
    if (!text.object(root)) {
        return ids;
    }
    for (auto entry : root) {
        od::field field;
        std::string_view key;
        if (std::move(entry).get(field) != simdjson::SUCCESS || field.unescaped_key().get(key) != simdjson::SUCCESS) {
            break;
        }
        od::object metadata;
        if (key != "metadata" || field.value().get_object().get(metadata) != simdjson::SUCCESS) {
            continue;
        }
        for (auto m : metadata) {
            od::field f;
            std::string_view name;
            if (std::move(m).get(f) != simdjson::SUCCESS || f.unescaped_key().get(name) != simdjson::SUCCESS) {
                break;
            }
            if (name == "resourceVersion") {
                const std::string_view v = JsonText::stringOf(f.value());
                ids.resourceVersion = QByteArray(v.data(), static_cast<qsizetype>(v.size()));
            } else if (name == "uid") {
                const std::string_view v = JsonText::stringOf(f.value());
                ids.uid = QByteArray(v.data(), static_cast<qsizetype>(v.size()));
            }
        }
        break;
    }
    return ids;
}

// The end of a value in the text, whatever its type (simdjson 3.0 has raw_json() for arrays
// and objects only).
const char *endOf(od::value &value)
{
    od::json_type type{};
    if (value.type().get(type) != simdjson::SUCCESS) {
        return nullptr;
    }
    std::string_view raw;
    simdjson::error_code error = simdjson::SUCCESS;
    if (type == od::json_type::array) {
        od::array array;
        error = value.get_array().get(array);
        if (!error) error = array.raw_json().get(raw);
    } else if (type == od::json_type::object) {
        od::object object;
        error = value.get_object().get(object);
        if (!error) error = object.raw_json().get(raw);
    } else {
        raw = value.raw_json_token();   // a scalar's token, whitespace after it included
    }
    return error ? nullptr : raw.data() + raw.size();
}

bool isSpace(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// The item's text, compact: whitespace between tokens removed, managedFields (the bytes
// [cutFrom, cutTo) of its field, if any) cut out with its comma. Items from an API server are
// compact already, so this is usually one copy.
QByteArray compactText(std::string_view raw, const char *cutFrom, const char *cutTo)
{
    const char *begin = raw.data();
    const char *end = raw.data() + raw.size();
    if (cutFrom && cutTo && cutFrom > begin && cutTo <= end) {
        const char *before = cutFrom - 1;
        while (before > begin && isSpace(*before)) --before;
        if (*before == ',') {
            cutFrom = before;          // ...,"managedFields":[...]  -> ...
        } else {
            while (cutTo < end && isSpace(*cutTo)) ++cutTo;
            if (cutTo < end && *cutTo == ',') ++cutTo;   // {"managedFields":[...],... -> {...
        }
    } else {
        cutFrom = cutTo = end;
    }
    thread_local std::string scratch;
    const size_t size = raw.size();
    if (scratch.size() < size + simdjson::SIMDJSON_PADDING) {
        scratch.resize(size + simdjson::SIMDJSON_PADDING);
    }
    size_t first = 0;
    size_t second = 0;
    // Both parts end at a token boundary, outside any string, so each minifies on its own.
    if (simdjson::minify(begin, static_cast<size_t>(cutFrom - begin), scratch.data(), first) != simdjson::SUCCESS
        || simdjson::minify(cutTo, static_cast<size_t>(end - cutTo), scratch.data() + first, second) != simdjson::SUCCESS) {
        QByteArray text(begin, cutFrom - begin);
        text.append(cutTo, end - cutTo);
        return text;
    }
    QByteArray text(scratch.data(), static_cast<qsizetype>(first + second));
    if (scratch.size() > JsonText::ThreadText::LargeText) {
        std::string().swap(scratch);
    }
    return text;
}

// A page parser keeps what its largest page needed (about five bytes per byte of page); a page
// of 500 objects is under a megabyte, so one beyond this is let go after use.
constexpr size_t LargePage = 2 * 1024 * 1024;

QString problemText(simdjson::error_code error)
{
    return QString::fromUtf8(simdjson::error_message(error));
}

} // namespace

struct Informer::Page
{
    QList<Informer::Listed> items;
    QString resourceVersion;
    QString continueToken;
    QString problem;

    // Reads a list body: its metadata and each object of items. QJsonObjects are made only when
    // wanted, the reader's values only with a reader: the pool thread's work is mostly copying
    // each item's text.
    static Page read(const QByteArray &body, bool wantObjects, const Informer::Reader &reader);
    void readItem(od::document &document, od::value &item, bool wantObjects, const Informer::Reader &reader);
};

Informer::Page Informer::Page::read(const QByteArray &body, bool wantObjects, const Informer::Reader &reader)
{
    Page page;
    const simdjson::padded_string text(body.constData(), static_cast<size_t>(body.size()));
    // One parser per pool thread, kept between pages: a new one per page would map and fault in
    // its buffers each time. One grown by an odd huge page is let go again (LargePage).
    thread_local od::parser parser;
    struct Release
    {
        size_t size;
        ~Release()
        {
            if (size > LargePage) parser = od::parser();
        }
    } release{text.size()};
    od::document document;
    od::object root;
    if (const auto error = parser.iterate(text).get(document)) {
        page.problem = problemText(error);
        return page;
    }
    if (const auto error = document.get_object().get(root)) {
        page.problem = problemText(error);
        return page;
    }
    for (auto entry : root) {
        od::field field;
        std::string_view key;
        simdjson::error_code error = std::move(entry).get(field);
        if (!error) error = field.unescaped_key().get(key);
        if (error) {
            page.problem = problemText(error);
            return page;
        }
        if (key == "metadata") {
            od::object metadata;
            if (field.value().get_object().get(metadata) != simdjson::SUCCESS) {
                continue;
            }
            for (auto m : metadata) {
                od::field f;
                std::string_view name;
                error = std::move(m).get(f);
                if (!error) error = f.unescaped_key().get(name);
                if (error) {
                    page.problem = problemText(error);
                    return page;
                }
                if (name == "resourceVersion") {
                    page.resourceVersion = JsonText::toQString(JsonText::stringOf(f.value()));
                } else if (name == "continue") {
                    page.continueToken = JsonText::toQString(JsonText::stringOf(f.value()));
                }
            }
        } else if (key == "items") {
            od::value &items = field.value();
            if (JsonText::isType(items, od::json_type::null)) {
                continue;
            }
            od::array array;
            if (items.get_array().get(array) != simdjson::SUCCESS) {
                page.problem = Text::tr("\"items\" is not a list");
                return page;
            }
            for (auto element : array) {
                od::value value;
                if ((error = element.get(value))) {
                    page.problem = problemText(error);
                    return page;
                }
                page.readItem(document, value, wantObjects, reader);
                if (!page.problem.isEmpty()) {
                    return page;
                }
            }
        }
    }
    return page;
}

void Informer::Page::readItem(od::document &document, od::value &value, bool wantObjects, const Informer::Reader &reader)
{
    // One walk over the item's tokens: its text runs from where it starts to where the document
    // stands once its fields have been read (the next token, a comma or the closing bracket).
    const char *begin = nullptr;
    od::object item;
    simdjson::error_code error = value.current_location().get(begin);
    if (!error) error = value.get_object().get(item);
    if (error) {
        if (error != simdjson::INCORRECT_TYPE) problem = problemText(error);
        return;   // not an object: nothing to cache, as before
    }
    std::string_view name, ns, version, uid;
    const char *cutFrom = nullptr;
    const char *cutTo = nullptr;
    for (auto entry : item) {
        od::field field;
        std::string_view key;
        error = std::move(entry).get(field);
        if (!error) error = field.unescaped_key().get(key);
        if (error) {
            problem = problemText(error);
            return;
        }
        od::object metadata;
        if (key != "metadata" || field.value().get_object().get(metadata) != simdjson::SUCCESS) {
            continue;
        }
        for (auto m : metadata) {
            od::field f;
            std::string_view k;
            const char *keyQuote = nullptr;
            error = std::move(m).get(f);
            if (!error) {
                keyQuote = f.key().raw() - 1;   // the key's opening quote, where its field starts
                error = f.unescaped_key().get(k);
            }
            if (error) {
                problem = problemText(error);
                return;
            }
            if (k == "name") {
                name = JsonText::stringOf(f.value());
            } else if (k == "namespace") {
                ns = JsonText::stringOf(f.value());
            } else if (k == "resourceVersion") {
                version = JsonText::stringOf(f.value());
            } else if (k == "uid") {
                uid = JsonText::stringOf(f.value());
            } else if (k == "managedFields") {
                cutFrom = keyQuote;
                cutTo = endOf(f.value());
            }
        }
    }
    const char *end = nullptr;
    if ((error = document.current_location().get(end))) {
        problem = problemText(error);
        return;
    }
    while (end > begin && isSpace(end[-1])) --end;
    if (end <= begin || end[-1] != '}') {
        problem = Text::tr("an item of the list does not end where its object does");
        return;
    }
    const std::string_view raw(begin, static_cast<size_t>(end - begin));
    Listed listed;
    listed.key = ns.empty() ? JsonText::toQString(name) : JsonText::toQString(ns) + QLatin1Char('/') + JsonText::toQString(name);
    listed.json = compactText(raw, cutFrom, cutTo);
    listed.resourceVersion = QByteArray(version.data(), static_cast<qsizetype>(version.size()));
    listed.uid = QByteArray(uid.data(), static_cast<qsizetype>(uid.size()));
    if (wantObjects) {
        // The page was walked, not validated value by value: the full parse is the check, and an
        // object that is not JSON fails the list as it did when Qt parsed the whole page.
        QJsonParseError parseError{};
        listed.object = QJsonDocument::fromJson(listed.json, &parseError).object();
        if (parseError.error != QJsonParseError::NoError) {
            problem = parseError.errorString();
            return;
        }
    }
    if (reader) {
        listed.value = reader(listed.json);
    }
    items.append(std::move(listed));
}

Informer::Informer(KubeClient *client, ResourceKind kind, InformerOptions options, QObject *parent)
    : QObject(parent)
    , m_client(client)
    , m_kind(std::move(kind))
    , m_options(std::move(options))
    , m_backoff(m_options.backoff)
{
    m_retry.setSingleShot(true);
}

Informer::~Informer()
{
    stop();
}

QString Informer::keyOf(const QJsonObject &object)
{
    const QJsonObject metadata = object.value(QLatin1String("metadata")).toObject();
    const QString ns = metadata.value(QLatin1String("namespace")).toString();
    const QString name = metadata.value(QLatin1String("name")).toString();
    return ns.isEmpty() ? name : ns + QLatin1Char('/') + name;
}

QByteArray Informer::compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

void Informer::setReader(Reader reader)
{
    m_reader = std::move(reader);
}

std::optional<QJsonObject> Informer::get(const QString &key) const
{
    const auto it = m_cache.constFind(key);
    if (it == m_cache.constEnd()) {
        return std::nullopt;
    }
    return QJsonDocument::fromJson(*it).object();
}

QList<QJsonObject> Informer::list() const
{
    QList<QJsonObject> out;
    out.reserve(m_cache.size());
    for (const QByteArray &json : m_cache) {
        out.append(QJsonDocument::fromJson(json).object());
    }
    return out;
}

QByteArrayList Informer::listJson() const
{
    return m_cache.values();
}

QHash<QString, QString> Informer::resourceVersions() const
{
    QHash<QString, QString> out;
    out.reserve(m_cache.size());
    for (auto it = m_cache.cbegin(); it != m_cache.cend(); ++it) {
        out.insert(it.key(), QString::fromUtf8(idsOf(*it).resourceVersion));
    }
    return out;
}

void Informer::setState(State state)
{
    if (m_state != state) {
        m_state = state;
        Q_EMIT stateChanged(state);
    }
}

void Informer::start()
{
    stop();
    m_synced = false;
    m_backoff.reset();
    relistNow();
}

void Informer::stop()
{
    ++m_generation;
    m_retry.stop();
    m_retry.disconnect(this);
    if (m_request) {
        m_request->abort();
    }
    if (m_watch) {
        m_watch->disconnect(this);
        m_watch->abort();
        m_watch->deleteLater();
    }
    m_watch = nullptr;
    m_decoder.reset();
    m_listing.clear();
    setState(State::Stopped);
}

void Informer::relistNow()
{
    ++m_generation;   // pages of an earlier list still in flight or being parsed are void
    m_listing.clear();
    // With nothing cached there is nothing to diff: pages go into the cache as they come, so
    // the listeners' work overlaps the transfer instead of following it.
    m_streaming = m_cache.isEmpty();
    m_listResourceVersion.clear();
    m_pagesParsing = 0;
    m_lastPageFetched = false;
    list(QString());
}

void Informer::list(const QString &continueToken)
{
    setState(State::Listing);
    ApiRequest request;
    request.path = m_kind.path(m_options.ns);
    request.query.addQueryItem(QStringLiteral("limit"), QString::number(m_options.pageSize));
    if (!continueToken.isEmpty()) {
        request.query.addQueryItem(QStringLiteral("continue"), continueToken);
    }
    if (!m_options.labelSelector.isEmpty()) {
        request.query.addQueryItem(QStringLiteral("labelSelector"), m_options.labelSelector);
    }
    if (!m_options.fieldSelector.isEmpty()) {
        request.query.addQueryItem(QStringLiteral("fieldSelector"), m_options.fieldSelector);
    }
    request.what = m_options.ns.isEmpty() || !m_kind.namespaced
                       ? tr("list %1").arg(m_kind.qualifiedName())
                       : tr("list %1 in namespace %2").arg(m_kind.qualifiedName(), m_options.ns);
    const quint64 generation = m_generation;
    m_request = m_client->send(request, this, [this, generation, continuing = !continueToken.isEmpty()](const ApiResult &result) {
        if (generation != m_generation) {
            return;
        }
        if (!result.ok()) {
            if (result.error->isExpired() && continuing) {
                // The continue token outlived the server's history: a new list from the start.
                ++m_stats.expired;
                relistNow();
                return;
            }
            fail(*result.error, true);
            return;
        }
        // The next page is asked for at once when the continue token can be read off the head of
        // the body, so the server prepares it while this one is parsed.
        const std::optional<ListHead> head = peekListHead(result.body);
        if (head && m_listResourceVersion.isEmpty()) {
            m_listResourceVersion = head->resourceVersion;
        }
        ++m_pagesParsing;
        if (head) {
            if (head->continueToken.isEmpty()) {
                m_lastPageFetched = true;
            } else {
                list(head->continueToken);
            }
        }
        // Parsing a page of 500 pods takes milliseconds; 50,000 would stall the GUI, so it is done
        // on the pool and the cache is only touched back on this thread. The watcher is the
        // informer's child, so the result is dropped if the informer is gone: Qt 6.4's
        // QFuture::then(context) asserts when its context dies first (a command that fails while
        // a page is parsed deletes its session's informers).
        auto *watcher = new QFutureWatcher<Page>(this);
        connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation, followed = head.has_value()] {
            watcher->deleteLater();
            if (generation == m_generation) {
                Page page = watcher->future().takeResult();
                onPage(page, followed);
            }
        });
        watcher->setFuture(QtConcurrent::run([body = result.body, objects = wantsObjects(), reader = wantsValues() ? m_reader : Reader()] {
            return Page::read(body, objects, reader);
        }));
    });
}

void Informer::onPage(Page &page, bool followed)
{
    --m_pagesParsing;
    if (!page.problem.isEmpty()) {
        fail(ApiError::malformed(tr("list %1").arg(m_kind.qualifiedName()), page.problem), true);
        return;
    }
    ++m_stats.pages;
    if (m_listResourceVersion.isEmpty()) {
        // Every page of a list is a snapshot at the first page's resourceVersion.
        m_listResourceVersion = page.resourceVersion;
    }
    if (!followed) {
        if (page.continueToken.isEmpty()) {
            m_lastPageFetched = true;
        } else {
            list(page.continueToken);
        }
    }
    if (m_streaming) {
        const quint64 generation = m_generation;   // a listener may stop or restart us mid-way
        for (const Listed &item : std::as_const(page.items)) {
            applyListed(item);
            if (generation != m_generation) {
                return;
            }
        }
    } else {
        for (Listed &item : page.items) {
            QString key = item.key;
            m_listing.insert(std::move(key), std::move(item));
        }
    }
    if (m_lastPageFetched && m_pagesParsing == 0) {
        finishList();
    }
}

bool Informer::wantsObjects() const
{
    static const QMetaMethod addedSignal = QMetaMethod::fromSignal(&Informer::added);
    static const QMetaMethod updatedSignal = QMetaMethod::fromSignal(&Informer::updated);
    static const QMetaMethod deletedSignal = QMetaMethod::fromSignal(&Informer::deleted);
    return isSignalConnected(addedSignal) || isSignalConnected(updatedSignal) || isSignalConnected(deletedSignal);
}

bool Informer::wantsValues() const
{
    static const QMetaMethod addedSignal = QMetaMethod::fromSignal(&Informer::readAdded);
    static const QMetaMethod updatedSignal = QMetaMethod::fromSignal(&Informer::readUpdated);
    static const QMetaMethod deletedSignal = QMetaMethod::fromSignal(&Informer::readDeleted);
    return m_reader && (isSignalConnected(addedSignal) || isSignalConnected(updatedSignal) || isSignalConnected(deletedSignal));
}

void Informer::emitAdded(const QByteArray &json, const QJsonObject *object, const QVariant *value)
{
    const quint64 generation = m_generation;
    if (wantsValues()) {
        Q_EMIT readAdded(value && value->isValid() ? *value : m_reader(json));
    }
    if (generation == m_generation && wantsObjects()) {
        Q_EMIT added(object ? *object : QJsonDocument::fromJson(json).object());
    }
}

void Informer::emitUpdated(const QByteArray &before, const QByteArray &json, const QJsonObject *object, const QVariant *value)
{
    const quint64 generation = m_generation;
    if (wantsValues()) {
        Q_EMIT readUpdated(value && value->isValid() ? *value : m_reader(json));
    }
    if (generation == m_generation && wantsObjects()) {
        Q_EMIT updated(QJsonDocument::fromJson(before).object(), object ? *object : QJsonDocument::fromJson(json).object());
    }
}

void Informer::emitDeleted(const QByteArray &json, const QJsonObject *object)
{
    const quint64 generation = m_generation;
    if (wantsValues()) {
        Q_EMIT readDeleted(m_reader(json));
    }
    if (generation == m_generation && wantsObjects()) {
        Q_EMIT deleted(object ? *object : QJsonDocument::fromJson(json).object());
    }
}

void Informer::applyListed(const Listed &item)
{
    const QJsonObject *object = item.object ? &*item.object : nullptr;
    const auto found = m_cache.find(item.key);
    if (found == m_cache.end()) {
        m_cache.insert(item.key, item.json);
        emitAdded(item.json, object, &item.value);
        return;
    }
    const Ids ids = idsOf(*found);
    if (ids.uid != item.uid) {
        // Deleted and created again under the same name while we were not watching.
        const QByteArray last = *found;
        m_cache.erase(found);
        const quint64 generation = m_generation;
        emitDeleted(last, nullptr);
        if (generation == m_generation) {
            m_cache.insert(item.key, item.json);
            emitAdded(item.json, object, &item.value);
        }
    } else if (ids.resourceVersion != item.resourceVersion) {
        const QByteArray before = *found;
        *found = item.json;
        emitUpdated(before, item.json, object, &item.value);
    }
}

void Informer::finishList()
{
    const quint64 generation = m_generation;   // a listener may stop or restart us mid-way
    if (!m_streaming) {
        QHash<QString, Listed> listing;
        listing.swap(m_listing);
        // Deletes first, so that a listener never holds a stale object next to a new one.
        const QStringList cachedKeys = m_cache.keys();
        for (const QString &key : cachedKeys) {
            if (!listing.contains(key)) {
                const QByteArray last = m_cache.take(key);
                emitDeleted(last, nullptr);
                if (generation != m_generation) {
                    return;
                }
            }
        }
        for (auto it = listing.cbegin(); it != listing.cend(); ++it) {
            applyListed(it.value());
            if (generation != m_generation) {
                return;
            }
        }
    }
    m_resourceVersion = m_listResourceVersion;
    ++m_stats.lists;
    m_lastError.reset();
    m_backoff.reset();
    if (!m_synced) {
        m_synced = true;
        Q_EMIT synced();
        if (generation != m_generation) {
            return;
        }
    }
    watch();
}

void Informer::watch()
{
    ApiRequest request;
    request.path = m_kind.path(m_options.ns);
    const int timeoutS = QRandomGenerator::global()->bounded(m_options.minWatchTimeoutS,
                                                             std::max(m_options.minWatchTimeoutS + 1, m_options.maxWatchTimeoutS));
    request.query.addQueryItem(QStringLiteral("watch"), QStringLiteral("1"));
    request.query.addQueryItem(QStringLiteral("resourceVersion"), m_resourceVersion);
    request.query.addQueryItem(QStringLiteral("allowWatchBookmarks"), QStringLiteral("true"));
    request.query.addQueryItem(QStringLiteral("timeoutSeconds"), QString::number(timeoutS));
    if (!m_options.labelSelector.isEmpty()) {
        request.query.addQueryItem(QStringLiteral("labelSelector"), m_options.labelSelector);
    }
    if (!m_options.fieldSelector.isEmpty()) {
        request.query.addQueryItem(QStringLiteral("fieldSelector"), m_options.fieldSelector);
    }
    request.timeoutMs = WatchIdleTimeoutMs;
    m_watch = m_client->openStream(request);
    m_decoder = std::make_unique<WatchDecoder>(m_options.maxEventBytes);
    m_watchClock.start();
    m_watchEvents = 0;
    ++m_stats.watches;
    connect(m_watch, &QNetworkReply::readyRead, this, &Informer::onWatchData);
    connect(m_watch, &QNetworkReply::finished, this, &Informer::onWatchFinished);
    setState(State::Watching);
}

void Informer::onWatchData()
{
    QNetworkReply *reply = m_watch;
    if (!reply || Net::httpStatus(reply) != 200) {
        return;   // an error body: read whole at finished
    }
    const quint64 generation = m_generation;
    const QList<WatchEvent> events = m_decoder->feed(reply->readAll());
    for (const WatchEvent &event : events) {
        switch (event.type) {
        case WatchEvent::Type::Added:
        case WatchEvent::Type::Modified:
            apply(event.object, false);
            break;
        case WatchEvent::Type::Deleted:
            apply(event.object, true);
            break;
        case WatchEvent::Type::Bookmark: {
            const QString rv = resourceVersionOf(event.object);
            if (!rv.isEmpty()) {
                m_resourceVersion = rv;
            }
            break;
        }
        case WatchEvent::Type::Error: {
            const ApiError error = ApiError::fromStatusObject(event.object, tr("watch %1").arg(m_kind.qualifiedName()));
            reply->disconnect(this);
            reply->abort();
            reply->deleteLater();
            m_watch = nullptr;
            if (error.isExpired()) {
                ++m_stats.expired;
                qCDebug(lcInformer) << m_kind.plural << "watch expired:" << error.serverMessage;
                relistNow();
            } else {
                fail(error, false);
            }
            return;
        }
        }
        if (generation != m_generation) {
            return;   // a listener stopped or restarted us
        }
    }
    if (m_decoder->failed()) {
        reply->disconnect(this);
        reply->abort();
        reply->deleteLater();
        m_watch = nullptr;
        fail(ApiError::malformed(tr("watch %1").arg(m_kind.qualifiedName()), m_decoder->problem()), false);
    }
}

void Informer::onWatchFinished()
{
    QNetworkReply *reply = m_watch;
    if (!reply) {
        return;
    }
    onWatchData();   // whatever arrived with the end
    if (m_watch != reply) {
        return;      // the tail held an ERROR event or broke the framing, already handled
    }
    reply->disconnect(this);
    reply->deleteLater();
    m_watch = nullptr;
    const int status = Net::httpStatus(reply);
    const QString what = tr("watch %1").arg(m_kind.qualifiedName());
    if (status == 200 && reply->error() == QNetworkReply::NoError) {
        if (m_watchEvents == 0 && m_watchClock.elapsed() < ShortWatchMs) {
            fail(ApiError::transport(tr("The API server ended the watch of %1 at once with nothing in it.")
                                         .arg(m_kind.qualifiedName())),
                 false);
            return;
        }
        watch();   // the server's timeout: carry on from the last resourceVersion
        return;
    }
    if (status == 0 && reply->error() == QNetworkReply::OperationCanceledError && m_watchEvents > 0) {
        // Our idle timeout on a stream that was working: reconnect without waiting.
        watch();
        return;
    }
    const ApiResult result = KubeClient::collect(reply, what);
    const ApiError error = result.error ? *result.error : ApiError::transport(tr("The watch of %1 broke: %2").arg(m_kind.qualifiedName(), reply->errorString()));
    if (error.isExpired()) {
        ++m_stats.expired;
        relistNow();
        return;
    }
    fail(error, false);
}

void Informer::apply(const QJsonObject &incoming, bool isDelete)
{
    ++m_stats.events;
    ++m_watchEvents;
    m_backoff.reset();
    const QJsonObject object = trimmed(incoming);
    const QString rv = resourceVersionOf(object);
    if (!rv.isEmpty()) {
        m_resourceVersion = rv;
    }
    const QString key = keyOf(object);
    const auto found = m_cache.find(key);
    if (isDelete) {
        if (found != m_cache.end()) {
            m_cache.erase(found);
            emitDeleted(wantsValues() ? compact(object) : QByteArray(), &object);
        }
        return;
    }
    const QByteArray json = compact(object);
    if (found == m_cache.end()) {
        m_cache.insert(key, json);
        emitAdded(json, &object, nullptr);
        return;
    }
    const QByteArray before = *found;
    if (idsOf(before).uid != uidOf(object).toUtf8()) {
        // Same name, another uid: recreated without a delete reaching us. Listeners still see
        // the delete before the add.
        m_cache.erase(found);
        const quint64 generation = m_generation;
        emitDeleted(before, nullptr);
        if (generation == m_generation) {
            m_cache.insert(key, json);
            emitAdded(json, &object, nullptr);
        }
    } else {
        *found = json;
        emitUpdated(before, json, &object, nullptr);
    }
}

void Informer::fail(const ApiError &error, bool relist)
{
    ++m_generation;   // nothing of the failed round may act after this
    ++m_stats.failures;
    m_lastError = error;
    const bool mustList = relist || m_resourceVersion.isEmpty();
    const int delay = error.kind == ApiError::Kind::TooManyRequests && error.retryAfterMs >= 0 ? error.retryAfterMs
                                                                                               : m_backoff.next();
    qCDebug(lcInformer) << m_kind.plural << "retrying in" << delay << "ms:" << error.message;
    m_retry.disconnect(this);
    connect(&m_retry, &QTimer::timeout, this, [this, mustList] {
        if (mustList) {
            relistNow();
        } else {
            watch();
        }
    });
    m_retry.start(delay);
    setState(State::Waiting);
}

} // namespace Starforge::Kube
