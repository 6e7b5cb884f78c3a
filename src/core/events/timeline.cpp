#include "core/events/timeline.h"

#include "core/cluster/diagnosis.h"

#include <QCoreApplication>
#include <QHash>
#include <QJsonArray>
#include <QSet>

#include <algorithm>

namespace Starforge::Events {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(Timeline)
};

QString str(const QJsonObject &o, const char *key)
{
    return o.value(QLatin1String(key)).toString();
}

QJsonObject sub(const QJsonObject &o, const char *key)
{
    return o.value(QLatin1String(key)).toObject();
}

QDateTime timeOf(const QJsonObject &o, const char *key)
{
    return Kube::parseTime(str(o, key));
}

// Where a pod belongs, read from its name when the pod itself is gone: KubeRay names the head
// "<cluster>-head-xxxxx" and a worker "<cluster>-<group>-worker-xxxxx" (cutting the front of a
// name longer than 50 characters, so the suffix is what is sure), and the Job controller the
// submitter's pods "<rayjob>-xxxxx".
QString roleFromName(const QString &pod, const QStringList &clusters, const QString &rayJobName)
{
    for (const QString &cluster : clusters) {
        const QString prefix = cluster + u'-';
        if (!pod.startsWith(prefix))
            continue;
        const QString rest = pod.mid(prefix.size());
        if (rest.startsWith(QLatin1String("head-")))
            return QStringLiteral("head");
        const int worker = rest.lastIndexOf(QLatin1String("-worker-"));
        if (worker > 0)
            return QStringLiteral("worker ") + rest.left(worker);
    }
    if (pod.contains(QLatin1String("-head-")))
        return QStringLiteral("head");
    if (const int worker = pod.lastIndexOf(QLatin1String("-worker-")); worker > 0) {
        // The group is the part before "-worker-" after the cluster's random suffix, when the
        // name still has its front.
        QString group = pod.left(worker);
        if (!rayJobName.isEmpty() && group.startsWith(rayJobName + u'-')) {
            group = group.mid(rayJobName.size() + 1);
            const int dash = group.indexOf(u'-');
            group = dash >= 0 ? group.mid(dash + 1) : group;
        }
        return QStringLiteral("worker ") + group;
    }
    if (!rayJobName.isEmpty() && pod.startsWith(rayJobName + u'-'))
        return QStringLiteral("submitter");
    return QStringLiteral("pod");
}

struct PodSeen
{
    QString name;
    QString role;
    QDateTime created;
    QDateTime ended;
};

} // namespace

QString phaseName(Phase phase)
{
    switch (phase) {
    case Phase::Pending: return QStringLiteral("Pending");
    case Phase::Suspended: return QStringLiteral("Suspended");
    case Phase::Initializing: return QStringLiteral("Initializing");
    case Phase::Running: return QStringLiteral("Running");
    case Phase::Succeeded: return QStringLiteral("Succeeded");
    case Phase::Failed: return QStringLiteral("Failed");
    case Phase::Stopped: return QStringLiteral("Stopped");
    }
    return {};
}

Phase phaseOf(const StateChange &state)
{
    const QString &d = state.deploymentStatus;
    const QString &j = state.jobStatus;
    if (d == QLatin1String("Complete"))
        return j == QLatin1String("SUCCEEDED") ? Phase::Succeeded : j == QLatin1String("STOPPED") ? Phase::Stopped : Phase::Failed;
    if (d == QLatin1String("Failed") || d == QLatin1String("ValidationFailed"))
        return j == QLatin1String("STOPPED") ? Phase::Stopped : Phase::Failed;
    if (d == QLatin1String("Suspended") || d == QLatin1String("Suspending"))
        return Phase::Suspended;
    if (d == QLatin1String("Initializing") || d == QLatin1String("Waiting"))
        return Phase::Initializing;
    if (d == QLatin1String("Running") || d == QLatin1String("Retrying")) {
        // The cluster is up; the job runs once Ray runs the driver (PENDING is the runtime
        // environment being set up: the Capsule download).
        if (j == QLatin1String("RUNNING") || j == QLatin1String("SUCCEEDED") || j == QLatin1String("FAILED") || j == QLatin1String("STOPPED"))
            return Phase::Running;
        return Phase::Initializing;
    }
    return Phase::Pending;
}

