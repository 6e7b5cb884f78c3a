#include "core/cluster/diagnosis.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QMap>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>
#include <functional>

namespace Starforge::Cluster {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(Diagnosis)
};

struct Candidate
{
    Cause cause = Cause::Unknown;
    QString message;
    QList<Kube::Event> evidence;
};

const QString PodKind = QStringLiteral("Pod");

QString quoted(const QString &s)
{
    return u'"' + s + u'"';
}

// What the diagnosis reads from the job's objects, indexed once.
class Context
{
public:
    explicit Context(const DiagnosisInput &input)
        : in(input)
    {
        for (const PodInfo &p : input.pods) {
            podNames.insert(p.view.name);
        }
        for (const Kube::Event &e : input.events) {
            if (e.regardingKind == PodKind && !podNames.contains(e.regardingName) && !gone.contains(e.regardingName)) {
                gone << e.regardingName;
            }
        }
    }

    QList<Kube::Event> podEvents(const QString &pod, const std::function<bool(const Kube::Event &)> &match = {}) const
    {
        QList<Kube::Event> out;
        for (const Kube::Event &e : in.events) {
            if (e.regardingKind == PodKind && e.regardingName == pod && (!match || match(e))) {
                out << e;
            }
        }
        std::stable_sort(out.begin(), out.end(), [](const Kube::Event &a, const Kube::Event &b) { return a.lastSeen < b.lastSeen; });
        return out;
    }

    QString series(const PodInfo &p) const { return p.nodeSelector.value(in.seriesLabel).toString(); }

    const DiagnosisInput &in;
    QSet<QString> podNames;
    QStringList gone;   // pods only events still speak of, in the order first seen
};

bool fieldNames(const Kube::Event &e, const QString &container)
{
    return e.regardingFieldPath.endsWith(u'{' + container + u'}');
}

QString describePod(const PodInfo &p)
{
    const QString role = p.role();
    // One sentence per role, so a language can put the name where it belongs.
    if (role == QLatin1String("head")) return Text::tr("the head pod %1").arg(p.view.name);
    if (role.startsWith(QLatin1String("worker "))) return Text::tr("the worker %1 pod %2").arg(role.mid(7), p.view.name);   // its group
    if (role == QLatin1String("submitter")) return Text::tr("the submitter pod %1").arg(p.view.name);
    if (role == QLatin1String("pod")) return Text::tr("pod %1").arg(p.view.name);
    return Text::tr("the %1 pod %2").arg(role, p.view.name);
}

// ---- image pulls ----------------------------------------------------------------------------

const QStringList PullWaitingReasons = {QStringLiteral("ErrImagePull"), QStringLiteral("ImagePullBackOff"), QStringLiteral("ErrImageNeverPull"),
                                        QStringLiteral("InvalidImageName"), QStringLiteral("RegistryUnavailable"), QStringLiteral("ImageInspectError")};

bool isPullEvent(const Kube::Event &e)
{
    return (e.reason == QLatin1String("Failed") && (e.message.startsWith(QLatin1String("Failed to pull image"))
                                                    || e.message == QLatin1String("Error: ErrImagePull")
                                                    || e.message == QLatin1String("Error: ImagePullBackOff")))
        || (e.reason == QLatin1String("BackOff") && e.message.startsWith(QLatin1String("Back-off pulling image")))
        || e.reason == QLatin1String("ErrImageNeverPull") || e.reason == QLatin1String("InspectFailed")
        || e.reason == QLatin1String("Pulling");
}

// The runtime writes these texts, not the kubelet, so they are matched loosely
// (docs/kubernetes-facts.md, "Kubelet messages"): credentials first, since "pull access denied,
// repository does not exist or may require authorization" is an access problem as often as a
// missing image.
Cause classifyPull(const QString &text)
{
    const QString t = text.toLower();
    // untranslated: the registry's words, matched
    for (const char *marker : {"unauthorized", "authentication required", "denied", "forbidden", "no basic auth credentials",
                               "failed to authorize", "authorization failed"}) {
        if (t.contains(QLatin1String(marker))) return Cause::ImagePullUnauthorized;
    }
    // untranslated: the registry's words, matched
    for (const char *marker : {"not found", "notfound", "manifest unknown"}) {
        if (t.contains(QLatin1String(marker))) return Cause::ImagePullNotFound;
    }
    return Cause::ImagePullFailed;
}

