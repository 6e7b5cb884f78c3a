#include "core/events/eventjournal.h"

#include "core/kube/resources.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>

#include <algorithm>
#include <atomic>
#include <utility>

namespace Starforge::Events {

Q_LOGGING_CATEGORY(lcJournal, "starforge.core.events")

namespace {

constexpr int SchemaVersion = 1;
constexpr qint64 MinMaxBytes = 64 * 1024;
constexpr int FlushDelayMs = 500;
constexpr int PruneIntervalMs = 3600 * 1000;

// Version 1. Times are milliseconds since the epoch (UTC). first_seen and last_seen fall back
// on each other and then on when the app recorded the event, so every row sorts and ages.
const char *const SchemaV1[] = {
    "CREATE TABLE events ("
    " key TEXT PRIMARY KEY NOT NULL,"       // metadata.uid, else namespace/name
    " ns TEXT NOT NULL,"                    // the involved object's namespace, else the event's
    " involved_name TEXT NOT NULL,"         // involvedObject.name / regarding.name
    " involved_kind TEXT NOT NULL,"
    " first_seen INTEGER NOT NULL,"
    " last_seen INTEGER NOT NULL,"
    " count INTEGER NOT NULL,"
    " json TEXT NOT NULL)",                 // the event as the API returned it, compact
    "CREATE INDEX events_by_object ON events (ns, involved_name)",
    "CREATE INDEX events_by_last_seen ON events (last_seen)",
    "CREATE TABLE job_states ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " ns TEXT NOT NULL,"
    " rayjob TEXT NOT NULL,"
    " job_id TEXT NOT NULL,"
    " at INTEGER NOT NULL,"
    " deployment_status TEXT NOT NULL,"
    " job_status TEXT NOT NULL,"
    " reason TEXT NOT NULL,"
    " message TEXT NOT NULL)",
    "CREATE INDEX job_states_by_rayjob ON job_states (ns, rayjob, id)",
    "CREATE INDEX job_states_by_at ON job_states (at)",
};

QString sql(const char *text)
{
    return QString::fromLatin1(text);
}

// SQLite's result codes as Qt's driver reports them (nativeErrorCode): SQLITE_CORRUPT and
// SQLITE_NOTADB say the file is damaged or not a database at all.
bool isCorruption(const QSqlError &error)
{
    const QString code = error.nativeErrorCode();
    return code == QLatin1String("11") || code == QLatin1String("26");
}

QString describe(const QSqlError &error)
{
    const QString text = error.driverText().isEmpty() ? error.databaseText() : error.databaseText() + QStringLiteral(" (") + error.driverText() + u')';
    return text.isEmpty() ? error.text() : text;
}

// A string for a NOT NULL column: Qt's SQLite driver binds a null QString as NULL.
QString text(const QString &value)
{
    return value.isNull() ? QStringLiteral("") : value;
}

qint64 msOf(const QDateTime &time)
{
    return time.isValid() ? time.toMSecsSinceEpoch() : 0;
}

// Which of two copies of one event is the later: the larger count, then the later last seen
// (both only grow while Kubernetes updates an event).
bool isLater(int count, qint64 lastSeenMs, int otherCount, qint64 otherLastSeenMs)
{
    return count > otherCount || (count == otherCount && lastSeenMs > otherLastSeenMs);
}

// metadata.uid, else namespace/name; empty when the object has neither.
QString eventKey(const QJsonObject &event)
{
    const QJsonObject meta = event.value(QLatin1String("metadata")).toObject();
    const QString uid = meta.value(QLatin1String("uid")).toString();
    if (!uid.isEmpty()) return uid;
    const QString name = meta.value(QLatin1String("name")).toString();
    if (name.isEmpty()) return {};
    return meta.value(QLatin1String("namespace")).toString() + u'/' + name;
}

// The first strings past every string that starts with prefix, for a range the index serves
// (SQLite compares text by its UTF-8 bytes, and no character sorts after U+10FFFF).
QString pastPrefix(const QString &prefix)
{
    static const char32_t last = 0x10FFFF;
    return prefix + QString::fromUcs4(&last, 1);
}

std::atomic<quint64> connectionCount{0};

// What opening one file came to: the database ready, a file to move aside, or an error.
struct Opened
{
    bool corrupt = false;
    QString damage;   // when corrupt: what SQLite said
    std::optional<Error> error;
};

Opened initialise(QSqlDatabase &db, const QString &path, const JournalOptions &options)
{
    auto failed = [&path](const QString &what, const QSqlError &error) {
        Opened o;
        if (isCorruption(error)) {
            o.corrupt = true;
            o.damage = describe(error);
        } else {
            o.error = Error::io(EventJournal::tr("Cannot %1 the event journal %2: %3. Check that the folder can be written and the disk is not full.")
                                    .arg(what, QDir::toNativeSeparators(path), describe(error)));
        }
        return o;
    };
    db.setDatabaseName(path);
    db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000"));
    if (!db.open()) return failed(EventJournal::tr("open"), db.lastError());
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("PRAGMA user_version")) || !q.next()) return failed(EventJournal::tr("read"), q.lastError());
    const int version = q.value(0).toInt();
    if (version > SchemaVersion) {
        Opened o;
        o.error = Error::unsupported(EventJournal::tr("The event journal %1 was written by a newer Starforge (schema version %2; this one knows up to %3). "
                                                      "Use that Starforge, or move the file away to start a new journal.")
                                         .arg(QDir::toNativeSeparators(path))
                                         .arg(version)
                                         .arg(SchemaVersion));
        return o;
    }
    // The whole file is read once: a damaged page found now is a file moved aside, not a query
    // failing later.
    if (!q.exec(QStringLiteral("PRAGMA quick_check")) || !q.next()) return failed(EventJournal::tr("check"), q.lastError());
    if (q.value(0).toString() != QLatin1String("ok")) {
        Opened o;
        o.corrupt = true;
        o.damage = q.value(0).toString();
        return o;
    }
    q.finish();
    if (version == 0) {
        if (!q.exec(QStringLiteral("SELECT count(*) FROM sqlite_master")) || !q.next()) return failed(EventJournal::tr("read"), q.lastError());
        if (q.value(0).toInt() > 0) {
            Opened o;
            o.error = Error::invalid(EventJournal::tr("%1 is an SQLite database but not a Starforge event journal. Move it away, and Starforge starts a new journal there.")
                                         .arg(QDir::toNativeSeparators(path)));
            return o;
        }
        q.finish();
        if (!db.transaction()) return failed(EventJournal::tr("write"), db.lastError());
        for (const char *statement : SchemaV1) {
            if (!q.exec(sql(statement))) {
                const QSqlError error = q.lastError();
                db.rollback();
                return failed(EventJournal::tr("write"), error);
            }
        }
        if (!q.exec(QStringLiteral("PRAGMA user_version = %1").arg(SchemaVersion)) || !db.commit()) {
            const QSqlError error = q.lastError().isValid() ? q.lastError() : db.lastError();
            db.rollback();
            return failed(EventJournal::tr("write"), error);
        }
    }
    // Readers (a second window, the CLI) never wait for the writer; NORMAL is durable in WAL
    // mode except for the last transactions on a power cut, which a journal can lose.
    if (!q.exec(QStringLiteral("PRAGMA journal_mode = WAL")) || !q.next()) return failed(EventJournal::tr("write"), q.lastError());
    q.finish();
    // The write-ahead log counts against the bound: checkpoint it before it passes an eighth of
    // the bound, and cut it back to that size afterwards.
    const qint64 walBytes = std::clamp<qint64>(options.maxBytes / 8, 64 * 1024, 4 * 1024 * 1024);
    for (const QString &pragma : {QStringLiteral("PRAGMA synchronous = NORMAL"), QStringLiteral("PRAGMA journal_size_limit = %1").arg(walBytes),
                                  QStringLiteral("PRAGMA wal_autocheckpoint = %1").arg(std::max<qint64>(16, walBytes / 4096))}) {
        if (!q.exec(pragma)) return failed(EventJournal::tr("set up"), q.lastError());
        q.finish();
    }
    return {};
}

