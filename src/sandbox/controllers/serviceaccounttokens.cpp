#include "sandbox/controllers/serviceaccounttokens.h"

#include "sandbox/api/authorizer.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

namespace Starforge::Sandbox {

namespace {

QString annotation(const QJsonObject &object, const char *key)
{
    return object.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("annotations")).toObject().value(QLatin1String(key)).toString();
}

bool isTokenSecret(const QJsonObject &secret)
{
    return secret.value(QStringLiteral("type")).toString() == QLatin1String(ServiceAccountTokenController::TokenType);
}

QString base64(const QByteArray &data)
{
    return QString::fromLatin1(data.toBase64());
}

} // namespace

ServiceAccountTokenController::ServiceAccountTokenController(ObjectStore *store, QByteArray signingKey, QByteArray caPem, QObject *parent)
    : QObject(parent)
    , m_store(store)
    , m_signingKey(std::move(signingKey))
    , m_caPem(std::move(caPem))
    , m_queue([this](const QString &ns, const QString &name) { reconcile(ns, name); }, this)
{
    connect(store, &ObjectStore::changed, this, &ServiceAccountTokenController::onChange);
}

void ServiceAccountTokenController::onChange(const Change &change)
{
    if (change.storage == QLatin1String("secrets")) {
        if (change.type != ChangeType::Deleted && isTokenSecret(change.object->object)) m_queue.add(change.object->ns, change.object->name);
        return;
    }
    if (change.storage != QLatin1String("serviceaccounts")) return;
    // The Secrets that name this ServiceAccount: filled now, or deleted with it.
    for (const ObjectPtr &secret : m_store->list(QStringLiteral("secrets"), change.object->ns)) {
        if (isTokenSecret(secret->object) && annotation(secret->object, NameAnnotation) == change.object->name) m_queue.add(secret->ns, secret->name);
    }
}

void ServiceAccountTokenController::reconcile(const QString &ns, const QString &name)
{
    const ObjectPtr secret = m_store->get(QStringLiteral("secrets"), ns, name);
    if (!secret || !isTokenSecret(secret->object)) return;
    const ResourceType *secrets = ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("secrets"));
    const QString account = annotation(secret->object, NameAnnotation);
    const QString filledFor = annotation(secret->object, UidAnnotation);
    const ObjectPtr serviceAccount = m_store->get(QStringLiteral("serviceaccounts"), ns, account);
    if (!serviceAccount || (!filledFor.isEmpty() && filledFor != serviceAccount->uid)) {
        if (!filledFor.isEmpty()) (void)m_store->remove(*secrets, ns, name);
        return;
    }
    if (filledFor == serviceAccount->uid && secret->object.value(QStringLiteral("data")).toObject().contains(QStringLiteral("token"))) return;
    const QByteArray token = Authorizer::serviceAccountToken(m_signingKey, ns, account, serviceAccount->uid, name);
    const QString uid = serviceAccount->uid;
    m_store->modify(*secrets, ns, name, [&](QJsonObject &object) {
        QJsonObject metadata = object.value(QStringLiteral("metadata")).toObject();
        QJsonObject annotations = metadata.value(QStringLiteral("annotations")).toObject();
        annotations.insert(QLatin1String(UidAnnotation), uid);
        metadata.insert(QStringLiteral("annotations"), annotations);
        object.insert(QStringLiteral("metadata"), metadata);
        QJsonObject data = object.value(QStringLiteral("data")).toObject();
        data.insert(QStringLiteral("token"), base64(token));
        data.insert(QStringLiteral("ca.crt"), base64(m_caPem));
        data.insert(QStringLiteral("namespace"), base64(ns.toUtf8()));
        object.insert(QStringLiteral("data"), data);
        return true;
    });
}

} // namespace Starforge::Sandbox
