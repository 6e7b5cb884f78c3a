#include "core/logging/logging.h"

#include <QByteArray>
#include <QMutex>
#include <QRegularExpression>
#include <QStringList>

#include <algorithm>
#include <functional>

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

// ---- What a credential looks like -------------------------------------------------------------
//
// Redaction goes by the shape of a value, never by the words around it alone: a label such as
// "token:" or "Bearer" only says where a credential may stand, and the value after it is replaced
// only if it looks like one. Otherwise help texts ("Use a bearer token instead", "token: missing",
// "the secret key is wrong") would lose words and read as nonsense.

// One or more words as prose and identifiers write them: lowercase, Capitalised or camelCase
// words, acronyms, and short pieces such as "s3", "k8s", "v1" or "443", joined by - _ . / or :
// ("kube-system", "ServiceAccount", "re-authentication", "/var/run/secrets/token",
// "starforge-s3", "us-east-1"). A run of more than 24 letters is no word.
bool isWordShaped(const QString &value)
{
    static const QString word = QStringLiteral("(?:[A-Z]?[a-z]{1,24}(?:[A-Z][a-z]{1,24})*|[A-Z]{1,6}|[A-Za-z0-9]{1,4})");
    static const QRegularExpression &re = *new QRegularExpression(QStringLiteral("^[-_./:]*%1(?:[-_./:]+%1)*[-_./:]*$").arg(word));
    return re.match(value).hasMatch();
}

// An environment variable's name ("FORGE_K8S_TOKEN"), as help texts name where a token goes.
bool isVariableName(const QString &value)
{
    static const QRegularExpression &re = *new QRegularExpression(QStringLiteral("^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$"));
    return re.match(value).hasMatch();
}

const QString jwtPattern = QStringLiteral("eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]*");

// Tokens whose prefix names them: EKS (a presigned STS URL in base64url), Google OAuth access
// tokens (GKE), AWS access key ids, GitHub and GitLab tokens.
const QString knownTokenPattern = QStringLiteral(
    "k8s-aws-v1\\.[A-Za-z0-9_-]{20,}|ya29\\.[A-Za-z0-9._-]{20,}|(?:AKIA|ASIA)[A-Z0-9]{16}"
    "|gh[pousr]_[A-Za-z0-9]{30,}|glpat-[A-Za-z0-9_-]{20,}");

// True when a value standing where a credential may stand (after "Bearer", "token=", "password:")
// has a credential's shape: a JWT or a known token, or at least 8 characters without spaces that
// are not words, a variable's name or a placeholder ("<token>", "$TOKEN", "%1", "****").
bool looksLikeCredential(const QString &value)
{
    static const QRegularExpression &jwt = *new QRegularExpression(QRegularExpression::anchoredPattern(jwtPattern));
    static const QRegularExpression &known = *new QRegularExpression(QRegularExpression::anchoredPattern(knownTokenPattern));
    if (jwt.match(value).hasMatch() || known.match(value).hasMatch()) {
        return true;
    }
    if (value.size() < 8 || QStringLiteral("<$%{[*(").contains(value.front())) {
        return false;
    }
    for (const QChar c : value) {
        if (c.isSpace()) {
            return false;
        }
    }
    return !isWordShaped(value) && !isVariableName(value);
}

// A long run of base64 is a key or a token when it mixes upper case, lower case and digits and
// changes between them often, as random text does (about 6 changes in 10 characters). Paths and
// identifiers that mix cases ("Projects/MyModel2024/TrainingRun") change far less often.
bool looksRandom(QStringView run)
{
    bool upper = false, lower = false, digit = false;
    int pairs = 0, changes = 0;
    auto kind = [](QChar c) { return c.isDigit() ? 0 : c.isUpper() ? 1 : c.isLower() ? 2 : -1; };
    for (qsizetype i = 0; i < run.size(); ++i) {
        const int k = kind(run[i]);
        upper |= k == 1;
        lower |= k == 2;
        digit |= k == 0;
        if (i > 0 && k >= 0) {
            const int previous = kind(run[i - 1]);
            if (previous >= 0) {
                ++pairs;
                changes += previous != k;
            }
        }
    }
    return upper && lower && digit && pairs > 0 && changes * 4 >= pairs;
}

