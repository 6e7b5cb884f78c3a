#include "core/config/validation.h"

#include "core/config/execplugin.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSslCertificate>
#include <QUrl>

namespace Starforge::Validation {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text { Q_DECLARE_TR_FUNCTIONS(Validation) };

QString quoted(const QString &text)
{
    return u'\'' + text + u'\'';
}

const QRegularExpression &dnsLabelPattern()
{
    static const QRegularExpression re(QStringLiteral("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"));
    return re;
}

// Explains what is wrong with a DNS-1123 label in the terms a user can fix.
QString dnsLabelProblem(const QString &text)
{
    if (text.size() > 63) {
        return Text::tr("%1 is %2 characters long; at most 63 are allowed").arg(quoted(text)).arg(text.size());
    }
    for (const QChar c : text) {
        if (c.isUpper()) {
            return Text::tr("%1 has uppercase letters; use lowercase (%2)").arg(quoted(text), text.toLower());
        }
    }
    for (const QChar c : text) {
        if (!(c.isDigit() || (c >= u'a' && c <= u'z') || c == u'-')) {
            return Text::tr("%1 contains %2; only lowercase letters, digits and '-' are allowed")
                .arg(quoted(text), quoted(QString(c)));
        }
    }
    return Text::tr("%1 must start and end with a lowercase letter or digit").arg(quoted(text));
}

} // namespace

Result<QString> url(const QString &text)
{
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty()) {
        return Error::invalid(Text::tr("a URL is required, e.g. https://api.example.com:6443"));
    }
    const QUrl u(trimmed, QUrl::StrictMode);
    if (!u.isValid()) {
        return Error::invalid(Text::tr("%1 is not a valid URL (%2)").arg(quoted(trimmed), u.errorString()));
    }
    const QString scheme = u.scheme().toLower();
    if (scheme.isEmpty() || !trimmed.contains(QStringLiteral("://"))) {
        return Error::invalid(Text::tr("%1 has no scheme; write it as https://%1").arg(trimmed));
    }
    if (scheme != u"https" && scheme != u"http") {
        return Error::invalid(
            Text::tr("%1 uses the scheme '%2'; only https:// and http:// are supported").arg(quoted(trimmed), scheme));
    }
    if (u.host().isEmpty()) {
        return Error::invalid(Text::tr("%1 has no host name; write e.g. %2://api.example.com:6443")
                                  .arg(quoted(trimmed), scheme));
    }
    if (!u.userInfo().isEmpty()) {
        return Error::invalid(
            Text::tr("%1 carries user credentials; remove them from the URL and set the token or keys instead")
                .arg(quoted(u.toString(QUrl::RemoveUserInfo))));
    }
    if (u.hasQuery() || u.hasFragment()) {
        return Error::invalid(Text::tr("%1 has a query or fragment; remove the part after '?' or '#'").arg(quoted(trimmed)));
    }
    QString canonical = u.toString(QUrl::NormalizePathSegments);
    while (canonical.endsWith(u'/')) {
        canonical.chop(1);
    }
    return canonical;
}

Result<QString> quantity(const QString &text)
{
    // The grammar of k8s.io/apimachinery/pkg/api/resource: <signedNumber><suffix>, where suffix is
    // a binary SI suffix, a decimal SI suffix or a decimal exponent.
    static const QRegularExpression re(QStringLiteral(
        "^[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$"));
    const QString trimmed = text.trimmed();
    const QString hint = Text::tr(
        "write a number with an optional suffix, e.g. 64Gi, 512Mi or 1G "
        "(binary: Ki Mi Gi Ti Pi Ei; decimal: k M G T P E)");
    if (trimmed.isEmpty()) {
        //: %1: how to write a quantity ("write a number with an optional suffix, ...")
        return Error::invalid(Text::tr("a quantity is required; %1").arg(hint));
    }
    if (!re.match(trimmed).hasMatch()) {
        static const QRegularExpression unit(QStringLiteral("^([0-9.]+)\\s*([KMGTPE])i?[bB]$"));
        const auto m = unit.match(trimmed);
        if (m.hasMatch()) {
            return Error::invalid(Text::tr("%1 is not a Kubernetes quantity; Kubernetes writes %2%3i (binary) or %2%3 (decimal)")
                                      .arg(quoted(trimmed), m.captured(1), m.captured(2)));
        }
        //: %2: how to write a quantity ("write a number with an optional suffix, ...")
        return Error::invalid(Text::tr("%1 is not a Kubernetes quantity; %2").arg(quoted(trimmed), hint));
    }
    if (trimmed.startsWith(u'-')) {
        return Error::invalid(Text::tr("%1 is negative; a size must be positive").arg(quoted(trimmed)));
    }
    return trimmed;
}

