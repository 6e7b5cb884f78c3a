#include "models/jobsmodel.h"

#include "core/job/history.h"
#include "core/job/pendingdiagnoser.h"
#include "core/job/progressfollower.h"
#include "core/job/tracker.h"
#include "core/s3/s3client.h"

#include <QJsonArray>
#include <QLocale>

#include <algorithm>
#include <climits>

namespace Starforge::Models {

namespace {

constexpr int DefaultAgeRefreshMs = 30000;

// Submission time orders the rows; a record without one (never expected from the tracker or
// the archiver) falls back to when it ended.
QDateTime sortTime(const Job::JobRecord &r)
{
    if (r.created.isValid())
        return r.created;
    return r.ended.isValid() ? r.ended : r.archivedAt;
}

// Newest first; undated rows last; ties by id so the order is total.
bool comesBefore(const Job::JobRecord &a, const Job::JobRecord &b)
{
    const QDateTime ta = sortTime(a);
    const QDateTime tb = sortTime(b);
    if (ta.isValid() != tb.isValid())
        return ta.isValid();
    if (ta != tb)
        return ta > tb;
    return a.id < b.id;
}

bool sameRecord(const Job::JobRecord &a, const Job::JobRecord &b)
{
    return a.archived == b.archived && a.state == b.state && a.toJson() == b.toJson();
}

QString oneLine(QString text)
{
    text.replace(QLatin1Char('\n'), QLatin1Char(' '));
    return text.simplified();
}

QString fullTime(const QDateTime &t)
{
    return QLocale().toString(t.toLocalTime(), QLocale::LongFormat);
}

QString durationText(qint64 seconds)
{
    if (seconds < 60)
        return JobsModel::tr("%1 s").arg(seconds);
    if (seconds < 3600)
        return JobsModel::tr("%1 min %2 s").arg(seconds / 60).arg(seconds % 60);
    return JobsModel::tr("%1 h %2 min").arg(seconds / 3600).arg((seconds % 3600) / 60);
}

} // namespace

JobsModel::JobsModel(QObject *parent)
    : QAbstractTableModel(parent)
    , m_now([] { return QDateTime::currentDateTimeUtc(); })
{
    m_ageTimer.setInterval(DefaultAgeRefreshMs);
    connect(&m_ageTimer, &QTimer::timeout, this, &JobsModel::refreshAges);
    m_ageTimer.start();
}

JobsModel::~JobsModel() = default;

void JobsModel::setClock(std::function<QDateTime()> now)
{
    m_now = std::move(now);
    refreshAges();
}

void JobsModel::setAgeRefreshInterval(int ms)
{
    m_ageTimer.setInterval(ms);
}

void JobsModel::setTracker(Job::JobTracker *tracker)
{
    if (tracker == m_tracker)
        return;
    if (m_tracker)
        disconnect(m_tracker, nullptr, this, nullptr);
    m_tracker = tracker;
    // The old tracker's live jobs are no longer followed; what is archived stays.
    removeIf([](const Row &row) { return !row.record.archived; });
    if (!tracker)
        return;
    connect(tracker, &Job::JobTracker::jobChanged, this, &JobsModel::onLive);
    connect(tracker, &Job::JobTracker::jobArchived, this, &JobsModel::onArchived);
    connect(tracker, &Job::JobTracker::jobRemoved, this, &JobsModel::onRemoved);
    connect(tracker, &QObject::destroyed, this, [this] { removeIf([](const Row &row) { return !row.record.archived; }); });
    for (const Job::JobRecord &record : tracker->jobs())
        onLive(record);
}

void JobsModel::setDiagnosisSource(Job::PendingDiagnoser *diagnoser)
{
    if (diagnoser == m_diagnoser)
        return;
    if (m_diagnoser)
        disconnect(m_diagnoser, nullptr, this, nullptr);
    m_diagnoser = diagnoser;
    if (diagnoser) {
        connect(diagnoser, &Job::PendingDiagnoser::diagnosisChanged, this, [this](const QString &id) {
            if (const int row = rowOf(id); row >= 0)
                Q_EMIT dataChanged(index(row, MessageColumn), index(row, MessageColumn), { Qt::DisplayRole, Qt::ToolTipRole, SortRole });
        });
    }
    if (!m_rows.isEmpty())
        Q_EMIT dataChanged(index(0, MessageColumn), index(int(m_rows.size()) - 1, MessageColumn));
}

QString JobsModel::pendingWhy(const Row &row) const
{
    if (!m_diagnoser || !row.live || row.record.archived || row.record.state != Job::JobState::Pending)
        return {};
    const auto d = m_diagnoser->diagnosisOf(row.record.id);
    return d ? QStringLiteral("%1: %2").arg(d->causeId(), d->message) : QString();
}

void JobsModel::setProgressSource(Job::ProgressFollower *progress)
{
    if (progress == m_progress)
        return;
    if (m_progress)
        disconnect(m_progress, nullptr, this, nullptr);
    m_progress = progress;
    if (progress) {
        connect(progress, &Job::ProgressFollower::progressChanged, this, [this](const QString &id) {
            if (const int row = rowOf(id); row >= 0)
                Q_EMIT dataChanged(index(row, ProgressColumn), index(row, ProgressColumn), { Qt::DisplayRole, Qt::ToolTipRole, SortRole });
        });
    }
    if (!m_rows.isEmpty())
        Q_EMIT dataChanged(index(0, ProgressColumn), index(int(m_rows.size()) - 1, ProgressColumn), { Qt::DisplayRole, Qt::ToolTipRole, SortRole });
}

Job::JobTracker *JobsModel::tracker() const
{
    return m_tracker.data();
}

S3::S3Client *JobsModel::historyStore() const
{
    return m_s3.data();
}

void JobsModel::setHistoryStore(S3::S3Client *s3)
{
    if (s3 == m_s3)
        return;
    m_historyRead.reset(); // aborts a read of the old bucket
    setHistoryLoading(false);
    m_s3 = s3;
    removeIf([](const Row &row) { return row.record.archived; });
}

void JobsModel::refreshHistory()
{
    if (!m_s3)
        return;
    m_historyRead = std::make_unique<QObject>();
    m_archivedDuringRead.clear();
    setHistoryLoading(true);
    QObject *context = m_historyRead.get();
    Job::readHistory(m_s3, context, [this, context](Result<Job::History> history) {
        if (context != m_historyRead.get())
            return;
        m_historyRead.release()->deleteLater(); // not inside its own callback
        setHistoryLoading(false);
        if (!history) {
            Q_EMIT historyFailed(history.error().message);
            return;
        }
        onHistory(history->jobs);
        Q_EMIT historyLoaded(static_cast<int>(history->jobs.size()), history->unreadable);
    });
}

void JobsModel::setHistoryLoading(bool loading)
{
    if (loading == m_historyLoading)
        return;
    m_historyLoading = loading;
    Q_EMIT historyLoadingChanged(loading);
}

void JobsModel::onLive(const Job::JobRecord &record)
{
    if (record.id.isEmpty())
        return;
    const int row = rowOf(record.id);
    if (row >= 0 && m_rows.at(row).record.archived)
        return; // the archive is the final word
    put(record, true);
}

void JobsModel::onArchived(const Job::JobRecord &record)
{
    if (record.id.isEmpty())
        return;
    if (m_historyRead)
        m_archivedDuringRead.insert(record.id);
    Job::JobRecord archived = record;
    archived.archived = true;
    put(archived, false);
}

void JobsModel::onRemoved(const QString &id)
{
    // After jobArchived the row holds the archive and stays; otherwise the job is gone without
    // one (a submission that failed, `starforge-cli delete`).
    const int row = rowOf(id);
    if (row >= 0 && !m_rows.at(row).record.archived)
        removeAt(row);
}

void JobsModel::onHistory(const QList<Job::JobRecord> &records)
{
    QSet<QString> ids;
    for (const Job::JobRecord &r : records)
        ids.insert(r.id);
    // Archives deleted from the bucket go, unless the tracker archived the job after the
    // listing was taken.
    removeIf([&](const Row &row) {
        return row.record.archived && !ids.contains(row.record.id) && !m_archivedDuringRead.contains(row.record.id);
    });
    m_archivedDuringRead.clear();
    if (m_rows.isEmpty() && !records.isEmpty()) {
        // The first fill: one insertion of the whole sorted list.
        QList<Row> rows;
        rows.reserve(records.size());
        QSet<QString> seen;
        for (Job::JobRecord r : records) {
            if (r.id.isEmpty() || seen.contains(r.id))
                continue;
            seen.insert(r.id);
            r.archived = true;
            rows.append(Row { r, false });
        }
        std::sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) { return comesBefore(a.record, b.record); });
        beginInsertRows({}, 0, static_cast<int>(rows.size()) - 1);
        m_rows = std::move(rows);
        endInsertRows();
        return;
    }
    for (Job::JobRecord r : records) {
        if (r.id.isEmpty())
            continue;
        r.archived = true;
        put(r, false); // an archive replaces a live row of the same job
    }
}

