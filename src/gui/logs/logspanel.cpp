#include "gui/logs/logspanel.h"

#include "core/cluster/diagnosis.h"
#include "core/job/archiver.h"
#include "core/job/jobactions.h"
#include "core/job/jobsnapshot.h"
#include "core/logs/logsearch.h"
#include "core/s3/s3client.h"
#include "core/session/session.h"
#include "gui/logs/matchscrollbar.h"
#include "models/jobsmodel.h"
#include "models/loglinesmodel.h"
#include "models/tones.h"

#include <QAction>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QFile>
#include <QFontDatabase>
#include <QFutureWatcher>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QPushButton>
#include <QScopedValueRollback>
#include <QSettings>
#include <QShortcut>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QTemporaryFile>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <algorithm>
#include <tuple>

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

// The settings key of Wrap lines (the application's own QSettings: a view preference, not a
// profile setting).
const char WrapSetting[] = "logs/wrapLines";

// The log's view: one column of rows without headers or grid. A table, not a QListView: a list
// view lays all its rows out again on every insert (a step per row, about 70 ms at a million
// rows), while a table's rows are sections of its vertical header, and appending sections is
// cheap whatever the count (bench_logfollow, docs/logs.md "Following a fast log"). Ctrl+C copies
// the selected lines (QAbstractItemView would copy the current row's shown text only, a
// progress line's marker rather than the line).
class LogView final : public QTableView
{
public:
    LogView(QWidget *parent, std::function<void()> copy, std::function<void()> resized)
        : QTableView(parent)
        , m_copy(std::move(copy))
        , m_resized(std::move(resized))
    {
        setShowGrid(false);
        horizontalHeader()->hide();
        horizontalHeader()->setStretchLastSection(true);
        verticalHeader()->hide();
        verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
        setSelectionBehavior(QAbstractItemView::SelectRows);
        setWordWrap(false);
        setCornerButtonEnabled(false);
        setTabKeyNavigation(false);
    }

    // One row height for the font: every row has it unless wrapped.
    void fitRowHeight() { verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 2); }

protected:
    void keyPressEvent(QKeyEvent *event) override
    {
        if (event == QKeySequence::Copy) {
            m_copy();
            event->accept();
            return;
        }
        QTableView::keyPressEvent(event);
    }

    void resizeEvent(QResizeEvent *event) override
    {
        QTableView::resizeEvent(event);
        m_resized();
    }

private:
    std::function<void()> m_copy;
    std::function<void()> m_resized;
};

// Colours by severity, readable on light and dark palettes. With the view's word wrap on, a
// row is as tall as its line wrapped at the view's width.
class SeverityDelegate final : public QStyledItemDelegate
{
public:
    explicit SeverityDelegate(QAbstractItemView *view)
        : QStyledItemDelegate(view)
        , m_view(view)
    {
    }

    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override
    {
        if (!(option.features & QStyleOptionViewItem::WrapText))
            return QStyledItemDelegate::sizeHint(option, index);
        // The style wraps only within a valid rectangle (its height is not used): the view's
        // width.
        QStyleOptionViewItem wrapped = option;
        wrapped.rect = QRect(0, 0, std::max(50, m_view->viewport()->width()), 1);
        const QSize size = QStyledItemDelegate::sizeHint(wrapped, index);
        return QSize(wrapped.rect.width(), size.height());
    }

protected:
    void initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        switch (index.data(LogLinesModel::SeverityRole).value<LogLinesModel::Severity>()) {
        case LogLinesModel::Severity::Traceback: {
            const auto [text, background] = Tones::chip(Tones::Tone::Error, option->palette);
            option->backgroundBrush = background;
            option->palette.setColor(QPalette::Text, text);
            option->font.setBold(true);
            break;
        }
        case LogLinesModel::Severity::Error:
            option->palette.setColor(QPalette::Text, Tones::text(Tones::Tone::Error, option->palette));
            break;
        case LogLinesModel::Severity::Warning:
            option->palette.setColor(QPalette::Text, Tones::text(Tones::Tone::Warning, option->palette));
            break;
        case LogLinesModel::Severity::Progress:
            option->palette.setColor(QPalette::Text, Tones::text(Tones::Tone::Info, option->palette));
            break;
        case LogLinesModel::Severity::Plain:
            break;
        }
    }

