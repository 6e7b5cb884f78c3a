#include "gui/jobs/jobdetailpanel.h"

#include "core/cluster/capacity.h"
#include "core/cluster/diagnosis.h"
#include "core/job/archiver.h"
#include "core/job/jobactions.h"
#include "core/job/progressfollower.h"
#include "core/kube/resources.h"
#include "core/s3/s3client.h"
#include "core/session/session.h"
#include "gui/jobs/progressplot.h"
#include "gui/palettefollow.h"
#include "models/checkpointsmodel.h"
#include "models/jobpodsmodel.h"
#include "models/jobsmodel.h"

#include <QAction>
#include <QClipboard>
#include <QComboBox>
#include <QGuiApplication>
#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QItemSelectionModel>
#include <QLocale>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace Starforge::Gui {

using Models::JobsModel;

namespace {

QString when(const QDateTime &t)
{
    return t.isValid() ? QLocale().toString(t.toLocalTime(), QLocale::ShortFormat) : JobDetailPanel::tr("—");
}

QString row(const QString &label, const QString &valueHtml)
{
    return QStringLiteral("<tr><td style='padding-right:10px; white-space:nowrap'><b>%1</b></td><td>%2</td></tr>").arg(label.toHtmlEscaped(), valueHtml);
}

QString section(const QString &title)
{
    return QStringLiteral("<tr><td colspan='2' style='padding-top:6px'><i>%1</i></td></tr>").arg(title.toHtmlEscaped());
}

QString esc(const QString &s)
{
    return s.toHtmlEscaped();
}

// The progress line, then where NeMo-RL logs this run (its exp_NNN folder on the storage, with
// the TensorBoard and JSONL metrics) once the driver has said.
QString withLogDirectory(const QString &text, const Job::JobProgress &progress)
{
    if (progress.logDirectory().isEmpty()) return text;
    return text + u'\n' + JobDetailPanel::tr("NeMo-RL's log directory: %1").arg(progress.logDirectory());
}

} // namespace

