#pragma once

// Typed views over the API's JSON for what the app shows and decides on. Reading never fails:
// a missing or mistyped field reads as empty, zero or false, so a malformed server reply can
// leave a view sparse but never crash the app.

#include "core/kube/podresources.h"

#include <QByteArrayView>
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
    // The same view from the node's JSON text, without a QJsonObject of the whole node (an
    // informer's reader, on the thread that parses the list). nullopt when it is not an object.
    static std::optional<Node> fromJsonText(QByteArrayView json, const QString &seriesLabel);
};

struct Condition
{
    QString type;
    QString status;   // "True", "False" or "Unknown"
    QString reason;
    QString message;
    QDateTime lastTransitionTime;

    bool isTrue() const { return status == QLatin1String("True"); }
};

// metadata.ownerReferences[]: the controller among them is the object that made this one.
struct OwnerReference
{
    QString apiVersion;
    QString kind;
    QString name;
    QString uid;
    bool controller = false;
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
    QJsonObject nodeSelector;   // spec.nodeSelector (string values)
    // The value of the configured GPU series label in nodeSelector: the series a pod that is
    // not bound yet waits for. Set by the reader that knows the label (CapacityTracker), as
    // Node::series is.
    QString series;

    static Pod fromJson(const QJsonObject &pod);
    // What the capacity numbers read of a pod, from its JSON text: name, ns, uid, phase,
    // nodeName, nodeSelector and gpuRequests as fromJson reads them; labels, conditions and container states
    // stay empty. About fifteen times cheaper than parsing the pod into a QJsonObject and calling
    // fromJson (bench_capacity), for the 50,000 pods of a large cluster's list. nullopt when the
    // text is not an object.
    static std::optional<Pod> usageFromJsonText(QByteArrayView json);
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

// A batch/v1 Job; KubeRay's submitter in K8sJobMode, named after its RayJob and owned by it.
struct Job
{
    QString name;
    QString ns;
    QString uid;
    QJsonObject labels;
    std::optional<OwnerReference> controller;   // the controlling owner, if any
    std::optional<int> backoffLimit;            // unset reads as unset: the API server defaults it to 6
    int active = 0;
    int succeeded = 0;
    int failed = 0;
    QList<Condition> conditions;   // Complete, Failed, Suspended, FailureTarget, SuccessCriteriaMet
    QDateTime startTime;
    QDateTime completionTime;

    static Job fromJson(const QJsonObject &job);
    std::optional<Condition> condition(const QString &type) const;
    // A Complete or Failed condition that is True: the Job will start no more pods.
    bool isFinished() const;
    bool isFailed() const;
    // The RayJob that owns this Job as controller; empty when another kind or none owns it.
    QString ownerRayJob() const;
};

// One group of a RayCluster spec, head or worker. Pod-level facts come from the pod template;
// container facts from container 0, which KubeRay requires to be the Ray container.
struct RayGroup
{
    bool isHead = false;
    QString groupName;           // "headgroup" for the head
    int replicas = 0;
    int minReplicas = 0;
    int maxReplicas = 0;         // KubeRay's default (2147483647) when absent
    int numOfHosts = 1;          // KubeRay's default when absent; pods = replicas x hosts
    bool suspend = false;
    QString image;
    ResourceMilli requests;      // container 0's requests, limits filling in, milli-units
    ResourceMilli limits;        // container 0's limits, milli-units
    int gpusPerPod = 0;          // nvidia.com/gpu the pod asks for, by the scheduler's rules
    QJsonObject nodeSelector;
    QJsonObject rayStartParams;

    static RayGroup fromJson(const QJsonObject &group, bool head);
    // Replicas clamped into [min, max] times hosts, as KubeRay counts the pods it wants; the
    // head group is one pod.
    qint64 desiredPods() const;
};

// The part of a RayCluster spec (alone, or inside a RayJob's rayClusterSpec) the app shows.
struct RayClusterSpec
{
    QString rayVersion;
    bool suspend = false;
    RayGroup head;
    QList<RayGroup> workers;

