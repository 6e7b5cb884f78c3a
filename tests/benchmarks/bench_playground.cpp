// The playground's figures (docs/playground.md):
//  1. Rendering a reply that streams at 1,000 tokens a second in the Playground dock's
//     conversation (TranscriptView over TranscriptModel, offscreen, as the app draws it): the
//     longest GUI-thread stall (the largest gap of a 1 ms timer) and how many renders, with the
//     view's gathering (a render at most every 33 ms) against rendering every delta, the way a
//     view without it would; on an empty conversation and after 60 long messages.
//  2. Time to first token through the API server's pod proxy (ChatStream, as the dock sends)
//     against the same request sent straight to the pod's address (no proxy): the proxy's cost.
//  3. Launch to ready: PlaygroundClient::launch until /health answers through the proxy.
//  4. Reaping: a pod whose expiry passes, until it is gone, with the Session's reaper running
//     every --reap-ms.
// The cluster is a starforge-sandbox process of its own (its vLLM stand-in in each pod).
//
//     build/bin/bench_playground [--tokens 4000] [--requests 30] [--reap-ms 2000]

#include "eventloop.h"

#include "core/config/effectiveconfig.h"
#include "core/config/embeddedsandbox.h"
#include "core/config/profile.h"
#include "core/job/rayjobbuilder.h"
#include "core/kube/kubeclient.h"
#include "core/playground/chatclient.h"
#include "core/playground/playgroundclient.h"
#include "core/playground/playgroundpod.h"
#include "core/session/session.h"
#include "core/session/sessionsource.h"
#include "gui/playground/transcriptview.h"
#include "models/transcriptmodel.h"
#include "support/memorysecretstore.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QLabel>
#include <QScrollArea>
#include <QVBoxLayout>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <variant>

using namespace Starforge;

