#include "sandbox/api/authorizer.h"

#include "sandbox/credential/exectoken.h"
#include "sandbox/store/objectstore.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMessageAuthenticationCode>

namespace Starforge::Sandbox {

namespace {

bool matchesAny(const QStringList &patterns, const QString &value)
{
    for (const QString &p : patterns) {
        if (p == u'*' || p == value) {
            return true;
        }
        // "pods/*" and "*/log" as RBAC allows.
        if (p.endsWith(QLatin1String("/*")) && value.startsWith(p.chopped(1))) {
            return true;
        }
        if (p.startsWith(QLatin1String("*/")) && value.endsWith(p.mid(1))) {
            return true;
        }
    }
    return false;
}

bool pathMatches(const QStringList &patterns, const QString &path)
{
    for (const QString &p : patterns) {
        if (p == u'*' || p == path || (p.endsWith(u'*') && path.startsWith(p.chopped(1)))) {
            return true;
        }
    }
    return false;
}

QStringList strings(const QJsonValue &v)
{
    QStringList out;
    for (const QJsonValue &s : v.toArray()) {
        out << s.toString();
    }
    return out;
}

QList<RbacRule> parseRules(const QJsonValue &rules)
{
    QList<RbacRule> out;
    for (const QJsonValue &r : rules.toArray()) {
        const QJsonObject ro = r.toObject();
        out << RbacRule{strings(ro.value(QStringLiteral("apiGroups"))), strings(ro.value(QStringLiteral("resources"))),
                        strings(ro.value(QStringLiteral("verbs"))), strings(ro.value(QStringLiteral("resourceNames"))),
                        strings(ro.value(QStringLiteral("namespaces"))), strings(ro.value(QStringLiteral("nonResourceURLs")))};
    }
    return out;
}

const QString Authenticated = QStringLiteral("system:authenticated");
const QString ServiceAccountPrefix = QStringLiteral("system:serviceaccount:");
const QString ServiceAccountsGroup = QStringLiteral("system:serviceaccounts");
const QString RbacGroup = QStringLiteral("rbac.authorization.k8s.io");

QByteArray base64Url(const QByteArray &data)
{
    return data.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals);
}

QByteArray sign(const QByteArray &key, const QByteArray &signingInput)
{
    return base64Url(QMessageAuthenticationCode::hash(signingInput, key, QCryptographicHash::Sha256));
}

bool sameBytes(const QByteArray &a, const QByteArray &b)
{
    if (a.size() != b.size()) return false;
    char diff = 0;
    for (qsizetype i = 0; i < a.size(); ++i) diff |= static_cast<char>(a[i] ^ b[i]);
    return diff == 0;
}

// Whether one of a binding's subjects is this user (RBAC's appliesTo).
bool appliesTo(const QJsonArray &subjects, const User &user, const QString &bindingNs)
{
    for (const QJsonValue &v : subjects) {
        const QJsonObject subject = v.toObject();
        const QString kind = subject.value(QStringLiteral("kind")).toString();
        const QString name = subject.value(QStringLiteral("name")).toString();
        if (kind == QLatin1String("User") && name == user.name) return true;
        if (kind == QLatin1String("Group") && user.groups.contains(name)) return true;
        if (kind == QLatin1String("ServiceAccount")) {
            const QString ns = subject.value(QStringLiteral("namespace")).toString();
            if (user.name == ServiceAccountPrefix + (ns.isEmpty() ? bindingNs : ns) + u':' + name) return true;
        }
    }
    return false;
}

const QString AdminName = QStringLiteral("sandbox-admin");

} // namespace

Authorizer::Authorizer(const QByteArray &adminToken)
{
    m_tokens << TokenUser{adminToken, AdminName, {QLatin1String(Credential::MastersGroup)}};
    // Cluster admin, as the cluster-admin ClusterRole that system:masters is bound to.
    m_groupRules.insert(QLatin1String(Credential::MastersGroup),
                        {RbacRule{{QStringLiteral("*")}, {QStringLiteral("*")}, {QStringLiteral("*")}, {}, {}, {}},
                         RbacRule{{}, {}, {QStringLiteral("*")}, {}, {}, {QStringLiteral("*")}}});
}