JobDetailPanel::JobDetailPanel(QWidget *parent)
    : QWidget(parent)
    , m_stack(new QStackedWidget(this))
    , m_empty(new QLabel(this))
    , m_title(new QLabel(this))
    , m_banner(new QLabel(this))
    , m_summary(new QTextBrowser(this))
    , m_pods(new Models::JobPodsModel(this))
    , m_podsView(new QTableView(this))
    , m_plot(new ProgressPlot(this))
    , m_metric(new QComboBox(this))
    , m_progressLabel(new QLabel(this))
    , m_checkpoints(new Models::CheckpointsModel(this))
    , m_checkpointsView(new QTableView(this))
    , m_chat(new QPushButton(tr("&Chat with this checkpoint"), this))
{
    setObjectName(QStringLiteral("jobDetailPanel"));
    m_empty->setObjectName(QStringLiteral("jobDetailEmpty"));
    m_empty->setText(tr("Select a job in the Jobs panel to see its spec, status, pods and training progress here."));
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setWordWrap(true);
    m_empty->setMargin(12);
    followQuiet(m_empty);

    m_title->setObjectName(QStringLiteral("jobDetailTitle"));
    m_title->setTextFormat(Qt::RichText);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    m_title->setAccessibleName(tr("Selected job"));

    // Why a job waits, from the diagnosis engine; hidden once it runs.
    m_banner->setObjectName(QStringLiteral("jobDiagnosisBanner"));
    m_banner->setWordWrap(true);
    m_banner->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    m_banner->setAccessibleName(tr("Why the job is pending"));
    followBanner(m_banner, Tones::Tone::Warning);
    m_banner->hide();

    m_summary->setObjectName(QStringLiteral("jobDetailSummary"));
    m_summary->setAccessibleName(tr("Job spec and status"));
    m_summary->setOpenLinks(false);
    m_summary->setFrameShape(QFrame::NoFrame);

    m_podsView->setObjectName(QStringLiteral("jobPodsView"));
    m_podsView->setAccessibleName(tr("Pods of the selected job"));
    m_podsView->setModel(m_pods);
    m_podsView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_podsView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_podsView->verticalHeader()->hide();
    m_podsView->horizontalHeader()->setStretchLastSection(true);
    m_podsView->setWordWrap(false);
    const int em = fontMetrics().horizontalAdvance(QLatin1Char('M'));
    m_podsView->setColumnWidth(Models::JobPodsModel::NameColumn, 16 * em);
    m_podsView->setColumnWidth(Models::JobPodsModel::RoleColumn, 7 * em);
    m_podsView->setColumnWidth(Models::JobPodsModel::PhaseColumn, 10 * em);
    m_podsView->setColumnWidth(Models::JobPodsModel::NodeColumn, 8 * em);

    m_metric->setObjectName(QStringLiteral("progressMetricCombo"));
    m_metric->setAccessibleName(tr("Metric to plot"));
    m_metric->setToolTip(tr("The training metric the plot shows (from the runner's progress lines)"));
    auto *metricLabel = new QLabel(tr("&Metric:"), this);
    metricLabel->setBuddy(m_metric);
    m_progressLabel->setObjectName(QStringLiteral("progressLabel"));
    m_progressLabel->setAccessibleName(tr("Training progress"));
    m_progressLabel->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    m_progressLabel->setWordWrap(true);
    connect(m_plot, &ProgressPlot::metricsChanged, this, [this](const QStringList &metrics) {
        const QSignalBlocker blocker(m_metric);
        m_metric->clear();
        m_metric->addItems(metrics);
        m_metric->setCurrentText(m_plot->metric());
        m_metric->setEnabled(!metrics.isEmpty());
    });
    connect(m_metric, &QComboBox::currentTextChanged, m_plot, &ProgressPlot::setMetric);
    m_metric->setEnabled(false);

    m_checkpointsView->setObjectName(QStringLiteral("checkpointsView"));
    m_checkpointsView->setAccessibleName(tr("Finished checkpoints"));
    m_checkpointsView->setAccessibleDescription(tr("Each finished step: whether vLLM can serve it as it is, or which NeMo-RL converter it needs"));
    m_checkpointsView->setModel(m_checkpoints);
    m_checkpointsView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_checkpointsView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_checkpointsView->verticalHeader()->hide();
    m_checkpointsView->horizontalHeader()->setStretchLastSection(true);
    m_checkpointsView->setWordWrap(false);
    m_checkpointsView->setMaximumHeight(7 * fontMetrics().height());
    m_checkpointsView->hide();   // until a step has finished
    // Ctrl+C copies the selected step's path to serve, as a researcher pastes it into a terminal.
    auto *copyPath = new QAction(tr("Copy path"), m_checkpointsView);
    copyPath->setShortcut(QKeySequence::Copy);
    copyPath->setShortcutContext(Qt::WidgetShortcut);
    connect(copyPath, &QAction::triggered, this, [this] {
        const QModelIndex current = m_checkpointsView->currentIndex();
        if (current.isValid()) QGuiApplication::clipboard()->setText(current.data(Models::CheckpointsModel::CheckpointPathRole).toString());
    });
    m_checkpointsView->addAction(copyPath);
    m_checkpointsView->setContextMenuPolicy(Qt::ActionsContextMenu);
    // Serve the selected checkpoint in the playground: on for one vLLM can serve as it is.
    m_chat->setObjectName(QStringLiteral("chatWithCheckpoint"));
    m_chat->setToolTip(tr("Serve the selected checkpoint with vLLM in the playground and chat with it"));
    m_chat->setEnabled(false);
    m_chat->hide();
    const auto requestChat = [this] {
        if (const auto request = chatRequest()) Q_EMIT chatRequested(*request);
    };
    connect(m_chat, &QPushButton::clicked, this, requestChat);
    connect(m_checkpointsView, &QTableView::activated, this, requestChat);
    connect(m_checkpointsView->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &JobDetailPanel::updateChatButton);

    auto *plotBox = new QWidget(this);
    auto *plotLayout = new QVBoxLayout(plotBox);
    plotLayout->setContentsMargins(0, 0, 0, 0);
    auto *metricRow = new QHBoxLayout;
    metricRow->addWidget(metricLabel);
    metricRow->addWidget(m_metric, 1);
    plotLayout->addLayout(metricRow);
    plotLayout->addWidget(m_plot, 1);
    plotLayout->addWidget(m_progressLabel);
    plotLayout->addWidget(m_checkpointsView);
    plotLayout->addWidget(m_chat, 0, Qt::AlignLeft);

    auto *splitter = new QSplitter(Qt::Horizontal, this);
    splitter->setObjectName(QStringLiteral("jobDetailSplitter"));
    splitter->addWidget(m_summary);
    splitter->addWidget(m_podsView);
    splitter->addWidget(plotBox);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 3);
    splitter->setStretchFactor(2, 2);

    auto *page = new QWidget(this);
    auto *pageLayout = new QVBoxLayout(page);
    pageLayout->setContentsMargins(4, 4, 4, 4);
    pageLayout->addWidget(m_title);
    pageLayout->addWidget(m_banner);
    pageLayout->addWidget(splitter, 1);
    m_stack->addWidget(m_empty);
    m_stack->addWidget(page);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_stack);

    // Keyboard path: the summary, the pods, the metric, the plot.
    setTabOrder(m_summary, m_podsView);
    setTabOrder(m_podsView, m_metric);
    setTabOrder(m_metric, m_plot);
    setTabOrder(m_plot, m_checkpointsView);
    setTabOrder(m_checkpointsView, m_chat);

    m_refreshTimer.setInterval(3000);
    connect(&m_refreshTimer, &QTimer::timeout, this, [this] {
        if (isVisible())
            refresh();
    });
    m_soon.setSingleShot(true);
    m_soon.setInterval(200);
    connect(&m_soon, &QTimer::timeout, this, &JobDetailPanel::refresh);
}

