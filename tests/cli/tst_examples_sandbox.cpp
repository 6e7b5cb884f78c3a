// Every JobSpec in examples/ runs unchanged on the embedded sandbox, as a newcomer runs it:
// `starforge-cli submit --wait` against a starforge-sandbox process started with the default
// fleet (no --fleet, as `starforge --sandbox` starts it). The folder is read at test time, so a
// new example is covered without touching this file. Each example must fit at once, succeed and
// be archived, train to its step limit, put its pools on nodes of their own, mount the storage
// and corpus claims it asks for (the corpus read-only), and be left byte-for-byte as it was.
// The only knob is the NeMo-RL stand-in's step time (--nemo-rl-step-seconds), so the examples'
// hundreds of steps take seconds; their overrides stay as written.

#include "core/config/effectiveconfig.h"
#include "core/config/embeddedsandbox.h"
#include "core/job/jobrecord.h"
#include "core/job/jobspec.h"
#include "core/s3/s3client.h"
#include "support/testutil.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <memory>
#include <optional>

using namespace Starforge;

namespace {

struct Run
{
    int exitCode = -1;   // -1: crashed, or killed at the timeout
    QByteArray out;
    QByteArray err;
};

// One digest of every file under dir (relative path and content), to show a run changed nothing.
QByteArray treeDigest(const QString &dir)
{
    QStringList files;
    QDirIterator it(dir, QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
    while (it.hasNext()) files << QDir(dir).relativeFilePath(it.next());
    files.sort();
    QCryptographicHash hash(QCryptographicHash::Sha256);
    for (const QString &file : std::as_const(files)) {
        hash.addData(QByteArray(file.toUtf8() + '\0'));
        hash.addData(QByteArray(Testing::readAll(QDir(dir).filePath(file)) + '\0'));
    }
    return hash.result().toHex();
}

QString str(const QJsonValue &v, const char *key)
{
    return v.toObject().value(QLatin1String(key)).toString();
}

} // namespace

class TestExamplesSandbox : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<QProcess> m_sandbox;
    QString m_connection;
    std::optional<Config::SandboxConnection> m_settings;
    std::unique_ptr<S3::S3Client> m_s3;

