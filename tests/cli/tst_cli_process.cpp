// The built executables, run as a user runs them, with gnome-keyring's Secret Service: secrets
// given on stdin land in the keychain and never in the profile file; exit codes; the generated
// configuration reference in docs/ is current; starforge-sandbox does not pretend to work.
// The job commands' error paths against one starforge-sandbox (started on first use, with a
// known fleet): the session options, bad JobSpecs, jobs that do not exist, someone else's
// RayJob, a wait whose job is deleted, and a sandbox killed under a command (it must end, not
// hang). The happy paths are scripts/e2e/sandbox-loop.sh's.

#include "core/config/effectiveconfig.h"
#include "core/config/embeddedsandbox.h"
#include "core/events/eventjournal.h"
#include "core/kube/kubeclient.h"
#include "support/testutil.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTcpServer>
#include <QUrl>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

#include <memory>

using namespace Starforge;

struct Run
{
    int exitCode = -1;     // -1: crashed, or still running at the timeout (then killed)
    QByteArray out;
    QByteArray err;
    bool timedOut = false;
};

class TestCliProcess : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString config() const { return m_dir.filePath(QStringLiteral("profiles.ini")); }

    // The sandbox the job commands talk to, started by sandbox() on first use.
    std::unique_ptr<QProcess> m_sandbox;
    QString m_connection;     // its connection file
    int m_sandboxes = 0;

    QProcessEnvironment environment(const QProcessEnvironment &extra) const
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        // Nothing from the caller's own setup: their FORGE_* overrides, profile or kubeconfig.
        for (const QString &key : env.keys()) {
            if (key.startsWith(QLatin1String("FORGE_"))) env.remove(key);
        }
        env.remove(QStringLiteral("STARFORGE_PROFILE"));
        env.insert(QStringLiteral("STARFORGE_CONFIG_FILE"), config());
        env.remove(QStringLiteral("KUBECONFIG"));
        for (const QString &key : extra.keys()) {
            env.insert(key, extra.value(key));
        }
        return env;
    }

    Run run(const QString &program, const QStringList &arguments, const QByteArray &input = {}, const QProcessEnvironment &extra = {},
            int timeoutMs = 30000)
    {
        QProcess p;
        p.setProcessEnvironment(environment(extra));
        p.start(QStringLiteral(SF_BIN_DIR) + u'/' + program, arguments);
        if (!p.waitForStarted(10000)) {
            return {};
        }
        p.write(input);
        p.closeWriteChannel();
        // The event loop runs meanwhile, for a server in this process (notKubernetes).
        if (!QTest::qWaitFor([&p] { return p.state() == QProcess::NotRunning; }, timeoutMs)) {
            p.kill();
            p.waitForFinished(5000);
            return {-1, p.readAllStandardOutput(), p.readAllStandardError(), true};
        }
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(), p.readAllStandardError()};
    }
    Run cli(const QStringList &arguments, const QByteArray &input = {}, const QProcessEnvironment &extra = {})
    {
        return run(QStringLiteral("starforge-cli"), arguments, input, extra);
    }
    // A job command on the sandbox; no command may take 15 s against it.
    Run job(QStringList arguments)
    {
        arguments << QStringLiteral("--connection-file") << sandbox();
        return run(QStringLiteral("starforge-cli"), arguments, {}, {}, 15000);
    }

    // The sandbox's connection file, the sandbox started first if need be: 2 h100 nodes of 8
    // GPUs, one a100 node of 4, one CPU node. Empty (and the test failed) when it did not start.
    QString sandbox()
    {
        if (m_sandbox && m_sandbox->state() == QProcess::Running) {
            return m_connection;
        }
        m_connection = m_dir.filePath(QStringLiteral("sandbox-%1/connection.json").arg(++m_sandboxes));
        QDir().mkpath(QFileInfo(m_connection).path());
        m_sandbox = std::make_unique<QProcess>();
        m_sandbox->setProcessEnvironment(environment({}));
        m_sandbox->setProcessChannelMode(QProcess::ForwardedErrorChannel);
        m_sandbox->start(QStringLiteral(SF_BIN_DIR "/starforge-sandbox"),
                         {QStringLiteral("--connection-file"), m_connection, QStringLiteral("--fleet"), QStringLiteral("h100:2x8,a100:1x4,cpu:1x0")});
        m_sandbox->waitForStarted(10000);
        const bool ready = QTest::qWaitFor([this] {
            return m_sandbox->state() != QProcess::Running
                || QJsonDocument::fromJson(Testing::readAll(m_connection)).object().contains(QStringLiteral("forge"));
        }, 15000);
        if (!ready || m_sandbox->state() != QProcess::Running) {
            QTest::qFail("starforge-sandbox did not start", __FILE__, __LINE__);
            return {};
        }
        return m_connection;
    }

    // A code folder and a JobSpec for a job that never starts: it asks for b200 GPUs, which
    // the sandbox does not have, so it stays Pending (the deadline is 30 min).
    QString stuckSpec()
    {
        const QString dir = m_dir.filePath(QStringLiteral("stuck"));
        QDir().mkpath(dir + QStringLiteral("/configs"));
        Testing::writeFile(dir + QStringLiteral("/configs/grpo.yaml"), "grpo:\n  max_num_steps: 3\ncluster:\n  gpus_per_node: 1\n  num_nodes: 1\n");
        Testing::writeFile(dir + QStringLiteral("/jobspec.json"),
                           R"({"version": 1, "name": "grpo-stuck", "code": ".",
                               "recipe": {"algorithm": "grpo", "config": "configs/grpo.yaml"},
                               "pools": [{"name": "train", "series": "b200", "nodes": 1, "gpusPerNode": 1}]})");
        return dir + QStringLiteral("/jobspec.json");
    }

    // A code folder and a JobSpec for a job that runs on the sandbox's h100 nodes and succeeds
    // in a few seconds (the sandbox's NeMo-RL stand-in, three steps).
    QString quickSpec()
    {
        const QString dir = m_dir.filePath(QStringLiteral("quick"));
        QDir().mkpath(dir + QStringLiteral("/configs"));
        Testing::writeFile(dir + QStringLiteral("/configs/grpo.yaml"), "grpo:\n  max_num_steps: 3\ncluster:\n  gpus_per_node: 1\n  num_nodes: 1\n");
        Testing::writeFile(dir + QStringLiteral("/jobspec.json"),
                           R"({"version": 1, "name": "grpo-quick", "code": ".",
                               "recipe": {"algorithm": "grpo", "config": "configs/grpo.yaml"},
                               "pools": [{"name": "train", "series": "h100", "nodes": 1, "gpusPerNode": 1}]})");
        return dir + QStringLiteral("/jobspec.json");
    }

    // Sends one request to the sandbox's API server, as a user with kubectl would.
    Kube::ApiResult kube(const QByteArray &method, const QString &path, const QJsonObject &body = {})
    {
        const auto connection = Config::SandboxConnection::read(sandbox());
        if (!connection) return {};
        const auto config = Kube::ClientConfig::fromSettings(
            Config::EffectiveConfig::resolve(Config::Profile{QStringLiteral("sandbox"), connection->settings}, QProcessEnvironment(), connection->secrets));
        if (!config) return {};
        Kube::KubeClient client(*config);
        Kube::ApiRequest request;
        request.method = method;
        request.path = path;
        if (!body.isEmpty()) request.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
        request.what = QStringLiteral("%1 %2").arg(QString::fromLatin1(method), path);
        std::optional<Kube::ApiResult> result;
        client.send(request, this, [&result](const Kube::ApiResult &r) { result = r; });
        Testing::waitFor(result);
        return result.value_or(Kube::ApiResult{});
    }

    static QString jsonId(const QByteArray &line)
    {
        return QJsonDocument::fromJson(line).object().value(QStringLiteral("id")).toString();
    }

