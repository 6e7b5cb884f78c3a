#include "gui/logs/logspanel.h"

#include "core/cluster/diagnosis.h"
#include "core/job/archiver.h"
#include "core/job/jobactions.h"
#include "core/job/jobsnapshot.h"
#include "core/kube/logstream.h"
#include "core/logs/logsearch.h"
#include "core/s3/s3client.h"
#include "core/session/session.h"
#include "models/jobsmodel.h"
#include "models/loglinesmodel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFontDatabase>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QLocale>
#include <QPushButton>
#include <QShortcut>
#include <QStyledItemDelegate>
#include <QTemporaryFile>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <algorithm>

namespace Starforge::Gui {

using Models::LogLinesModel;

// The lines that matched, as rows of their own ("only matching lines"): each row shows its line
// of the log model.
class MatchesModel final : public QAbstractListModel
{
public:
    MatchesModel(LogLinesModel *lines, QObject *parent)
        : QAbstractListModel(parent)
        , m_lines(lines)
    {
    }
    // More matches of the same search (a followed log) are inserted; another search resets.
    void setMatches(const QList<qint64> &matches)
    {
        if (matches == m_matches)
            return;
        const qsizetype had = m_matches.size();
        if (matches.size() > had && std::equal(m_matches.cbegin(), m_matches.cend(), matches.cbegin())) {
            beginInsertRows({}, int(had), int(matches.size() - 1));
            m_matches = matches;
            endInsertRows();
            return;
        }
        beginResetModel();
        m_matches = matches;
        endResetModel();
    }
    int rowCount(const QModelIndex &parent = {}) const override { return parent.isValid() ? 0 : int(m_matches.size()); }
    QVariant data(const QModelIndex &index, int role) const override
    {
        if (!checkIndex(index, CheckIndexOption::IndexIsValid))
            return {};
        return m_lines->index(int(m_matches.at(index.row()))).data(role);
    }

private:
    LogLinesModel *m_lines;
    QList<qint64> m_matches;
};

namespace {

// Colours by severity, readable on light and dark palettes.
class SeverityDelegate final : public QStyledItemDelegate
{
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        switch (index.data(LogLinesModel::SeverityRole).value<LogLinesModel::Severity>()) {
        case LogLinesModel::Severity::Traceback:
            option->backgroundBrush = QColor(0xf8, 0xd7, 0xda);
            option->palette.setColor(QPalette::Text, QColor(0x84, 0x20, 0x29));
            option->font.setBold(true);
            break;
        case LogLinesModel::Severity::Error:
            option->palette.setColor(QPalette::Text, QColor(0xb0, 0x00, 0x20));
            break;
        case LogLinesModel::Severity::Warning:
            option->palette.setColor(QPalette::Text, QColor(0x8a, 0x5a, 0x00));
            break;
        case LogLinesModel::Severity::Progress:
            option->palette.setColor(QPalette::Text, QColor(0x1f, 0x5f, 0xa8));
            break;
        case LogLinesModel::Severity::Plain:
            break;
        }
    }
};

QCheckBox *check(QWidget *parent, const QString &text, const char *name, const QString &tip)
{
    auto *box = new QCheckBox(text, parent);
    box->setObjectName(QLatin1String(name));
    box->setToolTip(tip);
    return box;
}

QPushButton *button(QWidget *parent, const QString &text, const char *name, const QString &accessible)
{
    auto *b = new QPushButton(text, parent);
    b->setObjectName(QLatin1String(name));
    b->setAccessibleName(accessible);
    return b;
}

} // namespace

