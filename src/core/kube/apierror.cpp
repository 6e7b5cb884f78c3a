#include "core/kube/apierror.h"

#include "core/net/backoff.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>

namespace Starforge::Kube {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(Kube)
};

ApiError::Kind kindFor(int status, const QString &reason)
{
    if (reason == QLatin1String("Expired") || reason == QLatin1String("Gone") || status == 410) {
        return ApiError::Kind::Expired;
    }
    switch (status) {
    case 401: return ApiError::Kind::Unauthorized;
    case 403: return ApiError::Kind::Forbidden;
    case 404: return ApiError::Kind::NotFound;
    case 409: return ApiError::Kind::Conflict;
    case 400:
    case 422: return ApiError::Kind::Invalid;
    case 429: return ApiError::Kind::TooManyRequests;
    default: break;
    }
    return status >= 500 ? ApiError::Kind::Server : ApiError::Kind::Other;
}

QString sentence(const ApiError &e, const QString &what)
{
    const QString server = e.serverMessage.isEmpty() ? QString() : e.serverMessage;
    switch (e.kind) {
    case ApiError::Kind::Unauthorized:
        return Text::tr("The cluster did not accept the token (401 Unauthorized) when trying to %1. The token is wrong or "
                  "has expired: set a current one in the profile (FORGE_K8S_TOKEN).").arg(what);
    case ApiError::Kind::Forbidden:
        return Text::tr("Not allowed to %1: %2. Ask the cluster's administrator for this permission (see docs/kubernetes.md "
                  "for the Role Starforge needs).").arg(what, server.isEmpty() ? Text::tr("403 Forbidden") : server);
    case ApiError::Kind::NotFound:
        return server.isEmpty() ? Text::tr("Could not %1: not found on the server.").arg(what)
                                : Text::tr("Could not %1: %2.").arg(what, server);
    case ApiError::Kind::Expired:
        return Text::tr("The server's history no longer reaches back far enough to %1 (%2); starting over.").arg(what, server);
    case ApiError::Kind::TooManyRequests:
        return Text::tr("The API server is rate-limiting requests (429) while trying to %1; retrying later.").arg(what);
    case ApiError::Kind::Server:
        return Text::tr("The API server failed (%1) while trying to %2%3.")
            .arg(QString::number(e.httpStatus), what, server.isEmpty() ? QString() : QStringLiteral(": ") + server);
    case ApiError::Kind::Invalid:
    case ApiError::Kind::Conflict:
    case ApiError::Kind::Other:
        return Text::tr("Could not %1: %2").arg(what, server.isEmpty() ? Text::tr("HTTP %1").arg(e.httpStatus) : server);
    case ApiError::Kind::Transport:
    case ApiError::Kind::Malformed:
        break;
    }
    return server;
}

} // namespace

bool ApiError::isTransient() const
{
    return kind == Kind::Transport || kind == Kind::TooManyRequests || kind == Kind::Server;
}

Error ApiError::toError() const
{
    switch (kind) {
    case Kind::Transport:
    case Kind::TooManyRequests:
    case Kind::Server: return Error::unavailable(message);
    case Kind::NotFound: return Error::notFound(message);
    case Kind::Malformed: return Error::internal(message);
    default: return Error::invalid(message);
    }
}

ApiError ApiError::fromStatusObject(const QJsonObject &status, const QString &what)
{
    ApiError e;
    e.httpStatus = status.value(QLatin1String("code")).toInt();
    e.reason = status.value(QLatin1String("reason")).toString();
    e.serverMessage = status.value(QLatin1String("message")).toString();
    e.details = status.value(QLatin1String("details")).toObject();
    const int retrySeconds = e.details.value(QLatin1String("retryAfterSeconds")).toInt(-1);
    if (retrySeconds >= 0) {
        e.retryAfterMs = std::min(retrySeconds, 3600) * 1000;
    }
    e.kind = kindFor(e.httpStatus, e.reason);
    e.message = sentence(e, what);
    return e;
}

ApiError ApiError::fromHttp(int status, const QByteArray &body, const QByteArray &retryAfterHeader, const QString &what)
{
    QJsonParseError parseError{};
    const QJsonDocument document = QJsonDocument::fromJson(body, &parseError);
    QJsonObject object = document.object();
    if (object.value(QLatin1String("kind")).toString() != QLatin1String("Status")) {
        // A proxy's HTML page or an empty body: keep a short excerpt so the user sees who answered.
        object = QJsonObject{{QStringLiteral("code"), status},
                             {QStringLiteral("message"), QString::fromUtf8(body.left(200)).simplified()}};
    }
    if (object.value(QLatin1String("code")).toInt() == 0) {
        object.insert(QStringLiteral("code"), status);
    }
    ApiError e = fromStatusObject(object, what);
    e.httpStatus = status;
    e.kind = kindFor(status, e.reason);
    const int headerMs = Net::retryAfterMs(retryAfterHeader);
    if (headerMs >= 0) {
        e.retryAfterMs = headerMs;
    }
    e.message = sentence(e, what);
    return e;
}

ApiError ApiError::transport(const QString &text)
{
    ApiError e;
    e.kind = Kind::Transport;
    e.message = text;
    return e;
}

ApiError ApiError::malformed(const QString &what, const QString &problem)
{
    ApiError e;
    e.kind = Kind::Malformed;
    e.message = Text::tr("The API server's answer to %1 could not be read: %2.").arg(what, problem);
    return e;
}

} // namespace Starforge::Kube
