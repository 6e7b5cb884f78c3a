#pragma once

// A large pod log archived by JobArchiver, shared by tst_archivestream (a few hundred MiB,
// with a memory assertion) and bench_archive (up to 2 GiB, a table). The sandbox runs as its own
// starforge-sandbox process, so the memory measured here is the archiving process's alone: a pod
// whose container writes the log to stdout runs on the sandbox's kubelet, its log is read over
// pods/log and archived to the sandbox's S3, then downloaded to a file and checked byte for byte.
// The peer, `kubectl logs POD > file`, is the same download without the upload.
// Header-only; needs starforge_core, Qt6::Test and SF_BIN_DIR or the benchmark's folder.

#include "core/config/effectiveconfig.h"
#include "core/config/embeddedsandbox.h"
#include "core/config/profile.h"
#include "core/job/archiver.h"
#include "core/kube/kubeclient.h"
#include "core/s3/s3client.h"

#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <memory>
#include <optional>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace Starforge::Testing {

// kB of /proc/self/status's field ("VmHWM", "VmRSS"); -1 where there is none.
inline qint64 procStatusKb(const char *field)
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly)) return -1;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith(QByteArray(QByteArray(field) + ':'))) return line.mid(qstrlen(field) + 1).trimmed().split(' ').value(0).toLongLong();
    }
    return -1;
}

// Resets VmHWM to the current RSS (Linux ≥ 4.0: write 5 to clear_refs), so a peak measured
// afterwards belongs to what follows.
inline bool resetPeakRss()
{
    QFile refs(QStringLiteral("/proc/self/clear_refs"));
    return refs.open(QIODevice::WriteOnly) && refs.write("5") == 1;
}

struct BigLogRun
{
    QString error;          // empty: it worked
    qint64 bytes = 0;       // the archived log's size
    qint64 archiveMs = 0;   // JobArchiver from start to finished
    qint64 rssBeforeKb = 0;
    qint64 peakRssKb = 0;   // VmHWM during the archive (reset just before it)
    qint64 sampledPeakRssKb = 0;   // the largest VmRSS read every 20 ms during the archive
    // The peer, when asked for: `kubectl logs POD > file` of the same pod.
    qint64 peerBytes = 0;
    qint64 peerMs = 0;
    qint64 peerMaxRssKb = 0;       // kubectl's own peak (ru_maxrss), from nothing
    QString peerError;
};

class BigPodLog
{
public:
    // Starts a sandbox (one CPU node) as a process from binDir.
    explicit BigPodLog(const QString &binDir)
    {
        m_connection = m_dir.filePath(QStringLiteral("connection.json"));
        m_sandbox.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        m_sandbox.setStandardOutputFile(QProcess::nullDevice());
        m_sandbox.start(binDir + QStringLiteral("/starforge-sandbox"),
                        {QStringLiteral("--connection-file"), m_connection, QStringLiteral("--fleet"), QStringLiteral("cpu:1x0")});
        const bool up = QTest::qWaitFor([this] {
            return m_sandbox.state() == QProcess::NotRunning
                || QJsonDocument::fromJson(readFile(m_connection)).object().contains(QStringLiteral("forge"));
        }, 30000);
        const auto connection = Config::SandboxConnection::read(m_connection);
        if (!up || m_sandbox.state() != QProcess::Running || !connection) {
            m_error = QStringLiteral("starforge-sandbox did not start");
            return;
        }
        m_settings = Config::EffectiveConfig::resolve(Config::Profile{QStringLiteral("sandbox"), connection->settings}, QProcessEnvironment(), connection->secrets);
        auto kube = Kube::ClientConfig::fromSettings(m_settings);
        auto s3 = S3::ClientConfig::fromEffectiveConfig(m_settings);
        if (!kube || !s3) {
            m_error = kube ? s3.error().message : kube.error().message;
            return;
        }
        m_kubeconfig = QJsonDocument::fromJson(readFile(m_connection)).object().value(QStringLiteral("kubeconfig")).toString();
        m_kube = std::make_unique<Kube::KubeClient>(*kube);
        m_s3 = std::make_unique<S3::S3Client>(*s3);
    }

    ~BigPodLog()
    {
        m_s3.reset();
        m_kube.reset();
        m_sandbox.terminate();
        if (!m_sandbox.waitForFinished(15000)) m_sandbox.kill();
    }

    QString error() const { return m_error; }

