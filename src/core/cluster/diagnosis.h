#pragma once

// Why a job is not running: one cause from a fixed list, a sentence with the numbers (what was
// asked, what is free, where) and the events that show it. Pure: it reads a job's objects and
// events as typed views and decides; fetching them is the caller's work.
//
// Sources, exactly as the cluster writes them (docs/kubernetes-facts.md, "Scheduler messages"
// and "Kubelet messages"):
//  - the scheduler's FailedScheduling text, on the pod's PodScheduled=False condition and its
//    FailedScheduling event: "0/5 nodes are available: 2 Insufficient nvidia.com/gpu,
//    3 node(s) didn't match Pod's node affinity/selector. preemption: ...";
//  - the kubelet's pull events and waiting reasons (ErrImagePull, ImagePullBackOff,
//    ErrImageNeverPull, InvalidImageName, RegistryUnavailable), CreateContainerConfigError and
//    CrashLoopBackOff;
//  - the capsule download: the init container named CapsuleInitContainerName failing, or Ray's
//    working_dir download failing (runtime_env setup) in the submitter's log or the RayJob's
//    message;
//  - the RayJob's status.reason PreRunningDeadlineExceeded, or SubmissionFailed (the submitter
//    Job reached its backoff limit before Ray had the job);
//  - pod creation refused by the API server (docs/kuberay.md, "Names, labels and events", and
//    docs/kubernetes-facts.md, "Resource quotas").
//
// When several apply, the first in this order wins (the others' evidence is left out):
//   PreRunningDeadlineExceeded   the job is over; its message also carries the cause below it
//   SubmissionFailed             the job is over: Ray never had it; the submitter pods' exits
//   QuotaExceeded / PodCreationFailed   the API server refused to create a pod, so there is
//                                no pod to look at: KubeRay's FailedToCreateHeadPod /
//                                FailedToCreateWorkerPod Warning on the RayCluster, or the Job
//                                controller's FailedCreate on the submitter Job, carrying the
//                                API's error; a ResourceQuota's "exceeded quota: q, requested:
//                                k=v, used: k=v, limited: k=v" is QuotaExceeded with its
//                                numbers, anything else (PodSecurity, a webhook) PodCreationFailed
//                                with the API's words. Stale once a pod of that role exists or a
//                                later Created event says so.
//   ImagePullNotFound / ImagePullUnauthorized / ImagePullFailed
//   CapsuleDownloadFailed        a pod that starts but cannot get the code
//   ContainerConfigError
//   CrashLoop
//   scheduling causes            InsufficientGpu, NoNodeMatchesSelector, UntoleratedTaint,
//                                NodesCordoned
//   Unknown
// Why this order: a pod that was scheduled and then fails to start is a fault in the job that
// waiting will not fix, so it outranks pods still waiting for room; among start failures the
// earliest step in a pod's life (pull, then init, then config, then run) is the one to fix
// first, since the later ones cannot be seen until it is.
//
// Among scheduling reasons of one FailedScheduling message (its "0/N nodes are available"
// histogram): when the pod's nodeSelector asks for a series (the value of seriesLabel) that no
// node of the capacity model has, the cause is NoNodeMatchesSelector whatever the histogram
// says, and the sentence names the value asked, that none of the nodes has it and the series
// that exist. The scheduler runs NodeUnschedulable and TaintToleration before NodeAffinity, so a
// tainted control-plane node or a cordoned CPU node is counted under its taint or cordon though
// it lacks the series too ("1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had
// untolerated taint {node-role.kubernetes.io/control-plane: }"); only the model can tell that no
// node has the series. When some node has the series (tainted, cordoned or full as it may be),
// or there is no model (null or empty) or no pod spec (a pod that is gone), the histogram
// decides: nodes that did not match the selector are ignored unless they are all the nodes
// (NoNodeMatchesSelector); otherwise the reason holding back the most nodes wins, ties going
// InsufficientGpu, UntoleratedTaint, NodesCordoned. A message whose winning reason is none of
// these (Insufficient memory, Too many pods, a volume conflict) or that has no histogram (a
// PreFilter rejection) is Unknown, with the scheduler's words in the sentence. When several
// pods cannot be scheduled, the cause waiting will not cure leads: NoNodeMatchesSelector,
// UntoleratedTaint, NodesCordoned, then InsufficientGpu.
//
// Stale events are ignored: a pod that is present and scheduled has no scheduling cause, and a
// container that is running has no pull or config cause, whatever older events say. Events of
// pods that are gone (a job failed by its deadline loses its cluster) still count.

