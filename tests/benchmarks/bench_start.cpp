// bench_start: the app as a process, the figures bench_heatmap cannot take from inside one
// (docs/cluster.md, "The capacity heatmap"):
//  - process start to the main window's first frame, with an empty profiles file (nothing to
//    connect to): the time from QProcess::start to the app's "main window: first frame painted"
//    line (starforge.gui, info; logged on the event-loop turn after the window's first paint,
//    which has then been flushed to the X server); the median and the worst of --starts starts;
//  - the peer, kubectl: `kubectl get nodes` against the same scale sandbox, process start to its
//    first line of output and to its end, median and worst of --starts runs (its discovery cache
//    warmed once first, as on a workstation that has used it before);
//  - start to the session's "connected: Connected" with a profile on a starforge-sandbox
//    --fleet scale:N process (the profile made with starforge-cli, its token in the keychain);
//  - resident memory of that app once connected and idle for --idle seconds (VmRSS), and the
//    peak while it connected (VmHWM), from /proc.
// Needs an X server and a Secret Service: unless STARFORGE_BENCH_INNER is set, it runs itself
// again under `xvfb-run -a` and scripts/lib/with-secret-service.sh (packages xvfb, xauth,
// gnome-keyring, dbus; kubectl for the peer). Prints a table; asserts nothing.
//   build/bin/bench_start [--starts 5] [--nodes 5000] [--idle 20]

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QProcess>
#include <QStandardPaths>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QThread>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <vector>

#include "peer.h"

using namespace Starforge;

namespace {

constexpr int StartTimeoutMs = 60000;

double median(QList<double> v)
{
    if (v.isEmpty())
        return 0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v.at(v.size() / 2) : (v.at(v.size() / 2 - 1) + v.at(v.size() / 2)) / 2;
}

double worst(const QList<double> &v)
{
    return v.isEmpty() ? 0 : *std::max_element(v.begin(), v.end());
}

// Reads p's current read channel into *seen until it holds needle: the milliseconds on since
// then, or -1 when p ended or timeoutMs passed first.
double waitForText(QProcess &p, const QByteArray &needle, const QElapsedTimer &since, int timeoutMs, QByteArray *seen)
{
    QElapsedTimer waited;
    waited.start();
    while (!seen->contains(needle)) {
        if (waited.elapsed() > timeoutMs)
            return -1;
        if (p.state() == QProcess::NotRunning) {
            *seen += p.readAll();
            if (!seen->contains(needle))
                return -1;
            break;
        }
        if (p.waitForReadyRead(20))
            *seen += p.readAll();
    }
    return static_cast<double>(since.nsecsElapsed()) / 1e6;
}

void stop(QProcess &p)
{
    if (p.state() == QProcess::NotRunning)
        return;
    p.terminate();
    if (!p.waitForFinished(15000)) {
        p.kill();
        p.waitForFinished(5000);
    }
}

// VmRSS and VmHWM of a process, in MB (whole MB, rounded down), or -1.
struct Memory
{
    qint64 rssMb = -1;
    qint64 peakMb = -1;
};

Memory memoryOf(qint64 pid)
{
    Memory m;
    QFile status(QStringLiteral("/proc/%1/status").arg(pid));
    if (!status.open(QIODevice::ReadOnly))
        return m;
    for (const QByteArray &line : status.readAll().split('\n')) {
        const QList<QByteArray> f = line.simplified().split(' ');
        if (f.size() < 2)
            continue;
        if (f.at(0) == "VmRSS:")
            m.rssMb = f.at(1).toLongLong() / 1024;
        if (f.at(0) == "VmHWM:")
            m.peakMb = f.at(1).toLongLong() / 1024;
    }
    return m;
}

// The app's environment: xcb (whatever QT_QPA_PLATFORM the caller has), the profiles file, the
// log lines the bench waits for and no others, and none of the caller's FORGE_* overrides.
QProcessEnvironment appEnvironment(const QString &profiles)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const QString &key : env.keys()) {
        if (key.startsWith(QLatin1String("FORGE_")))
            env.remove(key);
    }
    env.remove(QStringLiteral("KUBECONFIG"));
    env.remove(QStringLiteral("STARFORGE_PROFILE"));
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("xcb"));
    env.insert(QStringLiteral("STARFORGE_CONFIG_FILE"), profiles);
    env.insert(QStringLiteral("QT_LOGGING_RULES"),
               QStringLiteral("starforge.*.debug=false;starforge.*.info=false;"
                              "starforge.gui.info=true;starforge.core.session.info=true"));
    return env;
}

