#include "core/job/zipwriter.h"

#include <QCoreApplication>
#include <QFile>
#include <QFuture>
#include <QIODevice>
#include <QThreadPool>
#include <QtConcurrent>

#include <algorithm>
#include <deque>
#include <optional>

#include <zlib.h>

namespace Starforge::Job {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(ZipWriter)
};

// DOS date 1980-01-02, time 00:00:00: a constant written directly, never converted through a
// time zone. Not 1980-01-01 so that a reader converting it to a zone west of UTC stays >= 1980.
constexpr quint16 DosDate = (0 << 9) | (1 << 5) | 2;
constexpr quint16 DosTime = 0;
constexpr quint16 FlagUtf8 = 0x0800;

// Little-endian fields, as every zip structure stores them.
void put16(QByteArray &b, quint32 v)
{
    b.append(static_cast<char>(v & 0xff));
    b.append(static_cast<char>((v >> 8) & 0xff));
}
void put32(QByteArray &b, quint32 v)
{
    put16(b, v & 0xffff);
    put16(b, v >> 16);
}
void put64(QByteArray &b, qint64 v)
{
    put32(b, static_cast<quint32>(static_cast<quint64>(v) & 0xffffffffu));
    put32(b, static_cast<quint32>(static_cast<quint64>(v) >> 32));
}


// One block of an entry's raw deflate stream, primed with `dictionary` (the previous block's
// last 32 KiB) and ended with a sync flush, or with the final block when `last`: such blocks,
// deflated independently, concatenate into one valid stream, as pigz does.
Result<QByteArray> deflateBlock(const QByteArray &dictionary, const QByteArray &input, bool last, int level, const QString &entryName)
{
    z_stream zs {};
    if (deflateInit2(&zs, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        return Error::internal(Text::tr("zlib could not start a deflate stream."));
    }
    if (!dictionary.isEmpty()) {
        deflateSetDictionary(&zs, reinterpret_cast<const Bytef *>(dictionary.constData()), static_cast<uInt>(dictionary.size()));
    }
    QByteArray data;
    data.resize(static_cast<qsizetype>(deflateBound(&zs, static_cast<uLong>(input.size()))) + 64);
    // zlib does not write through next_in; its type lacks const only without ZLIB_CONST.
    zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(input.constData()));
    zs.avail_in = static_cast<uInt>(input.size());
    qsizetype produced = 0;
    for (;;) {
        zs.next_out = reinterpret_cast<Bytef *>(data.data() + produced);
        zs.avail_out = static_cast<uInt>(data.size() - produced);
        const int rc = deflate(&zs, last ? Z_FINISH : Z_SYNC_FLUSH);
        produced = data.size() - static_cast<qsizetype>(zs.avail_out);
        if (rc == Z_STREAM_ERROR) {
            deflateEnd(&zs);
            return Error::internal(Text::tr("zlib failed while deflating %1.").arg(entryName));
        }
        const bool done = last ? rc == Z_STREAM_END : (zs.avail_in == 0 && zs.avail_out > 0);
        if (done) break;
        data.resize(data.size() * 2);
    }
    deflateEnd(&zs);
    data.resize(produced);
    return data;
}

// One block of one entry, read and (unless stored) deflated on a worker thread.
struct Block
{
    QByteArray data;
    quint32 crc = 0;
    qint64 inputSize = 0;
    bool stored = false;
    std::optional<Error> error;
};

Error changedError(const ZipWriter::Entry &e)
{
    return Error::io(Text::tr("%1 changed while the capsule was being built. Build it again.").arg(e.displayName));
}

