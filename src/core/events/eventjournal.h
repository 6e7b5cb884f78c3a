#pragma once

// The event journal: a SQLite file on this machine that keeps a job's Kubernetes events and the
// RayJob's status changes as the session sees them, so the timeline still shows them after
// Kubernetes has dropped them (events live about an hour, and a RayCluster's go with it) and
// after the app restarts (docs/events.md, "The local journal"; docs/design.md, "Local state").
//
// The rules it keeps:
//  - one row per event, keyed by metadata.uid (else namespace/name); a later copy replaces the
//    stored one only when its count is larger (or the count is equal and it was seen later), so
//    an informer's relist after a restart writes nothing;
//  - a RayJob's status is stored only when it differs from the last one stored for that RayJob;
//  - writes are queued and written in one transaction by flush() or a short timer; the queries
//    write what is queued first, so they see everything recorded;
//  - the file has a schema version (PRAGMA user_version): a newer one is refused with the fix,
//    a corrupt file is moved aside and a fresh one started;
//  - the file stays under JournalOptions::maxBytes and keeps nothing last seen longer ago than
//    maxAgeDays: prune() runs at open, every hour, and after a write that took it past the bound.
// Malformed input (an event with neither a uid nor a name, or about no named object) is skipped
// with a debug line; nothing here throws or asserts on what the cluster sends.
// One connection on the thread that opened it (Qt SQL's rule): use it from that thread only.

#include "core/events/timeline.h"
#include "core/util/result.h"

#include <QDateTime>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <memory>
#include <optional>

namespace Starforge::Events {

struct JournalOptions
{
    qint64 maxBytes = 64 * 1024 * 1024;   // size bound of the database file; pruning keeps it under
    int maxAgeDays = 90;                  // events last seen longer ago are pruned
};

// One recorded change of a RayJob's status.
struct JobStateChange
{
    QString ns;
    QString rayJobName;
    QString jobId;                 // starforge.dev/job-id label, may be empty
    QDateTime at;                  // when the app saw it (UTC)
    QString deploymentStatus;      // status.jobDeploymentStatus
    QString jobStatus;             // status.jobStatus
    QString reason;                // status.reason
    QString message;               // status.message

    // The same status (the four status fields; who and when are not compared).
    bool sameStatus(const JobStateChange &other) const;
};

class EventJournal final : public QObject
{
    Q_OBJECT
public:
    // Opens (creating) the database at path; an error says what to fix (path not writable, a
    // newer schema version than this build knows, a corrupt file: it is moved aside to
    // <path>.corrupt-<time> and a fresh one started, with a warning logged). The caller owns the
    // journal; a parent given as well must outlive it.
    static Result<std::unique_ptr<EventJournal>> open(const QString &path, JournalOptions options = {}, QObject *parent = nullptr);
    ~EventJournal() override;
    QString path() const { return m_path; }
    static int schemaVersion();    // 1

    // A core/v1 or events.k8s.io/v1 Event object as the API returns it. Upserts by the event's
    // metadata.uid (falling back to namespace/name): a later copy with a larger count replaces
    // the earlier. Writes are batched in one transaction (flush() or a short timer).
    void recordEvent(const QJsonObject &event);
    void recordJobState(const JobStateChange &change);   // stored only when it differs from the last for that RayJob
    void flush();

    // Every journaled event about objects of this namespace whose involvedObject/regarding name
    // starts with one of namePrefixes (a RayJob's name covers its RayCluster "<rayjob>-xxxxx",
    // the cluster's pods, the submitter Job and its pods), oldest first, as the original JSON.
    // Empty prefixes are ignored: no prefix gives no events.
    QList<QJsonObject> events(const QString &ns, const QStringList &namePrefixes) const;
    QList<JobStateChange> jobStates(const QString &ns, const QString &rayJobName) const;

    // Prune now: drop events older than maxAgeDays, then the oldest until the file is under
    // maxBytes (VACUUM when much was freed). Also runs at open and every hour.
    void prune();

    struct Stats
    {
        qint64 events = 0;
        qint64 states = 0;
        qint64 bytes = 0;   // the database file and its write-ahead log on disk
    };
    Stats stats() const;

private:
    struct PendingEvent
    {
        QString key;
        QString ns;
        QString involvedName;
        QString involvedKind;
        qint64 firstSeenMs = 0;
        qint64 lastSeenMs = 0;
        int count = 1;
        QByteArray json;
    };

    EventJournal(QString path, QString connection, JournalOptions options, QObject *parent);
    void schedule();
    // Writes what is queued, in one transaction (const: the queries see what was recorded).
    void writePending() const;
    std::optional<JobStateChange> lastStored(const QString &ns, const QString &rayJobName) const;
    qint64 usedBytes() const;     // pages in use, as SQLite counts them
    qint64 bytesOnDisk() const;   // what the bound is checked against
    bool exec(const QString &sql) const;

    QString m_path;
    QString m_connection;   // this instance's QSqlDatabase connection name
    JournalOptions m_options;
    mutable QList<PendingEvent> m_pendingEvents;
    mutable QHash<QString, qsizetype> m_pendingIndex;       // event key -> index in m_pendingEvents
    mutable QList<JobStateChange> m_pendingStates;
    mutable QHash<QString, JobStateChange> m_lastState;     // "ns/rayjob" -> last recorded (stored or queued)
    QTimer m_flushTimer;
    QTimer m_pruneTimer;
};

// Two event lists (for example the archived events.json and the journal) merged: one entry per
// event (same metadata.uid, else same namespace/name; the copy with the later lastSeen/larger
// count wins), ordered by first seen then last seen. An entry with neither a uid nor a name is
// kept as it is.
QList<QJsonObject> mergeEvents(const QList<QJsonObject> &a, const QList<QJsonObject> &b);

// A job's timeline input completed from the journal: the events it kept about the job's objects
// ("<rayjob>" and "<rayjob>-…"; the prefix query also returns longer names, which are left
// out) merged with input.events, and the RayJob's recorded states. input.rayJobName names the job.
void addFromJournal(const EventJournal &journal, const QString &ns, TimelineInput &input);

} // namespace Starforge::Events
