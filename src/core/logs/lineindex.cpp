#include "core/logs/lineindex.h"

#include <QCoreApplication>
#include <QFile>

#include <algorithm>
#include <cstring>
#include <limits>

namespace Starforge::Logs {

namespace {

// Bytes mapped and scanned at a time: progress and cancel are looked at between chunks.
constexpr qint64 ChunkBytes = 64 * 1024 * 1024;

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(LineIndex)
};

} // namespace

void LineIndex::addLineStart(qint64 offset)
{
    if (m_blocks.empty() || m_blocks.back().starts.size() >= BlockLines
        || offset - m_blocks.back().base > qint64(std::numeric_limits<std::uint32_t>::max())) {
        Block block;
        block.base = offset;
        block.firstLine = m_lines;
        block.starts.reserve(BlockLines);
        m_blocks.push_back(std::move(block));
    }
    Block &block = m_blocks.back();
    block.starts.push_back(std::uint32_t(offset - block.base));
    ++m_lines;
}

Result<bool> LineIndex::update(const Progress &progress)
{
    QFile file(m_path);
    if (!file.open(QIODevice::ReadOnly)) return Error::io(Text::tr("Cannot read the log %1: %2.").arg(m_path, file.errorString()));
    const qint64 size = file.size();
    if (size < m_indexed) {
        // Shorter than what was indexed: rotated or truncated; what was indexed no longer holds.
        *this = LineIndex(m_path);
    }
    const qint64 from = m_indexed;
    while (m_indexed < size) {
        const qint64 length = std::min(ChunkBytes, size - m_indexed);
        uchar *mapped = file.map(m_indexed, length);
        if (!mapped) return Error::io(Text::tr("Cannot map the log %1: %2.").arg(m_path, file.errorString()));
        const char *data = reinterpret_cast<const char *>(mapped);
        // New bytes after a complete last line (or none yet) start a line.
        if (!m_openLastLine) {
            addLineStart(m_indexed);
            m_openLastLine = true;
        }
        const char *p = data;
        const char *end = data + length;
        while (p < end) {
            const void *found = std::memchr(p, '\n', std::size_t(end - p));
            if (!found) break;
            const char *newline = static_cast<const char *>(found);
            const qint64 next = m_indexed + (newline - data) + 1;
            m_openLastLine = false;
            if (next < size) {
                addLineStart(next);
                m_openLastLine = true;
            }
            p = newline + 1;
        }
        file.unmap(mapped);
        m_indexed += length;
        if (progress && !progress(m_indexed - from, size - from)) return false;
    }
    return true;
}

qint64 LineIndex::lineStart(qint64 line) const
{
    if (line < 0 || line >= m_lines) return -1;
    const auto block = std::upper_bound(m_blocks.cbegin(), m_blocks.cend(), line, [](qint64 l, const Block &b) { return l < b.firstLine; }) - 1;
    return block->base + block->starts[std::size_t(line - block->firstLine)];
}

qint64 LineIndex::lineEnd(qint64 line) const
{
    if (line < 0 || line >= m_lines) return -1;
    if (line + 1 < m_lines) return lineStart(line + 1) - 1;
    return m_openLastLine ? m_indexed : m_indexed - 1;
}

qint64 LineIndex::lineAt(qint64 offset) const
{
    if (offset < 0 || offset >= m_indexed || m_blocks.empty()) return -1;
    // The last block whose base is at or before offset, then the last start at or before it.
    const auto block = std::upper_bound(m_blocks.cbegin(), m_blocks.cend(), offset, [](qint64 o, const Block &b) { return o < b.base; }) - 1;
    const auto relative = std::uint32_t(offset - block->base);
    const auto start = std::upper_bound(block->starts.cbegin(), block->starts.cend(), relative) - 1;
    return block->firstLine + (start - block->starts.cbegin());
}

Result<QList<QByteArray>> LineIndex::readLines(qint64 first, qint64 count) const
{
    QList<QByteArray> lines;
    if (first < 0 || count <= 0 || first >= m_lines) return lines;
    const qint64 last = std::min(m_lines, first + count) - 1;
    QFile file(m_path);
    if (!file.open(QIODevice::ReadOnly)) return Error::io(Text::tr("Cannot read the log %1: %2.").arg(m_path, file.errorString()));
    const qint64 from = lineStart(first);
    const qint64 to = lineEnd(last);
    if (!file.seek(from)) return Error::io(Text::tr("Cannot read the log %1: %2.").arg(m_path, file.errorString()));
    const QByteArray bytes = file.read(to - from);
    if (bytes.size() != to - from) return Error::io(Text::tr("The log %1 changed while it was read; open it again.").arg(m_path));
    lines.reserve(last - first + 1);
    qsizetype at = 0;
    for (qint64 line = first; line <= last; ++line) {
        const qsizetype end = line < last ? qsizetype(lineEnd(line) - from) : bytes.size();
        QByteArray text = bytes.mid(at, end - at);
        if (text.endsWith('\r') && (line < last || !m_openLastLine)) text.chop(1);
        lines.append(std::move(text));
        at = end + 1;
    }
    return lines;
}

qint64 LineIndex::memoryBytes() const
{
    qint64 bytes = qint64(sizeof(*this)) + qint64(m_blocks.capacity() * sizeof(Block));
    for (const Block &block : m_blocks) bytes += qint64(block.starts.capacity() * sizeof(std::uint32_t));
    return bytes;
}

} // namespace Starforge::Logs
