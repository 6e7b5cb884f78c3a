#include "gui/events/eventspanel.h"

#include "core/cluster/capacity.h"
#include "core/cluster/diagnosis.h"
#include "core/events/eventjournal.h"
#include "core/job/archiver.h"
#include "core/job/jobactions.h"
#include "core/job/jobrecord.h"
#include "core/kube/informer.h"
#include "core/s3/s3client.h"
#include "core/session/session.h"
#include "gui/events/timelineview.h"
#include "gui/palettefollow.h"
#include "models/jobsmodel.h"
#include "models/timelinemodel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

namespace Starforge::Gui {

using Models::TimelineModel;

EventsPanel::EventsPanel(QWidget *parent)
    : QWidget(parent)
    , m_stack(new QStackedWidget(this))
    , m_empty(new QLabel(this))
    , m_title(new QLabel(this))
    , m_banner(new QLabel(this))
    , m_filter(new QLineEdit(this))
    , m_zoomIn(new QToolButton(this))
    , m_zoomOut(new QToolButton(this))
    , m_fit(new QToolButton(this))
    , m_model(new TimelineModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_view(new TimelineView(this))
    , m_list(new QTableView(this))
{
    setObjectName(QStringLiteral("eventsPanel"));
    m_empty->setObjectName(QStringLiteral("eventsEmpty"));
    m_empty->setText(tr("Select a job in the Jobs panel to see its events on a timeline here: what each of its objects went "
                        "through, and why it waits."));
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setWordWrap(true);
    m_empty->setMargin(12);
    followQuiet(m_empty);

    m_title->setObjectName(QStringLiteral("eventsTitle"));
    m_title->setTextFormat(Qt::PlainText);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    m_title->setAccessibleName(tr("Job on the timeline"));

    m_banner->setObjectName(QStringLiteral("eventsDiagnosisBanner"));
    m_banner->setWordWrap(true);
    m_banner->setTextFormat(Qt::RichText);
    m_banner->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse | Qt::LinksAccessibleByKeyboard);
    m_banner->setFocusPolicy(Qt::TabFocus);
    m_banner->setAccessibleName(tr("Why the job is pending"));
    followBanner(m_banner, Tones::Tone::Warning);
    m_banner->hide();
    connect(m_banner, &QLabel::linkActivated, this, &EventsPanel::selectEvidence);

    m_filter->setObjectName(QStringLiteral("eventsFilter"));
    m_filter->setPlaceholderText(tr("Filter events (reason, object, message)…"));
    m_filter->setAccessibleName(tr("Filter events"));
    m_filter->setClearButtonEnabled(true);
    auto button = [this](QToolButton *b, const QString &name, const QString &text, const QString &tip) {
        b->setObjectName(name);
        b->setText(text);
        b->setToolTip(tip);
        b->setAccessibleName(tip);
        b->setAutoRaise(true);
    };
    button(m_zoomIn, QStringLiteral("timelineZoomIn"), QStringLiteral("+"), tr("Zoom in (+)"));
    button(m_zoomOut, QStringLiteral("timelineZoomOut"), QStringLiteral("−"), tr("Zoom out (-)"));
    button(m_fit, QStringLiteral("timelineFit"), tr("Fit"), tr("Fit the whole job (0)"));
    connect(m_zoomIn, &QToolButton::clicked, m_view, &TimelineView::zoomIn);
    connect(m_zoomOut, &QToolButton::clicked, m_view, &TimelineView::zoomOut);
    connect(m_fit, &QToolButton::clicked, m_view, &TimelineView::zoomToFit);

    m_view->setModel(m_model);
    m_view->setMinimumWidth(280);

    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(TimelineModel::SortRole);
    m_proxy->setFilterKeyColumn(-1);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    m_list->setObjectName(QStringLiteral("eventsList"));
    m_list->setAccessibleName(tr("Events of the selected job"));
    m_list->setModel(m_proxy);
    m_list->setSortingEnabled(true);
    m_list->sortByColumn(TimelineModel::TimeColumn, Qt::AscendingOrder);
    m_list->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_list->setSelectionMode(QAbstractItemView::SingleSelection);
    m_list->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_list->verticalHeader()->hide();
    m_list->horizontalHeader()->setStretchLastSection(true);
    m_list->setWordWrap(false);
    const int em = fontMetrics().horizontalAdvance(QLatin1Char('M'));
    m_list->setColumnWidth(TimelineModel::TimeColumn, 8 * em);
    m_list->setColumnWidth(TimelineModel::ObjectColumn, 10 * em);
    m_list->setColumnWidth(TimelineModel::TypeColumn, 6 * em);
    m_list->setColumnWidth(TimelineModel::ReasonColumn, 9 * em);
    m_list->setColumnWidth(TimelineModel::CountColumn, 3 * em);

    // One event selected in both views.
    connect(m_view->selectionModel(), &QItemSelectionModel::currentChanged, this, &EventsPanel::syncFromTimeline);
    connect(m_list->selectionModel(), &QItemSelectionModel::currentChanged, this, &EventsPanel::syncFromList);

    auto *tools = new QHBoxLayout;
    tools->setContentsMargins(0, 0, 0, 0);
    tools->addWidget(m_title, 1);
    tools->addWidget(m_zoomOut);
    tools->addWidget(m_zoomIn);
    tools->addWidget(m_fit);
    tools->addWidget(m_filter);

    auto *splitter = new QSplitter(Qt::Horizontal, this);
    splitter->setObjectName(QStringLiteral("eventsSplitter"));
    splitter->addWidget(m_view);
    splitter->addWidget(m_list);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);