    // Runs a pod that writes mib MiB to stdout in 64 KiB lines, archives its log with
    // JobArchiver, checks the archived object byte for byte, and deletes it. With peer, kubectl
    // reads the same log into a file as well.
    BigLogRun run(int mib, const QString &name, bool peer = false)
    {
        BigLogRun out;
        if (!m_error.isEmpty()) {
            out.error = m_error;
            return out;
        }
        const QString ns = m_kube->config().ns;
        // 64 KiB lines: 65535 x's and a newline, so the log's size is exactly mib MiB.
        const QString script = QStringLiteral("import sys\nline = b'x' * 65535 + b'\\n'\nw = sys.stdout.buffer\nfor _ in range(%1 * 16): w.write(line)\nw.flush()\n").arg(mib);
        const QJsonObject pod{
            {QStringLiteral("apiVersion"), QStringLiteral("v1")},
            {QStringLiteral("kind"), QStringLiteral("Pod")},
            {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}}},
            {QStringLiteral("spec"), QJsonObject{{QStringLiteral("restartPolicy"), QStringLiteral("Never")},
                                                 {QStringLiteral("containers"), QJsonArray{QJsonObject{
                                                     {QStringLiteral("name"), QStringLiteral("writer")},
                                                     {QStringLiteral("image"), m_settings.value(QStringLiteral("FORGE_IMAGE_NEMO_RL"))},
                                                     {QStringLiteral("command"), QJsonArray{QStringLiteral("python3"), QStringLiteral("-c"), script}}}}}}}};
        const QString pods = QStringLiteral("/api/v1/namespaces/%1/pods").arg(ns);
        if (const Kube::ApiResult created = send("POST", pods, QJsonDocument(pod).toJson(QJsonDocument::Compact)); !created.ok()) {
            out.error = created.error->message;
            return out;
        }
        QJsonObject finished;
        const bool done = QTest::qWaitFor([&] {
            QTest::qWait(300);
            const Kube::ApiResult got = send("GET", pods + u'/' + name);
            finished = got.json();
            const QString phase = finished[QStringLiteral("status")][QStringLiteral("phase")].toString();
            return phase == QLatin1String("Succeeded") || phase == QLatin1String("Failed");
        }, 600000);
        if (!done || finished[QStringLiteral("status")][QStringLiteral("phase")].toString() != QLatin1String("Succeeded")) {
            out.error = QStringLiteral("the log writer did not succeed: %1").arg(QString::fromUtf8(QJsonDocument(finished).toJson(QJsonDocument::Compact)));
            return out;
        }

        Job::ArchiveRequest request;
        request.record.id = name.right(6);
        request.record.rayJobName = name;
        request.snapshot.pods = {finished};
        request.ns = ns;
        request.deleteRayJob = false;
        Job::JobArchiver archiver(m_kube.get(), m_s3.get(), request);
        bool archived = false;
        // An event loop, not QTest::qWaitFor: that one sleeps 10 ms between rounds of events,
        // and Qt's HTTP thread asks this thread for each 16 KiB of an upload, so the upload
        // would be paced to 16 KiB per 10 ms (about 3 MB/s) by the wait itself.
        QEventLoop loop;
        QObject::connect(&archiver, &Job::JobArchiver::finished, &loop, [&archived, &loop] {
            archived = true;
            loop.quit();
        });
        QTimer::singleShot(1800000, &loop, &QEventLoop::quit);
        // Two readings of the same peak: VmHWM after a reset, and VmRSS sampled meanwhile (in
        // case the kernel refuses the reset, and as a check on it).
        QTimer sampler;
        sampler.setInterval(20);
        QObject::connect(&sampler, &QTimer::timeout, &sampler, [&out] { out.sampledPeakRssKb = std::max(out.sampledPeakRssKb, procStatusKb("VmRSS")); });
        (void)resetPeakRss();
        out.rssBeforeKb = procStatusKb("VmRSS");
        out.sampledPeakRssKb = out.rssBeforeKb;
        sampler.start();
        QElapsedTimer clock;
        clock.start();
        archiver.start();
        if (!archived) loop.exec();
        out.archiveMs = clock.elapsed();
        out.peakRssKb = procStatusKb("VmHWM");
        sampler.stop();
        if (!archived || !archiver.result()) {
            out.error = archived ? archiver.result().error().message : QStringLiteral("the archive did not finish");
            return out;
        }
        const Job::JobRecord record = *archiver.result();
        if (record.logs.size() != 1) {
            out.error = QStringLiteral("%1 logs archived, not one").arg(record.logs.size());
            return out;
        }
        out.bytes = record.logs.first().size;
        out.error = checkArchived(record.logs.first().key, qint64(mib) * 1024 * 1024);
        if (peer && out.error.isEmpty()) kubectlLogs(ns, name, &out);
        (void)send("DELETE", pods + u'/' + name);
        return out;
    }