void Authorizer::acceptExecTokens(const QByteArray &secret)
{
    m_execSecret = secret;
}

void Authorizer::useObjectStore(const ObjectStore *store, const QByteArray &serviceAccountKey)
{
    m_store = store;
    m_serviceAccountKey = serviceAccountKey;
}

QByteArray Authorizer::serviceAccountToken(const QByteArray &key, const QString &ns, const QString &account, const QString &accountUid,
                                           const QString &secretName)
{
    // The claims of a legacy ServiceAccount token, as the token controller's generator writes them.
    const QJsonObject claims{{QStringLiteral("iss"), QStringLiteral("kubernetes/serviceaccount")},
                             {QStringLiteral("kubernetes.io/serviceaccount/namespace"), ns},
                             {QStringLiteral("kubernetes.io/serviceaccount/secret.name"), secretName},
                             {QStringLiteral("kubernetes.io/serviceaccount/service-account.name"), account},
                             {QStringLiteral("kubernetes.io/serviceaccount/service-account.uid"), accountUid},
                             {QStringLiteral("sub"), QString(ServiceAccountPrefix + ns + u':' + account)}};
    const QByteArray input = base64Url(R"({"alg":"HS256","typ":"JWT"})") + '.' + base64Url(QJsonDocument(claims).toJson(QJsonDocument::Compact));
    return input + '.' + sign(key, input);
}

std::optional<User> Authorizer::fromServiceAccountToken(const QByteArray &token) const
{
    const QList<QByteArray> parts = token.split('.');
    if (!m_store || m_serviceAccountKey.isEmpty() || parts.size() != 3) {
        return std::nullopt;
    }
    if (!sameBytes(sign(m_serviceAccountKey, parts[0] + '.' + parts[1]), parts[2])) {
        return std::nullopt;
    }
    const QJsonObject claims =
        QJsonDocument::fromJson(QByteArray::fromBase64(parts[1], QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals)).object();
    const QString ns = claims.value(QStringLiteral("kubernetes.io/serviceaccount/namespace")).toString();
    const QString account = claims.value(QStringLiteral("kubernetes.io/serviceaccount/service-account.name")).toString();
    const QString uid = claims.value(QStringLiteral("kubernetes.io/serviceaccount/service-account.uid")).toString();
    const QString secretName = claims.value(QStringLiteral("kubernetes.io/serviceaccount/secret.name")).toString();
    // A deleted Secret or ServiceAccount (or one made again, with a new uid) revokes the token.
    const ObjectPtr secret = m_store->get(QStringLiteral("secrets"), ns, secretName);
    const ObjectPtr serviceAccount = m_store->get(QStringLiteral("serviceaccounts"), ns, account);
    if (!secret || !serviceAccount || serviceAccount->uid != uid) {
        return std::nullopt;
    }
    const QString stored = secret->object.value(QStringLiteral("data")).toObject().value(QStringLiteral("token")).toString();
    if (!sameBytes(QByteArray::fromBase64(stored.toLatin1()), token)) {
        return std::nullopt;
    }
    return resolve(ServiceAccountPrefix + ns + u':' + account, {ServiceAccountsGroup, ServiceAccountsGroup + u':' + ns});
}

QList<RbacRule> Authorizer::boundRules(const User &user, const QString &ns) const
{
    QList<RbacRule> out;
    if (!m_store) {
        return out;
    }
    const auto roleRules = [this](const QJsonObject &roleRef, const QString &bindingNs) {
        const QString kind = roleRef.value(QStringLiteral("kind")).toString();
        const QString name = roleRef.value(QStringLiteral("name")).toString();
        ObjectPtr role;
        if (kind == QLatin1String("ClusterRole")) {
            role = m_store->get(QStringLiteral("clusterroles.") + RbacGroup, QString(), name);
        } else if (kind == QLatin1String("Role") && !bindingNs.isEmpty()) {
            role = m_store->get(QStringLiteral("roles.") + RbacGroup, bindingNs, name);
        }
        return role ? parseRules(role->object.value(QStringLiteral("rules"))) : QList<RbacRule>();
    };
    for (const ObjectPtr &binding : m_store->list(QStringLiteral("clusterrolebindings.") + RbacGroup)) {
        if (appliesTo(binding->object.value(QStringLiteral("subjects")).toArray(), user, QString())) {
            out += roleRules(binding->object.value(QStringLiteral("roleRef")).toObject(), QString());
        }
    }
    if (!ns.isEmpty()) {
        for (const ObjectPtr &binding : m_store->list(QStringLiteral("rolebindings.") + RbacGroup, ns)) {
            if (!appliesTo(binding->object.value(QStringLiteral("subjects")).toArray(), user, ns)) continue;
            for (RbacRule rule : roleRules(binding->object.value(QStringLiteral("roleRef")).toObject(), ns)) {
                // A RoleBinding grants in its namespace only, whatever the role says.
                rule.namespaces = {ns};
                rule.nonResourceURLs.clear();
                out << rule;
            }
        }
    }
    return out;
}