Result<QString> dns1123Label(const QString &text)
{
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty()) {
        return Error::invalid(Text::tr("a name is required (lowercase letters, digits and '-')"));
    }
    if (trimmed.size() <= 63 && dnsLabelPattern().match(trimmed).hasMatch()) {
        return trimmed;
    }
    return Error::invalid(dnsLabelProblem(trimmed));
}

Result<QString> dns1123Subdomain(const QString &text)
{
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty()) {
        return Error::invalid(Text::tr("a name is required (lowercase letters, digits, '-' and '.')"));
    }
    if (trimmed.size() > 253) {
        return Error::invalid(
            Text::tr("%1 is %2 characters long; at most 253 are allowed").arg(quoted(trimmed)).arg(trimmed.size()));
    }
    const QStringList labels = trimmed.split(u'.');
    for (const QString &label : labels) {
        if (label.isEmpty()) {
            return Error::invalid(Text::tr("%1 has an empty part between dots").arg(quoted(trimmed)));
        }
        if (!dnsLabelPattern().match(label).hasMatch()) {
            //: %1: what is wrong with one part of the name %2
            return Error::invalid(labels.size() > 1 ? Text::tr("%1 (in %2)").arg(dnsLabelProblem(label), quoted(trimmed)) : dnsLabelProblem(label));
        }
    }
    return trimmed;
}

Result<QString> labelKey(const QString &text)
{
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty()) {
        return Error::invalid(Text::tr("a label key is required, e.g. starforge/gpu-series"));
    }
    QString name = trimmed;
    const qsizetype slash = trimmed.indexOf(u'/');
    if (slash >= 0) {
        const QString prefix = trimmed.left(slash);
        name = trimmed.mid(slash + 1);
        if (name.contains(u'/')) {
            return Error::invalid(Text::tr("%1 has more than one '/'; a label key is prefix/name").arg(quoted(trimmed)));
        }
        const auto prefixOk = dns1123Subdomain(prefix);
        if (!prefixOk) {
            return Error::invalid(Text::tr("the prefix of %1 is not a DNS subdomain: %2").arg(quoted(trimmed), prefixOk.error().message));
        }
    }
    static const QRegularExpression nameRe(QStringLiteral("^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"));
    if (name.isEmpty() || name.size() > 63 || !nameRe.match(name).hasMatch()) {
        return Error::invalid(Text::tr("the name part %1 of %2 must be 1 to 63 letters, digits, '-', '_' or '.', "
                                       "beginning and ending with a letter or digit")
                                  .arg(quoted(name), quoted(trimmed)));
    }
    return trimmed;
}

Result<QString> integer(const QString &text, qint64 minimum, qint64 maximum)
{
    const QString trimmed = text.trimmed();
    bool ok = false;
    const qint64 value = trimmed.toLongLong(&ok);
    if (!ok) {
        return Error::invalid(Text::tr("%1 is not a whole number; write digits only, e.g. %2").arg(quoted(trimmed)).arg(qMax<qint64>(minimum, 600)));
    }
    if (value < minimum || value > maximum) {
        return Error::invalid(Text::tr("%1 is out of range; use a number from %2 to %3").arg(quoted(trimmed)).arg(minimum).arg(maximum));
    }
    return QString::number(value);
}

bool parseBoolean(const QString &text, bool fallback)
{
    const QString t = text.trimmed().toLower();
    if (t == u"true" || t == u"1" || t == u"yes" || t == u"on") {
        return true;
    }
    if (t == u"false" || t == u"0" || t == u"no" || t == u"off") {
        return false;
    }
    return fallback;
}

Result<QString> boolean(const QString &text)
{
    const QString t = text.trimmed().toLower();
    if (t == u"true" || t == u"1" || t == u"yes" || t == u"on") {
        return QStringLiteral("true");
    }
    if (t == u"false" || t == u"0" || t == u"no" || t == u"off") {
        return QStringLiteral("false");
    }
    return Error::invalid(Text::tr("%1 is not a yes/no value; write true or false (1/0, yes/no and on/off also work)").arg(quoted(text.trimmed())));
}