private:
    QAbstractItemView *m_view;
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
    , m_wrap(new QAction(tr("&Wrap lines"), this))
    , m_wrapButton(new QToolButton(this))
    , m_copy(new QAction(tr("&Copy"), this))
    , m_contextMenu(new QMenu(this))
    , m_scrollBar(new MatchScrollBar(this))
    , m_search(new QLineEdit(this))
    , m_regex(check(this, tr("Re&gex"), "logsRegex", tr("The search is a regular expression (Perl syntax)")))
    , m_anyCase(check(this, tr("An&y case"), "logsAnyCase", tr("Match upper and lower case alike")))
    , m_onlyMatching(check(this, tr("Only &matching"), "logsOnlyMatching", tr("Show only the lines that match the search")))
    , m_previous(button(this, tr("Pre&vious"), "logsPreviousButton", tr("Previous match (Shift+F3)")))
    , m_next(button(this, tr("&Next"), "logsNextButton", tr("Next match (F3)")))
    , m_view(new LogView(
          this, [this] { copySelection(); }, [this] { fitWrappedRows(); }))
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
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    static_cast<LogView *>(m_view)->fitRowHeight();
    m_view->setItemDelegate(new SeverityDelegate(m_view));
    m_view->setVerticalScrollBar(m_scrollBar);
    connect(m_scrollBar, &QScrollBar::valueChanged, this, &LogsPanel::fitWrappedRows);
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    m_view->setAccessibleDescription(tr("Ctrl+C copies the selected lines; the context menu (Shift+F10) has Copy, Save and Wrap lines."));
    // Wrap lines: a toggle in the tool row and the context menu, Alt+W anywhere in the dock.
    m_wrap->setObjectName(QStringLiteral("logsWrapAction"));
    m_wrap->setCheckable(true);
    m_wrap->setShortcut(QKeySequence(Qt::ALT | Qt::Key_W));
    m_wrap->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_wrap->setToolTip(tr("Wrap long lines at the view's width instead of cutting them (Alt+W)"));
    addAction(m_wrap);
    m_wrapButton->setObjectName(QStringLiteral("logsWrapButton"));
    m_wrapButton->setDefaultAction(m_wrap);
    m_wrapButton->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_wrapButton->setAccessibleName(tr("Wrap lines"));
    m_wrapButton->setAccessibleDescription(tr("Wraps long lines at the view's width instead of cutting them (Alt+W)"));
    m_wrapButton->setFocusPolicy(Qt::StrongFocus);
    m_copy->setObjectName(QStringLiteral("logsCopyAction"));
    m_copy->setShortcut(QKeySequence::Copy);
    m_copy->setShortcutContext(Qt::WidgetShortcut); // shown in the menu; the view handles the key itself
    m_contextMenu->setObjectName(QStringLiteral("logsContextMenu"));
    m_contextMenu->setAccessibleName(tr("Log lines menu"));
    m_contextMenu->addAction(m_copy);
    QAction *saveAction = m_contextMenu->addAction(tr("&Save…"));
    saveAction->setObjectName(QStringLiteral("logsSaveAction"));
    m_contextMenu->addSeparator();
    m_contextMenu->addAction(m_wrap);
    m_status->setObjectName(QStringLiteral("logsStatus"));
    m_status->setAccessibleName(tr("Log status"));

    auto *top = new QHBoxLayout;
    top->addWidget(sourceLabel);
    top->addWidget(m_source, 1);
    top->addWidget(m_follow);
    top->addWidget(m_traceback);
    top->addWidget(m_wrapButton);
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
    connect(m_wrap, &QAction::toggled, this, &LogsPanel::setWrap);
    connect(m_copy, &QAction::triggered, this, &LogsPanel::copySelection);
    connect(saveAction, &QAction::triggered, m_save, &QPushButton::click);
    connect(m_view, &QWidget::customContextMenuRequested, this, &LogsPanel::showContextMenu);
    // The Menu key reaches customContextMenuRequested; Shift+F10 is the other key for it.
    auto *menuKey = new QShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F10), m_view, [this] { showContextMenu(QPoint(-1, -1)); });
    menuKey->setContext(Qt::WidgetShortcut);
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
        fitWrappedRows();
        updateStatus();
        updateOverview();
        // A search over a growing log takes in the new lines now and then, not on every batch.
        if (!m_search->text().isEmpty() && !m_searchMore.isActive())
            m_searchMore.start();
    });
    connect(m_lines, &LogLinesModel::failed, this, &LogsPanel::setStatus);
    connect(m_lines, &QAbstractItemModel::modelReset, this, &LogsPanel::updateOverview);
    connect(m_lines, &QAbstractItemModel::modelReset, this, [this] { m_wrappedRows.clear(); });
    m_wrap->setChecked(QSettings().value(QLatin1String(WrapSetting), false).toBool());
    setStatus(tr("Select a job in the Jobs panel to read its logs."));
}

