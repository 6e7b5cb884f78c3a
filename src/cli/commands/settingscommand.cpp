// `starforge-cli settings [--markdown] [--json]`: every setting of the settings table with its
// type, default and meaning (docs/configuration.md is this command's --markdown output).

#include "cli/commands/commands.h"
#include "cli/output.h"
#include "core/config/settingsschema.h"

#include <QJsonArray>
#include <QJsonObject>

#include <algorithm>

namespace Starforge::Cli {

namespace {

class SettingsCommand final : public Command
{
public:
    using Command::Command;

    void run() override
    {
        const auto &table = Config::SettingsSchema::all();
        if (m_args.flag(QStringLiteral("json"))) {
            QJsonArray array;
            for (const auto &d : table) {
                array.append(QJsonObject{{QStringLiteral("key"), d.key},
                                         {QStringLiteral("label"), d.label},
                                         {QStringLiteral("type"), Config::SettingsSchema::typeName(d.type)},
                                         {QStringLiteral("default"), d.defaultValue},
                                         {QStringLiteral("group"), d.group},
                                         {QStringLiteral("secret"), d.isSecret()},
                                         {QStringLiteral("help"), d.help}});
            }
            printJson(m_out, array);
        } else if (m_args.flag(QStringLiteral("markdown"))) {
            QString group;
            for (const auto &d : table) {
                if (d.group != group) {
                    group = d.group;
                    const auto &groups = Config::SettingsSchema::groups();
                    const auto it = std::find_if(groups.cbegin(), groups.cend(), [&group](const auto &g) { return g.name == group; });
                    m_out << "\n## " << group << "\n\n"
                          << (it != groups.cend() ? it->about + QStringLiteral("\n\n") : QString())
                          // untranslated: docs/configuration.md is this output, and the docs stay English
                          << "| Setting | Environment variable | Type | Default | Meaning |\n"
                          << "|---|---|---|---|---|\n";
                }
                QString help = d.help;
                help.replace(u'|', QStringLiteral("\\|"));
                m_out << "| " << d.label << " | `" << d.key << "` | " << Config::SettingsSchema::typeName(d.type) << " | "
                      << (d.defaultValue.isEmpty() ? QStringLiteral("(none)") : u'`' + d.defaultValue + u'`') << " | " << help << " |\n";
            }
        } else {
            QList<QStringList> rows;
            for (const auto &d : table) {
                // The human table in the user's language; --json and --markdown (the docs) stay English.
                rows.append({d.key, Config::SettingsSchema::typeDisplayName(d.type), d.defaultValue.isEmpty() ? QStringLiteral("-") : d.defaultValue});
            }
            // untranslated: column keys, as kubectl's; scripts pick columns of the table by them
            m_out << formatTable({QStringLiteral("SETTING"), QStringLiteral("TYPE"), QStringLiteral("DEFAULT")}, rows);
        }
        finish(Ok);
    }
};

} // namespace

std::unique_ptr<Command> makeSettingsCommand(const CommandContext &context)
{
    return std::make_unique<SettingsCommand>(context);
}

} // namespace Starforge::Cli
