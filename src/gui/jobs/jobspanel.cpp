#include "gui/jobs/jobspanel.h"

#include "core/job/jobactions.h"
#include "core/job/tracker.h"
#include "core/s3/s3client.h"
#include "core/session/session.h"
#include "gui/jobs/jobsfiltermodel.h"
#include "gui/palettefollow.h"
#include "gui/userprompts.h"
#include "models/jobsmodel.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPointer>
#include <QStackedWidget>
#include <QStyle>
#include <QTableView>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

namespace Starforge::Gui {

using Models::JobsModel;

JobsPanel::JobsPanel(UserPrompts *prompts, QWidget *parent)
    : QWidget(parent)
    , m_prompts(prompts)
    , m_model(new JobsModel(this))
    , m_proxy(new JobsFilterModel(this))
    , m_stack(new QStackedWidget(this))
    , m_message(new QLabel(this))
    , m_view(new QTableView(this))
    , m_filter(new QLineEdit(this))
    , m_stateFilter(new QComboBox(this))
    , m_summary(new QLabel(this))
    , m_stopAction(new QAction(style()->standardIcon(QStyle::SP_BrowserStop), tr("&Stop"), this))
    , m_refreshAction(new QAction(style()->standardIcon(QStyle::SP_BrowserReload), tr("&Refresh history"), this))
    , m_detailsAction(new QAction(tr("&Details"), this))
    , m_copyIdAction(new QAction(tr("&Copy job id"), this))
    , m_deleteAction(new QAction(style()->standardIcon(QStyle::SP_TrashIcon), tr("D&elete…"), this))
    , m_resubmitAction(new QAction(tr("Res&ubmit…"), this))
    , m_copyRayJobAction(new QAction(tr("Copy Ray&Job"), this))
    , m_openEventsAction(new QAction(tr("Open e&vents"), this))
    , m_openLogsAction(new QAction(tr("Open &logs"), this))
    , m_compareAction(new QAction(tr("Co&mpare runs…"), this))
{
    setObjectName(QStringLiteral("jobsPanel"));
    m_proxy->setSourceModel(m_model);

    m_message->setObjectName(QStringLiteral("jobsMessage"));
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    m_message->setMargin(12);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    followQuiet(m_message);

    m_stopAction->setObjectName(QStringLiteral("stopJobAction"));
    m_stopAction->setToolTip(tr("Stop the selected job: its logs and events are archived, then its RayJob is deleted"));
    m_refreshAction->setObjectName(QStringLiteral("refreshHistoryAction"));
    m_refreshAction->setToolTip(tr("Read the job history from the bucket again"));
    m_refreshAction->setShortcut(QKeySequence::Refresh);
    m_refreshAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_detailsAction->setObjectName(QStringLiteral("jobDetailsAction"));
    m_detailsAction->setToolTip(tr("Show the selected job in the Job dock: spec, status, pods and training progress"));
    m_detailsAction->setShortcut(QKeySequence(Qt::Key_Return));
    m_detailsAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_copyIdAction->setObjectName(QStringLiteral("copyJobIdAction"));
    m_deleteAction->setObjectName(QStringLiteral("deleteJobAction"));
    m_deleteAction->setShortcut(QKeySequence::Delete);
    m_deleteAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    m_resubmitAction->setObjectName(QStringLiteral("resubmitJobAction"));
    m_resubmitAction->setToolTip(tr("Open the submission wizard with this job's JobSpec"));
    m_copyRayJobAction->setObjectName(QStringLiteral("copyRayJobAction"));
    m_copyRayJobAction->setToolTip(tr("Copy the job's RayJob as JSON: the cluster's, else the archived one"));
    m_openEventsAction->setObjectName(QStringLiteral("openJobEventsAction"));
    m_openLogsAction->setObjectName(QStringLiteral("openJobLogsAction"));
    m_openEventsAction->setToolTip(tr("See the selected job's events on a timeline in the Events dock"));
    connect(m_openEventsAction, &QAction::triggered, this, [this] {
        if (const auto job = selectedJob())
            Q_EMIT eventsRequested(job->id);
    });
    m_openLogsAction->setToolTip(tr("Read the selected job's logs in the Logs dock"));
    connect(m_openLogsAction, &QAction::triggered, this, [this] {
        if (const auto job = selectedJob())
            Q_EMIT logsRequested(job->id);
    });
    addAction(m_refreshAction);
    addAction(m_deleteAction);
    addAction(m_detailsAction);

    auto *toolBar = new QToolBar(this);
    toolBar->setObjectName(QStringLiteral("jobsToolBar"));
    toolBar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toolBar->setIconSize(QSize(16, 16));
    toolBar->addAction(m_stopAction);
    toolBar->addAction(m_refreshAction);
    toolBar->widgetForAction(m_stopAction)->setObjectName(QStringLiteral("stopJobButton"));
    toolBar->widgetForAction(m_refreshAction)->setObjectName(QStringLiteral("refreshHistoryButton"));
    // Qt's overflow button, shown when the dock is too narrow for the toolbar, is an icon alone.
    if (auto *more = toolBar->findChild<QToolButton *>(QStringLiteral("qt_toolbar_ext_button"))) {
        more->setAccessibleName(tr("More job actions"));
    }

    m_filter->setObjectName(QStringLiteral("jobsFilter"));
    m_filter->setPlaceholderText(tr("Filter by id, name or message"));
    m_filter->setAccessibleName(tr("Filter jobs"));
    m_filter->setClearButtonEnabled(true);
    m_stateFilter->setObjectName(QStringLiteral("jobsStateFilter"));
    m_stateFilter->addItem(tr("All"), QVariant::fromValue(JobsFilterModel::StateFilter::All));
    m_stateFilter->addItem(tr("Active"), QVariant::fromValue(JobsFilterModel::StateFilter::Active));
    m_stateFilter->addItem(tr("Ended"), QVariant::fromValue(JobsFilterModel::StateFilter::Ended));
    m_stateFilter->setToolTip(
        tr("Active: submitting, pending or running. Ended: succeeded, failed or stopped, archived or being archived."));

    m_view->setObjectName(QStringLiteral("jobsView"));
    m_view->setAccessibleName(tr("Jobs"));
    m_view->setModel(m_proxy);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    // Several rows (Ctrl or Shift) for Compare runs; the other actions are for one job.
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->setAlternatingRowColors(true);
    m_view->setWordWrap(false);
    m_view->setTextElideMode(Qt::ElideRight);
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 8);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->horizontalHeader()->setHighlightSections(false);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(JobsModel::SubmittedColumn, Qt::DescendingOrder); // newest first
    const int em = m_view->fontMetrics().horizontalAdvance(QLatin1Char('m'));
    m_view->setColumnWidth(JobsModel::IdColumn, 6 * em);
    m_view->setColumnWidth(JobsModel::NameColumn, 16 * em);
    m_view->setColumnWidth(JobsModel::OwnerColumn, 8 * em);
    QFont bold = m_view->font();
    bold.setBold(true);
    m_view->setColumnWidth(JobsModel::StateColumn, QFontMetrics(bold).horizontalAdvance(tr("Archived (Succeeded)")) + em);
    m_view->setColumnWidth(JobsModel::PoolsColumn, 10 * em);
    m_view->setColumnWidth(JobsModel::SubmittedColumn, 7 * em);
    m_view->setColumnWidth(JobsModel::DurationColumn, 7 * em);
    m_view->setColumnWidth(JobsModel::EndedColumn, 6 * em);