    static RayClusterSpec fromJson(const QJsonObject &spec);
    // GPUs of the head and every desired worker pod.
    qint64 desiredGpus() const;
};

// A RayCluster's status, also copied into a RayJob's status.rayClusterStatus.
struct RayClusterStatus
{
    QString state;     // "ready", "suspended"; "failed" in older operators; empty while starting
    QString reason;
    int readyWorkerReplicas = 0;
    int availableWorkerReplicas = 0;
    int desiredWorkerReplicas = 0;
    int minWorkerReplicas = 0;
    int maxWorkerReplicas = 0;
    int desiredGpus = 0;         // desiredGPU, a quantity
    QString headPodName;
    QString headPodIP;
    QString headServiceName;
    QString headServiceIP;
    QJsonObject endpoints;       // port name -> port, as strings
    QList<Condition> conditions; // HeadPodReady, RayClusterProvisioned, RayClusterReplicaFailure, ...
    QDateTime lastUpdateTime;

    static RayClusterStatus fromJson(const QJsonObject &status);
    std::optional<Condition> condition(const QString &type) const;
    // The state a RayJob waits for: head and all desired workers Running and Ready.
    bool isReady() const { return state == QLatin1String("ready"); }
};

struct RayCluster
{
    QString name;
    QString ns;
    QString uid;
    QJsonObject labels;
    QJsonObject annotations;
    QDateTime creationTimestamp;
    std::optional<OwnerReference> controller;   // the RayJob that made it, if any
    RayClusterSpec spec;
    RayClusterStatus status;

    static RayCluster fromJson(const QJsonObject &cluster);
    // ray.io/originated-from-cr-name when a RayJob made this cluster, else empty.
    QString originRayJob() const;
};

// A ray.io/v1 RayJob. Status strings are kept as the operator writes them, so a state a newer
// operator adds is shown rather than lost; the predicates encode KubeRay's own rules.
struct RayJob
{
    QString name;
    QString ns;
    QString uid;
    QJsonObject labels;
    QJsonObject annotations;
    QDateTime creationTimestamp;

    // spec
    QString entrypoint;
    QString runtimeEnvYAML;
    QString submissionMode;                        // empty means K8sJobMode
    QString specJobId;                             // spec.jobId; InteractiveMode sets it
    bool shutdownAfterJobFinishes = false;
    bool suspend = false;
    int ttlSecondsAfterFinished = 0;
    std::optional<int> activeDeadlineSeconds;      // absent: no deadline
    std::optional<int> preRunningDeadlineSeconds;  // absent: no deadline (KubeRay 1.6+)
    int backoffLimit = 0;
    QJsonObject clusterSelector;                   // set when the job uses an existing cluster
    bool hasRayClusterSpec = false;
    RayClusterSpec rayClusterSpec;

    // status
    QString jobStatus;            // "", PENDING, RUNNING, STOPPED, SUCCEEDED, FAILED
    QString jobDeploymentStatus;  // "", Initializing, Running, Complete, Failed, ValidationFailed,
                                  // Suspending, Suspended, Retrying, Waiting
    QString reason;               // set on failures only: AppFailed, DeadlineExceeded, ...
    QString message;
    QString jobId;
    QString rayClusterName;       // re-resolve it: every retry makes a new cluster
    QString dashboardURL;         // host:port, no scheme
    QDateTime startTime;          // reset on every retry
    QDateTime endTime;
    int failed = 0;
    int succeeded = 0;
    bool hasRayClusterStatus = false;
    RayClusterStatus rayClusterStatus;

    static RayJob fromJson(const QJsonObject &rayJob);

    // The effective submission mode, K8sJobMode when unset.
    QString effectiveSubmissionMode() const;
    // Complete or Failed (endTime set), and ValidationFailed, which the operator never leaves.
    // Suspended is parked and Retrying transient: neither is terminal.
    bool isTerminal() const;
    // Terminal and the Ray job SUCCEEDED; Complete alone also covers a STOPPED job.
    bool isSucceeded() const;
    // The Ray job's own status is final (STOPPED, SUCCEEDED, FAILED); the deployment may lag.
    bool isJobStatusTerminal() const;
    bool isSuspended() const { return jobDeploymentStatus == QLatin1String("Suspended"); }
};

// "2010-01-01T01:01:01.000010Z" and "2006-01-01T01:01:01Z" alike; invalid when absent.
QDateTime parseTime(const QString &text);

} // namespace Starforge::Kube