Timeline Timeline::build(const TimelineInput &input)
{
    Timeline t;
    const QJsonObject rayJob = input.rayJob.value_or(QJsonObject());
    const QJsonObject jobMeta = sub(rayJob, "metadata");
    const QJsonObject jobStatus = sub(rayJob, "status");
    const QString rayJobName = str(jobMeta, "name").isEmpty() ? input.rayJobName : str(jobMeta, "name");

    // The events, typed once.
    QList<Kube::Event> events;
    events.reserve(input.events.size());
    for (const QJsonObject &e : input.events)
        events.append(Kube::Event::fromJson(e));

    // The clusters the job had, in the order they appeared.
    QStringList clusters;
    auto addCluster = [&clusters](const QString &name) {
        if (!name.isEmpty() && !clusters.contains(name))
            clusters.append(name);
    };
    addCluster(input.clusterName);
    addCluster(str(jobStatus, "rayClusterName"));
    if (input.rayCluster)
        addCluster(str(sub(*input.rayCluster, "metadata"), "name"));
    for (const QJsonObject &pod : input.pods)
        addCluster(sub(sub(pod, "metadata"), "labels").value(QStringLiteral("ray.io/cluster")).toString());
    for (const Kube::Event &e : std::as_const(events)) {
        if (e.regardingKind == QLatin1String("RayCluster"))
            addCluster(e.regardingName);
    }

    // The pods: the ones the cluster still has, then the ones only events remember.
    QList<PodSeen> pods;
    QHash<QString, int> podIndex;
    for (const QJsonObject &json : input.pods) {
        const Cluster::PodInfo info = Cluster::PodInfo::fromJson(json);
        const QJsonObject meta = sub(json, "metadata");
        PodSeen p{info.view.name, info.role(), timeOf(meta, "creationTimestamp"), timeOf(meta, "deletionTimestamp")};
        if (p.role == QLatin1String("pod"))
            p.role = roleFromName(p.name, clusters, rayJobName);
        if (p.name.isEmpty() || podIndex.contains(p.name))
            continue;
        podIndex.insert(p.name, pods.size());
        pods.append(p);
    }
    const int livePods = pods.size();
    for (const Kube::Event &e : std::as_const(events)) {
        if (e.regardingKind != QLatin1String("Pod") || e.regardingName.isEmpty())
            continue;
        const QDateTime first = e.firstSeen.isValid() ? e.firstSeen : e.lastSeen;
        auto it = podIndex.constFind(e.regardingName);
        if (it == podIndex.constEnd()) {
            podIndex.insert(e.regardingName, pods.size());
            // Gone: it lived at least from its first event to its last.
            pods.append(PodSeen{e.regardingName, roleFromName(e.regardingName, clusters, rayJobName), first, e.lastSeen});
            continue;
        }
        PodSeen &p = pods[*it];
        const bool live = *it < livePods;
        if (first.isValid() && (!p.created.isValid() || (!live && first < p.created)))
            p.created = first;
        if (!live && e.lastSeen.isValid() && (!p.ended.isValid() || e.lastSeen > p.ended))
            p.ended = e.lastSeen;
    }
    std::stable_sort(pods.begin(), pods.end(), [](const PodSeen &a, const PodSeen &b) {
        if (a.created.isValid() != b.created.isValid())
            return a.created.isValid();
        return a.created < b.created;
    });

    // The lanes.
    QHash<QString, int> laneOf;   // "<Kind>/<name>" -> lane
    {
        Lane lane;
        lane.kind = LaneKind::RayJob;
        lane.title = QStringLiteral("RayJob ") + rayJobName;
        lane.objectKind = QStringLiteral("RayJob");
        lane.objectName = rayJobName;
        lane.created = timeOf(jobMeta, "creationTimestamp");
        laneOf.insert(QStringLiteral("RayJob/") + rayJobName, t.lanes.size());
        t.lanes.append(lane);
    }
    for (const QString &cluster : std::as_const(clusters)) {
        Lane lane;
        lane.kind = LaneKind::RayCluster;
        lane.title = QStringLiteral("RayCluster ") + cluster;
        lane.objectKind = QStringLiteral("RayCluster");
        lane.objectName = cluster;
        if (input.rayCluster && str(sub(*input.rayCluster, "metadata"), "name") == cluster)
            lane.created = timeOf(sub(*input.rayCluster, "metadata"), "creationTimestamp");
        laneOf.insert(QStringLiteral("RayCluster/") + cluster, t.lanes.size());
        t.lanes.append(lane);
    }
    // Groups in a fixed order: head, worker groups by name, submitter, other pods.
    QStringList roles;
    for (const PodSeen &p : std::as_const(pods)) {
        if (!roles.contains(p.role))
            roles.append(p.role);
    }
    bool submitterEvents = false;
    for (const Kube::Event &e : std::as_const(events))
        submitterEvents = submitterEvents || (e.regardingKind == QLatin1String("Job") && e.regardingName == rayJobName);
    if (submitterEvents && !roles.contains(QLatin1String("submitter")))
        roles.append(QStringLiteral("submitter"));
    auto rank = [](const QString &role) {
        return role == QLatin1String("head") ? 0 : role.startsWith(QLatin1String("worker ")) ? 1 : role == QLatin1String("submitter") ? 2 : 3;
    };
    std::sort(roles.begin(), roles.end(), [&rank](const QString &a, const QString &b) {
        return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
    });
    for (const QString &role : std::as_const(roles)) {
        Lane group;
        if (role == QLatin1String("head")) {
            group.kind = LaneKind::HeadGroup;
            group.title = QStringLiteral("head");
        } else if (role.startsWith(QLatin1String("worker "))) {
            group.kind = LaneKind::WorkerGroup;
            group.title = QStringLiteral("workers ") + role.mid(7);
        } else if (role == QLatin1String("submitter")) {
            group.kind = LaneKind::Submitter;
            group.title = QStringLiteral("submitter");
            group.objectKind = QStringLiteral("Job");
            group.objectName = rayJobName;
            laneOf.insert(QStringLiteral("Job/") + rayJobName, t.lanes.size());
        } else {
            group.kind = LaneKind::Other;
            group.title = Text::tr("other pods");
        }
        t.lanes.append(group);
        const int groupLane = t.lanes.size() - 1;
        for (const PodSeen &p : std::as_const(pods)) {
            if (p.role != role)
                continue;
            Lane lane;
            lane.kind = LaneKind::Pod;
            lane.title = p.name;
            lane.objectKind = QStringLiteral("Pod");
            lane.objectName = p.name;
            lane.depth = 1;
            lane.created = p.created;
            lane.ended = p.ended;
            laneOf.insert(QStringLiteral("Pod/") + p.name, t.lanes.size());
            t.lanes.append(lane);
            // The group spans its pods.
            Lane &g = t.lanes[groupLane];
            if (p.created.isValid() && (!g.created.isValid() || p.created < g.created))
                g.created = p.created;
        }
    }

    // The items, each on its object's lane; an object of the job that has no lane gets one.
    for (int i = 0; i < events.size(); ++i) {
        const Kube::Event &e = events.at(i);
        const QString key = e.regardingKind + u'/' + e.regardingName;
        int lane = laneOf.value(key, -1);
        if (lane < 0) {
            Lane other;
            other.kind = LaneKind::Other;
            other.title = e.regardingKind.isEmpty() ? e.regardingName : e.regardingKind + u' ' + e.regardingName;
            other.objectKind = e.regardingKind;
            other.objectName = e.regardingName;
            lane = t.lanes.size();
            laneOf.insert(key, lane);
            t.lanes.append(other);
        }
        TimelineItem item;
        item.lane = lane;
        item.source = i;
        item.event = e;
        item.end = e.lastSeen.isValid() ? e.lastSeen : e.firstSeen;
        item.start = e.firstSeen.isValid() && e.firstSeen <= item.end ? e.firstSeen : item.end;
        if (!item.end.isValid())
            continue;   // an event without any time cannot be placed
        t.items.append(item);
    }
    std::stable_sort(t.items.begin(), t.items.end(), [](const TimelineItem &a, const TimelineItem &b) {
        return a.start != b.start ? a.start < b.start : a.end < b.end;
    });

    // The phases: the RayJob's own times before the first recorded state, the records after.
    QList<StateChange> changes;
    const QDateTime firstRecorded = input.states.isEmpty() ? QDateTime() : input.states.first().at;
    auto fromFields = [&](const QDateTime &at, const QString &deployment, const QString &status) {
        if (at.isValid() && (!firstRecorded.isValid() || at < firstRecorded))
            changes.append(StateChange{at, deployment, status});
    };
    if (input.rayJob) {
        const QJsonObject info = sub(jobStatus, "rayJobInfo");
        fromFields(timeOf(jobMeta, "creationTimestamp"), QString(), QString());
        fromFields(timeOf(jobStatus, "startTime"), QStringLiteral("Initializing"), QString());
        fromFields(timeOf(info, "startTime"), QStringLiteral("Running"), QStringLiteral("RUNNING"));
        const QDateTime endTime = timeOf(jobStatus, "endTime");
        if (endTime.isValid())
            fromFields(endTime, str(jobStatus, "jobDeploymentStatus"), str(jobStatus, "jobStatus"));
        std::stable_sort(changes.begin(), changes.end(), [](const StateChange &a, const StateChange &b) { return a.at < b.at; });
    }
    changes.append(input.states);
    for (const StateChange &c : std::as_const(changes)) {
        if (!c.at.isValid())
            continue;
        const Phase phase = phaseOf(c);
        if (!t.phases.isEmpty() && t.phases.last().phase == phase)
            continue;
        if (!t.phases.isEmpty() && c.at < t.phases.last().start)
            continue;   // out of order: the earlier record holds
        t.phases.append(PhaseBand{phase, c.at, QDateTime()});
    }

    // The axis.
    QDateTime first, last;
    auto widen = [&first, &last](const QDateTime &at) {
        if (!at.isValid())
            return;
        if (!first.isValid() || at < first)
            first = at;
        if (!last.isValid() || at > last)
            last = at;
    };
    for (const Lane &lane : std::as_const(t.lanes)) {
        widen(lane.created);
        widen(lane.ended);
    }
    for (const TimelineItem &item : std::as_const(t.items)) {
        widen(item.start);
        widen(item.end);
    }
    for (const PhaseBand &band : std::as_const(t.phases))
        widen(band.start);
    const bool ended = !t.phases.isEmpty() && t.phases.last().phase >= Phase::Succeeded;
    if (!ended && input.now.isValid() && first.isValid()) {
        widen(input.now);
        t.now = input.now;
    }
    if (first.isValid() && last <= first)
        last = first.addSecs(1);
    t.start = first;
    t.end = last;
    for (int i = 0; i < t.phases.size(); ++i)
        t.phases[i].end = i + 1 < t.phases.size() ? t.phases.at(i + 1).start : t.end;
    return t;
}

QList<int> Timeline::itemsOfLane(int lane) const
{
    QList<int> out;
    for (int i = 0; i < items.size(); ++i) {
        if (items.at(i).lane == lane)
            out.append(i);
    }
    return out;
}

int Timeline::indexOfKey(const QString &key) const
{
    for (int i = 0; i < items.size(); ++i) {
        if (items.at(i).key() == key)
            return i;
    }
    return -1;
}

std::optional<Phase> Timeline::phaseAt(const QDateTime &time) const
{
    std::optional<Phase> phase;
    for (const PhaseBand &band : phases) {
        if (band.start <= time)
            phase = band.phase;
    }
    return phase;
}

} // namespace Starforge::Events
