#pragma once

// Small pieces the sandbox's controllers share: owner references, generated names, the
// reconcile queue that coalesces store changes into one pass per object.

#include "sandbox/util/names.h"

#include <QJsonObject>
#include <QObject>
#include <QRandomGenerator>
#include <QSet>
#include <QString>
#include <QTimer>

#include <functional>

namespace Starforge::Sandbox {

QJsonObject controllerReference(const QJsonObject &owner, bool blockOwnerDeletion = true);
bool isControlledBy(const QJsonObject &object, const QString &ownerUid);
QString nowRfc3339();
qint64 secondsSince(const QString &rfc3339);

// Collects "namespace/name" keys and reconciles each once per tick, outside the store's signal.
class ReconcileQueue final : public QObject
{
    Q_OBJECT
public:
    using Reconcile = std::function<void(const QString &ns, const QString &name)>;
    ReconcileQueue(Reconcile reconcile, QObject *parent = nullptr);
    void add(const QString &ns, const QString &name);
    void addAfter(const QString &ns, const QString &name, int ms);

private:
    void drain();
    Reconcile m_reconcile;
    QSet<QString> m_keys;
    QTimer m_timer;
};

} // namespace Starforge::Sandbox
