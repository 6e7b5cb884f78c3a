// Archiving a large pod log: a pod on a starforge-sandbox process writes the log to stdout,
// JobArchiver streams it from pods/log into a temporary file and uploads it to the sandbox's S3
// (multipart above 8 MiB). Prints, per size: the archive's wall time, this process's RSS before
// and its peak (VmHWM, reset before each run) during the archive.
//
//     build/bin/bench_archive [--sizes-mib 256,2048]

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
    parser.process(app);

    Testing::BigPodLog sandbox(QCoreApplication::applicationDirPath());
    if (!sandbox.error().isEmpty()) {
        std::fprintf(stderr, "bench_archive: %s\n", qPrintable(sandbox.error()));
        return 2;
    }
    std::printf("| log size | archive time | MiB/s | RSS before | peak RSS during the archive | growth |\n|---|---|---|---|---|---|\n");
    int run = 0;
    for (const QString &size : parser.value(sizesOption).split(u',', Qt::SkipEmptyParts)) {
        const int mib = size.toInt();
        const Testing::BigLogRun r = sandbox.run(mib, QStringLiteral("bench-log-%1").arg(QStringLiteral("bcdf%1").arg(++run, 2, 10, QLatin1Char('0'))));
        if (!r.error.isEmpty()) {
            std::fprintf(stderr, "bench_archive: %d MiB: %s\n", mib, qPrintable(r.error));
            return 1;
        }
        std::printf("| %d MiB | %.1f s | %.0f | %lld MB | %lld MB | %+lld MB |\n", mib, r.archiveMs / 1000.0, mib / (r.archiveMs / 1000.0),
                    r.rssBeforeKb / 1024, r.peakRssKb / 1024, (r.peakRssKb - r.rssBeforeKb) / 1024);
        std::fflush(stdout);
    }
    return 0;
}