// Runs program with args (stdin given), 60 s at most; "" when it exited 0, else why not.
QString run(const QString &program, const QStringList &args, const QProcessEnvironment &env, const QByteArray &input = {})
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(program, args);
    if (p.waitForStarted(10000) && !input.isEmpty())
        p.write(input);
    p.closeWriteChannel();
    const bool finished = p.waitForFinished(60000);
    return Bench::processFailure(QFileInfo(program).fileName(), p, finished);
}

// Runs this program again under Xvfb and a private keyring; returns only if that fails.
int runInside(const QStringList &args)
{
    const QByteArray wrapper = QByteArrayLiteral(SF_SOURCE_DIR "/scripts/lib/with-secret-service.sh");
    std::vector<QByteArray> argv {
        "xvfb-run", "-a", "-s", "-screen 0 1280x800x24", "sh", wrapper, QCoreApplication::applicationFilePath().toLocal8Bit()
    };
    for (const QString &a : args.mid(1))
        argv.push_back(a.toLocal8Bit());
    std::vector<char *> raw;
    for (QByteArray &a : argv)
        raw.push_back(a.data());
    raw.push_back(nullptr);
    qputenv("STARFORGE_BENCH_INNER", "1");
    std::fflush(stdout);
    ::execvp(raw.front(), raw.data());
    std::fprintf(stderr, "bench_start: cannot run xvfb-run (apt-get install xvfb xauth): %s\n", std::strerror(errno));
    return 1;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("The app's start time and connected memory, with kubectl as the peer."));
    parser.addHelpOption();
    const QCommandLineOption startsOption(QStringLiteral("starts"), QStringLiteral("Starts (and kubectl runs) to time."),
                                          QStringLiteral("n"), QStringLiteral("5"));
    const QCommandLineOption nodesOption(QStringLiteral("nodes"), QStringLiteral("Nodes of the scale sandbox (ten pods each)."),
                                         QStringLiteral("n"), QStringLiteral("5000"));
    const QCommandLineOption idleOption(QStringLiteral("idle"), QStringLiteral("Seconds connected before the memory is read."),
                                        QStringLiteral("s"), QStringLiteral("20"));
    parser.addOptions({ startsOption, nodesOption, idleOption });
    parser.process(app);
    if (qEnvironmentVariableIsEmpty("STARFORGE_BENCH_INNER"))
        return runInside(app.arguments());

    const int starts = std::max(1, parser.value(startsOption).toInt());
    const int nodes = std::max(1, parser.value(nodesOption).toInt());
    const int idleS = std::max(0, parser.value(idleOption).toInt());
    const QString bin = QCoreApplication::applicationDirPath();
    const QString starforge = bin + QStringLiteral("/starforge");
    const QString cli = bin + QStringLiteral("/starforge-cli");
    QTemporaryDir dir;

    // 1. Process start to the first frame, nothing to connect to.
    QList<double> startMs;
    for (int i = 0; i < starts; ++i) {
        QProcess p;
        p.setProcessEnvironment(appEnvironment(dir.filePath(QStringLiteral("empty.ini"))));
        p.setReadChannel(QProcess::StandardError);
        p.setStandardOutputFile(QProcess::nullDevice());
        QElapsedTimer since;
        since.start();
        p.start(starforge, {});
        QByteArray err;
        const double ms = waitForText(p, "starforge.gui: main window: first frame painted", since, StartTimeoutMs, &err);
        stop(p);
        if (ms < 0) {
            std::fprintf(stderr, "bench_start: the app showed no first frame within %d s; its stderr:\n%s\n", StartTimeoutMs / 1000,
                         err.constData());
            return 1;
        }
        startMs << ms;
    }

    // 2. The scale sandbox, its own process.
    const QString connection = dir.filePath(QStringLiteral("sb/connection.json"));
    QProcess sandbox;
    sandbox.setStandardOutputFile(QProcess::nullDevice());
    sandbox.setStandardErrorFile(dir.filePath(QStringLiteral("sandbox.log")));
    sandbox.start(bin + QStringLiteral("/starforge-sandbox"),
                  { QStringLiteral("--connection-file"), connection, QStringLiteral("--fleet"), QStringLiteral("scale:%1").arg(nodes) });
    QElapsedTimer sandboxWait;
    sandboxWait.start();
    while (!QFile::exists(connection) && sandbox.state() != QProcess::NotRunning && sandboxWait.elapsed() < 300000) {
        QThread::msleep(100);
    }
    if (!QFile::exists(connection)) {
        std::fprintf(stderr, "bench_start: the sandbox did not start (see its log)\n");
        stop(sandbox);
        return 1;
    }
    const QString kubeconfig = connection + QStringLiteral(".kubeconfig");

    // 3. The peer: kubectl get nodes, start to first line and to its end.
    const QString kubectl = QStandardPaths::findExecutable(QStringLiteral("kubectl"));
    const QString kubectlVersion = Bench::kubectlVersion(QStringLiteral("kubectl"));
    Bench::PeerFigure peerFirst = Bench::PeerFigure::missing(QStringLiteral("kubectl is not installed"));
    Bench::PeerFigure peerFirstWorst = peerFirst;
    Bench::PeerFigure peerEnd = peerFirst;
    if (!kubectl.isEmpty()) {
        const QStringList args { QStringLiteral("--kubeconfig"), kubeconfig,
                                 QStringLiteral("--cache-dir"),  dir.filePath(QStringLiteral("kubectl-cache")),
                                 QStringLiteral("get"),          QStringLiteral("nodes") };
        QList<double> first;
        QList<double> end;
        QString failure = run(kubectl, args, QProcessEnvironment::systemEnvironment()); // warms the discovery cache
        for (int i = 0; failure.isEmpty() && i < starts; ++i) {
            QProcess k;
            k.setReadChannel(QProcess::StandardOutput);
            QElapsedTimer since;
            since.start();
            k.start(kubectl, args);
            QByteArray out;
            const double firstMs = waitForText(k, "\n", since, StartTimeoutMs, &out);
            const bool finished = k.waitForFinished(StartTimeoutMs);
            const double endMs = static_cast<double>(since.nsecsElapsed()) / 1e6;
            failure = Bench::processFailure(QStringLiteral("kubectl get nodes"), k, finished);
            if (failure.isEmpty() && firstMs < 0)
                failure = QStringLiteral("kubectl get nodes printed nothing");
            first << firstMs;
            end << endMs;
        }
        if (failure.isEmpty()) {
            peerFirst = Bench::PeerFigure::measured(median(first));
            peerFirstWorst = Bench::PeerFigure::measured(worst(first));
            peerEnd = Bench::PeerFigure::measured(median(end));
        } else {
            peerFirst = peerFirstWorst = peerEnd = Bench::PeerFigure::missing(failure);
        }
    }

    // 4. A profile for the sandbox (its secrets in the keychain), the app connected, then idle.
    QFile connectionFile(connection);
    if (!connectionFile.open(QIODevice::ReadOnly)) {
        std::fprintf(stderr, "bench_start: cannot read %s\n", qPrintable(connection));
        stop(sandbox);
        return 1;
    }
    const QJsonObject forge = QJsonDocument::fromJson(connectionFile.readAll()).object().value(QLatin1String("forge")).toObject();
    const QString profiles = dir.filePath(QStringLiteral("scale.ini"));
    const QProcessEnvironment cliEnv = appEnvironment(profiles);
    const QStringList secretKeys { QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("FORGE_S3_ACCESS_KEY"),
                                   QStringLiteral("FORGE_S3_SECRET_KEY") };
    QStringList setArgs { QStringLiteral("profile"), QStringLiteral("set"), QStringLiteral("scale") };
    for (auto it = forge.begin(); it != forge.end(); ++it) {
        if (!secretKeys.contains(it.key()))
            setArgs << it.key() + u'=' + it.value().toString();
    }
    QString failure = run(cli, setArgs, cliEnv);
    for (const QString &key : secretKeys) {
        if (failure.isEmpty() && forge.contains(key)) {
            failure
                = run(cli, { QStringLiteral("profile"), QStringLiteral("set"), QStringLiteral("scale"), key, QStringLiteral("--stdin") },
                      cliEnv, forge.value(key).toString().toUtf8());
        }
    }
    if (failure.isEmpty())
        failure = run(cli, { QStringLiteral("profile"), QStringLiteral("use"), QStringLiteral("scale") }, cliEnv);
    if (!failure.isEmpty()) {
        std::fprintf(stderr, "bench_start: the profile could not be made: %s\n", qPrintable(failure));
        stop(sandbox);
        return 1;
    }
    QProcess connected;
    connected.setProcessEnvironment(appEnvironment(profiles));
    connected.setReadChannel(QProcess::StandardError);
    connected.setStandardOutputFile(QProcess::nullDevice());
    QElapsedTimer since;
    since.start();
    connected.start(starforge, {});
    QByteArray err;
    const double connectedMs = waitForText(connected, "starforge.core.session: connected: Connected", since, 120000, &err);
    if (connectedMs < 0) {
        std::fprintf(stderr, "bench_start: the app did not connect; its stderr:\n%s\n", err.constData());
        stop(connected);
        stop(sandbox);
        return 1;
    }
    QElapsedTimer idle;
    idle.start();
    while (idle.elapsed() < idleS * 1000LL && connected.state() != QProcess::NotRunning) {
        if (connected.waitForReadyRead(100))
            err += connected.readAll(); // the pipe never fills
    }
    const Memory memory = memoryOf(connected.processId());
    const bool crashed = connected.state() == QProcess::NotRunning;
    stop(connected);
    stop(sandbox);
    if (crashed || memory.rssMb < 0) {
        std::fprintf(stderr, "bench_start: the app ended while idle; its stderr:\n%s\n", err.constData());
        return 1;
    }

    const Bench::PeerFigure memoryPeer = Bench::PeerFigure::missing(QStringLiteral("kubectl keeps nothing resident between commands"));
    const QLocale en(QLocale::English);
    const QString fleet = QStringLiteral("%1 nodes / %2 pods").arg(en.toString(nodes), en.toString(nodes * 10));
    std::printf("bench_start: %d starts, starforge-sandbox --fleet scale:%d (%s), idle %d s; %s, %d cores; Qt %s; kubectl %s\n\n", starts,
                nodes, qPrintable(fleet), idleS, qPrintable(QSysInfo::prettyProductName()), QThread::idealThreadCount(), qVersion(),
                qPrintable(kubectlVersion));
    std::printf("| measure | starforge | peer: kubectl | peer / starforge | target |\n|---|---|---|---|---|\n");
    std::printf("| process start to main window's first frame, no profile (%d starts) | median %.0f ms, worst %.0f ms | `get nodes` on the "
                "scale:%d sandbox, process start to its first line: median %s, worst %s | %s | < 500 ms |\n",
                starts, median(startMs), worst(startMs), nodes, qPrintable(peerFirst.text(0, QStringLiteral(" ms"))),
                qPrintable(peerFirstWorst.text(0, QStringLiteral(" ms"))), qPrintable(peerFirst.ratio(median(startMs), true)));
    // Not the same work, so no ratio: Connected is the connection check; the informers list
    // the nodes and pods after it.
    std::printf(
        "| start to session Connected, scale:%d sandbox | %.0f ms | `get nodes` to its last line (%s nodes listed): median %s | – | – |\n",
        nodes, connectedMs, qPrintable(en.toString(nodes)), qPrintable(peerEnd.text(0, QStringLiteral(" ms"))));
    std::printf("| resident memory, connected to the scale:%d sandbox (%s), idle %d s | %lld MB (peak %lld MB) | %s | %s | < 150 MB |\n",
                nodes, qPrintable(fleet), idleS, memory.rssMb, memory.peakMb, qPrintable(memoryPeer.text(0)),
                qPrintable(memoryPeer.ratio(static_cast<double>(memory.rssMb), true)));
    return 0;
}