void LogsPanel::setWrap(bool wrap)
{
    if (QSettings().value(QLatin1String(WrapSetting), false).toBool() != wrap)
        QSettings().setValue(QLatin1String(WrapSetting), wrap);
    // Wrapped rows differ in height, so the view lays them out one by one, in batches that keep
    // the window responsive; unwrapped rows share one height and lay out in constant time.
    m_view->setWordWrap(wrap);
    m_view->setTextElideMode(wrap ? Qt::ElideNone : Qt::ElideRight);
    if (wrap) {
        fitWrappedRows();
    } else {
        // The rows that were measured back to the one height.
        const int height = m_view->verticalHeader()->defaultSectionSize();
        const int rows = m_view->model()->rowCount();
        for (const int row : std::as_const(m_wrappedRows)) {
            if (row < rows)
                m_view->setRowHeight(row, height);
        }
        m_wrappedRows.clear();
    }
    if (m_follow->isChecked() && m_view->model() == m_lines)
        m_view->scrollToBottom();
}

QAbstractItemView *LogsPanel::view() const
{
    return m_view;
}

void LogsPanel::fitWrappedRows()
{
    // Only the rows that can be seen are measured: wrapping every row of a long log would read
    // and lay out all of it. Rows not seen yet keep one line's height, so the scroll bar is
    // approximate until they are; measuring can move rows, so it goes round until none change.
    if (!m_view->wordWrap() || m_fitting)
        return;
    // Resizing rows moves the scroll bar, which asks for this again: once is enough.
    const QScopedValueRollback<bool> fitting(m_fitting, true);
    for (int round = 0; round < 4; ++round) {
        const int height = m_view->viewport()->height();
        int first = m_view->rowAt(0);
        int last = m_view->rowAt(height - 1);
        const int rows = m_view->model()->rowCount();
        if (rows == 0)
            return;
        if (first < 0)
            first = 0;
        if (last < 0)
            last = rows - 1;
        const int page = last - first + 1;
        bool changed = false;
        for (int row = std::max(0, first - page); row <= std::min(rows - 1, last + page); ++row) {
            const int before = m_view->rowHeight(row);
            m_view->resizeRowToContents(row);
            if (m_view->rowHeight(row) != before) {
                changed = true;
                m_wrappedRows.insert(row);
            }
        }
        if (!changed)
            return;
    }
}

