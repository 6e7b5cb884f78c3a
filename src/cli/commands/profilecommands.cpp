// The `starforge-cli profile ...` commands.

#include "cli/commands/commands.h"
#include "cli/output.h"
#include "core/config/effectiveconfig.h"
#include "core/config/kubeconfig.h"
#include "core/config/profilemanager.h"
#include "core/config/settingsschema.h"
#include "core/config/validation.h"
#include "core/logging/logging.h"
#include "core/secrets/secretstore.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonObject>

namespace Starforge::Cli {

namespace {

bool isSecretKey(const QString &key)
{
    const Config::SettingDefinition *d = Config::SettingsSchema::find(key);
    return d && d->isSecret();
}

QString readStandardInput()
{
    QFile in;
    if (!in.open(stdin, QIODevice::ReadOnly)) {
        return QString();
    }
    QString text = QString::fromUtf8(in.readAll());
    while (text.endsWith(u'\n') || text.endsWith(u'\r')) {
        text.chop(1);
    }
    return text;
}

class ProfileCommand final : public Command
{
    Q_OBJECT
public:
    using Verb = void (ProfileCommand::*)();
    ProfileCommand(const CommandContext &context, Verb verb)
        : Command(context)
        , m_verb(verb)
    {
    }

    void run() override
    {
        if (auto loaded = loadStore(); !loaded) {
            fail(loaded.error());
            return;
        }
        // A hand-written or older file is brought up to date first (secrets into the keychain).
        m_profiles->moveMigratedSecrets(m_migration, this, [this](Result<void> moved) {
            if (!moved) {
                fail(moved.error());
                return;
            }
            if (!m_migration.secretsToMove.isEmpty()) {
                m_err << tr("starforge-cli: note: moved %n secret(s) from the settings file into the keychain", nullptr,
                            int(m_migration.secretsToMove.size()))
                      << Qt::endl;
            }
            (this->*m_verb)();
        });
    }