JobDetailPanel::~JobDetailPanel() = default;

void JobDetailPanel::setRefreshInterval(int ms)
{
    m_refreshTimer.setInterval(ms);
}

bool JobDetailPanel::isShowingJob() const
{
    return m_stack->currentIndex() == 1;
}

void JobDetailPanel::setSession(Session *session)
{
    if (m_session)
        disconnect(m_session, nullptr, this, nullptr);
    m_session = session;
    if (session) {
        connect(session, &Session::partsAboutToBeRemoved, this, [this] {
            m_fetch.reset();
        });
        connect(session, &Session::partsChanged, this, &JobDetailPanel::takeSessionParts);
    }
    takeSessionParts();
}

void JobDetailPanel::takeSessionParts()
{
    if (m_session && m_session->progress()) {
        connect(m_session->progress(), &Job::ProgressFollower::progressChanged, this, &JobDetailPanel::onProgressChanged, Qt::UniqueConnection);
    }
    m_snapshot.reset();
    m_archiveRead = false;
    render();
    refresh();
}

void JobDetailPanel::setJobsModel(Models::JobsModel *model)
{
    if (m_model)
        disconnect(m_model, nullptr, this, nullptr);
    m_model = model;
    if (!model)
        return;
    // The selected job's record changed (state, message, archived): shown now, read again soon.
    connect(model, &QAbstractItemModel::dataChanged, this, [this](const QModelIndex &from, const QModelIndex &to) {
        if (m_jobId.isEmpty() || !m_model)
            return;
        const int row = m_model->rowOf(m_jobId);
        if (row < from.row() || row > to.row() || (from.column() == JobsModel::ProgressColumn && to.column() == JobsModel::ProgressColumn))
            return;
        render();
        m_soon.start();
    });
    connect(model, &QAbstractItemModel::rowsInserted, this, [this] {
        if (!m_jobId.isEmpty() && !isShowingJob())
            showJob(m_jobId);
    });
}