std::optional<Candidate> imagePull(const Context &c)
{
    struct Failure
    {
        QString pod;
        QString podText;
        QString container;
        QString image;
        QString detail;   // the registry's words
        Cause cause = Cause::ImagePullFailed;
        int attempts = 0;
        QList<Kube::Event> evidence;
    };
    QList<Failure> failures;
    const auto collect = [&](const QString &pod, const QString &podText, const QString &container, const QString &image, const QString &waitingMessage) {
        Failure f{pod, podText, container, image, {}, Cause::ImagePullFailed, 0, {}};
        f.evidence = c.podEvents(pod, [&](const Kube::Event &e) { return isPullEvent(e) && (container.isEmpty() || fieldNames(e, container)); });
        for (const Kube::Event &e : std::as_const(f.evidence)) {
            if (e.message.startsWith(QLatin1String("Failed to pull image")) || e.reason == QLatin1String("ErrImageNeverPull")
                || e.reason == QLatin1String("InspectFailed")) {
                f.detail = e.message;
                f.attempts = std::max(f.attempts, e.count);
            }
            if (e.reason == QLatin1String("Pulling")) {
                f.attempts = std::max(f.attempts, e.count);
            }
        }
        // "Back-off pulling image" says nothing of why; the failure's own text does.
        if (f.detail.isEmpty() && !waitingMessage.startsWith(QLatin1String("Back-off"))) {
            f.detail = waitingMessage;
        }
        f.cause = classifyPull(f.detail);
        if (f.image.isEmpty()) {
            static const QRegularExpression imageRe(QStringLiteral("image \"([^\"]+)\""));
            if (const auto m = imageRe.match(f.detail); m.hasMatch()) f.image = m.captured(1);
        }
        f.evidence.removeIf([](const Kube::Event &e) { return e.reason == QLatin1String("Pulling"); });
        failures << f;
    };
    for (const PodInfo &p : c.in.pods) {
        for (const auto *list : {&p.view.initContainers, &p.view.containers}) {
            for (const Kube::ContainerState &s : *list) {
                if (s.state == QLatin1String("waiting") && PullWaitingReasons.contains(s.reason)) {
                    collect(p.view.name, describePod(p), s.name, p.images.value(s.name), s.message);
                }
            }
        }
    }
    for (const QString &pod : c.gone) {
        const QList<Kube::Event> events = c.podEvents(pod);
        const auto failed = std::find_if(events.crbegin(), events.crend(), [](const Kube::Event &e) {
            return e.message.startsWith(QLatin1String("Failed to pull image")) || e.reason == QLatin1String("ErrImageNeverPull");
        });
        if (failed == events.crend()) continue;
        // A later successful pull of the same container makes the failure history.
        const bool pulledLater = std::any_of(events.cbegin(), events.cend(), [&](const Kube::Event &e) {
            return e.reason == QLatin1String("Pulled") && e.regardingFieldPath == failed->regardingFieldPath && e.lastSeen >= failed->lastSeen;
        });
        if (pulledLater) continue;
        static const QRegularExpression containerRe(QStringLiteral("\\{([^}]+)\\}$"));
        collect(pod, Text::tr("pod %1 (gone now)").arg(pod), containerRe.match(failed->regardingFieldPath).captured(1), {}, {});
    }
    if (failures.isEmpty()) return std::nullopt;
    // The most specific cause among the failures leads: not found, then unauthorized, then other.
    std::stable_sort(failures.begin(), failures.end(), [](const Failure &a, const Failure &b) { return int(a.cause) < int(b.cause); });
    const Failure &f = failures.first();
    QSet<QString> pods;
    for (const Failure &x : std::as_const(failures)) pods.insert(x.pod);
    const QString why = f.cause == Cause::ImagePullNotFound ? Text::tr("the registry does not have it")
                      : f.cause == Cause::ImagePullUnauthorized ? Text::tr("the registry refuses access without credentials the cluster has")
                                                                : Text::tr("the pull failed");
    QString message = Text::tr("Image %1 cannot be pulled for container %2 of %3: %4")
                          .arg(quoted(f.image.isEmpty() ? QStringLiteral("?") : f.image), f.container.isEmpty() ? QStringLiteral("?") : f.container, f.podText, why);
    if (f.attempts > 0) message += QStringLiteral(" (%1)").arg(Text::tr("%n attempt(s)", nullptr, f.attempts));
    if (pods.size() > 1) message += Text::tr("; %1 pods of the job cannot pull their images").arg(pods.size());
    if (!f.detail.isEmpty()) message += Text::tr(". Kubelet: %1").arg(f.detail);
    QList<Kube::Event> evidence;
    for (const Failure &x : std::as_const(failures)) {
        if (x.cause == f.cause) evidence += x.evidence;
    }
    return Candidate{f.cause, message, evidence};
}

// ---- capsule download -----------------------------------------------------------------------

const QString CapsuleInit = QString::fromLatin1(CapsuleInitContainerName);

// Ray's working_dir failures (ray job submit / the job supervisor) and the sandbox stand-in
// share "runtime_env setup failed"; Ray's RuntimeEnvSetupError says the rest.
QString workingDirFailure(const QString &text)
{
    static const QRegularExpression re(QStringLiteral("^.*(runtime[_ ]env setup failed|failed to set up runtime env|RuntimeEnvSetupError).*$"),
                                       QRegularExpression::CaseInsensitiveOption | QRegularExpression::MultilineOption);
    const auto m = re.match(text);
    return m.hasMatch() ? m.captured(0).trimmed() : QString();
}

