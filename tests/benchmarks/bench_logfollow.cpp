// Following a fast log through the Logs dock's own path: pods on a starforge-sandbox process
// (its own process, so its work is not counted as ours) write numbered, time-stamped lines to
// stdout at a set rate; the dock follows them over pods/log (LogStream into the spool file, the
// line index updated and the rows inserted once per 100 ms tick, the view kept at the newest
// line) on the offscreen platform, as the app does. One pod is the single-source path; two pods
// at half the rate each are All pods (merged). Prints, per run: the writer's rate and the rate
// the view kept up with, the lag of the newest shown line behind its writer (mean, 99th
// percentile, worst, and at the end), the longest GUI-thread stall (the largest gap of a 1 ms
// timer), and memory (peak RSS growth, the index).
//
// A third run follows one pod whose log already has --prefill lines (a million by default): the
// cost of a follow on top of a long log.
//
//     build/bin/bench_logfollow [--rate 10000] [--seconds 10] [--prefill 1000000]

#include "eventloop.h"
#include "support/bigpodlog.h"

#include "core/config/effectiveconfig.h"
#include "core/config/embeddedsandbox.h"
#include "core/config/profile.h"
#include "core/kube/kubeclient.h"
#include "gui/logs/logspanel.h"
#include "models/loglinesmodel.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QAbstractItemView>
#include <QProcess>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>

using namespace Starforge;

