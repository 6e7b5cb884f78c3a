#include "core/kube/informer.h"

#include "core/kube/kubeclient.h"
#include "core/kube/watchdecoder.h"

#include <QCoreApplication>
#include <QFutureWatcher>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QNetworkReply>
#include <QRandomGenerator>
#include <QtConcurrent/QtConcurrentRun>

namespace Starforge::Kube {

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

} // namespace

struct Informer::Page
{
    QList<std::pair<QJsonObject, Informer::Cached>> items;
    QString resourceVersion;
    QString continueToken;
    QString problem;
};

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

Informer::Cached Informer::cached(const QJsonObject &object)
{
    return Cached{QJsonDocument(object).toJson(QJsonDocument::Compact), resourceVersionOf(object), uidOf(object)};
}

std::optional<QJsonObject> Informer::get(const QString &key) const
{
    const auto it = m_cache.constFind(key);
    if (it == m_cache.constEnd()) {
        return std::nullopt;
    }
    return QJsonDocument::fromJson(it->json).object();
}

QList<QJsonObject> Informer::list() const
{
    QList<QJsonObject> out;
    out.reserve(m_cache.size());
    for (const Cached &c : m_cache) {
        out.append(QJsonDocument::fromJson(c.json).object());
    }
    return out;
}

QHash<QString, QString> Informer::resourceVersions() const
{
    QHash<QString, QString> out;
    out.reserve(m_cache.size());
    for (auto it = m_cache.cbegin(); it != m_cache.cend(); ++it) {
        out.insert(it.key(), it->resourceVersion);
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
        // on the pool and the cache is only touched back on this thread.
        auto *watcher = new QFutureWatcher<Page>(this);
        connect(watcher, &QFutureWatcher<Page>::finished, this, [this, watcher, generation, followed = head.has_value()] {
            watcher->deleteLater();
            if (generation == m_generation) {
                onPage(watcher->result(), followed);
            }
        });
        watcher->setFuture(QtConcurrent::run([body = result.body] {
            Page page;
            QJsonParseError error{};
            const QJsonDocument document = QJsonDocument::fromJson(body, &error);
            if (error.error != QJsonParseError::NoError || !document.isObject()) {
                page.problem = error.errorString();
                return page;
            }
            const QJsonObject root = document.object();
            const QJsonObject metadata = root.value(QLatin1String("metadata")).toObject();
            page.resourceVersion = metadata.value(QLatin1String("resourceVersion")).toString();
            page.continueToken = metadata.value(QLatin1String("continue")).toString();
            const QJsonValue items = root.value(QLatin1String("items"));
            if (!items.isArray() && !items.isNull() && !items.isUndefined()) {
                page.problem = QStringLiteral("\"items\" is not a list");
                return page;
            }
            const QJsonArray array = items.toArray();
            page.items.reserve(array.size());
            for (const QJsonValue &item : array) {
                if (item.isObject()) {
                    QJsonObject object = trimmed(item.toObject());
                    Cached entry = cached(object);
                    page.items.append({std::move(object), std::move(entry)});
                }
            }
            return page;
        }));
    });
}

void Informer::onPage(const Page &page, bool followed)
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
    for (const auto &item : page.items) {
        m_listing.insert(keyOf(item.first), item);
    }
    if (!followed) {
        if (page.continueToken.isEmpty()) {
            m_lastPageFetched = true;
        } else {
            list(page.continueToken);
        }
    }
    if (m_lastPageFetched && m_pagesParsing == 0) {
        finishList();
    }
}

void Informer::finishList()
{
    QHash<QString, std::pair<QJsonObject, Cached>> listing;
    listing.swap(m_listing);
    const quint64 generation = m_generation;   // a listener may stop or restart us mid-way
    // Deletes first, so that a listener never holds a stale object next to a new one.
    const QStringList cachedKeys = m_cache.keys();
    for (const QString &key : cachedKeys) {
        if (!listing.contains(key)) {
            const Cached last = m_cache.take(key);
            Q_EMIT deleted(QJsonDocument::fromJson(last.json).object());
            if (generation != m_generation) {
                return;
            }
        }
    }
    for (auto it = listing.cbegin(); it != listing.cend(); ++it) {
        const auto &[object, entry] = it.value();
        const auto found = m_cache.constFind(it.key());
        if (found == m_cache.constEnd()) {
            m_cache.insert(it.key(), entry);
            Q_EMIT added(object);
        } else if (found->uid != entry.uid) {
            // Deleted and created again under the same name while we were not watching.
            const Cached last = m_cache.take(it.key());
            Q_EMIT deleted(QJsonDocument::fromJson(last.json).object());
            m_cache.insert(it.key(), entry);
            Q_EMIT added(object);
        } else if (found->resourceVersion != entry.resourceVersion) {
            const QJsonObject before = QJsonDocument::fromJson(found->json).object();
            m_cache.insert(it.key(), entry);
            Q_EMIT updated(before, object);
        }
        if (generation != m_generation) {
            return;
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
    const auto found = m_cache.constFind(key);
    if (isDelete) {
        if (found != m_cache.constEnd()) {
            m_cache.erase(found);
            Q_EMIT deleted(object);
        }
        return;
    }
    if (found == m_cache.constEnd()) {
        m_cache.insert(key, cached(object));
        Q_EMIT added(object);
        return;
    }
    const QJsonObject before = QJsonDocument::fromJson(found->json).object();
    if (found->uid != uidOf(object)) {
        // Same name, another uid: recreated without a delete reaching us. Listeners still see
        // the delete before the add.
        m_cache.remove(key);
        Q_EMIT deleted(before);
        m_cache.insert(key, cached(object));
        Q_EMIT added(object);
    } else {
        m_cache.insert(key, cached(object));
        Q_EMIT updated(before, object);
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
