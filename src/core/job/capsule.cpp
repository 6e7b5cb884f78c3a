#include "core/job/capsule.h"

#include "core/crypto/digest.h"
#include "core/job/ignorerules.h"

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
#include <map>
#include <set>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

namespace Starforge::Job {

Q_LOGGING_CATEGORY(lcCapsule, "starforge.core.capsule")

namespace {

constexpr qint64 BlockSize = 1024 * 1024;   // deflated independently, in parallel
constexpr qint64 DictionarySize = 32 * 1024; // the previous block's tail primes each block
constexpr qint64 ProbeSize = 64 * 1024;
constexpr qint64 ProbeMinSize = 8 * 1024;
// Order-0 entropy (bits per byte) above which a sample is taken as already compressed or random:
// text is near 4.5-5.5, float tensors near 7-7.6, deflate/PNG/JPEG output above 7.95.
constexpr double StoreEntropy = 7.9;
constexpr quint32 Zip64Threshold = 0xff000000u; // leave room for deflate's worst-case growth
// DOS date 1980-01-02, time 00:00:00: a constant written directly, never converted through a
// time zone. Not 1980-01-01 so that a reader converting it to a zone west of UTC stays >= 1980.
constexpr quint16 DosDate = (0 << 9) | (1 << 5) | 2;
constexpr quint16 DosTime = 0;
constexpr quint16 FlagUtf8 = 0x0800;

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
    return Error::unavailable(QStringLiteral("The capsule build was cancelled."));
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
        return Error::io(QStringLiteral("Cannot list the folder %1: %2. Make it readable or exclude it.")
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
            return Error::io(QStringLiteral("Cannot read %1: %2.").arg(display(rel), QString::fromLocal8Bit(std::strerror(err))));
        }
        const bool isDir = S_ISDIR(st.st_mode);
        if (isDir && IgnoreRules::isVersionControlDir(name)) continue;
        if (state.rules.isExcluded(rel, isDir)) continue;
        if (abs == state.outputPath) continue;  // a rebuild over an earlier capsule inside the tree
        if (!isUtf8(rel)) {
            return Error::invalid(QStringLiteral("The name \"%1\" is not valid UTF-8, and zip readers would garble it. "
                                                 "Rename it or add it to the exclude patterns.")
                                      .arg(escaped(rel)));
        }
        if (relDir.isEmpty() && !isDir) {
            for (const char *generated : GeneratedNames) {
                if (name == generated) {
                    return Error::invalid(QStringLiteral("The code folder has its own %1 at its top, where the capsule puts the "
                                                         "job's. Rename it or add \"/%1\" to the exclude patterns.")
                                              .arg(QLatin1String(generated)));
                }
            }
        }
        if (isDir) {
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
                    return Error::invalid(QStringLiteral("The symbolic link %1 (-> %2) is part of a loop. Fix the link or exclude it.")
                                              .arg(display(rel), to));
                }
                return Error::invalid(QStringLiteral("The symbolic link %1 points to %2, which does not exist. Fix the link or "
                                                     "exclude it.")
                                          .arg(display(rel), to));
            }
            source = QByteArray(resolved);
            if (!source.startsWith(QByteArray(state.root + '/'))) {
                return Error::invalid(QStringLiteral("The symbolic link %1 points outside the code folder (to %2), and the cluster "
                                                     "cannot follow it. Copy the file into the folder or exclude the link.")
                                          .arg(display(rel), QFile::decodeName(source)));
            }
            if (::stat(source.constData(), &st) != 0) {
                const int err = errno;
                return Error::io(QStringLiteral("Cannot read %1: %2.").arg(display(rel), QString::fromLocal8Bit(std::strerror(err))));
            }
            if (S_ISDIR(st.st_mode)) {
                return Error::unsupported(QStringLiteral("The symbolic link %1 points to a folder; the capsule packs links to files "
                                                         "only, as copies. Replace the link with the folder or exclude it.")
                                              .arg(display(rel)));
            }
        }
        if (!S_ISREG(st.st_mode)) {
            const char *kind = S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISSOCK(st.st_mode) ? "a socket" : "a device";
            state.skipped.append(QStringLiteral("%1: %2, not packed").arg(display(rel), QLatin1String(kind)));
            continue;
        }
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
            e.error = Error::io(QStringLiteral("Cannot read %1: %2. Make it readable or exclude it.")
                                    .arg(display(e.relative), file.errorString()));
            return;
        }
        QByteArray block(BlockSize, Qt::Uninitialized);
        qint64 total = 0;
        for (;;) {
            if (cancelled && cancelled->load()) return;
            const qint64 n = file.read(block.data(), block.size());
            if (n < 0) {
                e.error = Error::io(QStringLiteral("Cannot read %1: %2. Make it readable or exclude it.")
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

// One block of one entry, read and (unless stored) deflated on a worker thread. A block is a
// raw deflate stream ended with a sync flush (the last one with a final block) and primed with
// the previous 32 KiB, so the blocks concatenate into one valid stream, as pigz does.
struct Block
{
    QByteArray data;
    quint32 crc = 0;
    qint64 inputSize = 0;
    bool stored = false;
    QByteArray input;             // kept for a single-block entry that falls back to storing
    std::optional<Error> error;
};

Block makeBlock(const Entry &e, qint64 offset, qint64 length, bool last, bool singleBlock, int level)
{
    Block b;
    b.inputSize = length;
    QByteArray dictionary;
    QByteArray input;
    const bool deflating = !e.store;
    const qint64 dictStart = deflating ? std::max<qint64>(0, offset - DictionarySize) : offset;
    if (!e.sourcePath.isEmpty()) {
        QFile file(QFile::decodeName(e.sourcePath));
        if (!file.open(QIODevice::ReadOnly) || !file.seek(dictStart)) {
            b.error = Error::io(QStringLiteral("Cannot read %1: %2.").arg(display(e.relative), file.errorString()));
            return b;
        }
        const QByteArray all = file.read(offset - dictStart + length);
        if (all.size() != offset - dictStart + length) {
            b.error = Error::io(QStringLiteral("%1 changed while the capsule was being built. Build it again.").arg(display(e.relative)));
            return b;
        }
        dictionary = all.left(offset - dictStart);
        input = all.mid(offset - dictStart);
    } else {
        dictionary = e.memory.mid(dictStart, offset - dictStart);
        input = e.memory.mid(offset, length);
    }
    b.crc = static_cast<quint32>(crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef *>(input.constData()),
                                       static_cast<uInt>(input.size())));
    if (!deflating) {
        b.data = input;
        b.stored = true;
        return b;
    }
    z_stream zs {};
    if (deflateInit2(&zs, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        b.error = Error::internal(QStringLiteral("zlib could not start a deflate stream."));
        return b;
    }
    if (!dictionary.isEmpty()) {
        deflateSetDictionary(&zs, reinterpret_cast<const Bytef *>(dictionary.constData()), static_cast<uInt>(dictionary.size()));
    }
    b.data.resize(static_cast<qsizetype>(deflateBound(&zs, static_cast<uLong>(length))) + 64);
    zs.next_in = reinterpret_cast<Bytef *>(input.data());
    zs.avail_in = static_cast<uInt>(input.size());
    qsizetype produced = 0;
    for (;;) {
        zs.next_out = reinterpret_cast<Bytef *>(b.data.data() + produced);
        zs.avail_out = static_cast<uInt>(b.data.size() - produced);
        const int rc = deflate(&zs, last ? Z_FINISH : Z_SYNC_FLUSH);
        produced = b.data.size() - static_cast<qsizetype>(zs.avail_out);
        if (rc == Z_STREAM_ERROR) {
            deflateEnd(&zs);
            b.error = Error::internal(QStringLiteral("zlib failed while deflating %1.").arg(display(e.relative)));
            return b;
        }
        const bool done = last ? rc == Z_STREAM_END : (zs.avail_in == 0 && zs.avail_out > 0);
        if (done) break;
        b.data.resize(b.data.size() * 2);
    }
    deflateEnd(&zs);
    b.data.resize(produced);
    if (singleBlock && b.data.size() >= input.size()) {
        // Deflate did not help: store it (decided by content alone, so still deterministic).
        b.data = input;
        b.stored = true;
    }
    return b;
}

// The zip container, written by hand: libarchive deflates inside archive_write_data() on the
// calling thread and converts the date through the local time zone (docs/capsule.md).
class ZipWriter
{
public:
    explicit ZipWriter(QSaveFile &file) : m_file(file) {}

    bool write(const QByteArray &bytes)
    {
        if (bytes.isEmpty()) return true;
        if (m_file.write(bytes) != bytes.size()) return false;
        m_offset += bytes.size();
        return true;
    }

    // The local header; sizes and CRC are patched by finishEntry() when not known yet.
    bool beginEntry(const Entry &e, bool stored, bool zip64)
    {
        m_current = {};
        m_current.name = e.name;
        m_current.offset = m_offset;
        m_current.method = stored ? 0 : 8;
        m_current.zip64 = zip64;
        m_current.mode = e.isDir ? 040755 : (e.executable ? 0100755 : 0100644);
        m_current.isDir = e.isDir;
        QByteArray h;
        put32(h, 0x04034b50);
        put16(h, zip64 ? 45 : 20);
        put16(h, FlagUtf8);
        put16(h, m_current.method);
        put16(h, DosTime);
        put16(h, DosDate);
        put32(h, 0);                              // CRC-32, patched
        put32(h, zip64 ? 0xffffffffu : 0);        // compressed size, patched
        put32(h, zip64 ? 0xffffffffu : 0);        // uncompressed size, patched
        put16(h, static_cast<quint16>(e.name.size()));
        put16(h, zip64 ? 20 : 0);
        h += e.name;
        if (zip64) {
            put16(h, 0x0001);
            put16(h, 16);
            put64(h, 0);
            put64(h, 0);
        }
        m_current.headerSize = h.size();
        return write(h);
    }

    bool finishEntry(quint32 crc, qint64 compressed, qint64 uncompressed)
    {
        m_current.crc = crc;
        m_current.compressed = compressed;
        m_current.uncompressed = uncompressed;
        QByteArray patch;
        put32(patch, crc);
        put32(patch, m_current.zip64 ? 0xffffffffu : static_cast<quint32>(compressed));
        put32(patch, m_current.zip64 ? 0xffffffffu : static_cast<quint32>(uncompressed));
        const qint64 end = m_offset;
        if (!m_file.seek(m_current.offset + 14) || m_file.write(patch) != patch.size()) return false;
        if (m_current.zip64) {
            QByteArray sizes;
            put64(sizes, uncompressed);
            put64(sizes, compressed);
            if (!m_file.seek(m_current.offset + 30 + m_current.name.size() + 4) || m_file.write(sizes) != sizes.size()) return false;
        }
        if (!m_file.seek(end)) return false;
        m_entries.push_back(m_current);
        return true;
    }

    bool finishArchive()
    {
        const qint64 cdOffset = m_offset;
        QByteArray cd;
        for (const Central &c : m_entries) {
            const bool bigOffset = c.offset >= 0xffffffffLL;
            QByteArray extra;
            if (c.zip64 || bigOffset) {
                QByteArray fields;
                if (c.zip64) {
                    put64(fields, c.uncompressed);
                    put64(fields, c.compressed);
                }
                if (bigOffset) put64(fields, c.offset);
                put16(extra, 0x0001);
                put16(extra, static_cast<quint16>(fields.size()));
                extra += fields;
            }
            const quint16 version = (c.zip64 || bigOffset) ? 45 : 20;
            put32(cd, 0x02014b50);
            put16(cd, 0x0300 | version);          // made by: Unix, so readers honour the mode bits
            put16(cd, version);
            put16(cd, FlagUtf8);
            put16(cd, c.method);
            put16(cd, DosTime);
            put16(cd, DosDate);
            put32(cd, c.crc);
            put32(cd, c.zip64 ? 0xffffffffu : static_cast<quint32>(c.compressed));
            put32(cd, c.zip64 ? 0xffffffffu : static_cast<quint32>(c.uncompressed));
            put16(cd, static_cast<quint16>(c.name.size()));
            put16(cd, static_cast<quint16>(extra.size()));
            put16(cd, 0);                         // comment
            put16(cd, 0);                         // disk
            put16(cd, 0);                         // internal attributes
            put32(cd, (static_cast<quint32>(c.mode) << 16) | (c.isDir ? 0x10u : 0u));
            put32(cd, bigOffset ? 0xffffffffu : static_cast<quint32>(c.offset));
            cd += c.name;
            cd += extra;
            if (cd.size() > 4 * 1024 * 1024) {
                if (!write(cd)) return false;
                cd.clear();
            }
        }
        if (!write(cd)) return false;
        const qint64 cdSize = m_offset - cdOffset;
        const qint64 count = static_cast<qint64>(m_entries.size());
        const bool zip64 = count >= 0xffff || cdOffset >= 0xffffffffLL || cdSize >= 0xffffffffLL;
        QByteArray tail;
        if (zip64) {
            const qint64 eocd64 = m_offset;
            put32(tail, 0x06064b50);
            put64(tail, 44);
            put16(tail, 0x0300 | 45);
            put16(tail, 45);
            put32(tail, 0);
            put32(tail, 0);
            put64(tail, count);
            put64(tail, count);
            put64(tail, cdSize);
            put64(tail, cdOffset);
            put32(tail, 0x07064b50);
            put32(tail, 0);
            put64(tail, eocd64);
            put32(tail, 1);
        }
        put32(tail, 0x06054b50);
        put16(tail, 0);
        put16(tail, 0);
        put16(tail, zip64 ? 0xffff : static_cast<quint16>(count));
        put16(tail, zip64 ? 0xffff : static_cast<quint16>(count));
        put32(tail, zip64 ? 0xffffffffu : static_cast<quint32>(cdSize));
        put32(tail, zip64 ? 0xffffffffu : static_cast<quint32>(cdOffset));
        put16(tail, 0);
        return write(tail);
    }

private:
    struct Central
    {
        QByteArray name;
        qint64 offset = 0;
        qint64 headerSize = 0;
        quint16 method = 0;
        bool zip64 = false;
        bool isDir = false;
        int mode = 0;
        quint32 crc = 0;
        qint64 compressed = 0;
        qint64 uncompressed = 0;
    };

    static void put16(QByteArray &b, quint32 v)
    {
        b.append(static_cast<char>(v & 0xff));
        b.append(static_cast<char>((v >> 8) & 0xff));
    }
    static void put32(QByteArray &b, quint32 v)
    {
        put16(b, v & 0xffff);
        put16(b, v >> 16);
    }
    static void put64(QByteArray &b, qint64 v)
    {
        put32(b, static_cast<quint32>(static_cast<quint64>(v) & 0xffffffffu));
        put32(b, static_cast<quint32>(static_cast<quint64>(v) >> 32));
    }

    QSaveFile &m_file;
    qint64 m_offset = 0;
    Central m_current;
    std::vector<Central> m_entries;
};

QByteArray manifestJson(const std::vector<Entry> &files)
{
    // QJsonObject keeps keys sorted and QJsonDocument's indented form is stable, so equal
    // inputs give equal bytes.
    QJsonArray list;
    for (const Entry &e : files) {
        list.append(QJsonObject {
            {QStringLiteral("path"), QString::fromUtf8(e.relative)},
            {QStringLiteral("sha256"), QString::fromLatin1(e.sha256.toHex())},
            {QStringLiteral("size"), static_cast<double>(e.size)},
        });
    }
    return QJsonDocument(QJsonObject {{QStringLiteral("files"), list}, {QStringLiteral("format"), QStringLiteral("starforge-capsule/1")}})
        .toJson(QJsonDocument::Indented);
}

Result<void> validate(const CapsuleOptions &o)
{
    if (o.jobSpecJson.isEmpty()) return Error::invalid(QStringLiteral("The capsule needs the job's jobspec.json; none was given."));
    if (o.runnerPexPath.isEmpty() && o.runnerPex.isEmpty()) return Error::invalid(QStringLiteral("The capsule needs runner.pex; none was given."));
    if (o.topLevelDir.isEmpty() || o.topLevelDir.contains(u'/') || o.topLevelDir.contains(u'\\') || o.topLevelDir == QStringLiteral(".")
        || o.topLevelDir == QStringLiteral("..")) {
        return Error::invalid(QStringLiteral("The capsule's top-level folder \"%1\" must be one plain name, such as \"capsule\".").arg(o.topLevelDir));
    }
    if (o.compressionLevel < 1 || o.compressionLevel > 9) return Error::invalid(QStringLiteral("The compression level must be 1 to 9."));
    if (o.outputPath.isEmpty()) return Error::invalid(QStringLiteral("No output path was given for the capsule."));
    return {};
}

} // namespace

Result<CapsuleResult> CapsuleBuilder::build(const CapsuleOptions &options, const std::atomic_bool *cancelled,
                                            const std::function<void(const CapsuleProgress &)> &progress)
{
    if (Result<void> v = validate(options); !v) return v.error();
    const auto isCancelled = [cancelled] { return cancelled && cancelled->load(); };
    const auto report = [&progress](CapsuleProgress::Stage stage, qint64 filesDone, qint64 filesTotal, qint64 bytesDone, qint64 bytesTotal) {
        if (progress) progress({stage, filesDone, filesTotal, bytesDone, bytesTotal});
    };

    // --- Scan: the tree in order, with excludes, links and odd files settled.
    char resolvedRoot[PATH_MAX];
    if (!::realpath(QFile::encodeName(options.sourceDir).constData(), resolvedRoot)) {
        return Error::notFound(QStringLiteral("The code folder %1 does not exist.").arg(options.sourceDir));
    }
    ScanState scan;
    scan.root = QByteArray(resolvedRoot);
    struct stat rootStat {};
    if (::stat(scan.root.constData(), &rootStat) != 0 || !S_ISDIR(rootStat.st_mode)) {
        return Error::invalid(QStringLiteral("%1 is not a folder.").arg(options.sourceDir));
    }
    const QFileInfo outInfo(options.outputPath);
    char resolvedOutDir[PATH_MAX];
    if (!::realpath(QFile::encodeName(outInfo.absolutePath()).constData(), resolvedOutDir)) {
        return Error::notFound(QStringLiteral("The folder for the capsule, %1, does not exist.").arg(outInfo.absolutePath()));
    }
    scan.outputPath = QByteArray(resolvedOutDir) + '/' + QFile::encodeName(outInfo.fileName());
    scan.useGitIgnore = options.useGitIgnore;
    scan.cancelled = cancelled;
    if (options.useDefaultExcludes) {
        for (const QByteArray &p : IgnoreRules::defaultPatterns()) scan.rules.addPattern(p, {}, IgnoreRules::Layer::Default);
    }
    for (const QString &p : options.excludePatterns) scan.rules.addPattern(p.toUtf8(), {}, IgnoreRules::Layer::User);
    report(CapsuleProgress::Stage::Scanning, 0, 0, 0, 0);
    if (Result<void> r = scanDir(scan, {}); !r) return r.error();

    std::vector<Entry> files = std::move(scan.files);
    {
        Entry jobspec;
        jobspec.relative = "jobspec.json";
        jobspec.memory = options.jobSpecJson;
        files.push_back(std::move(jobspec));
        Entry runner;
        runner.relative = "runner.pex";
        if (!options.runnerPexPath.isEmpty()) {
            const QFileInfo info(options.runnerPexPath);
            if (!info.isFile()) return Error::notFound(QStringLiteral("runner.pex was not found at %1.").arg(options.runnerPexPath));
            runner.sourcePath = QFile::encodeName(info.absoluteFilePath());
            runner.size = info.size();
        } else {
            runner.memory = options.runnerPex;
        }
        files.push_back(std::move(runner));
    }
    const QByteArray top = options.topLevelDir.toUtf8();
    for (Entry &e : files) {
        e.name = top + '/' + e.relative;
        e.store = isCompressedType(e.relative);
    }
    std::sort(files.begin(), files.end(), [](const Entry &a, const Entry &b) { return a.name < b.name; });

    const int threads = options.threads > 0 ? options.threads : std::max(1, QThread::idealThreadCount());
    QThreadPool pool;
    pool.setMaxThreadCount(threads);
    const qsizetype window = 4 * threads;

    // --- Hash: every file once, in parallel, results taken in order.
    qint64 bytesTotal = 0;
    for (const Entry &e : files) bytesTotal += e.size;
    {
        std::deque<QFuture<void>> inFlight;
        qsizetype next = 0;
        qsizetype done = 0;
        qint64 bytesDone = 0;
        report(CapsuleProgress::Stage::Hashing, 0, static_cast<qint64>(files.size()), 0, bytesTotal);
        while (done < static_cast<qsizetype>(files.size())) {
            while (next < static_cast<qsizetype>(files.size()) && static_cast<qsizetype>(inFlight.size()) < window) {
                Entry *e = &files[static_cast<size_t>(next++)];
                inFlight.push_back(QtConcurrent::run(&pool, [e, cancelled] { hashEntry(*e, cancelled); }));
            }
            inFlight.front().waitForFinished();
            inFlight.pop_front();
            const Entry &e = files[static_cast<size_t>(done++)];
            bytesDone += e.size;
            if (isCancelled()) {
                for (auto &f : inFlight) f.waitForFinished();
                return cancelledError();
            }
            if (e.error) {
                for (auto &f : inFlight) f.waitForFinished();
                return *e.error;
            }
            report(CapsuleProgress::Stage::Hashing, done, static_cast<qint64>(files.size()), bytesDone, bytesTotal);
        }
    }

    // --- Manifest and the full entry list: files, generated entries, folders.
    CapsuleResult result;
    {
        result.manifestJson = manifestJson(files);
        for (const Entry &e : files) {
            result.files.append(CapsuleFile {QString::fromUtf8(e.relative), e.size, e.sha256.toHex(), e.executable, e.store});
        }
    }
    {
        Entry manifest;
        manifest.relative = "manifest.json";
        manifest.name = top + "/manifest.json";
        manifest.memory = result.manifestJson;
        hashEntry(manifest, nullptr);
        files.push_back(std::move(manifest));
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

    // --- Write: blocks deflated in parallel, a window ahead of the writer, written in order.
    QSaveFile out(options.outputPath);
    out.setDirectWriteFallback(false);
    if (!out.open(QIODevice::WriteOnly)) {
        return Error::io(QStringLiteral("Cannot write the capsule to %1: %2.").arg(options.outputPath, out.errorString()));
    }
    const auto writeError = [&] {
        return Error::io(QStringLiteral("Cannot write the capsule to %1: %2.").arg(options.outputPath, out.errorString()));
    };
    ZipWriter zip(out);
    struct Task
    {
        size_t entry;
        qint64 offset;
        qint64 length;
        bool last;
        bool single;
    };
    std::vector<Task> tasks;
    for (size_t i = 0; i < files.size(); ++i) {
        const Entry &e = files[i];
        if (e.isDir || e.size == 0) continue;
        const qint64 blocks = (e.size + BlockSize - 1) / BlockSize;
        for (qint64 b = 0; b < blocks; ++b) {
            const qint64 offset = b * BlockSize;
            tasks.push_back({i, offset, std::min(BlockSize, e.size - offset), b == blocks - 1, blocks == 1});
        }
    }
    std::deque<QFuture<Block>> inFlight;
    size_t nextTask = 0;
    const auto fill = [&] {
        while (nextTask < tasks.size() && static_cast<qsizetype>(inFlight.size()) < window) {
            const Task t = tasks[nextTask++];
            const Entry *e = &files[t.entry];
            const int level = options.compressionLevel;
            inFlight.push_back(QtConcurrent::run(&pool, [e, t, level] { return makeBlock(*e, t.offset, t.length, t.last, t.single, level); }));
        }
    };
    const auto drain = [&] {
        for (auto &f : inFlight) f.waitForFinished();
        inFlight.clear();
    };
    qint64 bytesDone = 0;
    qint64 filesDone = 0;
    const qint64 fileCount = static_cast<qint64>(std::count_if(files.begin(), files.end(), [](const Entry &e) { return !e.isDir; }));
    report(CapsuleProgress::Stage::Writing, 0, fileCount, 0, bytesTotal + result.manifestJson.size());
    fill();
    for (size_t i = 0; i < files.size(); ++i) {
        Entry &e = files[i];
        if (e.isDir || e.size == 0) {
            if (!zip.beginEntry(e, true, false) || !zip.finishEntry(0, 0, 0)) return writeError();
            if (!e.isDir) ++filesDone;
            continue;
        }
        const bool zip64 = e.size >= Zip64Threshold;
        bool begun = false;
        qint64 compressed = 0;
        qint64 seen = 0;
        uLong crc = crc32(0L, Z_NULL, 0);
        for (;;) {
            fill();
            Block b = inFlight.front().result();
            inFlight.pop_front();
            fill();
            if (isCancelled()) {
                drain();
                out.cancelWriting();
                return cancelledError();
            }
            if (b.error) {
                drain();
                out.cancelWriting();
                return *b.error;
            }
            if (!begun) {
                if (!zip.beginEntry(e, b.stored, zip64)) return writeError();
                begun = true;
            }
            if (!zip.write(b.data)) return writeError();
            compressed += b.data.size();
            crc = crc32_combine(crc, b.crc, static_cast<z_off_t>(b.inputSize));
            seen += b.inputSize;
            bytesDone += b.inputSize;
            report(CapsuleProgress::Stage::Writing, filesDone, fileCount, bytesDone, bytesTotal + result.manifestJson.size());
            if (seen >= e.size) break;
        }
        if (static_cast<quint32>(crc) != e.crc) {
            drain();
            out.cancelWriting();
            return Error::io(QStringLiteral("%1 changed while the capsule was being built. Build it again.").arg(display(e.relative)));
        }
        if (!zip.finishEntry(static_cast<quint32>(crc), compressed, e.size)) return writeError();
        ++filesDone;
    }
    if (!zip.finishArchive()) return writeError();
    if (!out.commit()) return writeError();
    report(CapsuleProgress::Stage::Writing, filesDone, fileCount, bytesDone, bytesDone);

    Result<QByteArray> sha = Crypto::Digest::sha256File(options.outputPath);
    if (!sha) return sha.error();
    result.zipPath = options.outputPath;
    result.sha256 = sha->toHex();
    result.size = QFileInfo(options.outputPath).size();
    result.fileCount = static_cast<int>(fileCount);
    result.skipped = scan.skipped;
    for (const QString &s : std::as_const(result.skipped)) qCInfo(lcCapsule, "skipped %s", qPrintable(s));
    return result;
}

struct CapsuleBuilder::Shared
{
    std::atomic_bool cancelled {false};
    QFuture<void> future;
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
    m_shared->future = QtConcurrent::run([shared, options, self] {
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
        Result<CapsuleResult> r = build(options, &shared->cancelled, onProgress);
        QMetaObject::invokeMethod(self.data(), [self, r = std::move(r), shared] {
            if (!self || self->m_shared != shared) return;
            self->m_running = false;
            // A cancel that came after the zip was complete is too late: the result stands.
            self->m_result = r;
            Q_EMIT self->finished();
        }, Qt::QueuedConnection);
    });
}

void CapsuleBuilder::cancel()
{
    if (m_shared) m_shared->cancelled = true;
}

} // namespace Starforge::Job