std::optional<Candidate> capsuleDownload(const Context &c)
{
    for (const PodInfo &p : c.in.pods) {
        for (const Kube::ContainerState &s : p.view.initContainers) {
            if (s.name != CapsuleInit) continue;
            const int lastExit = p.lastExitCodes.value(s.name, 0);
            const bool failing = (s.state == QLatin1String("terminated") && s.exitCode != 0)
                              || (s.state == QLatin1String("waiting") && s.reason == QLatin1String("CrashLoopBackOff"))
                              || (s.restartCount > 0 && lastExit != 0);
            if (!failing) continue;
            const int code = s.state == QLatin1String("terminated") ? s.exitCode : lastExit;
            QString message = Text::tr("The capsule download failed: init container %1 of %2 exited with code %3")
                                  .arg(CapsuleInit, describePod(p)).arg(code);
            if (s.restartCount > 0) message += QStringLiteral(" (%1)").arg(Text::tr("%n restart(s)", nullptr, s.restartCount));
            message += Text::tr("; the pod cannot start until it can fetch and check the Capsule");
            return Candidate{Cause::CapsuleDownloadFailed, message,
                             c.podEvents(p.view.name, [](const Kube::Event &e) { return fieldNames(e, CapsuleInit) && e.type == QLatin1String("Warning"); })};
        }
    }
    for (const QString &pod : c.gone) {
        const QList<Kube::Event> events = c.podEvents(pod, [](const Kube::Event &e) {
            return fieldNames(e, CapsuleInit) && e.type == QLatin1String("Warning");
        });
        if (!events.isEmpty()) {
            return Candidate{Cause::CapsuleDownloadFailed,
                             Text::tr("The capsule download failed: init container %1 of pod %2 (gone now) kept failing").arg(CapsuleInit, pod), events};
        }
    }
    // Ray's own download of runtimeEnvYAML's working_dir, visible in the driver's output, the
    // RayJob's message (KubeRay copies Ray's) or an event.
    QString line = workingDirFailure(c.in.submitterLog);
    if (line.isEmpty() && c.in.rayJob) line = workingDirFailure(c.in.rayJob->message);
    QList<Kube::Event> evidence;
    for (const Kube::Event &e : c.in.events) {
        const QString found = workingDirFailure(e.message);
        if (!found.isEmpty()) {
            evidence << e;
            if (line.isEmpty()) line = found;
        }
    }
    if (line.isEmpty()) return std::nullopt;
    if (evidence.isEmpty()) {
        // The submitter's own Warning events (its pod failing, the Job giving up) are what the
        // cluster recorded about the failed download.
        for (const Kube::Event &e : c.in.events) {
            const bool submitter = (e.regardingKind == QLatin1String("Job"))
                || (e.regardingKind == PodKind && std::any_of(c.in.pods.cbegin(), c.in.pods.cend(), [&](const PodInfo &p) {
                       return p.view.name == e.regardingName && p.role() == QLatin1String("submitter");
                   }));
            if (submitter && e.type == QLatin1String("Warning")) evidence << e;
        }
    }
    const QString job = c.in.rayJob ? Text::tr(" of job %1").arg(c.in.rayJob->name) : QString();
    return Candidate{Cause::CapsuleDownloadFailed,
                     Text::tr("The capsule download failed: Ray could not fetch the working_dir%1: %2").arg(job, line), evidence};
}

// ---- container config and crash loops --------------------------------------------------------

std::optional<Candidate> containerConfig(const Context &c)
{
    for (const PodInfo &p : c.in.pods) {
        for (const auto *list : {&p.view.initContainers, &p.view.containers}) {
            for (const Kube::ContainerState &s : *list) {
                if (s.state != QLatin1String("waiting") || s.reason != QLatin1String("CreateContainerConfigError")) continue;
                return Candidate{Cause::ContainerConfigError,
                                 Text::tr("Container %1 of %2 cannot be created from its configuration: %3")
                                     .arg(s.name, describePod(p), s.message.isEmpty() ? QStringLiteral("CreateContainerConfigError") : s.message),
                                 c.podEvents(p.view.name, [&](const Kube::Event &e) {
                                     return e.type == QLatin1String("Warning") && fieldNames(e, s.name) && e.message.startsWith(QLatin1String("Error: "));
                                 })};
            }
        }
    }
    static const QRegularExpression configRe(QStringLiteral("^Error: (secret|configmap) \"[^\"]*\" not found|^Error: couldn't find key"));
    for (const QString &pod : c.gone) {
        const QList<Kube::Event> events = c.podEvents(pod, [](const Kube::Event &e) { return configRe.match(e.message).hasMatch(); });
        if (!events.isEmpty()) {
            return Candidate{Cause::ContainerConfigError,
                             Text::tr("A container of pod %1 (gone now) could not be created from its configuration: %2")
                                 .arg(pod, events.last().message.mid(7)), events};
        }
    }
    return std::nullopt;
}

std::optional<Candidate> crashLoop(const Context &c)
{
    static const QRegularExpression backoffRe(QStringLiteral("^back-off (\\S+) restarting failed container"));
    for (const PodInfo &p : c.in.pods) {
        for (const auto *list : {&p.view.initContainers, &p.view.containers}) {
            for (const Kube::ContainerState &s : *list) {
                if (s.state != QLatin1String("waiting") || s.reason != QLatin1String("CrashLoopBackOff") || (list == &p.view.initContainers && s.name == CapsuleInit)) {
                    continue;
                }
                QString message = Text::tr("Container %1 of %2 keeps crashing").arg(s.name, describePod(p));
                if (p.lastExitCodes.contains(s.name)) message += Text::tr(": it exited with code %1").arg(p.lastExitCodes.value(s.name));
                message += Text::tr(" and was restarted %1").arg(Text::tr("%n time(s)", nullptr, s.restartCount));
                if (const auto m = backoffRe.match(s.message); m.hasMatch()) message += Text::tr(", now waiting %1 before the next try").arg(m.captured(1));
                message += Text::tr("; its log (previous=true) says why");
                return Candidate{Cause::CrashLoop, message, c.podEvents(p.view.name, [&](const Kube::Event &e) {
                                     return e.reason == QLatin1String("BackOff") && e.message.startsWith(QLatin1String("Back-off restarting failed container"))
                                         && (e.regardingFieldPath.isEmpty() || fieldNames(e, s.name));
                                 })};
            }
        }
    }
    for (const QString &pod : c.gone) {
        const QList<Kube::Event> events = c.podEvents(pod, [](const Kube::Event &e) {
            return e.reason == QLatin1String("BackOff") && e.message.startsWith(QLatin1String("Back-off restarting failed container"))
                && !fieldNames(e, CapsuleInit);
        });
        if (!events.isEmpty()) {
            return Candidate{Cause::CrashLoop, Text::tr("A container of pod %1 (gone now) kept crashing: %2").arg(pod, events.last().message), events};
        }
    }
    return std::nullopt;
}

// ---- scheduling -----------------------------------------------------------------------------

