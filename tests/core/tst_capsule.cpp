// The Capsule builder: deterministic bytes (rebuild, another copy of the tree, another time zone
// and umask in a child process), the layout Ray expects, readers (Python's zipfile, unzip),
// excludes (.git, defaults, .gitignore at any depth with negation, user patterns), exec bits,
// store or deflate, symlink policy, hostile trees, progress and cancel.

#include "core/job/capsule.h"
#include "core/job/ignorerules.h"
#include "support/testutil.h"

#include <QCoreApplication>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

using namespace Starforge;
using namespace Starforge::Job;
using Starforge::Testing::readAll;

namespace {

const QByteArray JobSpec = QByteArrayLiteral("{\"name\": \"demo\"}\n");
const QByteArray Runner = QByteArrayLiteral("PK-not-really-a-pex");

// What tests/data/capsule-golden builds to (goldenCapsule). Change only on purpose, with the
// reason in docs/capsule.md.
constexpr char GoldenCapsuleSha256[] = "b0e16c67dc5f5ab43d469cbe43c0c845cb6909dd779390a2b0f88718369c4309";
constexpr char GoldenManifestSha256[] = "cde56643ebf3dea1bb7c1d33a1fc4a7d21fd02d874b14eb9f3b382fd9035bdca";
constexpr qint64 GoldenCapsuleSize = 724352;

bool put(const QString &path, const QByteArray &content, bool executable = false)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    if (!Testing::writeFile(path, content)) return false;
    return ::chmod(QFile::encodeName(path).constData(), executable ? 0755 : 0644) == 0;
}

// Deterministic pseudo-random bytes (xorshift), incompressible for zlib.
QByteArray noise(qsizetype size, quint32 seed)
{
    QByteArray out(size, Qt::Uninitialized);
    quint32 x = seed ? seed : 1;
    for (qsizetype i = 0; i < size; ++i) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        out[i] = static_cast<char>(x & 0xff);
    }
    return out;
}

QByteArray text(qsizetype size)
{
    QByteArray out;
    for (int i = 0; out.size() < size; ++i) out += "def f" + QByteArray::number(i) + "(x):\n    return x * " + QByteArray::number(i % 97) + "\n";
    out.resize(size);
    return out;
}

// A small project: code, data, an executable script, a PNG-named blob, a big text file that spans
// several deflate blocks, a UTF-8 name, caches and a .git folder that must stay out.
void makeTree(const QString &root, bool reverse = false)
{
    QList<std::pair<QString, QByteArray>> files = {
        {QStringLiteral("train.py"), text(5000)},
        {QStringLiteral("configs/grpo.yaml"), QByteArrayLiteral("steps: 10\n")},
        {QStringLiteral("data/ünïcode naméd.txt"), QByteArrayLiteral("hello\n")},
        {QStringLiteral("data/picture.png"), noise(20000, 7)},
        {QStringLiteral("data/weights.bin"), noise(3 * 1024 * 1024 + 5, 9)},
        {QStringLiteral("data/big.txt"), text(3 * 1024 * 1024 + 123)},
        {QStringLiteral("empty.txt"), QByteArray()},
        {QStringLiteral("pkg/__init__.py"), QByteArray()},
        {QStringLiteral("pkg/__pycache__/x.cpython-311.pyc"), QByteArrayLiteral("junk")},
        {QStringLiteral("pkg/mod.pyc"), QByteArrayLiteral("junk")},
        {QStringLiteral(".git/HEAD"), QByteArrayLiteral("ref: refs/heads/main\n")},
        {QStringLiteral(".venv/bin/python"), QByteArrayLiteral("junk")},
    };
    if (reverse) std::reverse(files.begin(), files.end());
    for (const auto &[path, content] : files) QVERIFY(put(root + u'/' + path, content));
    QVERIFY(put(root + QStringLiteral("/run.sh"), QByteArrayLiteral("#!/bin/sh\necho hi\n"), true));
}

CapsuleOptions optionsFor(const QString &source, const QString &output)
{
    CapsuleOptions o;
    o.sourceDir = source;
    o.outputPath = output;
    o.jobSpecJson = JobSpec;
    o.runnerPex = Runner;
    return o;
}

