#pragma once

// The default scheduler, as far as the app can see it: filters in upstream order
// (NodeUnschedulable, TaintToleration, NodeAffinity, NodeResourcesFit), binding with a
// Scheduled event, and for a pod that fits nowhere the exact FitError text (histogram, then
// the preemption part) on a PodScheduled=False condition and a FailedScheduling event.
// Unschedulable pods are retried when the cluster changes in a way that could free room.

#include <QObject>
#include <QTimer>

namespace Starforge::Sandbox {

class ObjectStore;
class EventRecorder;
struct Change;

class Scheduler final : public QObject
{
    Q_OBJECT
public:
    Scheduler(ObjectStore *store, EventRecorder *events, QObject *parent = nullptr);

    // One scheduling pass over every pending pod, oldest first. Public for tests.
    void schedulePending();

    // The FitError text for a pod against the current nodes (empty when it fits somewhere).
    QString fitError(const QJsonObject &pod) const;

private:
    void onChange(const Change &change);
    void requestPass();

    ObjectStore *m_store;
    EventRecorder *m_events;
    QTimer m_pass;
    QTimer m_retry;
};

} // namespace Starforge::Sandbox
