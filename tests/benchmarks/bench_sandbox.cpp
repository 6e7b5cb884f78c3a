// bench_sandbox: list and watch figures of starforge-sandbox at --fleet scale:5000 (5,000 nodes,
// 50,000 pods), with kubectl reading the same server in the same run as the peer figure.
// Prints a table; it asserts nothing (figures go into issue notes, never into test gates).
//   build/bin/bench_sandbox [--nodes 5000]

#include "peer.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QSslConfiguration>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTextStream>
#include <QThread>

#include <cstdio>

namespace {

struct Client
{
    QNetworkAccessManager nam;
    QUrl base;
    QByteArray token;
    QSslConfiguration ssl;

    QNetworkRequest request(const QString &path) const
    {
        QNetworkRequest r(base.resolved(QUrl(path)));
        r.setSslConfiguration(ssl);
        r.setRawHeader("Authorization", "Bearer " + token);
        r.setRawHeader("Accept", "application/json");
        return r;
    }

    QByteArray get(const QString &path)
    {
        QNetworkReply *reply = nam.get(request(path));
        QEventLoop loop; // a benchmark's own loop: nothing else runs here
        QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
        loop.exec();
        const QByteArray body = reply->readAll();
        reply->deleteLater();
        return body;
    }

    int patch(const QString &path, const QByteArray &body)
    {
        QNetworkRequest r = request(path);
        r.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/merge-patch+json"));
        QNetworkReply *reply = nam.sendCustomRequest(r, "PATCH", body);
        QEventLoop loop;
        QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
        loop.exec();
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        reply->deleteLater();
        return status;
    }
};

qint64 rssKiB(qint64 pid)
{
    QFile status(QStringLiteral("/proc/%1/status").arg(pid));
    if (!status.open(QIODevice::ReadOnly)) {
        return -1;
    }
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith("VmRSS:")) {
            return line.mid(6).trimmed().split(' ').first().toLongLong();
        }
    }
    return -1;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    const QCommandLineOption nodesOption(QStringLiteral("nodes"), QStringLiteral("Fleet size (scale:N)."), QStringLiteral("n"),
                                         QStringLiteral("5000"));
    parser.addOption(nodesOption);
    parser.addHelpOption();
    parser.process(app);
    QTextStream out(stdout);

    QTemporaryDir dir;
    const QString connection = dir.filePath(QStringLiteral("conn.json"));
    QProcess sandbox;
    sandbox.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    QElapsedTimer startTimer;
    startTimer.start();
    sandbox.start(QCoreApplication::applicationDirPath() + QStringLiteral("/starforge-sandbox"),
                  {QStringLiteral("--connection-file"), connection, QStringLiteral("--fleet"),
                   QStringLiteral("scale:") + parser.value(nodesOption)});
    while (!QFile::exists(connection)) {
        if (sandbox.state() == QProcess::NotRunning || startTimer.elapsed() > 300000) {
            out << "bench_sandbox: the sandbox did not start" << Qt::endl;
            return 2;
        }
        QThread::msleep(20);
    }
    const double startSeconds = startTimer.elapsed() / 1000.0;
    QThread::msleep(200);
    const QJsonObject conn = QJsonDocument::fromJson([&] { QFile f(connection); f.open(QIODevice::ReadOnly); return f.readAll(); }()).object();

    Client client;
    client.base = QUrl(conn.value(QStringLiteral("apiServer")).toString());
    client.token = conn.value(QStringLiteral("token")).toString().toLatin1();
    client.ssl = QSslConfiguration::defaultConfiguration();
    client.ssl.setCaCertificates(QSslCertificate::fromPath(conn.value(QStringLiteral("caFile")).toString()));
    const qint64 rssAfterStart = rssKiB(sandbox.processId());

    std::fprintf(stderr, "sandbox up after %.1f s\n", startSeconds);
    // 1. All pods in one list.
    QElapsedTimer t;
    t.start();
    const QByteArray all = client.get(QStringLiteral("/api/v1/pods"));
    const double listAllMs = t.nsecsElapsed() / 1e6;
    const QJsonArray allItems = QJsonDocument::fromJson(all).object().value(QStringLiteral("items")).toArray();
    const qsizetype podCount = allItems.size();
    QStringList patchTargets;
    for (qsizetype i = 0; i < std::min<qsizetype>(podCount, 1000); ++i) {
        const QJsonObject meta = allItems.at(i).toObject().value(QStringLiteral("metadata")).toObject();
        patchTargets << QStringLiteral("/api/v1/namespaces/%1/pods/%2").arg(meta.value(QStringLiteral("namespace")).toString(),
                                                                            meta.value(QStringLiteral("name")).toString());
    }

    std::fprintf(stderr, "listed %lld pods\n", static_cast<long long>(podCount));
    // 2. Paged as informers and kubectl do (limit=500).
    t.restart();
    QString token;
    int pages = 0;
    qsizetype paged = 0;
    do {
        const QJsonObject page = QJsonDocument::fromJson(client.get(QStringLiteral("/api/v1/pods?limit=500")
            + (token.isEmpty() ? QString() : QStringLiteral("&continue=") + token))).object();
        paged += page.value(QStringLiteral("items")).toArray().size();
        token = page.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("continue")).toString();
        ++pages;
    } while (!token.isEmpty());
    const double listPagedMs = t.nsecsElapsed() / 1e6;

    std::fprintf(stderr, "paged list done\n");
    // 3. kubectl on the same server: the peer figure.
    const QString kubectl = QStandardPaths::findExecutable(QStringLiteral("kubectl"));
    const QString kubectlVersion = Starforge::Bench::kubectlVersion(QStringLiteral("kubectl"));
    Starforge::Bench::PeerFigure kubectlMs = Starforge::Bench::PeerFigure::missing(QStringLiteral("kubectl is not installed"));
    qsizetype kubectlBytes = 0;
    if (!kubectl.isEmpty()) {
        QProcess k;
        const QStringList args{QStringLiteral("--kubeconfig"), conn.value(QStringLiteral("kubeconfig")).toString(),
                               QStringLiteral("--cache-dir"), dir.filePath(QStringLiteral("cache")), QStringLiteral("get"),
                               QStringLiteral("pods"), QStringLiteral("-A"), QStringLiteral("-o"), QStringLiteral("json")};
        k.start(kubectl, args); // warm the discovery cache once
        k.waitForFinished(600000);
        t.restart();
        k.start(kubectl, args);
        const bool finished = k.waitForFinished(600000);
        const double ms = t.nsecsElapsed() / 1e6;
        kubectlBytes = k.readAllStandardOutput().size();
        const QString failure = Starforge::Bench::processFailure(QStringLiteral("kubectl get pods"), k, finished);
        kubectlMs = failure.isEmpty() ? Starforge::Bench::PeerFigure::measured(ms) : Starforge::Bench::PeerFigure::missing(failure);
    }

    std::fprintf(stderr, "kubectl done\n");
    // 4. Watch replay: every pod as ADDED from resourceVersion 0.
    t.restart();
    QNetworkReply *watch = client.nam.get(client.request(QStringLiteral("/api/v1/pods?watch=true")));
    qsizetype events = 0;
    QByteArray buffer;
    QObject::connect(watch, &QNetworkReply::readyRead, watch, [&] {
        buffer += watch->readAll();
        events += buffer.count('\n');
        buffer = buffer.mid(buffer.lastIndexOf('\n') + 1);
    });
    const auto waitForEvents = [&](qsizetype target) {
        while (events < target && !watch->isFinished()) {
            QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
        }
    };
    waitForEvents(podCount);
    const double replayMs = t.nsecsElapsed() / 1e6;

    std::fprintf(stderr, "replay done\n");
    // 5. Live: 2,000 patches, each seen by the open watch.
    const int patches = 2000;
    const qsizetype before = events;
    t.restart();
    int failed = 0;
    for (int i = 0; i < patches; ++i) {
        failed += client.patch(patchTargets.at(i % patchTargets.size()),
                               QStringLiteral(R"({"metadata":{"labels":{"bench":"%1"}}})").arg(i).toUtf8()) != 200;
    }
    if (failed > 0) {
        std::fprintf(stderr, "bench_sandbox: %d patches failed\n", failed);
        return 2;
    }
    waitForEvents(before + patches);
    const double liveMs = t.nsecsElapsed() / 1e6;
    watch->abort();
    const qint64 rssEnd = rssKiB(sandbox.processId());

    sandbox.terminate();
    sandbox.waitForFinished(30000);

    std::printf("starforge-sandbox --fleet scale:%s: %lld pods\n\n", qPrintable(parser.value(nodesOption)), static_cast<long long>(podCount));
    std::printf("%-52s %14s\n", "measure", "value");
    std::printf("%-52s %12.2f s\n", "start to connection file (fleet created)", startSeconds);
    std::printf("%-52s %11lld MiB\n", "sandbox RSS after start", static_cast<long long>(rssAfterStart / 1024));
    std::printf("%-52s %12.0f ms\n", "list all pods, one request", listAllMs);
    std::printf("%-52s %12.0f ms\n", qPrintable(QStringLiteral("list all pods, limit=500 (%1 pages, %2 items)").arg(pages).arg(paged)), listPagedMs);
    std::printf("%-52s %s\n", qPrintable(QStringLiteral("kubectl %1 get pods -A -o json (same server)").arg(kubectlVersion)),
                qPrintable(kubectlMs.text(0, QStringLiteral(" ms"))));
    if (kubectlMs.value) {
        std::printf("%-52s %14s\n", "  kubectl time / paged list time", qPrintable(kubectlMs.ratio(listPagedMs, true)));
        std::printf("%-52s %10.1f MiB\n", "  kubectl output", kubectlBytes / 1048576.0);
    }
    std::printf("%-52s %12.0f /s\n", "watch replay from resourceVersion 0 (events)", podCount / (replayMs / 1000.0));
    std::printf("%-52s %12.0f /s\n", "live patches through the API, serial (requests)", patches / (liveMs / 1000.0));
    std::printf("%-52s %11lld MiB\n", "sandbox RSS at the end", static_cast<long long>(rssEnd / 1024));
    return 0;
}
