// Hydra 1.3's override grammar (src/core/job/hydraoverride.h) on tests/data/hydra-overrides.json:
// every example of Hydra's override-grammar pages, the issue's NeMo-RL lines and the edges of the
// grammar, each with what Hydra 1.3.2 did with it and what Starforge decides. Refused lines say
// what Hydra says (ANTLR's words) and how to fix them, and the fix they suggest is taken.

#include "core/job/hydraoverride.h"
#include "support/testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Job;

namespace {

QJsonArray fixtureCases()
{
    return QJsonDocument::fromJson(Testing::readAll(Testing::dataPath(QStringLiteral("hydra-overrides.json"))))
        .object()
        .value(QLatin1String("cases"))
        .toArray();
}

QString problemName(HydraOverride::Problem p)
{
    switch (p) {
    case HydraOverride::Problem::None: return QStringLiteral("none");
    case HydraOverride::Problem::Token: return QStringLiteral("token");
    case HydraOverride::Problem::Syntax: return QStringLiteral("syntax");
    case HydraOverride::Problem::Function: return QStringLiteral("function");
    case HydraOverride::Problem::Sweep: return QStringLiteral("sweep");
    case HydraOverride::Problem::EmptyKey: return QStringLiteral("emptyKey");
    }
    return QString();
}

QString typeName(HydraOverride::Type t)
{
    switch (t) {
    case HydraOverride::Type::Change: return QStringLiteral("change");
    case HydraOverride::Type::Add: return QStringLiteral("add");
    case HydraOverride::Type::ForceAdd: return QStringLiteral("forceAdd");
    case HydraOverride::Type::Delete: return QStringLiteral("delete");
    }
    return QString();
}

// The fix a refused value's message suggests ("quote the value: a='1; rm -rf /'"), or "".
QString suggestedFix(const QString &message)
{
    const QLatin1String marker("quote the value: ");
    const qsizetype from = message.indexOf(marker);
    const qsizetype to = message.lastIndexOf(QLatin1String(", or escape the character"));
    if (from < 0 || to < from) return QString();
    return message.mid(from + marker.size(), to - from - marker.size());
}

} // namespace

