#pragma once

// One log file as a list of lines for the logs viewer (docs/logs.md), over a Logs::LineIndex:
// nothing but the index and a few pages of decoded lines is held, so a gigabyte log is a
// model of ten million rows that scrolls without reading the file into memory.
//  - Indexing is done on the GUI thread in slices of one 64 MiB chunk (a few milliseconds
//    each from the page cache), rows inserted after each, so the first lines show at once and
//    the event loop keeps running.
//  - refresh() takes what was appended since (a followed log): new rows are inserted, and a last
//    line that was still growing is changed in place. A file that got shorter resets the model.
//  - Each line has a severity for highlighting (errors, warnings, Python tracebacks, the
//    runner's progress lines), and a progress line is shown as a compact step marker.

#include "core/logs/lineindex.h"

#include <QAbstractListModel>
#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

namespace Starforge::Models {

class LogLinesModel final : public QAbstractListModel
{
    Q_OBJECT
public:
    enum class Severity { Plain, Progress, Warning, Error, Traceback };
    Q_ENUM(Severity)
    enum Role {
        SeverityRole = Qt::UserRole + 1,   // Severity
        LineNumberRole,                    // qint64, from 1 as editors and grep -n count
        RawTextRole,                       // QString: the line as written (a progress line's JSON too)
    };
    Q_ENUM(Role)

    explicit LogLinesModel(QObject *parent = nullptr);

    // The log to show (empty: none). Indexing starts at once, in slices.
    void setFile(const QString &path);
    QString file() const { return m_index.path(); }
    // Indexes what was appended to the file since.
    void refresh();
    bool isIndexing() const { return m_indexing; }
    const Logs::LineIndex &lineIndex() const { return m_index; }

    // The severity of a line's text, and what a progress line is shown as ("▸ step 3/10").
    static Severity severityOf(QStringView line);
    static QString progressMarker(QStringView line);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

Q_SIGNALS:
    void indexingChanged(bool indexing);
    // Reading the file failed (deleted, unreadable): the sentence says why.
    void failed(const QString &message);

private:
    static constexpr int PageLines = 256;
    static constexpr int CachedPages = 16;

    void indexSlice();
    void setIndexing(bool indexing);
    const QStringList *page(qint64 number) const;

    Logs::LineIndex m_index;
    qint64 m_rows = 0;            // rows the views know
    bool m_indexing = false;
    bool m_again = false;         // refresh() while a slice was under way
    mutable QHash<qint64, QStringList> m_pages;   // decoded lines by page number
    mutable QList<qint64> m_pageOrder;             // least recently used first
};

} // namespace Starforge::Models
