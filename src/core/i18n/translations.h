#pragma once

// The catalogues the executables load (issue 15). The English source strings are the reference;
// translations/ compiles a catalogue per language and embeds it under :/i18n. One function puts
// them in place for starforge and starforge-cli alike, so the two always agree on the language.
//
// The language is, in this order: the one the caller passes (the GUI will pass a saved choice
// there), else $STARFORGE_LANGUAGE ("de", "zh_CN", "en"), else the system locale. The same
// language becomes QLocale's default, so numbers and dates written with QLocale() follow it.

#include <QLocale>
#include <QString>

namespace Starforge::I18n {

// $STARFORGE_LANGUAGE, or "" when it is unset or empty (then the system locale decides).
QString environmentLanguage();

// The locale of a language name ("de", "zh_CN", "en"); "" is the system locale.
QLocale localeFor(const QString &language);

// Installs the catalogues into the running QCoreApplication: first starforge_en, which holds
// only the English singular and plural forms of the %n messages ("1 secret", "2 secrets"),
// then the catalogue of the chosen language, which Qt consults first. A missing catalogue is
// not an error: its messages stay in English. Sets QLocale::setDefault to the language and
// returns that locale. language: the caller's choice; "" means $STARFORGE_LANGUAGE, else the
// system locale. The translators belong to the application; call this once, after it exists.
QLocale installTranslators(const QString &language = QString());

// The language the person chose in the app (View › Language): "" follows the system. Kept in
// window.ini beside the default profiles file (ProfileStore::defaultFilePath()), so every
// session of the app, the sandbox's included, starts in it.
QString savedLanguage();
void saveLanguage(const QString &language);

// The language for the app's start: $STARFORGE_LANGUAGE for one run beats the saved choice.
QString startLanguage();

} // namespace Starforge::I18n