void LogsPanel::showContextMenu(const QPoint &at)
{
    m_copy->setEnabled(m_view->selectionModel() && m_view->selectionModel()->hasSelection());
    // From the keyboard the menu opens at the current row (or the view's middle).
    QPoint where = at;
    if (!m_view->viewport()->rect().contains(at)) {
        const QModelIndex current = m_view->currentIndex();
        const QRect row = current.isValid() ? m_view->visualRect(current) : QRect();
        where = m_view->viewport()->rect().contains(row.center()) ? row.center() : m_view->viewport()->rect().center();
    }
    m_contextMenu->popup(m_view->viewport()->mapToGlobal(where));
}

void LogsPanel::copySelection()
{
    const QItemSelectionModel *selection = m_view->selectionModel();
    if (!selection || !selection->hasSelection())
        return;
    // Ranges, not selectedRows(): a select-all over ten million rows is one range.
    QList<QPair<int, int>> ranges;
    for (const QItemSelectionRange &range : selection->selection())
        ranges.append({ range.top(), range.bottom() });
    std::sort(ranges.begin(), ranges.end());
    QStringList lines;
    int last = -1;
    bool cut = false;
    QAbstractItemModel *model = m_view->model();
    for (const auto &[top, bottom] : std::as_const(ranges)) {
        for (int row = std::max(top, last + 1); row <= bottom; ++row) {
            if (lines.size() >= MaxCopyLines) {
                cut = true;
                break;
            }
            lines << model->index(row, 0).data(LogLinesModel::RawTextRole).toString();
            last = row;
        }
        if (cut)
            break;
    }
    QGuiApplication::clipboard()->setText(lines.join(QLatin1Char('\n')) + QLatin1Char('\n'));
    setStatus(cut ? tr("Copied the first %n line(s) of the selection; Save… writes the whole log.", nullptr, int(lines.size()))
                  : tr("Copied %n line(s).", nullptr, int(lines.size())));
}

void LogsPanel::updateOverview()
{
    m_scrollBar->setOverviewShown(m_view->model() == m_lines && !m_search->text().isEmpty());
    m_scrollBar->setMatches(m_matches, m_lines->rowCount());
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
    m_follower.reset();
    m_refresh.stop();
    m_lines->setFile(QString());
    m_spool.reset();
    m_matches.clear();
    m_searchedTo = 0;
    m_searchMore.stop();
    m_matchesModel->setMatches({});
    updateOverview();
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
            m_sources.append({ tr("%1: %2/%3 (archived, %4)").arg(l.role, l.pod, l.container, QLocale().formattedDataSize(l.size)),
                               {},
                               {},
                               false,
                               l.key,
                               false,
                               {} });
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
        // The driver's log (the submitter's) first, then the head's, then the workers' (by
        // group, then name: the merged view's fixed order).
        struct Found
        {
            int rank;
            QString role;
            QString pod;
            QJsonObject json;
        };
        QList<Found> pods;
        for (const QJsonObject &pod : std::as_const(snapshot->pods)) {
            const Cluster::PodInfo info = Cluster::PodInfo::fromJson(pod);
            const QString role = info.role();
            pods.append({ role == u"submitter" ? 0 : role == u"head" ? 1 : 2, role, info.view.name, pod });
        }
        std::sort(pods.begin(), pods.end(),
                  [](const Found &a, const Found &b) { return std::tie(a.rank, a.role, a.pod) < std::tie(b.rank, b.role, b.pod); });
        QHash<QString, int> perRole;
        for (const Found &pod : std::as_const(pods)) {
            // The tag: "head", "submitter", "worker gpu-0" (the n-th pod of the group).
            QString tag = pod.role;
            if (pod.rank == 2)
                tag += QStringLiteral("-%1").arg(perRole[pod.role]++);
            const QJsonArray containers = pod.json.value(QLatin1String("spec")).toObject().value(QLatin1String("containers")).toArray();
            const QJsonArray statuses
                = pod.json.value(QLatin1String("status")).toObject().value(QLatin1String("containerStatuses")).toArray();
            for (const QJsonValue &c : containers) {
                const QString container = c.toObject().value(QLatin1String("name")).toString();
                const QString label
                    = containers.size() > 1 ? tr("%1: %2/%3").arg(pod.role, pod.pod, container) : tr("%1: %2").arg(pod.role, pod.pod);
                const QByteArray sourceTag = (containers.size() > 1 ? tag + u'/' + container : tag).toUtf8();
                const Source current { label, pod.pod, container, false, {}, false, sourceTag };
                m_sources.append(current);
                // A container that restarted has its previous run's log (why it crashed).
                for (const QJsonValue &st : statuses) {
                    const QJsonObject status = st.toObject();
                    if (status.value(QLatin1String("name")).toString() != container)
                        continue;
                    const bool restarted = status.value(QLatin1String("restartCount")).toInt() > 0
                        || status.value(QLatin1String("lastState")).toObject().contains(QLatin1String("terminated"));
                    if (restarted)
                        m_sources.append(
                            Source { tr("%1 (previous container)").arg(label), pod.pod, container, true, {}, false, sourceTag });
                }
            }
        }
        int live = 0;
        for (const Source &source : std::as_const(m_sources))
            live += source.previous ? 0 : 1;
        if (live > 1) {
            m_sources.append(Source { tr("All pods (merged)"), {}, {}, false, {}, true, {} });
        }
        for (const Source &source : std::as_const(m_sources))
            m_source->addItem(source.label);
        if (m_sources.isEmpty()) {
            setStatus(tr("Job %1 has no pods yet.").arg(id));
            return;
        }
        openSource(0);
    });
}

