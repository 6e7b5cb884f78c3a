// GroupedSettingsModel: the profiles dialog's tree of groups and settings over
// ProfileSettingsModel. Every setting appears once under its group, in the table's order, named by
// its label with its variable beside it; edits pass through to the settings model and come back
// as changes of the right row. Under QAbstractItemModelTester.

#include "core/config/profilemanager.h"
#include "core/config/settingsschema.h"
#include "models/groupedsettingsmodel.h"
#include "models/profilesettingsmodel.h"
#include "support/memorysecretstore.h"

#include <QAbstractItemModelTester>
#include <QCoreApplication>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTranslator>

using namespace Starforge;
using Models::GroupedSettingsModel;
using Models::ProfileSettingsModel;

namespace {

// Marks every text of the settings table's context as "translated", to see which ones the dialog shows translated.
class MarkingTranslator final : public QTranslator
{
public:
    QString translate(const char *context, const char *sourceText, const char *, int) const override
    {
        return qstrcmp(context, "SettingsSchema") == 0 ? QStringLiteral("[de] ") + QString::fromUtf8(sourceText) : QString();
    }
    bool isEmpty() const override { return false; }
};

} // namespace

class TestGroupedSettingsModel : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Config::ProfileStore> m_store;
    Testing::MemorySecretStore m_secrets;
    std::unique_ptr<Config::ProfileManager> m_manager;