    m_summary->setObjectName(QStringLiteral("jobsSummary"));
    followQuiet(m_summary);

    auto *jobsPage = new QWidget(this);
    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(0, 0, 0, 0);
    bar->addWidget(toolBar);
    bar->addWidget(m_filter, 1);
    // On Linux a combo box's accessible name is its current text; what it is for comes from
    // its buddy label (AT-SPI's labelled-by relation).
    auto *stateLabel = new QLabel(tr("Show:"), jobsPage);
    stateLabel->setObjectName(QStringLiteral("jobsStateFilterLabel"));
    stateLabel->setBuddy(m_stateFilter);
    m_stateFilter->setAccessibleName(tr("Jobs shown"));
    bar->addWidget(stateLabel);
    bar->addWidget(m_stateFilter);
    auto *jobsLayout = new QVBoxLayout(jobsPage);
    jobsLayout->setContentsMargins(4, 2, 4, 2);
    jobsLayout->setSpacing(2);
    jobsLayout->addLayout(bar);
    jobsLayout->addWidget(m_view, 1);
    jobsLayout->addWidget(m_summary);
    m_stack->addWidget(m_message);
    m_stack->addWidget(jobsPage);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_stack);

    connect(m_filter, &QLineEdit::textChanged, this, [this](const QString &text) {
        m_proxy->setFilterText(text);
        updateSummary();
    });
    connect(m_stateFilter, &QComboBox::currentIndexChanged, this, [this] {
        m_proxy->setStateFilter(m_stateFilter->currentData().value<JobsFilterModel::StateFilter>());
        updateSummary();
    });
    connect(m_stopAction, &QAction::triggered, this, &JobsPanel::stopSelected);
    connect(m_refreshAction, &QAction::triggered, this, &JobsPanel::refreshHistory);
    connect(m_detailsAction, &QAction::triggered, this, &JobsPanel::showSelectedDetails);
    connect(m_copyIdAction, &QAction::triggered, this, [this] {
        if (const auto job = selectedJob())
            QApplication::clipboard()->setText(job->id);
    });
    connect(m_deleteAction, &QAction::triggered, this, &JobsPanel::deleteSelected);
    connect(m_copyRayJobAction, &QAction::triggered, this, &JobsPanel::copySelectedRayJob);
    connect(m_resubmitAction, &QAction::triggered, this, [this] {
        if (const auto job = selectedJob(); job && !job->jobSpec.isEmpty())
            Q_EMIT resubmitRequested(job->jobSpec);
    });
    m_compareAction->setObjectName(QStringLiteral("compareRunsAction"));
    m_compareAction->setToolTip(tr("Overlay the selected jobs' training metrics on one plot (select several with Ctrl or Shift)"));
    m_compareAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_M));
    m_compareAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    addAction(m_compareAction);
    connect(m_compareAction, &QAction::triggered, this, [this] {
        const QList<Job::JobRecord> jobs = selectedJobs();
        if (jobs.size() >= 2) Q_EMIT compareRequested(jobs);
    });
    connect(m_view, &QTableView::doubleClicked, this, &JobsPanel::showDetails);
    connect(m_view, &QWidget::customContextMenuRequested, this, &JobsPanel::showContextMenu);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        updateActions();
        const auto job = selectedJob();
        const QString id = job ? job->id : QString();
        if (id != m_selectedJob) {
            m_selectedJob = id;
            Q_EMIT selectedJobChanged(id);
        }
    });
    // A job asked for before the tracker listed it is selected when its row comes.
    connect(m_proxy, &QAbstractItemModel::rowsInserted, this, [this] {
        if (!m_pendingSelection.isEmpty()) selectJob(m_pendingSelection);
    });
    // A row's state changes under the selection (Running -> Archived): Stop follows.
    connect(m_proxy, &QAbstractItemModel::dataChanged, this, &JobsPanel::updateActions);
    for (auto signal : { &QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved }) {
        connect(m_model, signal, this, &JobsPanel::updateSummary);
    }
    connect(m_model, &QAbstractItemModel::dataChanged, this, &JobsPanel::updateSummary);
    connect(m_model, &JobsModel::historyLoadingChanged, this, [this] {
        updateActions();
        updateSummary();
    });
    connect(m_model, &JobsModel::historyFailed, this,
            [this](const QString &message) { Q_EMIT statusMessage(tr("Job history: %1").arg(message)); });
    connect(m_model, &JobsModel::historyLoaded, this, [this](int, const QStringList &unreadable) {
        if (!unreadable.isEmpty()) {
            Q_EMIT statusMessage(tr("Archived job records that could not be read: %1").arg(unreadable.join(QStringLiteral("; "))));
        }
    });

    setMessage(tr("Jobs appear here once the window is connected to a cluster."));
}

