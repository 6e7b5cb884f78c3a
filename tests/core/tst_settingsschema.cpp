// The settings table itself: every setting the design names is there, defaults validate, keys are
// unique, validate() prefixes messages with the key, and the table's texts are translated where
// people read them while the English source stays for the docs and --json.

#include "core/config/effectiveconfig.h"
#include "core/config/settingsschema.h"
#include "support/testutil.h"

#include <QCoreApplication>
#include <QRegularExpression>
#include <QSet>
#include <QTest>
#include <QTranslator>

using namespace Starforge;
using namespace Starforge::Config;

namespace {

// A catalogue that "translates" every text of the config contexts by marking it, so a test sees
// which texts went through translation and under which context (a wrong context stays English).
class MarkingTranslator final : public QTranslator
{
public:
    QString translate(const char *context, const char *sourceText, const char *, int) const override
    {
        static const QSet<QByteArray> contexts{"SettingsSchema", "Validation", "EffectiveConfig"};
        return contexts.contains(context) ? QStringLiteral("[de] ") + QString::fromUtf8(sourceText) : QString();
    }
    bool isEmpty() const override { return false; }
};

} // namespace

class TestSettingsSchema : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void everySettingOfTheDesignIsInTheTable()
    {
        // The product design is the contract: every FORGE_* it names is a setting.
        const QByteArray design = Testing::readAll(QStringLiteral(SF_SOURCE_DIR "/docs/design.md"));
        QVERIFY2(!design.isEmpty(), "docs/design.md is missing");
        QSet<QString> named;
        static const QRegularExpression re(QStringLiteral("FORGE_[A-Z0-9_]+[A-Z0-9]"));
        auto it = re.globalMatch(QString::fromUtf8(design));
        while (it.hasNext()) {
            named.insert(it.next().captured(0));
        }
        const QStringList frozen{
            QStringLiteral("FORGE_DEFAULT_FLEET_KIND"), QStringLiteral("FORGE_K8S_API_SERVER"), QStringLiteral("FORGE_K8S_TOKEN"),
            QStringLiteral("FORGE_K8S_CA_FILE"), QStringLiteral("FORGE_K8S_NAMESPACE"), QStringLiteral("FORGE_K8S_GPU_NODE_LABEL"),
            QStringLiteral("FORGE_K8S_GPU_PASSTHROUGH"), QStringLiteral("FORGE_K8S_SHM_SIZE"), QStringLiteral("FORGE_IMAGE_NEMO_RL"),
            QStringLiteral("FORGE_NEMO_RL_DIR"), QStringLiteral("FORGE_IMAGE_VLLM"), QStringLiteral("FORGE_STORAGE_ROOT"),
            QStringLiteral("FORGE_K8S_STORAGE_PVC"), QStringLiteral("FORGE_K8S_STORAGE_SHARED"), QStringLiteral("FORGE_K8S_STORAGE_MOUNT"),
            QStringLiteral("FORGE_K8S_CORPUS_PVC"), QStringLiteral("FORGE_KUBERAY_RAY_VERSION"), QStringLiteral("FORGE_KUBERAY_TTL_SECONDS"),
            QStringLiteral("FORGE_KUBERAY_PRERUNNING_DEADLINE_S"), QStringLiteral("FORGE_S3_ENDPOINT"), QStringLiteral("FORGE_S3_BUCKET"),
            QStringLiteral("FORGE_S3_REGION"), QStringLiteral("FORGE_S3_ACCESS_KEY"), QStringLiteral("FORGE_S3_SECRET_KEY")};
        for (const QString &key : frozen) {
            named.insert(key);
        }
        for (const QString &key : std::as_const(named)) {
            QVERIFY2(SettingsSchema::find(key), qPrintable(key + QStringLiteral(" is named in docs/design.md but not in the settings table")));
        }
    }

    void keysAreUniqueAndDescribed()
    {
        QSet<QString> seen;
        for (const SettingDefinition &d : SettingsSchema::all()) {
            QVERIFY2(!seen.contains(d.key), qPrintable(d.key));
            seen.insert(d.key);
            QVERIFY(d.key.startsWith(QStringLiteral("FORGE_")));
            QVERIFY2(d.help.size() > 20, qPrintable(d.key));
            QVERIFY(!d.group.isEmpty());
            QVERIFY(!SettingsSchema::typeName(d.type).isEmpty());
        }
    }

    void defaultsValidateToThemselves()
    {
        for (const SettingDefinition &d : SettingsSchema::all()) {
            if (d.defaultValue.isEmpty()) {
                QVERIFY2(d.optional, qPrintable(d.key + QStringLiteral(" is required but has no default")));
                continue;
            }
            const auto checked = SettingsSchema::validate(d, d.defaultValue);
            QVERIFY2(checked.ok(), qPrintable(d.key));
            QCOMPARE(*checked, d.defaultValue);
        }
    }

    void secretsAreExactlyTheFour()
    {
        QStringList expected{QStringLiteral("FORGE_K8S_TOKEN"), QStringLiteral("FORGE_K8S_CLIENT_KEY_DATA"), QStringLiteral("FORGE_S3_ACCESS_KEY"),
                             QStringLiteral("FORGE_S3_SECRET_KEY")};
        QStringList actual = SettingsSchema::secretKeys();
        expected.sort();
        actual.sort();
        QCOMPARE(actual, expected);
    }

    void validateNamesTheKey()
    {
        const auto bad = SettingsSchema::validate(QStringLiteral("FORGE_K8S_SHM_SIZE"), QStringLiteral("64GB"));
        QVERIFY(!bad.ok());
        QVERIFY2(bad.error().message.startsWith(QStringLiteral("FORGE_K8S_SHM_SIZE: ")), qPrintable(bad.error().message));
        QVERIFY(bad.error().message.contains(QStringLiteral("64Gi")));

        const auto required = SettingsSchema::validate(QStringLiteral("FORGE_K8S_NAMESPACE"), QString());
        QVERIFY(!required.ok());

        const auto optional = SettingsSchema::validate(QStringLiteral("FORGE_K8S_CORPUS_PVC"), QString());
        QVERIFY(optional.ok());
        QCOMPARE(*optional, QString());

        const auto range = SettingsSchema::validate(QStringLiteral("FORGE_KUBERAY_PRERUNNING_DEADLINE_S"), QStringLiteral("0"));
        QVERIFY(!range.ok());

        const auto choice = SettingsSchema::validate(QStringLiteral("FORGE_DEFAULT_FLEET_KIND"), QStringLiteral("slurm"));
        QVERIFY(!choice.ok());
        QVERIFY2(choice.error().message.contains(QStringLiteral("kuberay")), qPrintable(choice.error().message));
    }

    void textsAreTranslatedWhereShownAndEnglishInTheTable()
    {
        MarkingTranslator translator;
        QVERIFY(QCoreApplication::installTranslator(&translator));
        const SettingDefinition *server = SettingsSchema::find(QStringLiteral("FORGE_K8S_API_SERVER"));
        QVERIFY(server);
        // The table keeps the English source (docs/configuration.md, --json, group identity) ...
        QCOMPARE(server->label, QStringLiteral("API server"));
        QCOMPARE(server->group, QStringLiteral("Cluster"));
        QCOMPARE(SettingsSchema::typeName(server->type), QStringLiteral("URL"));
        QCOMPARE(sourceName(ValueSource::Profile), QStringLiteral("profile"));
        QCOMPARE(SettingsSchema::groups().constFirst().name, QStringLiteral("Cluster"));
        // ... and hands it translated to whoever shows it.
        QCOMPARE(server->translatedLabel(), QStringLiteral("[de] API server"));
        QCOMPARE(server->translatedGroup(), QStringLiteral("[de] Cluster"));
        QCOMPARE(server->translatedHelp(), QStringLiteral("[de] ") + server->help);
        QCOMPARE(SettingsSchema::typeDisplayName(server->type), QStringLiteral("[de] URL"));
        QCOMPARE(sourceDisplayName(ValueSource::Profile), QStringLiteral("[de] profile"));
        const SettingGroup &cluster = SettingsSchema::groups().constFirst();
        QCOMPARE(cluster.translatedName(), QStringLiteral("[de] Cluster"));
        QCOMPARE(cluster.translatedAbout(), QStringLiteral("[de] ") + cluster.about);
        // Messages are translated too: the key's prefix (SettingsSchema) and the problem (Validation).
        const auto bad = SettingsSchema::validate(QStringLiteral("FORGE_K8S_SHM_SIZE"), QStringLiteral("64GB"));
        QVERIFY(!bad.ok());
        QVERIFY2(bad.error().message.startsWith(QStringLiteral("[de] FORGE_K8S_SHM_SIZE: [de] '64GB' is not a Kubernetes quantity")),
                 qPrintable(bad.error().message));
        QVERIFY(QCoreApplication::removeTranslator(&translator));
        QCOMPARE(server->translatedLabel(), QStringLiteral("API server"));
    }

    void unknownKeySuggestsTheClosest()
    {
        const auto unknown = SettingsSchema::validate(QStringLiteral("FORGE_K8S_NAMESPAC"), QStringLiteral("x"));
        QVERIFY(!unknown.ok());
        QVERIFY2(unknown.error().message.contains(QStringLiteral("FORGE_K8S_NAMESPACE")), qPrintable(unknown.error().message));
        QCOMPARE(SettingsSchema::suggestKey(QStringLiteral("FORGE_S3_BUCKT")), QStringLiteral("FORGE_S3_BUCKET"));
        QCOMPARE(SettingsSchema::suggestKey(QStringLiteral("COMPLETELY_DIFFERENT_THING")), QString());
    }
};

QTEST_GUILESS_MAIN(TestSettingsSchema)
#include "tst_settingsschema.moc"
