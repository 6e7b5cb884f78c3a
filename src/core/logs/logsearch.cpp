#include "core/logs/logsearch.h"

#include <QCoreApplication>
#include <QFile>
#include <QMutex>
#include <QRegularExpression>
#include <QThread>
#include <QThreadPool>
#include <QtConcurrent>

#include <hs/hs.h>
#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>

namespace Starforge::Logs {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(LogSearch)
};

QRegularExpression expressionFor(const SearchOptions &options)
{
    QRegularExpression::PatternOptions flags = QRegularExpression::MultilineOption | QRegularExpression::UseUnicodePropertiesOption;
    if (options.caseInsensitive) flags |= QRegularExpression::CaseInsensitiveOption;
    return QRegularExpression(options.regex ? options.pattern : QRegularExpression::escape(options.pattern), flags);
}

// The runs of literal text (three characters or more) every match of a regular expression
// must contain, longest first; none when that cannot be told for certain. grep finds such a "must" string with Boyer-Moore and runs
// the expression only on the lines that have it; so does searchTask. Conservative: any
// alternation outside a group, inline options, or a construct this reader does not know gives
// up. Inside a group nothing is taken (the group may be optional or alternated); a literal
// followed by ?, * or {0 is optional and ends the run without being taken; + and {n≥1 keep it.
QList<QByteArray> requiredLiterals(const QString &pattern)
{
    if (pattern.contains(QLatin1String("(?")) || pattern.contains(QLatin1String("\\Q")))
        return {};
    QStringList runs;
    QString run;
    int depth = 0;
    auto endRun = [&]() {
        if (run.size() >= 3)
            runs << run;
        run.clear();
    };
    for (qsizetype i = 0; i < pattern.size(); ++i) {
        const QChar c = pattern.at(i);
        if (c == u'|' && depth == 0)
            return {};   // top-level alternation: nothing is required of every match
        if (c == u'(') {
            endRun();
            ++depth;
            continue;
        }
        if (c == u')') {
            --depth;
            continue;
        }
        if (c == u'[') {
            // A class: skip to its end ("]" first in a class is literal).
            endRun();
            qsizetype j = i + 1;
            if (j < pattern.size() && pattern.at(j) == u'^')
                ++j;
            if (j < pattern.size() && pattern.at(j) == u']')
                ++j;
            while (j < pattern.size() && pattern.at(j) != u']') {
                if (pattern.at(j) == u'\\')
                    ++j;
                ++j;
            }
            i = j;
            continue;
        }
        if (depth > 0)
            continue;
        QChar literal;
        qsizetype next = i + 1;
        if (c == u'\\') {
            if (i + 1 >= pattern.size())
                return {};
            const QChar e = pattern.at(i + 1);
            next = i + 2;
            // Escaped punctuation is itself; letters and digits are classes, anchors, back
            // references or code points: the run ends there.
            if (e.isLetterOrNumber() || e.unicode() > 0x7f) {
                endRun();
                i = next - 1;
                continue;
            }
            literal = e;
        } else if (QStringLiteral(".^$").contains(c)) {
            endRun();
            continue;
        } else if (QStringLiteral("*+?{").contains(c)) {
            // A quantifier on something that ended the run already (a group, a class, a dot).
            if (c == u'{') {
                const qsizetype close = pattern.indexOf(u'}', i);
                if (close < 0)
                    return {};
                i = close;
            }
            continue;
        } else {
            literal = c;
        }
        // What follows decides whether this literal is required.
        const QChar after = next < pattern.size() ? pattern.at(next) : QChar();
        const bool optional = after == u'?' || after == u'*' || (after == u'{' && pattern.mid(next + 1, 1) == QLatin1String("0"));
        if (optional) {
            endRun();
            i = next - 1;
            continue;
        }
        run += literal;
        if (after == u'+' || after == u'{') {
            endRun();   // repeated: this character is required, what follows it is not adjacent
        }
        i = next - 1;
    }
    endRun();
    std::stable_sort(runs.begin(), runs.end(), [](const QString &a, const QString &b) { return a.size() > b.size(); });
    QList<QByteArray> out;
    for (const QString &r : std::as_const(runs))
        out << r.toUtf8();
    return out;
}

