// `starforge-cli logs JOB [-f] [--pod P] [--container C] [--tail N] [--grep PATTERN [-i] [-E]
// [--count]]`: a pod's log (by default the driver's, the submitter's), followed live across
// dropped connections with -f, or read from the archive once the job has ended. --grep prints
// the lines that match as `grep` would (-i any case, -E an expression, --count their number):
// a log is spooled to a file, indexed and searched on the thread pool (core/logs), so a
// gigabyte archive is never held in memory; a followed log is matched line by line.

#include "cli/commands/commands.h"
#include "cli/commands/jobcommand.h"
#include "core/cluster/diagnosis.h"
#include "core/job/archiver.h"
#include "core/job/history.h"
#include "core/job/jobactions.h"
#include "core/job/jobrecord.h"
#include "core/kube/logstream.h"
#include "core/s3/s3client.h"
#include "core/logging/logging.h"
#include "core/logs/lineindex.h"
#include "core/logs/logsearch.h"

#include <QDateTime>
#include <QFile>
#include <QStringDecoder>
#include <QTemporaryFile>

#include <memory>

namespace Starforge::Cli {

namespace {

class LogsCommand final : public JobCommand
{
    Q_OBJECT
public:
    using JobCommand::JobCommand;

    void run() override
    {
        const auto job = jobArgument(QStringLiteral("logs JOB [-f] [--pod POD|submitter|head|worker] [--container C] [--tail N] [--grep PATTERN [-i] [-E] [--count]]"));
        if (!job) return;
        if (grepping()) {
            if (const auto valid = Logs::checkPattern(grepOptions()); !valid) {
                fail(valid.error());
                return;
            }
            if (m_args.flag(QStringLiteral("count")) && m_args.flag(QStringLiteral("follow"))) {
                fail(Error::invalid(tr("--count needs the whole log: leave out -f, or --count")));
                return;
            }
        } else if (m_args.flag(QStringLiteral("ignore-case")) || m_args.flag(QStringLiteral("extended-regexp")) || m_args.flag(QStringLiteral("count"))) {
            fail(Error::invalid(tr("-i, -E and --count go with --grep PATTERN")));
            return;
        }
        // Checked before anything is read: an archived log would otherwise take "abc" as 0 lines.
        int tailLines = -1;
        if (m_args.values.contains(QStringLiteral("tail"))) {
            bool ok = false;
            tailLines = m_args.value(QStringLiteral("tail")).toInt(&ok);
            if (!ok || tailLines < 0) {
                fail(Error::invalid(tr("--tail takes a number of lines, e.g. --tail 100, not '%1'").arg(m_args.value(QStringLiteral("tail")))));
                return;
            }
        }
        openSession(clientsOnly(), [this, job = *job, tailLines] {
            withSnapshot(job, false, [this, job, tailLines](const Job::JobSnapshot &taken) {
                const Job::JobSnapshot *snapshot = &taken;
                const QString want = m_args.value(QStringLiteral("pod"));
                // The pod: named, or the first of a role; by default the driver's (the submitter).
                const QString pod = Job::pickPod(*snapshot, want);
                QStringList available;
                for (const QJsonObject &p : std::as_const(snapshot->pods)) available << Cluster::PodInfo::fromJson(p).view.name;
                if (!snapshot->rayJob && (pod.isEmpty() || snapshot->pods.isEmpty())) {
                    printArchivedLog(snapshot->jobId.isEmpty() ? job : snapshot->jobId);
                    return;
                }
                if (pod.isEmpty()) {
                    fail(Error::notFound(available.isEmpty() ? tr("job %1 has no pods yet (see `starforge-cli status %1`)").arg(job)
                                                              : tr("job %1 has no pod '%2'; its pods: %3").arg(job, want, available.join(QStringLiteral(", ")))));
                    return;
                }
                Kube::LogStreamOptions options;
                options.container = m_args.value(QStringLiteral("container"));
                options.follow = m_args.flag(QStringLiteral("follow"));
                options.tailLines = tailLines;
                auto *stream = new Kube::LogStream(m_session->kube(), m_session->ns(), pod, options, work());
                // Since when the stream has been failing, and whether any line came at all.
                auto failingSince = std::make_shared<QDateTime>();
                auto gotLines = std::make_shared<bool>(false);
                // --grep without -f: the log spooled to a file, searched once it has all come.
                std::shared_ptr<QTemporaryFile> spool;
                if (grepping() && !options.follow) {
                    spool = std::make_shared<QTemporaryFile>(Job::temporaryLogTemplate());
                    if (!spool->open()) {
                        fail(Error::io(tr("cannot make a temporary file for the log: %1").arg(spool->errorString())));
                        return;
                    }
                }
                auto matcher = grepping() ? std::make_shared<Logs::LineMatcher>(grepOptions()) : nullptr;
                connect(stream, &Kube::LogStream::lines, this, [this, failingSince, gotLines, spool, matcher](const QList<Kube::LogLine> &lines) {
                    *failingSince = {};
                    *gotLines = true;
                    for (const Kube::LogLine &line : lines) {
                        if (spool) {
                            spool->write(line.text + '\n');
                        } else if (!matcher || matcher->matches(line.text)) {
                            m_out << QString::fromUtf8(line.text) << '\n';
                        }
                    }
                    m_out.flush();
                });
                connect(stream, &Kube::LogStream::interrupted, this, [this, stream, job, pod, failingSince, gotLines](const Kube::ApiError &error) {
                    if (!stream->isRunning()) {
                        // The stream gave up (the pod is gone, or reading its log is not allowed) and
                        // finishes next: an error, unless the pod went away after its log was shown.
                        if (error.kind == Kube::ApiError::Kind::NotFound && *gotLines) {
                            m_err << tr("starforge-cli: pod %1 is gone (the job ended?); its archived log: starforge-cli logs %2").arg(pod, job) << Qt::endl;
                        } else {
                            fail(error.toError());
                        }
                        return;
                    }
                    // A container that cannot start never gets a log: say so instead of retrying on.
                    if (error.kind == Kube::ApiError::Kind::Invalid) {
                        stream->stop();
                        fail(error.toError());
                        return;
                    }
                    // Reconnecting to a server that went away would never end: give up when the
                    // sandbox has stopped, or after LostClusterSeconds of failures.
                    const QDateTime now = QDateTime::currentDateTimeUtc();
                    if (!failingSince->isValid()) *failingSince = now;
                    if (!m_session->source().stoppedReason().isEmpty() || failingSince->secsTo(now) >= LostClusterSeconds) {
                        stream->stop();
                        fail(Error{error.toError().code, tr("%1 Gave up after %2 s.").arg(error.message).arg(failingSince->secsTo(now))});
                        return;
                    }
                    m_err << tr("starforge-cli: log interrupted (%1); reconnecting").arg(Logging::redact(error.message)) << Qt::endl;
                });
                connect(stream, &Kube::LogStream::finished, this, [this, spool] {
                    if (spool) {
                        spool->flush();
                        printMatches(spool->fileName());
                        return;
                    }
                    finish(Ok);
                });
                stream->start();
            });
        });
    }

private:
    bool grepping() const { return m_args.values.contains(QStringLiteral("grep")); }

