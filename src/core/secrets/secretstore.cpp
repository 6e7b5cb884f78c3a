#include "core/secrets/secretstore.h"

#include "core/config/settingsschema.h"

#include <QPointer>

#include <memory>

namespace Starforge::Secrets {

namespace {

// Runs a list of steps one after the other, stopping at the first error.
struct Chain : std::enable_shared_from_this<Chain>
{
    using Step = std::function<void(std::function<void(Result<void>)>)>;
    QList<Step> steps;
    std::function<void(Result<void>)> finished;

    void run(qsizetype index)
    {
        if (index >= steps.size()) {
            finished({});
            return;
        }
        auto self = shared_from_this();
        steps[index]([self, index](Result<void> result) {
            if (!result) {
                self->finished(result);
                return;
            }
            self->run(index + 1);
        });
    }
};

} // namespace

void SecretStore::readAll(const QString &profile, QObject *context, ReadAllCallback done)
{
    auto values = std::make_shared<QMap<QString, QString>>();
    auto chain = std::make_shared<Chain>();
    for (const QString &key : Config::SettingsSchema::secretKeys()) {
        chain->steps.append([this, profile, key, values, context](auto next) {
            read(profile, key, context, [key, values, next](Result<std::optional<QString>> result) {
                if (!result) {
                    next(result.error());
                    return;
                }
                if (result.value()) {
                    values->insert(key, **result);
                }
                next({});
            });
        });
    }
    QPointer<QObject> guard(context);
    chain->finished = [values, done, guard](Result<void> result) {
        if (!guard) {
            return;
        }
        if (!result) {
            done(result.error());
            return;
        }
        done(*values);
    };
    chain->run(0);
}

void SecretStore::removeAll(const QString &profile, QObject *context, DoneCallback done)
{
    QMap<QString, QString> changes;
    for (const QString &key : Config::SettingsSchema::secretKeys()) {
        changes.insert(key, QString());
    }
    apply(profile, changes, context, std::move(done));
}

void SecretStore::apply(const QString &profile, const QMap<QString, QString> &changes, QObject *context, DoneCallback done)
{
    auto chain = std::make_shared<Chain>();
    for (auto it = changes.cbegin(); it != changes.cend(); ++it) {
        const QString key = it.key();
        const QString value = it.value();
        chain->steps.append([this, profile, key, value, context](auto next) {
            if (value.isEmpty()) {
                remove(profile, key, context, next);
            } else {
                write(profile, key, value, context, next);
            }
        });
    }
    QPointer<QObject> guard(context);
    chain->finished = [done, guard](Result<void> result) {
        if (guard) {
            done(result);
        }
    };
    chain->run(0);
}

void SecretStore::copyAll(const QString &fromProfile, const QString &toProfile, bool removeOriginals, QObject *context,
                          DoneCallback done)
{
    QPointer<QObject> guard(context);
    readAll(fromProfile, context, [this, fromProfile, toProfile, removeOriginals, context, done, guard](Result<QMap<QString, QString>> values) {
        if (!values) {
            done(values.error());
            return;
        }
        // Keys the source lacks are cleared in the target, so it ends up an exact copy.
        QMap<QString, QString> changes;
        for (const QString &key : Config::SettingsSchema::secretKeys()) {
            changes.insert(key, values->value(key));
        }
        apply(toProfile, changes, context, [this, fromProfile, removeOriginals, context, done, guard](Result<void> copied) {
            if (!copied || !removeOriginals) {
                done(copied);
                return;
            }
            removeAll(fromProfile, context, done);
        });
    });
}

} // namespace Starforge::Secrets
