#include "cli/arguments.h"

#include <QCoreApplication>

namespace Starforge::Cli {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text
{
    Q_DECLARE_TR_FUNCTIONS(Arguments)
};

const QSet<QString> &valueOptions()
{
    static const QSet<QString> options{QStringLiteral("profile"), QStringLiteral("config"), QStringLiteral("context"),
                                       QStringLiteral("name"), QStringLiteral("kubeconfig"),
                                       QStringLiteral("spec"), QStringLiteral("out"), QStringLiteral("connection-file"),
                                       QStringLiteral("pod"), QStringLiteral("container"), QStringLiteral("tail"),
                                       QStringLiteral("kuberay-version"), QStringLiteral("grep"),
                                       // cluster-setup
                                       QStringLiteral("namespace"), QStringLiteral("user"),
                                       // playground
                                       QStringLiteral("model"), QStringLiteral("job"), QStringLiteral("step"), QStringLiteral("series"),
                                       QStringLiteral("gpus"), QStringLiteral("ttl"), QStringLiteral("system"), QStringLiteral("temperature"),
                                       QStringLiteral("top-p"), QStringLiteral("max-tokens"), QStringLiteral("session")};
    return options;
}

const QSet<QString> &flagOptions()
{
    static const QSet<QString> options{QStringLiteral("json"),     QStringLiteral("stdin"), QStringLiteral("from-env"),
                                       QStringLiteral("markdown"), QStringLiteral("force"), QStringLiteral("help"),
                                       QStringLiteral("version"), QStringLiteral("wait"), QStringLiteral("follow"),
                                       QStringLiteral("ignore-case"), QStringLiteral("extended-regexp"), QStringLiteral("count"),
                                       QStringLiteral("timeline")};
    return options;
}

} // namespace

Result<Arguments> Arguments::parse(const QStringList &arguments)
{
    Arguments parsed;
    bool onlyPositionals = false;
    for (qsizetype i = 0; i < arguments.size(); ++i) {
        const QString &argument = arguments.at(i);
        if (onlyPositionals || !argument.startsWith(u'-') || argument == u"-") {
            parsed.positionals.append(argument);
            continue;
        }
        if (argument == u"--") {
            onlyPositionals = true;
            continue;
        }
        if (argument == u"-h") {
            parsed.flags.insert(QStringLiteral("help"));
            continue;
        }
        if (argument == u"-f") {
            parsed.flags.insert(QStringLiteral("follow"));
            continue;
        }
        // grep's short options, for `logs --grep`.
        if (argument == u"-i" || argument == u"-E") {
            parsed.flags.insert(argument == u"-i" ? QStringLiteral("ignore-case") : QStringLiteral("extended-regexp"));
            continue;
        }
        if (!argument.startsWith(QStringLiteral("--"))) {
            return Error::invalid(Text::tr("unknown option %1; see starforge-cli --help").arg(argument));
        }
        QString name = argument.mid(2);
        QString value;
        bool hasValue = false;
        if (const qsizetype eq = name.indexOf(u'='); eq >= 0) {
            value = name.mid(eq + 1);
            name = name.left(eq);
            hasValue = true;
        }
        if (valueOptions().contains(name)) {
            if (!hasValue) {
                if (i + 1 >= arguments.size()) {
                    return Error::invalid(Text::tr("--%1 needs a value, e.g. --%1 NAME").arg(name));
                }
                value = arguments.at(++i);
            }
            parsed.values.insert(name, value);
        } else if (flagOptions().contains(name)) {
            if (hasValue) {
                return Error::invalid(Text::tr("--%1 takes no value").arg(name));
            }
            parsed.flags.insert(name);
        } else {
            return Error::invalid(Text::tr("unknown option --%1; see starforge-cli --help").arg(name));
        }
    }
    return parsed;
}

} // namespace Starforge::Cli
