#include "core/kube/selfsubjectreview.h"

#include "core/kube/kubeclient.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>

namespace Starforge::Kube {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(Selfsubjectreview)
};

} // namespace

void whoAmI(KubeClient *kube, const QObject *context, std::function<void(std::optional<QString>, std::optional<ApiError>)> done)
{
    ApiRequest request;
    request.method = "POST";
    request.path = QStringLiteral("/apis/authentication.k8s.io/v1/selfsubjectreviews");
    request.body = QJsonDocument(QJsonObject{{QStringLiteral("apiVersion"), QStringLiteral("authentication.k8s.io/v1")},
                                             {QStringLiteral("kind"), QStringLiteral("SelfSubjectReview")}})
                       .toJson(QJsonDocument::Compact);
    request.what = QCoreApplication::translate("Kube", "ask the cluster who you are (SelfSubjectReview)");
    kube->send(request, context, [done = std::move(done), what = request.what](const ApiResult &result) {
        if (!result.ok()) {
            done(std::nullopt, result.error);
            return;
        }
        const QString username = result.json()[QStringLiteral("status")][QStringLiteral("userInfo")][QStringLiteral("username")].toString();
        if (username.isEmpty()) {
            done(std::nullopt, ApiError::malformed(what, Text::tr("the SelfSubjectReview has no status.userInfo.username")));
            return;
        }
        done(username, std::nullopt);
    });
}

} // namespace Starforge::Kube