// Moves path (and its -wal and -shm files) to path.corrupt-<time>; the new name, or empty.
QString moveAside(const QString &path)
{
    const QString target = path + QStringLiteral(".corrupt-") + QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMddTHHmmsszzzZ"));
    if (!QFile::rename(path, target)) return {};
    for (const QString &suffix : {QStringLiteral("-wal"), QStringLiteral("-shm")}) {
        if (QFile::exists(path + suffix) && !QFile::rename(path + suffix, target + suffix)) QFile::remove(path + suffix);
    }
    return target;
}

} // namespace

bool JobStateChange::sameStatus(const JobStateChange &other) const
{
    return deploymentStatus == other.deploymentStatus && jobStatus == other.jobStatus && reason == other.reason && message == other.message;
}

int EventJournal::schemaVersion()
{
    return SchemaVersion;
}

Result<std::unique_ptr<EventJournal>> EventJournal::open(const QString &path, JournalOptions options, QObject *parent)
{
    if (path.isEmpty()) return Error::invalid(tr("The event journal needs a file name."));
    if (options.maxBytes < MinMaxBytes) {
        return Error::invalid(tr("The event journal's size bound (%1 bytes) is too small: give it at least %2 bytes.").arg(options.maxBytes).arg(MinMaxBytes));
    }
    if (options.maxAgeDays < 1) return Error::invalid(tr("The event journal must keep events for at least a day (maxAgeDays is %1).").arg(options.maxAgeDays));
    if (!QSqlDatabase::isDriverAvailable(QStringLiteral("QSQLITE"))) {
        return Error::unavailable(tr("Qt's SQLite driver (QSQLITE) is not installed: install the package libqt6sql6-sqlite."));
    }
    const QFileInfo file(path);
    const QString folder = file.absolutePath();
    if (!QDir().mkpath(folder)) {
        return Error::io(tr("Cannot create the folder %1 for the event journal: check its permissions and that the disk is not full.").arg(QDir::toNativeSeparators(folder)));
    }
    if (file.exists() ? !file.isWritable() : !QFileInfo(folder).isWritable()) {
        return Error::io(tr("The event journal %1 cannot be written: give your user write permission on it%2.")
                             .arg(QDir::toNativeSeparators(file.absoluteFilePath()), file.exists() ? QString() : tr(" and its folder")));
    }

    const QString connection = QStringLiteral("starforge-journal-%1").arg(++connectionCount);
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (!QFileInfo::exists(file.absoluteFilePath())) {
            // Events name people's jobs, pods and images: the file is its owner's alone. SQLite
            // starts a database in an empty file, and gives its -wal and -shm files the same mode.
            QFile created(file.absoluteFilePath());
            if (!created.open(QIODevice::WriteOnly, QFileDevice::ReadOwner | QFileDevice::WriteOwner)) {
                return Error::io(tr("Cannot create the event journal %1: %2.").arg(QDir::toNativeSeparators(file.absoluteFilePath()), created.errorString()));
            }
        }
        Opened opened;
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
            opened = initialise(db, file.absoluteFilePath(), options);
            if (!opened.corrupt && !opened.error) break;
            db.close();
        }
        QSqlDatabase::removeDatabase(connection);
        if (opened.error) return *opened.error;
        // Damaged: kept for whoever wants to look, and a fresh journal started in its place.
        const QString aside = attempt == 0 ? moveAside(file.absoluteFilePath()) : QString();
        if (aside.isEmpty()) {
            return Error::io(tr("The event journal %1 is damaged and could not be moved aside: move or delete it, and Starforge starts a new one.")
                                 .arg(QDir::toNativeSeparators(file.absoluteFilePath())));
        }
        qCWarning(lcJournal).noquote() << "the event journal" << file.absoluteFilePath() << "is damaged; moved it to" << aside
                                       << "and started a new one. SQLite said:" << opened.damage.left(300);
    }
    std::unique_ptr<EventJournal> journal(new EventJournal(file.absoluteFilePath(), connection, options, parent));
    journal->prune();
    return journal;
}

