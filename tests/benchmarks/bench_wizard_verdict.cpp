// bench_wizard_verdict: how soon the submission wizard's fit verdict follows a capacity change
// (docs/jobs.md, "The submission wizard"; the target is 100 ms). A starforge-sandbox process
// (its own process: the API server must not share this event loop) serves a fleet; a core
// Session follows its nodes and pods; the wizard stands on its Resources page with a pool that
// asks for every h200 node (1,000 at most), so that one GPU taken anywhere turns FitsNow into FitsWhenFree and
// giving it back turns it into FitsNow again. Each round creates, then deletes, a pod holding
// one GPU and times:
//   - write -> verdict: from just before the API write to the verdict shown (the label's text
//     set; it is painted on the next event-loop turn), watch delivery included;
//   - change -> verdict: from the CapacityTracker's changed() to the verdict shown, the
//     wizard's own share (CapacityModel::fit, the series combo and the labels).
// Prints a table (median and worst of the rounds) per fleet size.
//
//     QT_QPA_PLATFORM=offscreen build/bin/bench_wizard_verdict [--nodes 100,1000,5000] [--rounds 20]

#include "core/cluster/capacity.h"
#include "core/config/embeddedsandbox.h"
#include "core/session/session.h"
#include "gui/wizard/resourcespage.h"
#include "gui/wizard/submitwizard.h"
#include "support/memorysecretstore.h"
#include "support/sandboxhttp.h"

#include <QAbstractButton>
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cstdio>

using namespace Starforge;

namespace {

struct Figures
{
    QList<double> writeToVerdict;
    QList<double> changeToVerdict;
    int flips = 0;
    int rounds = 0;
};

double median(QList<double> v)
{
    if (v.isEmpty()) return 0;
    std::sort(v.begin(), v.end());
    return v.at(v.size() / 2);
}

double worst(const QList<double> &v)
{
    return v.isEmpty() ? 0 : *std::max_element(v.begin(), v.end());
}

QByteArray hogPod(const QString &name)
{
    const QJsonObject pod{{QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("Pod")},
                          {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}}},
                          {QStringLiteral("spec"),
                           QJsonObject{{QStringLiteral("nodeSelector"), QJsonObject{{QStringLiteral("starforge/gpu-series"), QStringLiteral("h200")}}},
                                       {QStringLiteral("containers"),
                                        QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("main")},
                                                               {QStringLiteral("image"), QStringLiteral("rayproject/ray:2.55.1")},
                                                               {QStringLiteral("command"), QJsonArray{QStringLiteral("sleep"), QStringLiteral("600")}},
                                                               {QStringLiteral("resources"),
                                                                QJsonObject{{QStringLiteral("limits"), QJsonObject{{QStringLiteral("nvidia.com/gpu"), QStringLiteral("1")}}}}}}}}}}};
    return QJsonDocument(pod).toJson(QJsonDocument::Compact);
}

// A JobSpec pool has at most 1,024 nodes: past 1,000 nodes the rest of the fleet is a100
// machines, which the model keeps and the verdict does not ask for.
constexpr int MaxH200 = 1000;

QString fleetOf(int nodes)
{
    return nodes <= MaxH200 ? QStringLiteral("h200:%1x8").arg(nodes) : QStringLiteral("h200:%1x8,a100:%2x8").arg(MaxH200).arg(nodes - MaxH200);
}

