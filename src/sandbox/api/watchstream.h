#pragma once

// One open watch: replays the history after its resourceVersion (or the current state as
// ADDED), then forwards the store's changes that match its namespace and selectors, with the
// ADDED/DELETED a selector transition implies, bookmarks, and the end of stream at its timeout.

#include "sandbox/api/selectors.h"
#include "sandbox/http/httpserver.h"
#include "sandbox/store/objectstore.h"

#include <QObject>
#include <QPointer>
#include <QTimer>

namespace Starforge::Sandbox {

struct ResourceType;

class WatchStream final : public QObject
{
    Q_OBJECT
public:
    struct Options
    {
        QString ns;
        LabelSelector labels;
        FieldSelector fields;
        bool bookmarks = false;
        int timeoutMs = 0;
        int bookmarkIntervalMs = 60000;
        int dropAfterMs = 0;
    };

    WatchStream(ObjectStore *store, const ResourceType &type, Options options, Http::Responder *responder,
                QObject *parent = nullptr);
    // fromResourceVersion 0 sends the current state as ADDED first.
    void start(quint64 fromResourceVersion);
    // Ends the chunked stream cleanly (timeout) or cuts the connection (a dropped stream).
    void finish();
    void cut();

private:
    bool selects(const ObjectPtr &object) const;
    QJsonObject shaped(const ObjectPtr &object) const;
    void onChange(const Change &change);
    void send(const char *type, const ObjectPtr &object);
    void sendBookmark();

    ObjectStore *m_store;
    const ResourceType &m_type;
    Options m_options;
    QPointer<Http::Responder> m_responder;
    QTimer m_bookmarkTimer;
    QTimer m_timeout;
    QTimer m_drop;
    quint64 m_sentThrough = 0;
};

} // namespace Starforge::Sandbox