EventJournal::EventJournal(QString path, QString connection, JournalOptions options, QObject *parent)
    : QObject(parent)
    , m_path(std::move(path))
    , m_connection(std::move(connection))
    , m_options(options)
{
    m_flushTimer.setSingleShot(true);
    m_flushTimer.setInterval(FlushDelayMs);
    connect(&m_flushTimer, &QTimer::timeout, this, &EventJournal::flush);
    m_pruneTimer.setInterval(PruneIntervalMs);
    connect(&m_pruneTimer, &QTimer::timeout, this, &EventJournal::prune);
    m_pruneTimer.start();
}

EventJournal::~EventJournal()
{
    writePending();
    {
        QSqlDatabase db = QSqlDatabase::database(m_connection, false);
        db.close();   // the last connection: SQLite checkpoints the log into the file and removes it
    }
    QSqlDatabase::removeDatabase(m_connection);
}

bool EventJournal::exec(const QString &statement) const
{
    QSqlQuery q(QSqlDatabase::database(m_connection, false));
    if (q.exec(statement)) return true;
    qCWarning(lcJournal).noquote() << "event journal:" << statement.left(60) << "failed:" << describe(q.lastError());
    return false;
}

void EventJournal::schedule()
{
    if (!m_flushTimer.isActive()) m_flushTimer.start();
}

