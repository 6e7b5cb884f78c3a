#include "support/memorysecretstore.h"

#include <QPointer>
#include <QTimer>

namespace Starforge::Testing {

namespace {
QString entry(const QString &profile, const QString &key)
{
    return profile + u'/' + key;
}
const Error unavailable = Error::unavailable(QStringLiteral("the test keychain is switched off."));
} // namespace

bool MemorySecretStore::shouldFail(bool isWrite)
{
    ++calls;
    if (!failing) {
        return false;
    }
    if (isWrite && writesBeforeFailure > 0) {
        --writesBeforeFailure;
        return false;
    }
    return true;
}

void MemorySecretStore::read(const QString &profile, const QString &key, QObject *context, ReadCallback done)
{
    const bool fail = shouldFail(false);
    const auto it = entries.constFind(entry(profile, key));
    Result<std::optional<QString>> result = fail ? Result<std::optional<QString>>(unavailable)
                                                 : Result<std::optional<QString>>(it == entries.cend() ? std::nullopt : std::optional<QString>(*it));
    QTimer::singleShot(0, context, [done, result] { done(result); });
}

void MemorySecretStore::write(const QString &profile, const QString &key, const QString &value, QObject *context, DoneCallback done)
{
    const bool fail = shouldFail(true);
    if (!fail) {
        entries.insert(entry(profile, key), value);
    }
    QTimer::singleShot(0, context, [done, fail] { done(fail ? Result<void>(unavailable) : Result<void>()); });
}

void MemorySecretStore::remove(const QString &profile, const QString &key, QObject *context, DoneCallback done)
{
    const bool fail = shouldFail(false);
    if (!fail) {
        entries.remove(entry(profile, key));
    }
    QTimer::singleShot(0, context, [done, fail] { done(fail ? Result<void>(unavailable) : Result<void>()); });
}

} // namespace Starforge::Testing
