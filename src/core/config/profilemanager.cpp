#include "core/config/profilemanager.h"

#include "core/config/settingsschema.h"
#include "core/secrets/secretstore.h"

#include <QPointer>

namespace Starforge::Config {

namespace {

// The settings a kubeconfig import owns; the ones it does not set are cleared, so that a stale CA
// or token file does not survive a re-import.
const QStringList &connectionKeys()
{
    static const QStringList keys{QStringLiteral("FORGE_K8S_API_SERVER"), QStringLiteral("FORGE_K8S_CA_FILE"),
                                  QStringLiteral("FORGE_K8S_CA_DATA"), QStringLiteral("FORGE_K8S_INSECURE_SKIP_TLS_VERIFY"),
                                  QStringLiteral("FORGE_K8S_TOKEN_FILE"), QStringLiteral("FORGE_K8S_CLIENT_CERT_FILE"),
                                  QStringLiteral("FORGE_K8S_CLIENT_CERT_DATA"), QStringLiteral("FORGE_K8S_CLIENT_KEY_FILE"),
                                  QStringLiteral("FORGE_K8S_EXEC"), QStringLiteral("FORGE_K8S_TLS_SERVER_NAME"),
                                  QStringLiteral("FORGE_K8S_PROXY_URL")};
    return keys;
}

} // namespace

ProfileManager::ProfileManager(ProfileStore *store, Secrets::SecretStore *secrets, QObject *parent)
    : QObject(parent), m_store(store), m_secrets(secrets)
{
}

QString ProfileManager::profileNameFromContext(const QString &contextName)
{
    QString name = contextName;
    for (QChar &c : name) {
        if (!(c.isLetterOrNumber() || c == u'.' || c == u'_' || c == u'-') || c.unicode() > 127) {
            c = u'-';
        }
    }
    while (name.startsWith(u'-') || name.startsWith(u'.') || name.startsWith(u'_')) {
        name.remove(0, 1);
    }
    return name.left(63);
}

Result<void> ProfileManager::commit(const ProfileStore &updated)
{
    ProfileStore previous = *m_store;
    *m_store = updated;
    if (auto saved = m_store->save(); !saved) {
        *m_store = previous;
        return saved;
    }
    return {};
}

Result<void> ProfileManager::checkValues(const QMap<QString, QString> &values) const
{
    QStringList problems;
    for (auto it = values.cbegin(); it != values.cend(); ++it) {
        if (SettingsSchema::find(it.key()) && it.value().trimmed().isEmpty()) {
            continue; // an empty value resets a setting or clears a secret
        }
        if (auto checked = SettingsSchema::validate(it.key(), it.value()); !checked) {
            problems.append(checked.error().message);
        }
    }
    if (!problems.isEmpty()) {
        return Error::invalid(problems.join(u'\n'));
    }
    return {};
}

void ProfileManager::setValues(const QString &profile, const QMap<QString, QString> &values, bool createIfMissing,
                               QObject *context, Done done)
{
    if (auto ok = checkValues(values); !ok) {
        done(Error::invalid(tr("%1\nNothing was changed.").arg(ok.error().message)));
        return;
    }
    ProfileStore updated = *m_store;
    const bool created = !updated.contains(profile);
    if (created) {
        if (!createIfMissing) {
            done(Error::notFound(tr("there is no profile named '%1'").arg(profile)));
            return;
        }
        if (auto added = updated.addProfile(profile); !added) {
            done(added);
            return;
        }
    }
    QMap<QString, QString> secretChanges;
    for (auto it = values.cbegin(); it != values.cend(); ++it) {
        const SettingDefinition *d = SettingsSchema::find(it.key());
        if (d->isSecret()) {
            secretChanges.insert(it.key(), it.value().trimmed()); // secrets are opaque; a pasted newline goes
        } else if (auto set = updated.setValue(profile, it.key(), it.value()); !set) {
            done(set);
            return;
        }
    }
    QPointer<QObject> guard(context);
    auto finishWith = [this, updated, profile, created, guard, done]() {
        auto committed = commit(updated);
        if (committed) {
            if (created) {
                Q_EMIT profilesChanged();
            }
            Q_EMIT profileChanged(profile);
        }
        if (guard) {
            done(committed);
        }
    };
    if (secretChanges.isEmpty()) {
        finishWith();
        return;
    }
    m_secrets->apply(profile, secretChanges, this, [finishWith, guard, done](Result<void> applied) {
        if (!applied) {
            if (guard) {
                done(Error::unavailable(tr("%1 Nothing was changed.").arg(applied.error().message)));
            }
            return;
        }
        finishWith();
    });
}

void ProfileManager::importKubeconfig(const KubeconfigImport &imported, const QString &profile, QObject *context, Done done)
{
    ProfileStore updated = *m_store;
    const bool created = !updated.contains(profile);
    if (created) {
        if (auto added = updated.addProfile(profile); !added) {
            done(added);
            return;
        }
    }
    for (const QString &key : connectionKeys()) {
        (void)updated.unsetValue(profile, key);
    }
    for (auto it = imported.values.cbegin(); it != imported.values.cend(); ++it) {
        if (auto set = updated.setValue(profile, it.key(), it.value()); !set) {
            done(set);
            return;
        }
    }
    if (updated.activeProfile().isEmpty()) {
        (void)updated.setActiveProfile(profile);
    }
    QPointer<QObject> guard(context);
    // An empty secret (the context uses a token file, a key file) clears an old one from the
    // keychain.
    m_secrets->apply(profile, imported.secrets, this, [this, updated, profile, created, guard, done](Result<void> applied) {
        if (!applied) {
            if (guard) {
                done(Error::unavailable(tr("%1 The profile was not imported.").arg(applied.error().message)));
            }
            return;
        }
        auto committed = commit(updated);
        if (committed) {
            Q_EMIT profilesChanged();
            Q_EMIT profileChanged(profile);
        }
        if (guard) {
            done(committed);
        }
    });
}

void ProfileManager::addProfile(const QString &name, QObject *context, Done done)
{
    Q_UNUSED(context);
    ProfileStore updated = *m_store;
    if (auto added = updated.addProfile(name); !added) {
        done(added);
        return;
    }
    auto committed = commit(updated);
    if (committed) {
        Q_EMIT profilesChanged();
    }
    done(committed);
}

void ProfileManager::duplicateProfile(const QString &source, const QString &newName, QObject *context, Done done)
{
    ProfileStore updated = *m_store;
    if (auto copied = updated.duplicateProfile(source, newName); !copied) {
        done(copied);
        return;
    }
    QPointer<QObject> guard(context);
    m_secrets->copyAll(source, newName, false, this, [this, updated, guard, done](Result<void> copied) {
        Result<void> result = copied ? commit(updated) : Result<void>(Error::unavailable(tr("%1 The profile was not duplicated.").arg(copied.error().message)));
        if (result) {
            Q_EMIT profilesChanged();
        }
        if (guard) {
            done(result);
        }
    });
}

void ProfileManager::renameProfile(const QString &oldName, const QString &newName, QObject *context, Done done)
{
    ProfileStore updated = *m_store;
    if (auto renamed = updated.renameProfile(oldName, newName); !renamed) {
        done(renamed);
        return;
    }
    if (oldName == newName) {
        done({});
        return;
    }
    QPointer<QObject> guard(context);
    // Copy the secrets, write the file, and only then remove the old entries: a failure at any
    // point leaves a working profile under one of the names.
    m_secrets->copyAll(oldName, newName, false, this, [this, updated, oldName, guard, done](Result<void> copied) {
        if (!copied) {
            if (guard) {
                done(Error::unavailable(tr("%1 The profile was not renamed.").arg(copied.error().message)));
            }
            return;
        }
        auto committed = commit(updated);
        if (!committed) {
            if (guard) {
                done(committed);
            }
            return;
        }
        Q_EMIT profilesChanged();
        m_secrets->removeAll(oldName, this, [guard, done](Result<void> removed) {
            if (guard) {
                done(removed);
            }
        });
    });
}

void ProfileManager::removeProfile(const QString &name, bool force, QObject *context, Done done, std::function<void(QString)> warning)
{
    if (!m_store->contains(name)) {
        done(Error::notFound(tr("there is no profile named '%1'").arg(name)));
        return;
    }
    QPointer<QObject> guard(context);
    m_secrets->removeAll(name, this, [this, name, force, guard, done, warning](Result<void> removed) {
        if (!removed && !force) {
            if (guard) {
                done(Error::unavailable(tr("%1 The profile was kept so that its secrets are not orphaned; delete it "
                                           "with --force to leave them in the keychain.")
                                            .arg(removed.error().message)));
            }
            return;
        }
        ProfileStore updated = *m_store;
        (void)updated.removeProfile(name);
        auto committed = commit(updated);
        if (committed) {
            Q_EMIT profilesChanged();
            if (!removed && warning) {
                warning(tr("the secrets of profile '%1' may remain in the keychain (service starforge); remove "
                           "them with: secret-tool clear server starforge user %1/FORGE_K8S_TOKEN, and likewise "
                           "for FORGE_S3_ACCESS_KEY and FORGE_S3_SECRET_KEY")
                            .arg(name));
            }
        }
        if (guard) {
            done(committed);
        }
    });
}

Result<void> ProfileManager::setActiveProfile(const QString &name)
{
    ProfileStore updated = *m_store;
    if (auto set = updated.setActiveProfile(name); !set) {
        return set;
    }
    auto committed = commit(updated);
    if (committed) {
        Q_EMIT profilesChanged();
    }
    return committed;
}

void ProfileManager::moveMigratedSecrets(const MigrationReport &report, QObject *context, Done done)
{
    if (report.secretsToMove.isEmpty()) {
        if (report.migrated()) {
            done(commit(*m_store));
        } else {
            done({});
        }
        return;
    }
    QMap<QString, QMap<QString, QString>> byProfile;
    for (const auto &[profile, key, value] : report.secretsToMove) {
        if (m_store->contains(profile)) {
            byProfile[profile].insert(key, value);
        }
    }
    QPointer<QObject> guard(context);
    auto remaining = std::make_shared<QStringList>(byProfile.keys());
    auto step = std::make_shared<std::function<void()>>();
    *step = [this, byProfile, remaining, step, guard, done]() {
        if (remaining->isEmpty()) {
            // Only now is the file rewritten without the secrets.
            auto committed = commit(*m_store);
            if (guard) {
                done(committed);
            }
            *step = nullptr; // break the cycle
            return;
        }
        const QString profile = remaining->takeFirst();
        m_secrets->apply(profile, byProfile.value(profile), this, [step, guard, done](Result<void> applied) {
            if (!applied) {
                if (guard) {
                    done(Error::unavailable(tr("%1 The settings file still holds secrets; they move into the "
                                               "keychain the next time it answers.")
                                                .arg(applied.error().message)));
                }
                *step = nullptr;
                return;
            }
            (*step)();
        });
    };
    (*step)();
}

} // namespace Starforge::Config
