#include "core/job/capsule.h"

#include "core/crypto/digest.h"
#include "core/job/ignorerules.h"
#include "core/job/zipwriter.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QPointer>
#include <QSaveFile>
#include <QStringDecoder>
#include <QThread>
#include <QThreadPool>
#include <QtConcurrent>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <deque>
#include <set>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

namespace Starforge::Job {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(Capsule)
};

} // namespace

Q_LOGGING_CATEGORY(lcCapsule, "starforge.core.capsule")

namespace {

constexpr qint64 ProbeSize = 64 * 1024;
constexpr qint64 ProbeMinSize = 8 * 1024;
// Order-0 entropy (bits per byte) above which a sample is taken as already compressed or random:
// text is near 4.5-5.5, float tensors near 7-7.6, deflate/PNG/JPEG output above 7.95.
constexpr double StoreEntropy = 7.9;

const char *const GeneratedNames[] = {"jobspec.json", "manifest.json", "runner.pex"};

// Already-compressed formats: deflating them again costs time and gains nothing. Tensors
// (.safetensors, .pt, .bin, .npy) are not here: they are raw numbers, deflate gains 5-10 % and the
// entropy probe stores the incompressible ones anyway.
bool isCompressedType(const QByteArray &name)
{
    static const char *const suffixes[] = {".zip", ".gz", ".tgz", ".bz2", ".xz", ".txz", ".zst", ".lz4", ".7z", ".rar",
                                          ".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".heic", ".mp3", ".ogg",
                                          ".flac", ".mp4", ".mkv", ".webm", ".mov", ".pex", ".whl", ".jar", ".egg"};
    const QByteArray lower = name.toLower();
    for (const char *s : suffixes) {
        if (lower.endsWith(s)) return true;
    }
    return false;
}

double entropy(const char *data, qint64 size)
{
    qint64 counts[256] = {};
    for (qint64 i = 0; i < size; ++i) ++counts[static_cast<unsigned char>(data[i])];
    double h = 0;
    for (qint64 c : counts) {
        if (c == 0) continue;
        const double p = static_cast<double>(c) / static_cast<double>(size);
        h -= p * std::log2(p);
    }
    return h;
}

QString display(const QByteArray &relative)
{
    return QString::fromUtf8(relative);
}

// A name that is not UTF-8, shown with its odd bytes escaped so the user can find it.
QString escaped(const QByteArray &bytes)
{
    QString out;
    for (char c : bytes) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7f) out += QLatin1Char(c);
        else out += QStringLiteral("\\x%1").arg(u, 2, 16, QLatin1Char('0'));
    }
    return out;
}

bool isUtf8(const QByteArray &bytes)
{
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    const QString s = decoder.decode(bytes);
    Q_UNUSED(s)
    return !decoder.hasError();
}

Error cancelledError()
{
    return Error::unavailable(Text::tr("The capsule build was cancelled."));
}

struct Entry
{
    QByteArray name;              // full zip name, top-level folder included; folders end with '/'
    QByteArray relative;          // relative to the top folder ("" for the top itself)
    QByteArray sourcePath;        // a file on disk, or empty
    QByteArray memory;            // content when sourcePath is empty
    bool isDir = false;
    bool executable = false;
    bool store = false;
    qint64 size = 0;
    quint32 crc = 0;
    QByteArray sha256;            // raw
    std::optional<Error> error;
};

struct ScanState
{
    QByteArray root;              // canonical, no trailing '/'
    QByteArray outputPath;        // canonical parent + name, to refuse writing into the tree
    IgnoreRules rules;
    bool useGitIgnore = true;
    std::vector<Entry> files;
    QStringList skipped;
    const std::atomic_bool *cancelled = nullptr;
    QList<CapsuleTreeEntry> *listing = nullptr;   // listCapsuleTree(): every path, with its fate
};

QByteArray joinPath(const QByteArray &dir, const QByteArray &name)
{
    return dir.isEmpty() ? name : dir + '/' + name;
}

