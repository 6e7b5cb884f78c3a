#pragma once

// The sandbox scheduler's own reading of what a pod asks of a node. The app's capacity verdict
// has its reading in core/kube; the sandbox keeps a separate one, written from the Kubernetes
// rules rather than shared, so that a mistake in either shows up as a disagreement in a test
// instead of being agreed on by both sides.
//
// The rules, as kube-scheduler's NodeResourcesFit and kubectl describe apply them
// (docs/kubernetes-facts.md, "Nodes and allocated resources"):
// - a container's request for a resource is its requests entry, or its limits entry when only
//   the limit is given (the API server's defaulting, applied here too for objects stored
//   without it);
// - app containers run together: their requests add up;
// - init containers run one after another before them, so the pod needs at least the largest
//   one; a restartable init container (restartPolicy Always, a "sidecar") keeps running beside
//   everything started after it, so it adds to the app containers' sum and to every init
//   container declared after it;
// - spec.overhead (the runtime class's cost) is added on top.
// Every resource is taken on its own: the pod's cpu can come from an init container while its
// memory comes from the app containers.

#include <QHash>
#include <QJsonObject>
#include <QString>

#include <optional>

namespace Starforge::Sandbox::PodRequests {

// Resource name ("cpu", "memory", "nvidia.com/gpu") → amount in thousandths of the resource's
// unit, so that cpu "500m" (500) and memory "1Ki" (1,024,000) share one integer type.
using MilliAmounts = QHash<QString, qint64>;

// A Kubernetes quantity ("8", "500m", "1.5Gi", "2e3", "+.5") in thousandths: a finer fraction is
// rounded up and a larger amount capped, as the API server does with quantities beyond the
// precision and range it keeps; here the cap is the largest qint64 (about 9.2 peta-units, far
// above any node). Nothing for text that is not a quantity ("64GB", "1.2.3", "").
std::optional<qint64> milliQuantity(const QString &text);

// One container's requests (limits standing in for missing requests). Quantities that do not
// parse, and negative ones, which the API server refuses, count as absent.
MilliAmounts ofContainer(const QJsonObject &container);

// The pod's effective requests by the rules above.
MilliAmounts ofPod(const QJsonObject &pod);

// Whether a pod's requests are taken from its node's allocatable: bound to a node and not yet
// Succeeded or Failed (a terminated pod's containers no longer run, so the scheduler frees its
// share even before the pod object is deleted).
bool holdsNodeResources(const QJsonObject &pod);

} // namespace Starforge::Sandbox::PodRequests
