#include "core/secrets/keychainsecretstore.h"

#include "core/logging/logging.h"

#include <qt6keychain/keychain.h>

#include <QPointer>
#include <QTimer>

namespace Starforge::Secrets {

namespace {

// QtKeychain reports a missing or locked Secret Service as OtherError with D-Bus's text; turn
// each case into what the user should do. what: the operation, as "reading %1 of profile '%2'" says it.
Error describe(QKeychain::Error code, const QString &detail, const QString &what)
{
    const QString lower = detail.toLower();
    if (lower.contains(u"org.freedesktop.secrets") || lower.contains(u"autolaunch") || lower.contains(u"d-bus")
        // untranslated: QtKeychain's own text for an unknown D-Bus failure, matched verbatim
        || lower.contains(u"dbus") || code == QKeychain::NoBackendAvailable || lower == u"unknown error") {
        return Error::unavailable(
            //: %1: the operation ("reading FORGE_K8S_TOKEN of profile 'lab'"), %2: the Secret Service's error
            KeychainSecretStore::tr("No Secret Service answered while %1 (%2). Starforge keeps tokens and keys only in the OS "
                                    "keychain: install and start gnome-keyring (apt install gnome-keyring libsecret-1-0) or enable "
                                    "KeePassXC's Secret Service integration, then try again. On a machine without a desktop session, "
                                    "run Starforge under dbus-run-session with gnome-keyring-daemon --unlock.")
                .arg(what, detail));
    }
    if (lower.contains(u"collection") || lower.contains(u"locked") || lower.contains(u"prompt")) {
        //: %1: the operation ("reading FORGE_K8S_TOKEN of profile 'lab'"), %2: the Secret Service's error
        return Error::unavailable(KeychainSecretStore::tr("The keychain is locked or has no default collection while %1 (%2). "
                                                          "Unlock your login keyring (e.g. in Seahorse, \"Passwords and Keys\") and try again.")
                                      .arg(what, detail));
    }
    if (code == QKeychain::AccessDeniedByUser || code == QKeychain::AccessDenied) {
        //: %1: the operation ("reading FORGE_K8S_TOKEN of profile 'lab'"), %2: the Secret Service's error
        return Error::unavailable(KeychainSecretStore::tr("Access to the keychain was denied while %1 (%2). Allow Starforge to use "
                                                          "the keychain and try again.")
                                      .arg(what, detail));
    }
    //: %1: the operation ("reading FORGE_K8S_TOKEN of profile 'lab'"), %2: the Secret Service's error
    return Error::unavailable(KeychainSecretStore::tr("The keychain failed while %1: %2").arg(what, detail));
}

} // namespace

KeychainSecretStore::KeychainSecretStore(QObject *parent) : SecretStore(parent) {}

KeychainSecretStore::~KeychainSecretStore() = default;

QString KeychainSecretStore::entryName(const QString &profile, const QString &key)
{
    return profile + u'/' + key;
}

void KeychainSecretStore::enqueue(std::function<void()> start)
{
    m_queue.enqueue(std::move(start));
    if (!m_busy) {
        m_busy = true;
        m_queue.dequeue()();
    }
}

void KeychainSecretStore::finishCurrent()
{
    // Start the next job from the event loop, never from inside QtKeychain's finished signal.
    QTimer::singleShot(0, this, [this] {
        if (m_queue.isEmpty()) {
            m_busy = false;
            return;
        }
        m_queue.dequeue()();
    });
}

void KeychainSecretStore::read(const QString &profile, const QString &key, QObject *context, ReadCallback done)
{
    QPointer<QObject> guard(context);
    enqueue([this, profile, key, guard, done] {
        auto *job = new QKeychain::ReadPasswordJob(QString::fromLatin1(ServiceName), this);
        job->setAutoDelete(true);
        job->setInsecureFallback(false);
        job->setKey(entryName(profile, key));
        connect(job, &QKeychain::Job::finished, this, [this, job, profile, key, guard, done] {
            // Built by one return per outcome rather than by reassignment: GCC 12 at -O2 reports a
            // false maybe-uninitialized on moving into a std::variant that already holds a value.
            const auto result = [&]() -> Result<std::optional<QString>> {
                const auto error = job->error();
                if (error == QKeychain::NoError) {
                    const QString value = job->textData();
                    Logging::addSecret(value);
                    return std::optional<QString>(value);
                }
                if (error == QKeychain::EntryNotFound) {
                    return std::optional<QString>();
                }
                qCWarning(lcSecrets) << "reading" << entryName(profile, key) << "failed:" << job->errorString();
                return describe(error, job->errorString(),
                                //: the operation a keychain message names after "while"; %1: the setting (FORGE_K8S_TOKEN), %2: the profile
                                tr("reading %1 of profile '%2'").arg(key, profile));
            }();
            finishCurrent();
            if (guard) {
                done(result);
            }
        });
        job->start();
    });
}

void KeychainSecretStore::write(const QString &profile, const QString &key, const QString &value, QObject *context,
                                DoneCallback done)
{
    Logging::addSecret(value);
    QPointer<QObject> guard(context);
    enqueue([this, profile, key, value, guard, done] {
        auto *job = new QKeychain::WritePasswordJob(QString::fromLatin1(ServiceName), this);
        job->setAutoDelete(true);
        job->setInsecureFallback(false);
        job->setKey(entryName(profile, key));
        job->setTextData(value);
        connect(job, &QKeychain::Job::finished, this, [this, job, profile, key, guard, done] {
            Result<void> result;
            if (job->error() != QKeychain::NoError) {
                qCWarning(lcSecrets) << "writing" << entryName(profile, key) << "failed:" << job->errorString();
                //: the operation a keychain message names after "while"; %1: the setting (FORGE_K8S_TOKEN), %2: the profile
                result = describe(job->error(), job->errorString(), tr("saving %1 of profile '%2'").arg(key, profile));
            } else {
                qCDebug(lcSecrets) << "saved" << entryName(profile, key);
            }
            finishCurrent();
            if (guard) {
                done(result);
            }
        });
        job->start();
    });
}

void KeychainSecretStore::remove(const QString &profile, const QString &key, QObject *context, DoneCallback done)
{
    QPointer<QObject> guard(context);
    enqueue([this, profile, key, guard, done] {
        auto *job = new QKeychain::DeletePasswordJob(QString::fromLatin1(ServiceName), this);
        job->setAutoDelete(true);
        job->setInsecureFallback(false);
        job->setKey(entryName(profile, key));
        connect(job, &QKeychain::Job::finished, this, [this, job, profile, key, guard, done] {
            Result<void> result;
            const auto error = job->error();
            if (error != QKeychain::NoError && error != QKeychain::EntryNotFound) {
                qCWarning(lcSecrets) << "removing" << entryName(profile, key) << "failed:" << job->errorString();
                //: the operation a keychain message names after "while"; %1: the setting (FORGE_K8S_TOKEN), %2: the profile
                result = describe(error, job->errorString(), tr("removing %1 of profile '%2'").arg(key, profile));
            }
            finishCurrent();
            if (guard) {
                done(result);
            }
        });
        job->start();
    });
}

} // namespace Starforge::Secrets