LogsPanel::LogsPanel(QWidget *parent)
    : QWidget(parent)
    , m_source(new QComboBox(this))
    , m_follow(check(this, tr("F&ollow"), "logsFollow", tr("Keep the newest line in view as the log grows")))
    , m_traceback(button(this, tr("First &traceback"), "logsTracebackButton", tr("Go to the first Python traceback")))
    , m_save(button(this, tr("Sa&ve…"), "logsSaveButton", tr("Save the log to a file")))
    , m_search(new QLineEdit(this))
    , m_regex(check(this, tr("Re&gex"), "logsRegex", tr("The search is a regular expression (Perl syntax)")))
    , m_anyCase(check(this, tr("An&y case"), "logsAnyCase", tr("Match upper and lower case alike")))
    , m_onlyMatching(check(this, tr("Only &matching"), "logsOnlyMatching", tr("Show only the lines that match the search")))
    , m_previous(button(this, tr("Pre&vious"), "logsPreviousButton", tr("Previous match (Shift+F3)")))
    , m_next(button(this, tr("&Next"), "logsNextButton", tr("Next match (F3)")))
    , m_view(new QListView(this))
    , m_lines(new LogLinesModel(this))
    , m_matchesModel(new MatchesModel(m_lines, this))
    , m_status(new QLabel(this))
{
    setObjectName(QStringLiteral("logsPanel"));
    m_source->setObjectName(QStringLiteral("logsSource"));
    m_source->setToolTip(tr("Which log: the driver's (the submitter pod), the head's, a worker's, or an archived one"));
    auto *sourceLabel = new QLabel(tr("&Log:"), this);
    sourceLabel->setBuddy(m_source);
    m_search->setObjectName(QStringLiteral("logsSearch"));
    m_search->setAccessibleName(tr("Search the log"));
    m_search->setPlaceholderText(tr("Search (Ctrl+F)"));
    m_search->setClearButtonEnabled(true);
    m_follow->setChecked(true);
    m_view->setObjectName(QStringLiteral("logsView"));
    m_view->setAccessibleName(tr("Log lines"));
    m_view->setModel(m_lines);
    m_view->setUniformItemSizes(true);   // ten million rows lay out in constant time
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_view->setItemDelegate(new SeverityDelegate(m_view));
    m_status->setObjectName(QStringLiteral("logsStatus"));
    m_status->setAccessibleName(tr("Log status"));

    auto *top = new QHBoxLayout;
    top->addWidget(sourceLabel);
    top->addWidget(m_source, 1);
    top->addWidget(m_follow);
    top->addWidget(m_traceback);
    top->addWidget(m_save);
    auto *find = new QHBoxLayout;
    find->addWidget(m_search, 1);
    find->addWidget(m_regex);
    find->addWidget(m_anyCase);
    find->addWidget(m_onlyMatching);
    find->addWidget(m_previous);
    find->addWidget(m_next);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addLayout(find);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_status);

    auto *findShortcut = new QShortcut(QKeySequence::Find, this, [this] {
        m_search->setFocus(Qt::ShortcutFocusReason);
        m_search->selectAll();
    });
    findShortcut->setContext(Qt::WidgetWithChildrenShortcut);
    (new QShortcut(QKeySequence::FindNext, this, this, &LogsPanel::findNext))->setContext(Qt::WidgetWithChildrenShortcut);
    (new QShortcut(QKeySequence::FindPrevious, this, this, &LogsPanel::findPrevious))->setContext(Qt::WidgetWithChildrenShortcut);
    connect(m_next, &QPushButton::clicked, this, &LogsPanel::findNext);
    connect(m_previous, &QPushButton::clicked, this, &LogsPanel::findPrevious);
    connect(m_traceback, &QPushButton::clicked, this, &LogsPanel::jumpToFirstTraceback);
    connect(m_source, &QComboBox::activated, this, &LogsPanel::openSource);
    connect(m_save, &QPushButton::clicked, this, [this] {
        const QString path = chooseSaveFile ? chooseSaveFile(this) : QString();
        if (path.isEmpty())
            return;
        QString error;
        setStatus(saveTo(path, &error) ? tr("Saved to %1.").arg(path) : error);
    });
    m_searchDelay.setSingleShot(true);
    m_searchDelay.setInterval(250);
    connect(&m_searchDelay, &QTimer::timeout, this, &LogsPanel::startSearch);
    connect(m_search, &QLineEdit::textChanged, &m_searchDelay, qOverload<>(&QTimer::start));
    for (QCheckBox *box : { m_regex, m_anyCase })
        connect(box, &QCheckBox::toggled, this, &LogsPanel::startSearch);
    connect(m_onlyMatching, &QCheckBox::toggled, this, &LogsPanel::showMatches);
    m_refresh.setSingleShot(true);
    m_refresh.setInterval(100);
    connect(&m_refresh, &QTimer::timeout, m_lines, &LogLinesModel::refresh);
    m_searchMore.setSingleShot(true);
    m_searchMore.setInterval(500);
    connect(&m_searchMore, &QTimer::timeout, this, &LogsPanel::continueSearch);
    connect(m_lines, &QAbstractItemModel::rowsInserted, this, [this] {
        if (m_follow->isChecked() && m_view->model() == m_lines)
            m_view->scrollToBottom();
        updateStatus();
        // A search over a growing log takes in the new lines now and then, not on every batch.
        if (!m_search->text().isEmpty() && !m_searchMore.isActive())
            m_searchMore.start();
    });
    connect(m_lines, &LogLinesModel::failed, this, &LogsPanel::setStatus);
    setStatus(tr("Select a job in the Jobs panel to read its logs."));
}

