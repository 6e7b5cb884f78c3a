#include "models/loglinesmodel.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QTimer>

namespace Starforge::Models {

LogLinesModel::LogLinesModel(QObject *parent)
    : QAbstractListModel(parent)
{
}

void LogLinesModel::setFile(const QString &path)
{
    beginResetModel();
    m_index = Logs::LineIndex(path);
    m_rows = 0;
    m_pages.clear();
    m_pageOrder.clear();
    endResetModel();
    if (!path.isEmpty())
        refresh();
}

void LogLinesModel::refresh()
{
    if (m_index.path().isEmpty())
        return;
    if (m_indexing) {
        m_again = true;
        return;
    }
    setIndexing(true);
    indexSlice();
}

void LogLinesModel::setIndexing(bool indexing)
{
    if (indexing == m_indexing)
        return;
    m_indexing = indexing;
    Q_EMIT indexingChanged(indexing);
}

void LogLinesModel::indexSlice()
{
    const qint64 before = m_index.indexedBytes();
    const qint64 lastRow = m_rows - 1;
    const qint64 lastEnd = lastRow >= 0 ? m_index.lineEnd(lastRow) : -1;
    // One chunk per slice: the update stops itself after the first progress report.
    const auto updated = m_index.update([](qint64, qint64) { return false; });
    if (!updated) {
        setIndexing(false);
        Q_EMIT failed(updated.error().message);
        return;
    }
    if (m_index.indexedBytes() < before) {
        // Shorter than it was: a new file under the same name.
        beginResetModel();
        m_rows = 0;
        m_pages.clear();
        m_pageOrder.clear();
        endResetModel();
    }
    // A last line that was still open has grown: its row changes, its page is read again.
    if (lastRow >= 0 && lastRow < m_index.lineCount() && m_index.lineEnd(lastRow) != lastEnd) {
        m_pages.remove(lastRow / PageLines);
        m_pageOrder.removeAll(lastRow / PageLines);
        Q_EMIT dataChanged(index(int(lastRow)), index(int(lastRow)));
    }
    const qint64 rows = std::min<qint64>(m_index.lineCount(), std::numeric_limits<int>::max());
    if (rows > m_rows) {
        // The page the new rows start in was read when it had fewer lines: read it again.
        for (const qint64 stale : { (m_rows - 1) / PageLines, m_rows / PageLines }) {
            m_pages.remove(stale);
            m_pageOrder.removeAll(stale);
        }
        beginInsertRows({}, int(m_rows), int(rows - 1));
        m_rows = rows;
        endInsertRows();
    }
    const bool more = *updated == false;   // stopped after a chunk: the file has more
    if (more || m_again) {
        m_again = false;
        QTimer::singleShot(0, this, &LogLinesModel::indexSlice);
        return;
    }
    setIndexing(false);
}

const QStringList *LogLinesModel::page(qint64 number) const
{
    if (auto it = m_pages.constFind(number); it != m_pages.cend()) {
        m_pageOrder.removeOne(number);
        m_pageOrder.append(number);
        return &it.value();
    }
    const auto lines = m_index.readLines(number * PageLines, PageLines);
    if (!lines)
        return nullptr;
    QStringList decoded;
    decoded.reserve(lines->size());
    for (const QByteArray &line : *lines)
        decoded << QString::fromUtf8(line);
    if (m_pageOrder.size() >= CachedPages)
        m_pages.remove(m_pageOrder.takeFirst());
    m_pageOrder.append(number);
    return &*m_pages.insert(number, decoded);
}

LogLinesModel::Severity LogLinesModel::severityOf(QStringView line)
{
    if (line.startsWith(u"STARFORGE_PROGRESS ") || line.contains(u" STARFORGE_PROGRESS {"))
        return Severity::Progress;
    if (line.contains(u"Traceback (most recent call last)"))
        return Severity::Traceback;
    // untranslated: Python's and CUDA's words in the log, matched
    static const QStringView errors[] = { u"ERROR", u"Error:", u"Exception", u"FATAL", u"CUDA out of memory", u"Killed" };
    for (QStringView e : errors) {
        if (line.contains(e))
            return Severity::Error;
    }
    static const QStringView warnings[] = { u"WARNING", u"WARN ", u"Warning:" };
    for (QStringView w : warnings) {
        if (line.contains(w))
            return Severity::Warning;
    }
    return Severity::Plain;
}

QString LogLinesModel::progressMarker(QStringView line)
{
    const qsizetype brace = line.indexOf(u'{');
    const QJsonObject o = brace < 0 ? QJsonObject() : QJsonDocument::fromJson(line.mid(brace).toUtf8()).object();
    const QString kind = o.value(QLatin1String("kind")).toString();
    const QString mark = QStringLiteral("▸ ");
    if (kind == u"step")
        return mark + tr("step %1/%2").arg(o.value(QLatin1String("step")).toInt()).arg(o.value(QLatin1String("total")).toInt());
    if (kind == u"epoch")
        return mark + tr("epoch %1/%2").arg(o.value(QLatin1String("epoch")).toInt()).arg(o.value(QLatin1String("total")).toInt());
    if (kind == u"metric")
        return mark + QStringLiteral("%1 %2").arg(o.value(QLatin1String("name")).toString(), QLocale().toString(o.value(QLatin1String("value")).toDouble(), 'g', 4));
    if (kind == u"checkpoint")
        return mark + tr("checkpoint at step %1").arg(o.value(QLatin1String("step")).toInt());
    if (kind == u"exit")
        return mark + tr("exit code %1").arg(o.value(QLatin1String("code")).toInt());
    if (kind == u"done")
        return mark + tr("done: %1").arg(o.value(QLatin1String("reason")).toString());
    if (kind == u"start")
        return mark + tr("start: %n file(s) in the Capsule", nullptr, o.value(QLatin1String("files")).toInt());
    return line.toString();   // not a progress record after all
}

int LogLinesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows);
}

QVariant LogLinesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const qint64 row = index.row();
    if (role == LineNumberRole)
        return row + 1;
    if (role != Qt::DisplayRole && role != RawTextRole && role != SeverityRole && role != Qt::ToolTipRole)
        return {};
    const QStringList *lines = page(row / PageLines);
    if (!lines || row % PageLines >= lines->size())
        return {};
    const QString &text = lines->at(int(row % PageLines));
    const Severity severity = severityOf(text);
    switch (role) {
    case SeverityRole:
        return QVariant::fromValue(severity);
    case RawTextRole:
        return text;
    case Qt::ToolTipRole:
        return severity == Severity::Progress ? text : QVariant();
    default:
        return severity == Severity::Progress ? progressMarker(text) : text;
    }
}

QHash<int, QByteArray> LogLinesModel::roleNames() const
{
    auto roles = QAbstractListModel::roleNames();
    roles.insert(SeverityRole, "severity");
    roles.insert(LineNumberRole, "lineNumber");
    roles.insert(RawTextRole, "rawText");
    return roles;
}

} // namespace Starforge::Models