QByteArray readSmallFile(const QByteArray &path)
{
    QFile f(QFile::decodeName(path));
    return f.open(QIODevice::ReadOnly) ? f.read(16 * 1024 * 1024) : QByteArray();
}

Result<void> scanDir(ScanState &state, const QByteArray &relDir)
{
    if (state.cancelled && state.cancelled->load()) return cancelledError();
    const QByteArray absDir = relDir.isEmpty() ? state.root : state.root + '/' + relDir;
    if (state.useGitIgnore) {
        struct stat st {};
        const QByteArray gitignore = absDir + "/.gitignore";
        if (::lstat(gitignore.constData(), &st) == 0 && S_ISREG(st.st_mode)) {
            state.rules.addPatterns(readSmallFile(gitignore), relDir, IgnoreRules::Layer::GitIgnore);
        }
    }
    DIR *dir = ::opendir(absDir.constData());
    if (!dir) {
        const int err = errno;
        return Error::io(Text::tr("Cannot list the folder %1: %2. Make it readable or exclude it.")
                             .arg(relDir.isEmpty() ? QFile::decodeName(state.root) : display(relDir), QString::fromLocal8Bit(std::strerror(err))));
    }
    QByteArrayList names;
    while (dirent *e = ::readdir(dir)) {
        const QByteArray name(e->d_name);
        if (name != "." && name != "..") names.append(name);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());

    for (const QByteArray &name : std::as_const(names)) {
        const QByteArray rel = joinPath(relDir, name);
        const QByteArray abs = absDir + '/' + name;
        struct stat st {};
        if (::lstat(abs.constData(), &st) != 0) {
            const int err = errno;
            return Error::io(Text::tr("Cannot read %1: %2.").arg(display(rel), QString::fromLocal8Bit(std::strerror(err))));
        }
        const bool isDir = S_ISDIR(st.st_mode);
        if (isDir && IgnoreRules::isVersionControlDir(name)) {
            if (state.listing) state.listing->append({QString::fromUtf8(rel), true, 0, Text::tr("version control data (never packed)")});
            continue;
        }
        if (state.rules.isExcluded(rel, isDir)) {
            if (state.listing) state.listing->append({QString::fromUtf8(rel), isDir, isDir ? 0 : qint64(st.st_size), state.rules.excludedBy(rel, isDir)});
            continue;
        }
        if (abs == state.outputPath) continue;  // a rebuild over an earlier capsule inside the tree
        if (!isUtf8(rel)) {
            return Error::invalid(Text::tr("The name \"%1\" is not valid UTF-8, and zip readers would garble it. "
                                                 "Rename it or add it to the exclude patterns.")
                                      .arg(escaped(rel)));
        }
        if (relDir.isEmpty() && !isDir) {
            for (const char *generated : GeneratedNames) {
                if (name == generated) {
                    return Error::invalid(Text::tr("The code folder has its own %1 at its top, where the capsule puts the "
                                                         "job's. Rename it or add \"/%1\" to the exclude patterns.")
                                              .arg(QLatin1String(generated)));
                }
            }
        }
        if (isDir) {
            if (state.listing) state.listing->append({QString::fromUtf8(rel), true, 0, QString()});
            if (Result<void> r = scanDir(state, rel); !r) return r;
            continue;
        }
        QByteArray source = abs;
        if (S_ISLNK(st.st_mode)) {
            // Ray unpacks with Python's zipfile, which does not restore links, so a link inside
            // the tree is packed as a copy of its target and one leaving the tree is refused.
            char resolved[PATH_MAX];
            if (!::realpath(abs.constData(), resolved)) {
                const int err = errno;
                char target[PATH_MAX] = {};
                const ssize_t n = ::readlink(abs.constData(), target, sizeof target - 1);
                const QString to = n > 0 ? QFile::decodeName(QByteArray(target, n)) : QString();
                if (err == ELOOP) {
                    return Error::invalid(Text::tr("The symbolic link %1 (-> %2) is part of a loop. Fix the link or exclude it.")
                                              .arg(display(rel), to));
                }
                return Error::invalid(Text::tr("The symbolic link %1 points to %2, which does not exist. Fix the link or "
                                                     "exclude it.")
                                          .arg(display(rel), to));
            }
            source = QByteArray(resolved);
            if (!source.startsWith(QByteArray(state.root + '/'))) {
                return Error::invalid(Text::tr("The symbolic link %1 points outside the code folder (to %2), and the cluster "
                                                     "cannot follow it. Copy the file into the folder or exclude the link.")
                                          .arg(display(rel), QFile::decodeName(source)));
            }
            if (::stat(source.constData(), &st) != 0) {
                const int err = errno;
                return Error::io(Text::tr("Cannot read %1: %2.").arg(display(rel), QString::fromLocal8Bit(std::strerror(err))));
            }
            if (S_ISDIR(st.st_mode)) {
                return Error::unsupported(Text::tr("The symbolic link %1 points to a folder; the capsule packs links to files "
                                                         "only, as copies. Replace the link with the folder or exclude it.")
                                              .arg(display(rel)));
            }
        }
        if (!S_ISREG(st.st_mode)) {
            const QString kind = S_ISFIFO(st.st_mode) ? Text::tr("a FIFO") : S_ISSOCK(st.st_mode) ? Text::tr("a socket") : Text::tr("a device");
            state.skipped.append(Text::tr("%1: %2, not packed").arg(display(rel), kind));
            continue;
        }
        if (state.listing) state.listing->append({QString::fromUtf8(rel), false, qint64(st.st_size), QString()});
        Entry entry;
        entry.relative = rel;
        entry.sourcePath = source;
        entry.size = st.st_size;
        entry.executable = (st.st_mode & S_IXUSR) != 0;
        state.files.push_back(std::move(entry));
    }
    return {};
}

