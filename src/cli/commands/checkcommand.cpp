// `starforge-cli check [--json]`: the profile's (or sandbox's) connection tested part by part,
// as the profiles dialog's Test connection shows it (core/session/connectiontest.h). Exit 0 when
// nothing failed (warnings allowed: a feature the token may not use), 1 otherwise.

#include "cli/commands/commands.h"
#include "cli/output.h"
#include "core/session/connectiontest.h"

#include <QJsonArray>
#include <QJsonObject>

namespace Starforge::Cli {

namespace {

class CheckCommand final : public Command
{
public:
    using Command::Command;

    void run() override
    {
        auto source = selectSource();
        if (!source) {
            fail(source.error());
            return;
        }
        m_test = new ConnectionTest(m_secrets, m_environment, this);
        connect(m_test, &ConnectionTest::finished, this, [this] { report(); });
        m_test->start(*source);
    }

    void interrupt() override
    {
        if (m_test) m_test->cancel();
        finish(Interrupted);
    }

private:
    void report()
    {
        const auto &checks = m_test->checks();
        if (json()) {
            QJsonArray array;
            for (const ConnectionCheck &c : checks) {
                QJsonObject o{{QStringLiteral("id"), c.id},
                              {QStringLiteral("title"), c.title},
                              {QStringLiteral("result"), ConnectionCheck::outcomeName(c.outcome)},
                              {QStringLiteral("detail"), c.detail}};
                if (!c.fix.isEmpty()) o.insert(QStringLiteral("fix"), c.fix);
                if (c.elapsedMs >= 0) o.insert(QStringLiteral("ms"), c.elapsedMs);
                array.append(o);
            }
            printJson(m_out, QJsonObject{{QStringLiteral("passed"), m_test->passed()}, {QStringLiteral("checks"), array}});
        } else {
            QList<QStringList> rows;
            for (const ConnectionCheck &c : checks) {
                rows.append({c.title, ConnectionCheck::outcomeName(c.outcome).toUpper(), c.elapsedMs >= 0 ? QStringLiteral("%1 ms").arg(c.elapsedMs) : QStringLiteral("-"),
                             QString(c.detail).replace(u'\n', QStringLiteral("; "))});
            }
            m_out << formatTable({QStringLiteral("CHECK"), QStringLiteral("RESULT"), QStringLiteral("TIME"), QStringLiteral("DETAIL")}, rows);
            // What to change, under the table, so a long Role rule does not stretch it.
            for (const ConnectionCheck &c : checks) {
                if (!c.fix.isEmpty()) m_out << '\n' << c.title << ": " << c.fix << '\n';
            }
            m_out << '\n' << m_test->summary() << '\n';
        }
        finish(m_test->passed() ? Ok : UserError);
    }

    ConnectionTest *m_test = nullptr;
};

} // namespace

std::unique_ptr<Command> makeCheckCommand(const CommandContext &context)
{
    return std::make_unique<CheckCommand>(context);
}

} // namespace Starforge::Cli