class TestHydraOverride : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void fixtureCoversTheDocs()
    {
        const QJsonArray cases = fixtureCases();
        QVERIFY(cases.size() >= 200);
        int basic = 0;
        int extended = 0;
        int refused = 0;
        for (const QJsonValue &c : cases) {
            const QString source = c[QLatin1String("source")].toString();
            basic += source.contains(QLatin1String("override_grammar/basic.md"));
            extended += source.contains(QLatin1String("override_grammar/extended.md"));
            refused += !c[QLatin1String("accepted")].toBool();
        }
        QVERIFY2(basic >= 60, qPrintable(QString::number(basic)));
        QVERIFY2(extended >= 60, qPrintable(QString::number(extended)));
        QVERIFY(refused >= 80);
        QVERIFY(refused <= cases.size() - 80);
    }

    void fixture_data()
    {
        QTest::addColumn<QJsonObject>("fixture");
        const QJsonArray cases = fixtureCases();
        QVERIFY(!cases.isEmpty());
        for (qsizetype i = 0; i < cases.size(); ++i) {
            const QJsonObject c = cases.at(i).toObject();
            QTest::addRow("%d %s", int(i), qPrintable(c.value(QLatin1String("override")).toString())) << c;
        }
    }

    void fixture()
    {
        QFETCH(QJsonObject, fixture);
        const QString line = fixture.value(QLatin1String("override")).toString();
        const HydraOverride o = HydraOverride::parse(line);
        QCOMPARE(problemName(o.problem), fixture.value(QLatin1String("problem")).toString());
        QCOMPARE(o.ok(), fixture.value(QLatin1String("accepted")).toBool());
        QCOMPARE(HydraOverride::check(line).has_value(), !o.ok());
        if (o.ok()) {
            QVERIFY(o.message.isEmpty());
            QCOMPARE(typeName(o.type), fixture.value(QLatin1String("type")).toString());
            QCOMPARE(o.key, fixture.value(QLatin1String("key")).toString());
            QCOMPARE(o.package, fixture.value(QLatin1String("package")).toString());
            QCOMPARE(o.hasValue, line.contains(QLatin1Char('=')));
            return;
        }
        const QString error = fixture.value(QLatin1String("error")).toString();
        QVERIFY(!error.isEmpty());
        QVERIFY2(o.message.contains(error), qPrintable(o.message));
        QCOMPARE(*HydraOverride::check(line), o.message);
        // One line that quotes the override, so the JobSpec's list of problems stays readable.
        QVERIFY(!o.message.contains(QLatin1Char('\n')));
        QVERIFY2(o.message.contains(QLatin1Char('"') + line + QLatin1Char('"')), qPrintable(o.message));
        // Where Hydra's lexer stopped (its caret under the line), the same character here.
        static const QRegularExpression lexerStop(QStringLiteral("^LexerNoViableAltException at character (\\d+)$"));
        const auto stop = lexerStop.match(fixture.value(QLatin1String("hydra")).toString());
        if (stop.hasMatch()) {
            QCOMPARE(o.problem, HydraOverride::Problem::Token);
            QCOMPARE(o.column, stop.captured(1).toInt());
        }
        if (o.problem == HydraOverride::Problem::Token || o.problem == HydraOverride::Problem::Syntax
            || o.problem == HydraOverride::Problem::Function) {
            QVERIFY2(o.message.startsWith(QLatin1String("Hydra cannot parse \"")), qPrintable(o.message));
            QVERIFY(o.column >= 1 && o.column <= line.size() + 1);
        }
        // A value's fix is to quote it: the suggestion must then be taken.
        const QString fix = suggestedFix(o.message);
        if (!fix.isEmpty()) {
            const HydraOverride fixed = HydraOverride::parse(fix);
            QVERIFY2(fixed.ok(), qPrintable(fix + QStringLiteral(": ") + fixed.message));
            QCOMPARE(fixed.key, o.key);
        }
    }

    void theIssuesLine()
    {
        QCOMPARE(HydraOverride::check(QStringLiteral("a=1; rm -rf /")).value_or(QString()),
                 QStringLiteral("Hydra cannot parse \"a=1; rm -rf /\": token recognition error at: ';' "
                                "(character 4; quote the value: a='1; rm -rf /', or escape the character with \\)."));
        QCOMPARE(HydraOverride::parse(QStringLiteral("a=1; rm -rf /")).column, 4);
        QVERIFY(!HydraOverride::check(QStringLiteral("a='1; rm -rf /'")));
    }

    void sweepsSayHowToWriteOneValue()
    {
        const QString simple = HydraOverride::check(QStringLiteral("grpo.max_num_steps=10,20")).value_or(QString());
        QVERIFY2(simple.contains(QLatin1String("for a list write grpo.max_num_steps=[10,20], for a string quote it: grpo.max_num_steps='10,20'")),
                 qPrintable(simple));
        const QString range = HydraOverride::check(QStringLiteral("policy.lr=range(1,3)")).value_or(QString());
        QVERIFY2(range.contains(QLatin1String("is a sweep (range")) && range.contains(QLatin1String("a job runs once")), qPrintable(range));
    }

    // Hydra itself gives up (RecursionError) between 300 and 500 levels; a deeper line must not
    // exhaust the app's stack either.
    void nestingHasALimit()
    {
        auto nested = [](int depth) {
            QString line = QStringLiteral("a=");
            line.append(QString(depth, QLatin1Char('[')));
            line.append(QString(depth, QLatin1Char(']')));
            return line;
        };
        QVERIFY2(HydraOverride::parse(nested(300)).ok(), qPrintable(HydraOverride::parse(nested(300)).message));
        const HydraOverride deep = HydraOverride::parse(nested(100000));
        QCOMPARE(deep.problem, HydraOverride::Problem::Syntax);
        QVERIFY2(deep.message.contains(QLatin1String("nested more than 300 deep")), qPrintable(deep.message.left(200)));
    }

    void quoted_data()
    {
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("expected");
        // Each checked against Hydra 1.3.2's parser: "a=" + expected gives back value.
        QTest::newRow("plain") << QStringLiteral("run 1") << QStringLiteral("'run 1'");
        QTest::newRow("empty") << QString() << QStringLiteral("''");
        QTest::newRow("single quote") << QStringLiteral("it's") << QStringLiteral("\"it's\"");
        QTest::newRow("both quotes") << QStringLiteral("x'y\"z") << QStringLiteral("'x\\'y\"z'");
        QTest::newRow("trailing backslash") << QStringLiteral("back\\") << QStringLiteral("'back\\\\'");
        QTest::newRow("backslash before quote") << QStringLiteral("q\\'") << QStringLiteral("\"q\\'\"");
        QTest::newRow("inner backslashes") << QStringLiteral("a\\\\b") << QStringLiteral("'a\\\\b'");
        QTest::newRow("backslash then both quotes") << QStringLiteral("\\'\"") << QStringLiteral("'\\\\\\'\"'");
    }

    void quoted()
    {
        QFETCH(QString, value);
        QFETCH(QString, expected);
        QCOMPARE(HydraOverride::quoted(value), expected);
        const HydraOverride o = HydraOverride::parse(QStringLiteral("a=") + expected);
        QVERIFY2(o.ok(), qPrintable(o.message));
    }
};

QTEST_GUILESS_MAIN(TestHydraOverride)
#include "tst_hydraoverride.moc"
