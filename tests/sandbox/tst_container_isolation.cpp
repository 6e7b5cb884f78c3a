// Every job is its owner's (issue 12): what the sandbox's kubelet does so that a container's
// processes and files stay with it.
// - Each container run is its own process group, and every process it started (children,
//   grandchildren, even one that left the group with setsid) dies when the pod is deleted, when
//   the sandbox stops, and when starforge-sandbox is killed with SIGKILL.
// - Volumes are where the pod spec says: an emptyDir shared by an init container and the main
//   one at /starforge-capsule, persistentVolumeClaims (the storage claim is FORGE_STORAGE_ROOT's
//   directory; a readOnly claim refuses writes), /dev/shm, a subPath; the host's own tree is
//   never touched. A volume the sandbox cannot provide is FailedMount.
// - Everything under the state directory is owner-only after a job ran: 0700 directories,
//   files without group or other bits.

#include "core/s3/s3client.h"
#include "sandbox/sandbox.h"
#include "support/sandboxfixture.h"
#include "support/sandboxjobs.h"
#include "support/testutil.h"

#include <QDirIterator>
#include <QJsonArray>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <unistd.h>

using namespace Starforge;
using namespace Starforge::Testing;

namespace {

const QString Present = QStringLiteral("registry.example/present:1");

QJsonObject container(const QString &name, const QString &script, const QString &marker, const QJsonArray &mounts = {})
{
    QJsonObject c { { QStringLiteral("name"), name },
                    { QStringLiteral("image"), Present },
                    { QStringLiteral("command"), QJsonArray { QStringLiteral("sh"), QStringLiteral("-c"), script } },
                    // Every process of the container inherits it: how the test finds them in /proc.
                    { QStringLiteral("env"),
                      QJsonArray { QJsonObject { { QStringLiteral("name"), QStringLiteral("ISOLATION_MARKER") },
                                                 { QStringLiteral("value"), marker } } } } };
    if (!mounts.isEmpty())
        c.insert(QStringLiteral("volumeMounts"), mounts);
    return c;
}

QByteArray podJson(const QString &name, const QJsonObject &spec)
{
    return QJsonDocument(QJsonObject { { QStringLiteral("apiVersion"), QStringLiteral("v1") },
                                       { QStringLiteral("kind"), QStringLiteral("Pod") },
                                       { QStringLiteral("metadata"), QJsonObject { { QStringLiteral("name"), name } } },
                                       { QStringLiteral("spec"), spec } })
        .toJson();
}

QJsonObject mount(const QString &volume, const QString &path, bool readOnly = false, const QString &subPath = {})
{
    QJsonObject m { { QStringLiteral("name"), volume }, { QStringLiteral("mountPath"), path } };
    if (readOnly)
        m.insert(QStringLiteral("readOnly"), true);
    if (!subPath.isEmpty())
        m.insert(QStringLiteral("subPath"), subPath);
    return m;
}

QString newMarker()
{
    return QStringLiteral("sf-isolation-%1").arg(QRandomGenerator::global()->generate64(), 0, 16);
}

// The live processes whose environment or command line holds marker (zombies have neither).
QList<qint64> processesWith(const QString &marker)
{
    QList<qint64> found;
    const QByteArray needle = marker.toUtf8();
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &entry : entries) {
        bool numeric = false;
        const qint64 pid = entry.toLongLong(&numeric);
        if (!numeric || pid == QCoreApplication::applicationPid())
            continue;
        for (const char *file : { "environ", "cmdline" }) {
            QFile f(QStringLiteral("/proc/%1/%2").arg(entry, QLatin1String(file)));
            if (f.open(QIODevice::ReadOnly) && f.readAll().contains(needle)) {
                found << pid;
                break;
            }
        }
    }
    return found;
}

// The live processes of a process group.
QList<qint64> processGroupMembers(pid_t group)
{
    QList<qint64> found;
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &entry : entries) {
        bool numeric = false;
        const qint64 pid = entry.toLongLong(&numeric);
        if (!numeric)
            continue;
        QFile f(QStringLiteral("/proc/%1/stat").arg(entry));
        if (!f.open(QIODevice::ReadOnly))
            continue;
        const QByteArray stat = f.readAll();
        // "pid (comm) state ppid pgrp ...", comm possibly with spaces: read after the last ')'.
        const QList<QByteArray> fields = stat.mid(stat.lastIndexOf(')') + 2).split(' ');
        if (fields.size() > 2 && fields[0] != "Z" && fields[2].toLongLong() == group)
            found << pid;
    }
    return found;
}