struct Run
{
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

Run run(const QString &program, const QStringList &args, const QProcessEnvironment &env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(program, args);
    p.waitForFinished(300000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(), p.readAllStandardError()};
}

// Python's zipfile (what Ray unpacks with): testzip, then every entry's mode, method and date.
const char *const InspectScript =
    "import zipfile, sys, json\n"
    "z = zipfile.ZipFile(sys.argv[1])\n"
    "assert z.testzip() is None\n"
    "out = {}\n"
    "for i in z.infolist():\n"
    "    out[i.filename] = {'mode': i.external_attr >> 16, 'method': i.compress_type, 'flags': i.flag_bits,\n"
    "                       'date': list(i.date_time), 'system': i.create_system, 'extra': len(i.extra)}\n"
    "if len(sys.argv) > 2: z.extractall(sys.argv[2])\n"
    "print(json.dumps(out))\n";

QJsonObject inspect(const QString &zip, const QString &extractTo = {})
{
    QStringList args {QStringLiteral("-c"), QString::fromLatin1(InspectScript), zip};
    if (!extractTo.isEmpty()) args << extractTo;
    const Run r = run(QStringLiteral("/usr/bin/python3"), args);
    if (r.exitCode != 0) {
        qWarning("python3 failed: %s", r.err.constData());
        return {};
    }
    return QJsonDocument::fromJson(r.out).object();
}

QStringList manifestPaths(const CapsuleResult &r)
{
    QStringList out;
    for (const CapsuleFile &f : r.files) out << f.path;
    return out;
}

Result<CapsuleResult> buildTree(const QString &source, const QString &output, const QStringList &excludes = {})
{
    CapsuleOptions o = optionsFor(source, output);
    o.excludePatterns = excludes;
    return CapsuleBuilder::build(o);
}

} // namespace

