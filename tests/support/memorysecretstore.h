#pragma once

// A SecretStore in memory, for unit tests of the layers above the keychain (ProfileManager, the
// CLI, the profiles dialog). It answers from the event loop, as the keychain does, and can be told
// to fail so the callers' "nothing is lost" paths can be tested. The keychain itself is tested
// against gnome-keyring in tst_keychain.

#include "core/secrets/secretstore.h"

#include <QMap>

namespace Starforge::Testing {

class MemorySecretStore final : public Secrets::SecretStore
{
    Q_OBJECT
public:
    using SecretStore::SecretStore;

    void read(const QString &profile, const QString &key, QObject *context, ReadCallback done) override;
    void write(const QString &profile, const QString &key, const QString &value, QObject *context, DoneCallback done) override;
    void remove(const QString &profile, const QString &key, QObject *context, DoneCallback done) override;

    // "<profile>/<KEY>" -> value, as the keychain names entries.
    QMap<QString, QString> entries;
    // When set, every call fails with Unavailable; writesBeforeFailure lets that many writes pass first.
    bool failing = false;
    int writesBeforeFailure = 0;
    int calls = 0;

private:
    bool shouldFail(bool isWrite);
};

} // namespace Starforge::Testing
