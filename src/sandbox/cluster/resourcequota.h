#pragma once

// core/v1 ResourceQuota as the API server's quota admission and the quota controller apply it to
// pods (docs/kubernetes-facts.md, "Resource quotas"): at pod create, every quota of the
// namespace whose spec.hard names something the pod uses is checked, in name order, and the
// first one the pod would push over its hard limit refuses it with the real 403 text
// `pods "<name>" is forbidden: exceeded quota: <quota>, requested: k=v, used: k=v, limited: k=v`.
// What a pod uses, as the pod evaluator counts it: pods and count/pods 1; cpu and requests.cpu,
// memory and requests.memory, ephemeral-storage and requests.ephemeral-storage its effective
// requests (PodRequests::ofPod); limits.cpu and limits.memory its limits; an extended resource
// (nvidia.com/gpu) only as requests.<name>. Pods that are Succeeded or Failed use nothing.
// Scopes, scope selectors and the "must specify" refusal of pods without requests are not
// modelled (docs/sandbox.md, "Where it differs from a real cluster").
//
// The controller half keeps each quota's status.hard (spec.hard) and status.used current as
// pods come and go, so `kubectl describe quota` and clients see the numbers the check uses.

#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QSet>
#include <QString>

#include <optional>

namespace Starforge::Sandbox {

class ObjectStore;
struct Change;

namespace ResourceQuotas {

// The "exceeded quota: …" part of the refusal when creating pod in ns would exceed a quota;
// nothing when every quota allows it.
std::optional<QString> exceeded(const ObjectStore &store, const QString &ns, const QJsonObject &pod);

// The whole message of the API server's 403 for that refusal.
QString forbiddenMessage(const QString &podName, const QString &exceededText);

// The 403 Status object the API server answers with.
QJsonObject forbiddenStatus(const QString &podName, const QString &exceededText);

// What a pod uses of each resource a quota can name, in thousandths (as PodRequests).
QHash<QString, qint64> usageOf(const QJsonObject &pod);

// The quota's status {hard, used} as the quota controller writes it, from the pods of ns.
QJsonObject statusOf(const ObjectStore &store, const QJsonObject &quota);

} // namespace ResourceQuotas

// Keeps status.hard and status.used of every ResourceQuota current.
class QuotaController final : public QObject
{
    Q_OBJECT
public:
    explicit QuotaController(ObjectStore *store, QObject *parent = nullptr);

private:
    void onChange(const Change &change);
    void refresh(const QString &ns);

    ObjectStore *m_store;
    QSet<QString> m_pending;
};

} // namespace Starforge::Sandbox
