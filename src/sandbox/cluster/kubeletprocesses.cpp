// The kubelet's container processes: the command line (the container's command and args, or
// the image's entrypoint the sandbox knows), the environment with its downward-API fields and
// Secret references, the start, the exit, and the restart policy with CrashLoopBackOff.
//
// A container's command runs on the host (see kubelet.h): the sandbox is a local test cluster
// reachable only on loopback with its token. It runs under starforge-sandbox-shim, which gives it
// its process group, its parent-death signal and its volumes (src/sandbox/shim/main.cpp).

#include "sandbox/cluster/kubelet.h"

#include "sandbox/cluster/kubeletpod.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"
#include "sandbox/util/ownerfiles.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QTimer>

#include <optional>

#include <csignal>
#include <sys/prctl.h>
#include <unistd.h>

namespace Starforge::Sandbox {

using namespace KubeletCommon;

namespace {

struct CommandLine
{
    QString program;
    QStringList arguments;
};

// Without a command the image's entrypoint runs: `vllm serve` for vLLM images, which the sandbox
// knows; for any other image an idle process stands in.
CommandLine commandLineOf(const QJsonObject &spec, bool vllmImage)
{
    QStringList command;
    for (const QJsonValue &v : spec.value(QStringLiteral("command")).toArray()) command << v.toString();
    QStringList args;
    for (const QJsonValue &v : spec.value(QStringLiteral("args")).toArray()) args << v.toString();
    if (!command.isEmpty()) {
        return {command.first(), command.mid(1) + args};
    }
    if (vllmImage) {
        return {QStringLiteral("vllm"), QStringList{QStringLiteral("serve")} + args};
    }
    return {QStringLiteral("sleep"), {QStringLiteral("infinity")}};
}

// A fieldRef the sandbox can answer; nothing for one it does not know.
std::optional<QString> downwardValue(const QString &fieldPath, const QString &podName, const QString &ns, const QString &uid, const QString &node,
                      const QString &podIp)
{
    if (fieldPath == QLatin1String("metadata.name")) return podName;
    if (fieldPath == QLatin1String("metadata.namespace")) return ns;
    if (fieldPath == QLatin1String("metadata.uid")) return uid;
    if (fieldPath == QLatin1String("spec.nodeName")) return node;
    if (fieldPath == QLatin1String("status.podIP")) return podIp;
    if (fieldPath == QLatin1String("status.hostIP")) return QStringLiteral("127.0.0.1");
    return std::nullopt;
}

// One volume as a container sees it.
struct ContainerMount
{
    QString hostPath;
    QString containerPath;
    bool readOnly = false;
};

// The host file behind a path the container sees: under a mount, the volume's; else the host's own.
QString hostPathOf(const QList<ContainerMount> &mounts, const QString &containerPath)
{
    const ContainerMount *best = nullptr;
    for (const ContainerMount &m : mounts) {
        const bool under = containerPath == m.containerPath || containerPath.startsWith(m.containerPath + u'/');
        if (under && (!best || m.containerPath.size() > best->containerPath.size())) best = &m;
    }
    return best ? best->hostPath + containerPath.mid(best->containerPath.size()) : containerPath;
}

// runc's words around a reason a container could not be created; such a run counts once and
// exits 128 (StartError), as on a real node.
QString runcStartError(const QString &reason)
{
    return QStringLiteral("failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: "
                          "unable to start container process: %1: unknown").arg(reason);
}

// "back-off 20s", "back-off 5m0s": Go's time.Duration text, as the kubelet's message has it.
QString goDuration(int ms)
{
    if (ms % 60000 == 0) return QStringLiteral("%1m0s").arg(ms / 60000);
    if (ms >= 60000) return QStringLiteral("%1m%2s").arg(ms / 60000).arg((ms % 60000) / 1000);
    return QStringLiteral("%1s").arg(ms / 1000);
}

} // namespace

void Kubelet::run(Pod &pod, Container &container)
{
    if (!pod.volumeError.isEmpty()) {
        // As the kubelet does while a volume cannot be set up: the container stays in
        // ContainerCreating and the pod gets FailedMount.
        container.waitingReason = QStringLiteral("ContainerCreating");
        record(pod, QStringLiteral("Warning"), QStringLiteral("FailedMount"), pod.volumeError, {});
        syncStatus(pod);
        return;
    }
    const CommandLine commandLine = commandLineOf(container.spec, m_options.vllmImages.contains(container.image()));
    QProcessEnvironment env;
    if (const QString configError = resolveEnvironment(pod, container, env); !configError.isEmpty()) {
        holdForConfig(pod, container, configError);
        return;
    }
    QList<ContainerMount> mounts;
    for (const QJsonValue &v : container.spec.value(QStringLiteral("volumeMounts")).toArray()) {
        const QJsonObject mount = v.toObject();
        const QString volumeName = mount.value(QStringLiteral("name")).toString();
        const auto volume = pod.volumes.constFind(volumeName);
        if (volume == pod.volumes.cend()) {
            holdForConfig(pod, container, QStringLiteral("volume mount %1 names no volume of the pod").arg(quoted(volumeName)));
            return;
        }
        QString hostPath = volume->hostDir;
        if (const QString subPath = mount.value(QStringLiteral("subPath")).toString(); !subPath.isEmpty()) {
            hostPath += QDir::cleanPath(u'/' + subPath);
            if (volume->owned) makeOwnerOnlyPath(hostPath);
        }
        mounts << ContainerMount{hostPath, QDir::cleanPath(mount.value(QStringLiteral("mountPath")).toString()),
                                 volume->readOnly || mount.value(QStringLiteral("readOnly")).toBool()};
    }
    QString workDir = pod.dir + QStringLiteral("/root");
    if (const QString wd = container.spec.value(QStringLiteral("workingDir")).toString(); !wd.isEmpty()) {
        workDir += QDir::cleanPath(u'/' + wd);
        makeOwnerOnlyPath(workDir);
    }
    // The program as the container will find it: its own PATH, through its mounts.
    const QString &program = commandLine.program;
    const auto executable = [&](const QString &containerPath) {
        const QFileInfo file(hostPathOf(mounts, containerPath));
        return file.isFile() && file.isExecutable();
    };
    QString resolved;
    if (program.contains(u'/')) {
        const QString path = QDir::isAbsolutePath(program) ? program : QDir::cleanPath(workDir + u'/' + program);
        if (executable(path)) resolved = path;
    } else {
        for (const QString &dir : env.value(QStringLiteral("PATH")).split(u':', Qt::SkipEmptyParts)) {
            if (const QString candidate = QDir::cleanPath(dir + u'/' + program); executable(candidate)) {
                resolved = candidate;
                break;
            }
        }
    }
    if (resolved.isEmpty()) {
        failToStart(pod, container, program);
        return;
    }
    QStringList shimArguments{QStringLiteral("--grace-ms"), QString::number(m_options.terminationGraceMs),
                              QStringLiteral("--error-file"), container.startErrorFile()};
    for (const ContainerMount &m : std::as_const(mounts)) {
        shimArguments << (m.readOnly ? QStringLiteral("--mount-ro") : QStringLiteral("--mount")) << m.hostPath << m.containerPath;
    }
    shimArguments << QStringLiteral("--") << resolved << commandLine.arguments;
    startProcess(pod, container, m_options.shim, shimArguments, env, workDir);
}

QString Kubelet::resolveEnvironment(const Pod &pod, const Container &container, QProcessEnvironment &env) const
{
    // The sandbox's own variables first (the stand-ins read them), then the container's env.
    const QString hostPath = qEnvironmentVariable("PATH", QStringLiteral("/usr/local/bin:/usr/bin:/bin"));
    env.insert(QStringLiteral("PATH"), m_options.toolsDir.isEmpty() ? hostPath : m_options.toolsDir + u':' + hostPath);
    env.insert(QStringLiteral("STARFORGE_SANDBOX_RAY_STATE"), m_options.stateDir + QStringLiteral("/ray"));
    // The Ray stand-in names a head by namespace and cluster, as the head Service's DNS name does.
    env.insert(QStringLiteral("STARFORGE_SANDBOX_POD_NAMESPACE"), pod.ns);
    if (!m_options.caFile.isEmpty()) {
        env.insert(QStringLiteral("STARFORGE_SANDBOX_CA"), m_options.caFile);
    }
    env.insert(QStringLiteral("HOME"), pod.dir + QStringLiteral("/root"));
    env.insert(QStringLiteral("HOSTNAME"), pod.name);
    env.insert(QStringLiteral("POD_IP"), pod.ip);
    env.insert(QStringLiteral("STARFORGE_SANDBOX_TOKEN_RATE"), QString::number(m_options.tokenRate));
    if (!m_options.nemoRlStepSeconds.isEmpty()) {
        // Reaches the driver through the Ray head's environment (the ray stand-in's job submit).
        env.insert(QStringLiteral("STARFORGE_FAKE_STEP_SECONDS"), m_options.nemoRlStepSeconds);
    }
    for (const QJsonValue &v : container.spec.value(QStringLiteral("env")).toArray()) {
        const QJsonObject e = v.toObject();
        const QString key = e.value(QStringLiteral("name")).toString();
        if (e.contains(QStringLiteral("value"))) {
            env.insert(key, e.value(QStringLiteral("value")).toString());
            continue;
        }
        const QJsonObject from = e.value(QStringLiteral("valueFrom")).toObject();
        const QString fieldRef = from.value(QStringLiteral("fieldRef")).toObject().value(QStringLiteral("fieldPath")).toString();
        if (const auto value = downwardValue(fieldRef, pod.name, pod.ns, pod.uid, pod.node, pod.ip)) {
            env.insert(key, *value);
        }
        // The kubelet's own errors for what it cannot resolve: CreateContainerConfigError.
        QString configError;
        if (const QJsonObject keyRef = from.value(QStringLiteral("secretKeyRef")).toObject(); !keyRef.isEmpty()) {
            const bool optional = keyRef.value(QStringLiteral("optional")).toBool();
            const QString name = keyRef.value(QStringLiteral("name")).toString();
            const QString dataKey = keyRef.value(QStringLiteral("key")).toString();
            const ObjectPtr secret = m_store->get(secretType().storage, pod.ns, name);
            const QJsonObject data = secret ? secret->object.value(QStringLiteral("data")).toObject() : QJsonObject();
            if (!secret) {
                if (!optional) configError = QStringLiteral("secret %1 not found").arg(quoted(name));
            } else if (!data.contains(dataKey)) {
                if (!optional) configError = QStringLiteral("couldn't find key %1 in Secret %2/%3").arg(dataKey, pod.ns, name);
            } else {
                env.insert(key, QString::fromUtf8(QByteArray::fromBase64(data.value(dataKey).toString().toLatin1())));
            }
        }
        if (const QJsonObject keyRef = from.value(QStringLiteral("configMapKeyRef")).toObject();
            !keyRef.isEmpty() && !keyRef.value(QStringLiteral("optional")).toBool()) {
            // The sandbox serves no ConfigMaps.
            configError = QStringLiteral("configmap %1 not found").arg(quoted(keyRef.value(QStringLiteral("name")).toString()));
        }
        if (!configError.isEmpty()) {
            return configError;
        }
    }
    return {};
}

void Kubelet::holdForConfig(Pod &pod, Container &container, const QString &error)
{
    container.waitingReason = QStringLiteral("CreateContainerConfigError");
    container.waitingMessage = error;
    record(pod, QStringLiteral("Warning"), QStringLiteral("Failed"), QStringLiteral("Error: ") + container.waitingMessage, container.fieldPath());
    syncStatus(pod);
    // The pod worker syncs again after its back-off (10 s): a Secret created meanwhile is used.
    QTimer::singleShot(m_options.crashLoopBackoffMs, pod.context.get(), [this, uid = pod.uid, c = &container] {
        if (const auto p = m_pods.value(uid); p && p->failedReason.isEmpty() && c->waitingReason == QLatin1String("CreateContainerConfigError")) {
            run(*p, *c);
        }
    });
}

void Kubelet::failToStart(Pod &pod, Container &container, const QString &program)
{
    // runc's words for a missing executable; the container counts as run once and exits 128.
    const QString message = runcStartError(QStringLiteral("exec: %1: executable file not found in $PATH").arg(quoted(program)));
    container.startedAt = container.finishedAt = QDateTime::currentDateTimeUtc();
    record(pod, QStringLiteral("Normal"), QStringLiteral("Created"), QStringLiteral("Created container: %1").arg(container.name), container.fieldPath());
    record(pod, QStringLiteral("Warning"), QStringLiteral("Failed"), QStringLiteral("Error: ") + message, container.fieldPath());
    container.terminatedReason = QStringLiteral("StartError");
    container.terminatedMessage = message;
    ++container.runs;
    onExit(pod.uid, &container, 128);
}

void Kubelet::startProcess(Pod &pod, Container &container, const QString &program, const QStringList &arguments,
                           const QProcessEnvironment &env, const QString &workDir)
{
    auto *process = new QProcess(pod.context.get());
    // Between fork and exec of the shim: its own session and process group, and SIGHUP when the
    // thread that started it (the sandbox's) dies. A sandbox already gone by then leaves no shim.
    const pid_t sandbox = ::getpid();
    process->setChildProcessModifier([sandbox] {
        ::setsid();
        ::prctl(PR_SET_PDEATHSIG, SIGHUP);
        if (::getppid() != sandbox) {
            ::_exit(137);
        }
    });
    process->setProcessEnvironment(env);
    process->setWorkingDirectory(workDir);
    process->setProgram(program);
    process->setArguments(arguments);
    container.process = process;
    container.state = Container::State::Running;
    container.restartPending = false;
    container.startedAt = QDateTime::currentDateTimeUtc();
    container.waitingReason.clear();
    container.waitingMessage.clear();
    container.terminatedReason.clear();
    container.terminatedMessage.clear();
    ++container.runs;
    QFile::remove(container.logPath(container.runs));
    QFile::remove(container.startErrorFile());
    const QString uid = pod.uid;
    Container *c = &container;
    connect(process, &QProcess::readyReadStandardOutput, this, [this, uid, c, process] {
        if (m_pods.contains(uid)) appendOutput(*c, process->readAllStandardOutput(), "stdout", false);
    });
    connect(process, &QProcess::readyReadStandardError, this, [this, uid, c, process] {
        if (m_pods.contains(uid)) appendOutput(*c, process->readAllStandardError(), "stderr", false);
    });
    connect(process, &QProcess::finished, this, [this, uid, c, process](int code, QProcess::ExitStatus status) {
        if (m_pods.contains(uid)) {
            appendOutput(*c, process->readAllStandardOutput(), "stdout", true);
            appendOutput(*c, process->readAllStandardError(), "stderr", true);
        }
        c->process = nullptr;
        process->deleteLater();
        if (QFile reason(c->startErrorFile()); code == 128 && reason.open(QIODevice::ReadOnly)) {
            // The shim could not create the container (a mount, the exec): runc's StartError.
            c->terminatedReason = QStringLiteral("StartError");
            c->terminatedMessage = runcStartError(QString::fromUtf8(reason.readAll()).trimmed());
            reason.remove();
            if (const auto p = m_pods.value(uid)) {
                record(*p, QStringLiteral("Warning"), QStringLiteral("Failed"), QStringLiteral("Error: ") + c->terminatedMessage, c->fieldPath());
            }
        }
        // The shim reports a signal death as 128 + signal, as a container runtime does; a shim
        // killed itself is 137.
        onExit(uid, c, status == QProcess::CrashExit ? 137 : code);
    });
    connect(process, &QProcess::errorOccurred, this, [this, uid, c, process](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) {
            c->process = nullptr;
            process->deleteLater();
            c->terminatedReason = QStringLiteral("StartError");
            c->terminatedMessage = process->errorString();
            onExit(uid, c, 128);
        }
    });
    record(pod, QStringLiteral("Normal"), QStringLiteral("Created"), QStringLiteral("Created container: %1").arg(container.name), container.fieldPath());
    record(pod, QStringLiteral("Normal"), QStringLiteral("Started"), QStringLiteral("Started container %1").arg(container.name), container.fieldPath());
    process->start();
    syncStatus(pod);
}