JobsPanel::~JobsPanel() = default;

void JobsPanel::setSession(Session *session)
{
    if (m_session) disconnect(m_session, nullptr, this, nullptr);
    m_session = session;
    if (m_session) {
        connect(m_session, &Session::partsChanged, this, &JobsPanel::syncWithSession);
        connect(m_session, &Session::partsAboutToBeRemoved, this, [this] {
            m_model->setTracker(nullptr);
            m_model->setProgressSource(nullptr);
            m_model->setDiagnosisSource(nullptr);
            m_model->setHistoryStore(nullptr);
        });
        connect(m_session, &Session::stateChanged, this, &JobsPanel::syncWithSession);
        connect(m_session, &Session::featuresChanged, this, &JobsPanel::syncWithSession);
        connect(m_session, &QObject::destroyed, this, [this] { m_session = nullptr; });
    }
    syncWithSession();
}

QString JobsPanel::sessionPlaceholder() const
{
    if (!m_session) return tr("Jobs appear here once the window is connected to a cluster.");
    switch (m_session->state()) {
    case Session::State::Connecting:
        return tr("Connecting…");
    case Session::State::Reconnecting:
        return tr("Reconnecting…");
    case Session::State::Disconnected:
        return tr("Jobs appear here once the window is connected to a cluster (the status bar says why it is not).");
    case Session::State::Connected:
    case Session::State::Degraded:
    case Session::State::Lost:
        break;
    }
    // Up (or briefly lost) without a bucket: tracking and history need one.
    const auto bucket = m_session->bucket();
    return tr("Job tracking and history need the profile's object storage. Set FORGE_S3_ENDPOINT, FORGE_S3_BUCKET, "
              "FORGE_S3_ACCESS_KEY and FORGE_S3_SECRET_KEY in File › Connection Profiles (the keys are kept in the "
              "keychain), or in the environment.\n\n%1")
        .arg(bucket ? QString() : bucket.error().message);
}

