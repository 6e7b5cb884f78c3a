#pragma once

// What a session tidies once when it starts, so that nothing a crashed or killed process began
// is left behind for ever (docs/s3.md, "Orphans"):
//   - unfinished multipart uploads under the app's prefixes (capsules/, jobs/) in the bucket,
//     initiated more than olderThanSeconds ago, are aborted: their parts are stored (and
//     billed) until someone does, and a normal upload is finished or aborted long before;
//   - temporary Capsule folders (Job::temporaryCapsuleFolderTemplate()) and archived-log files
//     (Job::temporaryLogTemplate()) in the temporary folder, last changed more than
//     olderThanSeconds ago, are removed.
// Younger ones may belong to a submission or an archive running right now in another process,
// so they are left alone. Failures are reported, never fatal: the clean-up is tried again at
// the next start.

#include <QDateTime>
#include <QObject>
#include <QPointer>
#include <QStringList>

namespace Starforge::S3 {
class S3Client;
class S3Reply;
}

namespace Starforge {

struct StartupCleanupOptions
{
    QStringList prefixes{QStringLiteral("capsules/"), QStringLiteral("jobs/")};
    qint64 olderThanSeconds = 24 * 3600;
    QString tempFolder;          // empty: QDir::tempPath()
    QDateTime now;               // invalid: the current time
};

struct StartupCleanupReport
{
    QStringList abortedUploads;  // "key (upload id)"
    QStringList removedFiles;    // local paths
    QStringList problems;        // one sentence each
};

class StartupCleanup final : public QObject
{
    Q_OBJECT
public:
    // s3 may be null (no bucket configured): only the local files are looked at.
    StartupCleanup(S3::S3Client *s3, StartupCleanupOptions options, QObject *parent = nullptr);
    ~StartupCleanup() override;

    void start();
    bool isFinished() const { return m_finished; }
    const StartupCleanupReport &report() const { return m_report; }

    // The local half, synchronous: removes the stale temporary Capsules and log files in folder.
    static QStringList removeStaleTemporaryFiles(const QString &folder, const QDateTime &cutoff, QStringList *problems);

Q_SIGNALS:
    void finished();

private:
    void listNextPrefix();
    void abortNext();
    void done();

    QPointer<S3::S3Client> m_s3;
    StartupCleanupOptions m_options;
    QDateTime m_cutoff;
    QStringList m_prefixesLeft;
    QList<QPair<QString, QString>> m_toAbort;   // key, upload id
    QPointer<S3::S3Reply> m_request;
    StartupCleanupReport m_report;
    bool m_finished = false;
};

} // namespace Starforge