void Kubelet::onExit(const QString &uid, Container *container, int exitCode)
{
    const auto pod = m_pods.value(uid);
    if (!pod) {
        return;
    }
    Container &c = *container;
    c.state = Container::State::Terminated;
    c.exitCode = exitCode;
    c.finishedAt = QDateTime::currentDateTimeUtc();
    if (c.terminatedReason.isEmpty()) {
        c.terminatedReason = exitCode == 0 ? QStringLiteral("Completed") : QStringLiteral("Error");
    }
    c.endFollowers();
    const QString policy = pod->restartPolicy();
    if (c.init) {
        if (exitCode == 0) {
            ++pod->initIndex;
            syncStatus(*pod);
            advance(*pod);
            return;
        }
        if (policy == QLatin1String("Never")) {
            pod->failedReason = QStringLiteral("Init:Error");
            syncStatus(*pod);
            return;
        }
    }
    const bool restart = policy == QLatin1String("Always") || (policy == QLatin1String("OnFailure") && exitCode != 0);
    if (!restart) {
        syncStatus(*pod);
        return;
    }
    restartAfterBackOff(*pod, c);
}

void Kubelet::terminate(QProcess *process) const
{
    const auto group = static_cast<pid_t>(process->processId());
    process->terminate();
    QTimer::singleShot(m_options.terminationGraceMs + 2000, process, [process, group] {
        if (process->state() != QProcess::NotRunning && group > 0) {
            ::kill(-group, SIGKILL);
        }
    });
}