const QString GpuReason = Text::tr("Insufficient nvidia.com/gpu");
const QString SelectorReason = Text::tr("node(s) didn't match Pod's node affinity");   // "/selector" in current versions
const QString TaintReason = Text::tr("node(s) had untolerated taint");
const QString OldTaintReason = Text::tr("node(s) had taint");
const QString CordonReason = Text::tr("node(s) were unschedulable");

struct Unschedulable
{
    QString pod;
    const PodInfo *info = nullptr;   // null when the pod is gone
    QString text;
    QList<Kube::Event> evidence;
};

// The series the pod's nodeSelector asks for when the capacity model knows every node and none
// of them has it; empty when that cannot be told (no model, an empty one, a pod that is gone, no
// series asked) or some node has the series, whatever state that node is in.
QString seriesNobodyHas(const Unschedulable &u, const Context &c)
{
    const CapacityModel *cap = c.in.capacity;
    if (!cap || cap->nodeCount() == 0 || !u.info) return {};
    const QString series = c.series(*u.info);
    return !series.isEmpty() && cap->nodesOf(series).isEmpty() ? series : QString();
}

// The scheduler's filters run NodeUnschedulable and TaintToleration before NodeAffinity, so a
// node that is cordoned or tainted is counted under that reason even when it lacks the series
// too: only the capacity model can tell that no node at all has the series asked.
Cause classifySchedulingFailure(const SchedulingFailure &f, const QString &missingSeries)
{
    if (!f.valid || f.reasons.isEmpty()) return Cause::Unknown;
    if (!missingSeries.isEmpty()) return Cause::NoNodeMatchesSelector;
    if (f.totalNodes > 0 && f.count(SelectorReason) >= f.totalNodes) return Cause::NoNodeMatchesSelector;
    const int gpu = f.count(GpuReason);
    const int taint = f.count(TaintReason) + f.count(OldTaintReason);
    const int cordon = f.count(CordonReason);
    int other = 0;
    for (const auto &[count, reason] : f.reasons) {
        if (!reason.startsWith(GpuReason) && !reason.startsWith(SelectorReason) && !reason.startsWith(TaintReason)
            && !reason.startsWith(OldTaintReason) && !reason.startsWith(CordonReason)) {
            other = std::max(other, count);
        }
    }
    const int best = std::max({gpu, taint, cordon});
    if (best == 0 || other > best) return Cause::Unknown;
    return gpu == best ? Cause::InsufficientGpu : taint == best ? Cause::UntoleratedTaint : Cause::NodesCordoned;
}

QString selectorText(const QJsonObject &selector)
{
    QStringList parts;
    for (auto it = selector.begin(); it != selector.end(); ++it) parts << it.key() + u'=' + it.value().toString();
    return parts.join(QStringLiteral(", "));
}

QString schedulingSentence(Cause cause, const Unschedulable &u, const SchedulingFailure &f, int pendingPods, const Context &c)
{
    const QString who = u.info ? describePod(*u.info) : Text::tr("pod %1 (gone now)").arg(u.pod);
    const QString series = u.info ? c.series(*u.info) : QString();
    const int asked = u.info ? u.info->view.gpuRequests : -1;
    const CapacityModel *cap = c.in.capacity;
    const QString others = pendingPods > 1 ? Text::tr(" (%1 of the job's pods cannot be scheduled)").arg(pendingPods) : QString();
    const QString where = series.isEmpty() ? Text::tr("a node") : Text::tr("one %1 node").arg(series);
    const QString askedText = asked >= 0 ? Text::tr("asks for %1 on %2").arg(Text::tr("%n GPU(s)", nullptr, asked), where) : Text::tr("could not be placed");
    QString s;
    switch (cause) {
    case Cause::InsufficientGpu: {
        s = Text::tr("Not enough free GPUs: %1 %2").arg(who, askedText);
        if (cap && !series.isEmpty()) {
            const SeriesSummary sum = cap->series(series);
            s += Text::tr(", but the largest free %1 node has %2; %3 of %4 %1 GPUs are free on %5")
                     .arg(series).arg(sum.largestFree).arg(sum.free).arg(sum.capacity).arg(Text::tr("%n schedulable node(s)", nullptr, sum.schedulableNodes));
            if (sum.blocked > 0) s += Text::tr(", %1 more blocked").arg(sum.blocked);
        } else {
            s += Text::tr(", and %1 too few free").arg(Text::tr("%n node has", nullptr, f.count(GpuReason)));
        }
        break;
    }
    case Cause::NoNodeMatchesSelector: {
        // When the model shows no node has the series, that label is the one to name (other
        // labels of the selector may match); otherwise the whole selector.
        const QString missing = seriesNobodyHas(u, c);
        const QString selector = !missing.isEmpty() ? c.in.seriesLabel + u'=' + missing : u.info ? selectorText(u.info->nodeSelector) : QString();
        s = Text::tr("No node matches the selector: %1 asks for %2, and none of the %3 has it")
                .arg(who, selector.isEmpty() ? Text::tr("a node affinity") : selector, Text::tr("%n node(s)", nullptr, f.totalNodes));
        if (cap) {
            const QStringList known = cap->seriesNames();
            s += Text::tr("; known series: %1").arg(known.isEmpty() ? Text::tr("none") : known.join(Text::tr(", ")));
        }
        if (!missing.isEmpty() && f.count(SelectorReason) < f.totalNodes) {
            s += Text::tr("; the scheduler's other reasons matter only once a node has series %1").arg(missing);
        }
        if (asked > 0) s += Text::tr("; %1 asked").arg(Text::tr("%n GPU(s)", nullptr, asked));
        break;
    }
    case Cause::UntoleratedTaint: {
        QStringList taints;
        for (const auto &[count, reason] : f.reasons) {
            if (reason.startsWith(TaintReason) || reason.startsWith(OldTaintReason)) {
                const qsizetype open = reason.indexOf(u'{');
                taints << QStringLiteral("%1 on %2").arg(reason.mid(open, reason.indexOf(u'}', open) - open + 1), Text::tr("%n node(s)", nullptr, count));
            }
        }
        s = Text::tr("A taint keeps the pod off: %1 %2, and a taint it does not tolerate rules out %3 of %4 (%5)")
                .arg(who, askedText).arg(f.count(TaintReason) + f.count(OldTaintReason)).arg(Text::tr("%n node(s)", nullptr, f.totalNodes), taints.join(QStringLiteral(", ")));
        if (cap && !series.isEmpty()) {
            QStringList tainted;
            for (const QString &name : cap->nodesOf(series)) {
                const NodeEntry *e = cap->node(name);
                if (e && e->block == Block::Tainted) tainted << name + u' ' + e->blockDetail;
            }
            if (!tainted.isEmpty()) s += QStringLiteral("; tainted %1 nodes: %2").arg(series, tainted.join(QStringLiteral(", ")));
        }
        break;
    }
    case Cause::NodesCordoned: {
        s = Text::tr("Nodes are cordoned: %1 %2, and %3 of %4 are cordoned (unschedulable)")
                .arg(who, askedText).arg(f.count(CordonReason)).arg(Text::tr("%n node(s)", nullptr, f.totalNodes));
        if (cap) {
            QStringList cordoned;
            for (const QString &name : cap->nodesOf(series)) {
                const NodeEntry *e = cap->node(name);
                if (e && e->block == Block::Cordoned) cordoned << name;
            }
            if (!cordoned.isEmpty()) s += QStringLiteral("; cordoned %1 nodes: %2").arg(series, cordoned.join(QStringLiteral(", ")));
        }
        break;
    }
    default:
        s = Text::tr("No known cause: %1 cannot be scheduled for a reason outside the GPU checks").arg(who);
        break;
    }
    return s + others + Text::tr(". Scheduler: %1").arg(u.text);
}