private Q_SLOTS:
    void cleanupTestCase()
    {
        if (m_sandbox && m_sandbox->state() == QProcess::Running) {
            m_sandbox->terminate();
            m_sandbox->waitForFinished(10000);
        }
    }

    void capsuleBuild()
    {
        const QString example = QStringLiteral(SF_SOURCE_DIR "/examples/grpo-math");
        const QString out = m_dir.filePath(QStringLiteral("c.zip"));
        const Run built = cli({QStringLiteral("capsule"), QStringLiteral("build"), example, QStringLiteral("--out"), out, QStringLiteral("--json")});
        QVERIFY2(built.exitCode == 0, built.err.constData());
        const QJsonObject json = QJsonDocument::fromJson(built.out).object();
        QFile zip(out);
        QVERIFY(zip.open(QIODevice::ReadOnly));
        const QByteArray bytes = zip.readAll();
        QCOMPARE(json.value(QStringLiteral("sha256")).toString().toLatin1(), QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex());
        QCOMPARE(json.value(QStringLiteral("size")).toInteger(), bytes.size());
        QCOMPARE(json.value(QStringLiteral("files")).toInt(), 4);   // config, jobspec.json, manifest.json, runner.pex
        QVERIFY(json.value(QStringLiteral("jobSpec")).toString().endsWith(QStringLiteral("examples/grpo-math/jobspec.json")));
        // The same folder with its JobSpec named explicitly: the same bytes.
        const Run again = cli({QStringLiteral("capsule"), QStringLiteral("build"), example, QStringLiteral("--spec"), example + QStringLiteral("/jobspec.json"),
                               QStringLiteral("--out"), m_dir.filePath(QStringLiteral("d.zip"))});
        QCOMPARE(again.exitCode, 0);
        const QByteArray shaLine = "sha256   " + json.value(QStringLiteral("sha256")).toString().toLatin1();
        QVERIFY2(again.out.contains(shaLine), again.out.constData());
        // A folder without a JobSpec still gives a complete Capsule, with a minimal one.
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("My Code")));
        QVERIFY(Testing::writeFile(m_dir.filePath(QStringLiteral("My Code/train.py")), "print(1)\n"));
        const Run bare = cli({QStringLiteral("capsule"), QStringLiteral("build"), m_dir.filePath(QStringLiteral("My Code")), QStringLiteral("--out"), m_dir.filePath(QStringLiteral("e.zip"))});
        QVERIFY2(bare.exitCode == 0, bare.err.constData());
        QVERIFY2(bare.out.contains("jobspec  minimal (no --spec given), name my-code"), bare.out.constData());
        const Run missing = cli({QStringLiteral("capsule"), QStringLiteral("build"), m_dir.filePath(QStringLiteral("nowhere"))});
        QCOMPARE(missing.exitCode, 1);
        QVERIFY(missing.err.contains("is not a folder"));
        QVERIFY(!QFile::exists(QStringLiteral("capsule.zip")));
    }

    void secretOnStdinGoesToTheKeychainOnly()
    {
        const Run created = cli({QStringLiteral("profile"), QStringLiteral("set"), QStringLiteral("lab"), QStringLiteral("FORGE_K8S_API_SERVER=https://k8s.lab:6443")});
        QCOMPARE(created.exitCode, 0);
        const QByteArray token = "stdin-token-5f9a2c-starforge-test";
        const Run set = cli({QStringLiteral("profile"), QStringLiteral("set"), QStringLiteral("lab"), QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("--stdin")}, token + "\n");
        QVERIFY2(set.exitCode == 0, set.err.constData());
        QVERIFY(set.out.contains("FORGE_K8S_TOKEN in the keychain"));

        // The profile file holds no secret: search its bytes.
        const QByteArray file = Testing::readAll(config());
        QVERIFY(file.contains("k8s.lab"));
        QVERIFY(!file.contains(token));
        QVERIFY(!file.contains("FORGE_K8S_TOKEN"));

        // The keychain holds it under the documented entry.
        QProcess lookup;
        lookup.start(QStringLiteral("secret-tool"), {QStringLiteral("lookup"), QStringLiteral("server"), QStringLiteral("starforge"), QStringLiteral("user"),
                                                     QStringLiteral("lab/FORGE_K8S_TOKEN"), QStringLiteral("type"), QStringLiteral("plaintext")});
        QVERIFY(lookup.waitForFinished(10000));
        QCOMPARE(lookup.readAllStandardOutput(), token);

        // show reports it set, from the keychain, without printing it.
        const Run show = cli({QStringLiteral("profile"), QStringLiteral("show"), QStringLiteral("lab"), QStringLiteral("--json")});
        QCOMPARE(show.exitCode, 0);
        QVERIFY(!show.out.contains(token));
        bool found = false;
        for (const QJsonValue &v : QJsonDocument::fromJson(show.out).object()[QStringLiteral("settings")].toArray()) {
            if (v[QStringLiteral("key")].toString() == u"FORGE_K8S_TOKEN") {
                found = true;
                QCOMPARE(v[QStringLiteral("source")].toString(), QStringLiteral("keychain"));
                QCOMPARE(v[QStringLiteral("value")].toBool(), true);
            }
        }
        QVERIFY(found);

        // Deleting the profile removes the secret too.
        QCOMPARE(cli({QStringLiteral("profile"), QStringLiteral("delete"), QStringLiteral("lab")}).exitCode, 0);
        QProcess again;
        again.start(QStringLiteral("secret-tool"), {QStringLiteral("lookup"), QStringLiteral("server"), QStringLiteral("starforge"), QStringLiteral("user"),
                                                    QStringLiteral("lab/FORGE_K8S_TOKEN"), QStringLiteral("type"), QStringLiteral("plaintext")});
        QVERIFY(again.waitForFinished(10000));
        QVERIFY(again.readAllStandardOutput().isEmpty());
    }

    // A kubeconfig whose client key is inline (client-key-data), imported: the key lands in the
    // keychain and nowhere in the profile file, and the profile signs in with it.
    void inlineClientKeyGoesToTheKeychainOnly()
    {
        const QString connection = sandbox();
        QVERIFY(!connection.isEmpty());
        const QByteArray certPem = Testing::readAll(connection + QStringLiteral(".client.crt"));
        const QByteArray keyPem = Testing::readAll(connection + QStringLiteral(".client.key"));
        QVERIFY(keyPem.contains("PRIVATE KEY"));
        const QString server = QJsonDocument::fromJson(Testing::readAll(connection)).object()
                                   .value(QStringLiteral("forge")).toObject().value(QStringLiteral("FORGE_K8S_API_SERVER")).toString();
        QVERIFY(server.startsWith(QLatin1String("https://")));
        const QString kubeconfig = m_dir.filePath(QStringLiteral("inline.kubeconfig"));
        QVERIFY(Testing::writeFile(kubeconfig, QStringLiteral(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: %1\n    certificate-authority: %2\n"
            "users:\n- name: u\n  user:\n    client-certificate-data: %3\n    client-key-data: %4\n"
            "contexts:\n- name: inline\n  context: {cluster: c, user: u, namespace: starforge}\ncurrent-context: inline\n")
            .arg(server, connection + QStringLiteral(".ca.pem"), QString::fromLatin1(certPem.toBase64()), QString::fromLatin1(keyPem.toBase64())).toUtf8()));

        const Run imported = cli({QStringLiteral("profile"), QStringLiteral("import-kubeconfig"), kubeconfig, QStringLiteral("--name"),
                                  QStringLiteral("inline"), QStringLiteral("--json")});
        QVERIFY2(imported.exitCode == 0, imported.err.constData());
        QCOMPARE(QJsonDocument::fromJson(imported.out).object().value(QStringLiteral("clientKeyInKeychain")).toBool(), true);

        // The profile file: the certificate (public) may be there, no byte of the key is.
        const QByteArray file = Testing::readAll(config());
        QVERIFY(file.contains("[profiles]") || file.contains("inline"));
        QVERIFY(!file.contains(keyPem.toBase64()));
        QVERIFY(!file.contains("PRIVATE KEY"));
        QByteArray keyBody = keyPem;
        keyBody = keyBody.split('\n').value(1);    // the first line of the key's base64
        QVERIFY(keyBody.size() > 40);
        QVERIFY(!file.contains(keyBody));
        QVERIFY(!file.contains(QByteArray::fromBase64(keyBody)));

        // The keychain holds the key, base64 as in the kubeconfig, under the documented entry.
        QProcess lookup;
        lookup.start(QStringLiteral("secret-tool"), {QStringLiteral("lookup"), QStringLiteral("server"), QStringLiteral("starforge"), QStringLiteral("user"),
                                                     QStringLiteral("inline/FORGE_K8S_CLIENT_KEY_DATA"), QStringLiteral("type"), QStringLiteral("plaintext")});
        QVERIFY(lookup.waitForFinished(10000));
        QCOMPARE(QByteArray::fromBase64(lookup.readAllStandardOutput().trimmed()).trimmed(), keyPem.trimmed());

        // The profile signs in with the key from the keychain (client certificate, no token).
        const Run jobs = run(QStringLiteral("starforge-cli"), {QStringLiteral("jobs"), QStringLiteral("--profile"), QStringLiteral("inline")}, {}, {}, 15000);
        QVERIFY2(jobs.exitCode == 0, jobs.err.constData());
        QVERIFY2(jobs.out.contains("namespace starforge"), jobs.out.constData());

        QCOMPARE(cli({QStringLiteral("profile"), QStringLiteral("delete"), QStringLiteral("inline"), QStringLiteral("--force")}).exitCode, 0);
    }

    // An exec plugin that needs a person (a device-code login): from a terminal (script(1) gives
    // the CLI one) its words reach the person while it waits, and approving lets the command
    // go on; from a pipe the plugin is told nobody is there, and the command says so.
    void interactivePluginOnATerminal()
    {
        const QString connection = sandbox();
        QVERIFY(!connection.isEmpty());
        const Run imported = cli({QStringLiteral("profile"), QStringLiteral("import-kubeconfig"), connection + QStringLiteral(".kubeconfig"),
                                  QStringLiteral("--context"), QStringLiteral("starforge-sandbox-exec"), QStringLiteral("--name"), QStringLiteral("device")});
        QVERIFY2(imported.exitCode == 0, imported.err.constData());
        const QString approve = m_dir.filePath(QStringLiteral("approved"));
        QFile::remove(approve);
        QProcessEnvironment login;
        login.insert(QStringLiteral("STARFORGE_CREDENTIAL_INTERACTIVE"), QStringLiteral("1"));
        login.insert(QStringLiteral("STARFORGE_CREDENTIAL_APPROVE_FILE"), approve);

        // No terminal: refused by the plugin, in its own words.
        const Run piped = run(QStringLiteral("starforge-cli"), {QStringLiteral("jobs"), QStringLiteral("--profile"), QStringLiteral("device")}, {}, login, 15000);
        QCOMPARE(piped.exitCode, 1);
        QVERIFY2(piped.err.contains("needs a person at a terminal"), piped.err.constData());

        // On a terminal: the device code is shown while the plugin waits, then the list.
        QProcess terminal;
        terminal.setProcessEnvironment(environment(login));
        terminal.setProcessChannelMode(QProcess::MergedChannels);
        terminal.start(QStringLiteral("script"), {QStringLiteral("-qfec"), QStringLiteral(SF_BIN_DIR "/starforge-cli jobs --profile device"), QStringLiteral("/dev/null")});
        QVERIFY(terminal.waitForStarted(10000));
        QByteArray seen;
        const bool prompted = QTest::qWaitFor([&] {
            seen += terminal.readAll();
            return seen.contains("enter the code") || terminal.state() == QProcess::NotRunning;
        }, 15000);
        QVERIFY2(prompted && terminal.state() == QProcess::Running, seen.constData());
        QVERIFY(Testing::writeFile(approve, "yes"));
        QVERIFY(QTest::qWaitFor([&] { return terminal.state() == QProcess::NotRunning; }, 15000));
        seen += terminal.readAll();
        QCOMPARE(terminal.exitCode(), 0);
        QVERIFY2(seen.contains("namespace starforge"), seen.constData());
        QCOMPARE(cli({QStringLiteral("profile"), QStringLiteral("delete"), QStringLiteral("device"), QStringLiteral("--force")}).exitCode, 0);
    }

    void handWrittenSecretsMoveIntoTheKeychain()
    {
        QVERIFY(Testing::writeFile(config(), "[profiles]\nold\\FORGE_S3_SECRET_KEY=hand-written-s3-secret-77\nold\\s3_bucket=old-bucket\n"));
        const Run list = cli({QStringLiteral("profile"), QStringLiteral("list")});
        QVERIFY2(list.exitCode == 0, list.err.constData());
        QVERIFY2(list.err.contains("moved 1 secret"), list.err.constData());
        QVERIFY(!Testing::readAll(config()).contains("hand-written-s3-secret-77"));
        QVERIFY(Testing::readAll(config()).contains("FORGE_S3_BUCKET=old-bucket"));
    }

    void exitCodes()
    {
        QCOMPARE(cli({QStringLiteral("--version")}).exitCode, 0);
        const Run bad = cli({QStringLiteral("profile"), QStringLiteral("set"), QStringLiteral("x"), QStringLiteral("FORGE_K8S_SHM_SIZE=64GB")});
        QCOMPARE(bad.exitCode, 1);
        QVERIFY(bad.err.contains("FORGE_K8S_SHM_SIZE"));
        const Run json = cli({QStringLiteral("--json"), QStringLiteral("profile"), QStringLiteral("show"), QStringLiteral("ghost")});
        QCOMPARE(json.exitCode, 1);
        QVERIFY(QJsonDocument::fromJson(json.err).object().contains(QStringLiteral("error")));
    }

    void configurationReferenceIsCurrent()
    {
        // docs/configuration.md is generated from the settings table; regenerate it with
        // scripts/update-docs.sh when this fails.
        const Run md = cli({QStringLiteral("settings"), QStringLiteral("--markdown")});
        QCOMPARE(md.exitCode, 0);
        const QByteArray doc = Testing::readAll(QStringLiteral(SF_SOURCE_DIR "/docs/configuration.md"));
        QVERIFY2(!doc.isEmpty(), "docs/configuration.md is missing");
        QVERIFY2(doc.contains(md.out), "docs/configuration.md is out of date: run scripts/update-docs.sh");
    }

    void sandboxExplainsBadOptions()
    {
        const Run missing = run(QStringLiteral("starforge-sandbox"), {});
        QCOMPARE(missing.exitCode, 1);
        QVERIFY2(missing.err.contains("needs --connection-file FILE"), missing.err.constData());
        const Run remote = run(QStringLiteral("starforge-sandbox"), {QStringLiteral("--listen"), QStringLiteral("0.0.0.0:0"),
                                                                   QStringLiteral("--connection-file"), QStringLiteral("/tmp/unused.json")});
        QCOMPARE(remote.exitCode, 1);
        QVERIFY2(remote.err.contains("loopback addresses only"), remote.err.constData());
        const Run fleet = run(QStringLiteral("starforge-sandbox"), {QStringLiteral("--fleet"), QStringLiteral("h200:4"),
                                                                  QStringLiteral("--connection-file"), QStringLiteral("/tmp/unused.json")});
        QCOMPARE(fleet.exitCode, 1);
        QVERIFY2(fleet.err.contains("write SERIES:NODESxGPUS"), fleet.err.constData());
        const Run faults = run(QStringLiteral("starforge-sandbox"), {QStringLiteral("--faults"), QStringLiteral("rate500=2"),
                                                                   QStringLiteral("--connection-file"), QStringLiteral("/tmp/unused.json")});
        QCOMPARE(faults.exitCode, 1);
        QVERIFY2(faults.err.contains("fault rate500 must be a fraction between 0 and 1"), faults.err.constData());
        const Run step = run(QStringLiteral("starforge-sandbox"), {QStringLiteral("--nemo-rl-step-seconds"), QStringLiteral("-1"),
                                                                 QStringLiteral("--connection-file"), QStringLiteral("/tmp/unused.json")});
        QCOMPARE(step.exitCode, 1);
        QVERIFY2(step.err.contains("--nemo-rl-step-seconds takes a number of seconds, 0 or more, not '-1'"), step.err.constData());
        const Run version = run(QStringLiteral("starforge-sandbox"), {QStringLiteral("--version")});
        QCOMPARE(version.exitCode, 0);
        QVERIFY(version.out.contains(STARFORGE_VERSION));
    }

    void helpListsEveryJobCommand()
    {
        const Run help = cli({QStringLiteral("--help")});
        QCOMPARE(help.exitCode, 0);
        for (const char *command : {"manifest SPEC", "submit SPEC [--wait]", "jobs [--follow]", "status JOB", "events JOB", "diagnose JOB",
                                    "logs JOB [-f] [--pod P] [--container C] [--tail N]", "capacity", "stop JOB", "delete JOB", "history"}) {
            QVERIFY2(help.out.contains(QByteArray("\n  " + QByteArray(command))), command);
        }
        QVERIFY(help.out.contains("[--profile NAME | --connection-file FILE]"));
        QVERIFY(help.out.contains("[--json]"));
    }

    void sessionOptionsAreChecked()
    {
        const QString spec = stuckSpec();
        // Both: refused before anything is read, whatever the command.
        for (const QStringList &command : {QStringList{QStringLiteral("jobs")}, QStringList{QStringLiteral("submit"), spec}}) {
            const Run both = cli(command + QStringList{QStringLiteral("--profile"), QStringLiteral("lab"), QStringLiteral("--connection-file"),
                                                       m_dir.filePath(QStringLiteral("nowhere.json"))});
            QCOMPARE(both.exitCode, 1);
            QVERIFY2(both.err.contains("give --profile or --connection-file, not both"), both.err.constData());
        }
        // A connection file that is not there (or given as ""): say to start the sandbox.
        for (const QString &file : {m_dir.filePath(QStringLiteral("nowhere.json")), QString()}) {
            const Run missing = cli({QStringLiteral("jobs"), QStringLiteral("--connection-file"), file});
            QCOMPARE(missing.exitCode, 1);
            QVERIFY2(missing.err.contains(QByteArray("there is no connection file '" + file.toUtf8() + "': start the sandbox first")), missing.err.constData());
        }
        // Garbage, and JSON that is not a connection file.
        const QString garbage = m_dir.filePath(QStringLiteral("garbage.json"));
        QVERIFY(Testing::writeFile(garbage, "\x89PNG not a connection file"));
        Run bad = cli({QStringLiteral("status"), QStringLiteral("bcdfgh"), QStringLiteral("--connection-file"), garbage});
        QCOMPARE(bad.exitCode, 1);
        QVERIFY2(bad.err.contains("is not a starforge-sandbox connection file"), bad.err.constData());
        QVERIFY(Testing::writeFile(garbage, R"({"forge": {"FORGE_K8S_API_SERVER": "not a url", "FORGE_K8S_TOKEN": "t"}})"));
        bad = cli({QStringLiteral("jobs"), QStringLiteral("--connection-file"), garbage, QStringLiteral("--json")});
        QCOMPARE(bad.exitCode, 1);
        QVERIFY2(QJsonDocument::fromJson(bad.err).object().value(QStringLiteral("error")).toString().contains(QStringLiteral("FORGE_K8S_API_SERVER")), bad.err.constData());
        QVERIFY(bad.out.isEmpty());
    }

    void noActiveProfile()
    {
        QProcessEnvironment fresh;
        fresh.insert(QStringLiteral("STARFORGE_CONFIG_FILE"), m_dir.filePath(QStringLiteral("fresh/profiles.ini")));
        const Run none = cli({QStringLiteral("jobs")}, {}, fresh);
        QCOMPARE(none.exitCode, 1);
        QVERIFY2(none.err.contains("no connection profile is active: pass --profile NAME or --connection-file FILE"), none.err.constData());
        const Run ghost = cli({QStringLiteral("status"), QStringLiteral("bcdfgh"), QStringLiteral("--profile"), QStringLiteral("ghost")}, {}, fresh);
        QCOMPARE(ghost.exitCode, 1);
        QVERIFY2(ghost.err.contains("there is no profile 'ghost'"), ghost.err.constData());
    }

    void submitChecksTheJobSpec()
    {
        QVERIFY(!sandbox().isEmpty());
        const Run missing = job({QStringLiteral("submit"), m_dir.filePath(QStringLiteral("no-such-spec.json"))});
        QCOMPARE(missing.exitCode, 1);
        QVERIFY2(missing.err.contains("Cannot read the JobSpec") && missing.err.contains("no-such-spec.json"), missing.err.constData());

        const QString invalid = m_dir.filePath(QStringLiteral("invalid.json"));
        QVERIFY(Testing::writeFile(invalid, R"({"version": 1, "name": "Bad_Name", "code": ".",
            "recipe": {"algorithm": "grpo", "config": "configs/grpo.yaml"},
            "pools": [{"name": "train", "series": "h100", "nodes": 0, "gpusPerNode": 1}]})"));
        for (const QString &command : {QStringLiteral("submit"), QStringLiteral("manifest")}) {
            const Run rejected = job({command, invalid});
            QCOMPARE(rejected.exitCode, 1);
            // Each problem names its field.
            QVERIFY2(rejected.err.contains("name: \"Bad_Name\""), rejected.err.constData());
            QVERIFY2(rejected.err.contains("pools[0].nodes: must be between 1"), rejected.err.constData());
        }
        QVERIFY(Testing::writeFile(invalid, "{\"version\": 1,"));
        const Run garbled = job({QStringLiteral("submit"), invalid, QStringLiteral("--wait")});
        QCOMPARE(garbled.exitCode, 1);
        QVERIFY2(garbled.err.contains("not valid JSON"), garbled.err.constData());
        // Nothing reached the cluster.
        QCOMPARE(job({QStringLiteral("jobs"), QStringLiteral("--json")}).out, QByteArray("[]\n"));
    }

    void jobsOnAnEmptyNamespace()
    {
        QVERIFY(!sandbox().isEmpty());
        const Run jobs = job({QStringLiteral("jobs"), QStringLiteral("--json")});
        QCOMPARE(jobs.exitCode, 0);
        QCOMPARE(jobs.out, QByteArray("[]\n"));
        const Run text = job({QStringLiteral("jobs")});
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.contains("no jobs on the cluster in namespace starforge"), text.out.constData());
        QVERIFY2(!text.err.contains("TLS verification is off"), text.err.constData());

        // With TLS verification off the command still works, and says on stderr what that costs.
        QProcessEnvironment insecure;
        insecure.insert(QStringLiteral("FORGE_K8S_INSECURE_SKIP_TLS_VERIFY"), QStringLiteral("true"));
        const Run unverified = run(QStringLiteral("starforge-cli"), {QStringLiteral("jobs"), QStringLiteral("--connection-file"), sandbox()}, {}, insecure, 15000);
        QCOMPARE(unverified.exitCode, 0);
        QVERIFY2(unverified.err.contains("warning: TLS verification is off (FORGE_K8S_INSECURE_SKIP_TLS_VERIFY)"), unverified.err.constData());
        QVERIFY2(unverified.out.contains("no jobs on the cluster"), unverified.out.constData());
    }

    void checkTestsTheConnectionPartByPart()
    {
        QVERIFY(!sandbox().isEmpty());
        const Run text = job({QStringLiteral("check")});
        QVERIFY2(text.exitCode == 0, text.err.constData());
        for (const char *line : {"API server", "Signed in as", "KubeRay operator", "Live logs", "Object storage bucket"}) {
            QVERIFY2(text.out.contains(line), line);
        }
        QVERIFY2(text.out.contains("10 of 10 checks passed"), text.out.constData());

        // A bucket that is not there: that part fails, the rest passes, and the exit code says so.
        QProcessEnvironment wrongBucket;
        wrongBucket.insert(QStringLiteral("FORGE_S3_BUCKET"), QStringLiteral("no-such-bucket"));
        const Run json = run(QStringLiteral("starforge-cli"), {QStringLiteral("check"), QStringLiteral("--json"), QStringLiteral("--connection-file"), sandbox()}, {},
                             wrongBucket, 30000);
        QCOMPARE(json.exitCode, 1);
        const QJsonObject report = QJsonDocument::fromJson(json.out).object();
        QCOMPARE(report.value(QStringLiteral("passed")).toBool(true), false);
        QHash<QString, QString> results;
        for (const QJsonValue &c : report.value(QStringLiteral("checks")).toArray()) {
            results.insert(c[QStringLiteral("id")].toString(), c[QStringLiteral("result")].toString());
        }
        QCOMPARE(results.value(QStringLiteral("bucket")), QStringLiteral("failed"));
        QCOMPARE(results.value(QStringLiteral("server")), QStringLiteral("ok"));
        QCOMPARE(results.value(QStringLiteral("feature:jobs")), QStringLiteral("ok"));
    }

    void capacityPerSeries()
    {
        QVERIFY(!sandbox().isEmpty());
        const Run capacity = job({QStringLiteral("capacity"), QStringLiteral("--json")});
        QVERIFY2(capacity.exitCode == 0, capacity.err.constData());
        QHash<QString, QJsonObject> series;
        for (const QJsonValue &v : QJsonDocument::fromJson(capacity.out).array()) series.insert(v[QStringLiteral("series")].toString(), v.toObject());
        auto expect = [](const QJsonObject &s, int nodes, int gpus, int largestFree) {
            return s.value(QStringLiteral("nodes")).toInt() == nodes && s.value(QStringLiteral("gpus")).toInt() == gpus
                && s.value(QStringLiteral("used")).toInt() == 0 && s.value(QStringLiteral("free")).toInt() == gpus
                && s.value(QStringLiteral("blocked")).toInt() == 0 && s.value(QStringLiteral("blockedNodes")).toInt() == 0
                && s.value(QStringLiteral("largestFreeNode")).toInt() == largestFree;
        };
        QVERIFY2(expect(series.value(QStringLiteral("h100")), 2, 16, 8), capacity.out.constData());
        QVERIFY2(expect(series.value(QStringLiteral("a100")), 1, 4, 4), capacity.out.constData());
        QVERIFY2(!series.contains(QStringLiteral("b200")), capacity.out.constData());
    }

    void unknownJob()
    {
        QVERIFY(!sandbox().isEmpty());
        // An id-shaped JOB (looked up by label) and a RayJob name (read by name).
        for (const QString &name : {QStringLiteral("bcdfgh"), QStringLiteral("no-such-job")}) {
            for (const QString &command : {QStringLiteral("status"), QStringLiteral("events"), QStringLiteral("logs"), QStringLiteral("diagnose"),
                                           QStringLiteral("stop"), QStringLiteral("delete")}) {
                const Run r = job({command, name});
                QVERIFY2(r.exitCode == 1, qPrintable(command + u' ' + name + QStringLiteral(": ") + QString::fromUtf8(r.err)));
                QVERIFY2(r.err.toLower().contains(QByteArray("job " + name.toUtf8() + " is neither on the cluster nor in the job history")),
                         qPrintable(command + u' ' + name + QStringLiteral(": ") + QString::fromUtf8(r.err)));
                QVERIFY(r.out.isEmpty());
            }
        }
        const Run json = job({QStringLiteral("status"), QStringLiteral("bcdfgh"), QStringLiteral("--json")});
        QCOMPARE(json.exitCode, 1);
        QVERIFY(QJsonDocument::fromJson(json.err).object().value(QStringLiteral("error")).toString().contains(QStringLiteral("neither on the cluster")));
        // Not a name at all: "" would read the whole RayJob collection, "../x" another path.
        for (const QString &name : {QString(), QStringLiteral("../nodes"), QStringLiteral("Job_1")}) {
            const Run r = job({QStringLiteral("delete"), name});
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains("is not a job id or a RayJob name"), r.err.constData());
        }
    }

    void notKubernetes()
    {
        // FORGE_K8S_API_SERVER pointing at a web page that answers 200 to everything (a
        // dashboard, a proxy's login page): an error naming the setting, not "no jobs".
        QTcpServer web;
        QVERIFY(web.listen(QHostAddress::LocalHost));
        connect(&web, &QTcpServer::newConnection, &web, [&web] {
            while (QTcpSocket *socket = web.nextPendingConnection()) {
                connect(socket, &QTcpSocket::readyRead, socket, [socket] {
                    if (!socket->readAll().contains("\r\n\r\n")) return;
                    socket->write("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 20\r\n\r\n<html>sign in</html>");
                    socket->disconnectFromHost();
                });
            }
        });
        const QString file = m_dir.filePath(QStringLiteral("web.json"));
        const QJsonObject forge{{QStringLiteral("FORGE_K8S_API_SERVER"), QStringLiteral("http://127.0.0.1:%1").arg(web.serverPort())},
                                {QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("t")}};
        QVERIFY(Testing::writeFile(file, QJsonDocument(QJsonObject{{QStringLiteral("forge"), forge}}).toJson()));
        for (const QStringList &command : {QStringList{QStringLiteral("jobs")}, QStringList{QStringLiteral("capacity")},
                                           QStringList{QStringLiteral("status"), QStringLiteral("some-job")}, QStringList{QStringLiteral("logs"), QStringLiteral("some-job")}}) {
            const Run r = run(QStringLiteral("starforge-cli"), command + QStringList{QStringLiteral("--connection-file"), file}, {}, {}, 15000);
            QVERIFY2(r.exitCode == 1, qPrintable(command.join(u' ') + QStringLiteral(": ") + QString::fromUtf8(r.out + r.err)));
            QVERIFY2(r.err.contains("Is FORGE_K8S_API_SERVER the cluster's API server?"), qPrintable(command.join(u' ') + QStringLiteral(": ") + QString::fromUtf8(r.err)));
            QVERIFY(r.out.isEmpty());
        }
    }

    void logsTailMustBeANumber()
    {
        QVERIFY(!sandbox().isEmpty());
        for (const QString &tail : {QStringLiteral("abc"), QStringLiteral("-3"), QStringLiteral("10x")}) {
            // Checked before the job is looked up: the answer is about --tail, not the job.
            const Run r = job({QStringLiteral("logs"), QStringLiteral("bcdfgh"), QStringLiteral("--tail"), tail});
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains(QByteArray("--tail takes a number of lines, e.g. --tail 100, not '" + tail.toUtf8() + "'")), r.err.constData());
        }
    }

    void someoneElsesRayJobIsLeftAlone()
    {
        QVERIFY(!sandbox().isEmpty());
        // A RayJob without Starforge's labels, as another team's tooling would make it.
        const QString path = QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs");
        const QJsonObject head{{QStringLiteral("rayStartParams"), QJsonObject{}},
                               {QStringLiteral("template"), QJsonObject{{QStringLiteral("spec"), QJsonObject{{QStringLiteral("containers"), QJsonArray{QJsonObject{
                                   {QStringLiteral("name"), QStringLiteral("ray-head")}, {QStringLiteral("image"), QStringLiteral("nvcr.io/nvidia/nemo-rl:v0.7.0")}}}}}}}}};
        const Kube::ApiResult created = kube("POST", path, QJsonObject{
            {QStringLiteral("apiVersion"), QStringLiteral("ray.io/v1")}, {QStringLiteral("kind"), QStringLiteral("RayJob")},
            {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), QStringLiteral("someone-elses")}}},
            {QStringLiteral("spec"), QJsonObject{{QStringLiteral("entrypoint"), QStringLiteral("python -c 'print(1)'")},
                                                 {QStringLiteral("rayClusterSpec"), QJsonObject{{QStringLiteral("headGroupSpec"), head}}}}}});
        QVERIFY2(created.ok(), created.body.constData());
        for (const QString &command : {QStringLiteral("stop"), QStringLiteral("delete")}) {
            const Run r = job({command, QStringLiteral("someone-elses")});
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains("RayJob someone-elses was not made by Starforge"), r.err.constData());
        }
        QVERIFY2(kube("GET", path + QStringLiteral("/someone-elses")).ok(), "starforge-cli removed someone else's RayJob");
        // Not a Starforge job: `jobs` does not list it.
        QCOMPARE(job({QStringLiteral("jobs"), QStringLiteral("--json")}).out, QByteArray("[]\n"));
        QVERIFY(kube("DELETE", path + QStringLiteral("/someone-elses")).ok());
    }

    // logs --grep on a running job's live log (spooled, indexed and searched): the lines grep
    // would print, any case, an expression, a count; grep's exit code 1 when nothing matches.
    void logsGrepOnALiveJob()
    {
        QVERIFY(!sandbox().isEmpty());
        const QString gate = m_dir.filePath(QStringLiteral("grep-gate"));
        const QString driver = m_dir.filePath(QStringLiteral("grep-driver.py"));
        QVERIFY(Testing::writeFile(driver, QStringLiteral("import os, time\n"
                                                          "for i in range(1, 4): print('alpha %d' % i, flush=True)\n"
                                                          "print('BETA one', flush=True)\nprint('beta two', flush=True)\nprint('ready', flush=True)\n"
                                                          "while not os.path.exists(r'%1'): time.sleep(0.1)\n").arg(gate).toUtf8()));
        const QString path = QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs");
        const QJsonObject head{{QStringLiteral("rayStartParams"), QJsonObject{}},
                               {QStringLiteral("template"), QJsonObject{{QStringLiteral("spec"), QJsonObject{{QStringLiteral("containers"), QJsonArray{QJsonObject{
                                   {QStringLiteral("name"), QStringLiteral("ray-head")}, {QStringLiteral("image"), QStringLiteral("nvcr.io/nvidia/nemo-rl:v0.7.0")}}}}}}}}};
        const Kube::ApiResult created = kube("POST", path, QJsonObject{
            {QStringLiteral("apiVersion"), QStringLiteral("ray.io/v1")}, {QStringLiteral("kind"), QStringLiteral("RayJob")},
            {QStringLiteral("metadata"), QJsonObject{
                {QStringLiteral("name"), QStringLiteral("grep-gzbq42")},
                {QStringLiteral("labels"), QJsonObject{{QStringLiteral("app.kubernetes.io/managed-by"), QStringLiteral("starforge")},
                                                       {QStringLiteral("starforge.dev/job-id"), QStringLiteral("gzbq42")},
                                                       {QStringLiteral("starforge.dev/job-name"), QStringLiteral("grep")}}}}},
            {QStringLiteral("spec"), QJsonObject{{QStringLiteral("entrypoint"), QString(QStringLiteral("python3 ") + driver)},
                                                 {QStringLiteral("rayClusterSpec"), QJsonObject{{QStringLiteral("headGroupSpec"), head}}}}}});
        QVERIFY2(created.ok(), created.body.constData());
        Run all;
        QVERIFY2(QTest::qWaitFor([&] { all = job({QStringLiteral("logs"), QStringLiteral("gzbq42")}); return all.out.contains("ready"); }, 60000),
                 all.err.constData());
        const Run alpha = job({QStringLiteral("logs"), QStringLiteral("gzbq42"), QStringLiteral("--grep"), QStringLiteral("alpha")});
        QCOMPARE(alpha.exitCode, 0);
        QCOMPARE(alpha.out, QByteArray("alpha 1\nalpha 2\nalpha 3\n"));
        const Run beta = job({QStringLiteral("logs"), QStringLiteral("gzbq42"), QStringLiteral("--grep"), QStringLiteral("beta"), QStringLiteral("-i"), QStringLiteral("--count")});
        QCOMPARE(beta.out, QByteArray("2\n"));
        const Run expression = job({QStringLiteral("logs"), QStringLiteral("gzbq42"), QStringLiteral("--grep"), QStringLiteral("^(alpha [13]|beta)"), QStringLiteral("-E")});
        QCOMPARE(expression.out, QByteArray("alpha 1\nalpha 3\nbeta two\n"));
        const Run none = job({QStringLiteral("logs"), QStringLiteral("gzbq42"), QStringLiteral("--grep"), QStringLiteral("gamma")});
        QCOMPARE(none.exitCode, 1);
        QVERIFY(none.out.isEmpty());

        // The same running job's events on lanes (events --timeline): the phase strip reaches
        // Running, one row per object, then the events listed.
        const Run timeline = job({QStringLiteral("events"), QStringLiteral("gzbq42"), QStringLiteral("--timeline")});
        QCOMPARE(timeline.exitCode, 0);
        const QStringList rows = QString::fromUtf8(timeline.out).split(u'\n');
        QVERIFY2(rows.size() > 8 && rows.at(1).startsWith(QStringLiteral("phase")) && rows.at(1).contains(u'R'), timeline.out.constData());
        QVERIFY2(rows.at(2).startsWith(QStringLiteral("RayJob grep-gzbq42 ")), timeline.out.constData());
        QVERIFY2(rows.at(3).startsWith(QStringLiteral("RayCluster grep-gzbq42-")), timeline.out.constData());
        const auto rowStarting = [&rows](const QString &title) {
            return std::any_of(rows.cbegin(), rows.cend(), [&title](const QString &row) { return row == title || row.startsWith(title + u' '); });
        };
        QVERIFY2(rowStarting(QStringLiteral("head")) && rowStarting(QStringLiteral("submitter")), timeline.out.constData());
        QVERIFY2(timeline.out.contains("-head-"), timeline.out.constData());
        QVERIFY2(timeline.out.contains("\nevents, time since ") && timeline.out.contains("CreatedRayCluster"), timeline.out.constData());
        // With the app's journal for this cluster and namespace on this machine (the file
        // docs/events.md names: SHA-256 of the server and namespace), what it kept is drawn too.
        {
            const auto connection = Config::SandboxConnection::read(sandbox());
            QVERIFY(connection);
            const QString server = QUrl(connection->settings.value(QStringLiteral("FORGE_K8S_API_SERVER"))).toString();
            const QString key = QString::fromLatin1(QCryptographicHash::hash((server + QStringLiteral("\nstarforge")).toUtf8(), QCryptographicHash::Sha256).toHex().left(16));
            const QString data = m_dir.filePath(QStringLiteral("data"));
            auto opened = Events::EventJournal::open(data + QStringLiteral("/starforge/journal-%1.sqlite").arg(key));
            QVERIFY2(opened, opened ? "" : qPrintable(opened.error().message));
            std::unique_ptr<Events::EventJournal> journal = std::move(opened).value();
            const QString when = QDateTime::currentDateTimeUtc().addSecs(-30).toString(Qt::ISODate);
            journal->recordEvent(QJsonObject{
                {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), QStringLiteral("grep-gzbq42.dropped")}, {QStringLiteral("namespace"), QStringLiteral("starforge")},
                                                        {QStringLiteral("uid"), QStringLiteral("dropped-uid")}}},
                {QStringLiteral("involvedObject"), QJsonObject{{QStringLiteral("kind"), QStringLiteral("RayJob")}, {QStringLiteral("name"), QStringLiteral("grep-gzbq42")}}},
                {QStringLiteral("type"), QStringLiteral("Warning")}, {QStringLiteral("reason"), QStringLiteral("JournaledOnly")},
                {QStringLiteral("message"), QStringLiteral("kept by the app after Kubernetes dropped it")},
                {QStringLiteral("firstTimestamp"), when}, {QStringLiteral("lastTimestamp"), when}, {QStringLiteral("count"), 1}});
            journal->flush();
            journal.reset();
            QProcessEnvironment withData;
            withData.insert(QStringLiteral("XDG_DATA_HOME"), data);
            const Run kept = run(QStringLiteral("starforge-cli"), {QStringLiteral("events"), QStringLiteral("gzbq42"), QStringLiteral("--timeline"),
                                                                   QStringLiteral("--connection-file"), sandbox()}, {}, withData, 15000);
            QCOMPARE(kept.exitCode, 0);
            QVERIFY2(kept.out.contains("Warning JournaledOnly: kept by the app"), QByteArray(kept.out + kept.err).constData());
            QVERIFY(!timeline.out.contains("JournaledOnly"));
        }
        const Run both = job({QStringLiteral("events"), QStringLiteral("gzbq42"), QStringLiteral("--timeline"), QStringLiteral("--json")});
        QCOMPARE(both.exitCode, 1);
        QVERIFY2(both.err.contains("--json and --timeline"), both.err.constData());

        QFile(gate).open(QIODevice::WriteOnly);
        QVERIFY(kube("DELETE", path + QStringLiteral("/grep-gzbq42")).ok());
    }

    // A colleague's job in the shared namespace (made by their app: Starforge's labels, their
    // owner annotation): listed with its owner, and neither stopped nor deleted from here.
    void anotherResearchersJobIsReadOnly()
    {
        QVERIFY(!sandbox().isEmpty());
        const QString path = QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs");
        const QJsonObject head{{QStringLiteral("rayStartParams"), QJsonObject{}},
                               {QStringLiteral("template"), QJsonObject{{QStringLiteral("spec"), QJsonObject{
                                   {QStringLiteral("nodeSelector"), QJsonObject{{QStringLiteral("starforge/gpu-series"), QStringLiteral("b200")}}},
                                   {QStringLiteral("containers"), QJsonArray{QJsonObject{
                                       {QStringLiteral("name"), QStringLiteral("ray-head")}, {QStringLiteral("image"), QStringLiteral("nvcr.io/nvidia/nemo-rl:v0.7.0")}}}}}}}}};
        const Kube::ApiResult created = kube("POST", path, QJsonObject{
            {QStringLiteral("apiVersion"), QStringLiteral("ray.io/v1")}, {QStringLiteral("kind"), QStringLiteral("RayJob")},
            {QStringLiteral("metadata"), QJsonObject{
                {QStringLiteral("name"), QStringLiteral("bobs-grpo-wxkz24")},
                {QStringLiteral("labels"), QJsonObject{{QStringLiteral("app.kubernetes.io/managed-by"), QStringLiteral("starforge")},
                                                       {QStringLiteral("starforge.dev/job-id"), QStringLiteral("wxkz24")},
                                                       {QStringLiteral("starforge.dev/job-name"), QStringLiteral("bobs-grpo")}}},
                {QStringLiteral("annotations"), QJsonObject{{QStringLiteral("starforge.dev/owner"), QStringLiteral("bob@lab.example")}}}}},
            {QStringLiteral("spec"), QJsonObject{{QStringLiteral("entrypoint"), QStringLiteral("python -c 'print(1)'")},
                                                 {QStringLiteral("rayClusterSpec"), QJsonObject{{QStringLiteral("headGroupSpec"), head}}}}}});
        QVERIFY2(created.ok(), created.body.constData());
        for (const QString &command : {QStringLiteral("stop"), QStringLiteral("delete")}) {
            const Run r = job({command, QStringLiteral("wxkz24")});
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains(QByteArray("Job wxkz24 belongs to bob@lab.example; Starforge does not " + command.toUtf8() + " other people's jobs")), r.err.constData());
        }
        QVERIFY2(kube("GET", path + QStringLiteral("/bobs-grpo-wxkz24")).ok(), "starforge-cli removed a colleague's job");
        const Run listed = job({QStringLiteral("jobs")});
        QCOMPARE(listed.exitCode, 0);
        QVERIFY2(listed.out.contains("OWNER") && listed.out.contains("bob@lab.example"), listed.out.constData());
        const QJsonArray json = QJsonDocument::fromJson(job({QStringLiteral("jobs"), QStringLiteral("--json")}).out).array();
        QCOMPARE(json.size(), 1);
        QCOMPARE(json.at(0)[QStringLiteral("owner")].toString(), QStringLiteral("bob@lab.example"));
        QVERIFY(kube("DELETE", path + QStringLiteral("/bobs-grpo-wxkz24")).ok());
    }

    // The playground end to end: launch and wait for vLLM, list as JSON, a chat streamed to
    // stdout with its timings on stderr and kept in a session file the next chat continues
    // (the prompt from stdin), stop; and what is refused, said plainly.
    void playgroundLaunchListChatStop()
    {
        QVERIFY(!sandbox().isEmpty());
        const Run launched = job({QStringLiteral("playground"), QStringLiteral("launch"), QStringLiteral("--model"), QStringLiteral("Qwen/Qwen3-0.6B"),
                                  QStringLiteral("--series"), QStringLiteral("h100"), QStringLiteral("--ttl"), QStringLiteral("30m"),
                                  QStringLiteral("--wait"), QStringLiteral("--json")});
        QVERIFY2(launched.exitCode == 0, launched.err.constData());
        const QJsonObject pod = QJsonDocument::fromJson(launched.out).object();
        const QString name = pod.value(QStringLiteral("name")).toString();
        QVERIFY2(name.startsWith(QStringLiteral("play-")), launched.out.constData());
        QCOMPARE(pod.value(QStringLiteral("state")).toString(), QStringLiteral("ready"));
        QVERIFY(pod.value(QStringLiteral("secondsLeft")).toInt() > 25 * 60);

        const Run listed = job({QStringLiteral("playground"), QStringLiteral("list"), QStringLiteral("--json")});
        QVERIFY2(listed.exitCode == 0, listed.err.constData());
        const QJsonArray pods = QJsonDocument::fromJson(listed.out).array();
        QCOMPARE(pods.size(), 1);
        QCOMPARE(pods.first()[QStringLiteral("servedName")].toString(), QStringLiteral("Qwen3-0.6B"));
        QCOMPARE(pods.first()[QStringLiteral("series")].toString(), QStringLiteral("h100"));

        const QString session = m_dir.filePath(QStringLiteral("chat.json"));
        const Run first = job({QStringLiteral("playground"), QStringLiteral("chat"), name, QStringLiteral("How does GRPO work?"),
                               QStringLiteral("--max-tokens"), QStringLiteral("6"), QStringLiteral("--session"), session});
        QVERIFY2(first.exitCode == 0, first.err.constData());
        QVERIFY(!first.out.trimmed().isEmpty());
        QVERIFY2(first.err.contains("6 tokens, first after") && first.err.contains("tokens/s (length)"), first.err.constData());
        QStringList args{QStringLiteral("playground"), QStringLiteral("chat"), name, QStringLiteral("--max-tokens"), QStringLiteral("4"),
                         QStringLiteral("--session"), session, QStringLiteral("--connection-file"), sandbox()};
        const Run second = run(QStringLiteral("starforge-cli"), args, "And PPO?\n", {}, 15000);
        QVERIFY2(second.exitCode == 0, second.err.constData());
        QFile saved(session);
        QVERIFY(saved.open(QIODevice::ReadOnly));
        const QJsonObject conversation = QJsonDocument::fromJson(saved.readAll()).object();
        QCOMPARE(conversation.value(QStringLiteral("pod")).toString(), name);
        const QJsonArray messages = conversation.value(QStringLiteral("messages")).toArray();
        QCOMPARE(messages.size(), 4);
        QCOMPARE(messages.at(2)[QStringLiteral("content")].toString(), QStringLiteral("And PPO?"));
        QCOMPARE(messages.at(3)[QStringLiteral("content")].toString() + u'\n', QString::fromUtf8(second.out));

        const Run outside = job({QStringLiteral("playground"), QStringLiteral("launch"), QStringLiteral("--model"), QStringLiteral("/etc/passwd"),
                                 QStringLiteral("--series"), QStringLiteral("h100")});
        QCOMPARE(outside.exitCode, 1);
        QVERIFY2(outside.err.contains("model: /etc/passwd is not under the storage root"), outside.err.constData());
        const Run both = job({QStringLiteral("playground"), QStringLiteral("launch"), QStringLiteral("--series"), QStringLiteral("h100")});
        QCOMPARE(both.exitCode, 1);
        QVERIFY2(both.err.contains("give either --model or --job"), both.err.constData());
        const Run nobody = job({QStringLiteral("playground"), QStringLiteral("chat"), QStringLiteral("play-nothere"), QStringLiteral("hi")});
        QCOMPARE(nobody.exitCode, 1);
        QVERIFY2(nobody.err.contains("no playground pod of yours named play-nothere"), nobody.err.constData());

        const Run stopped = job({QStringLiteral("playground"), QStringLiteral("stop"), name});
        QVERIFY2(stopped.exitCode == 0, stopped.err.constData());
        const Run after = job({QStringLiteral("playground"), QStringLiteral("list"), QStringLiteral("--json")});
        QCOMPARE(QJsonDocument::fromJson(after.out).array().size(), 0);
    }

    // A job for a series the cluster does not have is refused before anything is built or
    // uploaded, naming the pool and the numbers; --force submits it (then it waits as Pending).
    void aJobThatCanNeverFitIsRefused()
    {
        QVERIFY(!sandbox().isEmpty());
        const QString s3 = QFileInfo(m_connection).path() + QStringLiteral("/connection.json.state/s3");
        const auto objects = [&s3] {
            int n = 0;
            for (QDirIterator it(s3, QDir::Files, QDirIterator::Subdirectories); it.hasNext(); it.next()) ++n;
            return n;
        };
        const int before = objects();
        const Run refused = job({QStringLiteral("submit"), stuckSpec()});
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(refused.err.contains("can never run on this cluster") && refused.err.contains("pool train:") && refused.err.contains("b200")
                     && refused.err.contains("--force"),
                 refused.err.constData());
        QVERIFY2(!refused.err.contains("building the Capsule"), refused.err.constData());
        QCOMPARE(objects(), before);
        const Run listed = job({QStringLiteral("jobs"), QStringLiteral("--json")});
        QVERIFY2(!listed.out.contains("grpo-stuck"), listed.out.constData());
        // 2 nodes of 8 h100 GPUs: 3 nodes of 8 never fit either, with the numbers.
        const QString big = m_dir.filePath(QStringLiteral("stuck/big.json"));
        Testing::writeFile(big, R"({"version": 1, "name": "grpo-big", "code": ".", "recipe": {"algorithm": "grpo", "config": "configs/grpo.yaml"},
                                   "pools": [{"name": "train", "series": "h100", "nodes": 3, "gpusPerNode": 8}]})");
        const Run tooBig = job({QStringLiteral("submit"), big});
        QCOMPARE(tooBig.exitCode, 1);
        QVERIFY2(tooBig.err.contains("pool train:") && tooBig.err.contains("h100"), tooBig.err.constData());
    }

    // What is valid but may not do what the spec seems to ask is said before the work: pools of
    // two series, and checkpoints that will not be chat-ready (this config has no _v2, so
    // NeMo-RL's DTensor v1 writes DCP files). On stderr, or with --json in the submission's line
    // and not on stderr. The b200 pool keeps both jobs Pending (--force), so nothing runs.
    void submitWarnings()
    {
        QVERIFY(!sandbox().isEmpty());
        const QString dir = m_dir.filePath(QStringLiteral("two-series"));
        QVERIFY(QDir().mkpath(dir + QStringLiteral("/configs")));
        QVERIFY(Testing::writeFile(dir + QStringLiteral("/configs/grpo.yaml"), "checkpointing:\n  enabled: true\ngrpo:\n  max_num_steps: 3\n"));
        const QString spec = dir + QStringLiteral("/jobspec.json");
        QVERIFY(Testing::writeFile(spec, R"({"version": 1, "name": "grpo-two-series", "code": ".",
                                             "recipe": {"algorithm": "grpo", "config": "configs/grpo.yaml"},
                                             "pools": [{"name": "train", "series": "b200", "nodes": 1, "gpusPerNode": 4},
                                                       {"name": "gen", "series": "h100", "nodes": 1, "gpusPerNode": 4}]})"));
        const QByteArray pools = "pools: training on b200 and generation on h100 is a request Ray may not honour";
        const QByteArray checkpoints = "checkpoints: this job uses NeMo-RL's DTensor v1 worker";
        const QByteArray convert = "examples/converters/convert_dcp_to_hf.py";

        const Run text = job({QStringLiteral("submit"), spec, QStringLiteral("--force")});
        QVERIFY2(text.exitCode == 0, text.err.constData());
        const qsizetype building = text.err.indexOf("building the Capsule");
        QVERIFY2(building > 0, text.err.constData());
        for (const QByteArray &warning : {pools, checkpoints}) {
            const qsizetype at = text.err.indexOf(QByteArray("warning: " + warning));
            QVERIFY2(at >= 0 && at < building, text.err.constData());
        }
        QVERIFY2(text.err.contains(convert), text.err.constData());
        const QString textId = QString::fromUtf8(text.out).section(u' ', 2, 2);
        QCOMPARE(textId.size(), 6);

        const Run json = job({QStringLiteral("submit"), spec, QStringLiteral("--force"), QStringLiteral("--json")});
        QVERIFY2(json.exitCode == 0, json.err.constData());
        QVERIFY2(!json.err.contains("warning:"), json.err.constData());
        const QJsonObject line = QJsonDocument::fromJson(json.out).object();
        const QJsonArray warnings = line.value(QStringLiteral("warnings")).toArray();
        QCOMPARE(warnings.size(), 2);
        QVERIFY2(warnings.at(0).toString().startsWith(QString::fromUtf8(pools)), json.out.constData());
        QVERIFY2(warnings.at(1).toString().startsWith(QString::fromUtf8(checkpoints)) && warnings.at(1).toString().contains(QString::fromUtf8(convert)),
                 json.out.constData());
        QCOMPARE(line.value(QStringLiteral("id")).toString().size(), 6);

        for (const QString &id : {textId, line.value(QStringLiteral("id")).toString()}) QCOMPARE(job({QStringLiteral("delete"), id}).exitCode, 0);
    }

    void stopDeleteAndWaitOnALiveJob()
    {
        QVERIFY(!sandbox().isEmpty());
        const QString spec = stuckSpec();
        // submit --wait ends when the job is deleted under it, instead of waiting forever.
        QProcess wait;
        wait.setProcessEnvironment(environment({}));
        wait.start(QStringLiteral(SF_BIN_DIR "/starforge-cli"), {QStringLiteral("submit"), spec, QStringLiteral("--wait"), QStringLiteral("--force"),
                                                                QStringLiteral("--json"), QStringLiteral("--connection-file"), sandbox()});
        QVERIFY(wait.waitForStarted(10000));
        QVERIFY(QTest::qWaitFor([&wait] { return wait.canReadLine() || wait.state() != QProcess::Running; }, 15000));
        const QString waited = jsonId(wait.readLine());
        QVERIFY2(!waited.isEmpty(), "submit --wait printed no submission");
        const Run deleted = job({QStringLiteral("delete"), waited, QStringLiteral("--json")});
        QVERIFY2(deleted.exitCode == 0, deleted.err.constData());
        QCOMPARE(QJsonDocument::fromJson(deleted.out).object().value(QStringLiteral("rayJobDeleted")).toBool(), true);
        QVERIFY2(QTest::qWaitFor([&wait] { return wait.state() == QProcess::NotRunning; }, 15000), "submit --wait kept waiting for a deleted job");
        const QByteArray waitErr = wait.readAllStandardError();
        QCOMPARE(wait.exitCode(), 3);
        QVERIFY2(waitErr.contains("was deleted before it ended"), waitErr.constData());

        // stop archives a live job; a second stop says it has ended; delete removes the archive.
        const Run submitted = job({QStringLiteral("submit"), spec, QStringLiteral("--force"), QStringLiteral("--json")});
        QVERIFY2(submitted.exitCode == 0, submitted.err.constData());
        const QString id = jsonId(submitted.out);
        const Run stopped = job({QStringLiteral("stop"), id});
        QVERIFY2(stopped.exitCode == 0, stopped.err.constData());
        QVERIFY2(stopped.out.contains("Archived (Stopped)"), stopped.out.constData());
        const Run again = job({QStringLiteral("stop"), id});
        QCOMPARE(again.exitCode, 1);
        QVERIFY2(again.err.contains(QByteArray("job " + id.toUtf8() + " has already ended: it is Archived (Stopped)")), again.err.constData());
        const Run tail = job({QStringLiteral("logs"), id, QStringLiteral("--tail"), QStringLiteral("0")});
        QVERIFY(tail.exitCode == 0 || tail.err.contains("archived without logs"));
        QVERIFY2(tail.out.isEmpty(), tail.out.constData());   // no lines: not even an empty one
        QCOMPARE(job({QStringLiteral("delete"), id}).exitCode, 0);
        const Run gone = job({QStringLiteral("status"), id});
        QCOMPARE(gone.exitCode, 1);
        QVERIFY2(gone.err.contains("neither on the cluster nor in the job history"), gone.err.constData());
    }

    // submit without --wait says who archives the logs; `jobs --follow` is one: a job that ends
    // while it runs is archived, with one line for it, and Ctrl-C (SIGTERM) ends it with 0.
    void followArchivesJobsThatEnd()
    {
        QVERIFY(!sandbox().isEmpty());
        QProcess follow;
        follow.setProcessEnvironment(environment({}));
        follow.start(QStringLiteral(SF_BIN_DIR "/starforge-cli"), {QStringLiteral("jobs"), QStringLiteral("--follow"), QStringLiteral("--connection-file"), sandbox()});
        QVERIFY(follow.waitForStarted(10000));
        QByteArray followErr;
        QByteArray followOut;
        const auto drain = [&] {
            followErr += follow.readAllStandardError();
            followOut += follow.readAllStandardOutput();
        };
        QVERIFY2(QTest::qWaitFor([&] { drain(); return followErr.contains("following the jobs") || follow.state() != QProcess::Running; }, 20000),
                 followErr.constData());
        QVERIFY2(follow.state() == QProcess::Running, followErr.constData());

        const Run submitted = job({QStringLiteral("submit"), quickSpec()});
        QVERIFY2(submitted.exitCode == 0, submitted.err.constData());
        QVERIFY2(submitted.err.contains("while the Starforge app or `starforge-cli jobs --follow` runs") && submitted.err.contains("3 days after the job ends"),
                 submitted.err.constData());
        const QString id = QString::fromUtf8(submitted.out).section(u' ', 2, 2);
        QCOMPARE(id.size(), 6);

        const QByteArray line = "archived " + id.toUtf8() + " grpo-quick-" + id.toUtf8() + " Archived (Succeeded)";
        const bool archived = QTest::qWaitFor([&] { drain(); return followOut.contains(line) || follow.state() != QProcess::Running; }, 90000);
        QVERIFY2(archived && followOut.contains(line), QByteArray(followOut + "\n--- stderr:\n" + followErr).constData());
        const Run history = job({QStringLiteral("history"), QStringLiteral("--json")});
        QVERIFY2(history.out.contains(QByteArray("\"id\": \"" + id.toUtf8() + "\"")) || history.out.contains(QByteArray("\"id\":\"" + id.toUtf8() + "\"")),
                 history.out.constData());
        // The record itself keeps the runner's final list of servable checkpoints, read from the
        // end of the driver's log when it was archived.
        QJsonObject archivedRecord;
        for (const QJsonValue &r : QJsonDocument::fromJson(history.out).array()) {
            if (r[QStringLiteral("id")].toString() == id) archivedRecord = r.toObject();
        }
        const QJsonArray recorded = archivedRecord.value(QStringLiteral("servableCheckpoints")).toArray();
        QVERIFY2(recorded.size() == 1, history.out.constData());
        QCOMPARE(recorded.first()[QStringLiteral("step")].toInt(), 3);
        QCOMPARE(recorded.first()[QStringLiteral("backend")].toString(), QStringLiteral("dtensor_v1"));
        QCOMPARE(recorded.first()[QStringLiteral("converter")].toString(), QStringLiteral("examples/converters/convert_dcp_to_hf.py"));
        // The archived driver log's progress: runner.pex saw the checkpoint on the storage and,
        // once the training process had exited, reported what it holds. This bare config has no
        // dtensor_cfg._v2, so NeMo-RL's DTensor v1 wrote DCP files: no HF tree, the converter named.
        const Run status = job({QStringLiteral("status"), id, QStringLiteral("--json")});
        QVERIFY2(status.exitCode == 0, status.err.constData());
        const QJsonObject progress = QJsonDocument::fromJson(status.out).object().value(QStringLiteral("progress")).toObject();
        QCOMPARE(progress.value(QStringLiteral("globalStep")).toInt(), 3);
        QCOMPARE(progress.value(QStringLiteral("lastSavedCheckpoint")).toInt(), 3);
        QVERIFY2(progress.value(QStringLiteral("logDirectory")).toString().endsWith(QStringLiteral("/jobs/%1/logs/exp_001").arg(id)), status.out.constData());
        const QJsonArray servable = progress.value(QStringLiteral("servableCheckpoints")).toArray();
        QCOMPARE(servable.size(), 1);
        const QJsonObject step3 = servable.first().toObject();
        QCOMPARE(step3.value(QStringLiteral("step")).toInt(), 3);
        QCOMPARE(step3.value(QStringLiteral("backend")).toString(), QStringLiteral("dtensor_v1"));
        QCOMPARE(step3.value(QStringLiteral("consolidated")).toBool(true), false);
        QCOMPARE(step3.value(QStringLiteral("converter")).toString(), QStringLiteral("examples/converters/convert_dcp_to_hf.py"));
        QVERIFY2(step3.value(QStringLiteral("path")).toString().endsWith(QStringLiteral("/jobs/%1/checkpoints/step_3/policy/weights").arg(id)), status.out.constData());
        QVERIFY2(step3.value(QStringLiteral("tokenizer")).toString().endsWith(QStringLiteral("/jobs/%1/checkpoints/step_3/policy/tokenizer").arg(id)),
                 status.out.constData());
        // So the playground refuses to serve it, naming the converter, before any pod is made;
        // a step the job never saved is refused as such.
        const Run launch = job({QStringLiteral("playground"), QStringLiteral("launch"), QStringLiteral("--job"), id});
        QCOMPARE(launch.exitCode, 1);
        QVERIFY2(launch.err.contains(QByteArray("job " + id.toUtf8() + " has no checkpoint vLLM can serve: its dtensor_v1 checkpoints need "
                                                "NeMo-RL's examples/converters/convert_dcp_to_hf.py first")),
                 launch.err.constData());
        const Run noStep = job({QStringLiteral("playground"), QStringLiteral("launch"), QStringLiteral("--job"), id, QStringLiteral("--step"), QStringLiteral("2")});
        QCOMPARE(noStep.exitCode, 1);
        QVERIFY2(noStep.err.contains(QByteArray("job " + id.toUtf8() + " has no checkpoint at step 2 vLLM can serve")) && !noStep.err.contains("convert_dcp"),
                 noStep.err.constData());
        const Run pods = job({QStringLiteral("playground"), QStringLiteral("list"), QStringLiteral("--json")});
        QVERIFY2(pods.exitCode == 0, pods.err.constData());
        QCOMPARE(QJsonDocument::fromJson(pods.out).array().size(), 0);

        follow.terminate();
        QVERIFY(follow.waitForFinished(15000));
        drain();
        QCOMPARE(follow.exitStatus(), QProcess::NormalExit);
        QVERIFY2(follow.exitCode() == 0, followErr.constData());
        QCOMPARE(job({QStringLiteral("delete"), id}).exitCode, 0);
    }

    // Last, as it kills the sandbox (a later test would start another).
    void killedSandbox()
    {
        // A fresh sandbox with nothing running on it, so the kill below is the only thing that
        // ends it (tst_container_isolation shows a killed sandbox leaves no pod processes).
        cleanupTestCase();
        QVERIFY(!sandbox().isEmpty());
        const QString connection = m_connection;
        QProcess wait;
        wait.setProcessEnvironment(environment({}));
        wait.start(QStringLiteral(SF_BIN_DIR "/starforge-cli"),
                   {QStringLiteral("submit"), stuckSpec(), QStringLiteral("--wait"), QStringLiteral("--force"), QStringLiteral("--json"),
                    QStringLiteral("--connection-file"), connection});
        QVERIFY(wait.waitForStarted(10000));
        QVERIFY(QTest::qWaitFor([&wait] { return wait.canReadLine() || wait.state() != QProcess::Running; }, 15000));
        const QString id = jsonId(wait.readLine());
        QVERIFY2(!id.isEmpty(), "submit --wait printed no submission");
        // SIGKILL: the connection file stays behind, naming a server that is gone.
        m_sandbox->kill();
        QVERIFY(m_sandbox->waitForFinished(10000));
        QVERIFY(QFile::exists(connection));

        // The wait notices within seconds and says the cluster is lost, and why.
        QElapsedTimer clock;
        clock.start();
        const bool ended = QTest::qWaitFor([&wait] { return wait.state() == QProcess::NotRunning; }, 20000);
        if (!ended) wait.kill();
        QVERIFY2(ended, "submit --wait hung on a killed sandbox");
        QVERIFY(wait.exitCode() != 0);
        // Log lines may come first (the start-up clean-up's listing, cut off by the kill); the
        // error is the JSON document that starts on a line of its own.
        const QByteArray waitErr = wait.readAllStandardError();
        const qsizetype errorStart = waitErr.startsWith('{') ? 0 : waitErr.indexOf("\n{") + 1;
        const QString lost = QJsonDocument::fromJson(waitErr.mid(errorStart)).object().value(QStringLiteral("error")).toString();
        QVERIFY2(lost.contains(QStringLiteral("lost the cluster while waiting for job %1").arg(id)), waitErr.constData());
        QVERIFY2(lost.contains(QStringLiteral("is not running any more: start it again")), qPrintable(lost));
        qInfo("submit --wait gave up %lld ms after the kill", static_cast<long long>(clock.elapsed()));

        // Every command fails at once with the transport error and what to do.
        const QStringList command{QStringLiteral("--connection-file"), connection};
        for (const QStringList &args : {QStringList{QStringLiteral("jobs")}, QStringList{QStringLiteral("status"), id},
                                        QStringList{QStringLiteral("logs"), id, QStringLiteral("-f")}, QStringList{QStringLiteral("capacity")},
                                        QStringList{QStringLiteral("history")}, QStringList{QStringLiteral("stop"), id},
                                        QStringList{QStringLiteral("submit"), stuckSpec()}}) {
            const Run r = run(QStringLiteral("starforge-cli"), args + command, {}, {}, 15000);
            QVERIFY2(!r.timedOut, qPrintable(args.join(u' ') + QStringLiteral(" hung")));
            QVERIFY2(r.exitCode == 1, qPrintable(args.join(u' ') + QStringLiteral(": ") + QString::fromUtf8(r.err)));
            QVERIFY2(r.err.contains("refused the connection"), qPrintable(args.join(u' ') + QStringLiteral(": ") + QString::fromUtf8(r.err)));
            QVERIFY2(r.err.contains("is not running any more: start it again"), qPrintable(args.join(u' ') + QStringLiteral(": ") + QString::fromUtf8(r.err)));
            // The sandbox's token and keys are in the file, never in a message.
            const QJsonObject forge = QJsonDocument::fromJson(Testing::readAll(connection)).object().value(QStringLiteral("forge")).toObject();
            for (const char *secret : {"FORGE_K8S_TOKEN", "FORGE_S3_SECRET_KEY"}) {
                QVERIFY(!r.err.contains(forge.value(QLatin1String(secret)).toString().toUtf8()));
            }
        }
        m_sandbox.reset();
    }
};

QTEST_GUILESS_MAIN(TestCliProcess)
#include "tst_cli_process.moc"
