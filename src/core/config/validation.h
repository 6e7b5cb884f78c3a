#pragma once

// Validators for the value kinds settings and manifests use. Each returns the value in canonical
// form, or an Error whose message says what is wrong and what to write instead. Messages do not
// name the setting; callers prefix it (see SettingsSchema::validate).

#include "core/util/result.h"

#include <QString>

namespace Starforge::Validation {

// http(s)://host[:port][/path], no user info, query or fragment.
Result<QString> url(const QString &text);
// A Kubernetes resource quantity such as 64Gi, 500m, 1.5G or 1e3.
Result<QString> quantity(const QString &text);
// A label key: optional DNS-1123 subdomain prefix and '/', then a name of at most 63 characters.
Result<QString> labelKey(const QString &text);
// DNS-1123 label: namespaces. At most 63 lowercase alphanumerics or '-', alphanumeric at both ends.
Result<QString> dns1123Label(const QString &text);
// DNS-1123 subdomain: PVC names. At most 253 characters of DNS-1123 labels joined by '.'.
Result<QString> dns1123Subdomain(const QString &text);
// A decimal integer within [minimum, maximum].
Result<QString> integer(const QString &text, qint64 minimum, qint64 maximum);
// true/false, also 1/0, yes/no, on/off in any case; canonical form "true" or "false".
Result<QString> boolean(const QString &text);
// An absolute POSIX path inside the container or on this machine.
Result<QString> absolutePath(const QString &text);
// A container image reference: [registry[:port]/]repository[:tag][@sha256:digest].
Result<QString> imageReference(const QString &text);
// An S3 bucket name: 3 to 63 lowercase letters, digits, '.' and '-'.
Result<QString> bucketName(const QString &text);
// A dotted release version such as 2.55.1.
Result<QString> version(const QString &text);
// A readable PEM file holding at least one certificate.
Result<QString> caFile(const QString &text);
// Base64 of a PEM bundle holding at least one certificate (kubeconfig's certificate-authority-data).
Result<QString> caData(const QString &text);
// A readable PEM file, or base64 of PEM text, holding at least one certificate (a client's).
Result<QString> certificateFile(const QString &text);
Result<QString> certificateData(const QString &text);
// A proxy: http:// or socks5:// (socks5h:// too) with a host; returned as given. https:// is
// refused: Qt cannot speak TLS to a proxy.
Result<QString> proxyUrl(const QString &text);
// A kubeconfig exec stanza as JSON (Config::ExecPlugin); returned compact.
Result<QString> execPlugin(const QString &text);
// A profile name: 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit.
Result<QString> profileName(const QString &text);

// Parses a canonical boolean; anything that boolean() accepts.
bool parseBoolean(const QString &text, bool fallback);

} // namespace Starforge::Validation
