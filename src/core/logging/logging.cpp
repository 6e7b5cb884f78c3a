#include "core/logging/logging.h"

#include <QMutex>
#include <QRegularExpression>
#include <QSet>

namespace Starforge {

Q_LOGGING_CATEGORY(lcConfig, "starforge.core.config")
Q_LOGGING_CATEGORY(lcKubeconfig, "starforge.core.kubeconfig")
Q_LOGGING_CATEGORY(lcSecrets, "starforge.core.secrets")
Q_LOGGING_CATEGORY(lcModels, "starforge.models")
Q_LOGGING_CATEGORY(lcGui, "starforge.gui")
Q_LOGGING_CATEGORY(lcCli, "starforge.cli")
Q_LOGGING_CATEGORY(lcSandbox, "starforge.sandbox")
Q_LOGGING_CATEGORY(lcSession, "starforge.core.session")

namespace Logging {

namespace {

const QString redacted = QStringLiteral("<redacted>");

struct Pattern
{
    QRegularExpression re;
    bool keepFirstGroup; // keep capture 1 (the label), redact the rest of the match
};

const QList<Pattern> &patterns()
{
    static const QList<Pattern> list = [] {
        const auto ci = QRegularExpression::CaseInsensitiveOption;
        QList<Pattern> p;
        // Authorization: Bearer x / Basic x / AWS4-HMAC-SHA256 Credential=...,Signature=...
        p.append({QRegularExpression(QStringLiteral("(authorization[\"']?\\s*[:=]\\s*[\"']?)[^\\r\\n\"']+"), ci), true});
        p.append({QRegularExpression(QStringLiteral("(bearer\\s+)[A-Za-z0-9._~+/=-]+"), ci), true});
        // Presigned URLs: the signature, the credential (it holds the access key) and session tokens.
        p.append({QRegularExpression(QStringLiteral("(X-Amz-(?:Signature|Credential|Security-Token)=)[^&\\s\"']+"), ci), true});
        p.append({QRegularExpression(QStringLiteral("((?:^|[^A-Za-z])Signature=)[0-9a-f]{16,}"), ci), true});
        // key=value, key: value and "key": "value" for tokens and keys.
        p.append({QRegularExpression(QStringLiteral("((?:token|secret[_-]?(?:access[_-]?)?key|access[_-]?key(?:[_-]?id)?|password)"
                                                    "[\"']?\\s*[:=]\\s*[\"']?)[^\\s\"',&;]+"),
                                     ci),
                  true});
        // JSON Web Tokens (ServiceAccount tokens) wherever they stand.
        p.append({QRegularExpression(QStringLiteral("eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]+")), false});
        return p;
    }();
    return list;
}

QMutex &secretsMutex()
{
    static QMutex mutex;
    return mutex;
}

QSet<QString> &knownSecrets()
{
    static QSet<QString> secrets;
    return secrets;
}

QtMessageHandler &previousHandler()
{
    static QtMessageHandler handler = nullptr;
    return handler;
}

void redactingHandler(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    previousHandler()(type, context, redact(message));
}

} // namespace

QString redact(const QString &line)
{
    QString out = line;
    {
        const QMutexLocker lock(&secretsMutex());
        for (const QString &secret : std::as_const(knownSecrets())) {
            out.replace(secret, redacted);
        }
    }
    for (const Pattern &pattern : patterns()) {
        QString result;
        qsizetype last = 0;
        auto it = pattern.re.globalMatch(out);
        bool any = false;
        while (it.hasNext()) {
            const auto m = it.next();
            any = true;
            result += QStringView(out).mid(last, m.capturedStart() - last);
            if (pattern.keepFirstGroup) {
                result += m.captured(1);
            }
            result += redacted;
            last = m.capturedEnd();
        }
        if (any) {
            result += QStringView(out).mid(last);
            out = result;
        }
    }
    return out;
}

void addSecret(const QString &value)
{
    if (value.size() < 4) {
        return;
    }
    const QMutexLocker lock(&secretsMutex());
    knownSecrets().insert(value);
}

void installRedactingMessageHandler()
{
    static bool installed = false;
    if (installed) {
        return;
    }
    installed = true;
    previousHandler() = qInstallMessageHandler(redactingHandler);
}

void setDefaultFilterRules()
{
    if (qEnvironmentVariableIsEmpty("QT_LOGGING_RULES")) {
        QLoggingCategory::setFilterRules(QStringLiteral("starforge.*.info=false\nstarforge.*.debug=false"));
    }
}

} // namespace Logging
} // namespace Starforge