LogsPanel::~LogsPanel()
{
    if (m_cancelSearch)
        *m_cancelSearch = true;
    closeSource();
}

void LogsPanel::setStatus(const QString &text)
{
    m_status->setText(text);
}

void LogsPanel::setSession(Session *session)
{
    if (m_session)
        disconnect(m_session, nullptr, this, nullptr);
    m_session = session;
    if (session)
        connect(session, &Session::partsAboutToBeRemoved, this, &LogsPanel::closeSource);
}

void LogsPanel::setJobsModel(Models::JobsModel *model)
{
    m_jobsModel = model;
}

void LogsPanel::showJob(const QString &jobId)
{
    if (jobId == m_jobId && !m_sources.isEmpty())
        return;
    m_jobId = jobId;
    closeSource();
    refreshSources();
}

void LogsPanel::closeSource()
{
    m_work.reset();
    if (m_stream)
        m_stream->stop();
    m_stream.reset();
    m_refresh.stop();
    m_lines->setFile(QString());
    m_spool.reset();
    m_matches.clear();
    m_searchedTo = 0;
    m_searchMore.stop();
    m_matchesModel->setMatches({});
}

void LogsPanel::refreshSources()
{
    m_sources.clear();
    m_source->clear();
    const int row = m_jobsModel && !m_jobId.isEmpty() ? m_jobsModel->rowOf(m_jobId) : -1;
    if (row < 0 || !m_session) {
        setStatus(tr("Select a job in the Jobs panel to read its logs."));
        return;
    }
    const Job::JobRecord record = m_jobsModel->recordAt(row);
    if (record.archived) {
        for (const Job::ArchivedLog &l : record.logs) {
            m_sources.append({ tr("%1: %2/%3 (archived, %4)").arg(l.role, l.pod, l.container, QLocale().formattedDataSize(l.size)), {}, {}, false, l.key });
            m_source->addItem(m_sources.last().label);
        }
        if (m_sources.isEmpty()) {
            setStatus(tr("Job %1 was archived without logs.").arg(m_jobId));
            return;
        }
        openSource(0);
        return;
    }
    if (!m_session->kube())
        return;
    m_work = std::make_unique<QObject>();
    const QString id = m_jobId;
    setStatus(tr("Finding the pods of job %1…").arg(id));
    Job::fetchCheckedSnapshot(m_session->kube(), Job::SnapshotRequest::of(m_session->ns(), id), m_work.get(), [this, id](Result<Job::JobSnapshot> snapshot) {
        if (id != m_jobId)
            return;
        if (!snapshot) {
            setStatus(snapshot.error().message);
            return;
        }
        // The driver's log (the submitter's) first, then the head's, then the workers'.
        QList<QPair<int, Source>> found;
        for (const QJsonObject &pod : std::as_const(snapshot->pods)) {
            const Cluster::PodInfo info = Cluster::PodInfo::fromJson(pod);
            const QString role = info.role();
            const int rank = role == u"submitter" ? 0 : role == u"head" ? 1 : 2;
            const QJsonArray containers = pod.value(QLatin1String("spec")).toObject().value(QLatin1String("containers")).toArray();
            for (const QJsonValue &c : containers) {
                const QString container = c.toObject().value(QLatin1String("name")).toString();
                const QString label = containers.size() > 1 ? tr("%1: %2/%3").arg(role, info.view.name, container) : tr("%1: %2").arg(role, info.view.name);
                found.append({ rank, Source{ label, info.view.name, container, false, {} } });
            }
        }
        std::stable_sort(found.begin(), found.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
        for (const auto &f : found) {
            m_sources.append(f.second);
            m_source->addItem(f.second.label);
        }
        if (m_sources.isEmpty()) {
            setStatus(tr("Job %1 has no pods yet.").arg(id));
            return;
        }
        openSource(0);
    });
}

void LogsPanel::openSource(int index)
{
    if (index < 0 || index >= m_sources.size() || !m_session)
        return;
    const Source source = m_sources.at(index);
    const QList<Source> sources = m_sources;
    closeSource();
    m_sources = sources;
    m_source->setCurrentIndex(index);
    m_spool = std::make_unique<QTemporaryFile>(Job::temporaryLogTemplate());
    if (!m_spool->open()) {
        setStatus(tr("Cannot make a file for the log: %1.").arg(m_spool->errorString()));
        return;
    }
    m_work = std::make_unique<QObject>();
    if (!source.archiveKey.isEmpty()) {
        setStatus(tr("Downloading the archived log…"));
        const QString path = m_spool->fileName();
        m_session->s3()->downloadObject(source.archiveKey, path, m_work.get(), [this, path](Result<qint64> written) {
            if (!written) {
                setStatus(written.error().message);
                return;
            }
            m_lines->setFile(path);
        });
        return;
    }
    m_lines->setFile(m_spool->fileName());
    Kube::LogStreamOptions options;
    options.container = source.container;
    options.follow = true;
    m_stream = std::make_unique<Kube::LogStream>(m_session->kube(), m_session->ns(), source.pod, options);
    connect(m_stream.get(), &Kube::LogStream::lines, this, [this](const QList<Kube::LogLine> &lines) {
        // A piece of a line cut for length continues the line before it.
        for (const Kube::LogLine &line : lines) {
            m_spool->write(line.text);
            m_spool->write("\n", 1);
        }
        m_spool->flush();
        if (!m_refresh.isActive())
            m_refresh.start();
    });
    connect(m_stream.get(), &Kube::LogStream::interrupted, this, [this](const Kube::ApiError &error) {
        setStatus(tr("The log stream was interrupted (%1); reconnecting without losing or repeating a line.").arg(error.message));
    });
    m_stream->start();
}

qint64 LogsPanel::currentLine() const
{
    const QModelIndex current = m_view->currentIndex();
    if (!current.isValid())
        return -1;
    return current.data(LogLinesModel::LineNumberRole).toLongLong() - 1;
}

void LogsPanel::updateStatus()
{
    const QString lines = tr("%n line(s)", nullptr, m_lines->rowCount());
    if (m_search->text().isEmpty())
        setStatus(lines);
    else if (m_searching && m_matches.isEmpty())
        setStatus(tr("Searching…") + QStringLiteral(" · ") + lines);
    else
        setStatus(tr("%n matching line(s)", nullptr, int(m_matches.size())) + QStringLiteral(" · ") + lines);
}

void LogsPanel::startSearch()
{
    m_matches.clear();
    m_searchedTo = 0;
    runSearch(0, false);
}

void LogsPanel::continueSearch()
{
    if (m_searching) {
        m_searchMore.start();   // after the one under way
        return;
    }
    if (m_lines->rowCount() > m_searchedTo)
        runSearch(m_searchedTo, true);
}

void LogsPanel::runSearch(qint64 firstLine, bool append)
{
    if (m_cancelSearch)
        *m_cancelSearch = true;
    m_searching = false;
    Logs::SearchOptions options;
    options.pattern = m_search->text();
    options.regex = m_regex->isChecked();
    options.caseInsensitive = m_anyCase->isChecked();
    options.firstLine = firstLine;
    if (options.pattern.isEmpty() || m_lines->file().isEmpty()) {
        showMatches();
        updateStatus();
        return;
    }
    if (const auto valid = Logs::checkPattern(options); !valid) {
        setStatus(valid.error().message);
        return;
    }
    // A copy of the index: the model goes on indexing a followed log meanwhile.
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    m_cancelSearch = cancel;
    m_searching = true;
    const Logs::LineIndex index = m_lines->lineIndex();
    const qint64 searchedTo = index.lineCount();
    QPointer<LogsPanel> self(this);
    auto *watcher = new QFutureWatcher<Result<Logs::SearchOutcome>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, cancel, append, searchedTo] {
        watcher->deleteLater();
        const Result<Logs::SearchOutcome> outcome = watcher->result();
        if (*cancel)
            return;   // a newer search replaced it
        m_searching = false;
        if (!outcome) {
            setStatus(outcome.error().message);
            return;
        }
        if (append)
            m_matches += outcome->lines;
        else
            m_matches = outcome->lines;
        m_searchedTo = searchedTo;
        updateStatus();
        showMatches();
    });
    if (!append)
        updateStatus();
    watcher->setFuture(QtConcurrent::run([index, options, cancel, self]() -> Result<Logs::SearchOutcome> {
        return Logs::searchLines(index, options, cancel.get(), [self, cancel](qint64 done, qint64 total) {
            if (*cancel || total <= 0)
                return;
            QMetaObject::invokeMethod(self, [self, cancel, done, total] {
                if (self && !*cancel)
                    self->setStatus(tr("Searching… %1 %").arg(100 * done / total));
            });
        });
    }));
}

