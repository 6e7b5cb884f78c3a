// The catalogues at run time: with a language's catalogue installed, the texts the code builds
// come out in that language. One message from each kind of place where lupdate and the running
// app must agree on the context (translations/CMakeLists.txt): a QObject class inside a
// namespace (moc's full class name), a file's Text struct (Q_DECLARE_TR_FUNCTIONS), and an
// explicit translate() context; and the English plurals, which only a catalogue can give.
// scripts/check-translations.py checks the catalogues are complete; this checks they are found.

#include "core/job/jobspec.h"
#include "core/session/sessionsource.h"
#include "models/checkpointsmodel.h"

#include <QCoreApplication>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QTranslator>

using namespace Starforge;

namespace {

// Each text a code path builds, given the translators installed at the time.
struct Samples
{
    QString header;       // Starforge::Models::CheckpointsModel (a QObject in a namespace)
    QString source;       // SessionSource's Text struct
    QString specProblem;  // the JobSpec context, with a %n plural
};

Samples build()
{
    Models::CheckpointsModel model;
    const auto spec = Job::JobSpec::fromJson(QByteArrayLiteral("{}"));
    return {model.headerData(Models::CheckpointsModel::StepColumn, Qt::Horizontal).toString(),
            SessionSource::ofConnectionFile(QStringLiteral("/tmp/conn.json")).describe(),
            spec ? QString() : spec.error().message.section(QLatin1Char('\n'), 0, 0)};
}

} // namespace

class TranslationsRuntime final : public QObject
{
    Q_OBJECT

    QList<QTranslator *> m_installed;

    bool install(const QString &catalogue)
    {
        auto *translator = new QTranslator(this);
        if (!translator->load(catalogue, QStringLiteral(SF_QM_DIR))) return false;
        QCoreApplication::installTranslator(translator);
        m_installed << translator;
        return true;
    }

private slots:
    void cleanup()
    {
        for (QTranslator *t : std::as_const(m_installed)) QCoreApplication::removeTranslator(t);
        qDeleteAll(m_installed);
        m_installed.clear();
    }

    void englishPluralsComeFromTheCatalogue()
    {
        const Samples bare = build();
        QVERIFY2(bare.specProblem.contains(QLatin1String("problem(s)")), qPrintable(bare.specProblem));
        QVERIFY(install(QStringLiteral("starforge_en")));
        const Samples english = build();
        static const QRegularExpression counted(QStringLiteral("^The JobSpec has (1 problem|\\d+ problems):$"));
        QVERIFY2(counted.match(english.specProblem).hasMatch(), qPrintable(english.specProblem));
        QCOMPARE(english.header, bare.header);   // only plurals are in the English catalogue
    }

    void everyKindOfContextIsFound_data()
    {
        QTest::addColumn<QString>("catalogue");
        QTest::newRow("German") << QStringLiteral("starforge_de");
        QTest::newRow("Chinese") << QStringLiteral("starforge_zh_CN");
    }

    void everyKindOfContextIsFound()
    {
        QFETCH(QString, catalogue);
        const Samples english = build();
        QVERIFY(install(QStringLiteral("starforge_en")));
        QVERIFY(install(catalogue));
        const Samples translated = build();
        // What the catalogue says for each source text, under the context the code uses.
        const QString header = QCoreApplication::translate("Starforge::Models::CheckpointsModel", "Step");
        const QString source = QCoreApplication::translate("SessionSource", "the sandbox's connection file %1").arg(QStringLiteral("/tmp/conn.json"));
        QVERIFY(header != QLatin1String("Step"));
        QCOMPARE(translated.header, header);
        QVERIFY(translated.source != english.source);
        QCOMPARE(translated.source, source);
        QVERIFY(!translated.specProblem.isEmpty());
        QVERIFY2(translated.specProblem != english.specProblem && !translated.specProblem.contains(QLatin1String("JobSpec has")),
                 qPrintable(translated.specProblem));
    }

    // The CLI speaks the language too, but never in --json, which scripts read.
    void theCliIsTranslatedButNotItsJson()
    {
        QTemporaryDir home;
        const auto run = [&](const QString &language, const QStringList &arguments) {
            QProcess cli;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("STARFORGE_LANGUAGE"), language);
            env.insert(QStringLiteral("STARFORGE_CONFIG_FILE"), home.filePath(QStringLiteral("profiles.ini")));
            cli.setProcessEnvironment(env);
            cli.start(QStringLiteral(SF_BIN_DIR "/starforge-cli"), arguments);
            if (!cli.waitForFinished(30000)) return QString();
            return QString::fromUtf8(cli.readAllStandardError() + cli.readAllStandardOutput());
        };
        const QStringList unknown{QStringLiteral("no-such-command")};
        const QString english = run(QStringLiteral("en"), unknown);
        QVERIFY2(english.contains(QLatin1String("unknown command 'no-such-command'")), qPrintable(english));
        const QString german = run(QStringLiteral("de"), unknown);
        QVERIFY2(german.contains(QLatin1String("no-such-command")) && !german.contains(QLatin1String("unknown command")), qPrintable(german));
        const QString chinese = run(QStringLiteral("zh_CN"), unknown);
        QVERIFY2(chinese.contains(QLatin1String("no-such-command")) && !chinese.contains(QLatin1String("unknown command")), qPrintable(chinese));
        const QString json = run(QStringLiteral("de"), {QStringLiteral("--json"), QStringLiteral("no-such-command")});
        QVERIFY2(json.contains(QLatin1String("unknown command 'no-such-command'")), qPrintable(json));
    }

};

QTEST_GUILESS_MAIN(TranslationsRuntime)
#include "tst_translations_runtime.moc"