    auto *page = new QWidget(this);
    auto *pageLayout = new QVBoxLayout(page);
    pageLayout->setContentsMargins(4, 4, 4, 4);
    pageLayout->addLayout(tools);
    pageLayout->addWidget(m_banner);
    pageLayout->addWidget(splitter, 1);
    m_stack->addWidget(m_empty);
    m_stack->addWidget(page);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_stack);

    // Keyboard path: the banner's link, the timeline, the list, the filter, the zoom buttons.
    setTabOrder(m_banner, m_view);
    setTabOrder(m_view, m_list);
    setTabOrder(m_list, m_filter);
    setTabOrder(m_filter, m_zoomOut);
    setTabOrder(m_zoomOut, m_zoomIn);
    setTabOrder(m_zoomIn, m_fit);
    setFocusProxy(m_view);

    m_refreshTimer.setInterval(3000);
    connect(&m_refreshTimer, &QTimer::timeout, this, [this] {
        if (isVisible())
            refresh();
    });
    m_soon.setSingleShot(true);
    m_soon.setInterval(300);
    connect(&m_soon, &QTimer::timeout, this, &EventsPanel::refresh);
}

EventsPanel::~EventsPanel() = default;

void EventsPanel::setRefreshInterval(int ms)
{
    m_refreshTimer.setInterval(ms);
}

bool EventsPanel::isShowingJob() const
{
    return m_stack->currentIndex() == 1;
}

void EventsPanel::setSession(Session *session)
{
    if (m_session)
        disconnect(m_session, nullptr, this, nullptr);
    m_session = session;
    auto takeParts = [this] {
        m_snapshot.reset();
        m_archiveRead = false;
        if (m_informer)
            disconnect(m_informer, nullptr, this, nullptr);
        m_informer = m_session ? m_session->eventInformer() : nullptr;
        if (m_informer) {
            // An event about one of this job's objects: read the job again soon.
            // Runs for every event of the namespace: it compares names only (the job's RayJob
            // name is kept by render(), not read from the model each time).
            auto mine = [this](const QJsonObject &event) {
                if (m_rayJobName.isEmpty())
                    return;
                QJsonObject object = event.value(QStringLiteral("involvedObject")).toObject();   // core/v1
                if (object.isEmpty())
                    object = event.value(QStringLiteral("regarding")).toObject();            // events.k8s.io/v1
                const QString name = object.value(QStringLiteral("name")).toString();
                if (name == m_rayJobName || (name.startsWith(m_rayJobName) && name.at(m_rayJobName.size()) == u'-'))
                    m_soon.start();
            };
            connect(m_informer, &Kube::Informer::added, this, mine);
            connect(m_informer, &Kube::Informer::updated, this,
                    [mine](const QJsonObject &, const QJsonObject &after) { mine(after); });
        }
        render();
        refresh();
    };
    if (session) {
        connect(session, &Session::partsAboutToBeRemoved, this, [this] { m_fetch.reset(); });
        connect(session, &Session::partsChanged, this, takeParts);
    }
    takeParts();
}

