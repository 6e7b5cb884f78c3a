// bench_connect: the raw-transfer floor of issue 11. At --fleet scale:5000 (5,000 nodes, 50,000
// pods, about 60 MB of JSON), in one run against one starforge-sandbox process:
//  - the floor: curl GETs the two lists the capacity informers read (all nodes; all pods but
//    Succeeded and Failed), each in one request, once one after the other and once both at
//    the same time;
//  - a core Session connect with the capacity informers and CapacityTracker, in this process,
//    with the GUI's options (access checks and operator probe on) but jobs and events off,
//    from open() to ready();
//  - `starforge-cli capacity --connection-file F`, wall time of the process;
//  - the peer: `kubectl get nodes -o json` then `kubectl get pods -A -o json`.
// Each figure is the median of --runs rounds (the measures are interleaved per round, so drift
// hits them all alike); ratios are against the raw GET in the same mode: the Session and the
// CLI read both lists at once (against curl in parallel), kubectl one after the other (against
// curl in sequence). Memory per cached object: heap in use (every malloc arena) after the
// Session is ready minus before open(), over the objects its two informers cache.
// Prints a table; asserts nothing. A peer that fails or is missing prints "not measured".
//   build/bin/bench_connect [--nodes 5000] [--runs 3]

#include "core/cluster/capacity.h"
#include "core/kube/informer.h"
#include "core/session/session.h"
#include "support/memorysecretstore.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QTimer>
#include <QUrlQuery>

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>

using namespace Starforge;

namespace {

constexpr int ProcessTimeoutMs = 600000;

// The lists as the informers ask for them, in pages of 500 following the continue token, with
// nothing done to the bytes: the floor of the paged protocol on this server, which serves pages
// far faster than one whole list. Both lists at once, one connection each; prints milliseconds.
// Arguments: the connection file, then the paths.
const char *const PagedScript = R"py(
import http.client, json, re, ssl, sys, threading, time, urllib.parse
c = json.load(open(sys.argv[1]))
u = urllib.parse.urlparse(c['apiServer'])
ctx = ssl.create_default_context(cafile=c['caFile'])
failed = []
def fetch(path):
    conn = http.client.HTTPSConnection(u.hostname, u.port, context=ctx)
    token = None
    while True:
        query = path + ('&' if '?' in path else '?') + 'limit=500' + ('&continue=' + urllib.parse.quote(token) if token else '')
        conn.request('GET', query, headers={'Authorization': 'Bearer ' + c['token']})
        reply = conn.getresponse()
        body = reply.read()
        if reply.status != 200:
            failed.append('%s: HTTP %d' % (path, reply.status))
            return
        head = body[:body.find(b'"items":')]
        m = re.search(rb'"continue":"([^"]*)"', head)
        token = m.group(1).decode() if m else None
        if not token:
            return
start = time.monotonic()
threads = [threading.Thread(target=fetch, args=(p,)) for p in sys.argv[2:]]
for t in threads: t.start()
for t in threads: t.join()
if failed:
    sys.exit('; '.join(failed))
print('%.1f' % ((time.monotonic() - start) * 1000))
)py";

// Bytes the allocator has handed out and not had back, over every arena: mallinfo2() sees only
// the main arena, and the informers' pages are parsed (and their cache entries allocated) on
// pool threads, which glibc gives arenas of their own.
qint64 heapInUse()
{
    malloc_trim(0);
    char *text = nullptr;
    size_t size = 0;
    FILE *stream = open_memstream(&text, &size);
    if (!stream) {
        return -1;
    }
    malloc_info(0, stream);
    std::fclose(stream);
    const QByteArray xml(text, static_cast<qsizetype>(size));
    std::free(text);
    // The totals follow the last </heap>: free chunks (fast, rest), mmapped chunks, and the
    // bytes the arenas hold from the system.
    const QByteArray totals = xml.mid(xml.lastIndexOf("</heap>"));
    const auto field = [&](const QByteArray &tag) -> qint64 {
        const qsizetype at = totals.indexOf(tag);
        if (at < 0) return 0;
        const qsizetype from = totals.indexOf("size=\"", at) + 6;
        return totals.mid(from, totals.indexOf('"', from) - from).toLongLong();
    };
    return field("<system type=\"current\"") - field("<total type=\"fast\"") - field("<total type=\"rest\"")
         + field("<total type=\"mmap\"");
}

