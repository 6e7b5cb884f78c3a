#pragma once

// The Jobs panel's table: one row per job id, from two sources (docs/jobs.md):
//  - a JobTracker's live jobs (Submitting, Pending, Running, and ended jobs being archived);
//  - the job history in the bucket (readHistory: archived records, jobs/<id>/status.json).
// An archived record is final: once a job's row holds it, live updates for that id change
// nothing, and a history refresh never removes a live row. When the tracker archives a job its
// row turns into the archived record in place (dataChanged, no remove and insert), and the
// tracker's jobRemoved that follows leaves it there.
//
// Rows are kept newest first (by submission time, else end time) and every change is
// incremental (dataChanged, insert, remove, move): the model never resets, so a view keeps its
// selection and scroll position while jobs come and go.

#include "core/job/jobrecord.h"

#include <QAbstractTableModel>
#include <QJsonObject>
#include <QPointer>
#include <QSet>
#include <QTimer>

#include <functional>
#include <memory>

namespace Starforge::Job {
class JobTracker;
class PendingDiagnoser;
class ProgressFollower;
class JobProgress;
}
namespace Starforge::S3 {
class S3Client;
}

namespace Starforge::Models {

class JobsModel final : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { IdColumn, NameColumn, OwnerColumn, StateColumn, PoolsColumn, SubmittedColumn, DurationColumn, ProgressColumn, EndedColumn, MessageColumn, ColumnCount };
    Q_ENUM(Column)

    enum Role {
        StateRole = Qt::UserRole + 1, // Job::JobState: the live state, or an archived job's outcome
        ArchivedRole, // bool: the record comes from the archive
        LiveRole, // bool: the tracker follows the job (it can be stopped)
        ActiveRole, // bool: Submitting, Pending or Running, not archived
        RecordRole, // Job::JobRecord, the whole record
        JobIdRole, // QString
        SortRole, // per column: a value to sort by (QDateTime for times)
        MineRole, // bool: the tracker's viewer owns the job (ownership.h): it may stop or delete it
    };
    Q_ENUM(Role)

    explicit JobsModel(QObject *parent = nullptr);
    ~JobsModel() override;

    // Follows tracker's jobs (nullptr: none). The previous tracker's live rows go; archived
    // rows stay. The tracker must outlive its use here or be unset first.
    void setTracker(Job::JobTracker *tracker);
    Job::JobTracker *tracker() const;
    // Where the Progress column's "step 120/500" comes from (nullptr: none, the column is empty).
    void setProgressSource(Job::ProgressFollower *progress);
    // Where a live Pending job's "why it waits" comes from, for the Message column (nullptr:
    // none, the column shows the RayJob's own message).
    void setDiagnosisSource(Job::PendingDiagnoser *diagnoser);

    // The bucket the history is read from (nullptr: none, and the archived rows go). Does not
    // read by itself: call refreshHistory().
    void setHistoryStore(S3::S3Client *s3);
    S3::S3Client *historyStore() const;
    // Reads the history again: new archives appear, archives deleted from the bucket go.
    // historyLoaded or historyFailed follows (nothing when there is no store).
    void refreshHistory();
    bool isHistoryLoading() const { return m_historyLoading; }

    // What the job asked for, from its JobSpec's pools: "2×8 h200 + 1×8 h100" (nodes × GPUs per
    // node, series); empty for a JobSpec without pools.
    static QString poolsText(const QJsonObject &jobSpec);
    // GPUs the job asked for in all (nodes × GPUs per node, summed over its pools).
    static qint64 gpusAsked(const QJsonObject &jobSpec);

    // The time ages are measured from (tests inject one); the Submitted column's ages and the
    // running jobs' durations are refreshed every ageRefreshMs.
    void setClock(std::function<QDateTime()> now);
    void setAgeRefreshInterval(int ms);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    QHash<int, QByteArray> roleNames() const override;

    // -1 when no row has that job.
    int rowOf(const QString &jobId) const;
    Job::JobRecord recordAt(int row) const;

    // "just now", "4 min ago", "3 h ago", "2 d ago".
    static QString ageText(qint64 seconds);

Q_SIGNALS:
    void historyLoadingChanged(bool loading);
    // count: archived jobs read; unreadable: "jobs/<id>/status.json: why" for records skipped.
    void historyLoaded(int count, const QStringList &unreadable);
    void historyFailed(const QString &message);

private:
    struct Row
    {
        Job::JobRecord record;
        bool live = false; // from the tracker and not archived
    };

    void onLive(const Job::JobRecord &record);
    void onArchived(const Job::JobRecord &record);
    void onRemoved(const QString &id);
    void onHistory(const QList<Job::JobRecord> &records);
    // Inserts or replaces id's row, keeping the order; emits the matching signals.
    void put(const Job::JobRecord &record, bool live);
    void removeAt(int row);
    void removeIf(const std::function<bool(const Row &)> &drop);
    int insertPosition(const Job::JobRecord &record) const;
    void setHistoryLoading(bool loading);
    void refreshAges();
    const Job::JobProgress *progressOf(const QString &jobId) const;
    // "CAUSE: sentence" for a live Pending job the diagnoser has explained; empty otherwise.
    QString pendingWhy(const Row &row) const;

    QList<Row> m_rows;
    QPointer<Job::JobTracker> m_tracker;
    QPointer<Job::ProgressFollower> m_progress;
    QPointer<Job::PendingDiagnoser> m_diagnoser;
    QPointer<S3::S3Client> m_s3;
    std::unique_ptr<QObject> m_historyRead; // context of the read in flight; deleting it aborts
    QSet<QString> m_archivedDuringRead; // archived by the tracker after that read began
    bool m_historyLoading = false;
    std::function<QDateTime()> m_now;
    QTimer m_ageTimer;
};

} // namespace Starforge::Models