private:
    // `kubectl logs POD > file`, waited for with wait4 so that its own peak RSS is known.
    void kubectlLogs(const QString &ns, const QString &pod, BigLogRun *out)
    {
        const QString path = m_dir.filePath(QStringLiteral("kubectl.log"));
        const QByteArray file = QFile::encodeName(path);
        const QList<QByteArray> args{"kubectl", "--kubeconfig", QFile::encodeName(m_kubeconfig), "-n", ns.toUtf8(), "logs", pod.toUtf8()};
        std::vector<char *> argv;
        for (const QByteArray &a : args) argv.push_back(const_cast<char *>(a.constData()));
        argv.push_back(nullptr);
        QElapsedTimer clock;
        clock.start();
        const pid_t pid = fork();
        if (pid == 0) {
            const int fd = ::open(file.constData(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) _exit(126);
            execvp(argv[0], argv.data());
            _exit(127);
        }
        int status = 0;
        rusage usage{};
        if (pid < 0 || wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            out->peerError = QStringLiteral("kubectl logs %1 failed (status %2)").arg(pod).arg(status);
        }
        out->peerMs = clock.elapsed();
        out->peerMaxRssKb = usage.ru_maxrss;   // kB on Linux
        out->peerBytes = QFileInfo(path).size();
        QFile::remove(path);
    }

    static QByteArray readFile(const QString &path)
    {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }

    Kube::ApiResult send(const QByteArray &method, const QString &path, const QByteArray &body = {})
    {
        Kube::ApiRequest request;
        request.method = method;
        request.path = path;
        request.body = body;
        std::optional<Kube::ApiResult> result;
        QObject context;
        m_kube->send(request, &context, [&result](const Kube::ApiResult &r) { result = r; });
        (void)QTest::qWaitFor([&result] { return result.has_value(); }, 30000);
        return result.value_or(Kube::ApiResult{});
    }

    Result<qint64> rangedDownload(const QString &key, const QString &path, qint64 size, qint64 rangeBytes)
    {
        const Result<QUrl> url = m_s3->presignedGetUrl(key, 3600);
        if (!url) return url.error();
        QFile::remove(path);
        const QString ca = m_settings.value(QStringLiteral("FORGE_S3_CA_FILE"));
        for (qint64 from = 0; from < size; from += rangeBytes) {
            QProcess curl;
            curl.setStandardOutputFile(path, QIODevice::Append);
            curl.setProcessChannelMode(QProcess::ForwardedErrorChannel);
            QStringList args{QStringLiteral("-sS"), QStringLiteral("--fail"), QStringLiteral("-r"),
                             QStringLiteral("%1-%2").arg(from).arg(std::min(size, from + rangeBytes) - 1)};
            if (!ca.isEmpty()) args << QStringLiteral("--cacert") << ca;
            curl.start(QStringLiteral("curl"), args << url->toString(QUrl::FullyEncoded));
            if (!curl.waitForFinished(1800000) || curl.exitStatus() != QProcess::NormalExit || curl.exitCode() != 0) {
                return Error::io(QStringLiteral("curl could not read bytes from %1 of %2").arg(from).arg(key));
            }
        }
        return QFileInfo(path).size();
    }

    // Downloads key to a file (streamed) and compares it with what the pod wrote.
    QString checkArchived(const QString &key, qint64 expected)
    {
        const QString path = m_dir.filePath(QStringLiteral("downloaded.log"));
        std::optional<Result<qint64>> written;
        QObject context;
        // The sandbox's S3 answers a GET of at most 1 GiB, a larger object only by Range, which
        // S3Client does not send: curl fetches such an object in 1 GiB ranges of a presigned URL.
        constexpr qint64 RangeBytes = qint64(1) << 30;
        if (expected > RangeBytes) {
            written = rangedDownload(key, path, expected, RangeBytes);
        } else {
            QEventLoop loop;   // not qWaitFor, for the reason given in run()
            m_s3->downloadObject(key, path, &context, [&written, &loop](Result<qint64> r) {
                written = std::move(r);
                loop.quit();
            });
            QTimer::singleShot(1800000, &loop, &QEventLoop::quit);
            if (!written) loop.exec();
        }
        if (!written || !*written) return written ? written->error().message : QStringLiteral("the download did not finish");
        QString problem;
        QFile file(path);
        if (**written != expected || !file.open(QIODevice::ReadOnly) || file.size() != expected) {
            problem = QStringLiteral("the archived log has %1 bytes, not %2").arg(**written).arg(expected);
        }
        const QByteArray line = QByteArray(65535, 'x') + '\n';
        while (problem.isEmpty() && !file.atEnd()) {
            if (file.read(line.size()) != line) problem = QStringLiteral("the archived log differs from what the pod wrote near byte %1").arg(file.pos());
        }
        file.close();
        QFile::remove(path);
        std::unique_ptr<S3::S3Reply> deleted(m_s3->deleteObject(key));
        (void)QTest::qWaitFor([&deleted] { return deleted->isFinished(); }, 30000);
        return problem;
    }

    QTemporaryDir m_dir;
    QString m_connection;
    QString m_kubeconfig;
    QProcess m_sandbox;
    QString m_error;
    Config::EffectiveConfig m_settings;
    std::unique_ptr<Kube::KubeClient> m_kube;
    std::unique_ptr<S3::S3Client> m_s3;
};

} // namespace Starforge::Testing
