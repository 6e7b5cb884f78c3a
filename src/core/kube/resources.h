#pragma once

// Typed views over the API's JSON for what the app shows and decides on. Reading never fails:
// a missing or mistyped field reads as empty, zero or false, so a malformed server reply can
// leave a view sparse but never crash the app.

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace Starforge::Kube {

struct Taint
{
    QString key;
    QString value;
    QString effect;
};

struct Node
{
    QString name;
    QString uid;
    QJsonObject labels;
    QString series;            // the value of the configured GPU series label
    int gpuCapacity = 0;       // nvidia.com/gpu
    int gpuAllocatable = 0;
    bool unschedulable = false;
    QList<Taint> taints;
    bool ready = false;
    QString readyReason;

    static Node fromJson(const QJsonObject &node, const QString &seriesLabel);
};

struct Condition
{
    QString type;
    QString status;
    QString reason;
    QString message;
};

struct ContainerState
{
    QString name;
    bool ready = false;
    int restartCount = 0;
    QString state;   // "waiting", "running" or "terminated"
    QString reason;
    QString message;
    int exitCode = 0;
};

struct Pod
{
    QString name;
    QString ns;
    QString uid;
    QString phase;
    QString nodeName;
    QJsonObject labels;
    QList<Condition> conditions;
    QList<ContainerState> containers;
    QList<ContainerState> initContainers;
    int gpuRequests = 0;   // nvidia.com/gpu by kubectl's request rules

    static Pod fromJson(const QJsonObject &pod);
    std::optional<Condition> condition(const QString &type) const;
};

// Both shapes: core/v1 (legacy and new recorder) and events.k8s.io/v1.
struct Event
{
    QString ns;
    QString name;
    QString type;
    QString reason;
    QString message;
    QString action;
    QString reportingComponent;
    QString regardingKind;
    QString regardingName;
    QString regardingNamespace;
    QString regardingUid;
    QString regardingFieldPath;
    QDateTime lastSeen;   // series.lastObservedTime, else lastTimestamp, else eventTime
    QDateTime firstSeen;  // firstTimestamp, else eventTime
    int count = 1;        // series.count, else count, else 1

    static Event fromJson(const QJsonObject &event);
};

// "2010-01-01T01:01:01.000010Z" and "2006-01-01T01:01:01Z" alike; invalid when absent.
QDateTime parseTime(const QString &text);

} // namespace Starforge::Kube