// ASCII letters lowered, eight bytes at a time (SWAR): for each byte, whether it is in 'A'..'Z'
// is found in its high bit by two additions on its low seven bits, and 0x20 is added where it
// is. Bytes of 0x80 and above are left as they are, as grep -i does in the C locale.
void lowerAscii(const char *in, char *out, qint64 n)
{
    constexpr quint64 Ones = 0x0101010101010101ULL;
    constexpr quint64 High = 0x8080808080808080ULL;
    qint64 i = 0;
    for (; i + 8 <= n; i += 8) {
        quint64 x;
        std::memcpy(&x, in + i, 8);
        const quint64 low = x & ~High;
        const quint64 aboveZ = low + (0x7f - 'Z') * Ones;    // high bit: the byte is above 'Z'
        const quint64 fromA = low + (0x80 - 'A') * Ones;     // high bit: the byte is 'A' or above
        const quint64 upper = (fromA & ~aboveZ) & ~x & High;
        x |= upper >> 2;
        std::memcpy(out + i, &x, 8);
    }
    for (; i < n; ++i) {
        const unsigned char c = static_cast<unsigned char>(in[i]);
        out[i] = char(unsigned(c - 'A') < 26u ? c + ('a' - 'A') : c);
    }
}

// An expression compiled for Hyperscan, the regular-expression engine klogg also uses, which
// scans many times faster than PCRE2 (bench_logindex). It is compiled in UTF-8 mode with
// Unicode properties, so it means what QRegularExpression with UseUnicodePropertiesOption means
// (\\w, \\d, \\s, \\b, ., case folding over characters, not bytes); Hyperscan requires valid UTF-8
// in that mode, so a task whose bytes are not (checked with simdjson, at many GB/s) is searched
// with QRegularExpression instead. A pattern Hyperscan refuses (back references, look-arounds,
// one that can match the empty string) stays with QRegularExpression. Hyperscan reports where
// matches end: the line of the last byte is the matching line. A pattern that could match a
// newline ([^…], \\s, \\n, (?s), …) has each such line checked again alone with
// QRegularExpression, so a match never crosses a line.
class Hyperscan
{
public:
    static std::unique_ptr<Hyperscan> compile(const SearchOptions &options)
    {
        if (!options.regex || hs_valid_platform() != HS_SUCCESS)
            return nullptr;
        const QByteArray pattern = options.pattern.toUtf8();
        if (pattern.isEmpty() || pattern.contains('\0'))
            return nullptr;
        unsigned flags = HS_FLAG_MULTILINE | HS_FLAG_UTF8 | HS_FLAG_UCP;
        if (options.caseInsensitive)
            flags |= HS_FLAG_CASELESS;
        hs_database_t *db = nullptr;
        hs_compile_error_t *error = nullptr;
        if (hs_compile(pattern.constData(), flags, HS_MODE_BLOCK, nullptr, &db, &error) != HS_SUCCESS) {
            hs_free_compile_error(error);
            return nullptr;
        }
        hs_scratch_t *scratch = nullptr;
        if (hs_alloc_scratch(db, &scratch) != HS_SUCCESS) {
            hs_free_database(db);
            return nullptr;
        }
        auto out = std::unique_ptr<Hyperscan>(new Hyperscan);
        out->m_db = db;
        out->m_scratch = scratch;
        for (const char *newline : {"[^", "[:", "(?", "\\n", "\\s", "\\W", "\\D", "\\H", "\\v", "\\R", "\\x", "\\0", "\\c", "\\e",
                                    "\\N", "\\o", "\\p", "\\P", "\\X", "\\C", "\\u"})
            out->m_mayCrossLines = out->m_mayCrossLines || pattern.contains(newline);
        return out;
    }
    ~Hyperscan()
    {
        hs_free_scratch(m_scratch);
        hs_free_database(m_db);
    }
    Hyperscan(const Hyperscan &) = delete;
    Hyperscan &operator=(const Hyperscan &) = delete;

    bool mayCrossLines() const { return m_mayCrossLines; }

    // The offsets just past each match's end in [data, data + length), in order, one per line
    // at most is enough: onEnd returns the offset before which ends need not be reported.
    bool scan(const char *data, qint64 length, const std::function<qint64(qint64 end)> &onEnd) const
    {
        hs_scratch_t *scratch = nullptr;
        if (hs_clone_scratch(m_scratch, &scratch) != HS_SUCCESS)
            return false;
        struct Context
        {
            const std::function<qint64(qint64)> *onEnd;
            qint64 skipBelow = 0;
        } context{&onEnd};
        const auto callback = [](unsigned int, unsigned long long, unsigned long long to, unsigned int, void *raw) -> int {
            auto *c = static_cast<Context *>(raw);
            if (qint64(to) > c->skipBelow)
                c->skipBelow = (*c->onEnd)(qint64(to));
            return 0;
        };
        const hs_error_t result = hs_scan(m_db, data, unsigned(length), 0, scratch, callback, &context);
        hs_free_scratch(scratch);
        return result == HS_SUCCESS;
    }

private:
    Hyperscan() = default;
    hs_database_t *m_db = nullptr;
    hs_scratch_t *m_scratch = nullptr;
    bool m_mayCrossLines = false;
};

