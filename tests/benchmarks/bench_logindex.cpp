// bench_logindex: the log index and search on a generated log of 10 million lines (about
// 1 GB) against the reference tools on the same file in the same run: indexing against
// `wc -l`, text search against `grep -c -F`, expression search against `grep -c -E`. Also the
// time to the first lines (the first chunk indexed and 50 lines read) and the index's memory
// against the file's size. The file is written once into --dir (default: a temporary folder)
// and read from the page cache by every contender (each reads it once before the timings).
// Prints a table; asserts nothing. Usage: bench_logindex [--lines N] [--dir DIR] [--keep]

#include "core/logs/lineindex.h"
#include "core/logs/logsearch.h"
#include "peer.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>

#include <cstdio>

using namespace Starforge;

namespace {

double mbPerSecond(qint64 bytes, qint64 ns)
{
    return (bytes / 1e6) / (ns / 1e9);
}

// A training log's shape: timestamps, levels, step lines, now and then a traceback.
bool writeLog(const QString &path, qint64 lines)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return false;
    QByteArray buffer;
    buffer.reserve(8 * 1024 * 1024);
    const char *levels[] = {"INFO", "INFO", "INFO", "WARNING", "DEBUG", "INFO", "ERROR", "INFO"};
    quint32 x = 12345;
    for (qint64 i = 0; i < lines; ++i) {
        x = x * 1103515245u + 12345u;
        const quint32 r = (x >> 8) % 1000;
        buffer += "2026-12-04T10:";
        buffer += QByteArray::number(10 + i % 50);
        buffer += ":00.123456Z ";
        buffer += levels[r % 8];
        buffer += " worker-";
        buffer += QByteArray::number(r % 16);
        buffer += " step ";
        buffer += QByteArray::number(i / 1000);
        buffer += " loss=";
        buffer += QByteArray::number(1.0 / (1 + r), 'f', 5);
        buffer += r == 7 ? " Traceback (most recent call last): RuntimeError CUDA out of memory\n" : " tokens/s=4096 grad_norm=0.1\n";
        if (buffer.size() > 7 * 1024 * 1024) {
            if (f.write(buffer) != buffer.size()) return false;
            buffer.clear();
        }
    }
    return f.write(buffer) == buffer.size();
}

