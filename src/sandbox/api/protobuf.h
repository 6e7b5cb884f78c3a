#pragma once

// kubectl's typed clients POST self-subject reviews as Kubernetes protobuf: the 4-byte magic
// "k8s\0", then a runtime.Unknown whose field 2 holds the object's own encoding. The sandbox
// reads the handful of string fields those reviews carry and answers in JSON, which kubectl
// accepts. Field numbers are those of k8s.io/api/authorization/v1/generated.proto.

#include "core/util/result.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

namespace Starforge::Sandbox::Protobuf {

// {"resourceAttributes": {...}} or {"nonResourceAttributes": {...}} as in the JSON form.
Result<QJsonObject> decodeSelfSubjectAccessReviewSpec(const QByteArray &body);
Result<QString> decodeSelfSubjectRulesReviewNamespace(const QByteArray &body);

} // namespace Starforge::Sandbox::Protobuf
