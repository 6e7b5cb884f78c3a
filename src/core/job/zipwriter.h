#pragma once

// The Capsule's zip container, written by hand rather than with libarchive, which deflates
// inside archive_write_data() on the calling thread and converts the date through the local
// time zone (docs/capsule.md). Every byte here is fixed by the entries' names, kinds and
// content: a constant DOS date, UTF-8 names, Unix modes, zip64 only where sizes or offsets need
// it, and deflate in 1 MiB blocks whose boundaries depend on the content alone, never on the
// thread count.
//
// writeEntries() reads and deflates the blocks on a thread pool, a window ahead of the one
// thread that writes them in order; the low-level calls (beginEntry … finishArchive) write the
// container itself.

#include "core/util/result.h"

#include <QByteArray>
#include <QString>

#include <atomic>
#include <functional>
#include <utility>
#include <vector>

class QIODevice;
class QThreadPool;

namespace Starforge::Job {

class ZipWriter
{
public:
    enum class Kind { Folder, File, Executable };

    // One entry: a folder, or a file whose bytes are read (from disk or from memory) only when
    // its blocks are deflated.
    struct Entry
    {
        QByteArray name;          // the full name; a folder's ends with '/'
        Kind kind = Kind::File;
        QByteArray sourcePath;    // the file on disk, or empty
        QByteArray memory;        // the bytes when sourcePath is empty
        qint64 size = 0;
        bool store = false;       // stored as is rather than deflated
        quint32 crc = 0;          // of the bytes as read before: a file that changed since is refused
        QString displayName;      // how errors name it
    };

    struct Workers
    {
        QThreadPool *pool = nullptr;
        qsizetype window = 1;                      // blocks read and deflated ahead of the writer
        int level = 1;                             // zlib level; part of the bytes
        const std::atomic_bool *cancelled = nullptr;
        Error cancelledError;                      // what writeEntries() returns once cancelled
    };

    // Entries this large or larger get zip64 sizes: the limit sits below 4 GiB to leave room for
    // deflate's worst-case growth of the data.
    static constexpr qint64 Zip64EntrySize = 0xff000000LL;
    static constexpr qint64 BlockSize = 1024 * 1024;   // deflated independently, in parallel
    static constexpr qint64 DictionarySize = 32 * 1024; // the previous block's tail primes each block

    // Writes to `file`, which must be seekable (finishEntry() patches the local header);
    // `path` names it in errors.
    ZipWriter(QIODevice &file, QString path) : m_file(file), m_path(std::move(path)) {}

    // Writes every entry in order. `progress` (on the calling thread) gets the files finished and
    // the bytes of file data written so far, after each block.
    Result<void> writeEntries(const std::vector<Entry> &entries, const Workers &workers,
                              const std::function<void(qint64 filesDone, qint64 bytesDone)> &progress);

    // The local header; sizes and CRC are patched by finishEntry() when not known yet.
    bool beginEntry(const QByteArray &name, Kind kind, bool stored, bool zip64);
    // The entry's data, as stored bytes or as (pieces of) one raw deflate stream.
    bool write(const QByteArray &bytes);
    bool finishEntry(quint32 crc, qint64 compressed, qint64 uncompressed);
    // The central directory and the end records.
    bool finishArchive();
    // "Cannot write the capsule to <path>: <why>", for a failed write to the file.
    Error writeError() const;

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
    class BlockPipeline;

    QIODevice &m_file;
    const QString m_path;
    qint64 m_offset = 0;
    Central m_current;
    std::vector<Central> m_entries;
};

} // namespace Starforge::Job
