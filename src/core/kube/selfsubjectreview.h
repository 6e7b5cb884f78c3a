#pragma once

// Who the cluster takes the credentials for: a SelfSubjectReview (authentication.k8s.io/v1,
// GA in Kubernetes 1.28, what `kubectl auth whoami` sends), which every authenticated user may
// create. The username names a job's owner when the profile does not (docs/jobs.md).

#include "core/kube/apierror.h"

#include <QObject>
#include <QString>

#include <functional>
#include <optional>

namespace Starforge::Kube {

class KubeClient;

// done gets status.userInfo.username, or the ApiError (404 where the cluster is older than the
// API; a reply without a username is Malformed). Runs on context's thread, not at all when
// context is destroyed first.
void whoAmI(KubeClient *kube, const QObject *context, std::function<void(std::optional<QString> username, std::optional<ApiError> error)> done);

} // namespace Starforge::Kube