namespace {

QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

double percentile(QList<double> values, double p)
{
    if (values.isEmpty()) return 0;
    std::sort(values.begin(), values.end());
    return values.at(std::min<qsizetype>(values.size() - 1, qsizetype(double(values.size()) * p)));
}

// What a model writes: prose, a list, a fenced code block, a table, again and again.
QStringList replyTokens(int count)
{
    static const QStringList words = QStringLiteral(
        "GRPO samples a group of answers per prompt and scores each against the group's mean, so no value network is needed. "
        "\n\n- the policy loss is clipped as in PPO\n- the KL term keeps it near the reference\n\n```python\n"
        "def advantage(rewards):\n    mean = sum(rewards) / len(rewards)\n    return [r - mean for r in rewards]\n```\n\n"
        "| step | reward |\n|---|---|\n| 10 | 0.41 |\n| 20 | 0.57 |\n\n")
                                         .split(u' ');
    QStringList out;
    for (int i = 0; i < count; ++i) out << (i ? QStringLiteral(" ") : QString()) + words.at(i % words.size());
    return out;
}

// The GUI thread's stalls: a 1 ms timer on it, and the gaps between its ticks (a long gap is a
// long stall), from construction to stop().
class StallProbe
{
public:
    StallProbe()
    {
        m_clock.start();
        m_last = m_clock.nsecsElapsed();
        m_timer.setTimerType(Qt::PreciseTimer);
        QObject::connect(&m_timer, &QTimer::timeout, [this] {
            const qint64 now = m_clock.nsecsElapsed();
            m_gaps << (now - m_last) / 1000;
            m_last = now;
        });
        m_timer.start(1);
    }
    void stop()
    {
        m_timer.stop();
        std::sort(m_gaps.begin(), m_gaps.end());
    }
    qint64 worstUs() const { return m_gaps.isEmpty() ? 0 : m_gaps.last(); }
    qint64 p99Us() const { return m_gaps.isEmpty() ? 0 : m_gaps.at(qsizetype(double(m_gaps.size()) * 0.99)); }

private:
    QElapsedTimer m_clock;
    qint64 m_last = 0;
    QTimer m_timer;
    QList<qint64> m_gaps;
};

struct RenderRun
{
    QString what;
    qint64 worstGapUs = 0;     // while streaming
    qint64 p99GapUs = 0;
    double finishMs = 0;       // the reply's end: rendered once more as one document
    int renders = 0;
    double seconds = 0;
};

// Streams `tokens` tokens at 1,000 a second (a delta of one or two tokens each millisecond or
// so, as vLLM sends them) into the view; gathering off renders after every delta.
RenderRun render(int tokens, int history, bool gathering)
{
    RenderRun out;
    out.what = QStringLiteral("%1, %2").arg(history ? QStringLiteral("after %1 messages").arg(history) : QStringLiteral("empty conversation"),
                                           gathering ? QStringLiteral("gathered (the dock)") : QStringLiteral("every delta"));
    Models::TranscriptModel model;
    Gui::TranscriptView view;
    view.setModel(&model);
    view.resize(700, 900);
    view.show();
    const QStringList long300 = replyTokens(300);
    for (int i = 0; i < history; ++i) {
        model.appendUser(QStringLiteral("Question %1: how does the clipping work?").arg(i));
        model.beginReply();
        model.appendDelta(long300.join(QString()));
        model.finishReply(Playground::ChatReply{long300.join(QString()), QStringLiteral("stop"), {}, 10, 300, 40, 6000});
    }
    Bench::spin([] { return false; }, 300);   // laid out and painted once
    model.appendUser(QStringLiteral("Explain GRPO with code."));
    model.beginReply();
    const int rendersBefore = view.renders();
    const QStringList stream = replyTokens(tokens);

    QElapsedTimer clock;
    clock.start();
    StallProbe probe;
    int sent = 0;
    QTimer feeder;
    feeder.setTimerType(Qt::PreciseTimer);
    QObject::connect(&feeder, &QTimer::timeout, [&] {
        // Keep to 1,000 tokens a second by the clock, whatever the timer's jitter.
        const int due = std::min<int>(tokens, int(clock.elapsed()) + 1);
        while (sent < due) {
            const int take = std::min(due - sent, 1 + (sent % 3 == 0));
            QString delta;
            for (int k = 0; k < take; ++k) delta += stream.at(sent + k);
            sent += take;
            model.appendDelta(delta);
            if (!gathering) view.flush();
        }
    });
    feeder.start(1);
    Bench::spin([&] { return sent >= tokens; }, 120000);
    feeder.stop();
    Bench::spin([] { return false; }, 50);   // the last gathered render
    probe.stop();
    QElapsedTimer finishing;
    finishing.start();
    model.finishReply(Playground::ChatReply{model.index(model.rowCount() - 1).data(Models::TranscriptModel::ContentRole).toString(),
                                            QStringLiteral("length"), {}, 10, tokens, 20, clock.elapsed()});
    QCoreApplication::processEvents();   // the layout and paint it causes
    out.finishMs = finishing.nsecsElapsed() / 1e6;
    out.seconds = clock.elapsed() / 1000.0;
    out.renders = view.renders() - rendersBefore;
    out.worstGapUs = probe.worstUs();
    out.p99GapUs = probe.p99Us();
    return out;
}

// The plain way to show Markdown in Qt: a QLabel per message (Qt::MarkdownText) in a scroll
// area, its whole text set again at each gathered update. What the dock's view is measured
// against; the label lays out its whole text, and every label's height for width is asked
// again when the column's layout changes.
RenderRun renderWithLabels(int tokens, int history)
{
    RenderRun out;
    out.what = QStringLiteral("%1, a QLabel per message (Qt::MarkdownText)").arg(history ? QStringLiteral("after %1 messages").arg(history) : QStringLiteral("empty conversation"));
    QScrollArea area;
    area.setWidgetResizable(true);
    auto *content = new QWidget;
    auto *layout = new QVBoxLayout(content);
    area.setWidget(content);
    area.resize(700, 900);
    const auto addLabel = [&](const QString &text) {
        auto *label = new QLabel(text);
        label->setTextFormat(Qt::MarkdownText);
        label->setWordWrap(true);
        layout->addWidget(label);
        return label;
    };
    const QString long300 = replyTokens(300).join(QString());
    for (int i = 0; i < history; ++i) {
        addLabel(QStringLiteral("Question %1: how does the clipping work?").arg(i));
        addLabel(long300);
    }
    addLabel(QStringLiteral("Explain GRPO with code."));
    QLabel *reply = addLabel(QString());
    layout->addStretch();
    area.show();
    Bench::spin([] { return false; }, 300);
    const QStringList stream = replyTokens(tokens);
    QString text;
    QElapsedTimer clock;
    clock.start();
    StallProbe probe;
    int sent = 0;
    QTimer feeder;
    feeder.setTimerType(Qt::PreciseTimer);
    QObject::connect(&feeder, &QTimer::timeout, [&] {
        const int due = std::min<int>(tokens, int(clock.elapsed()) + 1);
        for (; sent < due; ++sent) text += stream.at(sent);
    });
    feeder.start(1);
    QTimer renderTimer;   // the same gathering as the dock: at most every 33 ms
    QObject::connect(&renderTimer, &QTimer::timeout, [&] {
        reply->setText(text);
        ++out.renders;
    });
    renderTimer.start(Gui::TranscriptView::RenderIntervalMs);
    Bench::spin([&] { return sent >= tokens; }, 120000);
    feeder.stop();
    renderTimer.stop();
    Bench::spin([] { return false; }, 50);
    probe.stop();
    QElapsedTimer finishing;
    finishing.start();
    reply->setText(text);
    QCoreApplication::processEvents();
    out.finishMs = finishing.nsecsElapsed() / 1e6;
    out.seconds = clock.elapsed() / 1000.0;
    out.worstGapUs = probe.worstUs();
    out.p99GapUs = probe.p99Us();
    return out;
}

// Python's http.client through the same proxy, one kept-alive connection: ms to the first
// content token of each request, or why not.
std::variant<QList<double>, QString> pythonFirstTokens(const QString &apiServer, const QString &caFile, const QString &token, const QString &path,
                                                       const QByteArray &body, int count)
{
    static const char script[] = R"PY(
import http.client, json, ssl, sys, time, urllib.parse
server, ca, token, path, body, count = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5].encode(), int(sys.argv[6])
url = urllib.parse.urlparse(server)
conn = http.client.HTTPSConnection(url.hostname, url.port, context=ssl.create_default_context(cafile=ca))
headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json", "Accept": "text/event-stream"}
out = []
for i in range(count + 2):
    start = time.perf_counter()
    conn.request("POST", path, body, headers)
    response = conn.getresponse()
    first = None
    for line in response:
        if first is None and line.startswith(b"data: {") and b'"delta":{"content":"' in line:
            first = (time.perf_counter() - start) * 1000
    if i >= 2:
        out.append(first)
print(json.dumps(out))
)PY";
    QProcess python;
    python.start(QStringLiteral("python3"), {QStringLiteral("-c"), QString::fromLatin1(script), apiServer, caFile, token, path, QString::fromUtf8(body),
                                            QString::number(count)});
    if (!python.waitForFinished(120000) || python.exitCode() != 0) return QStringLiteral("python3 failed: ") + QString::fromLocal8Bit(python.readAllStandardError()).trimmed();
    QList<double> out;
    for (const QJsonValue &v : QJsonDocument::fromJson(python.readAllStandardOutput()).array()) {
        if (v.isDouble()) out << v.toDouble();
    }
    return out;
}

