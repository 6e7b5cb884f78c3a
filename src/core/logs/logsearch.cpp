#include "core/logs/logsearch.h"

#include <QCoreApplication>
#include <QFile>
#include <QMutex>
#include <QRegularExpression>
#include <QtConcurrent>

#include <algorithm>
#include <cstring>

namespace Starforge::Logs {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("Starforge::Logs::LogSearch", text);
}

QRegularExpression expressionFor(const SearchOptions &options)
{
    QRegularExpression::PatternOptions flags = QRegularExpression::MultilineOption | QRegularExpression::UseUnicodePropertiesOption;
    if (options.caseInsensitive) flags |= QRegularExpression::CaseInsensitiveOption;
    return QRegularExpression(options.regex ? options.pattern : QRegularExpression::escape(options.pattern), flags);
}

struct Task
{
    qint64 firstLine = 0;
    qint64 lastLine = 0;
};

// The lines of [task] that match, searching the mapped bytes at data (the task's first line
// starts at data[0]).
QList<qint64> searchTask(const LineIndex &index, const Task &task, const char *data, qint64 length, const SearchOptions &options,
                         const QRegularExpression &re)
{
    QList<qint64> found;
    const qint64 base = index.lineStart(task.firstLine);
    const QByteArray pattern = options.pattern.toUtf8();
    const bool asciiPattern = std::all_of(pattern.cbegin(), pattern.cend(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    QByteArray folded;
    if (!options.regex && options.caseInsensitive && asciiPattern) {
        // Any case, an ASCII text: both sides lowered (ASCII letters only, as grep -i in the C
        // locale), then the text search below.
        folded.resize(length);
        for (qint64 i = 0; i < length; ++i) {
            const char c = data[i];
            folded[i] = (c >= 'A' && c <= 'Z') ? char(c + ('a' - 'A')) : c;
        }
        data = folded.constData();
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
    // An expression over the whole task's text in one global iteration (PCRE2 checks the
    // subject's UTF-16 once, not per call); lines are counted as the matches move on, and a
    // line with several matches is taken once.
    const QString text = QString::fromUtf8(data, length);
    const QStringView view(text);
    qint64 line = task.firstLine;
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
    return found;
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
        return Error::invalid(tr("The expression %1 is not valid at character %2: %3.")
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
    if (!file.open(QIODevice::ReadOnly)) return Error::io(tr("Cannot read the log %1: %2.").arg(index.path(), file.errorString()));
    const QRegularExpression re = expressionFor(options);
    re.optimize();
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
            found = searchTask(index, task, reinterpret_cast<const char *>(mapped), to - from, options, re);
        }
        if (mapped) {
            const QMutexLocker lock(&mapping);
            file.unmap(mapped);
        }
        const qint64 now = done.fetch_add(to - from + 1) + (to - from + 1);
        if (progress) progress(std::min(now, total), total);
        return found;
    };
    const QList<QList<qint64>> perTask = QtConcurrent::blockingMapped(tasks, run);
    if (unreadable) return Error::io(tr("Cannot map the log %1 to search it: %2.").arg(index.path(), file.errorString()));
    for (const QList<qint64> &found : perTask) outcome.lines += found;
    outcome.bytesSearched = std::min(done.load(), total);
    outcome.cancelled = cancel && cancel->load();
    return outcome;
}

} // namespace Starforge::Logs