std::optional<Candidate> scheduling(const Context &c, Candidate *unknown)
{
    QList<Unschedulable> stuck;
    const auto isFailedScheduling = [](const Kube::Event &e) { return e.reason == QLatin1String("FailedScheduling"); };
    for (const PodInfo &p : c.in.pods) {
        const auto scheduled = p.view.condition(QStringLiteral("PodScheduled"));
        if (!p.view.nodeName.isEmpty() || (scheduled && scheduled->isTrue())) continue;
        Unschedulable u{p.view.name, &p, {}, c.podEvents(p.view.name, isFailedScheduling)};
        if (scheduled && scheduled->reason == QLatin1String("Unschedulable")) u.text = scheduled->message;
        if (u.text.isEmpty() && !u.evidence.isEmpty()) u.text = u.evidence.last().message;
        if (!u.text.isEmpty()) stuck << u;
    }
    for (const QString &pod : c.gone) {
        const QList<Kube::Event> events = c.podEvents(pod);
        const auto failed = std::find_if(events.crbegin(), events.crend(), isFailedScheduling);
        if (failed == events.crend()) continue;
        const bool scheduledLater = std::any_of(events.cbegin(), events.cend(), [&](const Kube::Event &e) {
            return e.reason == QLatin1String("Scheduled") && e.lastSeen >= failed->lastSeen;
        });
        if (!scheduledLater) stuck << Unschedulable{pod, nullptr, failed->message, c.podEvents(pod, isFailedScheduling)};
    }
    if (stuck.isEmpty()) return std::nullopt;
    // Across pods, the cause waiting will not cure leads.
    static const QList<Cause> rank = {Cause::NoNodeMatchesSelector, Cause::UntoleratedTaint, Cause::NodesCordoned, Cause::InsufficientGpu, Cause::Unknown};
    const Unschedulable *lead = nullptr;
    Cause leadCause = Cause::Unknown;
    SchedulingFailure leadFailure;
    for (const Unschedulable &u : std::as_const(stuck)) {
        const SchedulingFailure f = SchedulingFailure::parse(u.text);
        const Cause cause = classifySchedulingFailure(f, seriesNobodyHas(u, c));
        if (!lead || rank.indexOf(cause) < rank.indexOf(leadCause)) {
            lead = &u;
            leadCause = cause;
            leadFailure = f;
        }
    }
    QList<Kube::Event> evidence;
    for (const Unschedulable &u : std::as_const(stuck)) {
        if (classifySchedulingFailure(SchedulingFailure::parse(u.text), seriesNobodyHas(u, c)) == leadCause) evidence += u.evidence;
    }
    const QString message = schedulingSentence(leadCause, *lead, leadFailure, int(stuck.size()), c);
    if (leadCause == Cause::Unknown) {
        *unknown = Candidate{Cause::Unknown, message, evidence};
        return std::nullopt;
    }
    return Candidate{leadCause, message, evidence};
}