void JobsPanel::syncWithSession()
{
    const bool up = m_session && (m_session->isUp() || m_session->state() == Session::State::Lost);
    S3::S3Client *s3 = up ? m_session->s3() : nullptr;
    if (!s3) {
        if (m_model->tracker() || m_model->historyStore() || m_message->text() != sessionPlaceholder()) setMessage(sessionPlaceholder());
        return;
    }
    if (m_model->historyStore() != s3) setHistoryStore(s3);
    m_model->setProgressSource(m_session->progress());
    m_model->setDiagnosisSource(m_session->pendingDiagnoser());
    Job::JobTracker *tracker = m_session->jobs();
    if (m_model->tracker() != tracker) {
        setTracker(tracker);
        if (tracker) {
            connect(tracker, &Job::JobTracker::archiveFailed, this, [this](const QString &id, const QString &message) {
                Q_EMIT statusMessage(tr("Could not archive job %1 (its RayJob is kept; trying again later): %2").arg(id, message));
            });
        }
    }
}

void JobsPanel::setMessage(const QString &text)
{
    m_model->setTracker(nullptr);
    m_model->setHistoryStore(nullptr);
    m_message->setText(text);
    m_stack->setCurrentWidget(m_message);
    updateActions();
    updateSummary();
}

void JobsPanel::setHistoryStore(S3::S3Client *s3)
{
    m_model->setHistoryStore(s3);
    if (s3) {
        m_stack->setCurrentIndex(1);
        m_model->refreshHistory();
    }
    updateActions();
}

void JobsPanel::setTracker(Job::JobTracker *tracker)
{
    m_model->setTracker(tracker);
    updateActions();
    updateSummary();
}

