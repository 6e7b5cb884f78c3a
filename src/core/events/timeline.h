#pragma once

// One job's events on a time axis (docs/events.md): the lanes of the objects a RayJob makes, each
// event placed on its object's lane, and the job's phases behind them. Pure: it reads the
// RayJob, its RayCluster, the pods and events as the API (or the archive, or the journal) gives
// them, and lays them out; the GUI's TimelineView paints it and `starforge-cli events
// --timeline` prints it (timelinetext.cpp).
//
// Lanes, top to bottom:
//   RayJob <name>
//   RayCluster <name>           one per cluster the job had (a retry makes a new one)
//   head                        a group: the head pod(s) below it
//   workers <group>             a group per worker group: its pods below it
//   submitter                   the submitter Job's own events (BackoffLimitExceeded, ...), its
//                               pods below it
// A pod's lane exists from its creation (or its first event, for a pod that is gone) to its
// deletion or now: pods appear as they are created. Which group a pod belongs to comes from its
// labels when the pod is known (PodInfo::role), else from its name, which KubeRay builds as
// "<cluster>-head-xxxxx" and "<cluster>-<group>-worker-xxxxx" (docs/kuberay.md), and the Job
// controller as "<rayjob>-xxxxx".
//
// An event is a mark at its last sighting; one seen more than once (count > 1, or the
// events.k8s.io series) is a span from firstSeen to lastSeen carrying its count.
//
// Phases, behind every lane: Pending (created, nothing started yet, or suspended), Initializing
// (the RayCluster coming up, Ray setting up the runtime environment), Running (Ray runs the
// driver), and the end (Succeeded, Failed or Stopped). They are read from the job's recorded
// state changes when there are any (the journal keeps each as it was seen), else from the
// RayJob's own times: status.startTime (the operator's start of initialisation),
// status.rayJobInfo.startTime (Ray accepted the job: the driver starts after the runtime
// environment, so Running begins a little early on this path) and status.endTime.

#include "core/kube/resources.h"

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace Starforge::Events {

enum class LaneKind {
    RayJob,
    RayCluster,
    HeadGroup,
    WorkerGroup,
    Submitter,     // the submitter Job
    Pod,           // under the group lane before it
    Other,         // an object of the job that is none of these
};

struct Lane
{
    LaneKind kind = LaneKind::Other;
    QString title;          // "RayJob grpo-x", "head", "workers gpu-0", "submitter", a pod's name
    QString objectKind;     // the Kubernetes kind the lane's own events are about ("" for a group)
    QString objectName;
    int depth = 0;          // 1 for a pod under its group
    QDateTime created;      // when the object appeared (invalid: not known)
    QDateTime ended;        // deleted or gone (invalid: still there, or not known)
};

struct TimelineItem
{
    int lane = -1;
    int source = -1;        // index into TimelineInput::events
    Kube::Event event;
    QDateTime start;        // firstSeen (lastSeen when unknown)
    QDateTime end;          // lastSeen
    bool warning() const { return event.type == QLatin1String("Warning"); }
    // Seen more than once over a stretch of time: drawn as a span with its count.
    bool isSpan() const { return event.count > 1 && start.isValid() && end > start; }
    // The event object's identity ("ns/name"), as the diagnosis' evidence names it too.
    QString key() const { return event.ns + u'/' + event.name; }
};

enum class Phase { Pending, Suspended, Initializing, Running, Succeeded, Failed, Stopped };
QString phaseName(Phase phase);

struct PhaseBand
{
    Phase phase = Phase::Pending;
    QDateTime start;
    QDateTime end;          // the next band's start, or the axis' end for the last
};

// A RayJob status seen at a moment: the journal's record of it, or one made up from the RayJob.
struct StateChange
{
    QDateTime at;
    QString deploymentStatus;   // status.jobDeploymentStatus
    QString jobStatus;          // status.jobStatus
};

struct TimelineInput
{
    std::optional<QJsonObject> rayJob;
    std::optional<QJsonObject> rayCluster;
    QList<QJsonObject> pods;
    QList<QJsonObject> events;          // any order; duplicates are the caller's to merge
    QList<StateChange> states;          // oldest first; may be empty
    QString rayJobName;                 // when there is no RayJob object (it is gone)
    QString clusterName;
    QDateTime now;                      // the axis' end for a job still going (invalid: its last event)
};

struct Timeline
{
    QList<Lane> lanes;
    QList<TimelineItem> items;          // ordered by start, then end
    QList<PhaseBand> phases;
    QDateTime start;                    // the axis: the earliest of creation, phases and events
    QDateTime end;
    QDateTime now;                      // the input's now, for a job still going (invalid otherwise)

    static Timeline build(const TimelineInput &input);

    bool isEmpty() const { return items.isEmpty() && phases.isEmpty(); }
    // The items of one lane, in time order (indexes into items).
    QList<int> itemsOfLane(int lane) const;
    // The item of this event ("ns/name"), -1 when none.
    int indexOfKey(const QString &key) const;
    // The phase at a time (nullopt before the first band).
    std::optional<Phase> phaseAt(const QDateTime &time) const;

    // The lanes as text for a terminal (`starforge-cli events JOB --timeline`): a phase strip and
    // one row per lane over `columns` columns of time, then the events in time order with the
    // lane each is on. `evidence` keys are marked as the diagnosis' evidence.
    QString toText(int columns = 60, const QStringList &evidence = {}) const;
};

// The RayJob's status at this moment, for StateChange and the phase it stands for.
Phase phaseOf(const StateChange &state);

} // namespace Starforge::Events
