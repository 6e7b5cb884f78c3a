// Label and field selectors: the API server's syntax, matching and error texts.

#include "sandbox/api/selectors.h"

#include <QJsonObject>
#include <QTest>

using namespace Starforge::Sandbox;

class TestSelectors : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void labelMatching_data()
    {
        QTest::addColumn<QString>("selector");
        QTest::addColumn<bool>("matches"); // against {app: web, tier: gpu, n: "5"}
        QTest::newRow("empty") << "" << true;
        QTest::newRow("equals") << "app=web" << true;
        QTest::newRow("double equals") << "app==web" << true;
        QTest::newRow("equals other") << "app=db" << false;
        QTest::newRow("not equals") << "app!=db" << true;
        QTest::newRow("not equals missing key") << "zone!=a" << true;
        QTest::newRow("in") << "app in (db, web)" << true;
        QTest::newRow("in miss") << "app in (db)" << false;
        QTest::newRow("in missing key") << "zone in (a)" << false;
        QTest::newRow("notin") << "app notin (db)" << true;
        QTest::newRow("notin hit") << "app notin (web,db)" << false;
        QTest::newRow("notin missing key") << "zone notin (a)" << true;
        QTest::newRow("exists") << "tier" << true;
        QTest::newRow("exists missing") << "zone" << false;
        QTest::newRow("not exists") << "!zone" << true;
        QTest::newRow("not exists present") << "!tier" << false;
        QTest::newRow("and") << "app=web,tier=gpu,!zone" << true;
        QTest::newRow("and fails") << "app=web,tier=cpu" << false;
        QTest::newRow("greater") << "n>4" << true;
        QTest::newRow("less") << "n<5" << false;
        QTest::newRow("prefixed key") << "example.com/owner" << false;
        QTest::newRow("empty value") << "app=" << false;
    }

    void labelMatching()
    {
        QFETCH(QString, selector);
        QFETCH(bool, matches);
        const auto parsed = LabelSelector::parse(selector);
        QVERIFY2(parsed.ok(), qPrintable(parsed.ok() ? QString() : parsed.error().message));
        const QJsonObject labels{{QStringLiteral("app"), QStringLiteral("web")}, {QStringLiteral("tier"), QStringLiteral("gpu")},
                                 {QStringLiteral("n"), QStringLiteral("5")}};
        QCOMPARE(parsed->matches(labels), matches);
    }

    void labelErrors_data()
    {
        QTest::addColumn<QString>("selector");
        QTest::addColumn<QString>("expected");
        QTest::newRow("empty set") << "app in ()" << "values set can't be empty";
        QTest::newRow("no paren") << "app in a" << "expected: '('";
        QTest::newRow("bad key") << "-app=x" << "name part must consist of alphanumeric characters";
        QTest::newRow("bad value") << "app=x_" << "a valid label must be an empty string";
        QTest::newRow("trailing comma") << "app=x," << "expected: !, identifier";
        QTest::newRow("gt not a number") << "n>five" << "the value must be an integer";
        QTest::newRow("garbage") << "app=x;y" << "unable to parse requirement";
    }

    void labelErrors()
    {
        QFETCH(QString, selector);
        QFETCH(QString, expected);
        const auto parsed = LabelSelector::parse(selector);
        QVERIFY(!parsed.ok());
        QVERIFY2(parsed.error().message.startsWith(QStringLiteral("unable to parse requirement: ")), qPrintable(parsed.error().message));
        QVERIFY2(parsed.error().message.contains(expected), qPrintable(parsed.error().message));
    }

    void fieldSelectors()
    {
        const auto parsed = FieldSelector::parse(QStringLiteral("involvedObject.kind=Pod,reason!=Scheduled,message==a\\,b\\=c"));
        QVERIFY(parsed.ok());
        QCOMPARE(parsed->requirements().size(), 3);
        QCOMPARE(parsed->requirements().at(2).value, QStringLiteral("a,b=c"));
        QVERIFY(!parsed->requirements().at(1).equals);
        const auto value = [](const QString &field) -> std::optional<QString> {
            if (field == QLatin1String("involvedObject.kind")) return QStringLiteral("Pod");
            if (field == QLatin1String("reason")) return QStringLiteral("FailedScheduling");
            if (field == QLatin1String("message")) return QStringLiteral("a,b=c");
            return std::nullopt;
        };
        QVERIFY(parsed->matches(value));
        const auto other = FieldSelector::parse(QStringLiteral("reason=Scheduled"));
        QVERIFY(!other->matches(value));
        QCOMPARE(FieldSelector::parse(QStringLiteral("metadata.name=x"))->exactName(), std::optional<QString>(QStringLiteral("x")));
        QVERIFY(!FieldSelector::parse(QStringLiteral("metadata.name!=x"))->exactName());
    }

    void fieldSelectorErrors()
    {
        const auto set = FieldSelector::parse(QStringLiteral("status.phase in (Running)"));
        QVERIFY(!set.ok());
        QCOMPARE(set.error().message, QStringLiteral("invalid selector: 'status.phase in (Running)'; can't understand 'status.phase in (Running)'"));
        const auto parsed = FieldSelector::parse(QStringLiteral("spec.nodeName=a,foo=b"));
        QVERIFY(parsed.ok());
        const auto checked = parsed->check([](const QString &f) { return f == QLatin1String("spec.nodeName"); });
        QVERIFY(!checked.ok());
        QCOMPARE(checked.error().message, QStringLiteral("field label not supported: foo"));
    }
};

QTEST_APPLESS_MAIN(TestSelectors)
#include "tst_selectors.moc"
