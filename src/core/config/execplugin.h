#pragma once

// An exec credential plugin as a kubeconfig's user.exec describes it (client.authentication.k8s.io
// v1 and v1beta1): what to run and how. A profile keeps it as JSON in FORGE_K8S_EXEC with the
// kubeconfig's own field names, so an imported stanza reads the same in both places. Running it
// is Kube::ExecCredentialProvider's job (src/core/kube/execcredentialprovider.h).

#include "core/util/result.h"

#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

namespace Starforge::Config {

struct ExecPlugin
{
    enum class Interactive { Never, IfAvailable, Always };

    QString apiVersion;                      // client.authentication.k8s.io/v1 or /v1beta1
    QString command;                         // a name looked up on PATH, or a path
    QStringList args;
    QList<QPair<QString, QString>> env;      // added to the app's environment
    Interactive interactiveMode = Interactive::IfAvailable;
    bool provideClusterInfo = false;
    QString installHint;                     // shown when the command is missing

    // From the JSON of FORGE_K8S_EXEC or a kubeconfig stanza; the error names the field to fix.
    static Result<ExecPlugin> fromJson(const QJsonObject &object);
    static Result<ExecPlugin> parse(const QString &json);
    QJsonObject toJson() const;

    static QString interactiveName(Interactive mode);
};

} // namespace Starforge::Config