bool LogsPanel::openSpool()
{
    m_spool = std::make_unique<QTemporaryFile>(Job::temporaryLogTemplate());
    if (!m_spool->open()) {
        setStatus(tr("Cannot make a file for the log: %1.").arg(m_spool->errorString()));
        return false;
    }
    return true;
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
    if (!openSpool())
        return;
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
    QList<Logs::LogFollower::Source> follow;
    if (source.merged) {
        for (const Source &s : sources) {
            if (!s.merged && !s.previous && s.archiveKey.isEmpty())
                follow.append({ s.pod, s.container, s.tag, false });
        }
    } else {
        follow.append({ source.pod, source.container, source.tag, source.previous });
    }
    startFollowing(m_session->kube(), m_session->ns(), follow);
}

void LogsPanel::followLive(Kube::KubeClient *client, const QString &ns, const QList<Logs::LogFollower::Source> &sources,
                           const QString &label)
{
    closeSource();
    m_sources = { Source { label, {}, {}, false, {}, false, {} } };
    m_source->clear();
    m_source->addItem(label);
    if (openSpool())
        startFollowing(client, ns, sources);
}

void LogsPanel::startFollowing(Kube::KubeClient *client, const QString &ns, const QList<Logs::LogFollower::Source> &sources)
{
    m_lines->setFile(m_spool->fileName());
    m_follower = std::make_unique<Logs::LogFollower>(client, ns, sources, m_spool.get());
    m_follower->setBackoff(m_backoff);
    // Lines are written to the spool as they come; the model takes them in once per tick (one
    // insert of all the rows that came meanwhile), so the view's work does not grow with the rate.
    connect(m_follower.get(), &Logs::LogFollower::appended, this, [this] {
        if (!m_refresh.isActive())
            m_refresh.start();
    });
    connect(m_follower.get(), &Logs::LogFollower::interrupted, this, [this](const QString &message) {
        setStatus(tr("The log stream was interrupted (%1); reconnecting without losing or repeating a line.").arg(message));
    });
    connect(m_follower.get(), &Logs::LogFollower::failed, this, &LogsPanel::setStatus);
    m_follower->start();
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
    if (m_view->model() != wanted) {
        m_view->setModel(wanted);
        m_wrappedRows.clear(); // a new model: new sections, all of one height
        fitWrappedRows();
    }
    updateOverview();
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
    // untranslated: Python's words in the log, searched for
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