qint64 residentBytes()
{
    QFile statm(QStringLiteral("/proc/self/statm"));
    if (!statm.open(QIODevice::ReadOnly)) return -1;
    const QList<QByteArray> fields = statm.readAll().split(' ');
    return fields.size() > 1 ? fields.at(1).toLongLong() * sysconf(_SC_PAGESIZE) : -1;
}

// CPU time (user + system, ms) of this process, of its GUI (main) thread, of its waited-for
// children, and of the sandbox.
struct Cpu
{
    double self = 0;
    double gui = 0;
    double children = 0;
    double sandbox = 0;

    static double of(int who)
    {
        struct rusage r{};
        getrusage(who, &r);
        return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e3 + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e3;
    }
    static double ofProcess(qint64 pid) { return ofStat(QStringLiteral("/proc/%1/stat").arg(pid)); }
    static double ofStat(const QString &path)
    {
        QFile stat(path);
        if (!stat.open(QIODevice::ReadOnly)) return 0;
        // After the command's closing parenthesis: state is field 3, utime and stime 14 and 15.
        const QByteArray text = stat.readAll();
        const QList<QByteArray> fields = text.mid(text.lastIndexOf(')') + 2).split(' ');
        const double ticks = fields.size() > 12 ? fields.at(11).toDouble() + fields.at(12).toDouble() : 0;
        return ticks * 1e3 / static_cast<double>(sysconf(_SC_CLK_TCK));
    }
    static Cpu now(qint64 sandboxPid)
    {
        const double gui = ofStat(QStringLiteral("/proc/self/task/%1/stat").arg(getpid()));   // the main thread's id is the pid
        return Cpu{of(RUSAGE_SELF), gui, of(RUSAGE_CHILDREN), ofProcess(sandboxPid)};
    }
};

double median(QList<double> v)
{
    std::sort(v.begin(), v.end());
    return v.isEmpty() ? 0 : v.size() % 2 ? v.at(v.size() / 2) : (v.at(v.size() / 2 - 1) + v.at(v.size() / 2)) / 2;
}

// One figure: milliseconds, or why there is none, with the CPU time spent on it.
struct Figure
{
    QList<double> samples;
    QList<double> clientCpu;   // the measured process(es): this one for the Session, children else
    QList<double> serverCpu;   // the sandbox
    QList<double> guiCpu;      // the Session's: its thread's share of clientCpu
    QString failure;           // set once any round failed: the figure is then not reported

    void add(double ms) { samples << ms; }
    void add(double ms, const Cpu &before, const Cpu &after)
    {
        samples << ms;
        clientCpu << (after.self - before.self) + (after.children - before.children);
        serverCpu << after.sandbox - before.sandbox;
        guiCpu << after.gui - before.gui;
    }
    void fail(const QString &why)
    {
        if (failure.isEmpty()) failure = why;
    }
    bool ok() const { return failure.isEmpty() && !samples.isEmpty(); }
    double median() const { return ::median(samples); }
    QString text() const
    {
        if (!ok()) return QStringLiteral("not measured: ") + (failure.isEmpty() ? QStringLiteral("no rounds") : failure);
        return QStringLiteral("%1 ms").arg(median(), 0, 'f', 0);
    }
    QString cpuText() const
    {
        if (!ok() || clientCpu.isEmpty()) return QString();
        return QStringLiteral("%1 ms | %2 ms").arg(::median(clientCpu), 0, 'f', 0).arg(::median(serverCpu), 0, 'f', 0);
    }
    QString ratio(const Figure &floor) const
    {
        if (!ok() || !floor.ok()) return QStringLiteral("-");
        return QStringLiteral("%1x").arg(median() / floor.median(), 0, 'f', 2);
    }
};

QString lastLine(const QByteArray &text)
{
    const QList<QByteArray> lines = text.trimmed().split('\n');
    return lines.isEmpty() ? QString() : QString::fromUtf8(lines.last()).trimmed();
}

// A started process's outcome: its wall time, or why it failed.
struct Run
{
    double ms = 0;
    QString failure;
    QByteArray out;
};

void start(QProcess &p, const QString &program, const QStringList &args, const QProcessEnvironment &env, bool keepOutput)
{
    p.setProcessEnvironment(env);
    if (!keepOutput) p.setStandardOutputFile(QProcess::nullDevice());
    p.start(program, args);
}

