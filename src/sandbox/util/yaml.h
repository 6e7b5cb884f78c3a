#pragma once

// YAML (CRDs, runtimeEnvYAML, sample manifests) as JSON values. Quoted scalars stay strings;
// plain ones become booleans or numbers when they read as such, as Kubernetes' YAML decoding does.

#include "core/util/result.h"

#include <QByteArray>
#include <QJsonValue>
#include <QList>

namespace Starforge::Sandbox::Yaml {

Result<QJsonValue> toJson(const QByteArray &yaml);
// Every document of a multi-document stream.
Result<QList<QJsonValue>> allToJson(const QByteArray &yaml);

} // namespace Starforge::Sandbox::Yaml
