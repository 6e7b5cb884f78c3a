#pragma once

// A local cache of one kind of object, kept equal to the server's by list-then-watch, the
// protocol client-go's reflector speaks (docs/kubernetes.md):
//  - list in pages (limit/continue), parsed off the GUI thread;
//  - watch from the list's resourceVersion with bookmarks and a timeout drawn from 300-600 s;
//    a clean end re-watches at once from the last resourceVersion seen;
//  - a 410 (HTTP or an ERROR event) means history is gone: list again and diff the new list
//    against the cache, so listeners see exactly the adds, updates and deletes they missed;
//  - failures back off exponentially (0.8 s to 30 s, with jitter); 429 waits for Retry-After.
// Listeners get a consistent sequence: an add for a key they do not have, updates and deletes
// for keys they have. metadata.managedFields is dropped on the way in (it is large and unused).
// The cache holds each object as compact JSON and nothing else (its resourceVersion and uid are
// read back from the text when a relist or a watch event needs them): a parsed QJsonObject takes
// about seven times the bytes of its text, and 50,000 pods must not cost a workstation hundreds
// of megabytes. get() parses on demand.
//
// The list path (docs/kubernetes.md, "The list path"): pages are read with simdjson on the
// pool, each item's text kept as the server wrote it (minified, managedFields cut out), the next
// page asked for as soon as the continue token is read off the head of the body. A first list
// (an empty cache) is applied page by page as pages arrive; a relist is diffed at its end.
// Listeners of added/updated/deleted get QJsonObjects, built only while such a listener is
// connected. A listener that needs a few fields of many objects (the capacity tracker: five of
// a pod's hundred) sets a Reader instead: it makes its own value from each object's text where
// the page is parsed, and the read* signals carry it, in the same sequence.

#include "core/kube/apierror.h"
#include "core/kube/resourcekind.h"
#include "core/net/backoff.h"

#include <QElapsedTimer>
#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QTimer>
#include <QVariant>

#include <functional>
#include <memory>

class QNetworkReply;

namespace Starforge::Kube {

class KubeClient;
class WatchDecoder;

struct InformerOptions
{
    QString ns;                  // empty: all namespaces (or a cluster-scoped kind)
    QString labelSelector;
    QString fieldSelector;
    int pageSize = 500;          // kubectl's and client-go's chunk size
    int minWatchTimeoutS = 300;  // the watch timeout is drawn from [min, max)
    int maxWatchTimeoutS = 600;
    Net::Backoff::Params backoff;
    qsizetype maxEventBytes = 32 * 1024 * 1024; // one watch line; longer means a broken stream
};

class Informer final : public QObject
{
    Q_OBJECT
public:
    enum class State { Stopped, Listing, Watching, Waiting };
    Q_ENUM(State)

    Informer(KubeClient *client, ResourceKind kind, InformerOptions options = {}, QObject *parent = nullptr);
    ~Informer() override;

    void start();
    void stop();

    State state() const { return m_state; }
    bool hasSynced() const { return m_synced; }
    const ResourceKind &kind() const { return m_kind; }
    const InformerOptions &options() const { return m_options; }
    QString lastResourceVersion() const { return m_resourceVersion; }
    std::optional<ApiError> lastError() const { return m_lastError; }

    // Turns an object's compact JSON into the value the read* signals carry. It runs on pool
    // threads, several at once: it may use only its argument and what it holds by value. One
    // per informer (setting another replaces it); set it before start().
    using Reader = std::function<QVariant(QByteArrayView json)>;
    void setReader(Reader reader);

    // The cache, keyed "namespace/name" (or "name" when cluster-scoped).
    qsizetype size() const { return m_cache.size(); }
    QStringList keys() const { return m_cache.keys(); }
    std::optional<QJsonObject> get(const QString &key) const;
    // Every cached object, parsed (for a model's first fill).
    QList<QJsonObject> list() const;
    // Every cached object as compact JSON (for a reader's first fill).
    QByteArrayList listJson() const;
    // key -> resourceVersion, to compare with the server's view.
    QHash<QString, QString> resourceVersions() const;
    static QString keyOf(const QJsonObject &object);

    struct Stats
    {
        int lists = 0;          // complete lists (the first and every relist)
        int pages = 0;
        int watches = 0;        // watch requests opened
        int expired = 0;        // 410s seen
        int failures = 0;       // failed requests and broken streams
        qint64 events = 0;      // watch events applied (bookmarks excluded)
    };
    const Stats &stats() const { return m_stats; }

Q_SIGNALS:
    void added(const QJsonObject &object);
    void updated(const QJsonObject &before, const QJsonObject &after);
    void deleted(const QJsonObject &last);
    // The same sequence as the reader's values (only with a reader set); an update carries the
    // object's new state.
    void readAdded(const QVariant &value);
    void readUpdated(const QVariant &value);
    void readDeleted(const QVariant &last);
    // The first complete list is in the cache (emitted once per start).
    void synced();
    // Listing, watching, or waiting to retry with lastError() saying why.
    void stateChanged(Informer::State state);

private:
    // One object of a list page, as the pool read it.
    struct Listed
    {
        QString key;
        QByteArray json;              // compact, without managedFields
        QByteArray resourceVersion;
        QByteArray uid;
        std::optional<QJsonObject> object;   // when QJsonObject listeners were connected
        QVariant value;                      // the reader's, when one was set
    };
    struct Page;

    static QByteArray compact(const QJsonObject &object);

    void setState(State state);
    void list(const QString &continueToken);
    // followed: the next page was already asked for from the body's head.
    void onPage(Page &page, bool followed);
    // One listed object into the cache, with the add, update or delete-and-add it makes.
    void applyListed(const Listed &item);
    void finishList();
    bool wantsObjects() const;
    bool wantsValues() const;
    // The signals for one change; objects and values are made here when the pool did not.
    void emitAdded(const QByteArray &json, const QJsonObject *object, const QVariant *value);
    void emitUpdated(const QByteArray &before, const QByteArray &json, const QJsonObject *object, const QVariant *value);
    void emitDeleted(const QByteArray &json, const QJsonObject *object);
    void watch();
    void onWatchData();
    void onWatchFinished();
    void fail(const ApiError &error, bool relist);
    void apply(const QJsonObject &object, bool isDelete);
    void relistNow();

    KubeClient *m_client;
    ResourceKind m_kind;
    InformerOptions m_options;
    Net::Backoff m_backoff;
    State m_state = State::Stopped;
    bool m_synced = false;
    quint64 m_generation = 0;   // bumped on stop/restart so late callbacks are ignored

    Reader m_reader;
    QHash<QString, QByteArray> m_cache;   // key -> compact JSON
    QHash<QString, Listed> m_listing;     // pages of a relist in progress, diffed at its end
    bool m_streaming = false;             // this list began with an empty cache: applied per page
    QString m_listResourceVersion;
    int m_pagesParsing = 0;         // pages received and still being parsed
    bool m_lastPageFetched = false; // the page without a continue token has arrived
    QString m_resourceVersion;
    std::optional<ApiError> m_lastError;
    Stats m_stats;

    QPointer<QNetworkReply> m_request;
    QPointer<QNetworkReply> m_watch;
    std::unique_ptr<WatchDecoder> m_decoder;
    QElapsedTimer m_watchClock;
    int m_watchEvents = 0;
    QTimer m_retry;
};

} // namespace Starforge::Kube
