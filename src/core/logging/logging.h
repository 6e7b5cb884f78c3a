#pragma once

// One logging category per module, and a message handler that redacts credentials from every
// line before it reaches stderr or a log file. Enable a module with e.g.
// QT_LOGGING_RULES="starforge.core.config.debug=true".

#include <QLoggingCategory>
#include <QString>

namespace Starforge {

Q_DECLARE_LOGGING_CATEGORY(lcConfig)     // starforge.core.config
Q_DECLARE_LOGGING_CATEGORY(lcKubeconfig) // starforge.core.kubeconfig
Q_DECLARE_LOGGING_CATEGORY(lcSecrets)    // starforge.core.secrets
Q_DECLARE_LOGGING_CATEGORY(lcModels)     // starforge.models
Q_DECLARE_LOGGING_CATEGORY(lcGui)        // starforge.gui
Q_DECLARE_LOGGING_CATEGORY(lcCli)        // starforge.cli
Q_DECLARE_LOGGING_CATEGORY(lcSandbox)    // starforge.sandbox
Q_DECLARE_LOGGING_CATEGORY(lcSession)    // starforge.core.session

namespace Logging {

// Replaces credentials by "<redacted>", recognised by their shape: Authorization header values,
// bearer tokens, SigV4 credentials and presigned-URL signatures, JWTs and tokens with a known
// prefix, values of credential keys (token=, "password": ...) that look like credentials, PEM
// private keys, long random base64 and long hex (but not sha256 digests of public content), and
// every secret value registered with addSecret(). Ordinary words stay, whatever precedes them
// ("Use a bearer token instead", "token: missing"). Safe to call from any thread.
QString redact(const QString &line);

// Registers a secret value (a token, a key) so that it is redacted wherever it appears, even
// in a form the patterns do not recognise. Values shorter than 4 characters are ignored.
void addSecret(const QString &value);

// Warnings and above from Starforge's categories unless QT_LOGGING_RULES says otherwise, so that
// command output is not mixed with progress lines.
void setDefaultFilterRules();

// Installs the redacting handler in front of Qt's (or the previously installed) handler.
void installRedactingMessageHandler();

} // namespace Logging
} // namespace Starforge