std::optional<Job::JobRecord> JobDetailPanel::currentRecord() const
{
    if (!m_model || m_jobId.isEmpty())
        return std::nullopt;
    const int row = m_model->rowOf(m_jobId);
    if (row < 0)
        return std::nullopt;
    return m_model->recordAt(row);
}

void JobDetailPanel::showJob(const QString &jobId)
{
    if (jobId != m_jobId) {
        m_jobId = jobId;
        m_snapshot.reset();
        m_fetch.reset();
        m_archiveRead = false;
        m_archivedProgressShown = false;
        m_pods->clear();
        m_plot->clear();
        m_checkpoints->clear();
        m_checkpointsView->hide();
        m_chat->hide();
    }
    render();
    showProgress();
    refresh();
}

void JobDetailPanel::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    refresh();
}

void JobDetailPanel::render()
{
    const auto record = currentRecord();
    if (!record) {
        m_stack->setCurrentIndex(0);
        m_refreshTimer.stop();
        m_banner->hide();
        return;
    }
    m_stack->setCurrentIndex(1);
    const Job::JobRecord &r = *record;
    m_title->setText(QStringLiteral("<b>%1</b> &nbsp;%2").arg(esc(r.rayJobName.isEmpty() ? r.id : r.rayJobName), esc(r.displayState())));
    // Keep the reader's place: the summary is rewritten on every change.
    const int scroll = m_summary->verticalScrollBar()->value();
    m_summary->setHtml(summaryHtml(r, m_snapshot));
    m_summary->verticalScrollBar()->setValue(scroll);

    // The banner: while the job waits, why (the diagnosis of the last snapshot).
    QString why;
    if (!r.archived && (r.state == Job::JobState::Pending || r.state == Job::JobState::Submitting) && m_snapshot && m_snapshot->rayJob && m_session) {
        const Cluster::CapacityModel *capacity = m_session->capacity() ? &m_session->capacity()->model() : nullptr;
        const Cluster::Diagnosis d = Cluster::diagnose(m_snapshot->diagnosisInput(capacity, m_session->settings().gpuNodeLabel));
        // No known cause in the first minute is the cluster not having said yet (the scheduler's
        // first attempt, an image still pulling): nothing to show. Later it is worth saying.
        const bool early = r.created.isValid() && r.created.secsTo(QDateTime::currentDateTimeUtc()) < 60;
        if (d.cause != Cluster::Cause::Unknown || (!early && !d.message.isEmpty()))
            why = tr("Why it is pending — %1: %2").arg(d.causeId(), d.message);
    } else if (r.state == Job::JobState::Failed && !r.cause.isEmpty()) {
        why = tr("Why it failed — %1: %2").arg(r.cause, r.message);
    }
    m_banner->setAccessibleName(r.state == Job::JobState::Failed ? tr("Why the job failed") : tr("Why the job is pending"));
    m_banner->setText(why);
    m_banner->setVisible(!why.isEmpty());
    m_banner->setAccessibleDescription(why);

    const bool live = !r.archived && m_session && m_session->kube();
    if (live && !m_refreshTimer.isActive())
        m_refreshTimer.start();
    if (!live)
        m_refreshTimer.stop();
}