Result<QString> absolutePath(const QString &text)
{
    const QString trimmed = text.trimmed();
    if (!trimmed.startsWith(u'/')) {
        return Error::invalid(Text::tr("%1 is not an absolute path; start it with '/', e.g. /starforge").arg(quoted(trimmed)));
    }
    if (trimmed.split(u'/').contains(QStringLiteral(".."))) {
        return Error::invalid(Text::tr("%1 contains '..'; write the path without it").arg(quoted(trimmed)));
    }
    QString canonical = trimmed;
    while (canonical.size() > 1 && canonical.endsWith(u'/')) {
        canonical.chop(1);
    }
    return canonical;
}

Result<QString> imageReference(const QString &text)
{
    // The grammar of distribution/reference, simplified to what registries accept in practice.
    static const QRegularExpression re(QStringLiteral(
        "^(?:(?<registry>[A-Za-z0-9][A-Za-z0-9.-]*(?::[0-9]+)?)/)?"
        "(?<repo>[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)"
        "(?::(?<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?"
        "(?:@(?<digest>sha256:[a-f0-9]{64}))?$"));
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty()) {
        return Error::invalid(Text::tr("an image is required, e.g. nvcr.io/nvidia/nemo-rl:v0.7.0"));
    }
    if (trimmed.contains(u' ')) {
        return Error::invalid(Text::tr("%1 contains a space; an image reference has none").arg(quoted(trimmed)));
    }
    if (!re.match(trimmed).hasMatch()) {
        static const QRegularExpression digest(QStringLiteral("@sha256:[a-f0-9]{64}$"));
        if (trimmed.contains(u'@') && !digest.match(trimmed).hasMatch()) {
            return Error::invalid(Text::tr("%1 has a digest that is not sha256:<64 hex digits>").arg(quoted(trimmed)));
        }
        return Error::invalid(Text::tr("%1 is not an image reference; write [registry/]repository[:tag], with a "
                                       "lowercase repository, e.g. nvcr.io/nvidia/nemo-rl:v0.7.0")
                                  .arg(quoted(trimmed)));
    }
    return trimmed;
}

Result<QString> bucketName(const QString &text)
{
    static const QRegularExpression re(QStringLiteral("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"));
    static const QRegularExpression ip(QStringLiteral("^[0-9]+\\.[0-9]+\\.[0-9]+\\.[0-9]+$"));
    const QString trimmed = text.trimmed();
    if (!re.match(trimmed).hasMatch() || trimmed.contains(QStringLiteral("..")) || ip.match(trimmed).hasMatch()) {
        return Error::invalid(Text::tr("%1 is not an S3 bucket name; use 3 to 63 lowercase letters, digits, '-' and "
                                       "'.', starting and ending with a letter or digit")
                                  .arg(quoted(trimmed)));
    }
    return trimmed;
}

Result<QString> version(const QString &text)
{
    static const QRegularExpression re(QStringLiteral("^[0-9]+\\.[0-9]+(\\.[0-9]+)?([-.+][0-9A-Za-z.]+)?$"));
    const QString trimmed = text.trimmed();
    if (!re.match(trimmed).hasMatch()) {
        return Error::invalid(Text::tr("%1 is not a version; write it as major.minor.patch, e.g. 2.55.1").arg(quoted(trimmed)));
    }
    return trimmed;
}

