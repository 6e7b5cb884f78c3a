#pragma once

// The cluster and bucket a job command talks to: the settings in force (a profile with its
// keychain secrets, or the sandbox's connection file), a Kubernetes client and an S3 client.

#include "core/config/effectiveconfig.h"
#include "core/job/rayjobbuilder.h"
#include "core/util/result.h"

#include <memory>
#include <optional>

namespace Starforge::Kube {
class KubeClient;
}
namespace Starforge::S3 {
class S3Client;
}

namespace Starforge::Cli {

// How long `submit --wait`, `stop` and `logs -f` keep trying a cluster that does not answer
// before giving up (a stopped sandbox or a refused token ends them at once). Long enough for a
// VPN to come back during an hours-long wait; the job goes on either way.
inline constexpr int LostClusterSeconds = 300;

struct ClusterSession
{
    Config::EffectiveConfig config;
    Job::ClusterSettings settings;
    std::unique_ptr<Kube::KubeClient> kube;
    std::unique_ptr<S3::S3Client> s3;      // null when the profile has no usable S3 settings
    std::optional<Error> s3Problem;        // why s3 is null

    ClusterSession();
    ~ClusterSession();

    QString ns() const { return settings.ns; }
    // s3, or the sentence saying which setting to fix.
    Result<S3::S3Client *> bucket() const;

    // Clients for these settings; an error names the setting to fix.
    static Result<std::unique_ptr<ClusterSession>> open(const Config::EffectiveConfig &config);
};

} // namespace Starforge::Cli
