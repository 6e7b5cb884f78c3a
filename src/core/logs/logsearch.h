#pragma once

// Finding the lines of an indexed log that match a pattern, as `grep` would, without reading the
// file into memory: the file is mapped in chunks of whole lines, searched on the thread pool
// (one chunk per thread), and the matches mapped back to line numbers through the LineIndex.
//  - Text: the bytes as given (memmem over each chunk, then the line of each hit).
//  - A regular expression (Perl syntax, QRegularExpression's JIT-compiled PCRE2): matched over a
//    whole chunk with ^ and $ at line boundaries; a match that would span a newline is checked
//    again line by line, so a match never crosses lines, as in grep.
//  - Case-insensitive either way (text becomes an escaped expression).
// Progress is reported in bytes; a cancel flag stops the workers between chunks.

#include "core/logs/lineindex.h"
#include "core/util/result.h"

#include <QByteArrayView>
#include <QList>
#include <QRegularExpression>
#include <QString>

#include <atomic>
#include <functional>

namespace Starforge::Logs {

struct SearchOptions
{
    QString pattern;
    bool regex = false;
    bool caseInsensitive = false;
    // Lines [firstLine, lastLine] only; lastLine -1: to the end.
    qint64 firstLine = 0;
    qint64 lastLine = -1;
    // Bytes per task: large enough that a task's overhead does not show, small enough that the
    // cores share the work and a cancel is seen quickly.
    qint64 taskBytes = 16 * 1024 * 1024;
};

struct SearchOutcome
{
    QList<qint64> lines;        // matching lines, in order
    qint64 bytesSearched = 0;
    bool cancelled = false;
};

// One line at a time, by the same rules (a followed stream's lines as they come).
class LineMatcher
{
public:
    explicit LineMatcher(const SearchOptions &options);
    bool matches(QByteArrayView line) const;

private:
    bool m_text = false;
    bool m_fold = false;
    QByteArray m_needle;
    QRegularExpression m_re;
};

// The pattern as a QRegularExpression would take it, or the sentence saying what is wrong.
Result<void> checkPattern(const SearchOptions &options);

// Runs on the calling thread, which waits for the workers. progress(done, total) may be called
// from worker threads; cancel may be set from any thread.
Result<SearchOutcome> searchLines(const LineIndex &index, const SearchOptions &options, const std::atomic<bool> *cancel = nullptr,
                                  const std::function<void(qint64 done, qint64 total)> &progress = {});

} // namespace Starforge::Logs
