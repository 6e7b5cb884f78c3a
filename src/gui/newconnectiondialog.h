#pragma once

// "Enter a server" on a first run: the four things a connection needs, in one small form (a
// profile name, the API server's URL, a token, the namespace) plus the CA file for a private
// certificate authority. Each field is checked as it is typed with the settings table's own
// validation, its problem shown under the form, and Create stays off until there is none. The
// token goes to the keychain with the rest (ProfileManager::setValues), never to the file.

#include <QDialog>
#include <QMap>

class QDialogButtonBox;
class QLabel;
class QLineEdit;

namespace Starforge::Config {
class ProfileStore;
}

namespace Starforge::Gui {

class NewConnectionDialog final : public QDialog
{
    Q_OBJECT
public:
    explicit NewConnectionDialog(const Config::ProfileStore &store, QWidget *parent = nullptr);

    QString profileName() const;
    // FORGE_* key -> value for ProfileManager::setValues (the token included); valid once
    // problems() is empty.
    QMap<QString, QString> values() const;
    QStringList problems() const;

private:
    void check();

    const Config::ProfileStore &m_store;
    QLineEdit *m_name;
    QLineEdit *m_server;
    QLineEdit *m_token;
    QLineEdit *m_namespace;
    QLineEdit *m_caFile;
    QLabel *m_problems;
    QDialogButtonBox *m_buttons;
};

} // namespace Starforge::Gui