void EventsPanel::setJobsModel(Models::JobsModel *model)
{
    if (m_jobs)
        disconnect(m_jobs, nullptr, this, nullptr);
    m_jobs = model;
    if (!model)
        return;
    connect(model, &QAbstractItemModel::dataChanged, this, [this](const QModelIndex &from, const QModelIndex &to) {
        if (m_jobId.isEmpty() || !m_jobs)
            return;
        const int row = m_jobs->rowOf(m_jobId);
        if (row < from.row() || row > to.row()
            || (from.column() == Models::JobsModel::ProgressColumn && to.column() == Models::JobsModel::ProgressColumn))
            return;
        render();
        m_soon.start();
    });
    connect(model, &QAbstractItemModel::rowsInserted, this, [this] {
        if (!m_jobId.isEmpty() && !isShowingJob())
            showJob(m_jobId);
    });
}

std::optional<Job::JobRecord> EventsPanel::currentRecord() const
{
    if (!m_jobs || m_jobId.isEmpty())
        return std::nullopt;
    const int row = m_jobs->rowOf(m_jobId);
    if (row < 0)
        return std::nullopt;
    return m_jobs->recordAt(row);
}

void EventsPanel::showJob(const QString &jobId)
{
    if (jobId != m_jobId) {
        m_jobId = jobId;
        m_snapshot.reset();
        m_fetch.reset();
        m_archiveRead = false;
        m_evidence.clear();
        m_model->clear();
    }
    render();
    refresh();
}

void EventsPanel::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    refresh();
}

void EventsPanel::render()
{
    const auto record = currentRecord();
    m_rayJobName = record ? record->rayJobName : QString();
    if (!record) {
        m_stack->setCurrentIndex(0);
        m_refreshTimer.stop();
        m_banner->hide();
        return;
    }
    m_stack->setCurrentIndex(1);
    if (!record->archived && !Job::isTerminal(record->state))
        m_refreshTimer.start();
    else
        m_refreshTimer.stop();
    const Job::JobRecord &r = *record;
    m_title->setText(tr("%1 — %2, %n event(s)", nullptr, m_model->rowCount()).arg(r.rayJobName.isEmpty() ? r.id : r.rayJobName, r.displayState()));

    // The banner: why the job waits (the diagnosis of the last snapshot), or why it failed.
    QString why;
    QString label = tr("Why the job is pending");
    if (m_snapshot && (r.state == Job::JobState::Pending || r.state == Job::JobState::Submitting) && !r.archived) {
        const Cluster::CapacityModel *capacity = m_session && m_session->capacity() ? &m_session->capacity()->model() : nullptr;
        const Cluster::Diagnosis d = Cluster::diagnose(m_snapshot->diagnosisInput(capacity, m_session ? m_session->settings().gpuNodeLabel : Cluster::defaultSeriesLabel()));
        // Nothing known in the first minute is the cluster not having said yet.
        const bool early = r.created.isValid() && r.created.secsTo(QDateTime::currentDateTimeUtc()) < 60;
        if (d.cause != Cluster::Cause::Unknown || (!early && !d.message.isEmpty()))
            why = tr("Why it is pending — %1: %2").arg(d.causeId(), d.message);
    } else if (r.state == Job::JobState::Failed && !r.cause.isEmpty()) {
        label = tr("Why the job failed");
        why = tr("Why it failed — %1: %2").arg(r.cause, r.message);
    }
    m_banner->setAccessibleName(label);
    m_banner->setAccessibleDescription(why);
    if (why.isEmpty()) {
        m_banner->clear();
        m_banner->hide();
    } else {
        QString html = why.toHtmlEscaped();
        if (!m_evidence.isEmpty())
            html += QStringLiteral(" <a href=\"#evidence\">%1</a>").arg(tr("Show the evidence (%n event(s))", nullptr, int(m_evidence.size())).toHtmlEscaped());
        m_banner->setText(html);
        m_banner->show();
    }
}

void EventsPanel::refresh()
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
        QObject *done = m_fetch.release();
        done->deleteLater();
        if (id != m_jobId)
            return;
        if (snapshot)
            takeSnapshot(*snapshot, false);
        if (m_fetchAgain) {
            m_fetchAgain = false;
            m_soon.start();
        }
    });
}

