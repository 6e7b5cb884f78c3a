#pragma once

// A log file's lines by byte offset, so that a gigabyte log opens, scrolls and is searched
// without being read into memory (the idea of klogg's index; docs/logs.md). The file is mapped
// and scanned for '\n' with memchr; each line's start is kept as a 32-bit offset from its
// block's 64-bit base (a block is at most 65,536 lines and 4 GiB), about 4 bytes per line: a
// 1 GB log of 10 million lines indexes into about 40 MB.
//
// A line ends at '\n'; a '\r' before it belongs to the line ending (CRLF logs read as LF ones).
// A last line without '\n' is a line. Bytes are not decoded: invalid UTF-8 is indexed as it is.
// The index grows with the file: update() reads what was appended since (a followed log). A
// file that got shorter (rotated, truncated) is indexed again from its start.

#include "core/util/result.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <cstdint>
#include <functional>
#include <vector>

namespace Starforge::Logs {

class LineIndex
{
public:
    // Reports bytes indexed of the bytes to index; returning false cancels (the index keeps
    // the lines found so far and a later update() goes on from there).
    using Progress = std::function<bool(qint64 done, qint64 total)>;

    LineIndex() = default;
    explicit LineIndex(QString path) : m_path(std::move(path)) {}

    QString path() const { return m_path; }
    // Indexes what the file has beyond what is indexed: true, or false when progress cancelled.
    Result<bool> update(const Progress &progress = {});

    qint64 lineCount() const { return m_lines; }
    qint64 indexedBytes() const { return m_indexed; }   // bytes of the file the index covers
    // The byte range of a line: its first byte, and the offset of its '\n' (or of the end of
    // the file for a last line without one). readLines() also drops the '\r' of a CRLF.
    qint64 lineStart(qint64 line) const;
    qint64 lineEnd(qint64 line) const;
    // The line a byte offset falls in (binary searches over the blocks and within one); -1
    // past the end.
    qint64 lineAt(qint64 offset) const;

    // Lines [first, first + count) read from the file, endings left out.
    Result<QList<QByteArray>> readLines(qint64 first, qint64 count) const;

    // Memory the index holds, in bytes.
    qint64 memoryBytes() const;

private:
    struct Block
    {
        qint64 base = 0;                     // offset of the block's first line
        qint64 firstLine = 0;                // its number
        std::vector<std::uint32_t> starts;   // line starts, relative to base
    };
    static constexpr std::size_t BlockLines = 65536;

    void addLineStart(qint64 offset);

    QString m_path;
    std::vector<Block> m_blocks;
    qint64 m_lines = 0;          // complete lines, and a last one without '\n' once seen
    qint64 m_indexed = 0;        // bytes scanned
    bool m_openLastLine = false; // the last line counted has no '\n' yet (it may grow)
};

} // namespace Starforge::Logs