// A pod the API server refused to create: the latest refusal that no pod of its role or later
// creation has made history.
std::optional<Candidate> podCreation(const Context &c)
{
    struct Refusal
    {
        Kube::Event event;
        QString who;       // "the head pod", "a worker pod", "the submitter pod"
        QString apiError;  // the API's words, without the controller's prefix
    };
    const auto latestOf = [&c](const QString &kind, const QString &reason) {
        QDateTime latest;
        for (const Kube::Event &e : c.in.events) {
            if (e.regardingKind == kind && e.reason == reason && (!latest.isValid() || e.lastSeen > latest)) latest = e.lastSeen;
        }
        return latest;
    };
    bool headPresent = false;
    for (const PodInfo &p : c.in.pods) headPresent = headPresent || p.role() == QLatin1String("head");
    static const QRegularExpression headPrefix(QStringLiteral("^Failed to create head Pod [^,]*, (.*)$"), QRegularExpression::DotMatchesEverythingOption);
    static const QRegularExpression workerPrefix(QStringLiteral("^Failed to create worker Pod for the cluster [^,]*, (.*)$"),
                                                 QRegularExpression::DotMatchesEverythingOption);
    static const QRegularExpression jobPrefix(QStringLiteral("^Error creating: (.*)$"), QRegularExpression::DotMatchesEverythingOption);
    std::optional<Refusal> latest;
    QList<Kube::Event> evidence;
    for (const Kube::Event &e : c.in.events) {
        if (e.type != QLatin1String("Warning")) continue;
        Refusal r{e, {}, e.message};
        QRegularExpressionMatch m;
        if (e.regardingKind == QLatin1String("RayCluster") && e.reason == QLatin1String("FailedToCreateHeadPod")) {
            const QDateTime created = latestOf(e.regardingKind, QStringLiteral("CreatedHeadPod"));
            if (headPresent || (created.isValid() && created >= e.lastSeen)) continue;
            r.who = Text::tr("the head pod");
            m = headPrefix.match(e.message);
        } else if (e.regardingKind == QLatin1String("RayCluster") && e.reason == QLatin1String("FailedToCreateWorkerPod")) {
            const QDateTime created = latestOf(e.regardingKind, QStringLiteral("CreatedWorkerPod"));
            if (created.isValid() && created >= e.lastSeen) continue;
            r.who = Text::tr("a worker pod");
            m = workerPrefix.match(e.message);
        } else if (e.regardingKind == QLatin1String("Job") && e.reason == QLatin1String("FailedCreate")) {
            const QDateTime created = latestOf(e.regardingKind, QStringLiteral("SuccessfulCreate"));
            if (created.isValid() && created >= e.lastSeen) continue;
            r.who = Text::tr("the submitter pod");
            m = jobPrefix.match(e.message);
        } else {
            continue;
        }
        if (m.hasMatch()) r.apiError = m.captured(1);
        evidence << e;
        if (!latest || e.lastSeen >= latest->event.lastSeen) latest = r;
    }
    if (!latest) return std::nullopt;
    std::stable_sort(evidence.begin(), evidence.end(), [](const Kube::Event &a, const Kube::Event &b) { return a.lastSeen < b.lastSeen; });
    // The quota admission's text (docs/kubernetes-facts.md, "Resource quotas").
    static const QRegularExpression quota(QStringLiteral("exceeded quota: ([^,]+), requested: (.*), used: (.*), limited: (.*)$"),
                                          QRegularExpression::DotMatchesEverythingOption);
    const auto qm = quota.match(latest->apiError);
    if (!qm.hasMatch()) {
        return Candidate{Cause::PodCreationFailed,
                         Text::tr("The API server refused to create %1, so it does not exist: %2").arg(latest->who, latest->apiError), evidence};
    }
    const auto amounts = [](const QString &list) {
        QMap<QString, QString> out;
        for (const QString &part : list.split(u',', Qt::SkipEmptyParts)) {
            const qsizetype eq = part.indexOf(u'=');
            if (eq > 0) out.insert(part.left(eq).trimmed(), part.mid(eq + 1).trimmed());
        }
        return out;
    };
    const QMap<QString, QString> asked = amounts(qm.captured(2));
    const QMap<QString, QString> used = amounts(qm.captured(3));
    const QMap<QString, QString> limited = amounts(qm.captured(4));
    QStringList numbers;
    for (auto it = asked.cbegin(); it != asked.cend(); ++it) {
        numbers << Text::tr("%1: asks %2, %3 already used of %4").arg(it.key(), it.value(), used.value(it.key(), Text::tr("?")),
                                                                               limited.value(it.key(), QStringLiteral("?")));
    }
    const QString ns = latest->event.regardingNamespace.isEmpty() ? latest->event.ns : latest->event.regardingNamespace;
    QString message = Text::tr("ResourceQuota %1%2 does not allow %3 (%4), so the API server refused to create it. "
                                     "Ask for less, wait for other pods of the namespace to finish, or ask the cluster's "
                                     "administrator to raise the quota")
                          .arg(qm.captured(1).trimmed(), ns.isEmpty() ? QString() : Text::tr(" in namespace %1").arg(ns), latest->who,
                               numbers.join(QStringLiteral("; ")));
    return Candidate{Cause::QuotaExceeded, message, evidence};
}

Candidate unknownCause(const Context &c)
{
    QStringList parts;
    if (c.in.rayJob) {
        const Kube::RayJob &j = *c.in.rayJob;
        QString state = j.jobDeploymentStatus.isEmpty() ? QStringLiteral("new") : j.jobDeploymentStatus;
        if (!j.jobStatus.isEmpty()) state += u'/' + j.jobStatus;
        parts << QStringLiteral("RayJob %1 is %2").arg(j.name, state);
        if (!j.reason.isEmpty()) parts << QStringLiteral("reason %1").arg(j.reason);
        if (!j.message.isEmpty()) parts << j.message;
    }
    QMap<QString, int> phases;
    for (const PodInfo &p : c.in.pods) ++phases[p.view.phase.isEmpty() ? QStringLiteral("Unknown") : p.view.phase];
    QStringList counts;
    for (auto it = phases.cbegin(); it != phases.cend(); ++it) counts << QStringLiteral("%1 %2").arg(it.value()).arg(it.key());
    parts << (c.in.pods.isEmpty() ? Text::tr("no pods") : Text::tr("%1: %2").arg(Text::tr("%n pod(s)", nullptr, int(c.in.pods.size())), counts.join(Text::tr(", "))));
    QList<Kube::Event> warnings;
    for (const Kube::Event &e : c.in.events) {
        if (e.type == QLatin1String("Warning")) warnings << e;
    }
    std::stable_sort(warnings.begin(), warnings.end(), [](const Kube::Event &a, const Kube::Event &b) { return a.lastSeen < b.lastSeen; });
    if (warnings.size() > 5) warnings = warnings.mid(warnings.size() - 5);
    return Candidate{Cause::Unknown, Text::tr("No known cause found: ") + parts.join(Text::tr("; ")), warnings};
}

} // namespace

