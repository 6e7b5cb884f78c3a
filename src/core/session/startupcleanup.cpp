#include "core/session/startupcleanup.h"

#include "core/job/archiver.h"
#include "core/job/capsule.h"
#include "core/logging/logging.h"
#include "core/s3/s3client.h"

#include <QDir>
#include <QFileInfo>

namespace Starforge {

namespace {

// The file name part of a QTemporaryDir/QTemporaryFile template, as a wildcard: the X's are
// what the process filled in.
QString wildcardOf(const QString &templatePath)
{
    QString name = QFileInfo(templatePath).fileName();
    return name.replace(QStringLiteral("XXXXXX"), QStringLiteral("*"));
}

} // namespace

StartupCleanup::StartupCleanup(S3::S3Client *s3, StartupCleanupOptions options, QObject *parent)
    : QObject(parent)
    , m_s3(s3)
    , m_options(std::move(options))
{
}

StartupCleanup::~StartupCleanup()
{
    delete m_request.data();   // a listing or abort still running stops with us
}

QStringList StartupCleanup::removeStaleTemporaryFiles(const QString &folder, const QDateTime &cutoff, QStringList *problems)
{
    QStringList removed;
    const QDir dir(folder);
    const QStringList patterns{wildcardOf(Job::temporaryCapsuleFolderTemplate()), wildcardOf(Job::temporaryLogTemplate())};
    for (const QFileInfo &entry : dir.entryInfoList(patterns, QDir::Dirs | QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot | QDir::NoSymLinks)) {
        // Another user's files in a shared /tmp are theirs to clean.
        if (entry.ownerId() != QFileInfo(QDir::homePath()).ownerId() || entry.lastModified().toUTC() >= cutoff) {
            continue;
        }
        const bool gone = entry.isDir() ? QDir(entry.absoluteFilePath()).removeRecursively() : QFile::remove(entry.absoluteFilePath());
        if (gone) {
            removed << entry.absoluteFilePath();
        } else if (problems) {
            *problems << QObject::tr("Could not remove the leftover %1.").arg(entry.absoluteFilePath());
        }
    }
    return removed;
}

void StartupCleanup::start()
{
    const QDateTime now = m_options.now.isValid() ? m_options.now.toUTC() : QDateTime::currentDateTimeUtc();
    m_cutoff = now.addSecs(-m_options.olderThanSeconds);
    m_report.removedFiles = removeStaleTemporaryFiles(m_options.tempFolder.isEmpty() ? QDir::tempPath() : m_options.tempFolder, m_cutoff, &m_report.problems);
    if (!m_s3) {
        // Queued, so a caller connecting to finished() after start() still hears it.
        QMetaObject::invokeMethod(this, &StartupCleanup::done, Qt::QueuedConnection);
        return;
    }
    m_prefixesLeft = m_options.prefixes;
    listNextPrefix();
}

void StartupCleanup::listNextPrefix()
{
    if (m_prefixesLeft.isEmpty() || !m_s3) {
        abortNext();
        return;
    }
    const QString prefix = m_prefixesLeft.takeFirst();
    m_request = m_s3->listMultipartUploads(prefix);
    connect(m_request, &S3::S3Reply::finished, this, [this, prefix, reply = m_request.data()] {
        reply->deleteLater();
        if (const Result<void> listed = reply->result(); !listed) {
            m_report.problems << tr("Could not list the unfinished uploads under %1: %2").arg(prefix, listed.error().message);
        } else {
            for (const S3::UploadInfo &upload : reply->uploads().uploads) {
                // An upload without a time is left: it cannot be told from one started now.
                if (upload.initiated.isValid() && upload.initiated < m_cutoff && upload.key.startsWith(prefix)) {
                    m_toAbort.append({upload.key, upload.uploadId});
                }
            }
        }
        listNextPrefix();
    });
}

void StartupCleanup::abortNext()
{
    if (m_toAbort.isEmpty() || !m_s3) {
        done();
        return;
    }
    const auto [key, uploadId] = m_toAbort.takeFirst();
    m_request = m_s3->abortMultipartUpload(key, uploadId);
    connect(m_request, &S3::S3Reply::finished, this, [this, key = key, uploadId = uploadId, reply = m_request.data()] {
        reply->deleteLater();
        // 404: another process aborted or completed it meanwhile, which is as good.
        if (const Result<void> aborted = reply->result(); aborted || reply->httpStatus() == 404) {
            m_report.abortedUploads << QStringLiteral("%1 (%2)").arg(key, uploadId);
        } else {
            m_report.problems << tr("Could not abort the unfinished upload of %1: %2").arg(key, aborted.error().message);
        }
        abortNext();
    });
}

void StartupCleanup::done()
{
    if (m_finished) return;
    m_finished = true;
    for (const QString &upload : std::as_const(m_report.abortedUploads)) qCInfo(lcSession) << "aborted the unfinished upload" << upload;
    for (const QString &file : std::as_const(m_report.removedFiles)) qCInfo(lcSession) << "removed the leftover" << file;
    for (const QString &problem : std::as_const(m_report.problems)) qCWarning(lcSession).noquote() << problem;
    Q_EMIT finished();
}

} // namespace Starforge
