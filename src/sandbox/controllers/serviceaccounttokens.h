#pragma once

// Kubernetes' token controller for ServiceAccount token Secrets (type
// kubernetes.io/service-account-token, annotation kubernetes.io/service-account.name): once the
// ServiceAccount exists, it fills the Secret's data with token (a token the API server accepts,
// Authorizer::serviceAccountToken), ca.crt (the cluster's CA) and namespace, and notes the
// ServiceAccount's uid in the annotation kubernetes.io/service-account.uid. A Secret that names a
// ServiceAccount not made yet waits for it (kube-controller-manager would delete it). When the
// ServiceAccount it was filled for is gone (deleted, or made again with another uid), the Secret
// is deleted, and with it the token.

#include "sandbox/controllers/controllerutil.h"

#include <QByteArray>
#include <QObject>

namespace Starforge::Sandbox {

class ObjectStore;
struct Change;

class ServiceAccountTokenController final : public QObject
{
    Q_OBJECT
public:
    ServiceAccountTokenController(ObjectStore *store, QByteArray signingKey, QByteArray caPem, QObject *parent = nullptr);

    static constexpr char TokenType[] = "kubernetes.io/service-account-token";
    static constexpr char NameAnnotation[] = "kubernetes.io/service-account.name";
    static constexpr char UidAnnotation[] = "kubernetes.io/service-account.uid";

private:
    void onChange(const Change &change);
    void reconcile(const QString &ns, const QString &name);

    ObjectStore *m_store;
    QByteArray m_signingKey;
    QByteArray m_caPem;
    ReconcileQueue m_queue;
};

} // namespace Starforge::Sandbox