QString JobDetailPanel::summaryHtml(const Job::JobRecord &r, const std::optional<Job::JobSnapshot> &snapshot)
{
    QString html = QStringLiteral("<table cellspacing='0'>");
    html += row(tr("Job id"), esc(r.id));
    if (!r.owner.isEmpty())
        html += row(tr("Owner"), esc(r.owner));
    html += row(tr("Submitted"), esc(when(r.created)));
    html += row(tr("Started"), r.started.isValid() ? esc(when(r.started)) : tr("not yet").toHtmlEscaped());
    if (r.ended.isValid())
        html += row(tr("Ended"), esc(when(r.ended)));
    if (!r.reason.isEmpty())
        html += row(tr("Reason"), esc(r.reason));
    if (!r.message.isEmpty())
        html += row(tr("Message"), esc(r.message).replace(QLatin1Char('\n'), QStringLiteral("<br>")));

    // The JobSpec as submitted.
    const QJsonObject spec = r.jobSpec;
    if (!spec.isEmpty()) {
        html += section(tr("Spec"));
        if (spec.contains(QLatin1String("name")))
            html += row(tr("Name"), esc(spec.value(QLatin1String("name")).toString()));
        const QJsonObject recipe = spec.value(QLatin1String("recipe")).toObject();
        const QString algorithm = recipe.value(QLatin1String("algorithm")).toString();
        const QString script = recipe.value(QLatin1String("script")).toString();
        if (!algorithm.isEmpty() || !script.isEmpty())
            html += row(tr("Recipe"), esc(script.isEmpty() ? algorithm : script));
        if (recipe.contains(QLatin1String("config")))
            html += row(tr("Config"), QStringLiteral("<tt>%1</tt>").arg(esc(recipe.value(QLatin1String("config")).toString())));
        QStringList overrides;
        for (const QJsonValue &o : recipe.value(QLatin1String("overrides")).toArray())
            overrides << QStringLiteral("<tt>%1</tt>").arg(esc(o.toString()));
        if (!overrides.isEmpty())
            html += row(tr("Overrides"), overrides.join(QStringLiteral("<br>")));
        const QString pools = JobsModel::poolsText(spec);
        if (!pools.isEmpty())
            html += row(tr("Pools"), esc(pools));
        if (spec.contains(QLatin1String("image")))
            html += row(tr("Image"), QStringLiteral("<tt>%1</tt>").arg(esc(spec.value(QLatin1String("image")).toString())));
        QStringList env;
        const QJsonObject envObject = spec.value(QLatin1String("env")).toObject();
        for (auto it = envObject.begin(); it != envObject.end(); ++it)
            env << QStringLiteral("<tt>%1=%2</tt>").arg(esc(it.key()), esc(it.value().toString()));
        const QJsonObject secretEnv = spec.value(QLatin1String("secretEnv")).toObject();
        for (auto it = secretEnv.begin(); it != secretEnv.end(); ++it)
            env << QStringLiteral("<tt>%1</tt> ← %2").arg(esc(it.key()), esc(tr("Secret %1").arg(it.value().toObject().value(QLatin1String("secret")).toString())));
        if (!env.isEmpty())
            html += row(tr("Env"), env.join(QStringLiteral("<br>")));
    }
    if (!r.capsuleSha256.isEmpty())
        html += row(tr("Capsule"), QStringLiteral("<tt>%1…</tt>").arg(esc(r.capsuleSha256.left(16))));

    // What the cluster says (live), or said last (archived).
    if (snapshot && snapshot->rayJob) {
        const Kube::RayJob j = Kube::RayJob::fromJson(*snapshot->rayJob);
        html += section(tr("RayJob %1").arg(j.name));
        html += row(tr("Deployment"), esc(j.jobDeploymentStatus.isEmpty() ? tr("(not set yet)") : j.jobDeploymentStatus));
        html += row(tr("Ray job"), esc(j.jobStatus.isEmpty() ? tr("(not submitted yet)") : j.jobStatus));
        if (j.startTime.isValid())
            html += row(tr("Status since"), esc(when(j.startTime)));
        if (!j.dashboardURL.isEmpty())
            html += row(tr("Dashboard"), QStringLiteral("<tt>%1</tt>").arg(esc(j.dashboardURL)));
        if (j.failed > 0)
            html += row(tr("Failed attempts"), QString::number(j.failed));
        const std::optional<Kube::RayCluster> cluster = snapshot->rayCluster ? std::optional(Kube::RayCluster::fromJson(*snapshot->rayCluster)) : std::nullopt;
        const Kube::RayClusterStatus cs = cluster ? cluster->status : j.rayClusterStatus;
        const QString clusterName = cluster ? cluster->name : j.rayClusterName;
        if (!clusterName.isEmpty()) {
            html += section(tr("RayCluster %1").arg(clusterName));
            html += row(tr("State"), esc(cs.state.isEmpty() ? tr("starting") : cs.state));
            html += row(tr("Workers ready"), esc(tr("%1 of %2").arg(cs.readyWorkerReplicas).arg(cs.desiredWorkerReplicas)));
            if (!cs.headPodName.isEmpty())
                html += row(tr("Head pod"), esc(cs.headPodIP.isEmpty() ? cs.headPodName : tr("%1 (%2)").arg(cs.headPodName, cs.headPodIP)));
            if (!cs.reason.isEmpty())
                html += row(tr("Reason"), esc(cs.reason));
        } else if (r.archived) {
            html += row(tr("RayCluster"), tr("gone (its final state is in objects.json)").toHtmlEscaped());
        }
    }
    if (r.archived) {
        html += section(tr("Archive"));
        html += row(tr("Archived"), esc(tr("%1, under jobs/%2/ in the bucket").arg(when(r.archivedAt), r.id)));
        QStringList logs;
        for (const Job::ArchivedLog &l : r.logs)
            logs << esc(tr("%1: %2/%3 (%4)").arg(l.role, l.pod, l.container, QLocale().formattedDataSize(l.size)));
        if (!logs.isEmpty())
            html += row(tr("Logs"), logs.join(QStringLiteral("<br>")));
        if (!r.lost.isEmpty())
            html += row(tr("Not archived"), esc(r.lost.join(QLatin1Char('\n'))).replace(QLatin1Char('\n'), QStringLiteral("<br>")));
    }
    return html + QStringLiteral("</table>");
}