QString JobsPanel::messageText() const
{
    return m_message->text();
}

bool JobsPanel::isShowingJobs() const
{
    return m_stack->currentWidget() != m_message;
}

QModelIndex JobsPanel::selectedIndex() const
{
    // The one job the single-job actions are for: the current row when it is selected.
    const QModelIndexList rows = m_view->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return {};
    const QModelIndex current = m_view->currentIndex();
    if (current.isValid() && m_view->selectionModel()->isRowSelected(current.row(), QModelIndex()))
        return current.siblingAtColumn(0);
    return rows.first();
}

std::optional<Job::JobRecord> JobsPanel::selectedJob() const
{
    const QModelIndex selected = selectedIndex();
    if (!selected.isValid())
        return std::nullopt;
    return selected.data(JobsModel::RecordRole).value<Job::JobRecord>();
}

QList<Job::JobRecord> JobsPanel::selectedJobs() const
{
    QList<Job::JobRecord> out;
    QModelIndexList rows = m_view->selectionModel()->selectedRows();
    std::sort(rows.begin(), rows.end(), [](const QModelIndex &a, const QModelIndex &b) { return a.row() < b.row(); });
    for (const QModelIndex &row : std::as_const(rows)) out << row.data(JobsModel::RecordRole).value<Job::JobRecord>();
    return out;
}