Block readBlock(const ZipWriter::Entry &e, qint64 offset, qint64 length, bool last, bool singleBlock, int level)
{
    Block b;
    b.inputSize = length;
    QByteArray dictionary;
    QByteArray input;
    const bool deflating = !e.store;
    const qint64 dictStart = deflating ? std::max<qint64>(0, offset - ZipWriter::DictionarySize) : offset;
    if (!e.sourcePath.isEmpty()) {
        QFile file(QFile::decodeName(e.sourcePath));
        if (!file.open(QIODevice::ReadOnly) || !file.seek(dictStart)) {
            b.error = Error::io(Text::tr("Cannot read %1: %2.").arg(e.displayName, file.errorString()));
            return b;
        }
        const QByteArray all = file.read(offset - dictStart + length);
        if (all.size() != offset - dictStart + length) {
            b.error = changedError(e);
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
    Result<QByteArray> deflated = deflateBlock(dictionary, input, last, level, e.displayName);
    if (!deflated) {
        b.error = deflated.error();
        return b;
    }
    b.data = std::move(deflated).value();
    if (singleBlock && b.data.size() >= input.size()) {
        // Deflate did not help: store it (decided by content alone, so still deterministic).
        b.data = input;
        b.stored = true;
    }
    return b;
}

struct BlockTask
{
    size_t entry;
    qint64 offset;
    qint64 length;
    bool last;
    bool single;
};

std::vector<BlockTask> planBlocks(const std::vector<ZipWriter::Entry> &entries)
{
    std::vector<BlockTask> tasks;
    for (size_t i = 0; i < entries.size(); ++i) {
        const ZipWriter::Entry &e = entries[i];
        if (e.kind == ZipWriter::Kind::Folder || e.size == 0) continue;
        const qint64 blocks = (e.size + ZipWriter::BlockSize - 1) / ZipWriter::BlockSize;
        for (qint64 b = 0; b < blocks; ++b) {
            const qint64 offset = b * ZipWriter::BlockSize;
            tasks.push_back({i, offset, std::min(ZipWriter::BlockSize, e.size - offset), b == blocks - 1, blocks == 1});
        }
    }
    return tasks;
}

} // namespace

// Every block of every entry, read and deflated on the pool up to a window ahead of the writer,
// handed back in order.
class ZipWriter::BlockPipeline
{
public:
    BlockPipeline(const std::vector<Entry> &entries, const Workers &workers)
        : m_entries(entries), m_tasks(planBlocks(entries)), m_workers(workers)
    {
        fill();
    }
    // Blocks still running read the entries: wait for them however the writing ends.
    ~BlockPipeline() { drain(); }
    BlockPipeline(const BlockPipeline &) = delete;
    BlockPipeline &operator=(const BlockPipeline &) = delete;

    Block take()
    {
        fill();
        Block b = m_inFlight.front().result();
        m_inFlight.pop_front();
        fill();
        return b;
    }
    void drain()
    {
        for (auto &f : m_inFlight) f.waitForFinished();
        m_inFlight.clear();
    }

private:
    void fill()
    {
        while (m_next < m_tasks.size() && static_cast<qsizetype>(m_inFlight.size()) < m_workers.window) {
            const BlockTask t = m_tasks[m_next++];
            const Entry *e = &m_entries[t.entry];
            m_inFlight.push_back(QtConcurrent::run(m_workers.pool, [e, t, level = m_workers.level] {
                return readBlock(*e, t.offset, t.length, t.last, t.single, level);
            }));
        }
    }

    const std::vector<Entry> &m_entries;
    const std::vector<BlockTask> m_tasks;
    const Workers &m_workers;
    size_t m_next = 0;
    std::deque<QFuture<Block>> m_inFlight;
};

Result<void> ZipWriter::writeEntries(const std::vector<Entry> &entries, const Workers &workers,
                                     const std::function<void(qint64 filesDone, qint64 bytesDone)> &progress)
{
    const auto isCancelled = [&] { return workers.cancelled && workers.cancelled->load(); };
    BlockPipeline blocks(entries, workers);
    qint64 bytesDone = 0;
    qint64 filesDone = 0;
    for (const Entry &e : entries) {
        if (e.kind == Kind::Folder || e.size == 0) {
            if (!beginEntry(e.name, e.kind, true, false) || !finishEntry(0, 0, 0)) return writeError();
            if (e.kind != Kind::Folder) ++filesDone;
            continue;
        }
        bool begun = false;
        qint64 compressed = 0;
        qint64 seen = 0;
        uLong crc = crc32(0L, Z_NULL, 0);
        while (seen < e.size) {
            Block b = blocks.take();
            if (isCancelled()) {
                return workers.cancelledError;
            }
            if (b.error) {
                return *b.error;
            }
            // The method is the first block's: a single block that deflate cannot shrink is stored.
            if (!begun && !beginEntry(e.name, e.kind, b.stored, e.size >= Zip64EntrySize)) return writeError();
            begun = true;
            if (!write(b.data)) return writeError();
            compressed += b.data.size();
            crc = crc32_combine(crc, b.crc, static_cast<z_off_t>(b.inputSize));
            seen += b.inputSize;
            bytesDone += b.inputSize;
            if (progress) progress(filesDone, bytesDone);
        }
        // The CRC taken when the entry was first read against the one of the bytes written: a
        // file that changed in between would not match what the caller made of its content.
        if (static_cast<quint32>(crc) != e.crc) {
            return changedError(e);
        }
        if (!finishEntry(static_cast<quint32>(crc), compressed, e.size)) return writeError();
        ++filesDone;
    }
    return {};
}

Error ZipWriter::writeError() const
{
    return Error::io(Text::tr("Cannot write the capsule to %1: %2.").arg(m_path, m_file.errorString()));
}

bool ZipWriter::write(const QByteArray &bytes)
{
    if (bytes.isEmpty()) return true;
    if (m_file.write(bytes) != bytes.size()) return false;
    m_offset += bytes.size();
    return true;
}

bool ZipWriter::beginEntry(const QByteArray &name, Kind kind, bool stored, bool zip64)
{
    m_current = {};
    m_current.name = name;
    m_current.offset = m_offset;
    m_current.method = stored ? 0 : 8;
    m_current.zip64 = zip64;
    m_current.mode = kind == Kind::Folder ? 040755 : (kind == Kind::Executable ? 0100755 : 0100644);
    m_current.isDir = kind == Kind::Folder;
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
    put16(h, static_cast<quint16>(name.size()));
    put16(h, zip64 ? 20 : 0);
    h += name;
    if (zip64) {
        put16(h, 0x0001);
        put16(h, 16);
        put64(h, 0);
        put64(h, 0);
    }
    m_current.headerSize = h.size();
    return write(h);
}

bool ZipWriter::finishEntry(quint32 crc, qint64 compressed, qint64 uncompressed)
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

bool ZipWriter::finishArchive()
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

} // namespace Starforge::Job