// Reads a whole entry once: SHA-256 for the manifest, CRC-32 to notice a change before writing,
// and the entropy probe that decides store or deflate.
void hashEntry(Entry &e, const std::atomic_bool *cancelled)
{
    Crypto::Digest digest(Crypto::Digest::Algorithm::Sha256);
    uLong crc = crc32(0L, Z_NULL, 0);
    const bool probe = !e.store && e.size >= ProbeMinSize;
    if (!e.sourcePath.isEmpty()) {
        QFile file(QFile::decodeName(e.sourcePath));
        if (!file.open(QIODevice::ReadOnly)) {
            e.error = Error::io(Text::tr("Cannot read %1: %2. Make it readable or exclude it.")
                                    .arg(display(e.relative), file.errorString()));
            return;
        }
        QByteArray block(ZipWriter::BlockSize, Qt::Uninitialized);
        qint64 total = 0;
        for (;;) {
            if (cancelled && cancelled->load()) return;
            const qint64 n = file.read(block.data(), block.size());
            if (n < 0) {
                e.error = Error::io(Text::tr("Cannot read %1: %2. Make it readable or exclude it.")
                                        .arg(display(e.relative), file.errorString()));
                return;
            }
            if (n == 0) break;
            if (probe && total == 0) e.store = entropy(block.constData(), std::min(n, ProbeSize)) >= StoreEntropy;
            digest.add(block.constData(), n);
            crc = crc32(crc, reinterpret_cast<const Bytef *>(block.constData()), static_cast<uInt>(n));
            total += n;
        }
        e.size = total;
    } else {
        if (probe) e.store = entropy(e.memory.constData(), std::min<qint64>(e.memory.size(), ProbeSize)) >= StoreEntropy;
        digest.add(e.memory);
        crc = crc32(crc, reinterpret_cast<const Bytef *>(e.memory.constData()), static_cast<uInt>(e.memory.size()));
        e.size = e.memory.size();
    }
    e.sha256 = digest.result();
    e.crc = static_cast<quint32>(crc);
    if (e.size == 0) e.store = true;
}