    Logs::SearchOptions grepOptions() const
    {
        Logs::SearchOptions options;
        options.pattern = m_args.value(QStringLiteral("grep"));
        options.regex = m_args.flag(QStringLiteral("extended-regexp"));
        options.caseInsensitive = m_args.flag(QStringLiteral("ignore-case"));
        return options;
    }

    // The matching lines of a log file (--tail: of its last N lines), or their count.
    void printMatches(const QString &path)
    {
        Logs::LineIndex index(path);
        if (const auto indexed = index.update(); !indexed) {
            fail(indexed.error());
            return;
        }
        Logs::SearchOptions options = grepOptions();
        if (m_args.values.contains(QStringLiteral("tail"))) options.firstLine = std::max<qint64>(0, index.lineCount() - m_args.value(QStringLiteral("tail")).toLongLong());
        const auto found = Logs::searchLines(index, options);
        if (!found) {
            fail(found.error());
            return;
        }
        if (m_args.flag(QStringLiteral("count"))) {
            m_out << found->lines.size() << '\n';
        } else {
            // Read in runs of consecutive lines, a few thousand at a time.
            const QList<qint64> &lines = found->lines;
            for (qsizetype i = 0; i < lines.size();) {
                qsizetype j = i + 1;
                while (j < lines.size() && j - i < 4096 && lines.at(j) == lines.at(j - 1) + 1) ++j;
                const auto text = index.readLines(lines.at(i), lines.at(j - 1) - lines.at(i) + 1);
                if (!text) {
                    fail(text.error());
                    return;
                }
                for (const QByteArray &line : *text) m_out << QString::fromUtf8(line) << '\n';
                i = j;
            }
        }
        m_out.flush();
        // grep's exit code: 1 when nothing matched.
        finish(found->lines.isEmpty() ? NoMatch : Ok);
    }

