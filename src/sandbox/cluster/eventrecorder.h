#pragma once

// Writes Kubernetes Events the way the real components do. The kubelet uses the legacy
// recorder (count, firstTimestamp, lastTimestamp, source); the scheduler and KubeRay v1.7 use
// the events.k8s.io recorder (eventTime, reportingController, action, series on repeats).
// Repeats of the same event update the existing object instead of adding one.

#include <QHash>
#include <QJsonObject>
#include <QString>

namespace Starforge::Sandbox {

class ObjectStore;

class EventRecorder
{
public:
    enum class Api { Legacy, EventsV1 };

    explicit EventRecorder(ObjectStore *store) : m_store(store) {}

    // fieldPath names the part of the object, e.g. "spec.containers{main}" for a container.
    void record(const QJsonObject &regarding, const QString &type, const QString &reason, const QString &message,
                const QString &component, Api api, const QString &action = {}, const QString &host = {},
                const QString &fieldPath = {});

    // {kind, namespace, name, uid, apiVersion, resourceVersion} of an object.
    static QJsonObject reference(const QJsonObject &object, const QString &fieldPath = {});

private:
    ObjectStore *m_store;
    QHash<QString, QString> m_names; // aggregation key -> event name
};

} // namespace Starforge::Sandbox