// "Basic <x>" is a credential when x is base64 of "user:password".
bool isBasicCredential(const QString &value)
{
    const auto decoded = QByteArray::fromBase64Encoding(value.toLatin1(), QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded || !decoded.decoded.contains(':')) {
        return false;
    }
    return std::all_of(decoded.decoded.cbegin(), decoded.decoded.cend(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

// ---- The rules --------------------------------------------------------------------------------

// A rule returns what replaces one match; it gets the whole line to look around the match.
using Replace = std::function<QString(const QString &line, const QRegularExpressionMatch &m)>;

struct Rule
{
    QRegularExpression re;
    Replace replace;
};

// The match with capture `group` replaced by "<redacted>" (the label around it kept).
QString redactGroup(const QRegularExpressionMatch &m, int group)
{
    QString text = m.captured(0);
    return text.replace(m.capturedStart(group) - m.capturedStart(0), m.capturedLength(group), redacted);
}

// The match with capture `group` replaced by "<redacted>" when its value has a credential's
// shape. Trailing sentence punctuation is no part of an unquoted value ("set token=abc123xyz.").
QString redactIfCredential(const QRegularExpressionMatch &m, int group, bool quoted = false)
{
    QString value = m.captured(group);
    if (!quoted) {
        qsizetype end = value.size();
        while (end > 0 && QStringLiteral(".,;:)]}").contains(value.at(end - 1))) {
            --end;
        }
        value.truncate(end);
    }
    if (!looksLikeCredential(value)) {
        return m.captured(0);
    }
    QString text = m.captured(0);
    return text.replace(m.capturedStart(group) - m.capturedStart(0), value.size(), redacted);
}

Replace ifCredential(int group)
{
    return [group](const QString &, const QRegularExpressionMatch &m) { return redactIfCredential(m, group); };
}

Replace always(int group)
{
    return [group](const QString &, const QRegularExpressionMatch &m) { return redactGroup(m, group); };
}

// Keys that name a credential, as the last word of a key: token, id-token, FORGE_K8S_TOKEN,
// x-amz-security-token, secret, client_secret, secret_key, aws_secret_access_key, access_key,
// access_key_id, password, api_key, private_key, client-key-data ("tokenFile", "token_type",
// "secretName" name something else).
const QString credentialKey = QStringLiteral(
    "(?:token|secret|secret[_-]?(?:access[_-]?)?key|access[_-]?key(?:[_-]?id)?|password|passwd|passphrase"
    "|api[_-]?key|private[_-]?key|client[_-]?key[_-]?data)");

const QString authSchemes = QStringLiteral("Bearer|Basic|Token|Negotiate|NTLM|AWS4-HMAC-SHA256");

// Hex of 32 digits or more is redacted, except a digest of public content, which tells the
// reader which Capsule or object a line is about and grants nothing: after "sha256"/"SHA-256"
// (x-amz-content-sha256, an image digest, a Capsule's sha256 field) or "ETag", in a Capsule's
// content address ("capsules/<sha256>.zip", "capsule-<sha256>.zip") or before ".zip". Random
// hex of this length has both digits and letters; a run without either (a zero commit id,
// "aaaa...") is no key.
bool isPublicDigest(const QString &line, const QRegularExpressionMatch &m)
{
    static const QRegularExpression &label = *new QRegularExpression(QStringLiteral("(?:sha-?256|etag)[^A-Za-z0-9\\r\\n]{0,6}$|capsules?[/-]$"),
                                                                     QRegularExpression::CaseInsensitiveOption);
    const QString hex = m.captured(0);
    if (std::none_of(hex.cbegin(), hex.cend(), [](QChar c) { return c.isLetter(); })
        || std::none_of(hex.cbegin(), hex.cend(), [](QChar c) { return c.isDigit(); })) {
        return true;
    }
    const qsizetype start = m.capturedStart(0);
    const qsizetype from = std::max<qsizetype>(0, start - 32);
    if (label.match(QStringView(line).mid(from, start - from)).hasMatch()) {
        return true;
    }
    return QStringView(line).mid(m.capturedEnd(0)).startsWith(QLatin1String(".zip"), Qt::CaseInsensitive);
}

const QList<Rule> &rules()
{
    static const QList<Rule> &list = *new QList<Rule>([] {
        const auto ci = QRegularExpression::CaseInsensitiveOption;
        auto re = [](const QString &pattern, QRegularExpression::PatternOptions options = {}) {
            QRegularExpression r(pattern, options);
            r.optimize();
            return r;
        };
        QList<Rule> r;
        // PEM private keys, with real or escaped ("\n" in JSON) line breaks; a block cut off
        // before its END line loses the rest of the line.
        r.append({re(QStringLiteral("(-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----)(?:[\\s\\S]*?(-----END \\2PRIVATE KEY-----)|[\\s\\S]*)")),
                  [](const QString &, const QRegularExpressionMatch &m) -> QString { return m.captured(1) + redacted + m.captured(3); }});
        // SigV4: "AWS4-HMAC-SHA256 Credential=<key id>/<scope>, SignedHeaders=..., Signature=<hex>",
        // in an Authorization header or alone; the scheme is kept.
        r.append({re(QStringLiteral("(AWS4-HMAC-SHA256\\s+)(Credential=(?:[^\\r\\n\"']*?Signature=[0-9a-fA-F]+|[^\\r\\n\"']*))")),
                  always(2)});
        // Authorization and Proxy-Authorization values, also as JSON, a quoted string or Go's
        // map[Authorization:[...]]. After a scheme the value is a credential whatever it looks
        // like (the header says so); a value without a scheme must look like one.
        r.append({re(QStringLiteral("(authorization[\"']?\\s*[:=]\\s*\\[?\\s*[\"']?)(?:(?:%1)\\s+([A-Za-z0-9._~+/=-]+)"
                                    "|(?!(?:%1)\\b)([A-Za-z0-9._~+/=-]+))")
                         .arg(authSchemes),
                     ci),
                  [](const QString &, const QRegularExpressionMatch &m) {
                      return m.capturedStart(2) >= 0 ? redactGroup(m, 2) : redactIfCredential(m, 3);
                  }});
        // Presigned URLs: the signature, the credential (it holds the access key) and session tokens.
        r.append({re(QStringLiteral("(X-Amz-(?:Signature|Credential|Security-Token)=)([^&\\s\"']+)"), ci), always(2)});
        r.append({re(QStringLiteral("((?<![A-Za-z-])Signature=)([0-9a-f]{16,})"), ci), always(2)});
        r.append({re(QStringLiteral("((?<![A-Za-z-])Credential=)([^<\\s,\"'&][^\\s,\"'&]*)")), always(2)});
        // The password in a URL's userinfo (a proxy URL): scheme://user:password@host.
        r.append({re(QStringLiteral("((?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\\s/@:\"']*:)([^\\s/@\"'<?#]+)(@)")), always(2)});
        // key=value, key: value, "key": "value", --key value, where the key names a credential
        // and the value looks like one. (The key's prefix is bounded: unbounded, a long run such
        // as "token_token_..." makes the search quadratic.)
        r.append({re(QStringLiteral("((?<![A-Za-z0-9])[A-Za-z0-9_.-]{0,40}?%1[\"']?\\s*[:=]\\s*\\[?\\s*)"
                                    "(?:\"([^\"\\r\\n]*)\"|'([^'\\r\\n]*)'|([^\\s\"',&;]+))")
                         .arg(credentialKey),
                     ci),
                  [](const QString &, const QRegularExpressionMatch &m) {
                      if (m.capturedStart(2) >= 0) return redactIfCredential(m, 2, true);
                      if (m.capturedStart(3) >= 0) return redactIfCredential(m, 3, true);
                      return redactIfCredential(m, 4);
                  }});
        r.append({re(QStringLiteral("(--[A-Za-z0-9-]{0,40}?%1\\s+)([^\\s\"',&;]+)").arg(credentialKey), ci), ifCredential(2)});
        // "Bearer <x>" and "Basic <x>" outside a header: only when x has the shape.
        r.append({re(QStringLiteral("((?<![A-Za-z])bearer\\s+)([A-Za-z0-9._~+/=-]+)"), ci), ifCredential(2)});
        r.append({re(QStringLiteral("((?<![A-Za-z])basic\\s+)([A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])"), ci),
                  [](const QString &, const QRegularExpressionMatch &m) {
                      return isBasicCredential(m.captured(2)) ? redactGroup(m, 2) : m.captured(0);
                  }});
        // JWTs (ServiceAccount tokens) and tokens with a known prefix, wherever they stand.
        r.append({re(QStringLiteral("(?<![A-Za-z0-9_-])(?:%1|%2)(?![A-Za-z0-9])").arg(jwtPattern, knownTokenPattern)),
                  [](const QString &, const QRegularExpressionMatch &) { return redacted; }});
        // Long hex (keys, HMACs, session ids), except public digests (see isPublicDigest).
        r.append({re(QStringLiteral("(?<![A-Za-z0-9])[0-9a-fA-F]{32,}(?![A-Za-z0-9])")),
                  [](const QString &line, const QRegularExpressionMatch &m) {
                      return isPublicDigest(line, m) ? m.captured(0) : redacted;
                  }});
        // Long base64 or base64url (AWS secret keys, session tokens, key and certificate data)
        // that looks random (see looksRandom); lowercase names and paths never do.
        r.append({re(QStringLiteral("(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{32,}={0,2}(?![A-Za-z0-9+/=_-])")),
                  [](const QString &, const QRegularExpressionMatch &m) {
                      return looksRandom(m.capturedView(0)) ? redacted : m.captured(0);
                  }});
        return r;
    }());
    return list;
}

QString apply(const Rule &rule, const QString &line)
{
    QString result;
    qsizetype last = 0;
    auto it = rule.re.globalMatch(line);
    while (it.hasNext()) {
        const auto m = it.next();
        result += QStringView(line).mid(last, m.capturedStart() - last);
        result += rule.replace(line, m);
        last = m.capturedEnd();
    }
    if (last == 0) {
        return line;
    }
    result += QStringView(line).mid(last);
    return result;
}

// The message handler's state is never destroyed (allocated once, not freed at exit): a thread
// that logs while the process exits (Qt's HTTP thread, a pool thread) must not find the rules,
// the known secrets or their mutex already destroyed by static destruction. The same holds for
// every regular expression redact() reaches.
QMutex &secretsMutex()
{
    static QMutex *mutex = new QMutex;
    return *mutex;
}

// Longest first, so that a secret containing another one is replaced whole.
QStringList &knownSecrets()
{
    static QStringList *secrets = new QStringList;
    return *secrets;
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
    for (const Rule &rule : rules()) {
        out = apply(rule, out);
    }
    return out;
}

void addSecret(const QString &value)
{
    if (value.size() < 4) {
        return;
    }
    const QMutexLocker lock(&secretsMutex());
    QStringList &secrets = knownSecrets();
    if (secrets.contains(value)) {
        return;
    }
    const auto at = std::find_if(secrets.begin(), secrets.end(), [&value](const QString &s) { return s.size() < value.size(); });
    secrets.insert(at, value);
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
