#pragma once

// Which KubeRay operator the cluster runs, read from its rayjobs.ray.io CustomResourceDefinition.
// Each release added a RayJob field the app cares about, so the newest one the served ray.io/v1
// schema has names the release (docs/kuberay.md, "Version differences"):
//   status.jobStatusCheckFailureStartTime → 1.7, spec.preRunningDeadlineSeconds → 1.6,
//   spec.deletionStrategy → 1.5, none of them → 1.4 (or older).
// CRDs are cluster-scoped: reading one needs `get` on customresourcedefinitions
// (apiextensions.k8s.io) at the cluster scope, which many tokens lack. A 403 is therefore an
// outcome of its own, Unknown, after which callers assume the oldest release (no
// preRunningDeadlineSeconds in the RayJob: the app enforces that deadline itself). A 404 means
// KubeRay is not installed.

#include "core/kube/apierror.h"

#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QVersionNumber>

#include <optional>

namespace Starforge::Kube {

class KubeClient;
struct ApiResult;

struct OperatorVersion
{
    enum class Outcome {
        Detected,      // version from the CRD's schema; evidence names the field that decided
        Unknown,       // 403: the token may not read CRDs; assume the oldest release
        NotInstalled,  // 404: the cluster has no rayjobs.ray.io CRD
        Unsupported,   // the CRD serves no ray.io/v1: KubeRay before 1.0
        Failed,        // no answer, 401, a server error or an unreadable answer: see error
    };

    Outcome outcome = Outcome::Failed;
    QVersionNumber version;          // Detected: 1.4 to 1.7, where 1.4 stands for "1.4 or older"
    QString evidence;                // Detected: "spec.preRunningDeadlineSeconds", ...; empty for 1.4
    QString message;                 // one sentence for people, for every outcome
    std::optional<ApiError> error;   // the API's answer when the CRD could not be read

    bool detected() const { return outcome == Outcome::Detected; }
    // The release to build RayJobs for: the detected one, else the oldest, so nothing a newer
    // operator added is assumed.
    QVersionNumber assumed() const { return detected() ? version : oldest(); }
    bool hasPreRunningDeadline() const { return assumed() >= QVersionNumber(1, 6); }

    static QVersionNumber oldest() { return QVersionNumber(1, 4); }

    // From a CRD object as the API server returns it.
    static OperatorVersion fromCrd(const QJsonObject &crd);
    // From the answer to GET crdPath().
    static OperatorVersion fromResult(const ApiResult &result);
    // /apis/apiextensions.k8s.io/v1/customresourcedefinitions/rayjobs.ray.io
    static QString crdPath();
};

class OperatorProbe final : public QObject
{
    Q_OBJECT
public:
    // client must outlive the probe.
    explicit OperatorProbe(KubeClient *client, QObject *parent = nullptr);
    ~OperatorProbe() override;

    // Sends the request; finished follows once. Starting again while running cancels the
    // first request (its finished never comes).
    void start();
    // Aborts the request; finished does not come.
    void cancel();
    bool isRunning() const { return !m_context.isNull(); }

Q_SIGNALS:
    void finished(const Starforge::Kube::OperatorVersion &result);

private:
    KubeClient *m_client;
    QPointer<QObject> m_context;   // the running request's; deleting it aborts the request
    quint64 m_run = 0;
};

} // namespace Starforge::Kube
