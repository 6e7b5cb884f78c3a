// `starforge-cli cluster-setup [--namespace NS] [--user NAME]`: the YAML a cluster administrator
// applies so that Starforge works in a namespace (core/kube/clustersetup.h, docs/cluster-setup.md).
// The namespace is --namespace, else FORGE_K8S_NAMESPACE as the selected profile (or the
// sandbox's connection file) has it, with the environment over it, else the setting's default;
// the ServiceAccount is --user, else starforge-user. The YAML goes to stdout alone, so
// `starforge-cli cluster-setup | kubectl apply -f -` works; what was chosen goes to stderr.

#include "cli/commands/commands.h"
#include "core/config/effectiveconfig.h"
#include "core/kube/clustersetup.h"

namespace Starforge::Cli {

namespace {

class ClusterSetupCommand final : public Command
{
    Q_OBJECT   // its tr() context, for lupdate and the run time alike

public:
    using Command::Command;

    void run() override
    {
        if (m_args.positionals.size() > 1) {
            fail(Error::invalid(tr("usage: starforge-cli cluster-setup [--namespace NS] [--user NAME]")));
            return;
        }
        const QString key = QStringLiteral("FORGE_K8S_NAMESPACE");
        if (m_args.values.contains(QStringLiteral("namespace"))) {
            print(m_args.value(QStringLiteral("namespace")), tr("--namespace"));
            return;
        }
        if (m_args.values.contains(QStringLiteral("connection-file"))) {
            auto source = selectSource();
            if (!source) {
                fail(source.error());
                return;
            }
            const QString where = source->describe();
            source->resolve(m_secrets, m_environment, this, [this, key, where](Result<Config::EffectiveConfig> config) {
                if (!config) {
                    fail(config.error());
                    return;
                }
                print(config->value(key), where);
            });
            return;
        }
        if (auto loaded = loadStore(); !loaded) {
            fail(loaded.error());
            return;
        }
        // Only a profile's plain values are read: nothing here needs its secrets or the keychain.
        const QString name = selectedProfile();
        const auto profile = name.isEmpty() ? std::nullopt : m_store->profile(name);
        if (!name.isEmpty() && !profile) {
            fail(Error::invalid(tr("there is no profile '%1' (see `starforge-cli profile list`)").arg(name)));
            return;
        }
        const Config::EffectiveConfig config = Config::EffectiveConfig::resolve(profile, m_environment);
        const Config::ValueSource source = config.source(key);
        const QString where = source == Config::ValueSource::Environment ? tr("the environment (FORGE_K8S_NAMESPACE)")
                              : source == Config::ValueSource::Profile   ? tr("profile %1").arg(name)
                                                                         : tr("the default of FORGE_K8S_NAMESPACE");
        print(config.value(key), where);
    }

private:
    void print(const QString &ns, const QString &where)
    {
        Kube::ClusterSetup setup;
        setup.ns = ns;
        if (m_args.values.contains(QStringLiteral("user"))) setup.serviceAccount = m_args.value(QStringLiteral("user"));
        if (auto valid = setup.validate(); !valid) {
            fail(valid.error());
            return;
        }
        m_out << setup.yaml();
        m_out.flush();
        note(tr("namespace %1 (from %2), ServiceAccount %3; apply with `kubectl apply -f -`, then give the token in Secret %4 to "
                "the researchers' profiles (docs/cluster-setup.md).")
                 .arg(setup.ns, where, setup.serviceAccount, setup.tokenSecretName()));
        finish(Ok);
    }
};

} // namespace

std::unique_ptr<Command> makeClusterSetupCommand(const CommandContext &context)
{
    return std::make_unique<ClusterSetupCommand>(context);
}

} // namespace Starforge::Cli

#include "clustersetupcommand.moc"
