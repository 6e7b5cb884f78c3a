#pragma once

// What went wrong with a Kubernetes API call, typed: the HTTP status, the Status object's
// reason and message as the server sent them, and a sentence a person can act on ("your token
// cannot list nodes at the cluster scope; ask for ..."). Built from a Status body, an HTTP
// status without one, or a transport failure.

#include "core/util/result.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

namespace Starforge::Kube {

struct ApiError
{
    enum class Kind {
        Transport,     // no HTTP answer: refused, TLS, timeout
        Unauthorized,  // 401: the token is wrong or expired
        Forbidden,     // 403: RBAC says no
        NotFound,      // 404
        Conflict,      // 409: AlreadyExists or Conflict
        Expired,       // 410: resourceVersion or continue token too old
        Invalid,       // 422 and 400
        TooManyRequests, // 429
        Server,        // 5xx
        Malformed,     // an answer we could not read
        Other,
    };

    Kind kind = Kind::Other;
    int httpStatus = 0;           // 0 for transport failures
    QString reason;               // Status.reason, e.g. "Forbidden", "Expired"
    QString serverMessage;        // Status.message verbatim
    QString message;              // the sentence for the user
    QJsonObject details;          // Status.details
    int retryAfterMs = -1;        // Retry-After or details.retryAfterSeconds

    bool isTransient() const;
    bool isExpired() const { return kind == Kind::Expired; }
    Error toError() const;

    // status: the HTTP status (0 when there was none); body: the reply body, a Status or not;
    // what: the action for the sentence, e.g. "list pods in namespace ml".
    static ApiError fromHttp(int status, const QByteArray &body, const QByteArray &retryAfterHeader, const QString &what);
    static ApiError fromStatusObject(const QJsonObject &status, const QString &what);
    static ApiError transport(const QString &sentence);
    static ApiError malformed(const QString &what, const QString &problem);
};

} // namespace Starforge::Kube