// One fleet of `nodes` machines of 8 GPUs, `rounds` create/delete pairs.
std::optional<Figures> measure(int nodes, int rounds, const QString &bin, const QString &codeDir)
{
    QTemporaryDir dir;
    const QString connection = dir.filePath(QStringLiteral("conn.json"));
    QProcess sandbox;
    sandbox.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    sandbox.setStandardOutputFile(QProcess::nullDevice());
    sandbox.start(bin + QStringLiteral("/starforge-sandbox"),
                  {QStringLiteral("--connection-file"), connection, QStringLiteral("--fleet"), fleetOf(nodes)});
    if (!QTest::qWaitFor([&] { return QFile::exists(connection) || sandbox.state() == QProcess::NotRunning; }, 300000) || !QFile::exists(connection)) {
        std::fprintf(stderr, "bench_wizard_verdict: the sandbox did not start\n");
        return std::nullopt;
    }
    QTest::qWait(200);
    const auto conn = Config::SandboxConnection::read(connection);
    if (!conn) {
        std::fprintf(stderr, "bench_wizard_verdict: %s\n", qPrintable(conn.error().message));
        return std::nullopt;
    }
    QFile ca(conn->settings.value(QStringLiteral("FORGE_K8S_CA_FILE")));
    (void)ca.open(QIODevice::ReadOnly);
    Testing::SandboxHttp http(QUrl(conn->settings.value(QStringLiteral("FORGE_K8S_API_SERVER"))), ca.readAll(),
                              conn->secrets.value(QStringLiteral("FORGE_K8S_TOKEN")).toUtf8());

    Testing::MemorySecretStore secrets;
    SessionOptions options;
    options.followJobs = false;
    options.followEvents = false;
    Session session(&secrets, QProcessEnvironment(), options);
    session.open(SessionSource::ofConnectionFile(connection));
    if (!QTest::qWaitFor([&] { return session.capacity() && session.capacity()->isSynced(); }, 300000)) {
        std::fprintf(stderr, "bench_wizard_verdict: the session did not sync\n");
        return std::nullopt;
    }

    Figures f;
    QElapsedTimer clock;
    clock.start();
    qint64 writeAt = -1;
    qint64 changeAt = -1;
    bool waiting = false;
    QString verdictNow;
    // Connected before the wizard: this runs first on each change, the page's own slot after it.
    QObject::connect(session.capacity(), &Cluster::CapacityTracker::changed, &session, [&] {
        if (waiting) changeAt = clock.nsecsElapsed();
    });

    Job::JobSpec spec = Gui::SubmitWizard::specForPath(codeDir).value();
    spec.pools = {Job::Pool{QStringLiteral("train"), QStringLiteral("h200"), std::min(nodes, MaxH200), 8}};
    Gui::SubmitWizard wizard(&session, spec);
    wizard.show();
    if (!QTest::qWaitFor([&] { return wizard.button(QWizard::NextButton)->isEnabled(); }, 30000)) return std::nullopt;
    wizard.next();
    if (!QTest::qWaitFor([&] { return wizard.button(QWizard::NextButton)->isEnabled(); }, 30000)) return std::nullopt;
    wizard.next();
    auto *page = qobject_cast<Gui::ResourcesPage *>(wizard.currentPage());
    if (!page || !QTest::qWaitFor([&] { return page->verdictOf(0) == QLatin1String("FitsNow"); }, 30000)) {
        std::fprintf(stderr, "bench_wizard_verdict: the wizard did not show FitsNow (%s)\n", page ? qPrintable(page->sentenceOf(0)) : "no page");
        return std::nullopt;
    }
    QString expected;
    QObject::connect(page, &Gui::ResourcesPage::verdictsUpdated, page, [&] {
        if (!waiting || changeAt < 0 || page->verdictOf(0) != expected) return;
        const qint64 now = clock.nsecsElapsed();
        f.writeToVerdict << (now - writeAt) / 1e6;
        f.changeToVerdict << (now - changeAt) / 1e6;
        ++f.flips;
        waiting = false;
    });
    const QString pods = QStringLiteral("/api/v1/namespaces/starforge/pods");
    for (int i = 0; i < rounds; ++i) {
        for (const bool create : {true, false}) {
            expected = create ? QStringLiteral("FitsWhenFree") : QStringLiteral("FitsNow");
            changeAt = -1;
            waiting = true;
            writeAt = clock.nsecsElapsed();
            const QString name = QStringLiteral("hog-%1").arg(i);
            const int status = create ? http.send("POST", pods, hogPod(name)).status : http.send("DELETE", pods + u'/' + name).status;
            if (status != 201 && status != 200) {
                std::fprintf(stderr, "bench_wizard_verdict: the API answered %d\n", status);
                return std::nullopt;
            }
            if (!QTest::qWaitFor([&] { return !waiting; }, 30000)) {
                std::fprintf(stderr, "bench_wizard_verdict: no %s after round %d\n", qPrintable(expected), i);
                return std::nullopt;
            }
            ++f.rounds;
        }
    }
    wizard.hide();
    session.close();
    sandbox.terminate();
    sandbox.waitForFinished(30000);
    return f;
}

} // namespace

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("The wizard's fit verdict after a capacity change."));
    parser.addHelpOption();
    const QCommandLineOption nodesOption(QStringLiteral("nodes"), QStringLiteral("Fleet sizes, comma-separated."), QStringLiteral("N,..."),
                                         QStringLiteral("100,1000,5000"));
    const QCommandLineOption roundsOption(QStringLiteral("rounds"), QStringLiteral("Create/delete pairs per fleet."), QStringLiteral("n"),
                                          QStringLiteral("20"));
    parser.addOption(nodesOption);
    parser.addOption(roundsOption);
    parser.process(app);
    const QString bin = QCoreApplication::applicationDirPath();
    // The example job's folder, as the wizard packs it.
    const QString code = QStringLiteral(SF_SOURCE_DIR "/examples/grpo-math");
    const int rounds = std::max(1, parser.value(roundsOption).toInt());

    std::printf("bench_wizard_verdict: %d create/delete pairs of a 1-GPU pod per fleet; a pool asking for every h200 node; Qt %s\n\n",
                rounds, qVersion());
    std::printf("| fleet | verdict flips | write -> verdict median | worst | tracker change -> verdict median | worst |\n");
    std::printf("|---:|---:|---:|---:|---:|---:|\n");
    int failures = 0;
    for (const QString &n : parser.value(nodesOption).split(u',', Qt::SkipEmptyParts)) {
        const auto f = measure(n.toInt(), rounds, bin, code);
        if (!f) {
            std::printf("| %s | not measured: see above | | | | |\n", qPrintable(fleetOf(n.toInt())));
            ++failures;
            continue;
        }
        std::printf("| %s | %d of %d | %.1f ms | %.1f ms | %.2f ms | %.2f ms |\n", qPrintable(fleetOf(n.toInt())), f->flips, f->rounds, median(f->writeToVerdict),
                    worst(f->writeToVerdict), median(f->changeToVerdict), worst(f->changeToVerdict));
        std::fflush(stdout);
    }
    return failures == 0 ? 0 : 1;
}
