#include "core/session/sessionsource.h"

#include "core/config/embeddedsandbox.h"
#include "core/secrets/secretstore.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <cerrno>
#include <csignal>

namespace Starforge {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(SessionSource)
};

} // namespace

SessionSource SessionSource::ofProfile(Config::Profile profile)
{
    SessionSource source;
    source.profile = std::move(profile);
    return source;
}

SessionSource SessionSource::ofConnectionFile(QString path)
{
    SessionSource source;
    source.connectionFile = std::move(path);
    return source;
}

QString SessionSource::describe() const
{
    return profile ? Text::tr("profile %1").arg(profile->name) : Text::tr("the sandbox's connection file %1").arg(connectionFile);
}

void SessionSource::resolve(Secrets::SecretStore *secrets, const QProcessEnvironment &environment, QObject *context,
                            std::function<void(Result<Config::EffectiveConfig>)> done) const
{
    // Answered from the event loop either way, so a caller never sees its callback run inside
    // the call that asked.
    auto later = [context, done](Result<Config::EffectiveConfig> result) {
        QTimer::singleShot(0, context, [done, result = std::move(result)] { done(result); });
    };
    auto checked = [](Config::EffectiveConfig config) -> Result<Config::EffectiveConfig> {
        if (const auto problems = config.problems(); !problems.isEmpty()) return problems.first();
        return config;
    };
    if (!profile) {
        if (connectionFile.isEmpty() || !QFileInfo::exists(connectionFile)) {
            // The sandbox writes the file once it is ready and removes it when it stops.
            later(Error::invalid(Text::tr("there is no connection file '%1': start the sandbox first "
                                                "(starforge-sandbox --connection-file FILE writes it once it is ready, and removes it when it stops)")
                                     .arg(connectionFile)));
            return;
        }
        auto connection = Config::SandboxConnection::read(connectionFile);
        if (!connection) {
            later(connection.error());
            return;
        }
        later(checked(Config::EffectiveConfig::resolve(Config::Profile{QStringLiteral("sandbox"), connection->settings}, environment,
                                                       connection->secrets)));
        return;
    }
    const Config::Profile chosen = *profile;
    secrets->readAll(chosen.name, context, [chosen, environment, done, checked](Result<QMap<QString, QString>> stored) {
        if (!stored) {
            done(stored.error());
            return;
        }
        done(checked(Config::EffectiveConfig::resolve(chosen, environment, *stored)));
    });
}

QString SessionSource::stoppedReason() const
{
    if (profile) {
        return {};
    }
    QFile file(connectionFile);
    if (!file.open(QIODevice::ReadOnly)) {
        return Text::tr("The starforge-sandbox that wrote %1 has stopped: start it again.").arg(connectionFile);
    }
    const qint64 pid = QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("pid")).toInteger();
    // Gone, or dead and not yet reaped by whoever started it (a zombie still answers kill 0):
    // either way it serves nothing.
    const auto isZombie = [](qint64 process) {
        QFile stat(QStringLiteral("/proc/%1/stat").arg(process));
        if (!stat.open(QIODevice::ReadOnly)) return false;
        const QByteArray text = stat.readAll();
        const qsizetype afterName = text.lastIndexOf(')');   // the name may hold spaces and parentheses
        return afterName > 0 && text.mid(afterName + 1).trimmed().startsWith('Z');
    };
    if (pid > 0 && ((::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) || isZombie(pid))) {
        return Text::tr("The starforge-sandbox that wrote %1 (pid %2) is not running any more: start it again.").arg(connectionFile).arg(pid);
    }
    return {};
}

} // namespace Starforge
