#include "sandbox/api/watchstream.h"

#include "sandbox/store/resourcetypes.h"

#include <QJsonDocument>

namespace Starforge::Sandbox {

namespace {

// A watcher this far behind is too slow to keep; the API server drops such watchers too.
constexpr qint64 MaxPendingBytes = 256LL * 1024 * 1024;

} // namespace

WatchStream::WatchStream(ObjectStore *store, const ResourceType &type, Options options, Http::Responder *responder,
                         QObject *parent)
    : QObject(parent)
    , m_store(store)
    , m_type(type)
    , m_options(std::move(options))
    , m_responder(responder)
{
    connect(responder, &Http::Responder::clientGone, this, &QObject::deleteLater);
    connect(responder, &QObject::destroyed, this, &QObject::deleteLater);
    if (m_options.bookmarks) {
        m_bookmarkTimer.setInterval(m_options.bookmarkIntervalMs);
        connect(&m_bookmarkTimer, &QTimer::timeout, this, &WatchStream::sendBookmark);
    }
    m_timeout.setSingleShot(true);
    connect(&m_timeout, &QTimer::timeout, this, [this] {
        if (m_options.bookmarks) {
            sendBookmark(); // "a bookmark right before watch deadline"
        }
        finish();
    });
    m_drop.setSingleShot(true);
    connect(&m_drop, &QTimer::timeout, this, &WatchStream::cut);
}

void WatchStream::start(quint64 fromResourceVersion)
{
    m_responder->beginStream(200, "application/json");
    if (fromResourceVersion == 0) {
        for (const ObjectPtr &object : m_store->list(m_type.storage, m_options.ns)) {
            if (selects(object)) {
                send("ADDED", object);
            }
        }
        m_sentThrough = m_store->currentResourceVersion();
    } else {
        m_sentThrough = fromResourceVersion;
        for (const Change &change : m_store->changesSince(m_type.storage, fromResourceVersion)) {
            onChange(change);
        }
    }
    connect(m_store, &ObjectStore::changed, this, &WatchStream::onChange);
    if (m_options.bookmarks) {
        m_bookmarkTimer.start();
    }
    if (m_options.timeoutMs > 0) {
        m_timeout.start(m_options.timeoutMs);
    }
    if (m_options.dropAfterMs > 0) {
        m_drop.start(m_options.dropAfterMs);
    }
}

void WatchStream::finish()
{
    if (m_responder) {
        m_responder->end();
    }
    deleteLater();
}

void WatchStream::cut()
{
    if (m_responder) {
        // Closing the socket mid-stream is what a restarting API server or a proxy does.
        m_responder->abortConnection();
    }
    deleteLater();
}

QJsonObject WatchStream::shaped(const ObjectPtr &object) const
{
    return m_type.converts() ? m_type.fromStorage(object->object) : object->object;
}

bool WatchStream::selects(const ObjectPtr &object) const
{
    if (!object || (!m_options.ns.isEmpty() && object->ns != m_options.ns)) {
        return false;
    }
    if (m_options.labels.isEmpty() && m_options.fields.isEmpty()) {
        return true;
    }
    const QJsonObject o = shaped(object);
    const QJsonObject labels = o.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("labels")).toObject();
    return m_options.labels.matches(labels)
        && m_options.fields.matches([&](const QString &label) { return ResourceTypes::fieldValue(m_type, o, label); });
}

void WatchStream::onChange(const Change &change)
{
    if (change.storage != m_type.storage || change.resourceVersion <= m_sentThrough) {
        return;
    }
    m_sentThrough = change.resourceVersion;
    const bool now = change.type != ChangeType::Deleted && selects(change.object);
    const bool before = change.previous && selects(change.previous);
    if (change.type == ChangeType::Deleted) {
        if (before) {
            send("DELETED", change.object);
        }
    } else if (now && before) {
        send("MODIFIED", change.object);
    } else if (now) {
        send("ADDED", change.object);
    } else if (before) {
        send("DELETED", change.object);
    }
}

void WatchStream::send(const char *type, const ObjectPtr &object)
{
    if (!m_responder) {
        return;
    }
    if (m_responder->pendingBytes() > MaxPendingBytes) {
        cut();
        return;
    }
    const QByteArray json = m_type.converts() ? QJsonDocument(shaped(object)).toJson(QJsonDocument::Compact)
                                              : object->json(true);
    m_responder->write("{\"type\":\"" + QByteArray(type) + "\",\"object\":" + json + "}\n");
}

void WatchStream::sendBookmark()
{
    if (!m_responder) {
        return;
    }
    const QByteArray rv = QByteArray::number(std::max(m_sentThrough, m_store->currentResourceVersion()));
    m_responder->write("{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"" + m_type.kind.toUtf8() + "\",\"apiVersion\":\""
                       + m_type.apiVersion().toUtf8() + "\",\"metadata\":{\"resourceVersion\":\"" + rv + "\"}}}\n");
}

} // namespace Starforge::Sandbox