QList<RbacRule> Authorizer::defaultRules()
{
    return {
        RbacRule{{QStringLiteral("authorization.k8s.io")},
                 {QStringLiteral("selfsubjectaccessreviews"), QStringLiteral("selfsubjectrulesreviews")},
                 {QStringLiteral("create")}, {}, {}, {}},
        RbacRule{{QStringLiteral("authentication.k8s.io")}, {QStringLiteral("selfsubjectreviews")}, {QStringLiteral("create")}, {}, {}, {}},
        RbacRule{{}, {}, {QStringLiteral("get")}, {}, {},
                 {QStringLiteral("/api"), QStringLiteral("/api/*"), QStringLiteral("/apis"), QStringLiteral("/apis/*"),
                  QStringLiteral("/healthz"), QStringLiteral("/livez"), QStringLiteral("/readyz"), QStringLiteral("/version"),
                  QStringLiteral("/version/"), QStringLiteral("/openapi"), QStringLiteral("/openapi/*")}},
    };
}

Result<void> Authorizer::loadRbacFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        return Error::io(QStringLiteral("cannot read the RBAC file %1: %2").arg(path, file.errorString()));
    }
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &parseError);
    if (!doc.isObject()) {
        return Error::invalid(QStringLiteral("the RBAC file %1 is not a JSON object: %2").arg(path, parseError.errorString()));
    }
    for (const QJsonValue &u : doc.object().value(QStringLiteral("users")).toArray()) {
        const QJsonObject o = u.toObject();
        const QString name = o.value(QStringLiteral("name")).toString();
        if (name.isEmpty()) {
            return Error::invalid(QStringLiteral("the RBAC file %1 has a user without a \"name\"").arg(path));
        }
        const QByteArray token = o.value(QStringLiteral("token")).toString().toUtf8();
        const QStringList groups = strings(o.value(QStringLiteral("groups")));
        if (!token.isEmpty()) {
            m_tokens << TokenUser{token, name, groups};
        }
        m_userGroups[name] += groups;
        m_userRules[name] += parseRules(o.value(QStringLiteral("rules")));
    }
    for (const QJsonValue &g : doc.object().value(QStringLiteral("groups")).toArray()) {
        const QJsonObject o = g.toObject();
        const QString name = o.value(QStringLiteral("name")).toString();
        if (name.isEmpty()) {
            return Error::invalid(QStringLiteral("the RBAC file %1 has a group without a \"name\"").arg(path));
        }
        m_groupRules[name] += parseRules(o.value(QStringLiteral("rules")));
    }
    return {};
}

std::optional<User> Authorizer::authenticate(const QByteArray &authorizationHeader, const Http::ClientCertificate &certificate,
                                             const QDateTime &now) const
{
    // kube-apiserver's union of authenticators: the first success wins, and a failure only
    // counts when nothing else succeeds.
    if (auto user = fromCertificate(certificate, now)) {
        return user;
    }
    if (auto user = fromToken(authorizationHeader, now)) {
        return user;
    }
    if (certificate.isPresent() || !authorizationHeader.isEmpty()) {
        return std::nullopt;
    }
    return User{QStringLiteral("system:anonymous"), {QStringLiteral("system:unauthenticated")}, {}};
}

