#pragma once

// The app's Kubernetes API client: a bearer token, a client certificate or an exec credential
// plugin, TLS through the one request policy, JSON in and out, errors as typed ApiErrors. Requests are asynchronous; results are delivered to a
// context object and dropped (the request aborted) when it goes away. Streams (watch,
// pods/log, pods/proxy) are open replies the caller reads as bytes arrive.

#include "core/config/execplugin.h"
#include "core/kube/apierror.h"
#include "core/net/requestpolicy.h"
#include "core/util/result.h"

#include <QByteArray>
#include <QJsonObject>
#include <QObject>
#include <QUrl>
#include <QUrlQuery>

#include <functional>
#include <optional>

class QIODevice;
class QNetworkAccessManager;
class QNetworkReply;
class QNetworkRequest;

namespace Starforge::Config {
class EffectiveConfig;
}

namespace Starforge::Kube {

class ExecCredentialProvider;

struct ClientConfig
{
    QUrl server;                 // https://host:port
    QByteArray token;
    Net::TlsSettings tls;        // CA trust, a client certificate, tls-server-name
    std::optional<Config::ExecPlugin> exec;   // when set, its credential is used instead of token
    int timeoutMs = 30000;       // ordinary requests; streams have none
    // The largest answer send() holds in memory. A list page of 500 pods is a few MiB; an
    // answer past this is refused with a sentence rather than growing the process without end.
    qint64 maxBodyBytes = 128 * 1024 * 1024;
    QString ns;                  // the namespace the app works in
    QString proxyUrl;            // FORGE_K8S_PROXY_URL; empty: the environment's (Net::proxyFor)

    // From a profile's effective settings (FORGE_K8S_API_SERVER; FORGE_K8S_EXEC, the
    // FORGE_K8S_CLIENT_CERT_* and _KEY_* pair, or FORGE_K8S_TOKEN / FORGE_K8S_TOKEN_FILE;
    // FORGE_K8S_CA_DATA or FORGE_K8S_CA_FILE, FORGE_K8S_TLS_SERVER_NAME,
    // FORGE_K8S_INSECURE_SKIP_TLS_VERIFY, FORGE_K8S_PROXY_URL, FORGE_K8S_NAMESPACE); errors say
    // which setting to fix.
    static Result<ClientConfig> fromSettings(const Config::EffectiveConfig &config);
};

struct ApiRequest
{
    QByteArray method = "GET";
    QString path;                // "/api/v1/namespaces/ml/pods"
    QUrlQuery query;
    QByteArray body;
    QByteArray contentType = "application/json";
    QString what;                // the action in words, for error sentences: "list pods"
    int timeoutMs = -1;          // -1: the client's; 0: none
    // A successful (2xx) body is written here as it arrives instead of being held: memory stays
    // at one read buffer and the size is bounded by the disk, not by maxBodyBytes. ApiResult's
    // body is then empty and streamedBytes says how much was written. An error answer is still
    // read into ApiResult::body (bounded) for its Status. The device must stay open until done.
    QIODevice *sink = nullptr;
    qint64 maxBodyBytes = -1;    // -1: the client's (ClientConfig::maxBodyBytes)
};

struct ApiResult
{
    int status = 0;
    QByteArray body;
    QByteArray retryAfter;
    qint64 streamedBytes = 0;    // written to ApiRequest::sink
    std::optional<ApiError> error;

    bool ok() const { return !error.has_value(); }
    // The body as a JSON object; a malformed or non-object body reads as an empty object (the
    // typed views then read empty fields), so check a required field before trusting it.
    QJsonObject json() const;
};

class KubeClient final : public QObject
{
    Q_OBJECT
public:
    explicit KubeClient(ClientConfig config, QObject *parent = nullptr);
    ~KubeClient() override;

    const ClientConfig &config() const { return m_config; }
    QNetworkAccessManager *network() const { return m_network; }

    using Callback = std::function<void(const ApiResult &)>;

    // Sends request; done runs once on context's thread unless context is destroyed first, in
    // which case the request is aborted. Returns the reply for cancellation (it deletes itself);
    // nullptr when the request waits for the exec plugin to sign in first (then only destroying
    // context cancels it). With an exec plugin, a 401 renews the credential and the request goes
    // out once more before done sees it.
    QNetworkReply *send(const ApiRequest &request, const QObject *context, Callback done);

    // An open streaming reply (watch, follow, proxy) with no transfer timeout unless given one;
    // the caller owns it and reads it as data arrives. Its HTTP status is known at metaDataChanged.
    // What stays unread is bounded as for send() (guardBody), so read it on readyRead.
    QNetworkReply *openStream(const ApiRequest &request);

    QUrl url(const QString &path, const QUrlQuery &query = {}) const;

    // The exec credential plugin's runner, or nullptr; the GUI listens to it for sign-in prompts.
    ExecCredentialProvider *credentials() const { return m_exec; }

    // Collects the outcome of a finished reply (status, body, error sentence). A reply that
    // guardBody() stopped for its size, or whose sink failed, reads as that error.
    static ApiResult collect(QNetworkReply *reply, const QString &what);

    // Bounds what reply may hold unread to maxBytes: past it the reply is aborted and collect()
    // names the limit. With sink, a 2xx body goes there as it arrives instead (see ApiRequest).
    static void guardBody(QNetworkReply *reply, qint64 maxBytes, QIODevice *sink = nullptr);

private:
    QNetworkReply *start(const ApiRequest &request, int timeoutMs);
    // renewed: the credential was renewed for this request already; a second 401 stands.
    QNetworkReply *sendSignedIn(const ApiRequest &request, const QObject *context, Callback done, bool renewed);
    QNetworkReply *sendNow(const ApiRequest &request, const QObject *context, Callback done, bool renewed);
    void authenticate(QNetworkRequest &request, int *generation) const;
    // A 401 on a reply sent with generation's exec credential.
    void refused(int generation);

    ClientConfig m_config;
    Net::RequestPolicy m_policy;
    QNetworkAccessManager *m_network;
    ExecCredentialProvider *m_exec = nullptr;
    int m_identityGeneration = -1;   // the exec certificate the connection cache was made with
};

} // namespace Starforge::Kube