// ---- public ---------------------------------------------------------------------------------

QList<Cause> allCauses()
{
    return {Cause::InsufficientGpu, Cause::NoNodeMatchesSelector, Cause::UntoleratedTaint, Cause::NodesCordoned, Cause::ImagePullNotFound,
            Cause::ImagePullUnauthorized, Cause::ImagePullFailed, Cause::CapsuleDownloadFailed, Cause::ContainerConfigError, Cause::CrashLoop,
            Cause::PreRunningDeadlineExceeded, Cause::SubmissionFailed, Cause::QuotaExceeded, Cause::PodCreationFailed, Cause::Unknown};
}

QString causeId(Cause cause)
{
    switch (cause) {
    case Cause::InsufficientGpu: return QStringLiteral("InsufficientGpu");
    case Cause::NoNodeMatchesSelector: return QStringLiteral("NoNodeMatchesSelector");
    case Cause::UntoleratedTaint: return QStringLiteral("UntoleratedTaint");
    case Cause::NodesCordoned: return QStringLiteral("NodesCordoned");
    case Cause::ImagePullNotFound: return QStringLiteral("ImagePullNotFound");
    case Cause::ImagePullUnauthorized: return QStringLiteral("ImagePullUnauthorized");
    case Cause::ImagePullFailed: return QStringLiteral("ImagePullFailed");
    case Cause::CapsuleDownloadFailed: return QStringLiteral("CapsuleDownloadFailed");
    case Cause::ContainerConfigError: return QStringLiteral("ContainerConfigError");
    case Cause::CrashLoop: return QStringLiteral("CrashLoop");
    case Cause::PreRunningDeadlineExceeded: return QStringLiteral("PreRunningDeadlineExceeded");
    case Cause::SubmissionFailed: return QStringLiteral("SubmissionFailed");
    case Cause::QuotaExceeded: return QStringLiteral("QuotaExceeded");
    case Cause::PodCreationFailed: return QStringLiteral("PodCreationFailed");
    case Cause::Unknown: return QStringLiteral("Unknown");
    }
    return QStringLiteral("Unknown");
}

std::optional<Cause> causeFromId(const QString &id)
{
    for (const Cause c : allCauses()) {
        if (causeId(c) == id) return c;
    }
    return std::nullopt;
}

SchedulingFailure SchedulingFailure::parse(const QString &message)
{
    SchedulingFailure f;
    static const QRegularExpression head(QStringLiteral("^0/(\\d+) nodes are available:(.*)$"), QRegularExpression::DotMatchesEverythingOption);
    const auto m = head.match(message.trimmed());
    if (!m.hasMatch()) return f;
    f.valid = true;
    f.totalNodes = m.captured(1).toInt();
    QString rest = m.captured(2);
    // The preemption part follows the histogram's closing ". "; its own text ends in ".".
    const qsizetype pre = rest.indexOf(QLatin1String(" preemption: "));
    if (pre >= 0) {
        f.preemption = rest.mid(pre + 13).trimmed();
        rest.truncate(pre);
    }
    rest = rest.trimmed();
    if (rest.endsWith(u'.')) rest.chop(1);
    static const QRegularExpression item(QStringLiteral("^(\\d+) (.+)$"));
    for (const QString &part : rest.split(QStringLiteral(", "), Qt::SkipEmptyParts)) {
        const auto im = item.match(part.trimmed());
        if (im.hasMatch()) {
            f.reasons << qMakePair(im.captured(1).toInt(), im.captured(2));
        } else if (f.reasons.isEmpty()) {
            // A PreFilter rejection is one sentence without counts (it may hold commas).
            f.preFilter = rest;
            break;
        } else {
            // A comma inside a reason (a taint value, say) continues the previous one.
            f.reasons.last().second += QStringLiteral(", ") + part;
        }
    }
    return f;
}

int SchedulingFailure::count(const QString &reasonPrefix) const
{
    int total = 0;
    for (const auto &[n, reason] : reasons) {
        if (reason.startsWith(reasonPrefix)) total += n;
    }
    return total;
}

PodInfo PodInfo::fromJson(const QJsonObject &pod)
{
    PodInfo p;
    p.view = Kube::Pod::fromJson(pod);
    const QJsonObject spec = pod.value(QLatin1String("spec")).toObject();
    p.nodeSelector = spec.value(QLatin1String("nodeSelector")).toObject();
    for (const QJsonValue &t : spec.value(QLatin1String("tolerations")).toArray()) p.tolerations << Toleration::fromJson(t.toObject());
    for (const char *key : {"initContainers", "containers"}) {
        for (const QJsonValue &c : spec.value(QLatin1String(key)).toArray()) {
            p.images.insert(c.toObject().value(QLatin1String("name")).toString(), c.toObject().value(QLatin1String("image")).toString());
        }
    }
    const QJsonObject status = pod.value(QLatin1String("status")).toObject();
    for (const char *key : {"initContainerStatuses", "containerStatuses"}) {
        for (const QJsonValue &v : status.value(QLatin1String(key)).toArray()) {
            const QJsonObject s = v.toObject();
            const QJsonObject last = s.value(QLatin1String("lastState")).toObject().value(QLatin1String("terminated")).toObject();
            const QJsonObject now = s.value(QLatin1String("state")).toObject().value(QLatin1String("terminated")).toObject();
            const QJsonObject &terminated = now.isEmpty() ? last : now;
            if (terminated.contains(QLatin1String("exitCode"))) {
                p.lastExitCodes.insert(s.value(QLatin1String("name")).toString(), terminated.value(QLatin1String("exitCode")).toInt());
            }
        }
    }
    return p;
}