    QProcessEnvironment environment() const
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        // Nothing from the caller's own setup: only the connection file says where to go.
        for (const QString &key : env.keys()) {
            if (key.startsWith(QLatin1String("FORGE_"))) env.remove(key);
        }
        env.remove(QStringLiteral("STARFORGE_PROFILE"));
        env.remove(QStringLiteral("KUBECONFIG"));
        env.insert(QStringLiteral("STARFORGE_CONFIG_FILE"), m_dir.filePath(QStringLiteral("profiles.ini")));
        return env;
    }

    Run cli(QStringList arguments, int timeoutMs = 30000)
    {
        arguments << QStringLiteral("--connection-file") << m_connection;
        QProcess p;
        p.setProcessEnvironment(environment());
        p.start(QStringLiteral(SF_BIN_DIR "/starforge-cli"), arguments);
        if (!p.waitForStarted(10000)) return {};
        p.closeWriteChannel();
        // The event loop runs meanwhile (the S3 client lives on it).
        if (!QTest::qWaitFor([&p] { return p.state() == QProcess::NotRunning; }, timeoutMs)) {
            p.kill();
            p.waitForFinished(5000);
            return {-1, p.readAllStandardOutput(), p.readAllStandardError()};
        }
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(), p.readAllStandardError()};
    }

    QByteArray bucketObject(const QString &key)
    {
        std::optional<Result<QByteArray>> got;
        m_s3->getObject(key, this, [&got](Result<QByteArray> r) { got = std::move(r); });
        if (!Testing::waitFor(got, 30000) || !*got) return {};
        return **got;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_connection = m_dir.filePath(QStringLiteral("sandbox/connection.json"));
        QVERIFY(QDir().mkpath(QFileInfo(m_connection).path()));
        m_sandbox = std::make_unique<QProcess>();
        m_sandbox->setProcessEnvironment(environment());
        m_sandbox->setProcessChannelMode(QProcess::ForwardedErrorChannel);
        // The default fleet; 10 ms a training step instead of 200 (500 steps in 5 s).
        m_sandbox->start(QStringLiteral(SF_BIN_DIR "/starforge-sandbox"),
                         {QStringLiteral("--connection-file"), m_connection,
                          QStringLiteral("--nemo-rl-step-seconds"), QStringLiteral("0.01")});
        QVERIFY(m_sandbox->waitForStarted(10000));
        QVERIFY2(QTest::qWaitFor([this] { return m_sandbox->state() != QProcess::Running || QFileInfo(m_connection).size() > 0; }, 20000)
                     && m_sandbox->state() == QProcess::Running,
                 "starforge-sandbox did not start");
        auto connection = Config::SandboxConnection::read(m_connection);
        QVERIFY2(connection, connection ? "" : qPrintable(connection.error().message));
        m_settings = *connection;
        // The profile the sandbox hands out names a corpus claim, so "corpus": true is satisfied.
        QVERIFY(!m_settings->settings.value(QStringLiteral("FORGE_K8S_CORPUS_PVC")).isEmpty());
        const Config::Profile profile{QStringLiteral("sandbox"), m_settings->settings};
        const auto config = Config::EffectiveConfig::resolve(profile, QProcessEnvironment(), m_settings->secrets);
        auto s3 = S3::ClientConfig::fromEffectiveConfig(config);
        QVERIFY2(s3, s3 ? "" : qPrintable(s3.error().message));
        m_s3 = std::make_unique<S3::S3Client>(*s3);
    }

    void cleanupTestCase()
    {
        if (m_sandbox && m_sandbox->state() == QProcess::Running) {
            m_sandbox->terminate();
            QVERIFY(m_sandbox->waitForFinished(15000));
            QCOMPARE(m_sandbox->exitCode(), 0);
        }
    }

    void everyExampleRuns_data()
    {
        QTest::addColumn<QString>("folder");
        const QDir examples(QStringLiteral(SF_SOURCE_DIR "/examples"));
        int found = 0;
        for (const QString &name : examples.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
            if (!QFileInfo::exists(examples.filePath(name + QStringLiteral("/jobspec.json")))) continue;
            QTest::newRow(qPrintable(name)) << examples.filePath(name);
            ++found;
        }
        // The repository has examples (grpo-math, grpo-two-pools); none found means a wrong path.
        QVERIFY2(found >= 2, qPrintable(examples.path()));
    }

    void everyExampleRuns()
    {
        QFETCH(QString, folder);
        const QString specFile = folder + QStringLiteral("/jobspec.json");
        const auto spec = Job::JobSpec::load(specFile);
        QVERIFY2(spec, spec ? "" : qPrintable(spec.error().message));
        const QByteArray before = treeDigest(folder);

        // It fits the idle default fleet now, so submit does not refuse it (no --force).
        const Run fit = cli({QStringLiteral("capacity"), QStringLiteral("--spec"), specFile, QStringLiteral("--json")});
        QVERIFY2(fit.exitCode == 0, fit.err.constData());
        QCOMPARE(QJsonDocument::fromJson(fit.out).object().value(QStringLiteral("fit")).toString(), QStringLiteral("FitsNow"));

        const Run submit = cli({QStringLiteral("submit"), specFile, QStringLiteral("--wait"), QStringLiteral("--json")}, 240000);
        QVERIFY2(submit.exitCode == 0, QByteArray(submit.out + submit.err).constData());
        const QList<QByteArray> lines = submit.out.trimmed().split('\n');
        const QJsonObject first = QJsonDocument::fromJson(lines.first()).object();
        const QJsonObject last = QJsonDocument::fromJson(lines.last()).object();
        const QString id = first.value(QStringLiteral("id")).toString();
        QVERIFY2(!id.isEmpty(), submit.out.constData());
        QCOMPARE(last.value(QStringLiteral("state")).toString(), QStringLiteral("Succeeded"));
        QVERIFY2(last.value(QStringLiteral("archived")).toBool(), submit.out.constData());

        // Trained to its step limit: the override as written (e.g. grpo.max_num_steps=500).
        int limit = 0;
        static const QRegularExpression stepsOverride(QStringLiteral("^\\+*[a-z_]+\\.max_num_steps=(\\d+)$"));
        for (const QString &o : spec->recipe.overrides) {
            if (const auto m = stepsOverride.match(o); m.hasMatch()) limit = m.captured(1).toInt();
        }
        const Run status = cli({QStringLiteral("status"), id, QStringLiteral("--json")});
        QVERIFY2(status.exitCode == 0, status.err.constData());
        const QJsonObject progress = QJsonDocument::fromJson(status.out).object().value(QStringLiteral("progress")).toObject();
        QVERIFY2(progress.value(QStringLiteral("totalSteps")).toInt() > 0, status.out.constData());
        QCOMPARE(progress.value(QStringLiteral("step")).toInt(), progress.value(QStringLiteral("totalSteps")).toInt());
        if (limit > 0) QCOMPARE(progress.value(QStringLiteral("totalSteps")).toInt(), limit);
        const Run log = cli({QStringLiteral("logs"), id});
        QVERIFY2(log.exitCode == 0, log.err.constData());
        const int steps = progress.value(QStringLiteral("totalSteps")).toInt();
        QVERIFY2(log.out.contains(QStringLiteral("Step %1/%1").arg(steps).toUtf8()), log.out.right(2000).constData());
        QVERIFY2(log.out.contains("Max number of steps has been reached"), log.out.right(2000).constData());

        // The final pods, as archived: one Ray pod per node of each pool, each on a node of its
        // own of the pool's series, with the claims the JobSpec asks for.
        const QJsonObject objects = QJsonDocument::fromJson(bucketObject(Job::ArchiveKeys::objects(id))).object();
        const QString corpusClaim = m_settings->settings.value(QStringLiteral("FORGE_K8S_CORPUS_PVC"));
        QHash<QString, QStringList> nodesPerPool;
        QSet<QString> nodes;
        for (const QJsonValue &pod : objects.value(QStringLiteral("pods")).toArray()) {
            const QJsonObject meta = pod[QStringLiteral("metadata")].toObject();
            const QString pool = meta.value(QStringLiteral("labels")).toObject().value(QStringLiteral("starforge.dev/pool")).toString();
            if (pool.isEmpty()) continue;   // the submitter
            const QJsonObject podSpec = pod[QStringLiteral("spec")].toObject();
            nodesPerPool[pool] << podSpec.value(QStringLiteral("nodeName")).toString();
            nodes.insert(podSpec.value(QStringLiteral("nodeName")).toString());
            QString corpusOf;
            bool claimReadOnly = false;
            for (const QJsonValue &volume : podSpec.value(QStringLiteral("volumes")).toArray()) {
                if (str(volume, "name") != QLatin1String("corpus")) continue;
                const QJsonObject claim = volume[QStringLiteral("persistentVolumeClaim")].toObject();
                corpusOf = claim.value(QStringLiteral("claimName")).toString();
                claimReadOnly = claim.value(QStringLiteral("readOnly")).toBool();
            }
            QCOMPARE(corpusOf, spec->corpus ? corpusClaim : QString());
            QCOMPARE(claimReadOnly, spec->corpus);
            const QJsonObject ray = podSpec.value(QStringLiteral("containers")).toArray().first().toObject();
            QStringList mounts;
            for (const QJsonValue &m : ray.value(QStringLiteral("volumeMounts")).toArray()) mounts << str(m, "mountPath");
            QCOMPARE(mounts.contains(QStringLiteral("/corpus")), spec->corpus);
            // Ran: the kubelet starts no container whose volumes it cannot set up.
            for (const QJsonValue &c : pod[QStringLiteral("status")][QStringLiteral("containerStatuses")].toArray()) {
                QVERIFY2(c[QStringLiteral("state")].toObject().contains(QStringLiteral("running"))
                             || c[QStringLiteral("state")][QStringLiteral("terminated")][QStringLiteral("exitCode")].toInt(-1) == 0,
                         qPrintable(meta.value(QStringLiteral("name")).toString()));
            }
        }
        int nodesAskedFor = 0;
        for (const Job::Pool &pool : spec->pools) {
            const QStringList on = nodesPerPool.value(pool.name);
            QCOMPARE(int(on.size()), pool.nodes);
            // The sandbox names its nodes <series>-NN.
            for (const QString &node : on) QVERIFY2(node.startsWith(pool.series + u'-'), qPrintable(pool.name + u' ' + node));
            nodesAskedFor += pool.nodes;
        }
        QCOMPARE(int(nodes.size()), nodesAskedFor);

        // The runner's checkpoints on the storage claim, where the app and the playground read them.
        if (spec->storage) {
            const QString checkpoints
                = m_settings->settings.value(QStringLiteral("FORGE_STORAGE_ROOT")) + QStringLiteral("/jobs/%1/checkpoints").arg(id);
            QVERIFY2(QFileInfo(checkpoints + QStringLiteral("/step_%1").arg(steps)).isDir(), qPrintable(checkpoints));
        }

        // Run unchanged: not a byte of the example was written.
        QCOMPARE(treeDigest(folder), before);
    }
};

QTEST_GUILESS_MAIN(TestExamplesSandbox)
#include "tst_examples_sandbox.moc"
