#include "sandbox/api/status.h"

#include <QJsonDocument>
#include <QStringList>

namespace Starforge::Sandbox::Status {

QJsonObject make(int code, const QString &reason, const QString &message, const QJsonObject &details)
{
    QJsonObject s{{QStringLiteral("kind"), QStringLiteral("Status")},
                  {QStringLiteral("apiVersion"), QStringLiteral("v1")},
                  {QStringLiteral("metadata"), QJsonObject()},
                  {QStringLiteral("status"), QStringLiteral("Failure")},
                  {QStringLiteral("message"), message},
                  {QStringLiteral("reason"), reason},
                  {QStringLiteral("code"), code}};
    if (!details.isEmpty()) {
        s.insert(QStringLiteral("details"), details);
    }
    return s;
}

QByteArray json(const QJsonObject &status)
{
    return QJsonDocument(status).toJson(QJsonDocument::Compact) + '\n';
}

QJsonObject details(const QString &name, const QString &group, const QString &kind)
{
    QJsonObject d;
    if (!name.isEmpty()) {
        d.insert(QStringLiteral("name"), name);
    }
    if (!group.isEmpty()) {
        d.insert(QStringLiteral("group"), group);
    }
    d.insert(QStringLiteral("kind"), kind);
    return d;
}

QJsonObject notFound(const QString &qualifiedResource, const QString &name, const QString &group, const QString &plural)
{
    return make(404, QStringLiteral("NotFound"), QStringLiteral("%1 \"%2\" not found").arg(qualifiedResource, name),
                details(name, group, plural));
}

QJsonObject routeNotFound()
{
    return make(404, QStringLiteral("NotFound"), QStringLiteral("the server could not find the requested resource"),
                QJsonObject());
}

QJsonObject badRequest(const QString &message)
{
    return make(400, QStringLiteral("BadRequest"), message);
}

QJsonObject methodNotAllowed()
{
    return make(405, QStringLiteral("MethodNotAllowed"),
                QStringLiteral("the server does not allow this method on the requested resource"));
}

QJsonObject unauthorized()
{
    return make(401, QStringLiteral("Unauthorized"), QStringLiteral("Unauthorized"));
}

QJsonObject tooManyRequests(int retryAfterSeconds)
{
    return make(429, QStringLiteral("TooManyRequests"),
                QStringLiteral("Too many requests, please try again later."),
                QJsonObject{{QStringLiteral("retryAfterSeconds"), retryAfterSeconds}});
}

QJsonObject internalError(const QString &message)
{
    return make(500, QStringLiteral("InternalError"),
                QStringLiteral("Internal error occurred: %1").arg(message),
                QJsonObject{{QStringLiteral("causes"), QJsonArray{QJsonObject{{QStringLiteral("message"), message}}}}});
}

QJsonObject cause(const QString &reason, const QString &field, const QString &message)
{
    return QJsonObject{{QStringLiteral("reason"), reason}, {QStringLiteral("message"), message}, {QStringLiteral("field"), field}};
}

QJsonObject invalid(const QString &kind, const QString &group, const QString &name, const QJsonArray &causes)
{
    QStringList parts;
    for (const QJsonValue &c : causes) {
        const QJsonObject o = c.toObject();
        parts << QStringLiteral("%1: %2").arg(o.value(QStringLiteral("field")).toString(), o.value(QStringLiteral("message")).toString());
    }
    const QString list = parts.size() == 1 ? parts.first() : u'[' + parts.join(QStringLiteral(", ")) + u']';
    QJsonObject d = details(name, group, kind);
    d.insert(QStringLiteral("causes"), causes);
    return make(422, QStringLiteral("Invalid"), QStringLiteral("%1 \"%2\" is invalid: %3").arg(kind, name, list), d);
}

} // namespace Starforge::Sandbox::Status
