#pragma once

// Every change to connection profiles, for the GUI and the CLI alike. A change touches the
// profiles file and the keychain together, so it is ordered to lose nothing: secrets are written
// (or copied) first and the file only when they succeeded; secrets are removed only after the
// file no longer needs them. Each operation is asynchronous because the keychain is.

#include "core/config/kubeconfig.h"
#include "core/config/profilestore.h"
#include "core/util/result.h"

#include <QMap>
#include <QObject>

#include <functional>

namespace Starforge::Secrets {
class SecretStore;
}

namespace Starforge::Config {

class ProfileManager final : public QObject
{
    Q_OBJECT
public:
    using Done = std::function<void(Result<void>)>;

    // Neither is owned; both must outlive the manager.
    ProfileManager(ProfileStore *store, Secrets::SecretStore *secrets, QObject *parent = nullptr);

    const ProfileStore &store() const { return *m_store; }
    Secrets::SecretStore *secrets() const { return m_secrets; }

    // Checks a batch of settings (secrets included) without applying them; all problems at once.
    Result<void> checkValues(const QMap<QString, QString> &values) const;

    // Sets settings and secrets of a profile; an empty value resets a setting or clears a secret.
    // All are validated first: one bad value changes nothing.
    void setValues(const QString &profile, const QMap<QString, QString> &values, bool createIfMissing, QObject *context, Done done);
    // Replaces a profile's connection settings (server, CA, TLS, token) with a kubeconfig context's.
    void importKubeconfig(const KubeconfigImport &imported, const QString &profile, QObject *context, Done done);

    void addProfile(const QString &name, QObject *context, Done done);
    void duplicateProfile(const QString &source, const QString &newName, QObject *context, Done done);
    void renameProfile(const QString &oldName, const QString &newName, QObject *context, Done done);
    // Removes the secrets, then the profile. When the keychain fails the profile stays, unless
    // force is set; then warning (if given) receives what was left in the keychain.
    void removeProfile(const QString &name, bool force, QObject *context, Done done, std::function<void(QString)> warning = {});
    Result<void> setActiveProfile(const QString &name);

    // Moves secrets that load() found in a hand-written file into the keychain, then saves.
    void moveMigratedSecrets(const MigrationReport &report, QObject *context, Done done);

    // A profile name made from a kubeconfig context name ("user@cluster" -> "user-cluster").
    static QString profileNameFromContext(const QString &contextName);

Q_SIGNALS:
    void profilesChanged();                      // added, removed, renamed, active changed
    void profileChanged(const QString &name);    // a profile's settings or secrets changed

private:
    Result<void> commit(const ProfileStore &updated);

    ProfileStore *m_store;
    Secrets::SecretStore *m_secrets;
};

} // namespace Starforge::Config
