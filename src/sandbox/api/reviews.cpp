// SelfSubjectAccessReview and SelfSubjectRulesReview (kubectl auth can-i, in JSON or protobuf):
// answered from the sandbox's RBAC rules for the asking user, never stored. SelfSubjectReview
// (kubectl auth whoami): the user as authentication saw it; its spec is empty, so the body,
// JSON or protobuf, is not read.

#include "sandbox/api/apiserver.h"

#include "sandbox/api/protobuf.h"
#include "sandbox/api/status.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace Starforge::Sandbox {

void ApiServer::accessReview(const RequestInfo &info, const Http::Request &request, Http::Responder *responder, const User &user)
{
    Q_UNUSED(info)
    QJsonObject spec;
    if (request.header("content-type").startsWith("application/vnd.kubernetes.protobuf")) {
        auto decoded = Protobuf::decodeSelfSubjectAccessReviewSpec(request.body);
        if (!decoded) {
            respondStatus(responder, Status::badRequest(decoded.error().message));
            return;
        }
        spec = *decoded;
    } else {
        spec = QJsonDocument::fromJson(request.body).object().value(QStringLiteral("spec")).toObject();
    }
    const QJsonObject resource = spec.value(QStringLiteral("resourceAttributes")).toObject();
    const QJsonObject nonResource = spec.value(QStringLiteral("nonResourceAttributes")).toObject();
    Attributes a;
    if (!resource.isEmpty()) {
        a.verb = resource.value(QStringLiteral("verb")).toString();
        a.group = resource.value(QStringLiteral("group")).toString();
        a.resource = resource.value(QStringLiteral("resource")).toString();
        const QString sub = resource.value(QStringLiteral("subresource")).toString();
        if (!sub.isEmpty()) {
            a.resource += u'/' + sub;
        }
        a.ns = resource.value(QStringLiteral("namespace")).toString();
        a.name = resource.value(QStringLiteral("name")).toString();
    } else if (!nonResource.isEmpty()) {
        a.isResource = false;
        a.verb = nonResource.value(QStringLiteral("verb")).toString();
        a.path = nonResource.value(QStringLiteral("path")).toString();
    } else {
        respondStatus(responder, Status::invalid(QStringLiteral("SelfSubjectAccessReview"), QStringLiteral("authorization.k8s.io"), QString(),
                                                 {Status::cause(QStringLiteral("FieldValueRequired"), QStringLiteral("spec.resourceAttributes"),
                                                                QStringLiteral("Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified"))}));
        return;
    }
    const bool allowed = m_authorizer->allowed(user, a);
    QJsonObject status{{QStringLiteral("allowed"), allowed}};
    if (allowed) {
        status.insert(QStringLiteral("reason"), QStringLiteral("allowed by the sandbox's RBAC rules for user \"%1\"").arg(user.name));
    }
    respondJson(responder, 201, QJsonObject{{QStringLiteral("kind"), QStringLiteral("SelfSubjectAccessReview")},
                                            {QStringLiteral("apiVersion"), QStringLiteral("authorization.k8s.io/v1")},
                                            {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("creationTimestamp"), QJsonValue::Null}}},
                                            {QStringLiteral("spec"), spec},
                                            {QStringLiteral("status"), status}});
}

void ApiServer::rulesReview(const Http::Request &request, Http::Responder *responder, const User &user)
{
    QString ns;
    if (request.header("content-type").startsWith("application/vnd.kubernetes.protobuf")) {
        auto decoded = Protobuf::decodeSelfSubjectRulesReviewNamespace(request.body);
        if (!decoded) {
            respondStatus(responder, Status::badRequest(decoded.error().message));
            return;
        }
        ns = *decoded;
    } else {
        ns = QJsonDocument::fromJson(request.body).object().value(QStringLiteral("spec")).toObject()
                 .value(QStringLiteral("namespace")).toString();
    }
    QJsonArray resourceRules;
    QJsonArray nonResourceRules;
    for (const RbacRule &r : m_authorizer->rulesIn(user, ns)) {
        if (!r.nonResourceURLs.isEmpty()) {
            nonResourceRules.append(QJsonObject{{QStringLiteral("verbs"), QJsonArray::fromStringList(r.verbs)},
                                                {QStringLiteral("nonResourceURLs"), QJsonArray::fromStringList(r.nonResourceURLs)}});
        } else {
            QJsonObject rule{{QStringLiteral("verbs"), QJsonArray::fromStringList(r.verbs)},
                             {QStringLiteral("apiGroups"), QJsonArray::fromStringList(r.apiGroups)},
                             {QStringLiteral("resources"), QJsonArray::fromStringList(r.resources)}};
            if (!r.resourceNames.isEmpty()) {
                rule.insert(QStringLiteral("resourceNames"), QJsonArray::fromStringList(r.resourceNames));
            }
            resourceRules.append(rule);
        }
    }
    respondJson(responder, 201, QJsonObject{{QStringLiteral("kind"), QStringLiteral("SelfSubjectRulesReview")},
                                            {QStringLiteral("apiVersion"), QStringLiteral("authorization.k8s.io/v1")},
                                            {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("creationTimestamp"), QJsonValue::Null}}},
                                            {QStringLiteral("spec"), QJsonObject{{QStringLiteral("namespace"), ns}}},
                                            {QStringLiteral("status"), QJsonObject{{QStringLiteral("resourceRules"), resourceRules},
                                                                                   {QStringLiteral("nonResourceRules"), nonResourceRules},
                                                                                   {QStringLiteral("incomplete"), false}}}});
}

void ApiServer::selfReview(Http::Responder *responder, const User &user)
{
    respondJson(responder, 201, QJsonObject{{QStringLiteral("kind"), QStringLiteral("SelfSubjectReview")},
                                            {QStringLiteral("apiVersion"), QStringLiteral("authentication.k8s.io/v1")},
                                            {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("creationTimestamp"), QJsonValue::Null}}},
                                            {QStringLiteral("status"), QJsonObject{{QStringLiteral("userInfo"),
                                                                                    QJsonObject{{QStringLiteral("username"), user.name},
                                                                                                {QStringLiteral("groups"), QJsonArray::fromStringList(user.groups)}}}}}});
}

} // namespace Starforge::Sandbox