QByteArray manifestJson(const std::vector<Entry> &files)
{
    // QJsonObject keeps keys sorted and QJsonDocument's indented form is stable, so equal
    // inputs give equal bytes.
    QJsonArray list;
    for (const Entry &e : files) {
        list.append(QJsonObject {
            {Text::tr("path"), QString::fromUtf8(e.relative)},
            {Text::tr("sha256"), QString::fromLatin1(e.sha256.toHex())},
            {QStringLiteral("size"), static_cast<double>(e.size)},
        });
    }
    return QJsonDocument(QJsonObject {{QStringLiteral("files"), list}, {QStringLiteral("format"), QStringLiteral("starforge-capsule/1")}})
        .toJson(QJsonDocument::Indented);
}

Result<void> validate(const CapsuleOptions &o)
{
    if (o.jobSpecJson.isEmpty()) return Error::invalid(Text::tr("The capsule needs the job's jobspec.json; none was given."));
    if (o.runnerPexPath.isEmpty() && o.runnerPex.isEmpty()) return Error::invalid(Text::tr("The capsule needs runner.pex; none was given."));
    if (o.topLevelDir.isEmpty() || o.topLevelDir.contains(u'/') || o.topLevelDir.contains(u'\\') || o.topLevelDir == QStringLiteral(".")
        || o.topLevelDir == QStringLiteral("..")) {
        return Error::invalid(Text::tr("The capsule's top-level folder \"%1\" must be one plain name, such as \"capsule\".").arg(o.topLevelDir));
    }
    if (o.compressionLevel < 1 || o.compressionLevel > 9) return Error::invalid(Text::tr("The compression level must be 1 to 9."));
    if (o.outputPath.isEmpty()) return Error::invalid(Text::tr("No output path was given for the capsule."));
    return {};
}

// Progress (stage, files done and total, bytes done and total), when the caller asked for it.
using Reporter = std::function<void(CapsuleProgress::Stage, qint64, qint64, qint64, qint64)>;

bool isCancelled(const ZipWriter::Workers &workers)
{
    return workers.cancelled && workers.cancelled->load();
}

// Phase 1, walk: the code folder in sorted order, with excludes, links and odd files settled.
Result<void> walkTree(const CapsuleOptions &options, const std::atomic_bool *cancelled, const Reporter &report, ScanState &scan)
{
    char resolvedRoot[PATH_MAX];
    if (!::realpath(QFile::encodeName(options.sourceDir).constData(), resolvedRoot)) {
        return Error::notFound(Text::tr("The code folder %1 does not exist.").arg(options.sourceDir));
    }
    scan.root = QByteArray(resolvedRoot);
    struct stat rootStat {};
    if (::stat(scan.root.constData(), &rootStat) != 0 || !S_ISDIR(rootStat.st_mode)) {
        return Error::invalid(Text::tr("%1 is not a folder.").arg(options.sourceDir));
    }
    const QFileInfo outInfo(options.outputPath);
    char resolvedOutDir[PATH_MAX];
    if (!::realpath(QFile::encodeName(outInfo.absolutePath()).constData(), resolvedOutDir)) {
        return Error::notFound(Text::tr("The folder for the capsule, %1, does not exist.").arg(outInfo.absolutePath()));
    }
    scan.outputPath = QByteArray(resolvedOutDir) + '/' + QFile::encodeName(outInfo.fileName());
    scan.useGitIgnore = options.useGitIgnore;
    scan.cancelled = cancelled;
    if (options.useDefaultExcludes) {
        for (const QByteArray &p : IgnoreRules::defaultPatterns()) scan.rules.addPattern(p, {}, IgnoreRules::Layer::Default);
    }
    for (const QString &p : options.excludePatterns) scan.rules.addPattern(p.toUtf8(), {}, IgnoreRules::Layer::User);
    report(CapsuleProgress::Stage::Scanning, 0, 0, 0, 0);
    return scanDir(scan, {});
}