void EventsPanel::readArchive(const Job::JobRecord &record)
{
    if (m_archiveRead || !m_session || !m_session->s3())
        return;
    m_archiveRead = true;
    S3::S3Client *s3 = m_session->s3();
    const QString id = record.id;
    S3::S3Reply *objects = s3->getObject(Job::ArchiveKeys::objects(id));
    connect(objects, &S3::S3Reply::finished, this, [this, objects, s3, id] {
        objects->deleteLater();
        if (id != m_jobId)
            return;
        const QByteArray objectsJson = objects->result() ? objects->data() : QByteArray();
        S3::S3Reply *events = s3->getObject(Job::ArchiveKeys::events(id));
        connect(events, &S3::S3Reply::finished, this, [this, events, objectsJson, id] {
            events->deleteLater();
            if (id != m_jobId)
                return;
            takeSnapshot(Job::snapshotFromArchive(objectsJson, events->result() ? events->data() : QByteArray()), true);
        });
    });
}

void EventsPanel::takeSnapshot(const Job::JobSnapshot &snapshot, bool archived)
{
    m_snapshot = snapshot;
    const auto record = currentRecord();
    Events::TimelineInput input;
    input.rayJob = snapshot.rayJob;
    input.rayCluster = snapshot.rayCluster;
    input.pods = snapshot.pods;
    input.events = snapshot.events;
    input.rayJobName = snapshot.rayJobName.isEmpty() && record ? record->rayJobName : snapshot.rayJobName;
    if (!archived)
        input.now = QDateTime::currentDateTimeUtc();
    // What the journal kept: events Kubernetes has dropped (after an hour, or with a deleted
    // RayCluster) and every state change the app saw, merged with the cluster's or the
    // archive's copy without duplicates.
    if (Events::EventJournal *journal = m_session ? m_session->journal() : nullptr)
        Events::addFromJournal(*journal, m_session->ns(), input);

    // The diagnosis' evidence, ringed on the timeline: while the job waits, or for a failure.
    QStringList evidence;
    if (record && (record->state == Job::JobState::Pending || record->state == Job::JobState::Failed || record->state == Job::JobState::Submitting)) {
        const Cluster::CapacityModel *capacity = !archived && m_session && m_session->capacity() ? &m_session->capacity()->model() : nullptr;
        const Cluster::Diagnosis d = Cluster::diagnose(snapshot.diagnosisInput(capacity, m_session ? m_session->settings().gpuNodeLabel : Cluster::defaultSeriesLabel()));
        for (const Kube::Event &e : d.evidence)
            evidence.append(e.ns + u'/' + e.name);
    }
    setTimeline(Events::Timeline::build(input), evidence);
}

void EventsPanel::setTimeline(const Events::Timeline &timeline, const QStringList &evidence)
{
    // Keep the selected event selected across a live update.
    const QModelIndex current = m_view->currentIndex();
    const QString currentKey = current.isValid() ? current.data(TimelineModel::KeyRole).toString() : QString();
    if (m_shownJob != m_jobId) {
        m_shownJob = m_jobId;
        m_view->zoomToFit();
    }
    m_evidence = evidence;
    m_model->setTimeline(timeline, evidence);
    if (!currentKey.isEmpty()) {
        const int row = m_model->rowOfKey(currentKey);
        if (row >= 0 && m_view->currentIndex().row() != row)
            m_view->selectionModel()->setCurrentIndex(m_model->index(row, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    }
    render();
}

void EventsPanel::selectEvidence()
{
    for (const QString &key : std::as_const(m_evidence)) {
        const int row = m_model->rowOfKey(key);
        if (row < 0)
            continue;
        m_view->selectionModel()->setCurrentIndex(m_model->index(row, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        m_view->scrollTo(m_model->index(row, 0));
        m_view->setFocus(Qt::OtherFocusReason);
        return;
    }
}

void EventsPanel::syncFromTimeline()
{
    if (m_syncing)
        return;
    m_syncing = true;
    const QModelIndex source = m_view->currentIndex();
    const QModelIndex proxy = source.isValid() ? m_proxy->mapFromSource(source) : QModelIndex();
    if (proxy.isValid()) {
        m_list->selectionModel()->setCurrentIndex(proxy, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        m_list->scrollTo(proxy);
    } else {
        m_list->selectionModel()->clearSelection();
    }
    m_syncing = false;
}

void EventsPanel::syncFromList()
{
    if (m_syncing)
        return;
    m_syncing = true;
    const QModelIndex proxy = m_list->currentIndex();
    const QModelIndex source = proxy.isValid() ? m_proxy->mapToSource(proxy) : QModelIndex();
    if (source.isValid()) {
        m_view->selectionModel()->setCurrentIndex(m_model->index(source.row(), 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        m_view->scrollTo(source);
    }
    m_syncing = false;
}

} // namespace Starforge::Gui