class TestCapsule : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void globs_data()
    {
        QTest::addColumn<QString>("pattern");
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("matches");
        QTest::newRow("star") << "*.log" << "a.log" << true;
        QTest::newRow("star stops at slash") << "a/*.log" << "a/b/c.log" << false;
        QTest::newRow("question") << "?.txt" << "a.txt" << true;
        QTest::newRow("class") << "[abc].txt" << "b.txt" << true;
        QTest::newRow("negated class") << "[!abc].txt" << "b.txt" << false;
        QTest::newRow("range") << "file[0-9]" << "file7" << true;
        QTest::newRow("leading **") << "**/build" << "x/y/build" << true;
        QTest::newRow("leading ** at top") << "**/build" << "build" << true;
        QTest::newRow("middle **") << "a/**/z" << "a/z" << true;
        QTest::newRow("middle ** deep") << "a/**/z" << "a/b/c/z" << true;
        QTest::newRow("trailing **") << "a/**" << "a/b/c" << true;
        QTest::newRow("escaped star") << "\\*.txt" << "x.txt" << false;
        QTest::newRow("literal") << "README" << "README" << true;
    }
    void globs()
    {
        QFETCH(QString, pattern);
        QFETCH(QString, path);
        QFETCH(bool, matches);
        QCOMPARE(IgnoreRules::globMatch(pattern.toUtf8(), path.toUtf8()), matches);
    }

    void ignoreRules()
    {
        IgnoreRules rules;
        rules.addPatterns("# comment\n*.log\n!keep.log\n/build/\ndocs/*.tmp\ncache/\n", {}, IgnoreRules::Layer::GitIgnore);
        rules.addPatterns("*.dat\n!important.dat\n", "sub", IgnoreRules::Layer::GitIgnore);
        QVERIFY(rules.isExcluded("a.log", false));
        QVERIFY(rules.isExcluded("deep/x/a.log", false));      // unanchored: any depth
        QVERIFY(!rules.isExcluded("keep.log", false));          // negation, last match wins
        QVERIFY(rules.isExcluded("build", true));               // anchored folder
        QVERIFY(!rules.isExcluded("src/build", true));          // anchored: only at the top
        QVERIFY(!rules.isExcluded("build", false));             // folder-only pattern, a file
        QVERIFY(rules.isExcluded("docs/a.tmp", false));
        QVERIFY(!rules.isExcluded("x/docs/a.tmp", false));      // inner slash anchors too
        QVERIFY(rules.isExcluded("x/cache", true));
        QVERIFY(rules.isExcluded("sub/a.dat", false));          // nested .gitignore
        QVERIFY(rules.isExcluded("sub/deeper/a.dat", false));
        QVERIFY(!rules.isExcluded("sub/important.dat", false));
        QVERIFY(!rules.isExcluded("other/a.dat", false));       // only below its folder
        // A user pattern overrides .gitignore, both ways.
        rules.addPattern("!a.log", {}, IgnoreRules::Layer::User);
        rules.addPattern("secret.txt", {}, IgnoreRules::Layer::User);
        QVERIFY(!rules.isExcluded("a.log", false));
        QVERIFY(rules.isExcluded("x/secret.txt", false));
    }

    void layoutReadersAndManifest()
    {
        QTemporaryDir dir;
        const QString src = dir.filePath(QStringLiteral("src"));
        makeTree(src);
        const QString zip = dir.filePath(QStringLiteral("out.zip"));
        const Result<CapsuleResult> r = buildTree(src, zip);
        QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().message));
        QCOMPARE(r->zipPath, zip);
        QCOMPARE(r->size, QFileInfo(zip).size());
        QCOMPARE(r->objectKey(), QStringLiteral("capsules/") + QString::fromLatin1(r->sha256) + QStringLiteral(".zip"));
        const Run sum = run(QStringLiteral("sha256sum"), {zip});
        QCOMPARE(sum.out.left(64), r->sha256);

        // Excluded: .git, __pycache__, *.pyc, .venv. Present: the rest plus the generated files.
        const QStringList expected = {
            QStringLiteral("configs/grpo.yaml"), QStringLiteral("data/big.txt"), QStringLiteral("data/picture.png"),
            QStringLiteral("data/weights.bin"), QStringLiteral("data/ünïcode naméd.txt"), QStringLiteral("empty.txt"),
            QStringLiteral("jobspec.json"), QStringLiteral("pkg/__init__.py"), QStringLiteral("run.sh"),
            QStringLiteral("runner.pex"), QStringLiteral("train.py"),
        };
        QCOMPARE(manifestPaths(*r), expected);
        QCOMPARE(r->fileCount, expected.size() + 1);  // + manifest.json

        const QString extracted = dir.filePath(QStringLiteral("x"));
        const QJsonObject entries = inspect(zip, extracted);
        QVERIFY(!entries.isEmpty());
        for (auto it = entries.begin(); it != entries.end(); ++it) {
            // Ray's rule: one top-level folder, which it strips.
            QVERIFY2(it.key().startsWith(QStringLiteral("capsule/")), qPrintable(it.key()));
            const QJsonObject e = it.value().toObject();
            QCOMPARE(e.value(QStringLiteral("date")).toArray(), (QJsonArray {1980, 1, 2, 0, 0, 0}));
            QCOMPARE(e.value(QStringLiteral("flags")).toInt() & 0x800, 0x800);  // UTF-8 names
            QCOMPARE(e.value(QStringLiteral("system")).toInt(), 3);            // Unix modes
            QCOMPARE(e.value(QStringLiteral("extra")).toInt(), 0);             // no uid/gid, no times
        }
        // Sorted bytewise, as written.
        const Run names = run(QStringLiteral("/usr/bin/python3"),
                              {QStringLiteral("-c"), QStringLiteral("import zipfile,sys; n=[i.filename.encode() for i in zipfile.ZipFile(sys.argv[1]).infolist()]; assert n == sorted(n), n"), zip});
        QCOMPARE(names.exitCode, 0);

        // Content equals the tree; the manifest's hashes equal sha256sum's.
        const QString top = extracted + QStringLiteral("/capsule/");
        for (const CapsuleFile &f : r->files) {
            const QString original = f.path == QStringLiteral("jobspec.json") || f.path == QStringLiteral("runner.pex") ? QString() : src + u'/' + f.path;
            const QByteArray content = readAll(top + f.path);
            QCOMPARE(content.size(), f.size);
            if (!original.isEmpty()) {
                QCOMPARE(content, readAll(original));
                QCOMPARE(run(QStringLiteral("sha256sum"), {original}).out.left(64), f.sha256);
            }
        }
        QCOMPARE(readAll(top + QStringLiteral("jobspec.json")), JobSpec);
        QCOMPARE(readAll(top + QStringLiteral("runner.pex")), Runner);
        const QByteArray manifest = readAll(top + QStringLiteral("manifest.json"));
        QCOMPARE(manifest, r->manifestJson);
        const QJsonArray listed = QJsonDocument::fromJson(manifest).object().value(QStringLiteral("files")).toArray();
        QCOMPARE(listed.size(), expected.size());
        QCOMPARE(listed.at(1).toObject().value(QStringLiteral("path")).toString(), QStringLiteral("data/big.txt"));
        QCOMPARE(listed.at(1).toObject().value(QStringLiteral("size")).toInteger(), 3 * 1024 * 1024 + 123);

        // unzip agrees, and keeps the exec bit.
        const Run test = run(QStringLiteral("unzip"), {QStringLiteral("-t"), zip});
        QCOMPARE(test.exitCode, 0);
        QVERIFY(test.out.contains("No errors detected"));
        const QString unzipped = dir.filePath(QStringLiteral("u"));
        QCOMPARE(run(QStringLiteral("unzip"), {QStringLiteral("-q"), zip, QStringLiteral("-d"), unzipped}).exitCode, 0);
        QVERIFY(QFileInfo(unzipped + QStringLiteral("/capsule/run.sh")).isExecutable());
        QCOMPARE(readAll(unzipped + QStringLiteral("/capsule/data/big.txt")), readAll(src + QStringLiteral("/data/big.txt")));
    }

    void modesAndMethods()
    {
        QTemporaryDir dir;
        const QString src = dir.filePath(QStringLiteral("src"));
        makeTree(src);
        const QString zip = dir.filePath(QStringLiteral("out.zip"));
        const Result<CapsuleResult> r = buildTree(src, zip);
        QVERIFY(r.ok());
        const QJsonObject e = inspect(zip);
        const auto mode = [&e](const char *name) { return e.value(QLatin1String(name)).toObject().value(QStringLiteral("mode")).toInt(); };
        const auto method = [&e](const char *name) { return e.value(QLatin1String(name)).toObject().value(QStringLiteral("method")).toInt(); };
        QCOMPARE(mode("capsule/run.sh"), 0100755);
        QCOMPARE(mode("capsule/train.py"), 0100644);
        QCOMPARE(mode("capsule/"), 040755);
        QCOMPARE(mode("capsule/data/"), 040755);
        QCOMPARE(method("capsule/train.py"), 8);          // deflated
        QCOMPARE(method("capsule/data/big.txt"), 8);      // deflated in parallel blocks
        QCOMPARE(method("capsule/data/picture.png"), 0);  // already compressed by type
        QCOMPARE(method("capsule/data/weights.bin"), 0);  // incompressible by the entropy probe
        QCOMPARE(method("capsule/empty.txt"), 0);
        QVERIFY(QFileInfo(zip).size() < 3 * 1024 * 1024 + 20000 + 2 * 1024 * 1024);  // big.txt shrank
    }

    void deterministicAcrossCopiesZonesAndUsers()
    {
        QTemporaryDir dir;
        const QString a = dir.filePath(QStringLiteral("a"));
        const QString b = dir.filePath(QStringLiteral("b"));
        makeTree(a);
        makeTree(b, true);  // created in reverse order
        // Other mtimes and owner on the copy.
        QCOMPARE(run(QStringLiteral("touch"), {QStringLiteral("-d"), QStringLiteral("2001-02-03 04:05"), b + QStringLiteral("/train.py"), b + QStringLiteral("/data")}).exitCode, 0);
        if (::geteuid() == 0) QCOMPARE(run(QStringLiteral("chown"), {QStringLiteral("-R"), QStringLiteral("1234:5678"), b}).exitCode, 0);

        const Result<CapsuleResult> first = buildTree(a, dir.filePath(QStringLiteral("1.zip")));
        const Result<CapsuleResult> again = buildTree(a, dir.filePath(QStringLiteral("2.zip")));
        QVERIFY(first.ok() && again.ok());
        QCOMPARE(again->sha256, first->sha256);
        QCOMPARE(readAll(dir.filePath(QStringLiteral("2.zip"))), readAll(dir.filePath(QStringLiteral("1.zip"))));
        // One thread gives the same bytes as many.
        CapsuleOptions single = optionsFor(b, dir.filePath(QStringLiteral("3.zip")));
        single.threads = 1;
        const Result<CapsuleResult> copy = CapsuleBuilder::build(single);
        QVERIFY(copy.ok());
        QCOMPARE(copy->sha256, first->sha256);

        // Another process in Tokyo with umask 077 and a different locale.
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("TZ"), QStringLiteral("Asia/Tokyo"));
        env.insert(QStringLiteral("LC_ALL"), QStringLiteral("C"));
        const Run child = run(QStringLiteral("sh"),
                              {QStringLiteral("-c"), QStringLiteral("umask 077 && exec \"$0\" --capsule-helper \"$1\" \"$2\""),
                               QCoreApplication::applicationFilePath(), b, dir.filePath(QStringLiteral("tokyo.zip"))},
                              env);
        QCOMPARE(child.exitCode, 0);
        QCOMPARE(child.out.trimmed(), first->sha256);

        // A changed file changes the address.
        QVERIFY(put(a + QStringLiteral("/train.py"), QByteArrayLiteral("print(1)\n")));
        const Result<CapsuleResult> changed = buildTree(a, dir.filePath(QStringLiteral("4.zip")));
        QVERIFY(changed.ok());
        QVERIFY(changed->sha256 != first->sha256);
    }

    void excludes()
    {
        QTemporaryDir dir;
        const QString src = dir.filePath(QStringLiteral("src"));
        QVERIFY(put(src + QStringLiteral("/.gitignore"), "*.log\n!keep.log\n/outputs/\n"));
        QVERIFY(put(src + QStringLiteral("/a.log"), "x"));
        QVERIFY(put(src + QStringLiteral("/keep.log"), "x"));
        QVERIFY(put(src + QStringLiteral("/outputs/ckpt.pt"), "x"));
        QVERIFY(put(src + QStringLiteral("/lib/outputs/real.py"), "x"));   // /outputs/ is anchored
        QVERIFY(put(src + QStringLiteral("/lib/.gitignore"), "*.tmp\n!keep.tmp\n"));
        QVERIFY(put(src + QStringLiteral("/lib/x.tmp"), "x"));
        QVERIFY(put(src + QStringLiteral("/lib/keep.tmp"), "x"));
        QVERIFY(put(src + QStringLiteral("/x.tmp"), "x"));                 // lib's rules stay in lib
        QVERIFY(put(src + QStringLiteral("/secrets/token"), "x"));
        QVERIFY(put(src + QStringLiteral("/.git/config"), "x"));
        QVERIFY(put(src + QStringLiteral("/notebooks/.ipynb_checkpoints/a.ipynb"), "x"));
        const Result<CapsuleResult> r = buildTree(src, dir.filePath(QStringLiteral("out.zip")), {QStringLiteral("secrets/"), QStringLiteral("!a.log")});
        QVERIFY2(r.ok(), qPrintable(r.ok() ? QString() : r.error().message));
        QCOMPARE(manifestPaths(*r),
                 (QStringList {QStringLiteral(".gitignore"), QStringLiteral("a.log"), QStringLiteral("jobspec.json"), QStringLiteral("keep.log"),
                               QStringLiteral("lib/.gitignore"), QStringLiteral("lib/keep.tmp"), QStringLiteral("lib/outputs/real.py"),
                               QStringLiteral("runner.pex"), QStringLiteral("x.tmp")}));
    }

    void symlinks()
    {
        QTemporaryDir dir;
        const QString src = dir.filePath(QStringLiteral("src"));
        QVERIFY(put(src + QStringLiteral("/real/data.txt"), "payload"));
        QVERIFY(put(dir.filePath(QStringLiteral("outside.txt")), "outside"));
        QVERIFY(QFile::link(QStringLiteral("real/data.txt"), src + QStringLiteral("/alias.txt")));
        const QString zip = dir.filePath(QStringLiteral("out.zip"));
        Result<CapsuleResult> r = buildTree(src, zip);
        QVERIFY(r.ok());
        // Stored as a copy of its target (Python's zipfile would not restore a link).
        const QString x = dir.filePath(QStringLiteral("x"));
        QVERIFY(!inspect(zip, x).isEmpty());
        QCOMPARE(readAll(x + QStringLiteral("/capsule/alias.txt")), QByteArrayLiteral("payload"));
        QVERIFY(!QFileInfo(x + QStringLiteral("/capsule/alias.txt")).isSymLink());

        const auto expectError = [&](const QString &needle) {
            const Result<CapsuleResult> bad = buildTree(src, dir.filePath(QStringLiteral("bad.zip")));
            QVERIFY(!bad.ok());
            QVERIFY2(bad.error().message.contains(needle), qPrintable(bad.error().message));
            QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("bad.zip"))));
        };
        QVERIFY(QFile::link(dir.filePath(QStringLiteral("outside.txt")), src + QStringLiteral("/escape.txt")));
        expectError(QStringLiteral("escape.txt points outside the code folder"));
        // Excluding the link is the way out the message offers.
        QVERIFY(buildTree(src, dir.filePath(QStringLiteral("ok.zip")), {QStringLiteral("escape.txt")}).ok());
        QVERIFY(QFile::remove(src + QStringLiteral("/escape.txt")));

        QVERIFY(QFile::link(QStringLiteral("loop2"), src + QStringLiteral("/loop1")));
        QVERIFY(QFile::link(QStringLiteral("loop1"), src + QStringLiteral("/loop2")));
        expectError(QStringLiteral("is part of a loop"));
        QVERIFY(QFile::remove(src + QStringLiteral("/loop1")) && QFile::remove(src + QStringLiteral("/loop2")));

        QVERIFY(QFile::link(QStringLiteral("missing.txt"), src + QStringLiteral("/dangling")));
        expectError(QStringLiteral("dangling points to missing.txt, which does not exist"));
        QVERIFY(QFile::remove(src + QStringLiteral("/dangling")));

        QVERIFY(QFile::link(QStringLiteral("real"), src + QStringLiteral("/dirlink")));
        expectError(QStringLiteral("dirlink points to a folder"));
    }

    void hostileTrees()
    {
        QTemporaryDir dir;
        const QString src = dir.filePath(QStringLiteral("src"));
        QVERIFY(put(src + QStringLiteral("/ok.py"), "x"));
        // A name that is not UTF-8 (Latin-1 é).
        const QByteArray odd = QFile::encodeName(src) + "/caf\xe9.txt";
        FILE *f = std::fopen(odd.constData(), "w");
        QVERIFY(f);
        std::fclose(f);
        Result<CapsuleResult> r = buildTree(src, dir.filePath(QStringLiteral("out.zip")));
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.contains(QStringLiteral("caf\\xe9.txt")), qPrintable(r.error().message));
        QVERIFY(r.error().message.contains(QStringLiteral("not valid UTF-8")));
        QVERIFY(buildTree(src, dir.filePath(QStringLiteral("out.zip")), {QStringLiteral("caf?.txt")}).ok());
        QVERIFY(::unlink(odd.constData()) == 0);

        // A FIFO is left out and reported; the build still succeeds.
        QVERIFY(::mkfifo(QFile::encodeName(src + QStringLiteral("/pipe")).constData(), 0644) == 0);
        r = buildTree(src, dir.filePath(QStringLiteral("out.zip")));
        QVERIFY(r.ok());
        QCOMPARE(r->skipped, QStringList {QStringLiteral("pipe: a FIFO, not packed")});
        QVERIFY(!manifestPaths(*r).contains(QStringLiteral("pipe")));

        // The code folder's own jobspec.json would collide with the job's.
        QVERIFY(put(src + QStringLiteral("/jobspec.json"), "{}"));
        r = buildTree(src, dir.filePath(QStringLiteral("out.zip")));
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.contains(QStringLiteral("own jobspec.json")), qPrintable(r.error().message));
        QVERIFY(buildTree(src, dir.filePath(QStringLiteral("out.zip")), {QStringLiteral("/jobspec.json")}).ok());
        QVERIFY(QFile::remove(src + QStringLiteral("/jobspec.json")));

        // Missing inputs.
        CapsuleOptions o = optionsFor(src, dir.filePath(QStringLiteral("out.zip")));
        o.jobSpecJson.clear();
        QVERIFY(!CapsuleBuilder::build(o).ok());
        o = optionsFor(dir.filePath(QStringLiteral("nope")), dir.filePath(QStringLiteral("out.zip")));
        QVERIFY(CapsuleBuilder::build(o).error().message.contains(QStringLiteral("does not exist")));
        o = optionsFor(src, dir.filePath(QStringLiteral("out.zip")));
        o.topLevelDir = QStringLiteral("a/b");
        QCOMPARE(CapsuleBuilder::build(o).error().code, Error::Code::Invalid);
    }

    // The address is a format: a fixed tree builds to these bytes in every release
    // (tests/data/capsule-golden/README.md). The tree is copied first, so that the checkout's
    // own modes and times cannot matter; the file modes are set as git stores them.
    void goldenCapsule()
    {
        const QString golden = QStringLiteral(SF_TEST_DATA_DIR "/capsule-golden");
        QTemporaryDir dir;
        const QString src = dir.filePath(QStringLiteral("src"));
        QDirIterator it(golden + QStringLiteral("/tree"), QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString from = it.next();
            const QString relative = QDir(golden + QStringLiteral("/tree")).relativeFilePath(from);
            QVERIFY(put(src + u'/' + relative, readAll(from), relative == QLatin1String("run.sh")));
        }
        // 2.5 MiB of text from a formula: three deflate blocks of 1 MiB.
        QByteArray big;
        for (int line = 0; big.size() < 5 * 512 * 1024; ++line) big += "step " + QByteArray::number(line) + " loss " + QByteArray::number((line * 7919) % 10007) + '\n';
        big.truncate(5 * 512 * 1024);
        QVERIFY(put(src + QStringLiteral("/data/big.txt"), big));

        CapsuleOptions o;
        o.sourceDir = src;
        o.outputPath = dir.filePath(QStringLiteral("golden.zip"));
        o.jobSpecJson = readAll(golden + QStringLiteral("/jobspec.json"));
        o.runnerPex = readAll(golden + QStringLiteral("/runner.pex"));
        QVERIFY(!o.jobSpecJson.isEmpty() && !o.runnerPex.isEmpty());
        const auto built = CapsuleBuilder::build(o);
        QVERIFY2(built, built ? "" : qPrintable(built.error().message));
        QCOMPARE(manifestPaths(*built), (QStringList{QStringLiteral("configs/run.yaml"), QStringLiteral("data/big.txt"), QStringLiteral("data/noise.bin"),
                                                     QStringLiteral("data/ünïcode naméd.txt"), QStringLiteral("jobspec.json"), QStringLiteral("pkg/__init__.py"),
                                                     QStringLiteral("run.sh"), QStringLiteral("runner.pex"), QStringLiteral("train.py")}));
        QCOMPARE(built->manifestJson, readAll(golden + QStringLiteral("/manifest.json")));   // its key names and layout
        QCOMPARE(built->manifestSha256(), QByteArray(GoldenManifestSha256));
        QCOMPARE(built->sha256, QByteArray(GoldenCapsuleSha256));
        QCOMPARE(built->size, GoldenCapsuleSize);
    }

    // A file that changes between its hash and its packing (an editor saving, a training run
    // writing into the code folder) fails the build instead of packing bytes the manifest does
    // not describe; no zip is left.
    void fileEditedDuringTheBuild_data()
    {
        QTest::addColumn<QByteArray>("edited");
        QByteArray sameSize = text(3 * 1024 * 1024 + 123);
        sameSize[sameSize.size() / 2] = static_cast<char>(sameSize.at(sameSize.size() / 2) ^ 1);
        QTest::newRow("same size, other bytes") << sameSize;
        QTest::newRow("shorter") << text(1000);
    }
    void fileEditedDuringTheBuild()
    {
        QFETCH(QByteArray, edited);
        QTemporaryDir dir;
        const QString src = dir.filePath(QStringLiteral("src"));
        makeTree(src);
        const QString out = dir.filePath(QStringLiteral("out.zip"));
        bool editedOnce = false;
        const auto built = CapsuleBuilder::build(optionsFor(src, out), nullptr, [&](const CapsuleProgress &p) {
            // The first report of the writing stage comes after every hash and before any read
            // for the zip.
            if (p.stage == CapsuleProgress::Stage::Writing && !editedOnce) {
                editedOnce = true;
                QVERIFY(put(src + QStringLiteral("/data/big.txt"), edited));
            }
        });
        QVERIFY(editedOnce);
        QVERIFY(text(3 * 1024 * 1024 + 123) != edited);
        QVERIFY(!built);
        QCOMPARE(built.error().message, QStringLiteral("data/big.txt changed while the capsule was being built. Build it again."));
        QVERIFY(!QFile::exists(out));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList());   // no temporary zip either
    }

    void unreadableFile()
    {
        // Root reads anything, so the build runs as nobody in a child when the tests run as root.
        QTemporaryDir dir;
        QVERIFY(::chmod(QFile::encodeName(dir.path()).constData(), 0777) == 0);
        const QString src = dir.filePath(QStringLiteral("src"));
        QVERIFY(put(src + QStringLiteral("/ok.py"), "x"));
        QVERIFY(put(src + QStringLiteral("/private.key"), "x"));
        QVERIFY(::chmod(QFile::encodeName(src).constData(), 0755) == 0);
        QVERIFY(::chmod(QFile::encodeName(src + QStringLiteral("/private.key")).constData(), 0) == 0);
        QStringList args {QCoreApplication::applicationFilePath(), QStringLiteral("--capsule-helper"), src, dir.filePath(QStringLiteral("out.zip"))};
        QString program = args.takeFirst();
        if (::geteuid() == 0) {
            args.prepend(program);
            args = QStringList {QStringLiteral("--reuid=65534"), QStringLiteral("--regid=65534"), QStringLiteral("--clear-groups")} + args;
            program = QStringLiteral("setpriv");
        }
        const Run child = run(program, args);
        QCOMPARE(child.exitCode, 1);
        QVERIFY2(child.out.contains("Cannot read private.key") && child.out.contains("exclude it"), child.out.constData());
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("out.zip"))));
    }

    void asyncProgressAndCancel()
    {
        QTemporaryDir dir;
        const QString src = dir.filePath(QStringLiteral("src"));
        for (int i = 0; i < 40; ++i) QVERIFY(put(src + QStringLiteral("/f%1.txt").arg(i), text(512 * 1024 + i)));
        const QString zip = dir.filePath(QStringLiteral("out/capsule.zip"));
        QVERIFY(QDir().mkpath(dir.filePath(QStringLiteral("out"))));

        CapsuleBuilder builder;
        QSignalSpy progress(&builder, &CapsuleBuilder::progress);
        QSignalSpy finished(&builder, &CapsuleBuilder::finished);
        builder.start(optionsFor(src, zip));
        QVERIFY(builder.isRunning());
        QVERIFY(finished.wait(120000));
        QVERIFY(builder.result().ok());
        QVERIFY(progress.size() >= 2);
        const auto last = progress.last().at(0).value<CapsuleProgress>();
        QCOMPARE(last.stage, CapsuleProgress::Stage::Writing);
        QCOMPARE(last.bytesDone, last.bytesTotal);
        QCOMPARE(last.filesDone, 43);
        QCOMPARE(builder.result()->fileCount, 43);

        // Cancelled at its first progress signal: a "cancelled" error and nothing left behind.
        QVERIFY(QFile::remove(zip));
        CapsuleBuilder cancelled;
        QSignalSpy done(&cancelled, &CapsuleBuilder::finished);
        connect(&cancelled, &CapsuleBuilder::progress, &cancelled, &CapsuleBuilder::cancel);
        cancelled.start(optionsFor(src, zip));
        QVERIFY(done.wait(120000));
        QVERIFY(!cancelled.result().ok());
        QVERIFY(cancelled.result().error().message.contains(QStringLiteral("cancelled")));
        QCOMPARE(QDir(dir.filePath(QStringLiteral("out"))).entryList(QDir::Files | QDir::Hidden), QStringList());

        // Cancel while writing, through the synchronous entry point.
        std::atomic_bool flag {false};
        const Result<CapsuleResult> r = CapsuleBuilder::build(optionsFor(src, zip), &flag, [&flag](const CapsuleProgress &p) {
            if (p.stage == CapsuleProgress::Stage::Writing && p.bytesDone > 0) flag = true;
        });
        QVERIFY(!r.ok());
        QCOMPARE(QDir(dir.filePath(QStringLiteral("out"))).entryList(QDir::Files | QDir::Hidden), QStringList());
    }

    void manyEntriesUseZip64End()
    {
        // More than 65,535 entries need the zip64 end records; Python must still read them.
        QTemporaryDir dir;
        const QString src = dir.filePath(QStringLiteral("src"));
        for (int d = 0; d < 66; ++d) {
            QVERIFY(QDir().mkpath(src + QStringLiteral("/d%1").arg(d)));
            for (int i = 0; i < 1000; ++i) {
                const QByteArray p = QFile::encodeName(src + QStringLiteral("/d%1/%2").arg(d).arg(i));
                FILE *f = std::fopen(p.constData(), "w");
                QVERIFY(f);
                std::fputs("x", f);
                std::fclose(f);
            }
        }
        const QString zip = dir.filePath(QStringLiteral("out.zip"));
        const Result<CapsuleResult> r = buildTree(src, zip);
        QVERIFY(r.ok());
        QCOMPARE(r->fileCount, 66003);
        const Run count = run(QStringLiteral("/usr/bin/python3"),
                              {QStringLiteral("-c"), QStringLiteral("import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; print(len(z.infolist()))"), zip});
        QCOMPARE(count.exitCode, 0);
        QCOMPARE(count.out.trimmed(), QByteArray::number(66003 + 66 + 1));  // + folders
    }
};

// `--capsule-helper SRC OUT` builds in this process (for the time-zone, umask and user tests)
// and prints the SHA-256 or the error.
int main(int argc, char *argv[])
{
    if (argc == 4 && std::strcmp(argv[1], "--capsule-helper") == 0) {
        QCoreApplication app(argc, argv);
        const Result<CapsuleResult> r = CapsuleBuilder::build(optionsFor(QString::fromLocal8Bit(argv[2]), QString::fromLocal8Bit(argv[3])));
        std::printf("%s\n", r.ok() ? r->sha256.constData() : r.error().message.toUtf8().constData());
        return r.ok() ? 0 : 1;
    }
    QCoreApplication app(argc, argv);
    TestCapsule test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_capsule.moc"