QString PodInfo::role() const
{
    const QString type = view.labels.value(QLatin1String("ray.io/node-type")).toString();
    if (type == QLatin1String("head")) return QStringLiteral("head");
    if (type == QLatin1String("worker")) return QStringLiteral("worker %1").arg(view.labels.value(QLatin1String("ray.io/group")).toString());
    if (view.labels.contains(QLatin1String("batch.kubernetes.io/job-name")) || view.labels.contains(QLatin1String("job-name"))) {
        return QStringLiteral("submitter");
    }
    return QStringLiteral("pod");
}

QJsonObject eventToJson(const Kube::Event &e)
{
    QJsonObject out{{QStringLiteral("type"), e.type},
                    {QStringLiteral("reason"), e.reason},
                    {QStringLiteral("message"), e.message},
                    {QStringLiteral("object"), QString(e.regardingKind + u'/' + e.regardingName)},
                    {QStringLiteral("count"), e.count}};
    if (!e.regardingNamespace.isEmpty()) out.insert(QStringLiteral("namespace"), e.regardingNamespace);
    if (!e.regardingFieldPath.isEmpty()) out.insert(QStringLiteral("fieldPath"), e.regardingFieldPath);
    if (!e.reportingComponent.isEmpty()) out.insert(QStringLiteral("reportingComponent"), e.reportingComponent);
    if (e.firstSeen.isValid()) out.insert(QStringLiteral("firstSeen"), e.firstSeen.toUTC().toString(Qt::ISODateWithMs));
    if (e.lastSeen.isValid()) out.insert(QStringLiteral("lastSeen"), e.lastSeen.toUTC().toString(Qt::ISODateWithMs));
    return out;
}

QJsonObject Diagnosis::toJson() const
{
    QJsonArray events;
    for (const Kube::Event &e : evidence) events.append(eventToJson(e));
    return QJsonObject{{QStringLiteral("cause"), causeId()}, {QStringLiteral("message"), message}, {QStringLiteral("evidence"), QJsonValue(events)}};
}

Diagnosis diagnose(const DiagnosisInput &input)
{
    const Context c(input);
    Candidate unknownScheduling;
    std::optional<Candidate> found = podCreation(c);
    if (!found) found = imagePull(c);
    if (!found) found = capsuleDownload(c);
    if (!found) found = containerConfig(c);
    if (!found) found = crashLoop(c);
    if (!found) found = scheduling(c, &unknownScheduling);
    Candidate below = found ? *found : !unknownScheduling.message.isEmpty() ? unknownScheduling : unknownCause(c);

    if (input.rayJob && input.rayJob->reason == QLatin1String("PreRunningDeadlineExceeded")) {
        const Kube::RayJob &j = *input.rayJob;
        QString message = Text::tr("Job %1 did not reach Running within its pre-running deadline").arg(j.name);
        if (j.preRunningDeadlineSeconds) message += Text::tr(" of %1 s").arg(*j.preRunningDeadlineSeconds);
        message += Text::tr(" and was failed");
        message += Text::tr(". Before that: ") + below.message;
        QList<Kube::Event> evidence = below.evidence;
        for (const Kube::Event &e : input.events) {
            if (e.regardingKind == QLatin1String("RayJob") && e.type == QLatin1String("Warning")) evidence << e;
        }
        return Diagnosis{Cause::PreRunningDeadlineExceeded, message, evidence};
    }
    if (input.rayJob && input.rayJob->reason == QLatin1String("SubmissionFailed")) {
        // The submitter Job gave up (its backoff limit) before Ray had the job: say how its
        // pods ended, the last one's exit code, and the operator's words.
        const Kube::RayJob &j = *input.rayJob;
        int failedPods = 0;
        std::optional<int> lastExit;
        for (const PodInfo &p : input.pods) {
            if (p.role() != QLatin1String("submitter") || p.view.phase != QLatin1String("Failed")) continue;
            ++failedPods;
            for (auto it = p.lastExitCodes.cbegin(); it != p.lastExitCodes.cend(); ++it) lastExit = it.value();
        }
        QString message = Text::tr("Job %1 was never handed to Ray: its submitter gave up").arg(j.name);
        if (failedPods > 0) {
            message += Text::tr(" after %1").arg(Text::tr("%n failed pod(s)", nullptr, failedPods));
            if (lastExit) message += Text::tr(", the last exiting with code %1").arg(*lastExit);
        }
        message += QStringLiteral(" (%1)").arg(j.message.isEmpty() ? QStringLiteral("SubmissionFailed") : j.message);
        QList<Kube::Event> evidence;
        for (const Kube::Event &e : input.events) {
            if (e.reason == QLatin1String("BackoffLimitExceeded") || (e.regardingKind == QLatin1String("RayJob") && e.type == QLatin1String("Warning"))) evidence << e;
        }
        return Diagnosis{Cause::SubmissionFailed, message, evidence};
    }
    return Diagnosis{below.cause, below.message, below.evidence};
}

} // namespace Starforge::Cluster
