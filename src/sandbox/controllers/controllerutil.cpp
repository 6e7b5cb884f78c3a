#include "sandbox/controllers/controllerutil.h"

#include <QDateTime>
#include <QJsonArray>

namespace Starforge::Sandbox {

QJsonObject controllerReference(const QJsonObject &owner, bool blockOwnerDeletion)
{
    const QJsonObject meta = owner.value(QStringLiteral("metadata")).toObject();
    return QJsonObject{{QStringLiteral("apiVersion"), owner.value(QStringLiteral("apiVersion"))},
                       {QStringLiteral("kind"), owner.value(QStringLiteral("kind"))},
                       {QStringLiteral("name"), meta.value(QStringLiteral("name"))},
                       {QStringLiteral("uid"), meta.value(QStringLiteral("uid"))},
                       {QStringLiteral("controller"), true},
                       {QStringLiteral("blockOwnerDeletion"), blockOwnerDeletion}};
}

bool isControlledBy(const QJsonObject &object, const QString &ownerUid)
{
    for (const QJsonValue &ref : object.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("ownerReferences")).toArray()) {
        if (ref.toObject().value(QStringLiteral("uid")).toString() == ownerUid && ref.toObject().value(QStringLiteral("controller")).toBool()) {
            return true;
        }
    }
    return false;
}


QString nowRfc3339()
{
    return QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
}

qint64 secondsSince(const QString &rfc3339)
{
    const QDateTime t = QDateTime::fromString(rfc3339, Qt::ISODate);
    return t.isValid() ? t.secsTo(QDateTime::currentDateTimeUtc()) : 0;
}

ReconcileQueue::ReconcileQueue(Reconcile reconcile, QObject *parent)
    : QObject(parent)
    , m_reconcile(std::move(reconcile))
{
    m_timer.setSingleShot(true);
    m_timer.setInterval(0);
    connect(&m_timer, &QTimer::timeout, this, &ReconcileQueue::drain);
}

void ReconcileQueue::add(const QString &ns, const QString &name)
{
    m_keys.insert(ns + u'/' + name);
    if (!m_timer.isActive()) {
        m_timer.start();
    }
}

void ReconcileQueue::addAfter(const QString &ns, const QString &name, int ms)
{
    QTimer::singleShot(ms, this, [this, ns, name] { add(ns, name); });
}

void ReconcileQueue::drain()
{
    const QSet<QString> keys = std::exchange(m_keys, {});
    for (const QString &key : keys) {
        const qsizetype slash = key.indexOf(u'/');
        m_reconcile(key.left(slash), key.mid(slash + 1));
    }
}

} // namespace Starforge::Sandbox
