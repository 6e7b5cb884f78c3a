// starforge-cli's commands in process, over an in-memory keychain: output, --json, exit codes
// (0 ok, 1 user error, 2 internal) and that a failed command changes nothing.

#include "cli/cliapplication.h"
#include "cli/output.h"
#include "core/config/settingsschema.h"
#include "support/memorysecretstore.h"
#include "support/testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using Starforge::Cli::CliApplication;
using Starforge::Testing::MemorySecretStore;

struct Run
{
    int exitCode = -1;
    QString out;
    QString err;
    QJsonDocument json() const { return QJsonDocument::fromJson(out.toUtf8()); }
};

class TestCli : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_config;
    MemorySecretStore m_secrets;
    QProcessEnvironment m_env;

    Run run(const QStringList &arguments)
    {
        Run r;
        QTextStream out(&r.out);
        QTextStream err(&r.err);
        CliApplication cli(QStringList{QStringLiteral("--config"), m_config} + arguments, m_env, &m_secrets, out, err);
        QSignalSpy finished(&cli, &CliApplication::finished);
        cli.start();
        if (!finished.wait(10000) && finished.isEmpty()) {
            r.err += QStringLiteral("(timed out)");
            return r;
        }
        r.exitCode = finished.first().first().toInt();
        out.flush();
        err.flush();
        return r;
    }