void EventJournal::recordEvent(const QJsonObject &event)
{
    const QString key = eventKey(event);
    const Kube::Event e = Kube::Event::fromJson(event);
    const QString ns = e.regardingNamespace.isEmpty() ? e.ns : e.regardingNamespace;
    if (key.isEmpty() || e.regardingName.isEmpty() || ns.isEmpty()) {
        qCDebug(lcJournal) << "skipped an event without a uid or name, or about no named object in a namespace";
        return;
    }
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    PendingEvent p;
    p.key = key;
    p.ns = ns;
    p.involvedName = e.regardingName;
    p.involvedKind = e.regardingKind;
    const qint64 first = msOf(e.firstSeen);
    const qint64 last = msOf(e.lastSeen);
    p.firstSeenMs = first ? first : last ? last : now;
    p.lastSeenMs = last ? last : p.firstSeenMs;
    p.count = e.count;
    QJsonObject stored = event;
    QJsonObject meta = stored.value(QLatin1String("metadata")).toObject();
    if (meta.contains(QLatin1String("managedFields"))) {   // large and never shown
        meta.remove(QLatin1String("managedFields"));
        stored.insert(QLatin1String("metadata"), meta);
    }
    p.json = QJsonDocument(stored).toJson(QJsonDocument::Compact);

    if (const auto it = m_pendingIndex.constFind(key); it != m_pendingIndex.cend()) {
        PendingEvent &queued = m_pendingEvents[*it];
        if (isLater(p.count, p.lastSeenMs, queued.count, queued.lastSeenMs)) queued = std::move(p);
    } else {
        m_pendingIndex.insert(key, m_pendingEvents.size());
        m_pendingEvents.append(std::move(p));
    }
    schedule();
}

std::optional<JobStateChange> EventJournal::lastStored(const QString &ns, const QString &rayJobName) const
{
    const QString key = ns + u'/' + rayJobName;
    if (const auto it = m_lastState.constFind(key); it != m_lastState.cend()) return *it;
    QSqlQuery q(QSqlDatabase::database(m_connection, false));
    q.prepare(QStringLiteral("SELECT job_id, at, deployment_status, job_status, reason, message FROM job_states WHERE ns = ? AND rayjob = ? ORDER BY id DESC LIMIT 1"));
    q.addBindValue(ns);
    q.addBindValue(rayJobName);
    if (!q.exec()) {
        qCWarning(lcJournal).noquote() << "event journal: reading the last state of" << key << "failed:" << describe(q.lastError());
        return std::nullopt;
    }
    if (!q.next()) return std::nullopt;
    JobStateChange c{ns, rayJobName, q.value(0).toString(), QDateTime::fromMSecsSinceEpoch(q.value(1).toLongLong(), Qt::UTC),
                     q.value(2).toString(), q.value(3).toString(), q.value(4).toString(), q.value(5).toString()};
    m_lastState.insert(key, c);
    return c;
}

void EventJournal::recordJobState(const JobStateChange &change)
{
    if (change.ns.isEmpty() || change.rayJobName.isEmpty()) {
        qCDebug(lcJournal) << "skipped a job state without a namespace or RayJob name";
        return;
    }
    if (const auto last = lastStored(change.ns, change.rayJobName); last && last->sameStatus(change)) return;
    JobStateChange c = change;
    c.at = c.at.isValid() ? c.at.toUTC() : QDateTime::currentDateTimeUtc();
    m_lastState.insert(c.ns + u'/' + c.rayJobName, c);
    m_pendingStates.append(std::move(c));
    schedule();
}

