// Archiving a large pod log: a pod on a starforge-sandbox process writes the log to stdout,
// JobArchiver streams it from pods/log into a temporary file and uploads it to the sandbox's S3
// (multipart above 8 MiB). Prints, per size: the archive's wall time and rate, and the peak RSS
// growth of this process (the archiving one; the sandbox is another process) during the archive,
// as VmHWM after a reset and as the largest VmRSS sampled every 20 ms. The peer, run on the same
// pod after the archive, is `kubectl logs POD > file`: the download half alone, its own peak RSS
// from nothing (ru_maxrss).
//
//     build/bin/bench_archive [--sizes-mib 256,2048] [--no-peer]

#include "peer.h"
#include "support/bigpodlog.h"

#include <QCommandLineParser>
#include <QCoreApplication>

#include <cstdio>

using namespace Starforge;

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addHelpOption();
    const QCommandLineOption sizesOption(QStringLiteral("sizes-mib"), QStringLiteral("Log sizes in MiB, comma-separated."), QStringLiteral("list"),
                                         QStringLiteral("256,2048"));
    parser.addOption(sizesOption);
    const QCommandLineOption noPeerOption(QStringLiteral("no-peer"), QStringLiteral("Do not run kubectl logs on the same pod."));
    parser.addOption(noPeerOption);
    parser.process(app);

    Testing::BigPodLog sandbox(QCoreApplication::applicationDirPath());
    if (!sandbox.error().isEmpty()) {
        std::fprintf(stderr, "bench_archive: %s\n", qPrintable(sandbox.error()));
        return 2;
    }
    const bool peer = !parser.isSet(noPeerOption);
    std::printf("| log size | archive time | MB/s | peak RSS growth (VmHWM) | peak RSS growth (sampled) | kubectl %s logs > file | MB/s | kubectl peak RSS |\n"
                "|---|---|---|---|---|---|---|---|\n",
                qPrintable(Bench::kubectlVersion(QStringLiteral("kubectl"))));
    int run = 0;
    for (const QString &size : parser.value(sizesOption).split(u',', Qt::SkipEmptyParts)) {
        const int mib = size.toInt();
        const Testing::BigLogRun r = sandbox.run(mib, QStringLiteral("bench-log-%1").arg(QStringLiteral("bcdf%1").arg(++run, 2, 10, QLatin1Char('0'))), peer);
        if (!r.error.isEmpty()) {
            std::fprintf(stderr, "bench_archive: %d MiB: %s\n", mib, qPrintable(r.error));
            return 1;
        }
        const double mb = static_cast<double>(r.bytes) / 1e6;
        QString peerCells = QStringLiteral("| not measured: --no-peer | | |");
        if (peer && r.peerError.isEmpty()) {
            peerCells = QStringLiteral("| %1 s | %2 | %3 MB |")
                            .arg(r.peerMs / 1000.0, 0, 'f', 1)
                            .arg(static_cast<double>(r.peerBytes) / 1e6 / (static_cast<double>(r.peerMs) / 1000.0), 0, 'f', 0)
                            .arg(r.peerMaxRssKb / 1024);
        } else if (peer) {
            peerCells = QStringLiteral("| not measured: %1 | | |").arg(r.peerError);
        }
        std::printf("| %d MiB | %.1f s | %.0f | %+lld MB | %+lld MB %s\n", mib, r.archiveMs / 1000.0, mb / (static_cast<double>(r.archiveMs) / 1000.0),
                    (r.peakRssKb - r.rssBeforeKb) / 1024, (r.sampledPeakRssKb - r.rssBeforeKb) / 1024, qPrintable(peerCells));
        std::fflush(stdout);
    }
    return 0;
}
