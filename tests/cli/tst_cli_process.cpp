// The built executables, run as a user runs them, with gnome-keyring's Secret Service: secrets
// given on stdin land in the keychain and never in the profile file; exit codes; the generated
// configuration reference in docs/ is current; starforge-sandbox does not pretend to work.

#include "support/testutil.h"

#include <QCryptographicHash>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;

struct Run
{
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

class TestCliProcess : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString config() const { return m_dir.filePath(QStringLiteral("profiles.ini")); }

    Run run(const QString &program, const QStringList &arguments, const QByteArray &input = {}, const QProcessEnvironment &extra = {})
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("STARFORGE_CONFIG_FILE"), config());
        env.remove(QStringLiteral("KUBECONFIG"));
        for (const QString &key : extra.keys()) {
            env.insert(key, extra.value(key));
        }
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(SF_BIN_DIR) + u'/' + program, arguments);
        if (!p.waitForStarted(10000)) {
            return {};
        }
        p.write(input);
        p.closeWriteChannel();
        p.waitForFinished(30000);
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(), p.readAllStandardError()};
    }
    Run cli(const QStringList &arguments, const QByteArray &input = {}, const QProcessEnvironment &extra = {})
    {
        return run(QStringLiteral("starforge-cli"), arguments, input, extra);
    }

private Q_SLOTS:
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
        const Run version = run(QStringLiteral("starforge-sandbox"), {QStringLiteral("--version")});
        QCOMPARE(version.exitCode, 0);
        QVERIFY(version.out.contains(STARFORGE_VERSION));
    }
};

QTEST_GUILESS_MAIN(TestCliProcess)
#include "tst_cli_process.moc"