Run finish(QProcess &p, const QElapsedTimer &clock)
{
    Run r;
    if (!p.waitForFinished(ProcessTimeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.failure = QStringLiteral("%1 did not finish within %2 s").arg(QFileInfo(p.program()).fileName()).arg(ProcessTimeoutMs / 1000);
        return r;
    }
    r.ms = clock.nsecsElapsed() / 1e6;
    r.out = p.readAllStandardOutput();
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        const QString err = lastLine(p.readAllStandardError());
        r.failure = QStringLiteral("%1 exited with %2%3").arg(QFileInfo(p.program()).fileName()).arg(p.exitCode())
                        .arg(err.isEmpty() ? QString() : QStringLiteral(" (") + err + u')');
    }
    return r;
}

Run runOne(const QString &program, const QStringList &args, const QProcessEnvironment &env, bool keepOutput = false)
{
    QProcess p;
    QElapsedTimer clock;
    clock.start();
    start(p, program, args, env, keepOutput);
    if (!p.waitForStarted(30000)) {
        return Run{0, QStringLiteral("cannot start %1: %2").arg(program, p.errorString()), {}};
    }
    return finish(p, clock);
}

QString firstLineOf(const QString &program, const QStringList &args)
{
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(60000) || p.exitCode() != 0) return {};
    return QString::fromUtf8(p.readAllStandardOutput()).section(u'\n', 0, 0).trimmed();
}

struct SessionRound
{
    double readyMs = -1;
    double partsMs = -1;         // the informers started (checks and probe done)
    double nodesSyncedMs = -1;
    double podsSyncedMs = -1;
    qsizetype nodes = 0;
    qsizetype pods = 0;
    qsizetype modelPods = 0;     // pods the capacity model counts (bound, not finished)
    qint64 heapGrowth = 0;
    qint64 rssGrowth = 0;
    Cpu cpuAtOpen;
    Cpu cpuAtReady;
    QString failure;
};