Kube::ApiResult call(Kube::KubeClient &client, const QByteArray &method, const QString &path)
{
    Kube::ApiRequest request;
    request.method = method;
    request.path = path;
    std::optional<Kube::ApiResult> result;
    QObject context;
    client.send(request, &context, [&result](const Kube::ApiResult &r) { result = r; });
    (void)Bench::spin([&result] { return result.has_value(); }, 30000);
    return result.value_or(Kube::ApiResult{});
}

// The first content token of a stream sent straight to the pod: ms, or -1.
double rawFirstToken(QNetworkAccessManager &nam, const QUrl &url, const QByteArray &body)
{
    QNetworkRequest request(url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    QElapsedTimer clock;
    clock.start();
    QNetworkReply *reply = nam.post(request, body);
    double first = -1;
    QByteArray seen;
    QObject::connect(reply, &QNetworkReply::readyRead, reply, [&] {
        seen += reply->readAll();
        // The role chunk carries "content":"" with the first token's chunk right behind it; the
        // first non-empty content is the first token.
        if (first < 0 && seen.contains("\"delta\":{\"content\":\"")) first = clock.nsecsElapsed() / 1e6;
    });
    Bench::spin([&] { return reply->isFinished(); }, 30000);
    reply->deleteLater();
    return reply->error() == QNetworkReply::NoError ? first : -1;
}

} // namespace

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addHelpOption();
    const QCommandLineOption tokensOption(QStringLiteral("tokens"), QStringLiteral("Tokens streamed in each render run."), QStringLiteral("n"),
                                          QStringLiteral("4000"));
    const QCommandLineOption requestsOption(QStringLiteral("requests"), QStringLiteral("Requests each way for the first token."), QStringLiteral("n"),
                                            QStringLiteral("30"));
    const QCommandLineOption reapOption(QStringLiteral("reap-ms"), QStringLiteral("The reaper's period."), QStringLiteral("ms"), QStringLiteral("2000"));
    parser.addOptions({tokensOption, requestsOption, reapOption});
    parser.process(app);
    const int tokens = parser.value(tokensOption).toInt();
    const int requests = parser.value(requestsOption).toInt();
    const int reapMs = parser.value(reapOption).toInt();

    // 1. Rendering.
    QList<RenderRun> renders;
    for (int history : {0, 60}) {
        for (bool gathering : {true, false}) renders << render(tokens, history, gathering);
        renders << renderWithLabels(tokens, history);
    }
    std::printf("\n1. A reply streaming at 1,000 tokens/s (%d tokens) in the conversation view, offscreen\n\n", tokens);
    std::printf("| run | renders | longest GUI stall while streaming | p99 gap of a 1 ms timer | the end (its last render) |\n|---|---|---|---|---|\n");
    for (const RenderRun &r : renders) {
        std::printf("| %s | %d | %.1f ms | %.1f ms | %.1f ms |\n", qPrintable(r.what), r.renders, r.worstGapUs / 1000.0, r.p99GapUs / 1000.0, r.finishMs);
    }
    std::fflush(stdout);

    // The sandbox, as a process of its own; the stand-in at 1,000 tokens/s.
    QTemporaryDir dir;
    const QString connectionFile = dir.filePath(QStringLiteral("connection.json"));
    QProcess sandbox;
    sandbox.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    sandbox.setStandardOutputFile(QProcess::nullDevice());
    sandbox.start(QCoreApplication::applicationDirPath() + QStringLiteral("/starforge-sandbox"),
                  {QStringLiteral("--connection-file"), connectionFile, QStringLiteral("--fleet"), QStringLiteral("h100:2x8"),
                   QStringLiteral("--token-rate"), QStringLiteral("1000")});
    const bool up = Bench::spin([&] {
        return sandbox.state() == QProcess::NotRunning || QJsonDocument::fromJson(readFile(connectionFile)).object().contains(QStringLiteral("forge"));
    }, 30000);
    const auto connection = Config::SandboxConnection::read(connectionFile);
    if (!up || sandbox.state() != QProcess::Running || !connection) {
        std::fprintf(stderr, "bench_playground: starforge-sandbox did not start\n");
        return 2;
    }
    const Config::EffectiveConfig settings =
        Config::EffectiveConfig::resolve(Config::Profile{QStringLiteral("sandbox"), connection->settings}, QProcessEnvironment(), connection->secrets);
    const auto kubeConfig = Kube::ClientConfig::fromSettings(settings);
    if (!kubeConfig) {
        std::fprintf(stderr, "bench_playground: %s\n", qPrintable(kubeConfig.error().message));
        return 2;
    }
    Kube::KubeClient client(*kubeConfig);
    Job::ClusterSettings cluster = Job::ClusterSettings::fromConfig(settings);
    cluster.owner = QStringLiteral("sandbox-admin");
    Playground::PlaygroundClient playground(&client, cluster.ns, cluster.owner);

    // 3. Launch to ready, three pods one after the other.
    const auto launchReady = [&](Playground::LaunchRequest request, const QDateTime &expiresAt = {}) -> std::pair<QString, double> {
        const QString id = Job::RayJobBuilder::newJobId();
        const auto built = Playground::PlaygroundPod::build(request, cluster, id, QDateTime::currentDateTimeUtc());
        if (!built) return {built.error().message, -1};
        QJsonObject pod = *built;
        if (expiresAt.isValid()) {
            QJsonObject meta = pod.value(QStringLiteral("metadata")).toObject();
            QJsonObject annotations = meta.value(QStringLiteral("annotations")).toObject();
            annotations.insert(QLatin1String(Playground::ExpiresAnnotation), expiresAt.toString(Qt::ISODate));
            meta.insert(QStringLiteral("annotations"), annotations);
            pod.insert(QStringLiteral("metadata"), meta);
        }
        QElapsedTimer clock;
        clock.start();
        std::optional<Result<Playground::PlaygroundInstance>> launched;
        playground.launch(pod, [&](Result<Playground::PlaygroundInstance> r) { launched = r; });
        Bench::spin([&] { return launched.has_value(); }, 30000);
        if (!launched || !*launched) return {launched ? launched->error().message : QStringLiteral("no answer"), -1};
        const QString name = (*launched)->name;
        const QString health = Playground::ChatStream::proxyPath(cluster.ns, name, QStringLiteral("/health"));
        const bool ready = Bench::spin([&] { return call(client, "GET", health).status == 200; }, 60000);
        return {name, ready ? clock.nsecsElapsed() / 1e6 : -1};
    };
    Playground::LaunchRequest request;
    request.model = QStringLiteral("Qwen/Qwen3-0.6B");
    request.series = QStringLiteral("h100");
    QList<double> launches;
    QString pod;
    for (int i = 0; i < 3; ++i) {
        const auto [name, ms] = launchReady(request);
        if (ms < 0) {
            std::fprintf(stderr, "bench_playground: launch failed: %s\n", qPrintable(name));
            return 2;
        }
        launches << ms;
        pod = name;
    }

    // 2. Time to first token: the proxy against the pod straight, alternating.
    const QJsonObject podObject = QJsonDocument::fromJson(call(client, "GET", QStringLiteral("/api/v1/namespaces/%1/pods/%2").arg(cluster.ns, pod)).body).object();
    const QString podIp = podObject.value(QStringLiteral("status")).toObject().value(QStringLiteral("podIP")).toString();
    const QList<Playground::ChatMessage> messages{{QStringLiteral("user"), QStringLiteral("How does GRPO differ from PPO?")}};
    Playground::ChatSettings chat;
    chat.maxTokens = 8;
    const QByteArray body = Playground::ChatStream::requestBody(QStringLiteral("Qwen3-0.6B"), messages, chat);
    QNetworkAccessManager nam;
    const QUrl raw(QStringLiteral("http://%1:%2/v1/chat/completions").arg(podIp).arg(Playground::VllmPort));
    QList<double> proxied, direct;
    for (int i = 0; i < requests + 2; ++i) {   // the first two of each warm up
        std::unique_ptr<Playground::ChatStream> stream(Playground::ChatStream::start(&client, cluster.ns, pod, QStringLiteral("Qwen3-0.6B"), messages, chat));
        Bench::spin([&] { return stream->isFinished(); }, 30000);
        const double viaProxy = stream->reply().error ? -1 : double(stream->reply().firstTokenMs);
        const double straight = rawFirstToken(nam, raw, body);
        if (i < 2) continue;
        if (viaProxy >= 0) proxied << viaProxy;
        if (straight >= 0) direct << straight;
    }

    const auto python = pythonFirstTokens(connection->settings.value(QStringLiteral("FORGE_K8S_API_SERVER")), connection->settings.value(QStringLiteral("FORGE_K8S_CA_FILE")),
                                          connection->secrets.value(QStringLiteral("FORGE_K8S_TOKEN")),
                                          Playground::ChatStream::proxyPath(cluster.ns, pod, QStringLiteral("/v1/chat/completions")), body, requests);

    // 4. Reaping: the Session's reaper, a pod whose expiry passes in 3 s.
    Testing::MemorySecretStore secrets;
    SessionOptions options;
    options.followJobs = false;
    options.followEvents = false;
    options.followCapacity = false;
    options.verifyAccess = false;
    options.probeOperator = false;
    options.followPlayground = true;
    options.playgroundReapIntervalMs = reapMs;
    Session session(&secrets, QProcessEnvironment(), options);
    session.open(SessionSource::ofConnectionFile(connectionFile));
    Bench::spin([&] { return session.isUp(); }, 30000);
    QList<double> reaped;
    for (int i = 0; i < 3; ++i) {
        const QDateTime expires = QDateTime::currentDateTimeUtc().addSecs(3);
        const auto [name, ms] = launchReady(request, expires);
        if (ms < 0) break;
        const QString path = QStringLiteral("/api/v1/namespaces/%1/pods/%2").arg(cluster.ns, name);
        Bench::spin([&] { return QDateTime::currentDateTimeUtc() >= expires; }, 10000);
        QElapsedTimer clock;
        clock.start();
        if (Bench::spin([&] { return call(client, "GET", path).status == 404; }, reapMs * 5 + 30000)) reaped << clock.nsecsElapsed() / 1e6;
    }

    std::printf("\n2. Time to first token, %d requests each way (8 tokens, the stand-in at 1,000 tokens/s)\n\n", requests);
    std::printf("| path | median | p90 | worst |\n|---|---|---|---|\n");
    std::printf("| through the API server's pod proxy (the dock's ChatStream) | %.1f ms | %.1f ms | %.1f ms |\n", percentile(proxied, 0.5),
                percentile(proxied, 0.9), percentile(proxied, 1.0));
    if (const auto *peer = std::get_if<QList<double>>(&python)) {
        std::printf("| peer: Python's http.client through the same proxy (kept-alive, reads lines) | %.1f ms | %.1f ms | %.1f ms |\n",
                    percentile(*peer, 0.5), percentile(*peer, 0.9), percentile(*peer, 1.0));
        std::printf("| ours over the peer (difference of medians) | %+.1f ms | | |\n", percentile(proxied, 0.5) - percentile(*peer, 0.5));
    } else {
        std::printf("| peer: Python's http.client through the same proxy | not measured: %s | | |\n", qPrintable(std::get<QString>(python)));
    }
    std::printf("| straight to the pod's address (no proxy) | %.1f ms | %.1f ms | %.1f ms |\n", percentile(direct, 0.5), percentile(direct, 0.9),
                percentile(direct, 1.0));
    std::printf("| the sandbox proxy's cost (difference of medians) | %.1f ms | | |\n", percentile(proxied, 0.5) - percentile(direct, 0.5));
    std::printf("\n3. Launch to ready (create the pod until /health answers through the proxy)\n\n| pod | time |\n|---|---|\n");
    for (int i = 0; i < launches.size(); ++i) std::printf("| %d | %.0f ms |\n", i + 1, launches.at(i));
    std::printf("\n4. Reaping with the Session's reaper every %d ms: from a pod's expiry to it being gone\n\n| pod | time |\n|---|---|\n", reapMs);
    for (int i = 0; i < reaped.size(); ++i) std::printf("| %d | %.0f ms |\n", i + 1, reaped.at(i));
    if (reaped.size() < 3) std::printf("| (%lld of 3 were not reaped within 5 periods) | |\n", 3LL - reaped.size());
    session.close();
    sandbox.terminate();
    sandbox.waitForFinished(10000);
    return 0;
}
