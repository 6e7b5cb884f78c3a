#pragma once

// The Kubernetes API as the sandbox serves it: discovery, list (limit/continue, selectors),
// watch (chunked JSON lines, bookmarks, timeouts, 410 as an ERROR event), get, create, update,
// merge patch and delete, each behind authentication (client certificates, tokens) and RBAC, answering errors as Status
// objects with the real API server's texts. Subresources served by other parts of the sandbox
// (pods/log and pods/proxy by the kubelet) and admission checks (the RayJob CRD schema) are
// plugged in from outside, so this file knows nothing of what runs in the cluster.

#include "sandbox/api/authorizer.h"
#include "sandbox/faults.h"
#include "sandbox/http/httpserver.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QRandomGenerator>

#include <deque>
#include <functional>
#include <optional>

namespace Starforge::Sandbox {

class ObjectStore;
struct ResourceType;
class WatchStream;

struct RequestInfo
{
    bool isResource = false;
    QString group;
    QString version;
    QString ns;
    QString resource;
    QString name;
    QString subresource;
    QString rest;            // after the subresource, for proxy paths
    QString verb;
    const ResourceType *type = nullptr;
};

// One resource request as the API server received it, for tests that must see what a client
// sent and what it was told (in order, without timers): requests under /api/ and /apis/,
// faults and refusals included.
struct RecordedRequest
{
    quint64 sequence = 0;   // counts from 1 over the server's life; the record keeps the latest
    QByteArray method;
    QString path;           // decoded, without the query
    QString query;          // as sent, still encoded; empty when none
    int code = 0;           // the status answered (a stream's when it began); 0 while unanswered
};

class ApiServer final : public QObject
{
    Q_OBJECT
public:
    using SubresourceHandler = std::function<void(const RequestInfo &, const Http::Request &, Http::Responder *)>;
    // Checks (and defaults, and prunes) an object about to be stored: returns a Status to answer
    // instead, or nothing; warnings become Warning headers. fieldValidation is the request's
    // (Strict, Warn or Ignore).
    using Admission = std::function<std::optional<QJsonObject>(const ResourceType &, QJsonObject &object,
                                                               const QString &fieldValidation, QStringList &warnings)>;

    ApiServer(ObjectStore *store, Authorizer *authorizer, QObject *parent = nullptr);
    ~ApiServer() override;

    void handle(const Http::Request &request, Http::Responder *responder);

    void setFaults(const Faults &faults);
    const Faults &faults() const { return m_faults; }
    void setSeed(quint32 seed) { m_random.seed(seed); }
    void dropWatches();
    int openWatchCount() const;
    void setBookmarkIntervalMs(int ms) { m_bookmarkIntervalMs = ms; }
    void setServerAddress(const QString &hostPort) { m_serverAddress = hostPort; }

    // The latest resource requests, oldest first: at most RequestRecordLimit, in memory only.
    static constexpr int RequestRecordLimit = 2048;
    QList<RecordedRequest> requestRecord() const;
    void clearRequestRecord();

    void setSubresourceHandler(const QString &storage, const QString &subresource, SubresourceHandler handler);
    void setAdmission(const QString &storage, Admission admission);
    // A custom resource's additionalPrinterColumns, read on first use (kubectl's Table output).
    void setPrinterColumns(const QString &storage, std::function<QJsonArray()> columns);

    static const QByteArray JsonContentType; // "application/json"
    static void respondStatus(Http::Responder *responder, const QJsonObject &status, const Http::Headers &extra = {});
    static void respondJson(Http::Responder *responder, int code, const QJsonObject &object);

Q_SIGNALS:
    // The knobs changed (setFaults, the control API, or a spent next500Creates).
    void faultsChanged(const Starforge::Sandbox::Faults &faults);
    // A resource request arrived and was recorded (code 0: not answered yet). Emitted before the
    // request is served, so a slot connected directly sees it while it is still in flight.
    void requestRecorded(const Starforge::Sandbox::RecordedRequest &request);

private:
    void record(const Http::Request &request, Http::Responder *responder);

    // kubectl asks for server-side printing with "application/json;as=Table;v=v1;g=meta.k8s.io".
    static bool wantsTable(const Http::Request &request);
    // A boolean query parameter as the API server reads it: "true" or "1".
    static bool isTrue(const QString &queryValue);

    // Answers (or delays) the request as the current faults say; false when it goes on as usual.
    bool injectFault(const Http::Request &request, Http::Responder *responder, const User &user);
    void serve(const Http::Request &request, Http::Responder *responder, const User &user);
    void serveControl(const Http::Request &request, Http::Responder *responder, const User &user);
    std::optional<RequestInfo> parseRequestInfo(const Http::Request &request) const;
    void get(const RequestInfo &info, const Http::Request &request, Http::Responder *responder);

    // discovery.cpp: /version, the health checks and discovery; false for a resource path.
    bool serveNonResource(const Http::Request &request, Http::Responder *responder, const User &user);
    void serveDiscovery(const Http::Request &request, Http::Responder *responder, const QStringList &segments);

    // listwatch.cpp
    void list(const RequestInfo &info, const Http::Request &request, Http::Responder *responder);
    void watch(const RequestInfo &info, const Http::Request &request, Http::Responder *responder);

    // writes.cpp
    void create(const RequestInfo &info, const Http::Request &request, Http::Responder *responder);
    void update(const RequestInfo &info, const Http::Request &request, Http::Responder *responder);
    void patch(const RequestInfo &info, const Http::Request &request, Http::Responder *responder);
    void remove(const RequestInfo &info, const Http::Request &request, Http::Responder *responder);
    // Runs the type's admission; false when it answered the request itself.
    bool admit(const ResourceType &type, QJsonObject &object, const Http::Request &request, Http::Responder *responder,
               Http::Headers &headers);

    // reviews.cpp
    void accessReview(const RequestInfo &info, const Http::Request &request, Http::Responder *responder, const User &user);
    void rulesReview(const Http::Request &request, Http::Responder *responder, const User &user);
    void selfReview(Http::Responder *responder, const User &user);

    ObjectStore *m_store;
    Authorizer *m_authorizer;
    Faults m_faults;
    QRandomGenerator m_random;
    std::deque<RecordedRequest> m_record;
    quint64 m_recorded = 0;
    int m_bookmarkIntervalMs = 60000;
    QString m_serverAddress;
    QList<QPointer<WatchStream>> m_watches;
    QHash<QString, SubresourceHandler> m_subresources;
    QHash<QString, Admission> m_admission;
    QHash<QString, std::function<QJsonArray()>> m_printerColumnSources;
    QHash<QString, QJsonArray> m_printerColumns;
    QJsonArray printerColumns(const QString &storage);
    void respondTable(Http::Responder *responder, const ResourceType &type, const std::vector<QJsonObject> &objects,
                      const Http::Request &request, const QJsonObject &listMetadata);
};

} // namespace Starforge::Sandbox