    // An archived log can be larger than anything held in memory (docs/jobs.md, "The archive"):
    // it is downloaded to a temporary file and printed from there, --tail from the file's end.
    void printArchivedObject(const QString &key)
    {
        auto file = std::make_shared<QTemporaryFile>(Job::temporaryLogTemplate());
        if (!file->open()) {
            fail(Error::io(tr("cannot make a temporary file for the archived log: %1").arg(file->errorString())));
            return;
        }
        m_session->s3()->downloadObject(key, file->fileName(), this, [this, file, key](Result<qint64> written) {
            if (!written) {
                fail(written.error().code == Error::Code::NotFound ? Error::notFound(tr("%1 is not in the archive.").arg(key)) : written.error());
                return;
            }
            if (grepping()) {
                printMatches(file->fileName());
                return;
            }
            QFile log(file->fileName());
            if (!log.open(QIODevice::ReadOnly)) {
                fail(Error::io(tr("cannot read the downloaded log %1: %2").arg(log.fileName(), log.errorString())));
                return;
            }
            qint64 from = 0;
            if (m_args.values.contains(QStringLiteral("tail"))) {
                from = tailOffset(log, m_args.value(QStringLiteral("tail")).toInt());   // checked in runLogs
            }
            log.seek(from);
            QStringDecoder utf8(QStringDecoder::Utf8);   // keeps a character split across two chunks whole
            while (!log.atEnd()) {
                m_out << utf8.decode(log.read(1024 * 1024));
            }
            finish(Ok);
        });
    }

    // Where the last lines of log begin (--tail 0: at its end, so nothing is printed).
    static qint64 tailOffset(QFile &log, int lines)
    {
        qint64 end = log.size();
        if (end == 0 || lines <= 0) return end;
        // A last line without its newline counts as a line too.
        log.seek(end - 1);
        int newlines = log.read(1) == "\n" ? -1 : 0;
        qint64 pos = end;
        while (pos > 0) {
            const qint64 chunk = std::min<qint64>(pos, 1024 * 1024);
            pos -= chunk;
            log.seek(pos);
            const QByteArray data = log.read(chunk);
            for (qint64 i = data.size() - 1; i >= 0; --i) {
                if (data[i] == '\n' && ++newlines == lines) return pos + i + 1;
            }
        }
        return 0;
    }

    void printArchivedLog(const QString &jobId)
    {
        auto s3 = m_session->bucket();
        if (!s3) {
            fail(Error::notFound(tr("job %1 is not on the cluster, and the archive cannot be read: %2").arg(jobId, s3.error().message)));
            return;
        }
        Job::readArchivedJob(*s3, jobId, this, [this, jobId](Result<Job::JobRecord> record) {
            if (!record) {
                fail(record.error());
                return;
            }
            const QString want = m_args.value(QStringLiteral("pod"));
            const QString container = m_args.value(QStringLiteral("container"));
            const Job::ArchivedLog *chosen = Job::pickArchivedLog(*record, want, container);
        QStringList available;
        for (const Job::ArchivedLog &l : record->logs) available << l.pod + u'/' + l.container;
            if (!chosen) {
                fail(Error::notFound(available.isEmpty() ? (record->lost.isEmpty() ? tr("job %1 was archived without logs").arg(jobId)
                                                                                   : tr("job %1 was archived without logs: %2").arg(jobId, record->lost.join(u' ')))
                                                         : tr("the archive of job %1 has no log for '%2'; it has: %3").arg(jobId, want, available.join(QStringLiteral(", ")))));
                return;
            }
            // A damaged or hand-made status.json must not make `logs` print some other object of the
            // bucket (an empty key reads the bucket's listing).
            if (!chosen->key.startsWith(Job::ArchiveKeys::prefix(jobId)) || chosen->key.size() == Job::ArchiveKeys::prefix(jobId).size()) {
                fail(Error::invalid(tr("the archive of job %1 is damaged: its log %2/%3 is kept under '%4', outside %5")
                                        .arg(jobId, chosen->pod, chosen->container, chosen->key, Job::ArchiveKeys::prefix(jobId))));
                return;
            }
            if (m_args.flag(QStringLiteral("follow"))) {
                m_err << tr("starforge-cli: job %1 has ended; showing its archived log").arg(jobId) << Qt::endl;
            }
            printArchivedObject(chosen->key);
        });
    }
};

} // namespace

std::unique_ptr<Command> makeLogsCommand(const CommandContext &context)
{
    return std::make_unique<LogsCommand>(context);
}

} // namespace Starforge::Cli

#include "logscommand.moc"
