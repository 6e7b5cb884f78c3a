#include "core/config/execplugin.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>

namespace Starforge::Config {

namespace {
// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text { Q_DECLARE_TR_FUNCTIONS(ExecPlugin) };

const QString V1 = QStringLiteral("client.authentication.k8s.io/v1");
const QString V1Beta1 = QStringLiteral("client.authentication.k8s.io/v1beta1");
} // namespace

QString ExecPlugin::interactiveName(Interactive mode)
{
    switch (mode) {
    case Interactive::Never: return QStringLiteral("Never");
    case Interactive::IfAvailable: return QStringLiteral("IfAvailable");
    case Interactive::Always: return QStringLiteral("Always");
    }
    return {};
}

Result<ExecPlugin> ExecPlugin::fromJson(const QJsonObject &o)
{
    ExecPlugin plugin;
    plugin.apiVersion = o.value(QStringLiteral("apiVersion")).toString();
    if (plugin.apiVersion == QLatin1String("client.authentication.k8s.io/v1alpha1")) {
        return Error::unsupported(Text::tr("the exec plugin asks for client.authentication.k8s.io/v1alpha1, which Kubernetes "
                                           "removed in 1.24; use v1 (or v1beta1) in the kubeconfig's user.exec.apiVersion"));
    }
    if (plugin.apiVersion != V1 && plugin.apiVersion != V1Beta1) {
        return Error::invalid(Text::tr("the exec plugin's apiVersion must be %1 or %2, not '%3'").arg(V1, V1Beta1, plugin.apiVersion));
    }
    plugin.command = o.value(QStringLiteral("command")).toString().trimmed();
    if (plugin.command.isEmpty()) {
        return Error::invalid(Text::tr("the exec plugin has no command; give the program that prints the credential"));
    }
    const QJsonValue args = o.value(QStringLiteral("args"));
    if (!args.isUndefined() && !args.isNull()) {
        if (!args.isArray()) return Error::invalid(Text::tr("the exec plugin's args must be a list of strings"));
        for (const QJsonValue &a : args.toArray()) {
            if (!a.isString()) return Error::invalid(Text::tr("the exec plugin's args must be a list of strings"));
            plugin.args << a.toString();
        }
    }
    const QJsonValue env = o.value(QStringLiteral("env"));
    if (!env.isUndefined() && !env.isNull()) {
        if (!env.isArray()) return Error::invalid(Text::tr("the exec plugin's env must be a list of {name, value}"));
        for (const QJsonValue &e : env.toArray()) {
            const QString name = e.toObject().value(QStringLiteral("name")).toString();
            if (name.isEmpty() || name.contains(QLatin1Char('='))) {
                return Error::invalid(Text::tr("every entry of the exec plugin's env needs a name (without '=') and a value"));
            }
            plugin.env.append({name, e.toObject().value(QStringLiteral("value")).toString()});
        }
    }
    const QString mode = o.value(QStringLiteral("interactiveMode")).toString();
    if (mode.isEmpty()) {
        // kubectl's default for v1beta1 stanzas without the field; v1 requires it, but a
        // hand-written profile should not fail over it.
        plugin.interactiveMode = Interactive::IfAvailable;
    } else if (mode == QLatin1String("Never")) {
        plugin.interactiveMode = Interactive::Never;
    } else if (mode == QLatin1String("IfAvailable")) {
        plugin.interactiveMode = Interactive::IfAvailable;
    } else if (mode == QLatin1String("Always")) {
        plugin.interactiveMode = Interactive::Always;
    } else {
        return Error::invalid(Text::tr("the exec plugin's interactiveMode must be Never, IfAvailable or Always, not '%1'").arg(mode));
    }
    plugin.provideClusterInfo = o.value(QStringLiteral("provideClusterInfo")).toBool();
    plugin.installHint = o.value(QStringLiteral("installHint")).toString();
    return plugin;
}

Result<ExecPlugin> ExecPlugin::parse(const QString &json)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(json.toUtf8(), &error);
    if (!document.isObject()) {
        return Error::invalid(Text::tr("the exec plugin is not a JSON object (%1); write it as the kubeconfig's user.exec "
                                       "in JSON, e.g. {\"apiVersion\": \"%2\", \"command\": \"aws\", \"args\": [\"eks\", \"get-token\"]}")
                                  .arg(error.error == QJsonParseError::NoError ? Text::tr("not an object") : error.errorString(), V1));
    }
    return fromJson(document.object());
}

QJsonObject ExecPlugin::toJson() const
{
    QJsonObject o{{QStringLiteral("apiVersion"), apiVersion}, {QStringLiteral("command"), command},
                  {QStringLiteral("interactiveMode"), interactiveName(interactiveMode)}};
    if (!args.isEmpty()) o.insert(QStringLiteral("args"), QJsonArray::fromStringList(args));
    if (!env.isEmpty()) {
        QJsonArray list;
        for (const auto &[name, value] : env) list.append(QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("value"), value}});
        o.insert(QStringLiteral("env"), list);
    }
    if (provideClusterInfo) o.insert(QStringLiteral("provideClusterInfo"), true);
    if (!installHint.isEmpty()) o.insert(QStringLiteral("installHint"), installHint);
    return o;
}

} // namespace Starforge::Config