// Runs a tool, its stdout's first word as a number and the time; nullopt with why otherwise.
Bench::PeerFigure runTool(const QString &program, const QStringList &args, qint64 *count)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("LC_ALL"), QStringLiteral("C"));
    p.setProcessEnvironment(env);
    QElapsedTimer t;
    t.start();
    p.start(program, args);
    const bool finished = p.waitForFinished(600000);
    const qint64 ns = t.nsecsElapsed();
    // grep -c exits 1 when nothing matches: still a figure.
    if (const QString why = Bench::processFailure(program, p, finished); !why.isEmpty() && !(program == u"grep" && p.exitCode() == 1))
        return Bench::PeerFigure::missing(why);
    *count = p.readAllStandardOutput().trimmed().split(' ').value(0).toLongLong();
    return Bench::PeerFigure::measured(double(ns));
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addOption({QStringLiteral("lines"), QStringLiteral("Lines in the generated log."), QStringLiteral("N"), QStringLiteral("10000000")});
    parser.addOption({QStringLiteral("dir"), QStringLiteral("Where to write it."), QStringLiteral("DIR")});
    parser.addOption({QStringLiteral("keep"), QStringLiteral("Keep the log afterwards.")});
    parser.process(app);

    QTemporaryDir scratch;
    const QString dir = parser.isSet(QStringLiteral("dir")) ? parser.value(QStringLiteral("dir")) : scratch.path();
    const QString path = QDir(dir).filePath(QStringLiteral("bench-log.txt"));
    const qint64 lines = parser.value(QStringLiteral("lines")).toLongLong();
    if (!QFile::exists(path) || !parser.isSet(QStringLiteral("keep"))) {
        if (!writeLog(path, lines)) {
            std::fprintf(stderr, "bench_logindex: cannot write %s\n", qPrintable(path));
            return 1;
        }
    }
    const qint64 size = QFileInfo(path).size();
    // Warm the page cache: every contender then reads from memory.
    qint64 ignored = 0;
    runTool(QStringLiteral("cat"), {path, QStringLiteral("/dev/null")}, &ignored);
    {
        QFile f(path);
        f.open(QIODevice::ReadOnly);
        while (!f.read(16 * 1024 * 1024).isEmpty()) {
        }
    }

    // Index.
    QElapsedTimer t;
    Logs::LineIndex index(path);
    qint64 firstLinesNs = -1;
    t.start();
    const auto indexed = index.update([&](qint64, qint64) {
        if (firstLinesNs < 0) {
            // What a viewer does once the first chunk is in: show the first screen.
            (void)index.readLines(0, 50);
            firstLinesNs = t.nsecsElapsed();
        }
        return true;
    });
    const qint64 indexNs = t.nsecsElapsed();
    if (!indexed) {
        std::fprintf(stderr, "bench_logindex: %s\n", qPrintable(indexed.error().message));
        return 1;
    }
    qint64 wcCount = 0;
    const Bench::PeerFigure wc = runTool(QStringLiteral("wc"), {QStringLiteral("-l"), path}, &wcCount);

    // Search: text and an expression, ours against grep's count.
    struct Case
    {
        const char *what;
        Logs::SearchOptions options;
        QStringList grepArgs;
    };
    Logs::SearchOptions text;
    text.pattern = QStringLiteral("Traceback (most recent call last)");
    Logs::SearchOptions regex;
    regex.pattern = QStringLiteral("(ERROR|WARNING) worker-1[0-5] step [0-9]+ loss=0\\.00[0-9]+");
    regex.regex = true;
    Logs::SearchOptions folded;
    folded.pattern = QStringLiteral("cuda out of memory");
    folded.caseInsensitive = true;
    const QList<Case> cases{{"text", text, {QStringLiteral("-c"), QStringLiteral("-F"), text.pattern, path}},
                            {"expression", regex, {QStringLiteral("-c"), QStringLiteral("-E"), regex.pattern, path}},
                            {"text, any case", folded, {QStringLiteral("-c"), QStringLiteral("-F"), QStringLiteral("-i"), folded.pattern, path}}};

    std::printf("bench_logindex: %lld lines, %.1f MB, %d threads; %s, %s\n\n", static_cast<long long>(index.lineCount()), size / 1e6,
                QThread::idealThreadCount(), qPrintable(QStringLiteral("wc ") + Bench::toolVersion(QStringLiteral("wc"), {QStringLiteral("--version")}, QStringLiteral("([0-9]+\\.[0-9]+)"))),
                qPrintable(QStringLiteral("grep ") + Bench::toolVersion(QStringLiteral("grep"), {QStringLiteral("--version")}, QStringLiteral("([0-9]+\\.[0-9]+)"))));
    std::printf("| measure | Starforge | peer | peer's figure | Starforge / peer |\n|---|---|---|---|---|\n");
    std::printf("| index (lines) | %.0f MB/s (%lld) | wc -l | %s | %s |\n", mbPerSecond(size, indexNs), static_cast<long long>(index.lineCount()),
                wc.value ? qPrintable(QStringLiteral("%1 MB/s (%2)").arg(mbPerSecond(size, qint64(*wc.value)), 0, 'f', 0).arg(wcCount)) : qPrintable(wc.text(0)),
                wc.value ? qPrintable(QString::number(mbPerSecond(size, indexNs) / mbPerSecond(size, qint64(*wc.value)), 'f', 2)) : "–");
    std::printf("| first 50 lines readable | %.1f ms | – | – | – |\n", firstLinesNs / 1e6);
    std::printf("| index memory | %.1f MB (%.1f %% of the file) | – | – | – |\n", index.memoryBytes() / 1e6, 100.0 * index.memoryBytes() / size);
    for (const Case &c : cases) {
        t.restart();
        const auto found = Logs::searchLines(index, c.options);
        const qint64 ns = t.nsecsElapsed();
        qint64 grepCount = 0;
        const Bench::PeerFigure grep = runTool(QStringLiteral("grep"), c.grepArgs, &grepCount);
        const double ours = mbPerSecond(size, ns);
        std::printf("| search, %s (matches) | %.0f MB/s (%lld) | grep -c %s | %s | %s |\n", c.what, ours,
                    static_cast<long long>(found ? found->lines.size() : -1), qPrintable(c.grepArgs.mid(1, c.grepArgs.size() - 3).join(u' ')),
                    grep.value ? qPrintable(QStringLiteral("%1 MB/s (%2)").arg(mbPerSecond(size, qint64(*grep.value)), 0, 'f', 0).arg(grepCount)) : qPrintable(grep.text(0)),
                    grep.value ? qPrintable(QString::number(ours / mbPerSecond(size, qint64(*grep.value)), 'f', 2)) : "–");
    }
    if (!parser.isSet(QStringLiteral("keep"))) QFile::remove(path);
    return 0;
}