namespace {

// Which PEM certificate a file or a *-data value holds: each has its own sentences, so that a
// translation can decline "the CA file" and "the certificate file" as its grammar needs.
enum class Pem { Ca, Certificate };

// A PEM certificate file, as an absolute path.
Result<QString> pemFile(const QString &text, Pem kind)
{
    const QString trimmed = text.trimmed();
    const QFileInfo info(trimmed);
    const bool ca = kind == Pem::Ca;
    if (!info.isAbsolute()) {
        return Error::invalid(Text::tr("%1 is not an absolute path to a PEM file").arg(quoted(trimmed)));
    }
    if (!info.exists()) {
        return Error::invalid((ca ? Text::tr("the CA file %1 does not exist") : Text::tr("the certificate file %1 does not exist"))
                                  .arg(quoted(trimmed)));
    }
    if (!info.isFile() || !info.isReadable()) {
        return Error::invalid((ca ? Text::tr("the CA file %1 is not a readable file") : Text::tr("the certificate file %1 is not a readable file"))
                                  .arg(quoted(trimmed)));
    }
    if (QSslCertificate::fromPath(trimmed, QSsl::Pem).isEmpty()) {
        return Error::invalid((ca ? Text::tr("the CA file %1 holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
                                  : Text::tr("the certificate file %1 holds no PEM certificate (-----BEGIN CERTIFICATE-----)"))
                                  .arg(quoted(trimmed)));
    }
    return trimmed;
}

// Base64 of a PEM certificate, as a kubeconfig's *-data fields hold it.
Result<QString> pemData(const QString &text, Pem kind)
{
    const QString trimmed = text.trimmed();
    const bool ca = kind == Pem::Ca;
    const auto decoded = QByteArray::fromBase64Encoding(trimmed.toLatin1(), QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded) {
        // The field to paste, by its kubeconfig name.
        return Error::invalid(ca ? Text::tr("the CA data is not base64; paste the %1 value of a kubeconfig").arg(QStringLiteral("certificate-authority-data"))
                                 : Text::tr("the certificate data is not base64; paste the %1 value of a kubeconfig").arg(QStringLiteral("client-certificate-data")));
    }
    if (QSslCertificate::fromData(*decoded, QSsl::Pem).isEmpty()) {
        return Error::invalid(ca ? Text::tr("the CA data decodes to no PEM certificate (-----BEGIN CERTIFICATE-----)")
                                 : Text::tr("the certificate data decodes to no PEM certificate (-----BEGIN CERTIFICATE-----)"));
    }
    return trimmed;
}

} // namespace

Result<QString> caFile(const QString &text)
{
    return pemFile(text, Pem::Ca);
}

Result<QString> caData(const QString &text)
{
    return pemData(text, Pem::Ca);
}

Result<QString> certificateFile(const QString &text)
{
    return pemFile(text, Pem::Certificate);
}

Result<QString> certificateData(const QString &text)
{
    return pemData(text, Pem::Certificate);
}

Result<QString> proxyUrl(const QString &text)
{
    const QString trimmed = text.trimmed();
    const QUrl u(trimmed, QUrl::StrictMode);
    const QString scheme = u.scheme().toLower();
    if (!u.isValid() || !trimmed.contains(QStringLiteral("://"))) {
        return Error::invalid(Text::tr("%1 is not a proxy URL; write e.g. http://proxy.example.com:3128 or socks5://127.0.0.1:1080").arg(quoted(trimmed)));
    }
    if (scheme == u"https") {
        // Net::proxyFor refuses it too: Qt has no proxy type that speaks TLS to the proxy.
        return Error::invalid(Text::tr("%1 is a proxy reached over TLS (https://), which this app cannot speak to; give the proxy's "
                                       "plain http:// address (requests to https:// servers stay encrypted through it) or a socks5:// one")
                                  .arg(quoted(trimmed)));
    }
    if (scheme != u"http" && scheme != u"socks5" && scheme != u"socks5h") {
        return Error::invalid(Text::tr("%1 uses the scheme '%2'; a proxy is http:// or socks5://").arg(quoted(trimmed), scheme));
    }
    if (u.host().isEmpty()) {
        return Error::invalid(Text::tr("%1 has no host name").arg(quoted(trimmed)));
    }
    return trimmed;
}

Result<QString> execPlugin(const QString &text)
{
    const auto plugin = Config::ExecPlugin::parse(text.trimmed());
    if (!plugin) {
        return plugin.error();
    }
    return QString::fromUtf8(QJsonDocument(plugin->toJson()).toJson(QJsonDocument::Compact));
}

Result<QString> profileName(const QString &text)
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$"));
    const QString trimmed = text.trimmed();
    if (trimmed.isEmpty()) {
        return Error::invalid(Text::tr("a profile name is required"));
    }
    if (!re.match(trimmed).hasMatch()) {
        return Error::invalid(Text::tr("%1 is not a profile name; use 1 to 63 letters, digits, '.', '_' or '-', "
                                       "starting with a letter or digit")
                                  .arg(quoted(trimmed)));
    }
    return trimmed;
}

} // namespace Starforge::Validation