    void list();
    void show();
    void set();
    void importKubeconfig();
    void remove();
    void use();
    void rename();
    void duplicate();

private:
    Verb m_verb;
};

} // namespace

void ProfileCommand::list()
{
    const bool json = m_args.flag(QStringLiteral("json"));
    QJsonArray array;
    QList<QStringList> rows;
    const QString active = m_store->activeProfile();
    for (const QString &name : m_store->profileNames()) {
        const auto profile = m_store->profile(name);
        const QString server = profile->values.value(QStringLiteral("FORGE_K8S_API_SERVER"));
        const QString ns = profile->values.value(QStringLiteral("FORGE_K8S_NAMESPACE"),
                                                 Config::SettingsSchema::find(QStringLiteral("FORGE_K8S_NAMESPACE"))->defaultValue);
        array.append(QJsonObject{{QStringLiteral("name"), name},
                                 {QStringLiteral("active"), name == active},
                                 {QStringLiteral("server"), server},
                                 {QStringLiteral("namespace"), ns}});
        rows.append({name == active ? QStringLiteral("*") : QString(), name, server.isEmpty() ? QStringLiteral("-") : server, ns});
    }
    if (json) {
        printJson(m_out, array);
    } else if (rows.isEmpty()) {
        m_out << tr("No profiles yet. Create one with `starforge-cli profile set NAME FORGE_K8S_API_SERVER=https://...` "
                    "or `starforge-cli profile import-kubeconfig`.")
              << Qt::endl;
    } else {
        // untranslated: column keys, as kubectl's; scripts pick columns of the table by them
        m_out << formatTable({QStringLiteral("ACTIVE"), QStringLiteral("NAME"), QStringLiteral("SERVER"), QStringLiteral("NAMESPACE")}, rows);
    }
    finish(Ok);
}

void ProfileCommand::show()
{
    QString name = m_args.positionals.value(2);
    if (name.isEmpty()) {
        name = selectedProfile();
    }
    std::optional<Config::Profile> profile;
    if (!name.isEmpty()) {
        profile = m_store->profile(name);
        if (!profile) {
            fail(Error::notFound(tr("there is no profile named '%1'; `starforge-cli profile list` shows them").arg(name)));
            return;
        }
    }
    auto print = [this, profile](const QMap<QString, QString> &secrets, const QString &keychainProblem) {
        const auto config = Config::EffectiveConfig::resolve(profile, m_environment, secrets);
        const bool json = m_args.flag(QStringLiteral("json"));
        QJsonArray settings;
        QList<QStringList> rows;
        for (const Config::EffectiveValue &v : config.values()) {
            const bool secret = v.definition->isSecret();
            QString shown = secret ? (v.value.isEmpty() ? QString() : tr("(set)")) : v.value;
            QJsonObject object{{QStringLiteral("key"), v.key()},
                               {QStringLiteral("value"), secret ? QJsonValue(!v.value.isEmpty()) : QJsonValue(v.value)},
                               {QStringLiteral("source"), Config::sourceName(v.source)},
                               {QStringLiteral("secret"), secret}};
            QString source = Config::sourceDisplayName(v.source);   // the human table; --json keeps sourceName()
            if (v.problem) {
                object.insert(QStringLiteral("error"), v.problem->message);
                source += tr(" (invalid: %1)").arg(v.problem->message);
            }
            settings.append(object);
            rows.append({v.key(), shown.isEmpty() ? QStringLiteral("-") : shown, source});
        }
        if (json) {
            QJsonObject object{{QStringLiteral("profile"), profile ? QJsonValue(profile->name) : QJsonValue()},
                               {QStringLiteral("active"), profile && profile->name == m_store->activeProfile()},
                               {QStringLiteral("settings"), settings}};
            if (!keychainProblem.isEmpty()) {
                object.insert(QStringLiteral("keychainError"), keychainProblem);
            }
            printJson(m_out, object);
        } else {
            m_out << (!profile                                         ? tr("Profile: (none: defaults and environment only)")
                      : profile->name == m_store->activeProfile() ? tr("Profile: %1 (active)").arg(profile->name)
                                                                  : tr("Profile: %1").arg(profile->name))
                  << "\n\n";
            // untranslated: column keys, as kubectl's; scripts pick columns of the table by them
            m_out << formatTable({QStringLiteral("SETTING"), QStringLiteral("VALUE"), QStringLiteral("SOURCE")}, rows);
        }
        if (!keychainProblem.isEmpty()) {
            m_err << tr("starforge-cli: warning: secrets not shown: %1").arg(keychainProblem) << Qt::endl;
        }
        const auto problems = config.problems();
        for (const Error &e : problems) {
            m_err << "starforge-cli: " << e.message << Qt::endl;
        }
        finish(problems.isEmpty() ? Ok : UserError);
    };
    if (!profile) {
        print({}, QString());
        return;
    }
    m_secrets->readAll(profile->name, this, [print](Result<QMap<QString, QString>> secrets) {
        if (!secrets) {
            print({}, secrets.error().message);
        } else {
            print(*secrets, QString());
        }
    });
}

void ProfileCommand::set()
{
    const QString name = m_args.positionals.value(2);
    const QStringList items = m_args.positionals.mid(3);
    if (name.isEmpty() || items.isEmpty()) {
        fail(Error::invalid(tr("usage: starforge-cli profile set NAME KEY=VALUE... | NAME KEY --stdin | NAME KEY --from-env")));
        return;
    }
    const bool fromStdin = m_args.flag(QStringLiteral("stdin"));
    const bool fromEnv = m_args.flag(QStringLiteral("from-env"));
    if (fromStdin && fromEnv) {
        fail(Error::invalid(tr("use either --stdin or --from-env, not both")));
        return;
    }

    // Gather every assignment, then validate them all before changing anything.
    QList<std::pair<QString, QString>> assignments;
    if (fromStdin || fromEnv) {
        if (items.size() != 1 || items.first().contains(u'=')) {
            fail(Error::invalid(tr("with --stdin or --from-env give exactly one KEY, without '='")));
            return;
        }
        const QString key = items.first();
        QString value;
        if (fromStdin) {
            value = readStandardInput();
        } else {
            value = m_environment.value(key);
            if (value.isEmpty()) {
                fail(Error::invalid(tr("the environment variable %1 is not set").arg(key)));
                return;
            }
        }
        assignments.append({key, value});
    } else {
        for (const QString &item : items) {
            const qsizetype eq = item.indexOf(u'=');
            if (eq <= 0) {
                fail(Error::invalid(tr("'%1' is not KEY=VALUE; write e.g. FORGE_K8S_NAMESPACE=ml-team").arg(item)));
                return;
            }
            const QString key = item.left(eq);
            const QString value = item.mid(eq + 1);
            if (isSecretKey(key) && !value.isEmpty()) {
                fail(Error::invalid(tr("%1 is a secret and is not taken on the command line, where shell history and "
                                       "process listings would keep it; use `profile set %2 %1 --stdin` or --from-env")
                                        .arg(key, name)));
                return;
            }
            assignments.append({key, value});
        }
    }

    QMap<QString, QString> values;
    for (const auto &[key, value] : std::as_const(assignments)) {
        values.insert(key, value);
    }
    const bool created = !m_store->contains(name);
    m_profiles->setValues(name, values, true, this, [this, name, created, values](Result<void> done) {
        if (!done) {
            fail(done.error());
            return;
        }
        QStringList secrets;
        for (auto it = values.cbegin(); it != values.cend(); ++it) {
            if (isSecretKey(it.key())) {
                secrets.append(it.key());
            }
        }
        if (m_args.flag(QStringLiteral("json"))) {
            printJson(m_out, QJsonObject{{QStringLiteral("profile"), name}, {QStringLiteral("created"), created}});
        } else {
            const QString inKeychain = secrets.join(QStringLiteral(", "));
            if (secrets.isEmpty()) {
                m_out << (created ? tr("created profile %1").arg(name) : tr("updated profile %1").arg(name));
            } else {
                m_out << (created ? tr("created profile %1 (%2 in the keychain)").arg(name, inKeychain)
                                  : tr("updated profile %1 (%2 in the keychain)").arg(name, inKeychain));
            }
            m_out << Qt::endl;
        }
        finish(Ok);
    });
}

void ProfileCommand::importKubeconfig()
{
    QStringList paths;
    const QString file = m_args.positionals.value(2, m_args.value(QStringLiteral("kubeconfig")));
    if (!file.isEmpty()) {
        paths.append(file);
    } else {
        const QString fromEnv = m_environment.value(QStringLiteral("KUBECONFIG"));
        paths = fromEnv.isEmpty() ? Config::Kubeconfig::defaultPaths() : fromEnv.split(u':', Qt::SkipEmptyParts);
    }
    const auto kubeconfig = Config::Kubeconfig::load(paths);
    if (!kubeconfig) {
        fail(kubeconfig.error());
        return;
    }
    const auto imported = kubeconfig->importContext(m_args.value(QStringLiteral("context")));
    if (!imported) {
        fail(imported.error());
        return;
    }
    QString name = m_args.value(QStringLiteral("name"));
    if (name.isEmpty()) {
        name = Config::ProfileManager::profileNameFromContext(imported->contextName);
    }
    if (auto valid = Validation::profileName(name); !valid) {
        fail(Error::invalid(tr("%1; choose a name with --name").arg(valid.error().message)));
        return;
    }
    const bool created = !m_store->contains(name);
    const Config::KubeconfigImport result = *imported;
    m_profiles->importKubeconfig(result, name, this, [this, name, created, result](Result<void> done) {
        if (!done) {
            fail(done.error());
            return;
        }
        if (m_args.flag(QStringLiteral("json"))) {
            printJson(m_out, QJsonObject{{QStringLiteral("profile"), name},
                                         {QStringLiteral("created"), created},
                                         {QStringLiteral("context"), result.contextName},
                                         {QStringLiteral("server"), result.values.value(QStringLiteral("FORGE_K8S_API_SERVER"))},
                                         {QStringLiteral("tokenInKeychain"), result.hasSecret(QStringLiteral("FORGE_K8S_TOKEN"))},
                                         {QStringLiteral("clientKeyInKeychain"), result.hasSecret(QStringLiteral("FORGE_K8S_CLIENT_KEY_DATA"))},
                                         {QStringLiteral("taken"), QJsonArray::fromStringList(result.taken)},
                                         {QStringLiteral("notes"), QJsonArray::fromStringList(result.notes)}});
        } else {
            const QString server = result.values.value(QStringLiteral("FORGE_K8S_API_SERVER"));
            m_out << (created ? tr("created profile %1 from context %2 (%3)").arg(name, result.contextName, server)
                              : tr("updated profile %1 from context %2 (%3)").arg(name, result.contextName, server))
                  << Qt::endl;
            for (const QString &field : result.taken) {
                m_out << "  " << field << Qt::endl;
            }
            for (const QString &note : result.notes) {
                m_out << tr("note: %1").arg(note) << Qt::endl;
            }
        }
        finish(Ok);
    });
}

void ProfileCommand::remove()
{
    const QString name = m_args.positionals.value(2);
    if (name.isEmpty()) {
        fail(Error::invalid(tr("usage: starforge-cli profile delete NAME [--force]")));
        return;
    }
    auto warning = std::make_shared<QString>();
    m_profiles->removeProfile(
        name, m_args.flag(QStringLiteral("force")), this,
        [this, name, warning](Result<void> done) {
            if (!done) {
                fail(done.error());
                return;
            }
            if (!warning->isEmpty()) {
                m_err << tr("starforge-cli: warning: %1").arg(*warning) << Qt::endl;
            }
            if (m_args.flag(QStringLiteral("json"))) {
                printJson(m_out, QJsonObject{{QStringLiteral("deleted"), name}, {QStringLiteral("secretsRemoved"), warning->isEmpty()}});
            } else {
                m_out << tr("deleted profile %1").arg(name) << Qt::endl;
            }
            finish(Ok);
        },
        [warning](const QString &text) { *warning = text; });
}

void ProfileCommand::use()
{
    const QString name = m_args.positionals.value(2);
    if (name.isEmpty()) {
        fail(Error::invalid(tr("usage: starforge-cli profile use NAME")));
        return;
    }
    if (auto set = m_profiles->setActiveProfile(name); !set) {
        fail(set.error());
        return;
    }
    m_out << tr("active profile: %1").arg(name) << Qt::endl;
    finish(Ok);
}

void ProfileCommand::rename()
{
    const QString from = m_args.positionals.value(2);
    const QString to = m_args.positionals.value(3);
    if (from.isEmpty() || to.isEmpty()) {
        fail(Error::invalid(tr("usage: starforge-cli profile rename OLD NEW")));
        return;
    }
    m_profiles->renameProfile(from, to, this, [this, from, to](Result<void> done) {
        if (!done) {
            fail(done.error());
            return;
        }
        m_out << tr("renamed profile %1 to %2").arg(from, to) << Qt::endl;
        finish(Ok);
    });
}

void ProfileCommand::duplicate()
{
    const QString from = m_args.positionals.value(2);
    const QString to = m_args.positionals.value(3);
    if (from.isEmpty() || to.isEmpty()) {
        fail(Error::invalid(tr("usage: starforge-cli profile duplicate SOURCE NEW")));
        return;
    }
    m_profiles->duplicateProfile(from, to, this, [this, from, to](Result<void> done) {
        if (!done) {
            fail(done.error());
            return;
        }
        m_out << tr("duplicated profile %1 as %2").arg(from, to) << Qt::endl;
        finish(Ok);
    });
}

std::unique_ptr<Command> makeProfileListCommand(const CommandContext &c) { return std::make_unique<ProfileCommand>(c, &ProfileCommand::list); }
std::unique_ptr<Command> makeProfileShowCommand(const CommandContext &c) { return std::make_unique<ProfileCommand>(c, &ProfileCommand::show); }
std::unique_ptr<Command> makeProfileSetCommand(const CommandContext &c) { return std::make_unique<ProfileCommand>(c, &ProfileCommand::set); }
std::unique_ptr<Command> makeProfileImportCommand(const CommandContext &c) { return std::make_unique<ProfileCommand>(c, &ProfileCommand::importKubeconfig); }
std::unique_ptr<Command> makeProfileUseCommand(const CommandContext &c) { return std::make_unique<ProfileCommand>(c, &ProfileCommand::use); }
std::unique_ptr<Command> makeProfileRenameCommand(const CommandContext &c) { return std::make_unique<ProfileCommand>(c, &ProfileCommand::rename); }
std::unique_ptr<Command> makeProfileDuplicateCommand(const CommandContext &c) { return std::make_unique<ProfileCommand>(c, &ProfileCommand::duplicate); }
std::unique_ptr<Command> makeProfileDeleteCommand(const CommandContext &c) { return std::make_unique<ProfileCommand>(c, &ProfileCommand::remove); }

} // namespace Starforge::Cli

#include "profilecommands.moc"