void JobDetailPanel::refresh()
{
    const auto record = currentRecord();
    if (!record || !m_session)
        return;
    if (record->archived) {
        readArchive(*record);
        return;
    }
    if (!m_session->kube() || record->state == Job::JobState::Submitting)
        return;
    if (m_fetch) {
        m_fetchAgain = true;
        return;
    }
    m_fetch = std::make_unique<QObject>();
    const QString id = m_jobId;
    Job::SnapshotRequest request = Job::SnapshotRequest::of(m_session->ns(), id);
    request.rayJobName = record->rayJobName;
    Job::fetchCheckedSnapshot(m_session->kube(), request, m_fetch.get(), [this, id](Result<Job::JobSnapshot> snapshot) {
        // Dropped later, not here: this runs inside the read whose context m_fetch is.
        QObject *done = m_fetch.release();
        done->deleteLater();
        if (id != m_jobId)
            return;
        if (snapshot && snapshot->rayJob)
            takeSnapshot(*snapshot);
        if (m_fetchAgain) {
            m_fetchAgain = false;
            m_soon.start();
        }
    });
}

void JobDetailPanel::readArchive(const Job::JobRecord &record)
{
    if (m_archiveRead || !m_session || !m_session->s3())
        return;
    m_archiveRead = true;
    S3::S3Client *s3 = m_session->s3();
    const QString id = record.id;
    S3::S3Reply *reply = s3->getObject(Job::ArchiveKeys::objects(id));
    connect(reply, &S3::S3Reply::finished, this, [this, reply, id] {
        reply->deleteLater();
        if (id != m_jobId || !reply->result())
            return;
        takeSnapshot(Job::snapshotFromArchive(reply->data(), QByteArray()));
    });
    setArchivedProgress(record);
}

