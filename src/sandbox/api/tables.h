#pragma once

// Server-side printing: the meta.k8s.io/v1 Table kubectl asks for (Accept: …;as=Table), with
// the columns the API server's printers give built-in types (nodes, pods, events, jobs,
// namespaces, services) and a CRD's additionalPrinterColumns for custom resources. Without it
// kubectl prints only NAME and AGE.

#include <QJsonArray>
#include <QJsonObject>
#include <QString>

#include <vector>

namespace Starforge::Sandbox {

struct ResourceType;

namespace Tables {

// includeObject: None, Metadata (the default) or Object. printerColumns: a CRD's, or empty.
QJsonObject build(const ResourceType &type, const std::vector<QJsonObject> &objects, const QJsonArray &printerColumns,
                  const QString &includeObject, const QJsonObject &listMetadata);
// kubectl's HumanDuration of the time since an RFC 3339 timestamp ("5m", "3h12m", "4d").
QString age(const QString &rfc3339);

} // namespace Tables
} // namespace Starforge::Sandbox
