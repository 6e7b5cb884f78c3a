#pragma once

// SecretStore on the OS keychain through QtKeychain: the Secret Service (gnome-keyring,
// KeePassXC) on Linux, Keychain on macOS, Credential Manager on Windows. Service "starforge",
// one entry per profile and secret, named "<profile>/<KEY>". There is no plaintext fallback:
// when no keychain answers, every call fails with a message saying what to install or unlock.

#include "core/secrets/secretstore.h"

#include <QQueue>

namespace Starforge::Secrets {

class KeychainSecretStore final : public SecretStore
{
    Q_OBJECT
public:
    static constexpr const char *ServiceName = "starforge";

    explicit KeychainSecretStore(QObject *parent = nullptr);
    ~KeychainSecretStore() override;

    void read(const QString &profile, const QString &key, QObject *context, ReadCallback done) override;
    void write(const QString &profile, const QString &key, const QString &value, QObject *context, DoneCallback done) override;
    void remove(const QString &profile, const QString &key, QObject *context, DoneCallback done) override;

    static QString entryName(const QString &profile, const QString &key);

private:
    void enqueue(std::function<void()> start);
    void finishCurrent();

    QQueue<std::function<void()>> m_queue;
    bool m_busy = false;
};

} // namespace Starforge::Secrets