void JobDetailPanel::takeSnapshot(const Job::JobSnapshot &snapshot)
{
    m_snapshot = snapshot;
    m_pods->setPods(snapshot.pods);
    render();
}

void JobDetailPanel::onProgressChanged(const QString &jobId)
{
    if (jobId == m_jobId)
        showProgress();
}

void JobDetailPanel::showProgress()
{
    const Job::JobProgress *progress = m_session && m_session->progress() ? m_session->progress()->progress(m_jobId) : nullptr;
    if (!progress) {
        if (!m_archivedProgressShown) {
            m_plot->clear();
            m_checkpoints->clear();
            m_checkpointsView->hide();
            m_chat->hide();
            m_progressLabel->setText(tr("No progress yet: it is read from the driver's log while the job runs."));
        }
        return;
    }
    m_plot->setProgress(*progress);
    const QString details = progress->details();
    m_progressLabel->setText(withLogDirectory(details.isEmpty() ? tr("The driver has not reported a step yet.") : details, *progress));
    showCheckpoints(*progress);
}

void JobDetailPanel::updateChatButton()
{
    const auto request = chatRequest();
    m_chat->setEnabled(request.has_value());
    m_chat->setText(request ? tr("&Chat with step %1").arg(request->step) : tr("&Chat with this checkpoint"));
    m_chat->setAccessibleName(request ? tr("Chat with the checkpoint of step %1 in the playground").arg(request->step) : tr("Chat with this checkpoint"));
}

std::optional<Playground::LaunchRequest> JobDetailPanel::chatRequest() const
{
    // The selected checkpoint; with none selected, the newest that vLLM can serve as it is.
    const QModelIndex current = m_checkpointsView->currentIndex();
    const auto record = currentRecord();
    const QList<Job::ServableCheckpoint> &all = m_checkpoints->checkpoints();
    qsizetype row = current.isValid() ? current.row() : -1;
    for (qsizetype r = all.size() - 1; row < 0 && r >= 0; --r) {
        if (all.at(r).consolidated) row = r;
    }
    if (!record || row < 0 || row >= all.size()) return std::nullopt;
    const Job::ServableCheckpoint &checkpoint = all.at(row);
    if (!checkpoint.consolidated) return std::nullopt;
    Playground::LaunchRequest request;
    request.model = checkpoint.path;
    request.tokenizer = checkpoint.tokenizerPath;
    request.jobId = record->id;
    request.step = checkpoint.step;
    // Where the job trained: its first pool's series.
    request.series = record->jobSpec.value(QStringLiteral("pools")).toArray().first()[QStringLiteral("series")].toString();
    return request;
}

void JobDetailPanel::showCheckpoints(const Job::JobProgress &progress)
{
    m_checkpoints->setCheckpoints(progress.servableCheckpoints());
    m_checkpointsView->setVisible(m_checkpoints->rowCount() > 0);
    m_chat->setVisible(m_checkpoints->rowCount() > 0);
    updateChatButton();
}

void JobDetailPanel::setArchivedProgress(const Job::JobRecord &record)
{
    // What this session followed live is the same log; the archive is read when it did not.
    if (m_session && m_session->progress() && m_session->progress()->progress(record.id))
        return;
    Job::readArchivedProgress(m_session->s3(), record, this, [this, id = record.id](std::optional<Job::JobProgress> progress) {
        if (id != m_jobId)
            return;
        if (!progress) {
            m_progressLabel->setText(tr("The archive has no driver log to read progress from."));
            return;
        }
        m_archivedProgressShown = true;
        m_plot->setProgress(*progress);
        showCheckpoints(*progress);
        const QString details = progress->details();
        m_progressLabel->setText(
            withLogDirectory(details.isEmpty() ? tr("The driver's log reports no training steps.") : tr("Final: %1").arg(details), *progress));
    });
}

} // namespace Starforge::Gui