// Three sleeps below the container's shell: one in the background, one that left the process
// group with setsid, one in the foreground.
QString grandchildrenScript(const QString &tag)
{
    return QStringLiteral("sleep 1001%1 & setsid sleep 1002%1 & sleep 1003%1").arg(tag);
}

} // namespace

class TestContainerIsolation : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<SandboxHttp> m_http;
    const QString m_pods = QStringLiteral("/api/v1/namespaces/starforge/pods");

    QJsonObject get(const QString &name) { return m_http->get(m_pods + u'/' + name).json(); }
    QString phase(const QString &name)
    {
        return get(name).value(QStringLiteral("status")).toObject().value(QStringLiteral("phase")).toString();
    }
    QStringList events(const QString &name)
    {
        QStringList out;
        const QJsonArray items
            = m_http->get(QStringLiteral("/api/v1/namespaces/starforge/events?fieldSelector=involvedObject.name%3D") + name)
                  .json()
                  .value(QStringLiteral("items"))
                  .toArray();
        for (const QJsonValue &e : items) {
            out << e.toObject().value(QStringLiteral("reason")).toString() + QStringLiteral(": ")
                    + e.toObject().value(QStringLiteral("message")).toString();
        }
        return out;
    }
    QString stateDir() const { return m_dir.filePath(QStringLiteral("conn.json.state")); }

