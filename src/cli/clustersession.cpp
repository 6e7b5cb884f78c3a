#include "cli/clustersession.h"

#include "core/kube/kubeclient.h"
#include "core/s3/s3client.h"

namespace Starforge::Cli {

ClusterSession::ClusterSession() = default;
ClusterSession::~ClusterSession() = default;

Result<S3::S3Client *> ClusterSession::bucket() const
{
    if (!s3) {
        return s3Problem.value_or(Error::invalid(QStringLiteral("no S3 settings")));
    }
    return s3.get();
}

Result<std::unique_ptr<ClusterSession>> ClusterSession::open(const Config::EffectiveConfig &config)
{
    if (const auto problems = config.problems(); !problems.isEmpty()) {
        return problems.first();
    }
    auto kube = Kube::ClientConfig::fromSettings(config);
    if (!kube) {
        return kube.error();
    }
    auto session = std::make_unique<ClusterSession>();
    session->config = config;
    session->settings = Job::ClusterSettings::fromConfig(config);
    session->kube = std::make_unique<Kube::KubeClient>(*kube);
    if (auto s3 = S3::ClientConfig::fromEffectiveConfig(config)) {
        session->s3 = std::make_unique<S3::S3Client>(*s3);
    } else {
        session->s3Problem = s3.error();
    }
    return session;
}

} // namespace Starforge::Cli
