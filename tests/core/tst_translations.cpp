// I18n::installTranslators: the language chosen (argument, else $STARFORGE_LANGUAGE, else the
// system's), QLocale's default set to it, the English plural forms under every language, Qt's
// own catalogue beside ours, and a language without a catalogue left in English. The catalogues are the test's own
// (tests/data/i18n), embedded under :/i18n as the executables embed theirs.

#include "core/i18n/translations.h"

#include <QCoreApplication>
#include <QLocale>
#include <QTest>

class TranslationsTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Runs first: the translators stay installed for the process, as in the executables.
    void languageWithoutCatalogueStaysEnglish()
    {
        qputenv("STARFORGE_LANGUAGE", "zh_CN");
        QCOMPARE(Starforge::I18n::environmentLanguage(), QStringLiteral("zh_CN"));
        const QLocale locale = Starforge::I18n::installTranslators();
        QCOMPARE(locale.name(), QStringLiteral("zh_CN"));
        QCOMPARE(QLocale().name(), QStringLiteral("zh_CN"));
        // No zh_CN catalogue: the English text, with the English catalogue's plural forms.
        QCOMPARE(tr("the job has ended"), QStringLiteral("the job has ended"));
        QCOMPARE(tr("%n secret(s) moved", nullptr, 1), QStringLiteral("1 secret moved"));
        QCOMPARE(tr("%n secret(s) moved", nullptr, 3), QStringLiteral("3 secrets moved"));
    }

    void argumentWinsOverEnvironment()
    {
        qputenv("STARFORGE_LANGUAGE", "en");
        const QLocale locale = Starforge::I18n::installTranslators(QStringLiteral("de"));
        QCOMPARE(locale.language(), QLocale::German);
        QCOMPARE(QLocale().language(), QLocale::German);
        QCOMPARE(QLocale().toString(1234.5, 'f', 1), QStringLiteral("1.234,5"));
        QCOMPARE(tr("the job has ended"), QStringLiteral("der Job ist beendet"));
        // Qt's own texts (a dialog's Close) from Qt's catalogue (qt6-translations-l10n).
        QCOMPARE(QCoreApplication::translate("QPlatformTheme", "Close"), QStringLiteral("Schließen"));
        // Not in the German catalogue: English, in its proper plural form.
        QCOMPARE(tr("%n secret(s) moved", nullptr, 2), QStringLiteral("2 secrets moved"));
    }

    void emptyMeansTheSystemLocale()
    {
        qunsetenv("STARFORGE_LANGUAGE");
        QCOMPARE(Starforge::I18n::environmentLanguage(), QString());
        QCOMPARE(Starforge::I18n::localeFor(QString()), QLocale::system());
        QCOMPARE(Starforge::I18n::localeFor(QStringLiteral("zh_CN")).name(), QStringLiteral("zh_CN"));
    }
};

QTEST_GUILESS_MAIN(TranslationsTest)
#include "tst_translations.moc"