private Q_SLOTS:
    void init()
    {
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("h200:1x8,cpu:1x0");
        options.presentImages = { Present, jobTestImage() };
        options.crashLoopBackoffMs = 200;
        QString error;
        QVERIFY2(startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
    }
    void cleanup()
    {
        m_http.reset();
        m_sandbox.reset();
    }

    void deletingAPodKillsEveryProcessOfItsContainer()
    {
        const QString marker = newMarker();
        QCOMPARE(m_http
                     ->send("POST", m_pods,
                            podJson(QStringLiteral("family"),
                                    QJsonObject { { QStringLiteral("restartPolicy"), QStringLiteral("Never") },
                                                  { QStringLiteral("containers"),
                                                    QJsonArray { container(QStringLiteral("main"), grandchildrenScript({}), marker) } } }))
                     .status,
                 201);
        QTRY_COMPARE_WITH_TIMEOUT(phase(QStringLiteral("family")), QStringLiteral("Running"), 10000);
        // The shell and its three sleeps.
        QTRY_VERIFY_WITH_TIMEOUT(processesWith(marker).size() >= 4, 10000);
        const QList<qint64> processes = processesWith(marker);
        // The container's own process group, not the sandbox's.
        const pid_t group = ::getpgid(static_cast<pid_t>(processes.first()));
        QVERIFY(group > 0);
        QVERIFY(group != ::getpgrp());
        QVERIFY(processGroupMembers(group).size() >= 3);

        QCOMPARE(m_http->send("DELETE", m_pods + QStringLiteral("/family")).status, 200);
        QTRY_VERIFY_WITH_TIMEOUT(processesWith(marker).isEmpty(), 15000);
        // A killed process stays in its group as a zombie (with no command line, so the marker no
        // longer finds it) until whoever adopted it reaps it: wait for that too.
        QTRY_VERIFY_WITH_TIMEOUT(processGroupMembers(group).isEmpty(), 5000);
    }

    void aContainerThatEndsTakesItsProcessesAlong()
    {
        // The main process exits while its background child still runs: the child goes too, as
        // a runtime ends a container whose PID 1 exited.
        const QString marker = newMarker();
        QCOMPARE(m_http
                     ->send("POST", m_pods,
                            podJson(QStringLiteral("leaver"),
                                    QJsonObject { { QStringLiteral("restartPolicy"), QStringLiteral("Never") },
                                                  { QStringLiteral("containers"),
                                                    QJsonArray { container(QStringLiteral("main"),
                                                                           QStringLiteral("sleep 1004 & sleep 0.5; exit 3"), marker) } } }))
                     .status,
                 201);
        QTRY_COMPARE_WITH_TIMEOUT(phase(QStringLiteral("leaver")), QStringLiteral("Failed"), 10000);
        const QJsonObject terminated = get(QStringLiteral("leaver"))
                                           .value(QStringLiteral("status"))
                                           .toObject()
                                           .value(QStringLiteral("containerStatuses"))
                                           .toArray()
                                           .first()
                                           .toObject()
                                           .value(QStringLiteral("state"))
                                           .toObject()
                                           .value(QStringLiteral("terminated"))
                                           .toObject();
        QCOMPARE(terminated.value(QStringLiteral("exitCode")).toInt(), 3);
        QTRY_VERIFY_WITH_TIMEOUT(processesWith(marker).isEmpty(), 10000);
    }

    void stoppingTheSandboxKillsEveryContainerProcess()
    {
        const QString marker = newMarker();
        QCOMPARE(m_http
                     ->send("POST", m_pods,
                            podJson(QStringLiteral("stopped"),
                                    QJsonObject { { QStringLiteral("containers"),
                                                    QJsonArray { container(QStringLiteral("main"), grandchildrenScript({}), marker) } } }))
                     .status,
                 201);
        QTRY_VERIFY_WITH_TIMEOUT(processesWith(marker).size() >= 4, 10000);
        m_http.reset();
        m_sandbox.reset();
        QTRY_VERIFY_WITH_TIMEOUT(processesWith(marker).isEmpty(), 10000);
    }

    void sigkillOfTheSandboxLeavesNoContainerProcess()
    {
        // The built executable, killed as an out-of-memory killer or `kill -9` would.
        QTemporaryDir dir;
        const QString connection = dir.filePath(QStringLiteral("sb/conn.json"));
        QProcess sandbox;
        sandbox.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        sandbox.start(QStringLiteral(SF_BIN_DIR "/starforge-sandbox"),
                      { QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"), QStringLiteral("--connection-file"), connection,
                        QStringLiteral("--fleet"), QStringLiteral("cpu:2x0"), QStringLiteral("--images"), Present });
        QVERIFY(sandbox.waitForStarted(10000));
        QTRY_VERIFY_WITH_TIMEOUT(QJsonDocument::fromJson(readAll(connection)).object().contains(QStringLiteral("forge")), 20000);
        const QJsonObject conn = QJsonDocument::fromJson(readAll(connection)).object();
        SandboxHttp http(QUrl(conn.value(QStringLiteral("apiServer")).toString()), readAll(conn.value(QStringLiteral("caFile")).toString()),
                         conn.value(QStringLiteral("token")).toString().toLatin1());
        const QString pods = QStringLiteral("/api/v1/namespaces/%1/pods").arg(conn.value(QStringLiteral("namespace")).toString());
        const QString marker = newMarker();
        for (const QString &name : { QStringLiteral("one"), QStringLiteral("two") }) {
            QCOMPARE(
                http.send("POST", pods,
                          podJson(name,
                                  QJsonObject { { QStringLiteral("containers"),
                                                  QJsonArray { container(QStringLiteral("main"), grandchildrenScript({}), marker) } } }))
                    .status,
                201);
        }
        // Two shells, six sleeps.
        QTRY_VERIFY_WITH_TIMEOUT(processesWith(marker).size() >= 8, 15000);

        sandbox.kill(); // SIGKILL: no destructor, no clean-up of its own
        QVERIFY(sandbox.waitForFinished(10000));
        QCOMPARE(sandbox.exitStatus(), QProcess::CrashExit);
        QTRY_VERIFY_WITH_TIMEOUT(processesWith(marker).isEmpty(), 10000);
    }

    void volumesAreAtTheirMountPaths()
    {
        const QString marker = newMarker();
        const QString storageRoot = stateDir() + QStringLiteral("/storage");
        const QString shmFile = QStringLiteral("/dev/shm/") + marker;
        QJsonObject init
            = container(QStringLiteral("fetch"),
                        QStringLiteral("printf payload > /starforge-capsule/x.part && mv /starforge-capsule/x.part /starforge-capsule/x"),
                        marker, QJsonArray { mount(QStringLiteral("capsule"), QStringLiteral("/starforge-capsule")) });
        const QString script
            = QStringLiteral("cat /starforge-capsule/x; echo;"
                             "echo stored > /mnt/starforge-storage/from-pod;"
                             "if touch /corpus/nope 2>/dev/null; then echo corpus-writable; else echo corpus-read-only; fi;"
                             "echo shm > %1 && cat %1;"
                             "echo sub > /data/in-sub; ls /mnt")
                  .arg(shmFile);
        QJsonObject main
            = container(QStringLiteral("main"), script, marker,
                        QJsonArray { mount(QStringLiteral("capsule"), QStringLiteral("/starforge-capsule")),
                                     mount(QStringLiteral("storage"), QStringLiteral("/mnt/starforge-storage")),
                                     mount(QStringLiteral("corpus"), QStringLiteral("/corpus"), true),
                                     mount(QStringLiteral("dshm"), QStringLiteral("/dev/shm")),
                                     mount(QStringLiteral("storage"), QStringLiteral("/data"), false, QStringLiteral("sub/dir")) });
        const QJsonArray volumes {
            QJsonObject { { QStringLiteral("name"), QStringLiteral("capsule") }, { QStringLiteral("emptyDir"), QJsonObject() } },
            QJsonObject { { QStringLiteral("name"), QStringLiteral("storage") },
                          { QStringLiteral("persistentVolumeClaim"),
                            QJsonObject { { QStringLiteral("claimName"), QStringLiteral("starforge-storage") } } } },
            QJsonObject {
                { QStringLiteral("name"), QStringLiteral("corpus") },
                { QStringLiteral("persistentVolumeClaim"),
                  QJsonObject { { QStringLiteral("claimName"), QStringLiteral("datasets") }, { QStringLiteral("readOnly"), true } } } },
            QJsonObject { { QStringLiteral("name"), QStringLiteral("dshm") },
                          { QStringLiteral("emptyDir"), QJsonObject { { QStringLiteral("medium"), QStringLiteral("Memory") } } } }
        };
        QCOMPARE(m_http
                     ->send("POST", m_pods,
                            podJson(QStringLiteral("mounts"),
                                    QJsonObject { { QStringLiteral("restartPolicy"), QStringLiteral("Never") },
                                                  { QStringLiteral("volumes"), volumes },
                                                  { QStringLiteral("initContainers"), QJsonArray { init } },
                                                  { QStringLiteral("containers"), QJsonArray { main } } }))
                     .status,
                 201);
        QTRY_COMPARE_WITH_TIMEOUT(phase(QStringLiteral("mounts")), QStringLiteral("Succeeded"), 15000);
        const QByteArray log = m_http->get(m_pods + QStringLiteral("/mounts/log?container=main")).body;
        QVERIFY2(log.startsWith("payload\ncorpus-read-only\nshm\n"), log.constData());
        // Under /mnt the container sees the host's entries as well as its mount point.
        const QStringList hostMnt = QDir(QStringLiteral("/mnt")).entryList(QDir::AllEntries | QDir::NoDotAndDotDot);
        for (const QString &entry : hostMnt)
            QVERIFY2(log.contains(entry.toUtf8()), qPrintable(entry));

        // The storage claim is FORGE_STORAGE_ROOT's own directory, and a subPath a directory in it.
        QCOMPARE(readAll(storageRoot + QStringLiteral("/from-pod")), QByteArray("stored\n"));
        QCOMPARE(readAll(storageRoot + QStringLiteral("/sub/dir/in-sub")), QByteArray("sub\n"));
        // Nothing was made on the host outside the sandbox's state.
        QVERIFY(!QFileInfo::exists(QStringLiteral("/starforge-capsule")));
        QVERIFY(!QFileInfo::exists(QStringLiteral("/mnt/starforge-storage")));
        QVERIFY(!QFileInfo::exists(QStringLiteral("/corpus")));
        QVERIFY(!QFileInfo::exists(QStringLiteral("/data")));
        QVERIFY(!QFileInfo::exists(shmFile));
    }

    void aFileWorkingDirIsReadWhereTheHeadHasIt()
    {
        // The app's http-only Capsule path: the head's init container puts the package into an
        // emptyDir at /starforge-capsule, and the job's working_dir is file:// there, which Ray
        // resolves on the head (the sandbox's driver runs in the submitter pod, without that volume).
        const QString makeZip = QStringLiteral("import zipfile\nwith zipfile.ZipFile('/starforge-capsule/capsule.zip', 'w') as z:\n"
                                               "    z.writestr('job/run.py', 'print(\"from the capsule\")')\n");
        const QJsonObject capsuleMount = mount(QStringLiteral("capsule"), QStringLiteral("/starforge-capsule"));
        const QJsonObject headExtra{
            {QStringLiteral("volumes"), QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("capsule")}, {QStringLiteral("emptyDir"), QJsonObject()}}}},
            {QStringLiteral("initContainers"),
             QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("fetch-capsule")}, {QStringLiteral("image"), jobTestImage()},
                                    {QStringLiteral("command"), QJsonArray{QStringLiteral("python3"), QStringLiteral("-c"), makeZip}},
                                    {QStringLiteral("volumeMounts"), QJsonArray{capsuleMount}}}}},
            {QStringLiteral("containers"),
             QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("ray-head")}, {QStringLiteral("image"), jobTestImage()},
                                    {QStringLiteral("volumeMounts"), QJsonArray{capsuleMount}}}}}};
        QJsonObject job = starforgeRayJob(QStringLiteral("capsule"), QStringLiteral("c4psul"), QStringLiteral("python3 run.py"), headExtra);
        QJsonObject spec = job.value(QStringLiteral("spec")).toObject();
        spec.insert(QStringLiteral("runtimeEnvYAML"), QStringLiteral("working_dir: file:///starforge-capsule/capsule.zip\n"));
        job.insert(QStringLiteral("spec"), spec);
        QCOMPARE(m_http->send("POST", QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs"), QJsonDocument(job).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(m_http->get(QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs/capsule-c4psul")).json()
                                      .value(QStringLiteral("status")).toObject().value(QStringLiteral("jobStatus")).toString(),
                                  QStringLiteral("SUCCEEDED"), 30000);
        QVERIFY(!QFileInfo::exists(QStringLiteral("/starforge-capsule")));
    }

    void aVolumeTheSandboxCannotProvideIsFailedMount()
    {
        const QJsonArray volumes { QJsonObject {
            { QStringLiteral("name"), QStringLiteral("settings") },
            { QStringLiteral("configMap"), QJsonObject { { QStringLiteral("name"), QStringLiteral("settings") } } } } };
        QCOMPARE(m_http
                     ->send("POST", m_pods,
                            podJson(QStringLiteral("nomount"),
                                    QJsonObject { { QStringLiteral("volumes"), volumes },
                                                  { QStringLiteral("containers"),
                                                    QJsonArray { container(QStringLiteral("main"), QStringLiteral("true"), newMarker(),
                                                                           QJsonArray { mount(QStringLiteral("settings"),
                                                                                              QStringLiteral("/etc/app")) }) } } }))
                     .status,
                 201);
        QTRY_VERIFY_WITH_TIMEOUT(
            events(QStringLiteral("nomount"))
                .contains(QStringLiteral("FailedMount: MountVolume.SetUp failed for volume \"settings\" : the sandbox provides "
                                         "emptyDir, persistentVolumeClaim and hostPath volumes only")),
            10000);
        QCOMPARE(get(QStringLiteral("nomount"))
                     .value(QStringLiteral("status"))
                     .toObject()
                     .value(QStringLiteral("containerStatuses"))
                     .toArray()
                     .first()
                     .toObject()
                     .value(QStringLiteral("state"))
                     .toObject()
                     .value(QStringLiteral("waiting"))
                     .toObject()
                     .value(QStringLiteral("reason"))
                     .toString(),
                 QStringLiteral("ContainerCreating"));
    }

    void stateIsOwnerOnlyAfterAJobRan()
    {
        // A RayJob end to end (Ray's state, the driver's files, every pod's logs), a pod writing
        // into an emptyDir and the storage claim, and an S3 object.
        QTemporaryDir drivers;
        const QString entrypoint
            = driverEntrypoint(drivers.path(),
                               QStringLiteral("import os\nos.makedirs('out/deep', exist_ok=True)\nopen('out/deep/result.txt', "
                                              "'w').write('done')\nprint('driver done')\n"));
        QCOMPARE(m_http
                     ->send("POST", QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs"),
                            QJsonDocument(starforgeRayJob(QStringLiteral("modes"), QStringLiteral("m0des1"), entrypoint)).toJson())
                     .status,
                 201);
        const QString script = QStringLiteral(
            "mkdir -p /scratch/a/b && echo x > /scratch/a/b/f && mkdir -p /store/jobs/m0des1 && echo y > /store/jobs/m0des1/g");
        QCOMPARE(
            m_http
                ->send("POST", m_pods,
                       podJson(QStringLiteral("writer"),
                               QJsonObject {
                                   { QStringLiteral("restartPolicy"), QStringLiteral("Never") },
                                   { QStringLiteral("volumes"),
                                     QJsonArray { QJsonObject { { QStringLiteral("name"), QStringLiteral("scratch") },
                                                                { QStringLiteral("emptyDir"), QJsonObject() } },
                                                  QJsonObject { { QStringLiteral("name"), QStringLiteral("store") },
                                                                { QStringLiteral("persistentVolumeClaim"),
                                                                  QJsonObject { { QStringLiteral("claimName"),
                                                                                  QStringLiteral("starforge-storage") } } } } } },
                                   { QStringLiteral("containers"),
                                     QJsonArray { container(QStringLiteral("main"), script, newMarker(),
                                                            QJsonArray { mount(QStringLiteral("scratch"), QStringLiteral("/scratch")),
                                                                         mount(QStringLiteral("store"), QStringLiteral("/store")) }) } } }))
                .status,
            201);
        S3::S3Client s3(s3ClientConfig(*m_sandbox));
        bool stored = false;
        s3.putObject(QStringLiteral("jobs/m0des1/capsule.zip"), QByteArray(1000, 'c'), "application/zip", this,
                     [&stored](Result<void> r) { stored = r.ok(); });
        QTRY_VERIFY_WITH_TIMEOUT(stored, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(phase(QStringLiteral("writer")), QStringLiteral("Succeeded"), 15000);
        QTRY_COMPARE_WITH_TIMEOUT(m_http->get(QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs/modes-m0des1"))
                                      .json()
                                      .value(QStringLiteral("status"))
                                      .toObject()
                                      .value(QStringLiteral("jobStatus"))
                                      .toString(),
                                  QStringLiteral("SUCCEEDED"), 30000);

        int files = 0;
        int dirs = 0;
        QStringList loose;
        const auto check = [&](const QString &path, bool isDir) {
            struct stat st
            {
            };
            if (::lstat(QFile::encodeName(path).constData(), &st) != 0 || S_ISLNK(st.st_mode))
                return;
            const mode_t mode = st.st_mode & 07777;
            if (isDir ? mode != 0700 : (mode & 077) != 0)
                loose << QStringLiteral("%1 %2").arg(mode, 4, 8, QLatin1Char('0')).arg(path);
        };
        check(stateDir(), true);
        QDirIterator it(stateDir(), QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString path = it.next();
            const bool isDir = it.fileInfo().isDir() && !it.fileInfo().isSymLink();
            check(path, isDir);
            ++(isDir ? dirs : files);
        }
        for (const QString &file : QDir(m_dir.path()).entryList({ QStringLiteral("conn.json*") }, QDir::Files)) {
            check(m_dir.filePath(file), false);
        }
        QVERIFY2(loose.isEmpty(), qPrintable(loose.join(u'\n')));
        // What was walked: the job's logs, Ray's state, the volumes, the S3 object.
        QVERIFY2(files >= 8 && dirs >= 10, qPrintable(QStringLiteral("%1 files, %2 directories").arg(files).arg(dirs)));
        QVERIFY(QFileInfo::exists(stateDir() + QStringLiteral("/storage/jobs/m0des1/g")));
    }
};

QTEST_GUILESS_MAIN(TestContainerIsolation)
#include "tst_container_isolation.moc"