// Phase 2, collect: the walked files plus the job's jobspec.json and runner.pex, each with its
// zip name and its store-by-type decision, in zip order.
Result<std::vector<Entry>> collectFiles(const CapsuleOptions &options, std::vector<Entry> files)
{
    Entry jobspec;
    jobspec.relative = "jobspec.json";
    jobspec.memory = options.jobSpecJson;
    files.push_back(std::move(jobspec));
    Entry runner;
    runner.relative = "runner.pex";
    if (!options.runnerPexPath.isEmpty()) {
        const QFileInfo info(options.runnerPexPath);
        if (!info.isFile()) return Error::notFound(Text::tr("runner.pex was not found at %1.").arg(options.runnerPexPath));
        runner.sourcePath = QFile::encodeName(info.absoluteFilePath());
        runner.size = info.size();
    } else {
        runner.memory = options.runnerPex;
    }
    files.push_back(std::move(runner));
    const QByteArray top = options.topLevelDir.toUtf8();
    for (Entry &e : files) {
        e.name = top + '/' + e.relative;
        e.store = isCompressedType(e.relative);
    }
    std::sort(files.begin(), files.end(), [](const Entry &a, const Entry &b) { return a.name < b.name; });
    return files;
}

// Phase 3, hash: every file read once, in parallel, the results taken in order so that the first
// error reported is the first in zip order.
Result<void> hashFiles(std::vector<Entry> &files, const ZipWriter::Workers &workers, const Reporter &report, qint64 bytesTotal)
{
    std::deque<QFuture<void>> inFlight;
    const auto drain = [&] {
        for (auto &f : inFlight) f.waitForFinished();
    };
    qsizetype next = 0;
    qsizetype done = 0;
    qint64 bytesDone = 0;
    const auto count = static_cast<qsizetype>(files.size());
    report(CapsuleProgress::Stage::Hashing, 0, count, 0, bytesTotal);
    while (done < count) {
        while (next < count && static_cast<qsizetype>(inFlight.size()) < workers.window) {
            Entry *e = &files[static_cast<size_t>(next++)];
            inFlight.push_back(QtConcurrent::run(workers.pool, [e, cancelled = workers.cancelled] { hashEntry(*e, cancelled); }));
        }
        inFlight.front().waitForFinished();
        inFlight.pop_front();
        const Entry &e = files[static_cast<size_t>(done++)];
        bytesDone += e.size;
        if (isCancelled(workers)) {
            drain();
            return cancelledError();
        }
        if (e.error) {
            drain();
            return *e.error;
        }
        report(CapsuleProgress::Stage::Hashing, done, count, bytesDone, bytesTotal);
    }
    return {};
}

// Phase 4, manifest: manifest.json and the result's file list over the hashed files, then
// manifest.json itself and every folder added as entries, all in zip order.
CapsuleResult describeFiles(const std::vector<Entry> &files)
{
    CapsuleResult result;
    result.manifestJson = manifestJson(files);
    for (const Entry &e : files) {
        result.files.append(CapsuleFile {QString::fromUtf8(e.relative), e.size, e.sha256.toHex(), e.executable, e.store});
    }
    return result;
}

void addManifestAndFolders(std::vector<Entry> &files, const QByteArray &manifest, const QByteArray &top)
{
    Entry entry;
    entry.relative = "manifest.json";
    entry.name = top + "/manifest.json";
    entry.memory = manifest;
    hashEntry(entry, nullptr);
    files.push_back(std::move(entry));
    std::set<QByteArray> dirs {top + '/'};
    for (const Entry &e : files) {
        for (qsizetype slash = e.relative.indexOf('/'); slash >= 0; slash = e.relative.indexOf('/', slash + 1)) {
            dirs.insert(top + '/' + e.relative.left(slash + 1));
        }
    }
    for (const QByteArray &d : dirs) {
        Entry dir;
        dir.name = d;
        dir.isDir = true;
        dir.store = true;
        files.push_back(std::move(dir));
    }
    std::sort(files.begin(), files.end(), [](const Entry &a, const Entry &b) { return a.name < b.name; });
}