void LogsPanel::showMatches()
{
    m_matchesModel->setMatches(m_matches);
    const bool only = m_onlyMatching->isChecked() && !m_search->text().isEmpty();
    QAbstractItemModel *wanted = only ? static_cast<QAbstractItemModel *>(m_matchesModel) : m_lines;
    if (m_view->model() != wanted)
        m_view->setModel(wanted);
}

void LogsPanel::goToLine(qint64 line)
{
    int row = int(line);
    if (m_view->model() == m_matchesModel)
        row = int(std::lower_bound(m_matches.cbegin(), m_matches.cend(), line) - m_matches.cbegin());
    const QModelIndex index = m_view->model()->index(row, 0);
    if (!index.isValid())
        return;
    m_follow->setChecked(false);   // the reader has gone somewhere: the view stays there
    m_view->setCurrentIndex(index);
    m_view->scrollTo(index, QAbstractItemView::PositionAtCenter);
}

void LogsPanel::findNext()
{
    if (m_matches.isEmpty())
        return;
    const auto next = std::upper_bound(m_matches.cbegin(), m_matches.cend(), currentLine());
    goToLine(next == m_matches.cend() ? m_matches.first() : *next);   // wraps around
}

void LogsPanel::findPrevious()
{
    if (m_matches.isEmpty())
        return;
    const qint64 current = currentLine() < 0 ? std::numeric_limits<qint64>::max() : currentLine();
    const auto before = std::lower_bound(m_matches.cbegin(), m_matches.cend(), current);
    goToLine(before == m_matches.cbegin() ? m_matches.last() : *(before - 1));
}

void LogsPanel::jumpToFirstTraceback()
{
    Logs::SearchOptions options;
    options.pattern = QStringLiteral("Traceback (most recent call last)");
    const auto found = Logs::searchLines(m_lines->lineIndex(), options);
    if (!found || found->lines.isEmpty()) {
        setStatus(tr("No traceback in this log."));
        return;
    }
    if (m_view->model() != m_lines) {
        m_onlyMatching->setChecked(false);
        showMatches();
    }
    goToLine(found->lines.first());
}

bool LogsPanel::saveTo(const QString &path, QString *error) const
{
    const QString from = m_lines->file();
    if (from.isEmpty()) {
        if (error)
            *error = tr("There is no log to save.");
        return false;
    }
    QFile::remove(path);
    if (!QFile::copy(from, path)) {
        if (error)
            *error = tr("Cannot save the log to %1; choose another folder.").arg(path);
        return false;
    }
    return true;
}

} // namespace Starforge::Gui
