#pragma once

// KubeRay's CRDs as an operator release installs them. The sandbox embeds v1.7's (SOURCE.md)
// and pretends to be an older operator by taking out what later releases added to the RayJob
// schema (kuberay.md, "Version differences"): below 1.7 status.jobStatusCheckFailureStartTime,
// below 1.6 spec.preRunningDeadlineSeconds, below 1.5 spec.deletionStrategy (v1.4 had the string
// deletionPolicy instead). Nothing else differs: the RayCluster CRD, the controllers' events and
// statuses stay v1.7's. The same object is admitted against and served at
// /apis/apiextensions.k8s.io/v1/customresourcedefinitions, so a client that infers the version
// from the schema sees what it would see on that release.

#include "core/util/result.h"

#include <QJsonObject>
#include <QString>
#include <QVersionNumber>

namespace Starforge::Sandbox::KubeRayCrds {

// The releases the sandbox can pretend to be.
inline const QVersionNumber Oldest(1, 4);
inline const QVersionNumber Newest(1, 7);

// "1.6", "v1.6.0": the minor release; a sentence naming the range otherwise.
Result<QVersionNumber> parseVersion(const QString &text);
// Whether version (major.minor) is one of the releases above.
bool isSupported(const QVersionNumber &version);

// The CRD of rayjobs or rayclusters for that release, as in its YAML file (parsed once per
// process); an empty object for another plural.
QJsonObject crd(const QString &plural, const QVersionNumber &version);

// What the API server returns for it: the CRD with the server's defaults
// (spec.conversion.strategy None) and the status of an established CRD (acceptedNames,
// NamesAccepted and Established conditions at now, storedVersions).
QJsonObject served(const QString &plural, const QVersionNumber &version, const QString &now);

} // namespace Starforge::Sandbox::KubeRayCrds