bool JobsPanel::selectJob(const QString &jobId)
{
    const QModelIndexList found = m_proxy->match(m_proxy->index(0, 0), JobsModel::JobIdRole, jobId, 1, Qt::MatchExactly);
    if (found.isEmpty()) {
        m_pendingSelection = jobId;
        return false;
    }
    m_pendingSelection.clear();
    m_view->selectionModel()->setCurrentIndex(found.first(), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_view->scrollTo(found.first());
    return true;
}

void JobsPanel::updateActions()
{
    const QModelIndexList rows = m_view->selectionModel()->selectedRows();
    m_compareAction->setEnabled(rows.size() >= 2);
    // With several rows selected, the actions for one job are off: which one would be unclear.
    const QModelIndex selected = rows.size() == 1 ? selectedIndex() : QModelIndex();
    const bool running = selected.isValid() && m_model->tracker() && selected.data(JobsModel::LiveRole).toBool()
        && selected.data(JobsModel::ActiveRole).toBool();
    const bool mine = selected.isValid() && selected.data(JobsModel::MineRole).toBool();
    m_stopAction->setEnabled(running && mine);
    // A colleague's job: Stop stays off, and its tooltip says why (the owner column's words).
    m_stopAction->setToolTip(running && !mine
                                 ? selected.siblingAtColumn(JobsModel::OwnerColumn).data(Qt::ToolTipRole).toString()
                                 : tr("Stop the selected job: its logs and events are archived, then its RayJob is deleted"));
    m_detailsAction->setEnabled(selected.isValid());
    m_openLogsAction->setEnabled(selected.isValid());
    m_openEventsAction->setEnabled(selected.isValid());
    m_copyIdAction->setEnabled(selected.isValid());
    m_copyRayJobAction->setEnabled(selected.isValid() && m_session && m_session->kube());
    const auto record = selected.isValid() ? selected.data(JobsModel::RecordRole).value<Job::JobRecord>() : Job::JobRecord{};
    m_resubmitAction->setEnabled(selected.isValid() && !record.jobSpec.isEmpty());
    // Deleting removes the archive too, so a job still being archived waits for it.
    const bool settled = selected.isValid() && (record.archived || selected.data(JobsModel::ActiveRole).toBool());
    m_deleteAction->setEnabled(settled && mine && m_session && m_session->kube() && m_session->s3() && !m_deleting);
    m_deleteAction->setToolTip(selected.isValid() && !mine
                                   ? selected.siblingAtColumn(JobsModel::OwnerColumn).data(Qt::ToolTipRole).toString()
                                   : tr("Delete the selected job for good: its RayJob, its logs and events in the bucket (Delete)"));
    m_refreshAction->setEnabled(isShowingJobs() && !m_model->isHistoryLoading());
}

void JobsPanel::updateSummary()
{
    const int total = m_model->rowCount();
    int active = 0;
    for (int row = 0; row < total; ++row) {
        if (m_model->index(row, 0).data(JobsModel::ActiveRole).toBool())
            ++active;
    }
    QStringList parts;
    if (total == 0) {
        parts << (m_model->isHistoryLoading()
                      ? tr("Reading the job history…")
                      : tr("No jobs yet: File › New Job (Ctrl+N) submits one, as does starforge-cli submit SPEC"));
    } else {
        parts << (total == 1 ? tr("1 job") : tr("%1 jobs").arg(total)) + tr(": %1 active, %2 ended").arg(active).arg(total - active);
        if (m_proxy->rowCount() != total)
            parts << tr("%1 shown").arg(m_proxy->rowCount());
        if (m_model->isHistoryLoading())
            parts << tr("reading the history…");
    }
    // Before the operator probe answers, or when the cluster has no KubeRay.
    if (!m_model->tracker() && isShowingJobs())
        parts << tr("not following live jobs");
    m_summary->setText(parts.join(QStringLiteral("; ")));
}

void JobsPanel::stopSelected()
{
    const QModelIndexList rows = m_view->selectionModel()->selectedRows();
    Job::JobTracker *tracker = m_model->tracker();
    if (rows.isEmpty() || !tracker || !rows.first().data(JobsModel::LiveRole).toBool() || !rows.first().data(JobsModel::MineRole).toBool())
        return;
    const auto job = rows.first().data(JobsModel::RecordRole).value<Job::JobRecord>();
    if (!m_prompts->confirm(this, tr("Stop job"),
                            tr("Stop job %1 (%2)?\n\nIts logs and events are archived to the bucket first; then its RayJob is "
                               "deleted and Ray stops the job. This cannot be undone.")
                                .arg(job.id, job.rayJobName))) {
        return;
    }
    Q_EMIT statusMessage(tr("Stopping job %1: archiving its logs and events…").arg(job.id));
    m_stopAction->setEnabled(false);
    tracker->stopJob(job.id, [self = QPointer<JobsPanel>(this), id = job.id](Result<Job::JobRecord> stopped) {
        if (!self)
            return;
        if (!stopped) {
            Q_EMIT self->statusMessage(tr("Could not stop job %1: %2").arg(id, stopped.error().message));
        } else {
            Q_EMIT self->statusMessage(
                tr("Job %1 %2; its logs and events are under jobs/%1/ in the bucket.").arg(id, stopped->displayState().toLower()));
        }
        self->updateActions();
    });
}

void JobsPanel::deleteSelected()
{
    const auto job = selectedJob();
    if (!job || !m_deleteAction->isEnabled() || !m_session || !m_session->kube() || !m_session->s3())
        return;
    if (!m_prompts->confirm(this, tr("Delete job"),
                            tr("Delete job %1 (%2) for good?\n\nIts RayJob, if it still runs, is deleted without an archive, and its "
                               "logs, events and record are removed from the bucket. This cannot be undone.")
                                .arg(job->id, job->rayJobName))) {
        return;
    }
    m_deleting = true;
    updateActions();
    Q_EMIT statusMessage(tr("Deleting job %1…").arg(job->id));
    const QString ns = m_session->ns();
    const Job::Viewer viewer = m_session->viewer();
    Kube::KubeClient *kube = m_session->kube();
    S3::S3Client *s3 = m_session->s3();
    const QString id = job->id;
    const auto finish = [self = QPointer<JobsPanel>(this), id](const QString &message) {
        if (!self)
            return;
        self->m_deleting = false;
        Q_EMIT self->statusMessage(message);
        self->m_model->refreshHistory();   // the archive is gone: its row goes with the refresh
        self->updateActions();
    };
    Job::fetchCheckedSnapshot(kube, Job::SnapshotRequest::of(ns, id), this, [=, this](Result<Job::JobSnapshot> snapshot) {
        if (!snapshot) {
            finish(tr("Could not delete job %1: %2").arg(id, snapshot.error().message));
            return;
        }
        Job::deleteJob(kube, s3, ns, viewer, *snapshot, id, this, [finish, id](Result<Job::DeletedJob> deleted) {
            finish(deleted ? tr("Job %1 deleted: %n archived object(s) removed.", nullptr, deleted->archiveObjectsDeleted).arg(id)
                           : tr("Could not delete job %1: %2").arg(id, deleted.error().message));
        });
    });
}

void JobsPanel::copySelectedRayJob()
{
    const auto job = selectedJob();
    if (!job || !m_session || !m_session->kube())
        return;
    const auto copy = [self = QPointer<JobsPanel>(this), id = job->id](const QJsonObject &rayJob) {
        if (!self)
            return;
        QApplication::clipboard()->setText(QString::fromUtf8(QJsonDocument(rayJob).toJson(QJsonDocument::Indented)));
        Q_EMIT self->statusMessage(tr("The RayJob of job %1 is on the clipboard.").arg(id));
    };
    S3::S3Client *s3 = m_session->s3();
    Job::fetchCheckedSnapshot(m_session->kube(), Job::SnapshotRequest::of(m_session->ns(), job->id), this,
                              [this, copy, s3, id = job->id](Result<Job::JobSnapshot> snapshot) {
        if (snapshot && snapshot->rayJob) {
            copy(*snapshot->rayJob);
            return;
        }
        if (!s3) {
            Q_EMIT statusMessage(tr("Job %1 has no RayJob on the cluster and there is no bucket to read its archive from.").arg(id));
            return;
        }
        // Gone from the cluster: the archived one, from objects.json.
        S3::S3Reply *reply = s3->getObject(Job::ArchiveKeys::objects(id));
        connect(reply, &S3::S3Reply::finished, this, [this, reply, copy, id] {
            reply->deleteLater();
            const QJsonObject rayJob = reply->result() ? QJsonDocument::fromJson(reply->data()).object().value(QLatin1String("rayJob")).toObject()
                                                       : QJsonObject();
            if (rayJob.isEmpty()) {
                Q_EMIT statusMessage(tr("Job %1's RayJob is neither on the cluster nor in its archive.").arg(id));
                return;
            }
            copy(rayJob);
        });
    });
}

void JobsPanel::refreshHistory()
{
    m_model->refreshHistory();
}

void JobsPanel::showSelectedDetails()
{
    const QModelIndexList rows = m_view->selectionModel()->selectedRows();
    if (!rows.isEmpty())
        showDetails(rows.first());
}

void JobsPanel::showDetails(const QModelIndex &proxyIndex)
{
    if (!proxyIndex.isValid())
        return;
    Q_EMIT detailsRequested(proxyIndex.data(JobsModel::JobIdRole).toString());
}

void JobsPanel::showContextMenu(const QPoint &pos)
{
    const QModelIndex index = m_view->indexAt(pos);
    // A click outside the selection selects that row alone; inside, the selection stays (for
    // Compare runs).
    if (index.isValid() && !m_view->selectionModel()->isRowSelected(index.row(), QModelIndex()))
        m_view->selectionModel()->select(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    updateActions();
    // popup(), not exec(): no nested event loop.
    auto *menu = new QMenu(this);
    menu->setObjectName(QStringLiteral("jobsContextMenu"));
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->addAction(m_stopAction);
    menu->addAction(m_detailsAction);
    menu->addAction(m_copyIdAction);
    menu->addAction(m_copyRayJobAction);
    menu->addAction(m_resubmitAction);
    menu->addAction(m_openEventsAction);
    menu->addAction(m_openLogsAction);
    menu->addAction(m_compareAction);
    menu->addSeparator();
    menu->addAction(m_deleteAction);
    menu->addSeparator();
    menu->addAction(m_refreshAction);
    menu->popup(m_view->viewport()->mapToGlobal(pos));
}

} // namespace Starforge::Gui
