#pragma once

// Status objects in the API server's format: kind Status, status Failure, reason, message,
// details and code, with the message texts of apimachinery's errors package.

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>

namespace Starforge::Sandbox::Status {

QJsonObject make(int code, const QString &reason, const QString &message, const QJsonObject &details = {});
QByteArray json(const QJsonObject &status);

QJsonObject details(const QString &name, const QString &group, const QString &kind);
QJsonObject notFound(const QString &qualifiedResource, const QString &name, const QString &group, const QString &plural);
QJsonObject routeNotFound();
QJsonObject badRequest(const QString &message);
QJsonObject methodNotAllowed();
QJsonObject unauthorized();
QJsonObject tooManyRequests(int retryAfterSeconds);
QJsonObject internalError(const QString &message);
// A 422 with causes [{reason, message, field}]: "<Kind> \"<name>\" is invalid: <field>: <message>, …".
QJsonObject invalid(const QString &kind, const QString &group, const QString &name, const QJsonArray &causes);
QJsonObject cause(const QString &reason, const QString &field, const QString &message);

} // namespace Starforge::Sandbox::Status