private Q_SLOTS:
    void init()
    {
        static int n = 0;
        m_store = std::make_unique<Config::ProfileStore>(m_dir.filePath(QStringLiteral("g%1.ini").arg(++n)));
        m_manager = std::make_unique<Config::ProfileManager>(m_store.get(), &m_secrets);
        QVERIFY(m_store->addProfile(QStringLiteral("lab")).ok());
    }

    void everySettingOnceUnderItsGroup()
    {
        ProfileSettingsModel settings(m_manager.get(), QProcessEnvironment());
        GroupedSettingsModel grouped;
        QAbstractItemModelTester tester(&grouped, QAbstractItemModelTester::FailureReportingMode::QtTest);
        grouped.setSourceModel(&settings);
        QCOMPARE(grouped.rowCount(), 0); // no profile: no headings either
        settings.setProfile(QStringLiteral("lab"));

        const auto &groups = Config::SettingsSchema::groups();
        QCOMPARE(grouped.rowCount(), groups.size());
        QSet<QString> seen;
        int sourceRow = 0;
        for (int g = 0; g < grouped.rowCount(); ++g) {
            const QModelIndex heading = grouped.index(g, 0);
            QVERIFY(grouped.isGroup(heading));
            QCOMPARE(heading.data().toString(), groups.at(g).name);
            QVERIFY2(!groups.at(g).about.isEmpty(), qPrintable(groups.at(g).name));
            QCOMPARE(heading.data(GroupedSettingsModel::AboutRole).toString(), groups.at(g).about);
            QVERIFY(!grouped.mapToSource(heading).isValid());
            QVERIFY(!(grouped.flags(heading.siblingAtColumn(ProfileSettingsModel::ValueColumn)) & Qt::ItemIsEditable));
            QVERIFY(grouped.rowCount(heading) > 0);
            for (int r = 0; r < grouped.rowCount(heading); ++r, ++sourceRow) {
                const QModelIndex name = grouped.index(r, ProfileSettingsModel::KeyColumn, heading);
                const Config::SettingDefinition &d = Config::SettingsSchema::all().at(sourceRow);
                // In the table's order, so the dialog and docs/configuration.md agree.
                QCOMPARE(name.data(ProfileSettingsModel::KeyRole).toString(), d.key);
                QCOMPARE(d.group, groups.at(g).name);
                QVERIFY2(!d.label.isEmpty() && d.label != d.key, qPrintable(d.key));
                QCOMPARE(name.data().toString(), d.label);
                QVERIFY(name.data(Qt::ToolTipRole).toString().contains(d.key));
                QCOMPARE(grouped.mapToSource(name), settings.index(sourceRow, ProfileSettingsModel::KeyColumn));
                QCOMPARE(grouped.mapFromSource(settings.index(sourceRow, ProfileSettingsModel::ValueColumn)),
                         name.siblingAtColumn(ProfileSettingsModel::ValueColumn));
                QVERIFY(!seen.contains(d.key));
                seen.insert(d.key);
            }
        }
        QCOMPARE(seen.size(), Config::SettingsSchema::all().size());
    }

    void labelsAreUniqueWithinAGroup()
    {
        // Two settings called "Proxy" are fine in Network and Object storage, not in one group.
        QSet<QString> labels;
        for (const Config::SettingDefinition &d : Config::SettingsSchema::all()) {
            const QString key = d.group + u'/' + d.label;
            QVERIFY2(!labels.contains(key), qPrintable(key));
            labels.insert(key);
        }
    }

    void editsPassThroughAndComeBackOnTheirRow()
    {
        ProfileSettingsModel settings(m_manager.get(), QProcessEnvironment());
        GroupedSettingsModel grouped;
        QAbstractItemModelTester tester(&grouped, QAbstractItemModelTester::FailureReportingMode::QtTest);
        grouped.setSourceModel(&settings);
        settings.setProfile(QStringLiteral("lab"));
        QSignalSpy changed(&grouped, &QAbstractItemModel::dataChanged);

        const QModelIndex shm = grouped.indexOfKey(QStringLiteral("FORGE_K8S_SHM_SIZE"), ProfileSettingsModel::ValueColumn);
        QCOMPARE(shm.parent().data().toString(), QStringLiteral("GPUs and pods"));
        QVERIFY(grouped.flags(shm) & Qt::ItemIsEditable);
        QVERIFY(grouped.setData(shm, QStringLiteral("64GB")));
        QCOMPARE(settings.pendingChanges().value(QStringLiteral("FORGE_K8S_SHM_SIZE")), QStringLiteral("64GB"));
        QVERIFY(shm.data(ProfileSettingsModel::ErrorRole).toString().contains(QStringLiteral("64Gi")));
        QVERIFY(!changed.isEmpty());
        const auto args = changed.last();
        QCOMPARE(args.at(0).toModelIndex().parent(), shm.parent());
        QCOMPARE(args.at(0).toModelIndex().row(), shm.row());
        // The name column is bold while its row has an unapplied edit.
        QVERIFY(shm.siblingAtColumn(ProfileSettingsModel::KeyColumn).data(Qt::FontRole).value<QFont>().bold());

        // A change reported across groups (the keychain answering for both secrets' groups)
        // reaches each group's rows.
        changed.clear();
        settings.setSecretsPresent({{QStringLiteral("FORGE_K8S_TOKEN"), true}});
        QSet<QString> parents;
        for (const auto &a : changed) parents.insert(a.at(0).toModelIndex().parent().data().toString());
        QVERIFY2(parents.contains(QStringLiteral("Sign-in")) && parents.contains(QStringLiteral("Object storage (S3)")),
                 qPrintable(QStringList(parents.values()).join(u',')));
        QCOMPARE(grouped.indexOfKey(QStringLiteral("FORGE_K8S_TOKEN"), ProfileSettingsModel::ValueColumn).data().toString(),
                 QStringLiteral("set in the keychain"));
    }

    void showsTheTableTranslated()
    {
        // The dialog reads headings, sentences, labels and help in the user's language.
        MarkingTranslator translator;
        QVERIFY(QCoreApplication::installTranslator(&translator));
        ProfileSettingsModel settings(m_manager.get(), QProcessEnvironment());
        GroupedSettingsModel grouped;
        grouped.setSourceModel(&settings);
        settings.setProfile(QStringLiteral("lab"));
        const Config::SettingGroup &first = Config::SettingsSchema::groups().constFirst();
        const QModelIndex heading = grouped.index(0, 0);
        QCOMPARE(heading.data().toString(), QStringLiteral("[de] ") + first.name);
        QCOMPARE(heading.data(GroupedSettingsModel::AboutRole).toString(), QStringLiteral("[de] ") + first.about);
        const QModelIndex server = grouped.indexOfKey(QStringLiteral("FORGE_K8S_API_SERVER"), ProfileSettingsModel::KeyColumn);
        QCOMPARE(server.data().toString(), QStringLiteral("[de] API server"));
        const QString help = Config::SettingsSchema::find(QStringLiteral("FORGE_K8S_API_SERVER"))->help;
        QCOMPARE(server.data(ProfileSettingsModel::HelpRole).toString(), QStringLiteral("[de] ") + help);
        QVERIFY(QCoreApplication::removeTranslator(&translator));
    }
};

QTEST_GUILESS_MAIN(TestGroupedSettingsModel)
#include "tst_groupedsettingsmodel.moc"
