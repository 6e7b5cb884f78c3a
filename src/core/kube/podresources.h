#pragma once

// What a pod asks of a node, by the rules kubectl's describe and the scheduler share: the sum
// of the app containers, at least the largest init container (sidecar init containers, those
// with restartPolicy Always, add up with the app containers), plus spec.overhead. A container's
// request defaults to its limit when only the limit is given. Values are milli-units.

#include <QHash>
#include <QJsonObject>
#include <QString>

namespace Starforge::Kube {

using ResourceMilli = QHash<QString, qint64>;

ResourceMilli podRequests(const QJsonObject &pod);
// Pods that hold node resources: bound, and not Succeeded or Failed.
bool holdsNodeResources(const QJsonObject &pod);

} // namespace Starforge::Kube
