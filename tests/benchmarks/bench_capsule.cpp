// bench_capsule: the Capsule builder against `zip -rXq` + `sha256sum` and against Python's
// zipfile packing the way Ray does (ZIP_DEFLATED over os.walk), on a generated tree of 20,000
// files and 1 GiB (text and binary), in the same run. The issue asks for at least 2x zip's time.
// Also checks that an unchanged rebuild gives the same bytes. Prints a table; asserts nothing.
//
//   bench_capsule [--files N] [--mib M] [--keep DIR]

#include "core/job/capsule.h"
#include "peer.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>

#include <cstdio>

using namespace Starforge::Job;

namespace {

struct Rng
{
    quint64 s;
    quint64 next()
    {
        // splitmix64: deterministic, so every run benchmarks the same tree.
        quint64 z = (s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
};

QByteArray textFile(Rng &rng, qint64 size, const QList<QByteArray> &words)
{
    QByteArray out;
    out.reserve(size + 128);
    while (out.size() < size) {
        const int indent = static_cast<int>(rng.next() % 4);
        out.append(QByteArray(indent * 4, ' '));
        const int n = 1 + static_cast<int>(rng.next() % 10);
        for (int i = 0; i < n; ++i) {
            if (i) out.append(' ');
            out.append(words[static_cast<qsizetype>(rng.next() % static_cast<quint64>(words.size()))]);
        }
        out.append('\n');
    }
    out.resize(size);
    return out;
}

QByteArray binaryFile(Rng &rng, qint64 size, bool floats)
{
    QByteArray out(size, Qt::Uninitialized);
    for (qint64 i = 0; i + 8 <= size; i += 8) {
        quint64 v = rng.next();
        // float32 pairs near 1.0: random mantissas, a few exponents, like model weights.
        if (floats) v = (v & 0x007fffff007fffffULL) | 0x3f0000003f000000ULL | ((v >> 7) & 0x0080000000800000ULL);
        std::memcpy(out.data() + i, &v, 8);
    }
    for (qint64 i = size & ~7LL; i < size; ++i) out[i] = static_cast<char>(rng.next());
    return out;
}

qint64 generate(const QString &root, int files, qint64 totalBytes)
{
    Rng rng {42};
    QList<QByteArray> words;
    for (int i = 0; i < 4000; ++i) {
        QByteArray w;
        const int len = 2 + static_cast<int>(rng.next() % 9);
        for (int k = 0; k < len; ++k) w.append(static_cast<char>('a' + rng.next() % 26));
        words.append(w);
    }
    for (const char *w : {"def", "return", "self", "import", "for", "in", "if", "else:", "(", ")", "=", "+", "torch", "np"}) words.append(w);
    // 80 % of the files are text and carry 60 % of the bytes; the rest are binary: half random
    // (already-compressed blobs) and half float tensors.
    const int textFiles = files * 8 / 10;
    const qint64 textBytes = totalBytes * 6 / 10;
    qint64 written = 0;
    for (int i = 0; i < files; ++i) {
        const bool isText = i < textFiles;
        const qint64 mean = isText ? textBytes / textFiles : (totalBytes - textBytes) / (files - textFiles);
        const qint64 size = mean / 2 + static_cast<qint64>(rng.next() % static_cast<quint64>(mean));
        const QString dir = root + QStringLiteral("/pkg%1/sub%2").arg(i % 40).arg(i % 7);
        QDir().mkpath(dir);
        const QString name = isText ? QStringLiteral("/module_%1.py").arg(i) : QStringLiteral("/blob_%1.bin").arg(i);
        QFile f(dir + name);
        if (!f.open(QIODevice::WriteOnly)) return -1;
        f.write(isText ? textFile(rng, size, words) : binaryFile(rng, size, i % 2 == 0));
        written += size;
    }
    return written;
}

struct Timed
{
    double seconds = 0;
    qint64 zipBytes = 0;
    QByteArray sha;
    QString failure;   // a peer that did not run to the end: why (its row says "not measured")
};

Timed timeProcess(const QString &program, const QStringList &args, const QString &workDir)
{
    QElapsedTimer t;
    t.start();
    QProcess p;
    p.setWorkingDirectory(workDir);
    p.start(program, args);
    const bool finished = p.waitForFinished(-1);
    Timed r;
    r.seconds = static_cast<double>(t.nsecsElapsed()) / 1e9;
    r.sha = p.readAllStandardOutput().trimmed().left(64);
    r.failure = Starforge::Bench::processFailure(program + u' ' + args.value(1).left(40), p, finished);
    return r;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    int files = 20000;
    qint64 mib = 1024;
    QString keep;
    const QStringList args = app.arguments();
    for (qsizetype i = 1; i + 1 < args.size(); i += 2) {
        if (args[i] == QStringLiteral("--files")) files = args[i + 1].toInt();
        else if (args[i] == QStringLiteral("--mib")) mib = args[i + 1].toLongLong();
        else if (args[i] == QStringLiteral("--keep")) keep = args[i + 1];
    }
    QTemporaryDir tmp;
    const QString base = keep.isEmpty() ? tmp.path() : keep;
    const QString tree = base + QStringLiteral("/tree");
    qint64 input = 0;
    if (!QFileInfo::exists(tree)) {
        std::printf("generating %d files, %lld MiB ...\n", files, static_cast<long long>(mib));
        input = generate(tree, files, mib * 1048576);
    } else {
        QProcess du;
        du.start(QStringLiteral("du"), {QStringLiteral("-sb"), tree});
        du.waitForFinished();
        input = du.readAllStandardOutput().split('\t').value(0).toLongLong();
    }
    // Warm the page cache for every contender alike.
    QProcess cat;
    cat.start(QStringLiteral("sh"), {QStringLiteral("-c"), QStringLiteral("find \"$0\" -type f -exec cat {} + > /dev/null"), tree});
    cat.waitForFinished(-1);

    // Ours, then an unchanged rebuild.
    CapsuleOptions o;
    o.sourceDir = tree;
    o.jobSpecJson = QByteArrayLiteral("{}\n");
    o.runnerPex = QByteArrayLiteral("runner");
    o.useDefaultExcludes = false;
    Timed ours[3];
    for (int i = 0; i < 3; ++i) {
        o.outputPath = base + QStringLiteral("/ours%1.zip").arg(i);
        o.compressionLevel = i == 2 ? 6 : 1;  // the third run shows the level's trade-off
        QElapsedTimer t;
        t.start();
        const auto r = CapsuleBuilder::build(o);
        ours[i].seconds = static_cast<double>(t.nsecsElapsed()) / 1e9;
        if (!r) {
            std::fprintf(stderr, "build failed: %s\n", qPrintable(r.error().message));
            return 1;
        }
        ours[i].zipBytes = r->size;
        ours[i].sha = r->sha256;
    }

    // zip -rXq, then sha256sum of its output.
    QFile::remove(base + QStringLiteral("/info.zip"));
    Timed zip = timeProcess(QStringLiteral("sh"),
                            {QStringLiteral("-c"), QStringLiteral("zip -rXq info.zip tree && sha256sum info.zip")}, base);
    zip.zipBytes = QFileInfo(base + QStringLiteral("/info.zip")).size();

    // Python's zipfile as Ray packs a working_dir: os.walk, ZIP_DEFLATED, then hashed.
    const QString py = QStringLiteral(
        "import os, sys, zipfile, hashlib\n"
        "root = sys.argv[1]\n"
        "with zipfile.ZipFile('py.zip', 'w', zipfile.ZIP_DEFLATED) as z:\n"
        "    for d, dirs, names in os.walk(root):\n"
        "        for n in names:\n"
        "            p = os.path.join(d, n)\n"
        "            z.write(p, os.path.relpath(p, os.path.dirname(root)))\n"
        "h = hashlib.sha256()\n"
        "with open('py.zip', 'rb') as f:\n"
        "    for b in iter(lambda: f.read(1 << 20), b''): h.update(b)\n"
        "print(h.hexdigest())\n");
    Timed python = timeProcess(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"), py, tree}, base);
    python.zipBytes = QFileInfo(base + QStringLiteral("/py.zip")).size();

    std::printf("\nCapsule of %d files, %.0f MiB input, %d threads\n\n", files, static_cast<double>(input) / 1048576.0,
                QThread::idealThreadCount());
    // The peers' versions, read from the programs in this run.
    const QString zipVersion = Starforge::Bench::toolVersion(QStringLiteral("zip"), {QStringLiteral("-v")}, QStringLiteral("This is Zip (\\S+)"));
    const QString pythonVersion = Starforge::Bench::toolVersion(QStringLiteral("/usr/bin/python3"), {QStringLiteral("--version")}, QStringLiteral("Python (\\S+)"));
    std::printf("| packer (zip + SHA-256) | seconds | MiB/s | zip MiB | time / ours |\n|---|---|---|---|---|\n");
    const auto row = [&](const QString &name, const Timed &t) {
        if (!t.failure.isEmpty()) {
            std::printf("| %s | not measured: %s | | | |\n", qPrintable(name), qPrintable(t.failure));
            return;
        }
        std::printf("| %s | %.2f | %.1f | %.1f | %.2fx |\n", qPrintable(name), t.seconds, static_cast<double>(input) / 1048576.0 / t.seconds,
                    static_cast<double>(t.zipBytes) / 1048576.0, t.seconds / ours[0].seconds);
    };
    row(QStringLiteral("Starforge CapsuleBuilder"), ours[0]);
    row(QStringLiteral("Starforge CapsuleBuilder (rebuild)"), ours[1]);
    row(QStringLiteral("Starforge CapsuleBuilder, zlib level 6"), ours[2]);
    row(QStringLiteral("zip %1 -rXq + sha256sum").arg(zipVersion), zip);
    row(QStringLiteral("python3 %1 zipfile ZIP_DEFLATED (Ray)").arg(pythonVersion), python);
    std::printf("\nunchanged rebuild byte-identical: %s (%s, %s)\n", ours[0].sha == ours[1].sha ? "yes" : "no",
                ours[0].sha.constData(), ours[1].sha.constData());
    return 0;
}
