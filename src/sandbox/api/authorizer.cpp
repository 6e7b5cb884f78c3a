#include "sandbox/api/authorizer.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

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

} // namespace

Authorizer::Authorizer(const QByteArray &adminToken)
{
    User admin;
    admin.name = QStringLiteral("sandbox-admin");
    admin.token = adminToken;
    admin.rules << RbacRule{{QStringLiteral("*")}, {QStringLiteral("*")}, {QStringLiteral("*")}, {}, {}, {}};
    admin.rules << RbacRule{{}, {}, {QStringLiteral("*")}, {}, {}, {QStringLiteral("*")}};
    m_users << admin;
}

QList<RbacRule> Authorizer::defaultRules()
{
    return {
        RbacRule{{QStringLiteral("authorization.k8s.io")},
                 {QStringLiteral("selfsubjectaccessreviews"), QStringLiteral("selfsubjectrulesreviews")},
                 {QStringLiteral("create")}, {}, {}, {}},
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
    const QJsonArray users = doc.object().value(QStringLiteral("users")).toArray();
    for (const QJsonValue &u : users) {
        const QJsonObject o = u.toObject();
        User user;
        user.name = o.value(QStringLiteral("name")).toString();
        user.token = o.value(QStringLiteral("token")).toString().toUtf8();
        if (user.name.isEmpty() || user.token.isEmpty()) {
            return Error::invalid(QStringLiteral("the RBAC file %1 has a user without \"name\" or \"token\"").arg(path));
        }
        for (const QJsonValue &r : o.value(QStringLiteral("rules")).toArray()) {
            const QJsonObject ro = r.toObject();
            user.rules << RbacRule{strings(ro.value(QStringLiteral("apiGroups"))), strings(ro.value(QStringLiteral("resources"))),
                                   strings(ro.value(QStringLiteral("verbs"))), strings(ro.value(QStringLiteral("resourceNames"))),
                                   strings(ro.value(QStringLiteral("namespaces"))),
                                   strings(ro.value(QStringLiteral("nonResourceURLs")))};
        }
        m_users << user;
    }
    return {};
}

const User *Authorizer::authenticate(const QByteArray &authorizationHeader) const
{
    if (!authorizationHeader.startsWith("Bearer ")) {
        return nullptr;
    }
    const QByteArray token = authorizationHeader.mid(7).trimmed();
    for (const User &u : m_users) {
        if (!token.isEmpty() && u.token == token) {
            return &u;
        }
    }
    return nullptr;
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
    return std::any_of(user.rules.cbegin(), user.rules.cend(), check) || std::any_of(defaults.cbegin(), defaults.cend(), check);
}

QList<RbacRule> Authorizer::rulesIn(const User &user, const QString &ns) const
{
    QList<RbacRule> out;
    for (const RbacRule &r : user.rules + defaultRules()) {
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
