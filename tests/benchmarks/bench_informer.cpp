// bench_informer: the app's Kubernetes client at scale. Prints a table; asserts nothing.
//  1. Initial sync of 5,000 nodes and 50,000 pods (the sandbox's --fleet scale:5000, run as its
//     own process) by two informers, as the app does at connect, against
//     `kubectl get pods -A -o json` on the same server in the same run.
//  2. Memory per cached pod: heap in use after the sync minus before, over the pods cached.
//  3. Watch events applied per second: an in-process sandbox changes 50,000 pods as fast as it
//     can; the time until the informer has applied the last change (serving included), and the
//     client's own cost, decoding and applying a recorded stream.
//   build/bin/bench_informer [--nodes 5000] [--changes 50000]

#include "core/kube/informer.h"
#include "eventloop.h"
#include "peer.h"
#include "core/kube/kubeclient.h"
#include "core/kube/watchdecoder.h"
#include "sandbox/sandbox.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QTimer>

#include <malloc.h>

#include <cstdio>

using namespace Starforge;
using Starforge::Bench::spin;

namespace {

// Bytes handed out and not returned, over every malloc arena: mallinfo2() sees only the main
// arena, and the informers' pages are read (and their cache entries allocated) on pool threads,
// which glibc gives arenas of their own.
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
    // The totals after the last </heap>: free chunks (fast, rest), mmapped chunks, and what the
    // arenas hold from the system.
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

Kube::ClientConfig configFrom(const QJsonObject &conn)
{
    Kube::ClientConfig c;
    c.server = QUrl(conn.value(QStringLiteral("apiServer")).toString());
    c.token = conn.value(QStringLiteral("token")).toString().toLatin1();
    c.tls.caCertificates = QSslCertificate::fromPath(conn.value(QStringLiteral("caFile")).toString());
    c.timeoutMs = 120000;
    return c;
}


} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    const QCommandLineOption nodesOption(QStringLiteral("nodes"), QStringLiteral("Nodes in the fleet (10 pods each)."),
                                         QStringLiteral("N"), QStringLiteral("5000"));
    const QCommandLineOption changesOption(QStringLiteral("changes"), QStringLiteral("Pod changes for the watch figure."),
                                           QStringLiteral("N"), QStringLiteral("50000"));
    parser.addOptions({nodesOption, changesOption});
    parser.addHelpOption();
    parser.process(app);

    QTemporaryDir dir;
    const QString connection = dir.filePath(QStringLiteral("conn.json"));
    QProcess sandbox;
    sandbox.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    sandbox.start(QCoreApplication::applicationDirPath() + QStringLiteral("/starforge-sandbox"),
                  {QStringLiteral("--connection-file"), connection, QStringLiteral("--fleet"),
                   QStringLiteral("scale:") + parser.value(nodesOption)});
    if (!spin([&] { return QFile::exists(connection) || sandbox.state() == QProcess::NotRunning; }, 300000)
        || !QFile::exists(connection)) {
        std::fprintf(stderr, "bench_informer: the sandbox did not start\n");
        return 2;
    }
    QThread::msleep(200);
    QFile connFile(connection);
    (void)connFile.open(QIODevice::ReadOnly);
    const QJsonObject conn = QJsonDocument::fromJson(connFile.readAll()).object();

    // 1. Initial sync by informers, as at connect: nodes and pods in parallel, pages of 500.
    const qint64 heapBefore = heapInUse();
    Kube::KubeClient client(configFrom(conn));
    QElapsedTimer t;
    t.start();
    Kube::Informer nodes(&client, Kube::ResourceKind::nodes());
    Kube::Informer pods(&client, Kube::ResourceKind::pods());
    nodes.start();
    pods.start();
    if (!spin([&] { return nodes.hasSynced() && pods.hasSynced(); }, 600000)) {
        std::fprintf(stderr, "bench_informer: the informers did not sync\n");
        return 2;
    }
    const double syncMs = t.nsecsElapsed() / 1e6;
    const qsizetype podCount = pods.size();
    const qsizetype nodeCount = nodes.size();
    spin([] { return false; }, 300);   // let the last replies and futures go
    const qint64 heapAfter = heapInUse();
    nodes.stop();
    pods.stop();
    std::fprintf(stderr, "informers synced %lld nodes, %lld pods in %.0f ms\n", static_cast<long long>(nodeCount),
                 static_cast<long long>(podCount), syncMs);

    // kubectl on the same server, its discovery cache warmed by one run first.
    const QString kubectl = QStandardPaths::findExecutable(QStringLiteral("kubectl"));
    const QString kubectlVersion = Bench::kubectlVersion(QStringLiteral("kubectl"));
    Bench::PeerFigure kubectlMs = Bench::PeerFigure::missing(QStringLiteral("kubectl is not installed"));
    if (!kubectl.isEmpty()) {
        const QStringList args{QStringLiteral("--kubeconfig"), conn.value(QStringLiteral("kubeconfig")).toString(),
                               QStringLiteral("--cache-dir"), dir.filePath(QStringLiteral("cache")), QStringLiteral("get"),
                               QStringLiteral("pods"), QStringLiteral("-A"), QStringLiteral("-o"), QStringLiteral("json")};
        QProcess k;
        k.setStandardOutputFile(QProcess::nullDevice());
        k.start(kubectl, {QStringLiteral("--kubeconfig"), conn.value(QStringLiteral("kubeconfig")).toString(),
                          QStringLiteral("--cache-dir"), dir.filePath(QStringLiteral("cache")), QStringLiteral("get"),
                          QStringLiteral("nodes"), QStringLiteral("-o"), QStringLiteral("name")});
        k.waitForFinished(600000);
        t.restart();
        k.start(kubectl, args);
        const bool finished = k.waitForFinished(600000);
        const double ms = t.nsecsElapsed() / 1e6;
        const QString failure = Bench::processFailure(QStringLiteral("kubectl get pods"), k, finished);
        kubectlMs = failure.isEmpty() ? Bench::PeerFigure::measured(ms) : Bench::PeerFigure::missing(failure);
    }
    sandbox.terminate();
    sandbox.waitForFinished(30000);

    // 3a. The client's own cost: decode and apply a recorded stream of MODIFIED pods.
    QByteArray stream;
    {
        int i = 0;
        for (const QJsonObject &pod : pods.list()) {
            if (i++ == 20000) break;
            stream += "{\"type\":\"MODIFIED\",\"object\":" + QJsonDocument(pod).toJson(QJsonDocument::Compact) + "}\n";
        }
    }
    t.restart();
    Kube::WatchDecoder decoder;
    qsizetype decoded = 0;
    for (qsizetype at = 0; at < stream.size(); at += 16384) {
        decoded += decoder.feed(stream.mid(at, 16384)).size();
    }
    const double decodeRate = decoded / (t.nsecsElapsed() / 1e9);

    // 3b. End to end: an in-process sandbox changes pods; the informer applies every change.
    double endToEndRate = -1;
    const int changes = parser.value(changesOption).toInt();
    {
        Sandbox::Sandbox local;
        Sandbox::SandboxOptions options;
        options.connectionFile = dir.filePath(QStringLiteral("local.json"));
        options.fleet = QStringLiteral("scale:500");
        if (auto started = local.start(options); !started) {
            std::fprintf(stderr, "bench_informer: %s\n", qPrintable(started.error().message));
            return 2;
        }
        Kube::ClientConfig c;
        c.server = local.apiServerUrl();
        c.token = local.token();
        c.tls.caCertificates = QSslCertificate::fromData(local.caCertificatePem(), QSsl::Pem);
        Kube::KubeClient localClient(c);
        Kube::Informer informer(&localClient, Kube::ResourceKind::pods());
        qint64 updates = 0;
        QObject::connect(&informer, &Kube::Informer::updated, &informer, [&] { ++updates; });
        informer.start();
        spin([&] { return informer.hasSynced() && informer.state() == Kube::Informer::State::Watching; }, 120000);
        spin([] { return false; }, 200);
        const auto *podType = Sandbox::ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("pods"));
        const auto all = local.store()->list(QStringLiteral("pods"));
        t.restart();
        for (int i = 0; i < changes; ++i) {
            const auto &pod = all.at(static_cast<std::size_t>(i) % all.size());
            local.store()->modify(*podType, pod->ns, pod->name, [i](QJsonObject &o) {
                QJsonObject m = o.value(QLatin1String("metadata")).toObject();
                m.insert(QStringLiteral("annotations"), QJsonObject{{QStringLiteral("bench"), QString::number(i)}});
                o.insert(QStringLiteral("metadata"), m);
                return true;
            });
            if (i % 1000 == 999) {
                QCoreApplication::processEvents();   // as a live server would interleave
            }
        }
        if (spin([&] { return updates >= changes; }, 300000)) {
            endToEndRate = changes / (t.nsecsElapsed() / 1e9);
        }
        informer.stop();
    }

    std::printf("| measure | starforge | peer | ratio |\n|---|---|---|---|\n");
    std::printf("| initial sync, %lld nodes + %lld pods (2 informers, pages of 500) | %.0f ms | kubectl %s get pods -A -o json: %s | %s |\n",
                static_cast<long long>(nodeCount), static_cast<long long>(podCount), syncMs, qPrintable(kubectlVersion),
                qPrintable(kubectlMs.text(0, QStringLiteral(" ms"))), qPrintable(kubectlMs.value ? kubectlMs.ratio(syncMs, true) + QStringLiteral(" faster") : QStringLiteral("–")));
    std::printf("| memory per cached object (heap growth / %lld objects) | %.0f bytes | | |\n",
                static_cast<long long>(podCount + nodeCount),
                static_cast<double>(heapAfter - heapBefore) / static_cast<double>(podCount + nodeCount));
    std::printf("| watch lines decoded (client only, %lld pods) | %.0f events/s | | |\n", static_cast<long long>(decoded), decodeRate);
    std::printf("| watch events applied end to end (%d changes, in-process sandbox serving) | %.0f events/s | | |\n",
                changes, endToEndRate);
    return 0;
}