namespace {

QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

Kube::ApiResult call(Kube::KubeClient &client, const QByteArray &method, const QString &path, const QByteArray &body = {})
{
    Kube::ApiRequest request;
    request.method = method;
    request.path = path;
    request.body = body;
    std::optional<Kube::ApiResult> result;
    QObject context;
    client.send(request, &context, [&result](const Kube::ApiResult &r) { result = r; });
    (void)Bench::spin([&result] { return result.has_value(); }, 30000);
    return result.value_or(Kube::ApiResult{});
}

// A writer that keeps to `rate` lines a second for `seconds`: each line is
// "seq=N t=<ms since the epoch> <padding>" (about 90 bytes).
QString writerScript(int rate, int seconds, const QString &name)
{
    return QStringLiteral("import sys, time\n"
                          "rate, total = %1, %1 * %2\n"
                          "pad = 'x' * 60\n"
                          "w = sys.stdout\n"
                          "start = time.time()\n"
                          "n = 0\n"
                          "while n < total:\n"
                          "    due = min(total, int((time.time() - start) * rate) + 1)\n"
                          "    now = int(time.time() * 1000)\n"
                          "    out = []\n"
                          "    while n < due:\n"
                          "        out.append('%3 seq=%d t=%d %s\\n' % (n, now, pad))\n"
                          "        n += 1\n"
                          "    w.write(''.join(out))\n"
                          "    w.flush()\n"
                          "    time.sleep(0.002)\n"
                          "time.sleep(3600)\n")
        .arg(rate)
        .arg(seconds)
        .arg(name);
}

struct Run
{
    QString error;
    QString what;
    qint64 lines = 0;          // written
    qint64 shown = 0;          // rows in the view at the end
    double writerRate = 0;     // lines/s, from the first and last line's own times
    double shownRate = 0;      // lines/s, rows over the time from the first to the last row shown
    QList<qint64> lags;        // ms, the newest shown row behind its writer, at each insert
    qint64 endLag = 0;         // ms from the last line written to it being shown
    qint64 worstGapUs = 0;     // the 1 ms timer's largest gap
    qint64 worstGapAtMs = 0;   // when it ended, from the start of the writers
    qint64 p99GapUs = 0;
    qint64 rssGrowthKb = 0;    // peak VmRSS during the follow, over the RSS before it
    qint64 indexBytes = 0;
    int reconnects = 0;
};

qint64 timeOf(const QString &line)
{
    const qsizetype t = line.indexOf(QLatin1String(" t="));
    return t < 0 ? -1 : QStringView(line).mid(t + 3).split(u' ').first().toLongLong();
}

} // namespace

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addHelpOption();
    const QCommandLineOption rateOption(QStringLiteral("rate"), QStringLiteral("Lines per second, all pods together."), QStringLiteral("n"),
                                        QStringLiteral("10000"));
    const QCommandLineOption secondsOption(QStringLiteral("seconds"), QStringLiteral("How long the pods write."), QStringLiteral("s"),
                                           QStringLiteral("10"));
    const QCommandLineOption prefillOption(QStringLiteral("prefill"), QStringLiteral("Lines the log has before the last run's follow starts (0: no such run)."),
                                           QStringLiteral("n"), QStringLiteral("1000000"));
    parser.addOption(prefillOption);
    parser.addOption(rateOption);
    parser.addOption(secondsOption);
    parser.process(app);
    const int rate = parser.value(rateOption).toInt();
    const int seconds = parser.value(secondsOption).toInt();
    const qint64 prefill = parser.value(prefillOption).toLongLong();

    // The sandbox, as a process of its own.
    QTemporaryDir dir;
    const QString connectionFile = dir.filePath(QStringLiteral("connection.json"));
    QProcess sandbox;
    sandbox.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    sandbox.setStandardOutputFile(QProcess::nullDevice());
    sandbox.start(QCoreApplication::applicationDirPath() + QStringLiteral("/starforge-sandbox"),
                  {QStringLiteral("--connection-file"), connectionFile, QStringLiteral("--fleet"), QStringLiteral("cpu:1x0")});
    const bool up = Bench::spin([&] {
        return sandbox.state() == QProcess::NotRunning || QJsonDocument::fromJson(readFile(connectionFile)).object().contains(QStringLiteral("forge"));
    }, 30000);
    const auto connection = Config::SandboxConnection::read(connectionFile);
    if (!up || sandbox.state() != QProcess::Running || !connection) {
        std::fprintf(stderr, "bench_logfollow: starforge-sandbox did not start\n");
        return 2;
    }
    const Config::EffectiveConfig settings =
        Config::EffectiveConfig::resolve(Config::Profile{QStringLiteral("sandbox"), connection->settings}, QProcessEnvironment(), connection->secrets);
    const auto kubeConfig = Kube::ClientConfig::fromSettings(settings);
    if (!kubeConfig) {
        std::fprintf(stderr, "bench_logfollow: %s\n", qPrintable(kubeConfig.error().message));
        return 2;
    }
    Kube::KubeClient client(*kubeConfig);
    const QString ns = kubeConfig->ns;
    const QString podsPath = QStringLiteral("/api/v1/namespaces/%1/pods").arg(ns);

    Gui::LogsPanel panel;
    panel.resize(1200, 800);
    panel.show();

    const auto follow = [&](int pods, const QString &what, qint64 history) {
        Run out;
        out.what = what;
        out.lines = qint64(rate) * seconds;
        static int serial = 0;
        ++serial;
        QList<Logs::LogFollower::Source> sources;
        for (int p = 0; p < pods; ++p) {
            const QString name = QStringLiteral("writer-%1-%2").arg(serial).arg(p);
            sources.append({name, QStringLiteral("writer"), name.toUtf8(), false});
        }
        // Each pod waits for a start file, then writes; all start within a few milliseconds.
        const QString go = dir.filePath(QStringLiteral("go-%1").arg(serial));
        for (int p = 0; p < pods; ++p) {
            // The log the follow starts on (history lines, written at once), then the wait for go.
            const QString script = QStringLiteral("import os, sys, time\n"
                                                  "sys.stdout.write(''.join('p%3 pre=%d %4\\n' % i for i in range(%2)))\n"
                                                  "sys.stdout.flush()\n"
                                                  "while not os.path.exists(r'%1'): time.sleep(0.01)\n")
                                       .arg(go)
                                       .arg(history)
                                       .arg(p)
                                       .arg(QString(60, u'x'))
                + writerScript(rate / pods, seconds, QStringLiteral("p%1").arg(p));
            const QJsonObject pod{
                {QStringLiteral("apiVersion"), QStringLiteral("v1")},
                {QStringLiteral("kind"), QStringLiteral("Pod")},
                {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), sources.at(p).pod}}},
                {QStringLiteral("spec"),
                 QJsonObject{{QStringLiteral("restartPolicy"), QStringLiteral("Never")},
                             {QStringLiteral("containers"),
                              QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("writer")},
                                                     {QStringLiteral("image"), settings.value(QStringLiteral("FORGE_IMAGE_NEMO_RL"))},
                                                     {QStringLiteral("command"), QJsonArray{QStringLiteral("python3"), QStringLiteral("-c"), script}}}}}}}};
            if (const Kube::ApiResult created = call(client, "POST", podsPath, QJsonDocument(pod).toJson(QJsonDocument::Compact)); !created.ok()) {
                out.error = created.error->message;
                return out;
            }
        }
        for (const auto &source : std::as_const(sources)) {
            const bool running = Bench::spin([&] {
                QEventLoop pause;
                QTimer::singleShot(100, &pause, &QEventLoop::quit);
                pause.exec();
                return call(client, "GET", podsPath + u'/' + source.pod).json()[QStringLiteral("status")][QStringLiteral("phase")].toString()
                    == QLatin1String("Running");
            }, 60000);
            if (!running) {
                out.error = QStringLiteral("pod %1 did not start").arg(source.pod);
                return out;
            }
        }
        panel.followLive(&client, ns, sources, what);
        Models::LogLinesModel *lines = panel.linesModel();
        // The log so far is in the view before the clock starts.
        if (!Bench::spin([&] { return lines->rowCount() >= history * pods; }, 300000)) {
            out.error = QStringLiteral("the first %1 lines did not arrive").arg(history * pods);
            return out;
        }
        (void)Testing::resetPeakRss();
        const qint64 rssBefore = Testing::procStatusKb("VmRSS");
        qint64 rssPeak = rssBefore;

        // The stall probe: a 1 ms timer on the GUI thread; a long gap is a long stall.
        QElapsedTimer clock;
        clock.start();
        QList<qint64> gaps;
        qint64 lastTick = -1;
        qint64 startNs = 0;
        bool measuring = false;
        QTimer ticker;
        ticker.setTimerType(Qt::PreciseTimer);
        ticker.setInterval(1);
        QObject::connect(&ticker, &QTimer::timeout, &panel, [&] {
            const qint64 now = clock.nsecsElapsed();
            if (measuring && lastTick >= 0) {
                gaps << (now - lastTick) / 1000;
                if (gaps.last() > out.worstGapUs) {
                    out.worstGapUs = gaps.last();
                    out.worstGapAtMs = (now - startNs) / 1000000;
                }
            }
            lastTick = now;
        });
        QTimer sampler;
        sampler.setInterval(20);
        QObject::connect(&sampler, &QTimer::timeout, &panel, [&] { rssPeak = std::max(rssPeak, Testing::procStatusKb("VmRSS")); });
        qint64 firstShownMs = -1, lastShownMs = -1, firstT = -1, lastT = -1;
        const QMetaObject::Connection inserted = QObject::connect(lines, &QAbstractItemModel::rowsInserted, &panel, [&] {
            const qint64 now = QDateTime::currentMSecsSinceEpoch();
            const qint64 t = timeOf(lines->index(lines->rowCount() - 1).data(Models::LogLinesModel::RawTextRole).toString());
            if (t < 0) return;
            if (firstShownMs < 0) {
                firstShownMs = now;
                firstT = timeOf(lines->index(int(history * pods)).data(Models::LogLinesModel::RawTextRole).toString());
            }
            lastShownMs = now;
            lastT = std::max(lastT, t);
            out.lags << now - t;
        });
        ticker.start();
        sampler.start();
        // Go: the writers start, and the stall probe counts from here.
        QFile(go).open(QIODevice::WriteOnly);
        startNs = clock.nsecsElapsed();
        measuring = true;
        const bool all = Bench::spin([&] { return lines->rowCount() >= out.lines + history * pods; }, (seconds + 60) * 1000);
        measuring = false;
        ticker.stop();
        sampler.stop();
        QObject::disconnect(inserted);
        out.shown = lines->rowCount() - history * pods;
        out.indexBytes = lines->lineIndex().memoryBytes();
        out.rssGrowthKb = std::max(rssPeak, Testing::procStatusKb("VmHWM")) - rssBefore;
        out.reconnects = panel.follower() ? panel.follower()->reconnects() : 0;
        if (!all) out.error = QStringLiteral("%1 of %2 lines shown").arg(out.shown).arg(out.lines);
        out.endLag = lastShownMs - lastT;
        out.writerRate = lastT > firstT ? double(out.lines) * 1000.0 / double(lastT - firstT) : 0;
        out.shownRate = lastShownMs > firstShownMs ? double(out.shown) * 1000.0 / double(lastShownMs - firstShownMs) : 0;
        std::sort(gaps.begin(), gaps.end());
        out.p99GapUs = gaps.isEmpty() ? 0 : gaps.at(qsizetype(double(gaps.size()) * 0.99));
        // Check every line is there once, in order per pod.
        QHash<QString, qint64> next;
        for (int r = 0; r < lines->rowCount() && out.error.isEmpty(); ++r) {
            const QString text = lines->index(r).data(Models::LogLinesModel::RawTextRole).toString();
            const qsizetype seq = text.indexOf(QLatin1String("seq="));
            if (seq < 0) continue;   // the log the follow started on
            const QString writer = text.left(seq).trimmed();
            const qint64 n = QStringView(text).mid(seq + 4).split(u' ').first().toLongLong();
            if (n != next.value(writer)) out.error = QStringLiteral("line %1: %2 where seq=%3 was due").arg(r).arg(text.left(40)).arg(next.value(writer));
            next[writer] = n + 1;
        }
        for (const auto &source : std::as_const(sources)) (void)call(client, "DELETE", podsPath + u'/' + source.pod);
        return out;
    };

    std::printf("| run | lines | writer's rate | shown rate | lag mean / p99 / worst | lag at the end | longest GUI stall (p99 gap) | peak RSS growth | index |\n"
                "|---|---|---|---|---|---|---|---|---|\n");
    std::fflush(stdout);
    int failures = 0;
    struct Config
    {
        int pods;
        QString what;
        qint64 history;
    };
    QList<Config> runs{{1, QStringLiteral("one pod"), 0}, {2, QStringLiteral("All pods (merged), 2 pods"), 0}};
    if (prefill > 0) runs.append({1, QStringLiteral("one pod, on a log of %L1 lines").arg(prefill), prefill});
    for (const auto &[pods, what, before] : std::as_const(runs)) {
        const Run r = follow(pods, what, before);
        if (!r.error.isEmpty()) {
            std::fprintf(stderr, "bench_logfollow: %s: %s\n", qPrintable(what), qPrintable(r.error));
            ++failures;
        }
        QList<qint64> lags = r.lags;
        std::sort(lags.begin(), lags.end());
        double mean = 0;
        for (const qint64 l : lags) mean += double(l);
        mean = lags.isEmpty() ? 0 : mean / double(lags.size());
        std::printf("| %s | %lld | %.0f/s | %.0f/s | %.0f / %lld / %lld ms | %lld ms | %.1f ms (%.1f ms) | %+lld MB | %.1f MB |\n", qPrintable(what),
                    static_cast<long long>(r.shown), r.writerRate, r.shownRate, mean,
                    static_cast<long long>(lags.isEmpty() ? 0 : lags.at(qsizetype(double(lags.size()) * 0.99))),
                    static_cast<long long>(lags.isEmpty() ? 0 : lags.last()), static_cast<long long>(r.endLag), double(r.worstGapUs) / 1000.0,
                    double(r.p99GapUs) / 1000.0, static_cast<long long>(r.rssGrowthKb / 1024), double(r.indexBytes) / 1e6);
        std::fprintf(stderr, "bench_logfollow: %s: the longest stall ended %.1f s after the writers started; %d reconnects\n", qPrintable(what),
                     double(r.worstGapAtMs) / 1000.0, r.reconnects);
        std::fflush(stdout);
    }
    sandbox.terminate();
    if (!sandbox.waitForFinished(15000)) sandbox.kill();
    return failures == 0 ? 0 : 1;
}