int JobsModel::insertPosition(const Job::JobRecord &record) const
{
    const auto it = std::lower_bound(m_rows.cbegin(), m_rows.cend(), record,
                                     [](const Row &row, const Job::JobRecord &r) { return comesBefore(row.record, r); });
    return static_cast<int>(it - m_rows.cbegin());
}

void JobsModel::put(const Job::JobRecord &record, bool live)
{
    int row = rowOf(record.id);
    if (row < 0) {
        const int at = insertPosition(record);
        beginInsertRows({}, at, at);
        m_rows.insert(at, Row { record, live });
        endInsertRows();
        return;
    }
    Row &existing = m_rows[row];
    if (existing.live == live && sameRecord(existing.record, record))
        return;
    existing = Row { record, live };
    // Keep the order: a submission's time can change when its RayJob appears.
    const int last = static_cast<int>(m_rows.size()) - 1;
    const bool ordered
        = (row == 0 || comesBefore(m_rows.at(row - 1).record, record)) && (row == last || comesBefore(record, m_rows.at(row + 1).record));
    if (!ordered) {
        int target = 0; // its index among the other rows
        for (int i = 0; i <= last; ++i) {
            if (i != row && comesBefore(m_rows.at(i).record, record))
                ++target;
        }
        const int destination = target >= row ? target + 1 : target;
        if (destination != row && destination != row + 1) {
            beginMoveRows({}, row, row, {}, destination);
            m_rows.move(row, target);
            endMoveRows();
            row = target;
        }
    }
    Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

void JobsModel::removeAt(int row)
{
    beginRemoveRows({}, row, row);
    m_rows.removeAt(row);
    endRemoveRows();
}

void JobsModel::removeIf(const std::function<bool(const Row &)> &drop)
{
    // Contiguous runs go in one removal, from the end so indexes stay valid.
    int row = static_cast<int>(m_rows.size()) - 1;
    while (row >= 0) {
        if (!drop(m_rows.at(row))) {
            --row;
            continue;
        }
        int first = row;
        while (first > 0 && drop(m_rows.at(first - 1)))
            --first;
        beginRemoveRows({}, first, row);
        m_rows.remove(first, row - first + 1);
        endRemoveRows();
        row = first - 1;
    }
}

void JobsModel::refreshAges()
{
    if (m_rows.isEmpty())
        return;
    Q_EMIT dataChanged(index(0, SubmittedColumn), index(static_cast<int>(m_rows.size()) - 1, SubmittedColumn),
                       { Qt::DisplayRole, Qt::ToolTipRole });
    // A running job's duration grows; an ended one's is fixed.
    for (int row = 0; row < m_rows.size(); ++row) {
        const Job::JobRecord &r = m_rows.at(row).record;
        if (r.started.isValid() && !r.ended.isValid())
            Q_EMIT dataChanged(index(row, DurationColumn), index(row, DurationColumn), { Qt::DisplayRole, JobsModel::SortRole });
    }
}

QString JobsModel::poolsText(const QJsonObject &jobSpec)
{
    QStringList parts;
    for (const QJsonValue &v : jobSpec.value(QLatin1String("pools")).toArray()) {
        const QJsonObject pool = v.toObject();
        // The JobSpec's defaults (docs/jobspec.md): 1 node, 8 GPUs per node.
        parts << QStringLiteral("%1×%2 %3")
                     .arg(pool.value(QLatin1String("nodes")).toInt(1))
                     .arg(pool.value(QLatin1String("gpusPerNode")).toInt(8))
                     .arg(pool.value(QLatin1String("series")).toString());
    }
    return parts.join(QStringLiteral(" + "));
}

qint64 JobsModel::gpusAsked(const QJsonObject &jobSpec)
{
    qint64 total = 0;
    for (const QJsonValue &v : jobSpec.value(QLatin1String("pools")).toArray()) {
        const QJsonObject pool = v.toObject();
        total += qint64(pool.value(QLatin1String("nodes")).toInt(1)) * pool.value(QLatin1String("gpusPerNode")).toInt(8);
    }
    return total;
}

const Job::JobProgress *JobsModel::progressOf(const QString &jobId) const
{
    return m_progress ? m_progress->progress(jobId) : nullptr;
}

int JobsModel::rowOf(const QString &jobId) const
{
    for (int i = 0; i < m_rows.size(); ++i) {
        if (m_rows.at(i).record.id == jobId)
            return i;
    }
    return -1;
}

Job::JobRecord JobsModel::recordAt(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_rows.at(row).record : Job::JobRecord {};
}

int JobsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int JobsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

Qt::ItemFlags JobsModel::flags(const QModelIndex &index) const
{
    if (!index.isValid() || !checkIndex(index, CheckIndexOption::ParentIsInvalid))
        return Qt::NoItemFlags;
    return Qt::ItemIsSelectable | Qt::ItemIsEnabled | Qt::ItemNeverHasChildren;
}

QString JobsModel::ageText(qint64 seconds)
{
    if (seconds < 60)
        return tr("just now");
    if (seconds < 3600)
        return tr("%1 min ago").arg(seconds / 60);
    if (seconds < 48 * 3600)
        return tr("%1 h ago").arg(seconds / 3600);
    return tr("%1 d ago").arg(seconds / 86400);
}

QVariant JobsModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || !checkIndex(index, CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &row = m_rows.at(index.row());
    const Job::JobRecord &r = row.record;
    const auto column = static_cast<Column>(index.column());
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case IdColumn:
            return r.id;
        case NameColumn:
            return r.rayJobName.isEmpty() ? r.name : r.rayJobName;
        case OwnerColumn:
            if (r.owner.isEmpty())
                return tr("unknown");
            return m_tracker && r.owner == m_tracker->viewer().owner ? tr("you") : r.owner;
        case StateColumn:
            return r.displayState();
        case PoolsColumn:
            return poolsText(r.jobSpec);
        case SubmittedColumn:
            return r.created.isValid() ? ageText(std::max<qint64>(0, r.created.secsTo(m_now()))) : QString();
        case DurationColumn:
            // How long Ray ran it: to its end, or to now while it runs.
            if (!r.started.isValid())
                return QString();
            return durationText(std::max<qint64>(0, r.started.secsTo(r.ended.isValid() ? r.ended : m_now())));
        case ProgressColumn:
            if (const Job::JobProgress *p = progressOf(r.id))
                return p->summary();
            return QString();
        case EndedColumn: {
            if (!r.ended.isValid())
                return QString();
            const QDateTime local = r.ended.toLocalTime();
            return local.date() == m_now().toLocalTime().date() ? QLocale().toString(local.time(), QLocale::ShortFormat)
                                                                : QLocale().toString(local, QLocale::ShortFormat);
        }
        case MessageColumn:
            if (const QString why = pendingWhy(row); !why.isEmpty())
                return oneLine(why);
            return oneLine(r.message);
        case ColumnCount:
            break;
        }
        return {};
    case Qt::ToolTipRole:
        switch (column) {
        case IdColumn:
        case NameColumn:
            return r.name.isEmpty() ? r.rayJobName : tr("Job %1 (%2), RayJob %3").arg(r.id, r.name, r.rayJobName);
        case StateColumn: {
            QStringList lines { r.displayState() };
            if (!r.reason.isEmpty())
                lines << tr("Reason: %1").arg(r.reason);
            if (!r.cause.isEmpty())
                lines << tr("Cause: %1").arg(r.cause);
            if (!r.lost.isEmpty())
                lines << tr("Not archived: %1").arg(r.lost.join(QLatin1Char(' ')));
            return lines.join(QLatin1Char('\n'));
        }
        case SubmittedColumn:
            return r.created.isValid() ? tr("Submitted %1").arg(fullTime(r.created)) : QString();
        case PoolsColumn: {
            const qint64 gpus = gpusAsked(r.jobSpec);
            return gpus > 0 ? tr("%1: %n GPU(s) in all (nodes × GPUs per node, series)", nullptr, int(std::min<qint64>(gpus, INT_MAX))).arg(poolsText(r.jobSpec))
                            : QString();
        }
        case DurationColumn:
            if (r.started.isValid())
                return tr("Ray started it %1").arg(fullTime(r.started));
            return Job::isTerminal(r.state) ? tr("It ended without running") : tr("Not started yet");
        case ProgressColumn:
            if (const Job::JobProgress *p = progressOf(r.id))
                return p->details();
            return QString();
        case EndedColumn:
            if (!r.ended.isValid())
                return QString();
            if (r.started.isValid()) {
                return tr("Ended %1, %2 after Ray started it")
                    .arg(fullTime(r.ended), durationText(std::max<qint64>(0, r.started.secsTo(r.ended))));
            }
            return tr("Ended %1 without running").arg(fullTime(r.ended));
        case OwnerColumn:
            if (r.owner.isEmpty())
                return tr("The job records no owner: it was made before Starforge recorded owners, and nobody's app acts on it");
            if (m_tracker && Job::actsOn(m_tracker->ownershipOf(r)))
                return tr("Yours (%1)").arg(r.owner);
            return tr("%1's job: shown read-only, only its owner's app stops, archives or deletes it").arg(r.owner);
        case MessageColumn:
            if (const QString why = pendingWhy(row); !why.isEmpty())
                return tr("Why it is pending — %1").arg(why);
            return r.message;
        case ColumnCount:
            break;
        }
        return {};
    case MineRole:
        return m_tracker && Job::actsOn(m_tracker->ownershipOf(r));
    case StateRole:
        return QVariant::fromValue(r.state);
    case ArchivedRole:
        return r.archived;
    case LiveRole:
        return row.live;
    case ActiveRole:
        // A RayJob being deleted is going: not active, nothing to stop again.
        return !r.archived && !Job::isTerminal(r.state) && !r.isDeleting();
    case RecordRole:
        return QVariant::fromValue(r);
    case JobIdRole:
        return r.id;
    case SortRole:
        switch (column) {
        case SubmittedColumn:
            return sortTime(r);
        case EndedColumn:
            return r.ended;
        case PoolsColumn:
            return gpusAsked(r.jobSpec);
        case DurationColumn:
            return r.started.isValid() ? r.started.secsTo(r.ended.isValid() ? r.ended : m_now()) : qint64(-1);
        case ProgressColumn: {
            // How far along, as a fraction of the steps asked for (epochs counted in).
            const Job::JobProgress *p = progressOf(r.id);
            if (!p || p->totalSteps() <= 0)
                return -1.0;
            const double epochs = std::max(1, p->totalEpochs());
            return (std::max(0, p->epoch() - 1) + double(p->step()) / p->totalSteps()) / epochs;
        }
        case StateColumn:
            return r.displayState();
        default:
            return data(index, Qt::DisplayRole);
        }
    default:
        return {};
    }
}