std::optional<User> Authorizer::fromCertificate(const Http::ClientCertificate &certificate, const QDateTime &now) const
{
    // Checked again here: a keep-alive connection can outlive the certificate it began with.
    if (!certificate.verified || certificate.certificate.expiryDate() < now || certificate.certificate.effectiveDate() > now) {
        return std::nullopt;
    }
    const QString name = certificate.certificate.subjectInfo(QSslCertificate::CommonName).value(0);
    if (name.isEmpty()) {
        return std::nullopt;
    }
    return resolve(name, certificate.certificate.subjectInfo(QSslCertificate::Organization));
}

std::optional<User> Authorizer::fromToken(const QByteArray &authorizationHeader, const QDateTime &now) const
{
    if (!authorizationHeader.startsWith("Bearer ")) {
        return std::nullopt;
    }
    const QByteArray token = authorizationHeader.mid(7).trimmed();
    if (token.isEmpty()) {
        return std::nullopt;
    }
    if (!m_execSecret.isEmpty() && token.startsWith(Credential::ExecToken::Prefix)) {
        Credential::ExecToken::Claims claims;
        if (Credential::ExecToken::verify(token, m_execSecret, now, &claims) != Credential::ExecToken::Check::Valid) {
            return std::nullopt;
        }
        // The tool's own user is an admin; another name (a token made by hand with the secret)
        // is in the groups the RBAC file gives it.
        QStringList groups = m_userGroups.value(claims.user);
        if (claims.user == QLatin1String(Credential::ExecUser)) {
            groups.prepend(QLatin1String(Credential::MastersGroup));
        }
        return resolve(claims.user, groups);
    }
    for (const TokenUser &u : m_tokens) {
        if (u.token == token) {
            return resolve(u.name, u.groups);
        }
    }
    return fromServiceAccountToken(token);
}

User Authorizer::resolve(const QString &name, QStringList groups) const
{
    if (!groups.contains(Authenticated)) {
        groups << Authenticated;
    }
    User user{name, groups, m_userRules.value(name)};
    for (const QString &g : std::as_const(groups)) {
        user.rules += m_groupRules.value(g);
    }
    return user;
}

bool Authorizer::allowed(const User &user, const Attributes &a) const
{
    const auto check = [&](const RbacRule &r) {
        if (!matchesAny(r.verbs, a.verb)) {
            return false;
        }
        if (!a.isResource) {
            return pathMatches(r.nonResourceURLs, a.path);
        }
        if (r.resources.isEmpty() || !matchesAny(r.apiGroups, a.group) || !matchesAny(r.resources, a.resource)) {
            return false;
        }
        if (!r.resourceNames.isEmpty() && !r.resourceNames.contains(a.name)) {
            return false;
        }
        return r.namespaces.isEmpty() || (!a.ns.isEmpty() && matchesAny(r.namespaces, a.ns));
    };
    const QList<RbacRule> defaults = defaultRules();
    if (std::any_of(user.rules.cbegin(), user.rules.cend(), check) || std::any_of(defaults.cbegin(), defaults.cend(), check)) {
        return true;
    }
    // Read at each request, so a Role changed a moment ago is what decides.
    const QList<RbacRule> bound = boundRules(user, a.ns);
    return std::any_of(bound.cbegin(), bound.cend(), check);
}

QList<RbacRule> Authorizer::rulesIn(const User &user, const QString &ns) const
{
    QList<RbacRule> out;
    for (const RbacRule &r : user.rules + defaultRules() + boundRules(user, ns)) {
        if (r.namespaces.isEmpty() || matchesAny(r.namespaces, ns)) {
            out << r;
        }
    }
    return out;
}

QString Authorizer::denial(const User &user, const Attributes &a)
{
    if (!a.isResource) {
        return QStringLiteral("User \"%1\" cannot %2 path \"%3\"").arg(user.name, a.verb, a.path);
    }
    if (a.ns.isEmpty()) {
        return QStringLiteral("User \"%1\" cannot %2 resource \"%3\" in API group \"%4\" at the cluster scope")
            .arg(user.name, a.verb, a.resource, a.group);
    }
    return QStringLiteral("User \"%1\" cannot %2 resource \"%3\" in API group \"%4\" in the namespace \"%5\"")
        .arg(user.name, a.verb, a.resource, a.group, a.ns);
}

} // namespace Starforge::Sandbox