// Phase 5, write: the entries in zip order, each file's blocks deflated on the workers while
// this thread writes (ZipWriter::writeEntries), into a temporary file beside the output that is
// renamed into place only when complete, so that a failure or a cancel leaves no partial file.
// Returns the number of files (not folders) in the zip.
Result<qint64> writeZip(const std::vector<Entry> &files, const CapsuleOptions &options, const ZipWriter::Workers &workers,
                        const Reporter &report, qint64 bytesTotal)
{
    std::vector<ZipWriter::Entry> entries;
    entries.reserve(files.size());
    for (const Entry &e : files) {
        const ZipWriter::Kind kind = e.isDir ? ZipWriter::Kind::Folder : e.executable ? ZipWriter::Kind::Executable : ZipWriter::Kind::File;
        entries.push_back({e.name, kind, e.sourcePath, e.memory, e.size, e.store, e.crc, display(e.relative)});
    }
    const qint64 fileCount = static_cast<qint64>(std::count_if(files.begin(), files.end(), [](const Entry &e) { return !e.isDir; }));

    QSaveFile out(options.outputPath);
    out.setDirectWriteFallback(false);
    ZipWriter zip(out, options.outputPath);
    if (!out.open(QIODevice::WriteOnly)) {
        return zip.writeError();
    }
    report(CapsuleProgress::Stage::Writing, 0, fileCount, 0, bytesTotal);
    qint64 written = 0;
    const Result<void> wrote = zip.writeEntries(entries, workers, [&](qint64 filesDone, qint64 bytesDone) {
        written = bytesDone;
        report(CapsuleProgress::Stage::Writing, filesDone, fileCount, bytesDone, bytesTotal);
    });
    if (!wrote) {
        out.cancelWriting();
        return wrote.error();
    }
    if (!zip.finishArchive() || !out.commit()) return zip.writeError();
    report(CapsuleProgress::Stage::Writing, fileCount, fileCount, written, written);
    return fileCount;
}

// Phase 6, finalize: the content address and size, read back from the committed file.
Result<void> finalize(CapsuleResult &result, const CapsuleOptions &options, qint64 fileCount, const QStringList &skipped)
{
    Result<QByteArray> sha = Crypto::Digest::sha256File(options.outputPath);
    if (!sha) return sha.error();
    result.zipPath = options.outputPath;
    result.sha256 = sha->toHex();
    result.size = QFileInfo(options.outputPath).size();
    result.fileCount = static_cast<int>(fileCount);
    result.skipped = skipped;
    for (const QString &s : std::as_const(result.skipped)) qCInfo(lcCapsule, "skipped %s", qPrintable(s));
    return {};
}

} // namespace

QByteArray CapsuleResult::manifestSha256() const
{
    return Crypto::Digest::sha256(manifestJson).toHex();
}

Result<CapsuleResult> CapsuleBuilder::build(const CapsuleOptions &options, const std::atomic_bool *cancelled,
                                            const std::function<void(const CapsuleProgress &)> &progress)
{
    if (Result<void> v = validate(options); !v) return v.error();
    const Reporter report = [&progress](CapsuleProgress::Stage stage, qint64 filesDone, qint64 filesTotal, qint64 bytesDone, qint64 bytesTotal) {
        if (progress) progress({stage, filesDone, filesTotal, bytesDone, bytesTotal});
    };
    ScanState scan;
    if (Result<void> walked = walkTree(options, cancelled, report, scan); !walked) return walked.error();
    Result<std::vector<Entry>> collected = collectFiles(options, std::move(scan.files));
    if (!collected) return collected.error();
    std::vector<Entry> files = std::move(collected).value();

    // Declared after `files`, so that its destructor waits for the workers before the entries
    // they read go away. Each worker runs a few blocks ahead, so memory stays bounded.
    const int threads = options.threads > 0 ? options.threads : std::max(1, QThread::idealThreadCount());
    QThreadPool pool;
    pool.setMaxThreadCount(threads);
    const ZipWriter::Workers workers {&pool, 4 * threads, options.compressionLevel, cancelled, cancelledError()};

    qint64 bytesTotal = 0;
    for (const Entry &e : files) bytesTotal += e.size;
    if (Result<void> hashed = hashFiles(files, workers, report, bytesTotal); !hashed) return hashed.error();

    CapsuleResult result = describeFiles(files);
    addManifestAndFolders(files, result.manifestJson, options.topLevelDir.toUtf8());

    Result<qint64> fileCount = writeZip(files, options, workers, report, bytesTotal + result.manifestJson.size());
    if (!fileCount) return fileCount.error();
    if (Result<void> done = finalize(result, options, *fileCount, scan.skipped); !done) return done.error();
    return result;
}

