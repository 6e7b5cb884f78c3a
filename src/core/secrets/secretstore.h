#pragma once

// Where the three secrets of a profile live. The interface is asynchronous because the real
// backend (the OS keychain through D-Bus) is; callbacks run on the caller's thread and only
// while their context object is alive. Operations run one at a time, in the order asked.

#include "core/util/result.h"

#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

namespace Starforge::Secrets {

class SecretStore : public QObject
{
    Q_OBJECT
public:
    using ReadCallback = std::function<void(Result<std::optional<QString>>)>; // nullopt: not set
    using ReadAllCallback = std::function<void(Result<QMap<QString, QString>>)>;
    using DoneCallback = std::function<void(Result<void>)>;

    explicit SecretStore(QObject *parent = nullptr) : QObject(parent) {}

    virtual void read(const QString &profile, const QString &key, QObject *context, ReadCallback done) = 0;
    virtual void write(const QString &profile, const QString &key, const QString &value, QObject *context, DoneCallback done) = 0;
    // Removing an entry that does not exist succeeds.
    virtual void remove(const QString &profile, const QString &key, QObject *context, DoneCallback done) = 0;

    // The secrets of a profile that are set (of SettingsSchema::secretKeys()).
    void readAll(const QString &profile, QObject *context, ReadAllCallback done);
    void removeAll(const QString &profile, QObject *context, DoneCallback done);
    // Copies every secret of one profile to another (for duplicate), optionally removing the
    // originals afterwards (for rename). Originals are removed only once all copies succeeded.
    void copyAll(const QString &fromProfile, const QString &toProfile, bool removeOriginals, QObject *context, DoneCallback done);
    // Applies a batch: a value sets a secret, an empty string removes it.
    void apply(const QString &profile, const QMap<QString, QString> &changes, QObject *context, DoneCallback done);
};

} // namespace Starforge::Secrets