void EventJournal::writePending() const
{
    if (m_pendingEvents.isEmpty() && m_pendingStates.isEmpty()) return;
    const QList<PendingEvent> events = std::exchange(m_pendingEvents, {});
    const QList<JobStateChange> states = std::exchange(m_pendingStates, {});
    m_pendingIndex.clear();

    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    auto fail = [this, &db](const QSqlError &error) {
        qCWarning(lcJournal).noquote() << "event journal: writing to" << m_path << "failed, the batch is lost:" << describe(error);
        db.rollback();
        m_lastState.clear();   // what is stored is read again
    };
    if (!db.transaction()) {
        fail(db.lastError());
        return;
    }
    QSqlQuery q(db);
    if (!events.isEmpty()) {
        // A copy already stored is replaced only by a later one (isLater): a relist after a
        // restart writes nothing.
        q.prepare(QStringLiteral("INSERT INTO events (key, ns, involved_name, involved_kind, first_seen, last_seen, count, json) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                                 "ON CONFLICT (key) DO UPDATE SET ns = excluded.ns, involved_name = excluded.involved_name, involved_kind = excluded.involved_kind, "
                                 "first_seen = excluded.first_seen, last_seen = excluded.last_seen, count = excluded.count, json = excluded.json "
                                 "WHERE excluded.count > events.count OR (excluded.count = events.count AND excluded.last_seen > events.last_seen)"));
        for (const PendingEvent &e : events) {
            q.addBindValue(e.key);
            q.addBindValue(e.ns);
            q.addBindValue(e.involvedName);
            q.addBindValue(text(e.involvedKind));
            q.addBindValue(e.firstSeenMs);
            q.addBindValue(e.lastSeenMs);
            q.addBindValue(e.count);
            q.addBindValue(QString::fromUtf8(e.json));
            if (!q.exec()) {
                fail(q.lastError());
                return;
            }
        }
    }
    if (!states.isEmpty()) {
        q.prepare(QStringLiteral("INSERT INTO job_states (ns, rayjob, job_id, at, deployment_status, job_status, reason, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
        for (const JobStateChange &s : states) {
            q.addBindValue(text(s.ns));
            q.addBindValue(text(s.rayJobName));
            q.addBindValue(text(s.jobId));
            q.addBindValue(s.at.toMSecsSinceEpoch());
            q.addBindValue(text(s.deploymentStatus));
            q.addBindValue(text(s.jobStatus));
            q.addBindValue(text(s.reason));
            q.addBindValue(text(s.message));
            if (!q.exec()) {
                fail(q.lastError());
                return;
            }
        }
    }
    q.finish();
    if (!db.commit()) fail(db.lastError());
}

void EventJournal::flush()
{
    m_flushTimer.stop();
    writePending();
    // Past the bound between the hourly prunes (a busy namespace): prune now.
    if (bytesOnDisk() > m_options.maxBytes) prune();
}

qint64 EventJournal::bytesOnDisk() const
{
    // The file's pages (some may still be only in the log) or the file and its log, whichever is more.
    qint64 pageBytes = 0;
    QSqlQuery q(QSqlDatabase::database(m_connection, false));
    if (q.exec(QStringLiteral("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()")) && q.next()) pageBytes = q.value(0).toLongLong();
    return std::max(pageBytes, QFileInfo(m_path).size() + QFileInfo(m_path + QStringLiteral("-wal")).size());
}

qint64 EventJournal::usedBytes() const
{
    QSqlQuery q(QSqlDatabase::database(m_connection, false));
    if (!q.exec(QStringLiteral("SELECT (page_count - freelist_count) * page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()")) || !q.next()) {
        return 0;
    }
    return q.value(0).toLongLong();
}

void EventJournal::prune()
{
    writePending();
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    QSqlQuery q(db);
    qint64 removed = 0;

    // By age.
    const qint64 cutoff = QDateTime::currentDateTimeUtc().addDays(-m_options.maxAgeDays).toMSecsSinceEpoch();
    for (const QString &statement : {QStringLiteral("DELETE FROM events WHERE last_seen < ?"), QStringLiteral("DELETE FROM job_states WHERE at < ?")}) {
        q.prepare(statement);
        q.addBindValue(cutoff);
        if (!q.exec()) {
            qCWarning(lcJournal).noquote() << "event journal: pruning by age failed:" << describe(q.lastError());
            return;
        }
        removed += q.numRowsAffected();
    }

    // By size, once over the bound: the oldest go until three quarters of it is used, so the
    // next prune is some way off. Each round removes the share of rows the excess suggests, at
    // least 16.
    const qint64 target = m_options.maxBytes * 3 / 4;
    for (int round = 0; round < 64 && (round > 0 || bytesOnDisk() > m_options.maxBytes); ++round) {
        const qint64 used = usedBytes();
        if (used <= target) break;
        bool any = false;
        for (const char *table : {"events", "job_states"}) {
            if (!q.exec(QStringLiteral("SELECT count(*) FROM %1").arg(QLatin1String(table))) || !q.next()) break;
            const qint64 rows = q.value(0).toLongLong();
            if (rows == 0) continue;   // job states go only when no event is left
            const qint64 share = std::max<qint64>(16, rows * (used - target) / used + 1);
            // untranslated: SQL column names
            const QString order = QLatin1String(table) == QLatin1String("events") ? QStringLiteral("last_seen, rowid") : QStringLiteral("id");
            q.prepare(QStringLiteral("DELETE FROM %1 WHERE rowid IN (SELECT rowid FROM %1 ORDER BY %2 LIMIT ?)").arg(QLatin1String(table), order));
            q.addBindValue(share);
            if (!q.exec()) {
                qCWarning(lcJournal).noquote() << "event journal: pruning by size failed:" << describe(q.lastError());
                return;
            }
            removed += q.numRowsAffected();
            any = true;
            break;
        }
        if (!any) break;
    }
    if (removed > 0) m_lastState.clear();   // a RayJob's last state may be gone

    // Freed pages are reused by later writes; give them back to the disk when the file is over
    // the bound or a fifth of it is free.
    qint64 pages = 0;
    qint64 free = 0;
    qint64 pageSize = 4096;
    if (q.exec(QStringLiteral("SELECT page_count, freelist_count, page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()")) && q.next()) {
        pages = q.value(0).toLongLong();
        free = q.value(1).toLongLong();
        pageSize = q.value(2).toLongLong();
    }
    q.finish();
    if (pages * pageSize > m_options.maxBytes || free * 5 > pages) {
        qCInfo(lcJournal).noquote() << "event journal: removed" << removed << "entries; compacting" << m_path;
        exec(QStringLiteral("VACUUM"));
    }
    exec(QStringLiteral("PRAGMA wal_checkpoint(TRUNCATE)"));
}

QList<QJsonObject> EventJournal::events(const QString &ns, const QStringList &namePrefixes) const
{
    writePending();
    QStringList prefixes;
    for (const QString &p : namePrefixes) {
        if (!p.isEmpty() && !prefixes.contains(p)) prefixes << p;
    }
    if (ns.isEmpty() || prefixes.isEmpty()) return {};
    // A range the (ns, involved_name) index serves, checked exactly: LIKE would fold case and
    // read '_' and '%' as patterns.
    QStringList conditions;
    for (qsizetype i = 0; i < prefixes.size(); ++i) {
        conditions << QStringLiteral("(involved_name >= ? AND involved_name < ? AND substr(involved_name, 1, length(?)) = ?)");
    }
    QSqlQuery q(QSqlDatabase::database(m_connection, false));
    q.setForwardOnly(true);
    q.prepare(QStringLiteral("SELECT json FROM events WHERE ns = ? AND (%1) ORDER BY first_seen, last_seen, rowid").arg(conditions.join(QStringLiteral(" OR "))));
    q.addBindValue(ns);
    for (const QString &p : std::as_const(prefixes)) {
        q.addBindValue(p);
        q.addBindValue(pastPrefix(p));
        q.addBindValue(p);
        q.addBindValue(p);
    }
    QList<QJsonObject> out;
    if (!q.exec()) {
        qCWarning(lcJournal).noquote() << "event journal: reading events failed:" << describe(q.lastError());
        return out;
    }
    while (q.next()) {
        const QJsonDocument doc = QJsonDocument::fromJson(q.value(0).toString().toUtf8());
        if (doc.isObject()) out.append(doc.object());
    }
    return out;
}

QList<JobStateChange> EventJournal::jobStates(const QString &ns, const QString &rayJobName) const
{
    writePending();
    QList<JobStateChange> out;
    QSqlQuery q(QSqlDatabase::database(m_connection, false));
    q.setForwardOnly(true);
    q.prepare(QStringLiteral("SELECT job_id, at, deployment_status, job_status, reason, message FROM job_states WHERE ns = ? AND rayjob = ? ORDER BY id"));
    q.addBindValue(ns);
    q.addBindValue(rayJobName);
    if (!q.exec()) {
        qCWarning(lcJournal).noquote() << "event journal: reading job states failed:" << describe(q.lastError());
        return out;
    }
    while (q.next()) {
        out.append(JobStateChange{ns, rayJobName, q.value(0).toString(), QDateTime::fromMSecsSinceEpoch(q.value(1).toLongLong(), Qt::UTC),
                                  q.value(2).toString(), q.value(3).toString(), q.value(4).toString(), q.value(5).toString()});
    }
    return out;
}

EventJournal::Stats EventJournal::stats() const
{
    writePending();
    Stats s;
    QSqlQuery q(QSqlDatabase::database(m_connection, false));
    if (q.exec(QStringLiteral("SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM job_states)")) && q.next()) {
        s.events = q.value(0).toLongLong();
        s.states = q.value(1).toLongLong();
    }
    s.bytes = QFileInfo(m_path).size() + QFileInfo(m_path + QStringLiteral("-wal")).size();
    return s;
}

QList<QJsonObject> mergeEvents(const QList<QJsonObject> &a, const QList<QJsonObject> &b)
{
    struct Entry
    {
        QJsonObject json;
        qint64 firstMs = 0;
        qint64 lastMs = 0;
        int count = 1;
    };
    QList<Entry> entries;
    QHash<QString, qsizetype> byKey;
    for (const QList<QJsonObject> *list : {&a, &b}) {
        for (const QJsonObject &event : *list) {
            const Kube::Event e = Kube::Event::fromJson(event);
            Entry entry{event, msOf(e.firstSeen), msOf(e.lastSeen), e.count};
            if (!entry.firstMs) entry.firstMs = entry.lastMs;
            if (!entry.lastMs) entry.lastMs = entry.firstMs;
            const QString key = eventKey(event);
            if (key.isEmpty()) {
                entries.append(std::move(entry));
                continue;
            }
            if (const auto it = byKey.constFind(key); it != byKey.cend()) {
                Entry &kept = entries[*it];
                if (isLater(entry.count, entry.lastMs, kept.count, kept.lastMs)) kept = std::move(entry);
            } else {
                byKey.insert(key, entries.size());
                entries.append(std::move(entry));
            }
        }
    }
    std::stable_sort(entries.begin(), entries.end(), [](const Entry &x, const Entry &y) {
        return x.firstMs != y.firstMs ? x.firstMs < y.firstMs : x.lastMs < y.lastMs;
    });
    QList<QJsonObject> out;
    out.reserve(entries.size());
    for (Entry &entry : entries) out.append(std::move(entry.json));
    return out;
}

void addFromJournal(const EventJournal &journal, const QString &ns, TimelineInput &input)
{
    const QString &name = input.rayJobName;
    if (name.isEmpty())
        return;
    QList<QJsonObject> journaled;
    for (const QJsonObject &e : journal.events(ns, {name})) {
        const QString regarding = Kube::Event::fromJson(e).regardingName;
        if (regarding == name || regarding.startsWith(name + u'-'))
            journaled.append(e);
    }
    input.events = mergeEvents(input.events, journaled);
    for (const JobStateChange &c : journal.jobStates(ns, name))
        input.states.append(StateChange{c.at, c.deploymentStatus, c.jobStatus});
}

} // namespace Starforge::Events