struct CapsuleBuilder::Shared
{
    std::atomic_bool cancelled {false};
    QFuture<Result<CapsuleResult>> future;   // the destructor waits for it
};

CapsuleBuilder::CapsuleBuilder(QObject *parent)
    : QObject(parent)
{
}

CapsuleBuilder::~CapsuleBuilder()
{
    if (m_shared) {
        m_shared->cancelled = true;
        m_shared->future.waitForFinished();
    }
}

void CapsuleBuilder::start(const CapsuleOptions &options)
{
    if (m_running) return;
    m_running = true;
    m_result.reset();
    m_shared = std::make_shared<Shared>();
    auto shared = m_shared;
    QPointer<CapsuleBuilder> self(this);
    QFuture<Result<CapsuleResult>> built = QtConcurrent::run([shared, options, self] {
        int lastPercent = -1;
        CapsuleProgress::Stage lastStage = CapsuleProgress::Stage::Scanning;
        auto onProgress = [&](const CapsuleProgress &p) {
            // About one signal per percent and stage, queued to the builder's thread.
            const int percent = p.bytesTotal > 0 ? static_cast<int>(100 * p.bytesDone / p.bytesTotal) : 0;
            if (percent == lastPercent && p.stage == lastStage && p.filesDone != p.filesTotal) return;
            lastPercent = percent;
            lastStage = p.stage;
            QMetaObject::invokeMethod(self.data(), [self, p] {
                if (self) Q_EMIT self->progress(p);
            }, Qt::QueuedConnection);
        };
        return build(options, &shared->cancelled, onProgress);
    });
    m_shared->future = built;
    // The watcher reports on the builder's thread, after every progress signal queued before it,
    // and not at all once the builder is gone: it is the builder's child (Qt 6.4's
    // QFuture::then(context) asserts when its context dies first).
    auto *watcher = new QFutureWatcher<Result<CapsuleResult>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, shared] {
        watcher->deleteLater();
        if (m_shared != shared) return;
        m_running = false;
        // A cancel that came after the zip was complete is too late: the result stands.
        // result(), not takeResult(): taking resets the shared state, and the destructor's
        // waitForFinished() on m_shared->future would then wait for ever.
        m_result = watcher->future().result();
        Q_EMIT finished();
    });
    watcher->setFuture(built);
}

void CapsuleBuilder::cancel()
{
    if (m_shared) m_shared->cancelled = true;
}

Result<CapsuleListing> listCapsuleTree(const CapsuleOptions &options)
{
    CapsuleListing listing;
    ScanState scan;
    scan.listing = &listing.entries;
    CapsuleOptions walked = options;
    // Nothing is written; the walk only needs a name outside the tree to skip.
    if (walked.outputPath.isEmpty()) walked.outputPath = QDir::temp().filePath(QStringLiteral("starforge-listing.zip"));
    if (Result<void> done = walkTree(walked, nullptr, [](CapsuleProgress::Stage, qint64, qint64, qint64, qint64) {}, scan); !done) {
        return done.error();
    }
    for (const Entry &e : scan.files) listing.bytes += e.size;
    listing.bytes += options.runnerPexPath.isEmpty() ? options.runnerPex.size() : QFileInfo(options.runnerPexPath).size();
    listing.fileCount = static_cast<int>(scan.files.size()) + 3;   // + jobspec.json, runner.pex, manifest.json
    listing.skipped = scan.skipped;
    return listing;
}

QString temporaryCapsuleFolderTemplate()
{
    return QDir::tempPath() + QStringLiteral("/starforge-capsule-XXXXXX");
}

} // namespace Starforge::Job