SessionRound sessionRound(const QString &connectionFile, qint64 sandboxPid)
{
    SessionRound r;
    Testing::MemorySecretStore secrets;   // a connection file carries its own secrets
    SessionOptions options;               // the GUI's: access checks and the operator probe on
    options.followJobs = false;
    options.followEvents = false;
    const qint64 heapBefore = heapInUse();
    const qint64 rssBefore = residentBytes();
    {
        Session session(&secrets, QProcessEnvironment(), options);
        QElapsedTimer clock;
        bool ready = false;
        QObject::connect(&session, &Session::ready, &session, [&] {
            ready = true;
            r.readyMs = clock.nsecsElapsed() / 1e6;
            r.cpuAtReady = Cpu::now(sandboxPid);
        });
        QObject::connect(&session, &Session::partsChanged, &session, [&] {
            Kube::Informer *nodes = session.nodeInformer();
            Kube::Informer *pods = session.podInformer();
            if (!nodes || !pods || r.partsMs >= 0) return;
            r.partsMs = clock.nsecsElapsed() / 1e6;
            QObject::connect(nodes, &Kube::Informer::synced, &session, [&] { r.nodesSyncedMs = clock.nsecsElapsed() / 1e6; });
            QObject::connect(pods, &Kube::Informer::synced, &session, [&] { r.podsSyncedMs = clock.nsecsElapsed() / 1e6; });
        });
        // A plain event loop, as the app and the CLI run: QTest::qWaitFor sleeps 10 ms between
        // rounds of events, which would add up to a second over a hundred pages.
        QEventLoop loop;
        QObject::connect(&session, &Session::ready, &loop, &QEventLoop::quit);
        QObject::connect(&session, &Session::stateChanged, &loop, [&](Session::State state) {
            if (state == Session::State::Disconnected) loop.quit();
        });
        QTimer::singleShot(ProcessTimeoutMs, &loop, &QEventLoop::quit);
        r.cpuAtOpen = Cpu::now(sandboxPid);
        clock.start();
        session.open(SessionSource::ofConnectionFile(connectionFile));
        loop.exec();
        if (!ready) {
            r.failure = session.error() ? session.error()->message : QStringLiteral("not ready within %1 s").arg(ProcessTimeoutMs / 1000);
            return r;
        }
        if (!session.capacity() || !session.capacity()->isSynced()) {
            r.failure = QStringLiteral("ready without a synced capacity tracker");
            return r;
        }
        r.nodes = session.nodeInformer()->size();
        r.pods = session.podInformer()->size();
        r.modelPods = session.capacity()->model().podCount();
        QTest::qWait(300);   // replies and pool tasks of the list let go
        r.heapGrowth = heapInUse() - heapBefore;
        r.rssGrowth = residentBytes() - rssBefore;
    }
    return r;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Session connect and starforge-cli capacity against the raw GET of the same lists."));
    const QCommandLineOption nodesOption(QStringLiteral("nodes"), QStringLiteral("Nodes in the fleet (10 pods each)."),
                                         QStringLiteral("N"), QStringLiteral("5000"));
    const QCommandLineOption runsOption(QStringLiteral("runs"), QStringLiteral("Rounds; each figure is their median."),
                                        QStringLiteral("N"), QStringLiteral("3"));
    const QCommandLineOption skipOption(QStringLiteral("skip"),
                                        QStringLiteral("Measures to leave out: curl, paged, session, cli, kubectl (comma-separated)."),
                                        QStringLiteral("LIST"));
    parser.addOptions({nodesOption, runsOption, skipOption});
    parser.addHelpOption();
    parser.process(app);
    const int runs = std::max(1, parser.value(runsOption).toInt());
    const QStringList skip = parser.value(skipOption).split(u',', Qt::SkipEmptyParts);

    QTemporaryDir dir;
    const QString connection = dir.filePath(QStringLiteral("conn.json"));
    const QString bin = QCoreApplication::applicationDirPath();
    // Its own process: server and client must not share an event loop or the cores' accounting.
    QProcess sandbox;
    sandbox.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    sandbox.setStandardOutputFile(QProcess::nullDevice());
    sandbox.start(bin + QStringLiteral("/starforge-sandbox"),
                  {QStringLiteral("--connection-file"), connection, QStringLiteral("--fleet"),
                   QStringLiteral("scale:") + parser.value(nodesOption)});
    if (!QTest::qWaitFor([&] { return QFile::exists(connection) || sandbox.state() == QProcess::NotRunning; }, 300000)
        || !QFile::exists(connection)) {
        std::fprintf(stderr, "bench_connect: the sandbox did not start\n");
        return 2;
    }
    QThread::msleep(200);
    QFile connFile(connection);
    (void)connFile.open(QIODevice::ReadOnly);
    const QJsonObject conn = QJsonDocument::fromJson(connFile.readAll()).object();
    const QString server = conn.value(QStringLiteral("apiServer")).toString();
    const QString caFile = conn.value(QStringLiteral("caFile")).toString();
    const QString kubeconfig = conn.value(QStringLiteral("kubeconfig")).toString();

    // The token goes to curl in a file, not on its command line where ps shows it.
    const QString header = dir.filePath(QStringLiteral("auth.header"));
    {
        QFile h(header);
        (void)h.open(QIODevice::WriteOnly);
        h.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
        h.write("Authorization: Bearer " + conn.value(QStringLiteral("token")).toString().toLatin1() + '\n');
    }
    // The pod informer's field selector (Session::startParts).
    QUrlQuery podQuery;
    podQuery.addQueryItem(QStringLiteral("fieldSelector"), QStringLiteral("status.phase!=Succeeded,status.phase!=Failed"));
    const QString nodesUrl = server + QStringLiteral("/api/v1/nodes");
    const QString podsUrl = server + QStringLiteral("/api/v1/pods?") + podQuery.toString(QUrl::FullyEncoded);

    const QString curl = skip.contains(QStringLiteral("curl")) ? QString() : QStandardPaths::findExecutable(QStringLiteral("curl"));
    const QString kubectl =
        skip.contains(QStringLiteral("kubectl")) ? QString() : QStandardPaths::findExecutable(QStringLiteral("kubectl"));
    const QString cli = bin + QStringLiteral("/starforge-cli");
    const QString python = skip.contains(QStringLiteral("paged")) ? QString() : QStandardPaths::findExecutable(QStringLiteral("python3"));
    const QString curlVersion = curl.isEmpty() ? QString() : firstLineOf(curl, {QStringLiteral("--version")}).section(u' ', 0, 1);
    const QString pythonVersion = python.isEmpty() ? QString() : firstLineOf(python, {QStringLiteral("--version")});
    const QString kubectlVersion =
        kubectl.isEmpty() ? QString() : firstLineOf(kubectl, {QStringLiteral("version"), QStringLiteral("--client")});

    const QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    QProcessEnvironment kubeEnv = env;
    kubeEnv.insert(QStringLiteral("KUBECONFIG"), kubeconfig);
    const QStringList kubectlCache{QStringLiteral("--cache-dir"), dir.filePath(QStringLiteral("kubectl-cache"))};
    const auto kubectlGet = [&](const QStringList &what) { return kubectlCache + QStringList{QStringLiteral("get")} + what; };
    const QStringList nodesJson{QStringLiteral("nodes"), QStringLiteral("-o"), QStringLiteral("json")};
    const QStringList podsJson{QStringLiteral("pods"), QStringLiteral("-A"), QStringLiteral("-o"), QStringLiteral("json")};
    // The CLI gets its own empty profile store: --connection-file needs none.
    QProcessEnvironment cliEnv = env;
    cliEnv.insert(QStringLiteral("STARFORGE_CONFIG_FILE"), dir.filePath(QStringLiteral("profiles.json")));

    const auto curlArgs = [&](const QString &url) {
        return QStringList{QStringLiteral("-sS"), QStringLiteral("--fail"), QStringLiteral("-o"), QStringLiteral("/dev/null"),
                           QStringLiteral("-w"), QStringLiteral("%{size_download}"), QStringLiteral("--cacert"), caFile,
                           QStringLiteral("-H"), u'@' + header, url};
    };

    Figure curlNodes, curlPods, curlSequence, curlParallel, paged, sessionReady, sessionParts, sessionNodes, sessionPods, cliCapacity,
        kubectlNodes, kubectlPods, kubectlSequence;
    QList<double> heapPerObject, rssPerObject;
    qint64 nodesBytes = 0, podsBytes = 0;
    SessionRound lastSession;
    QString cliOutput;
    const auto missing = [&](const QString &tool) {
        return skip.contains(tool) ? QStringLiteral("skipped (--skip)") : tool + QStringLiteral(" is not installed");
    };
    if (curl.isEmpty()) {
        for (Figure *f : {&curlNodes, &curlPods, &curlSequence, &curlParallel}) f->fail(missing(QStringLiteral("curl")));
    }
    if (python.isEmpty()) {
        paged.fail(skip.contains(QStringLiteral("paged")) ? missing(QStringLiteral("paged")) : missing(QStringLiteral("python3")));
    }
    if (kubectl.isEmpty()) {
        for (Figure *f : {&kubectlNodes, &kubectlPods, &kubectlSequence}) f->fail(missing(QStringLiteral("kubectl")));
    } else {
        // kubectl's discovery cache warmed once, as on a workstation that has used it before.
        const Run warm = runOne(kubectl, kubectlGet({QStringLiteral("nodes"), QStringLiteral("-o"), QStringLiteral("name")}), kubeEnv);
        if (!warm.failure.isEmpty()) {
            for (Figure *f : {&kubectlNodes, &kubectlPods, &kubectlSequence}) f->fail(warm.failure);
        }
    }
    if (!QFileInfo::exists(cli)) cliCapacity.fail(QStringLiteral("no starforge-cli beside this benchmark"));
    if (skip.contains(QStringLiteral("cli"))) cliCapacity.fail(QStringLiteral("skipped (--skip)"));
    if (skip.contains(QStringLiteral("session"))) {
        for (Figure *f : {&sessionReady, &sessionParts, &sessionNodes, &sessionPods}) f->fail(QStringLiteral("skipped (--skip)"));
    }

    const qint64 sandboxPid = sandbox.processId();
    for (int round = 0; round < runs; ++round) {
        std::fprintf(stderr, "bench_connect: round %d of %d\n", round + 1, runs);
        if (curlSequence.failure.isEmpty()) {
            const Cpu c0 = Cpu::now(sandboxPid);
            const Run n = runOne(curl, curlArgs(nodesUrl), env, true);
            const Cpu c1 = Cpu::now(sandboxPid);
            const Run p = runOne(curl, curlArgs(podsUrl), env, true);
            const Cpu c2 = Cpu::now(sandboxPid);
            for (const Run *r : {&n, &p}) {
                if (!r->failure.isEmpty()) curlSequence.fail(r->failure);
            }
            nodesBytes = n.out.toLongLong();
            podsBytes = p.out.toLongLong();
            curlNodes.add(n.ms, c0, c1);
            curlPods.add(p.ms, c1, c2);
            curlSequence.add(n.ms + p.ms, c0, c2);
            if (!curlSequence.failure.isEmpty()) {
                curlNodes.fail(curlSequence.failure);
                curlPods.fail(curlSequence.failure);
                curlParallel.fail(curlSequence.failure);
            }
        }
        if (curlParallel.failure.isEmpty()) {
            QProcess n, p;
            QElapsedTimer clock;
            const Cpu c0 = Cpu::now(sandboxPid);
            clock.start();
            start(n, curl, curlArgs(nodesUrl), env, true);
            start(p, curl, curlArgs(podsUrl), env, true);
            const Run rn = finish(n, clock);
            const Run rp = finish(p, clock);
            for (const Run *r : {&rn, &rp}) {
                if (!r->failure.isEmpty()) curlParallel.fail(r->failure);
            }
            curlParallel.add(std::max(rn.ms, rp.ms), c0, Cpu::now(sandboxPid));
        }
        if (paged.failure.isEmpty()) {
            const Cpu c0 = Cpu::now(sandboxPid);
            const QStringList args{QStringLiteral("-c"), QString::fromLatin1(PagedScript), connection, QStringLiteral("/api/v1/nodes"),
                                   QStringLiteral("/api/v1/pods?") + podQuery.toString(QUrl::FullyEncoded)};
            const Run r = runOne(python, args, env, true);
            if (r.failure.isEmpty()) {
                // The script's own clock: from its first request to its last byte, without the
                // interpreter's start.
                paged.add(r.out.trimmed().toDouble(), c0, Cpu::now(sandboxPid));
            } else {
                paged.fail(r.failure);
            }
        }
        if (sessionReady.failure.isEmpty()) {
            const SessionRound s = sessionRound(connection, sandboxPid);
            if (!s.failure.isEmpty()) {
                for (Figure *f : {&sessionReady, &sessionParts, &sessionNodes, &sessionPods}) f->fail(s.failure);
            } else {
                lastSession = s;
                sessionReady.add(s.readyMs, s.cpuAtOpen, s.cpuAtReady);
                sessionParts.add(s.partsMs);
                sessionNodes.add(s.nodesSyncedMs);
                sessionPods.add(s.podsSyncedMs);
                heapPerObject << static_cast<double>(s.heapGrowth) / static_cast<double>(s.nodes + s.pods);
                rssPerObject << static_cast<double>(s.rssGrowth) / static_cast<double>(s.nodes + s.pods);
            }
        }
        if (cliCapacity.failure.isEmpty()) {
            const Cpu c0 = Cpu::now(sandboxPid);
            const Run r = runOne(cli, {QStringLiteral("capacity"), QStringLiteral("--connection-file"), connection}, cliEnv, true);
            if (r.failure.isEmpty()) {
                cliCapacity.add(r.ms, c0, Cpu::now(sandboxPid));
                cliOutput = QString::fromUtf8(r.out).trimmed();
            } else {
                cliCapacity.fail(r.failure);
            }
        }
        if (kubectlSequence.failure.isEmpty()) {
            const Cpu c0 = Cpu::now(sandboxPid);
            const Run n = runOne(kubectl, kubectlGet(nodesJson), kubeEnv);
            const Cpu c1 = Cpu::now(sandboxPid);
            const Run p = n.failure.isEmpty()
                              ? runOne(kubectl, kubectlGet(podsJson), kubeEnv)
                              : Run{};
            const Cpu c2 = Cpu::now(sandboxPid);
            if (!n.failure.isEmpty() || !p.failure.isEmpty()) {
                for (Figure *f : {&kubectlNodes, &kubectlPods, &kubectlSequence}) f->fail(n.failure.isEmpty() ? p.failure : n.failure);
            } else {
                kubectlNodes.add(n.ms, c0, c1);
                kubectlPods.add(p.ms, c1, c2);
                kubectlSequence.add(n.ms + p.ms, c0, c2);
            }
        }
    }
    sandbox.terminate();
    sandbox.waitForFinished(30000);

    const qsizetype objects = lastSession.nodes + lastSession.pods;
    const auto versionOf = [](const QString &program, const QString &version) {
        return program.isEmpty() ? QStringLiteral("not used") : version.isEmpty() ? QStringLiteral("version unknown") : version;
    };
    std::printf("bench_connect: --fleet scale:%s on %d cores (%s), median of %d rounds; %s; %s; %s; Qt %s\n",
                qPrintable(parser.value(nodesOption)), QThread::idealThreadCount(), qPrintable(QSysInfo::prettyProductName()), runs,
                qPrintable(versionOf(curl, curlVersion)), qPrintable(versionOf(kubectl, kubectlVersion)),
                qPrintable(versionOf(python, pythonVersion)), qVersion());
    std::printf("lists: nodes %.1f MB, pods (not Succeeded/Failed) %.1f MB; "
                "the Session cached %lld nodes + %lld pods, its capacity model counts %lld pods\n\n",
                nodesBytes / 1e6, podsBytes / 1e6, static_cast<long long>(lastSession.nodes), static_cast<long long>(lastSession.pods),
                static_cast<long long>(lastSession.modelPods));
    std::printf("| measure | wall time | vs raw GET, same mode | client CPU | sandbox CPU |\n|---|---|---|---|---|\n");
    const auto row = [](const QString &what, const Figure &f, const QString &ratio) {
        const QString cpu = f.cpuText();
        std::printf("| %s | %s | %s | %s |\n", qPrintable(what), qPrintable(f.text()), qPrintable(ratio),
                    qPrintable(cpu.isEmpty() ? QStringLiteral(" | ") : cpu));
    };
    row(QStringLiteral("raw GET, curl: nodes"), curlNodes, QString());
    row(QStringLiteral("raw GET, curl: pods"), curlPods, QString());
    row(QStringLiteral("raw GET, curl: both in sequence (sum)"), curlSequence,
        curlSequence.ok() ? QStringLiteral("1.00x (floor, sequence)") : QString());
    row(QStringLiteral("raw GET, curl: both in parallel (wall)"), curlParallel,
        curlParallel.ok() ? QStringLiteral("1.00x (floor, parallel)") : QString());
    row(QStringLiteral("raw GET in pages of 500, python3 http.client, both in parallel"), paged,
        paged.ratio(curlParallel) + QStringLiteral(" (parallel)"));
    row(QStringLiteral("Session connect to ready (capacity; GUI options, jobs and events off)"), sessionReady,
        sessionReady.ratio(curlParallel) + QStringLiteral(" (parallel)"));
    if (sessionReady.ok()) {
        std::printf("|   CPU on the GUI thread (of the client CPU) | %.0f ms | | | |\n", median(sessionReady.guiCpu));
    }
    row(QStringLiteral("  of which: checks and probe until the informers start"), sessionParts, QString());
    row(QStringLiteral("  node informer synced (from open)"), sessionNodes, QString());
    row(QStringLiteral("  pod informer synced (from open)"), sessionPods, QString());
    row(QStringLiteral("starforge-cli capacity --connection-file (process wall time)"), cliCapacity,
        cliCapacity.ratio(curlParallel) + QStringLiteral(" (parallel)"));
    row(QStringLiteral("kubectl get nodes -o json"), kubectlNodes, QString());
    row(QStringLiteral("kubectl get pods -A -o json"), kubectlPods, QString());
    row(QStringLiteral("kubectl, both in sequence (sum)"), kubectlSequence,
        kubectlSequence.ratio(curlSequence) + QStringLiteral(" (sequence)"));
    if (sessionReady.ok()) {
        std::printf("| memory per cached object: heap growth (all malloc arenas) / %lld objects | %.0f bytes | | | |\n",
                    static_cast<long long>(objects), median(heapPerObject));
        std::printf("| memory per cached object: RSS growth / %lld objects | %.0f bytes | | | |\n", static_cast<long long>(objects),
                    median(rssPerObject));
    } else {
        std::printf("| memory per cached object | not measured: %s | | | |\n", qPrintable(sessionReady.failure));
    }
    if (!cliOutput.isEmpty()) {
        std::printf("\nstarforge-cli capacity printed:\n%s\n", qPrintable(cliOutput));
    }
    return 0;
}