#include "core/cluster/capacity.h"
#include "core/kube/resources.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace Starforge::Cluster {

// The init container that downloads and checks the Capsule (HTTP-only storage). The RayJob
// builder names it so; the diagnosis recognises its failure by this name.
inline constexpr char CapsuleInitContainerName[] = "fetch-capsule";

enum class Cause {
    InsufficientGpu,
    NoNodeMatchesSelector,
    UntoleratedTaint,
    NodesCordoned,
    ImagePullNotFound,
    ImagePullUnauthorized,
    ImagePullFailed,
    CapsuleDownloadFailed,
    ContainerConfigError,
    CrashLoop,
    PreRunningDeadlineExceeded,
    SubmissionFailed,
    QuotaExceeded,
    PodCreationFailed,
    Unknown,
};

// The stable id ("InsufficientGpu", ...), as `diagnose --json` prints it.
QString causeId(Cause cause);
std::optional<Cause> causeFromId(const QString &id);
QList<Cause> allCauses();

// One FailedScheduling text, parsed. Every "<count> <reason>" of the histogram in order; a
// PreFilter message (no counts) goes to preFilter; the preemption part is kept as text.
struct SchedulingFailure
{
    bool valid = false;        // the text had the "0/N nodes are available:" shape
    int totalNodes = 0;
    QList<QPair<int, QString>> reasons;
    QString preFilter;
    QString preemption;

    static SchedulingFailure parse(const QString &message);
    int count(const QString &reasonPrefix) const;   // sum of counts of reasons starting so
};

// A pod as the diagnosis needs it: the typed view plus what the scheduler matched it on, and
// each container's last exit code (lastState.terminated), which the view does not keep.
struct PodInfo
{
    Kube::Pod view;
    QJsonObject nodeSelector;
    QList<Toleration> tolerations;
    QHash<QString, int> lastExitCodes;   // container name -> last terminated exit code
    QHash<QString, QString> images;      // container name -> image (init containers too)

    static PodInfo fromJson(const QJsonObject &pod);
    // "head", "worker <group>", "submitter" or "pod", from KubeRay's and the Job's labels.
    QString role() const;
};

struct DiagnosisInput
{
    std::optional<Kube::RayJob> rayJob;
    std::optional<Kube::RayCluster> rayCluster;
    QList<PodInfo> pods;           // head, workers, submitter
    QList<Kube::Event> events;     // about the RayJob, the RayCluster, the pods, the submitter Job
    QString submitterLog;          // the submitter's (driver's) log tail, if read
    const CapacityModel *capacity = nullptr;   // for the numbers and the series that exist; may be null
    QString seriesLabel = defaultSeriesLabel();
};

struct Diagnosis
{
    Cause cause = Cause::Unknown;
    QString message;
    QList<Kube::Event> evidence;

    QString causeId() const { return Cluster::causeId(cause); }
    // {"cause": id, "message": sentence, "evidence": [{type, reason, message, object,
    // fieldPath, count, firstSeen, lastSeen, reportingComponent}]}
    QJsonObject toJson() const;
};

QJsonObject eventToJson(const Kube::Event &event);

Diagnosis diagnose(const DiagnosisInput &input);

} // namespace Starforge::Cluster
