#include "sandbox/cluster/eviction.h"

#include "sandbox/api/apiserver.h"
#include "sandbox/api/status.h"
#include "sandbox/controllers/controllerutil.h"
#include "sandbox/http/httpserver.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

#include <QJsonDocument>

namespace Starforge::Sandbox::Eviction {

namespace {

const ResourceType &podType()
{
    return *ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("pods"));
}

} // namespace

void serve(ObjectStore &store, const RequestInfo &info, const Http::Request &request, Http::Responder *responder)
{
    if (request.method != "POST") {
        ApiServer::respondStatus(responder, Status::methodNotAllowed());
        return;
    }
    QJsonParseError error;
    const QJsonObject eviction = QJsonDocument::fromJson(request.body, &error).object();
    if (error.error != QJsonParseError::NoError) {
        ApiServer::respondStatus(responder, Status::badRequest(QStringLiteral("the body of the request was in an unknown format: %1")
                                                                   .arg(error.errorString())));
        return;
    }
    const QString kind = eviction.value(QStringLiteral("kind")).toString();
    const QString apiVersion = eviction.value(QStringLiteral("apiVersion")).toString();
    if (kind != QLatin1String("Eviction") || (apiVersion != QLatin1String("policy/v1") && apiVersion != QLatin1String("policy/v1beta1"))) {
        ApiServer::respondStatus(responder, Status::badRequest(QStringLiteral("the body of the request must be a policy/v1 Eviction, not %1 %2")
                                                                   .arg(apiVersion, kind)));
        return;
    }
    if (eviction.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString() != info.name) {
        ApiServer::respondStatus(responder, Status::badRequest(QStringLiteral("name in URL does not match name in Eviction object")));
        return;
    }
    const ObjectPtr pod = store.get(podType().storage, info.ns, info.name);
    if (!pod) {
        ApiServer::respondStatus(responder, Status::notFound(QStringLiteral("pods"), info.name, QString(), QStringLiteral("pods")));
        return;
    }
    const QString phase = pod->object.value(QStringLiteral("status")).toObject().value(QStringLiteral("phase")).toString();
    if (phase != QLatin1String("Succeeded") && phase != QLatin1String("Failed")) {
        // A finished pod is past disrupting: it is deleted without the condition.
        store.modify(podType(), info.ns, info.name, [](QJsonObject &object) {
            QJsonObject status = object.value(QStringLiteral("status")).toObject();
            QJsonArray conditions;
            for (const QJsonValue &c : status.value(QStringLiteral("conditions")).toArray()) {
                if (c[QStringLiteral("type")].toString() != QLatin1String("DisruptionTarget")) conditions.append(c);
            }
            conditions.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("DisruptionTarget")}, {QStringLiteral("status"), QStringLiteral("True")},
                                          {QStringLiteral("reason"), QStringLiteral("EvictionByEvictionAPI")},
                                          {QStringLiteral("message"), QStringLiteral("Eviction API: evicting")},
                                          {QStringLiteral("lastProbeTime"), QJsonValue::Null},
                                          {QStringLiteral("lastTransitionTime"), nowRfc3339()}});
            status.insert(QStringLiteral("conditions"), conditions);
            object.insert(QStringLiteral("status"), status);
            return true;
        });
    }
    (void)store.remove(podType(), info.ns, info.name);
    ApiServer::respondJson(responder, 201, QJsonObject{{QStringLiteral("kind"), QStringLiteral("Status")}, {QStringLiteral("apiVersion"), QStringLiteral("v1")},
                                                       {QStringLiteral("metadata"), QJsonObject()}, {QStringLiteral("status"), QStringLiteral("Success")},
                                                       {QStringLiteral("code"), 201}});
}

} // namespace Starforge::Sandbox::Eviction
