#include "core/i18n/translations.h"

#include "core/config/profilestore.h"
#include "core/logging/logging.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QLibraryInfo>
#include <QSettings>
#include <QTranslator>

namespace Starforge::I18n {

QString environmentLanguage()
{
    return qEnvironmentVariable("STARFORGE_LANGUAGE").trimmed();
}

QLocale localeFor(const QString &language)
{
    return language.isEmpty() ? QLocale::system() : QLocale(language);
}

QLocale installTranslators(const QString &language)
{
    const QString chosen = language.isEmpty() ? environmentLanguage() : language;
    const QLocale locale = localeFor(chosen);
    QLocale::setDefault(locale);
    QCoreApplication *app = QCoreApplication::instance();
    if (!app) {
        return locale;
    }
    // Where translations/CMakeLists.txt embeds the compiled catalogues.
    const QString folder = QStringLiteral(":/i18n");
    const QString name = QStringLiteral("starforge");
    // Installed first, so consulted last: the English plural forms under every language, for
    // the %n messages a language's catalogue does not translate yet.
    auto *english = new QTranslator(app);
    if (english->load(name + QStringLiteral("_en"), folder)) {
        QCoreApplication::installTranslator(english);
    } else {
        delete english;
    }
    // English needs nothing more; any other language (its country variant, else the language
    // alone: zh_CN, else zh) comes on top.
    if (locale.language() != QLocale::English) {
        // Qt's own texts (a dialog's Close and Cancel, the file dialog, the context menus) come
        // from Qt's catalogue (Debian: qt6-translations-l10n), installed before ours so ours win.
        auto *qt = new QTranslator(app);
        if (qt->load(locale, QStringLiteral("qtbase"), QStringLiteral("_"), QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
            QCoreApplication::installTranslator(qt);
        } else {
            qCDebug(lcConfig).noquote() << "no Qt catalogue for" << locale.name() << "- Qt's own buttons stay in English";
            delete qt;
        }
        auto *translator = new QTranslator(app);
        if (translator->load(locale, name, QStringLiteral("_"), folder)) {
            QCoreApplication::installTranslator(translator);
        } else {
            qCDebug(lcConfig).noquote() << "no catalogue for" << locale.name() << "- its messages stay in English";
            delete translator;
        }
    }
    return locale;
}

namespace {

QString preferencesFile()
{
    return QFileInfo(Config::ProfileStore::defaultFilePath()).dir().filePath(QStringLiteral("window.ini"));
}

const QString LanguageKey = QStringLiteral("preferences/language");

} // namespace

QString savedLanguage()
{
    return QSettings(preferencesFile(), QSettings::IniFormat).value(LanguageKey).toString();
}

void saveLanguage(const QString &language)
{
    QSettings(preferencesFile(), QSettings::IniFormat).setValue(LanguageKey, language);
}

QString startLanguage()
{
    const QString once = environmentLanguage();
    return once.isEmpty() ? savedLanguage() : once;
}

} // namespace Starforge::I18n