QThreadPool *searchPool()
{
    static QThreadPool *pool = [] {
        auto *p = new QThreadPool;   // lives as long as the process: searches may run to its end
        p->setMaxThreadCount(std::max(1, QThread::idealThreadCount()));
        p->setObjectName(Text::tr("log search"));
        return p;
    }();
    return pool;
}

struct Task
{
    qint64 firstLine = 0;
    qint64 lastLine = 0;
};

void matchInOnePass(qint64 firstLine, const char *data, qint64 length, const QRegularExpression &re, QList<qint64> &found);

// The lines of [task] that match, searching the mapped bytes at data (the task's first line
// starts at data[0]).
QList<qint64> searchTask(const LineIndex &index, const Task &task, const char *data, qint64 length, const SearchOptions &options,
                         const QRegularExpression &re, const Hyperscan *hyperscan)
{
    QList<qint64> found;
    const qint64 base = index.lineStart(task.firstLine);
    const QByteArray pattern = options.pattern.toUtf8();
    const bool asciiPattern = std::all_of(pattern.cbegin(), pattern.cend(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    if (!options.regex && options.caseInsensitive && asciiPattern && !pattern.isEmpty()) {
        // Any case, an ASCII text: both sides lowered (ASCII letters only, as grep -i in the C
        // locale). The text is lowered a window at a time into a buffer that stays in the
        // cache, each window overlapping the next by the needle's length less one; a hit is
        // taken once, as the line it is on, and the search goes on after that line.
        const QByteArray needle = pattern.toLower();
        constexpr qint64 Window = 64 * 1024;
        QByteArray buffer(Window + needle.size(), Qt::Uninitialized);
        char *out = buffer.data();   // once: QByteArray::operator[] checks for sharing on every call
        qint64 next = 0;             // offsets before this are done
        for (qint64 pos = 0; pos < length; pos += Window) {
            const qint64 n = std::min<qint64>(Window + needle.size() - 1, length - pos);
            lowerAscii(data + pos, out, n);
            qint64 at = std::max<qint64>(0, next - pos);
            while (at < n) {
                const void *hit = memmem(out + at, std::size_t(n - at), needle.constData(), std::size_t(needle.size()));
                if (!hit)
                    break;
                const qint64 offset = pos + (static_cast<const char *>(hit) - out);
                const qint64 line = index.lineAt(base + offset);
                if (line < 0 || base + offset + needle.size() - 1 > index.lineEnd(line)) {
                    at = offset - pos + 1;   // across a line end: not a match of either line
                    continue;
                }
                found << line;
                next = index.lineEnd(line) - base + 1;
                at = next - pos;
            }
        }
        return found;
    }
    if (!options.regex && (!options.caseInsensitive || asciiPattern)) {
        // Text: every hit's line, once.
        const QByteArray needle = options.caseInsensitive ? pattern.toLower() : pattern;
        if (needle.isEmpty()) {
            for (qint64 l = task.firstLine; l <= task.lastLine; ++l) found << l;
            return found;
        }
        qint64 at = 0;
        while (at < length) {
            const void *hit = memmem(data + at, std::size_t(length - at), needle.constData(), std::size_t(needle.size()));
            if (!hit) break;
            const qint64 offset = static_cast<const char *>(hit) - data;
            const qint64 line = index.lineAt(base + offset);
            // A hit across a line end is not a match of either line (the needle has a '\n').
            if (line < 0 || base + offset + needle.size() - 1 > index.lineEnd(line)) {
                at = offset + 1;
                continue;
            }
            found << line;
            at = index.lineEnd(line) - base + 1;   // the next line
        }
        return found;
    }
    // Hyperscan, when it took the expression: each match's end gives its line, which is taken
    // once (the scan is told to skip the rest of the line).
    if (hyperscan && length < qint64(std::numeric_limits<unsigned int>::max()) && simdjson::validate_utf8(data, std::size_t(length))) {
        QList<qint64> candidates;
        const bool scanned = hyperscan->scan(data, length, [&](qint64 end) {
            const qint64 line = index.lineAt(base + std::max<qint64>(0, end - 1));
            if (line < 0)
                return length;
            candidates << line;
            return index.lineEnd(line) - base;   // ends up to the line's '\n' are this line's
        });
        if (scanned) {
            if (!hyperscan->mayCrossLines())
                return candidates;
            for (const qint64 line : std::as_const(candidates)) {
                const qint64 start = index.lineStart(line) - base;
                const qint64 end = std::min(index.lineEnd(line) - base, length);
                if (re.match(QString::fromUtf8(data + start, end - start)).hasMatch())
                    found << line;
            }
            return found;
        }
    }
    // An expression with literals every match contains, case-sensitive: memmem finds the lines
    // that have the longest, the others are looked for in the line, and only those lines are
    // matched, one by one (as grep does with its "must" string). Lines are whole, so a match
    // still never crosses a line. When most lines have the literal, matching line by line costs
    // more than one pass over the text: after a sample the rest of the task goes that way.
    if (!options.caseInsensitive) {
        const QList<QByteArray> musts = requiredLiterals(options.pattern);
        if (!musts.isEmpty()) {
            const QByteArray &must = musts.first();
            qint64 at = 0;
            qint64 candidates = 0;
            while (at < length) {
                const void *hit = memmem(data + at, std::size_t(length - at), must.constData(), std::size_t(must.size()));
                if (!hit)
                    break;
                const qint64 offset = static_cast<const char *>(hit) - data;
                const qint64 line = index.lineAt(base + offset);
                if (line < 0)
                    break;
                const qint64 start = index.lineStart(line) - base;
                const qint64 end = std::min(index.lineEnd(line) - base, length);   // its '\n', or the end
                if (++candidates == 1024 && end < 1024 * 2048) {
                    // Dense (a candidate every 2 KiB or less): the rest in one pass.
                    matchInOnePass(line, data + start, length - start, re, found);
                    return found;
                }
                const QByteArrayView text(data + start, end - start);
                const bool all = std::all_of(musts.cbegin() + 1, musts.cend(), [&text](const QByteArray &other) { return text.contains(other); });
                // The line's bytes as the one-pass path sees them (a CR stays, as in grep).
                if (all && re.match(QString::fromUtf8(text)).hasMatch())
                    found << line;
                at = end + 1;
            }
            return found;
        }
    }
    matchInOnePass(task.firstLine, data, length, re, found);
    return found;
}

// The lines of [data, data + length) that match, its first line being firstLine: the
// expression over the whole text in one global iteration (PCRE2 checks the subject's UTF-16
// once, not per call); lines are counted as the matches move on, and a line with several
// matches is taken once.
void matchInOnePass(qint64 firstLine, const char *data, qint64 length, const QRegularExpression &re, QList<qint64> &found)
{
    const QString text = QString::fromUtf8(data, length);
    const QStringView view(text);
    qint64 line = firstLine;
    qsizetype lineStartAt = 0;
    const auto lineEndFrom = [&](qsizetype start) {
        const qsizetype n = text.indexOf(u'\n', start);
        return n < 0 ? text.size() : n;
    };
    qsizetype lineEndAt = lineEndFrom(0);
    qint64 lastFound = -1;
    QRegularExpressionMatchIterator it = re.globalMatch(text);
    while (it.hasNext()) {
        const QRegularExpressionMatch m = it.next();
        while (m.capturedStart() > lineEndAt && lineEndAt < text.size()) {
            ++line;
            lineStartAt = lineEndAt + 1;
            lineEndAt = lineEndFrom(lineStartAt);
        }
        if (m.capturedEnd() <= lineEndAt || m.capturedLength() == 0) {
            if (line != lastFound) found << line;
            lastFound = line;
            continue;
        }
        // It spans a newline: each line it covers is matched alone, and the iteration goes on
        // after them.
        qsizetype from = lineStartAt;
        qsizetype to = lineEndAt;
        for (qint64 l = line;; ++l) {
            if (l != lastFound && re.match(view.mid(from, to - from)).hasMatch()) {
                found << l;
                lastFound = l;
            }
            if (to >= m.capturedEnd() || to >= text.size()) {
                line = l;
                lineStartAt = from;
                lineEndAt = to;
                break;
            }
            from = to + 1;
            to = lineEndFrom(from);
        }
    }
}

} // namespace

LineMatcher::LineMatcher(const SearchOptions &options)
{
    const QByteArray pattern = options.pattern.toUtf8();
    const bool ascii = std::all_of(pattern.cbegin(), pattern.cend(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    m_text = !options.regex && (!options.caseInsensitive || ascii);
    m_fold = m_text && options.caseInsensitive;
    m_needle = m_fold ? pattern.toLower() : pattern;
    if (!m_text) m_re = expressionFor(options);
}

bool LineMatcher::matches(QByteArrayView line) const
{
    if (!m_text) return m_re.match(QString::fromUtf8(line)).hasMatch();
    if (!m_fold) return line.contains(m_needle);
    return QByteArray(line.data(), line.size()).toLower().contains(m_needle);
}

Result<void> checkPattern(const SearchOptions &options)
{
    const QRegularExpression re = expressionFor(options);
    if (!re.isValid()) {
        return Error::invalid(Text::tr("The expression %1 is not valid at character %2: %3.")
                                  .arg(options.pattern)
                                  .arg(re.patternErrorOffset())
                                  .arg(re.errorString()));
    }
    return {};
}

Result<SearchOutcome> searchLines(const LineIndex &index, const SearchOptions &options, const std::atomic<bool> *cancel,
                                  const std::function<void(qint64, qint64)> &progress)
{
    if (auto valid = checkPattern(options); !valid) return valid.error();
    SearchOutcome outcome;
    const qint64 first = std::max<qint64>(0, options.firstLine);
    const qint64 last = options.lastLine < 0 ? index.lineCount() - 1 : std::min(options.lastLine, index.lineCount() - 1);
    if (first > last) return outcome;

    // Tasks of whole lines, about taskBytes each (a longer line is a task of its own).
    QList<Task> tasks;
    for (qint64 line = first; line <= last;) {
        const qint64 start = index.lineStart(line);
        const qint64 probe = std::min({start + std::max<qint64>(1, options.taskBytes), index.lineEnd(last), index.indexedBytes() - 1});
        const qint64 endLine = std::max(line, std::min(last, index.lineAt(probe)));
        tasks.append({line, endLine});
        line = endLine + 1;
    }
    const qint64 total = index.lineEnd(last) - index.lineStart(first);
    QFile file(index.path());
    if (!file.open(QIODevice::ReadOnly)) return Error::io(Text::tr("Cannot read the log %1: %2.").arg(index.path(), file.errorString()));
    const QRegularExpression re = expressionFor(options);
    re.optimize();
    const std::unique_ptr<Hyperscan> hyperscan = Hyperscan::compile(options);
    std::atomic<qint64> done{0};
    std::atomic<bool> unreadable{false};
    QMutex mapping;   // QFile::map is not meant for concurrent calls on one QFile
    const std::function<QList<qint64>(const Task &)> run = [&](const Task &task) -> QList<qint64> {
        if (cancel && cancel->load()) return {};
        const qint64 from = index.lineStart(task.firstLine);
        const qint64 to = index.lineEnd(task.lastLine);
        uchar *mapped = nullptr;
        {
            const QMutexLocker lock(&mapping);
            mapped = to > from ? file.map(from, to - from) : nullptr;
        }
        QList<qint64> found;
        if (!mapped && to > from) unreadable = true;
        if (mapped || to == from) {
            found = searchTask(index, task, reinterpret_cast<const char *>(mapped), to - from, options, re, hyperscan.get());
        }
        if (mapped) {
            const QMutexLocker lock(&mapping);
            file.unmap(mapped);
        }
        const qint64 now = done.fetch_add(to - from + 1) + (to - from + 1);
        if (progress) progress(std::min(now, total), total);
        return found;
    };
    // The tasks run on a pool of their own: searchLines itself is often run on the global pool
    // (the Logs dock), and a search waiting there for tasks queued behind it and behind other
    // searches waiting the same way would wait for ever once every global thread is such a wait.
    const QList<QList<qint64>> perTask = QtConcurrent::blockingMapped(searchPool(), tasks, run);
    if (unreadable) return Error::io(Text::tr("Cannot map the log %1 to search it: %2.").arg(index.path(), file.errorString()));
    for (const QList<qint64> &found : perTask) outcome.lines += found;
    outcome.bytesSearched = std::min(done.load(), total);
    outcome.cancelled = cancel && cancel->load();
    return outcome;
}

} // namespace Starforge::Logs