void Kubelet::restartAfterBackOff(Pod &pod, Container &c)
{
    // CrashLoopBackOff: 10 s doubling to five minutes.
    const int delay = std::min(m_options.crashLoopBackoffMs << std::min(c.restarts, 5), 300000);
    c.restartPending = true;
    c.lastTerminated = QJsonObject{{QStringLiteral("terminated"),
                                    QJsonObject{{QStringLiteral("exitCode"), c.exitCode}, {QStringLiteral("reason"), c.terminatedReason},
                                                {QStringLiteral("startedAt"), rfc3339(c.startedAt)}, {QStringLiteral("finishedAt"), rfc3339(c.finishedAt)},
                                                {QStringLiteral("containerID"), c.containerId(pod.uid, c.runs)}}}};
    ++c.restarts;
    c.state = Container::State::Waiting;
    c.waitingReason = QStringLiteral("CrashLoopBackOff");
    c.waitingMessage = QStringLiteral("back-off %1 restarting failed container=%2 pod=%3").arg(goDuration(delay), c.name, pod.podRef());
    record(pod, QStringLiteral("Warning"), QStringLiteral("BackOff"),
           QStringLiteral("Back-off restarting failed container %1 in pod %2").arg(c.name, pod.podRef()), c.fieldPath());
    syncStatus(pod);
    QTimer::singleShot(delay, pod.context.get(), [this, uid = pod.uid, container = &c] {
        if (const auto p = m_pods.value(uid)) {
            run(*p, *container);
        }
    });
}

} // namespace Starforge::Sandbox