private Q_SLOTS:
    void init()
    {
        static int n = 0;
        m_config = m_dir.filePath(QStringLiteral("cli%1.ini").arg(++n));
        m_secrets.entries.clear();
        m_secrets.failing = false;
        m_env = QProcessEnvironment();
    }

    void helpAndVersion()
    {
        const Run help = run({QStringLiteral("--help")});
        QCOMPARE(help.exitCode, 0);
        QVERIFY(help.out.contains(QStringLiteral("profile import-kubeconfig")));
        const Run version = run({QStringLiteral("--version")});
        QCOMPARE(version.exitCode, 0);
        QVERIFY(version.out.contains(QStringLiteral(STARFORGE_VERSION)));
        const Run none = run({});
        QCOMPARE(none.exitCode, 1);
    }

    void usageErrorsExitOne_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown command") << QStringList{QStringLiteral("frobnicate")} << QStringLiteral("unknown command");
        QTest::newRow("unknown option") << QStringList{QStringLiteral("--frob"), QStringLiteral("profile"), QStringLiteral("list")} << QStringLiteral("unknown option");
        QTest::newRow("missing value") << QStringList{QStringLiteral("profile"), QStringLiteral("show"), QStringLiteral("--profile")} << QStringLiteral("needs a value");
        QTest::newRow("unknown subcommand") << QStringList{QStringLiteral("profile"), QStringLiteral("explode")} << QStringLiteral("unknown subcommand");
        QTest::newRow("no subcommand") << QStringList{QStringLiteral("profile")} << QStringLiteral("needs a subcommand");
        QTest::newRow("show unknown") << QStringList{QStringLiteral("profile"), QStringLiteral("show"), QStringLiteral("ghost")} << QStringLiteral("no profile named 'ghost'");
        QTest::newRow("set not key=value") << QStringList{QStringLiteral("profile"), QStringLiteral("set"), QStringLiteral("p"), QStringLiteral("FORGE_K8S_NAMESPACE")} << QStringLiteral("not KEY=VALUE");
        QTest::newRow("set bad value") << QStringList{QStringLiteral("profile"), QStringLiteral("set"), QStringLiteral("p"), QStringLiteral("FORGE_K8S_SHM_SIZE=64GB")} << QStringLiteral("64Gi");
        QTest::newRow("set unknown key") << QStringList{QStringLiteral("profile"), QStringLiteral("set"), QStringLiteral("p"), QStringLiteral("FORGE_K8S_NAMESPAC=x")} << QStringLiteral("FORGE_K8S_NAMESPACE");
        QTest::newRow("secret on command line") << QStringList{QStringLiteral("profile"), QStringLiteral("set"), QStringLiteral("p"), QStringLiteral("FORGE_K8S_TOKEN=abc123456")} << QStringLiteral("--stdin");
        QTest::newRow("delete unknown") << QStringList{QStringLiteral("profile"), QStringLiteral("delete"), QStringLiteral("ghost")} << QStringLiteral("no profile named");
        QTest::newRow("use unknown") << QStringList{QStringLiteral("profile"), QStringLiteral("use"), QStringLiteral("ghost")} << QStringLiteral("ghost");
        QTest::newRow("import missing file") << QStringList{QStringLiteral("profile"), QStringLiteral("import-kubeconfig"), QStringLiteral("/nonexistent/kubeconfig")} << QStringLiteral("does not exist");
        QTest::newRow("import unsupported") << QStringList{QStringLiteral("profile"), QStringLiteral("import-kubeconfig"), Testing::dataPath(QStringLiteral("kubeconfig/unsupported.yaml"))} << QStringLiteral("decodes to no PEM certificate");
        // Job commands: what is wrong with the command line is said before any cluster is asked.
        QTest::newRow("job: no JOB") << QStringList{QStringLiteral("status")} << QStringLiteral("usage: starforge-cli status JOB");
        QTest::newRow("job: empty JOB") << QStringList{QStringLiteral("status"), QString()} << QStringLiteral("'' is not a job id or a RayJob name");
        QTest::newRow("job: path as JOB") << QStringList{QStringLiteral("delete"), QStringLiteral("../../nodes")} << QStringLiteral("is not a job id or a RayJob name");
        QTest::newRow("job: tail not a number") << QStringList{QStringLiteral("logs"), QStringLiteral("bcdfgh"), QStringLiteral("--tail"), QStringLiteral("abc")}
                                               << QStringLiteral("--tail takes a number of lines, e.g. --tail 100, not 'abc'");
        QTest::newRow("job: grep bad expression") << QStringList{QStringLiteral("logs"), QStringLiteral("bcdfgh"), QStringLiteral("--grep"), QStringLiteral("step ("), QStringLiteral("-E")}
                                                 << QStringLiteral("The expression step ( is not valid at character");
        QTest::newRow("job: -i without grep") << QStringList{QStringLiteral("logs"), QStringLiteral("bcdfgh"), QStringLiteral("-i")}
                                             << QStringLiteral("-i, -E and --count go with --grep PATTERN");
        QTest::newRow("job: grep count follow") << QStringList{QStringLiteral("logs"), QStringLiteral("bcdfgh"), QStringLiteral("--grep"), QStringLiteral("x"), QStringLiteral("--count"), QStringLiteral("-f")}
                                               << QStringLiteral("--count needs the whole log");
        QTest::newRow("job: extra argument") << QStringList{QStringLiteral("jobs"), QStringLiteral("all")} << QStringLiteral("usage: starforge-cli jobs");
        QTest::newRow("job: profile and connection file") << QStringList{QStringLiteral("jobs"), QStringLiteral("--profile"), QStringLiteral("p"), QStringLiteral("--connection-file"), QStringLiteral("c.json")}
                                                         << QStringLiteral("not both");
        QTest::newRow("job: empty connection file") << QStringList{QStringLiteral("capacity"), QStringLiteral("--connection-file"), QString()} << QStringLiteral("there is no connection file ''");
        QTest::newRow("job: no active profile") << QStringList{QStringLiteral("history")} << QStringLiteral("no connection profile is active");
        QTest::newRow("job: unknown profile") << QStringList{QStringLiteral("jobs"), QStringLiteral("--profile"), QStringLiteral("ghost")} << QStringLiteral("there is no profile 'ghost'");
        QTest::newRow("job: missing spec") << QStringList{QStringLiteral("submit"), QStringLiteral("/nonexistent/jobspec.json"), QStringLiteral("--wait")} << QStringLiteral("Cannot read the JobSpec");
    }

    void usageErrorsExitOne()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        const Run r = run(arguments);
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY2(r.err.startsWith(QStringLiteral("starforge-cli: ")), qPrintable(r.err));
        QVERIFY(!QFile::exists(m_config)); // nothing half-created
        QVERIFY(m_secrets.entries.isEmpty());
    }

    void setShowListRoundTrip()
    {
        Run set = run({QStringLiteral("profile"), QStringLiteral("set"), QStringLiteral("lab"),
                       QStringLiteral("FORGE_K8S_API_SERVER=https://k8s.lab:6443"), QStringLiteral("FORGE_K8S_NAMESPACE=research")});
        QCOMPARE(set.exitCode, 0);
        QVERIFY2(set.out.contains(QStringLiteral("created profile lab")), qPrintable(set.out));
        QCOMPARE(run({QStringLiteral("profile"), QStringLiteral("use"), QStringLiteral("lab")}).exitCode, 0);

        const Run list = run({QStringLiteral("profile"), QStringLiteral("list"), QStringLiteral("--json")});
        QCOMPARE(list.exitCode, 0);
        const QJsonArray profiles = list.json().array();
        QCOMPARE(profiles.size(), 1);
        QCOMPARE(profiles.at(0)[QStringLiteral("name")].toString(), QStringLiteral("lab"));
        QCOMPARE(profiles.at(0)[QStringLiteral("active")].toBool(), true);
        QCOMPARE(profiles.at(0)[QStringLiteral("server")].toString(), QStringLiteral("https://k8s.lab:6443"));
        QCOMPARE(profiles.at(0)[QStringLiteral("namespace")].toString(), QStringLiteral("research"));

        const Run table = run({QStringLiteral("profile"), QStringLiteral("list")});
        QVERIFY(table.out.contains(QStringLiteral("NAMESPACE")));
        QVERIFY(table.out.contains(QStringLiteral("research")));

        // show: every setting, its value and where it came from; the environment wins.
        m_env.insert(QStringLiteral("FORGE_S3_BUCKET"), QStringLiteral("env-bucket"));
        m_secrets.entries.insert(QStringLiteral("lab/FORGE_K8S_TOKEN"), QStringLiteral("keychain-token-abcdef"));
        const Run show = run({QStringLiteral("profile"), QStringLiteral("show"), QStringLiteral("--json")});
        QCOMPARE(show.exitCode, 0);
        const QJsonObject shown = show.json().object();
        QCOMPARE(shown[QStringLiteral("profile")].toString(), QStringLiteral("lab"));
        QMap<QString, QJsonObject> byKey;
        for (const QJsonValue &v : shown[QStringLiteral("settings")].toArray()) {
            byKey.insert(v[QStringLiteral("key")].toString(), v.toObject());
        }
        QCOMPARE(byKey.size(), Config::SettingsSchema::all().size());
        QCOMPARE(byKey[QStringLiteral("FORGE_K8S_NAMESPACE")][QStringLiteral("source")].toString(), QStringLiteral("profile"));
        QCOMPARE(byKey[QStringLiteral("FORGE_S3_BUCKET")][QStringLiteral("value")].toString(), QStringLiteral("env-bucket"));
        QCOMPARE(byKey[QStringLiteral("FORGE_S3_BUCKET")][QStringLiteral("source")].toString(), QStringLiteral("environment"));
        QCOMPARE(byKey[QStringLiteral("FORGE_K8S_SHM_SIZE")][QStringLiteral("source")].toString(), QStringLiteral("default"));
        // Secrets: whether set and where from, never the value.
        QCOMPARE(byKey[QStringLiteral("FORGE_K8S_TOKEN")][QStringLiteral("value")].toBool(), true);
        QCOMPARE(byKey[QStringLiteral("FORGE_K8S_TOKEN")][QStringLiteral("source")].toString(), QStringLiteral("keychain"));
        QVERIFY(!show.out.contains(QStringLiteral("keychain-token-abcdef")));

        const Run text = run({QStringLiteral("profile"), QStringLiteral("show")});
        QVERIFY(text.out.contains(QStringLiteral("(active)")));
        QVERIFY(text.out.contains(QStringLiteral("(set)")));
        QVERIFY(!text.out.contains(QStringLiteral("keychain-token-abcdef")));

        // KEY= resets to the default.
        QCOMPARE(run({QStringLiteral("profile"), QStringLiteral("set"), QStringLiteral("lab"), QStringLiteral("FORGE_K8S_NAMESPACE=")}).exitCode, 0);
        const Run after = run({QStringLiteral("--profile"), QStringLiteral("lab"), QStringLiteral("profile"), QStringLiteral("show"), QStringLiteral("--json")});
        for (const QJsonValue &v : after.json().object()[QStringLiteral("settings")].toArray()) {
            if (v[QStringLiteral("key")].toString() == u"FORGE_K8S_NAMESPACE") {
                QCOMPARE(v[QStringLiteral("source")].toString(), QStringLiteral("default"));
                QCOMPARE(v[QStringLiteral("value")].toString(), QStringLiteral("starforge"));
            }
        }
    }

    void invalidEnvironmentIsAUserError()
    {
        QCOMPARE(run({QStringLiteral("profile"), QStringLiteral("set"), QStringLiteral("lab"), QStringLiteral("FORGE_K8S_NAMESPACE=ok")}).exitCode, 0);
        m_env.insert(QStringLiteral("FORGE_KUBERAY_TTL_SECONDS"), QStringLiteral("soon"));
        const Run show = run({QStringLiteral("profile"), QStringLiteral("show"), QStringLiteral("lab")});
        QCOMPARE(show.exitCode, 1);
        QVERIFY2(show.err.contains(QStringLiteral("FORGE_KUBERAY_TTL_SECONDS")), qPrintable(show.err));
    }

    void secretFromEnvironmentIsSaved()
    {
        m_env.insert(QStringLiteral("FORGE_S3_SECRET_KEY"), QStringLiteral("env-secret-key-987654"));
        const Run set = run({QStringLiteral("profile"), QStringLiteral("set"), QStringLiteral("lab"), QStringLiteral("FORGE_S3_SECRET_KEY"), QStringLiteral("--from-env")});
        QCOMPARE(set.exitCode, 0);
        QCOMPARE(m_secrets.entries.value(QStringLiteral("lab/FORGE_S3_SECRET_KEY")), QStringLiteral("env-secret-key-987654"));
        QVERIFY(!Testing::readAll(m_config).contains("env-secret-key-987654"));
        m_env.remove(QStringLiteral("FORGE_S3_SECRET_KEY"));
        const Run missing = run({QStringLiteral("profile"), QStringLiteral("set"), QStringLiteral("lab"), QStringLiteral("FORGE_S3_SECRET_KEY"), QStringLiteral("--from-env")});
        QCOMPARE(missing.exitCode, 1);
        QVERIFY(missing.err.contains(QStringLiteral("not set")));
    }

    void importKubeconfig()
    {
        const Run r = run({QStringLiteral("profile"), QStringLiteral("import-kubeconfig"), Testing::dataPath(QStringLiteral("kubeconfig/ca-file.yaml")),
                           QStringLiteral("--context"), QStringLiteral("other@c1"), QStringLiteral("--json")});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject o = r.json().object();
        QCOMPARE(o[QStringLiteral("profile")].toString(), QStringLiteral("other-c1"));
        QCOMPARE(o[QStringLiteral("created")].toBool(), true);
        QCOMPARE(o[QStringLiteral("tokenInKeychain")].toBool(), false);
        QCOMPARE(o[QStringLiteral("server")].toString(), QStringLiteral("https://10.0.0.1:6443"));

        m_env.insert(QStringLiteral("KUBECONFIG"), Testing::dataPath(QStringLiteral("kubeconfig/ca-data.yaml")));
        const Run fromEnv = run({QStringLiteral("profile"), QStringLiteral("import-kubeconfig"), QStringLiteral("--name"), QStringLiteral("lab")});
        QCOMPARE(fromEnv.exitCode, 0);
        QVERIFY2(fromEnv.out.contains(QStringLiteral("created profile lab from context lab")), qPrintable(fromEnv.out));
        QCOMPARE(m_secrets.entries.value(QStringLiteral("lab/FORGE_K8S_TOKEN")), QStringLiteral("sf-test-token-0123456789abcdef"));
        QVERIFY(!Testing::readAll(m_config).contains("sf-test-token"));

        const Run badName = run({QStringLiteral("profile"), QStringLiteral("import-kubeconfig"), QStringLiteral("--name"), QStringLiteral("no/slash")});
        QCOMPARE(badName.exitCode, 1);
        QVERIFY(badName.err.contains(QStringLiteral("--name")));
    }

    void renameDuplicateDelete()
    {
        QCOMPARE(run({QStringLiteral("profile"), QStringLiteral("set"), QStringLiteral("a"), QStringLiteral("FORGE_K8S_NAMESPACE=team")}).exitCode, 0);
        m_secrets.entries.insert(QStringLiteral("a/FORGE_K8S_TOKEN"), QStringLiteral("token-of-a-12345"));
        QCOMPARE(run({QStringLiteral("profile"), QStringLiteral("duplicate"), QStringLiteral("a"), QStringLiteral("b")}).exitCode, 0);
        QCOMPARE(run({QStringLiteral("profile"), QStringLiteral("rename"), QStringLiteral("a"), QStringLiteral("c")}).exitCode, 0);
        QCOMPARE(m_secrets.entries.keys(), (QStringList{QStringLiteral("b/FORGE_K8S_TOKEN"), QStringLiteral("c/FORGE_K8S_TOKEN")}));
        QCOMPARE(run({QStringLiteral("profile"), QStringLiteral("rename"), QStringLiteral("c"), QStringLiteral("b")}).exitCode, 1);

        // The keychain fails: delete keeps the profile unless --force, which warns.
        m_secrets.failing = true;
        const Run kept = run({QStringLiteral("profile"), QStringLiteral("delete"), QStringLiteral("b")});
        QCOMPARE(kept.exitCode, 1);
        QVERIFY(kept.err.contains(QStringLiteral("--force")));
        const Run forced = run({QStringLiteral("profile"), QStringLiteral("delete"), QStringLiteral("b"), QStringLiteral("--force")});
        QCOMPARE(forced.exitCode, 0);
        QVERIFY(forced.err.contains(QStringLiteral("warning")));
        m_secrets.failing = false;
        const Run deleted = run({QStringLiteral("profile"), QStringLiteral("delete"), QStringLiteral("c"), QStringLiteral("--json")});
        // Once seen failing under a loaded full run, never alone: the message says why next time.
        QVERIFY2(deleted.exitCode == 0, qPrintable(deleted.err));
        QCOMPARE(deleted.json().object()[QStringLiteral("secretsRemoved")].toBool(), true);
        QVERIFY(!m_secrets.entries.contains(QStringLiteral("c/FORGE_K8S_TOKEN")));
        const Run list = run({QStringLiteral("profile"), QStringLiteral("list"), QStringLiteral("--json")});
        QCOMPARE(list.json().array().size(), 0);
    }

    void fileFromANewerVersionIsAUserError()
    {
        QVERIFY(Testing::writeFile(m_config, "[settings]\nversion=7\n"));
        const Run future = run({QStringLiteral("profile"), QStringLiteral("list")});
        QCOMPARE(future.exitCode, 1);
        QVERIFY(future.err.contains(QStringLiteral("newer Starforge")));
        QCOMPARE(Testing::readAll(m_config), QByteArray("[settings]\nversion=7\n"));
    }

    void emptyJsonListsAreCompact()
    {
        // `jobs --json` and `history --json` with nothing in them print "[]", not Qt's "[\n]".
        QString text;
        QTextStream out(&text);
        Cli::printJson(out, QJsonArray());
        QCOMPARE(text, QStringLiteral("[]\n"));
        text.clear();
        Cli::printJson(out, QJsonArray{1});
        QCOMPARE(text, QStringLiteral("[\n    1\n]\n"));
    }

    void settingsListing()
    {
        const Run table = run({QStringLiteral("settings")});
        QCOMPARE(table.exitCode, 0);
        QVERIFY(table.out.contains(QStringLiteral("FORGE_K8S_SHM_SIZE")));
        const Run json = run({QStringLiteral("settings"), QStringLiteral("--json")});
        QCOMPARE(json.json().array().size(), Config::SettingsSchema::all().size());
        const Run md = run({QStringLiteral("settings"), QStringLiteral("--markdown")});
        QVERIFY(md.out.contains(QStringLiteral("| `FORGE_K8S_SHM_SIZE` |")));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