QVariant JobsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::DisplayRole) {
        switch (static_cast<Column>(section)) {
        case IdColumn:
            return tr("ID");
        case NameColumn:
            return tr("Name");
        case OwnerColumn:
            return tr("Owner");
        case StateColumn:
            return tr("State");
        case PoolsColumn:
            return tr("Pools");
        case SubmittedColumn:
            return tr("Submitted");
        case DurationColumn:
            return tr("Duration");
        case ProgressColumn:
            return tr("Progress");
        case EndedColumn:
            return tr("Ended");
        case MessageColumn:
            return tr("Message");
        case ColumnCount:
            break;
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (static_cast<Column>(section)) {
        case IdColumn:
            return tr("The job id (starforge.dev/job-id)");
        case NameColumn:
            return tr("The RayJob's name");
        case OwnerColumn:
            return tr("Whose job it is (starforge.dev/owner): you, or a colleague sharing the namespace");
        case StateColumn:
            return tr("Submitting, Pending, Running, Succeeded, Failed or Stopped; Archived once its logs and events are in the bucket");
        case PoolsColumn:
            return tr("What the job asked for: nodes × GPUs per node and the GPU series, per pool");
        case SubmittedColumn:
            return tr("How long ago the job was submitted");
        case DurationColumn:
            return tr("How long Ray has run the job, or ran it");
        case ProgressColumn:
            return tr("How far training has come, from the driver's log (runner progress lines), followed while the job runs");
        case EndedColumn:
            return tr("When the job ended");
        case MessageColumn:
            return tr("Why a Pending job waits (the diagnosis, with the numbers), else KubeRay's or Starforge's message about the job");
        case ColumnCount:
            break;
        }
    }
    return {};
}

QHash<int, QByteArray> JobsModel::roleNames() const
{
    auto roles = QAbstractTableModel::roleNames();
    roles.insert(StateRole, "state");
    roles.insert(ArchivedRole, "archived");
    roles.insert(LiveRole, "live");
    roles.insert(ActiveRole, "active");
    roles.insert(RecordRole, "record");
    roles.insert(JobIdRole, "jobId");
    roles.insert(SortRole, "sortValue");
    roles.insert(MineRole, "mine");
    return roles;
}

} // namespace Starforge::Models
