// pods/proxy: the API server's proxy to a pod's port ("name", "name:port" or
// "scheme:name:port", a port by number or by name), forwarded over plain HTTP to the pod's
// loopback address by PodProxy.

#include "sandbox/cluster/kubelet.h"

#include "sandbox/api/status.h"
#include "sandbox/cluster/kubeletpod.h"
#include "sandbox/cluster/podproxy.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

#include <QJsonArray>

namespace Starforge::Sandbox {

using namespace KubeletCommon;

void Kubelet::serveProxy(const RequestInfo &info, const Http::Request &request, Http::Responder *responder)
{
    // "name", "name:port" or "scheme:name:port", as the API server splits a proxy ID.
    const QStringList parts = info.name.split(u':');
    QString scheme;
    QString name;
    QString portText;
    if (parts.size() == 3) {
        scheme = parts[0]; name = parts[1]; portText = parts[2];
    } else if (parts.size() == 2) {
        name = parts[0]; portText = parts[1];
    } else {
        name = parts.value(0);
    }
    if (scheme == QLatin1String("https")) {
        ApiServer::respondStatus(responder, Status::badRequest(QStringLiteral("the sandbox proxies to pods over http only")));
        return;
    }
    const ObjectPtr object = m_store->get(podType().storage, info.ns, name);
    if (!object) {
        ApiServer::respondStatus(responder, Status::notFound(QStringLiteral("pods"), name, QString(), QStringLiteral("pods")));
        return;
    }
    const QJsonObject status = object->object.value(QStringLiteral("status")).toObject();
    const QString ip = status.value(QStringLiteral("podIP")).toString();
    if (ip.isEmpty()) {
        ApiServer::respondStatus(responder, Status::make(503, QStringLiteral("ServiceUnavailable"),
                                                         QStringLiteral("pod %1 has no IP address yet").arg(name)));
        return;
    }
    quint16 port = 80;
    if (!portText.isEmpty()) {
        bool ok = false;
        port = portText.toUShort(&ok);
        if (!ok) {
            // A named port: the first container port of that name.
            for (const QJsonValue &c : object->object.value(QStringLiteral("spec")).toObject().value(QStringLiteral("containers")).toArray()) {
                for (const QJsonValue &p : c.toObject().value(QStringLiteral("ports")).toArray()) {
                    if (p.toObject().value(QStringLiteral("name")).toString() == portText) {
                        port = static_cast<quint16>(p.toObject().value(QStringLiteral("containerPort")).toInt());
                        ok = true;
                    }
                }
            }
            if (!ok) {
                ApiServer::respondStatus(responder, Status::badRequest(QStringLiteral("no port named %1 on pod %2").arg(portText, name)));
                return;
            }
        }
    } else {
        for (const QJsonValue &c : object->object.value(QStringLiteral("spec")).toObject().value(QStringLiteral("containers")).toArray()) {
            const QJsonArray ports = c.toObject().value(QStringLiteral("ports")).toArray();
            if (!ports.isEmpty()) {
                port = static_cast<quint16>(ports.first().toObject().value(QStringLiteral("containerPort")).toInt(80));
                break;
            }
        }
    }
    PodProxy::forward(ip, port, info.rest, request, responder);
}

} // namespace Starforge::Sandbox
