#pragma once

// The command line of starforge-cli: global options, a command path and its own options.
// Options may stand anywhere (before or after the command), as with kubectl.

#include "core/util/result.h"

#include <QMap>
#include <QSet>
#include <QString>
#include <QStringList>

namespace Starforge::Cli {

struct Arguments
{
    QStringList positionals;     // e.g. {"profile", "set", "dev", "FORGE_K8S_NAMESPACE=ml"}
    QMap<QString, QString> values; // options with a value: profile, config, connection-file, context, name, spec, out, pod, ...
    QSet<QString> flags;           // options without one: json, stdin, from-env, markdown, force, help, version, wait, follow (-f)

    bool flag(const QString &name) const { return flags.contains(name); }
    QString value(const QString &name) const { return values.value(name); }

    static Result<Arguments> parse(const QStringList &arguments); // without argv[0]
};

} // namespace Starforge::Cli
