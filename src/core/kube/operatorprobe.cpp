#include "core/kube/operatorprobe.h"

#include "core/kube/kubeclient.h"

#include <QJsonArray>

namespace Starforge::Kube {

namespace {

// Newest first: the first field present decides.
struct Marker
{
    const char *section;
    const char *field;
    int minor;
};
constexpr Marker Markers[] = {
    {"status", "jobStatusCheckFailureStartTime", 7},
    {"spec", "preRunningDeadlineSeconds", 6},
    {"spec", "deletionStrategy", 5},
};

QString markerList()
{
    QStringList names;
    for (const Marker &m : Markers) {
        names.prepend(QLatin1String(m.section) + QLatin1Char('.') + QLatin1String(m.field));
    }
    return names.join(QStringLiteral(", "));
}

} // namespace

QString OperatorVersion::crdPath()
{
    return QStringLiteral("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/rayjobs.ray.io");
}

OperatorVersion OperatorVersion::fromCrd(const QJsonObject &crd)
{
    OperatorVersion out;
    QJsonObject schema;
    bool served = false;
    for (const QJsonValue &v : crd.value(QLatin1String("spec")).toObject().value(QLatin1String("versions")).toArray()) {
        const QJsonObject version = v.toObject();
        if (version.value(QLatin1String("name")).toString() == QLatin1String("v1") && version.value(QLatin1String("served")).toBool(true)) {
            served = true;
            schema = version.value(QLatin1String("schema")).toObject().value(QLatin1String("openAPIV3Schema")).toObject();
        }
    }
    if (!served) {
        out.outcome = Outcome::Unsupported;
        out.message = OperatorProbe::tr("The cluster's rayjobs.ray.io CustomResourceDefinition serves no ray.io/v1 version: its "
                                        "KubeRay is older than 1.0. Starforge needs KubeRay %1 or newer.")
                          .arg(oldest().toString());
        return out;
    }
    out.outcome = Outcome::Detected;
    out.version = oldest();
    const QJsonObject properties = schema.value(QLatin1String("properties")).toObject();
    for (const Marker &m : Markers) {
        const QJsonObject fields = properties.value(QLatin1String(m.section)).toObject().value(QLatin1String("properties")).toObject();
        if (fields.contains(QLatin1String(m.field))) {
            out.version = QVersionNumber(1, m.minor);
            out.evidence = QLatin1String(m.section) + QLatin1Char('.') + QLatin1String(m.field);
            break;
        }
    }
    out.message = out.evidence.isEmpty()
        ? OperatorProbe::tr("KubeRay %1 or older: the RayJob CustomResourceDefinition has none of %2.").arg(out.version.toString(), markerList())
        : OperatorProbe::tr("KubeRay %1: the RayJob CustomResourceDefinition has %2.").arg(out.version.toString(), out.evidence);
    return out;
}

OperatorVersion OperatorVersion::fromResult(const ApiResult &result)
{
    if (result.ok()) {
        const QJsonObject crd = result.json();
        if (crd.value(QLatin1String("kind")).toString() != QLatin1String("CustomResourceDefinition")) {
            OperatorVersion out;
            out.error = ApiError::malformed(OperatorProbe::tr("get the rayjobs.ray.io CustomResourceDefinition"),
                                            OperatorProbe::tr("it is not a CustomResourceDefinition"));
            out.message = OperatorProbe::tr("The KubeRay version could not be read: %1").arg(out.error->message);
            return out;
        }
        return fromCrd(crd);
    }
    OperatorVersion out;
    out.error = result.error;
    switch (result.error->kind) {
    case ApiError::Kind::NotFound:
        out.outcome = Outcome::NotInstalled;
        out.message = OperatorProbe::tr("KubeRay is not installed: the cluster has no rayjobs.ray.io CustomResourceDefinition, so it "
                                        "cannot run RayJobs. Ask the cluster's administrator to install the KubeRay operator (1.6 or newer).");
        break;
    case ApiError::Kind::Forbidden:
        out.outcome = Outcome::Unknown;
        out.message = OperatorProbe::tr("The KubeRay version is unknown: the token may not read CustomResourceDefinitions (get "
                                        "customresourcedefinitions in apiextensions.k8s.io at the cluster scope). Starforge assumes "
                                        "KubeRay %1, without preRunningDeadlineSeconds, and enforces the pre-running deadline itself.")
                          .arg(oldest().toString());
        break;
    default:
        out.outcome = Outcome::Failed;
        out.message = OperatorProbe::tr("The KubeRay version could not be read: %1").arg(result.error->message);
        break;
    }
    return out;
}

OperatorProbe::OperatorProbe(KubeClient *client, QObject *parent)
    : QObject(parent)
    , m_client(client)
{
}

OperatorProbe::~OperatorProbe()
{
    cancel();   // before the children go: an aborted request's callback finds nothing to do
}

void OperatorProbe::start()
{
    cancel();
    m_context = new QObject(this);
    const quint64 run = ++m_run;
    ApiRequest request;
    request.path = OperatorVersion::crdPath();
    request.what = tr("get the rayjobs.ray.io CustomResourceDefinition");
    m_client->send(request, m_context, [this, run](const ApiResult &result) {
        if (run != m_run) {
            return;   // cancelled or restarted meanwhile
        }
        m_context->deleteLater();
        m_context.clear();
        Q_EMIT finished(OperatorVersion::fromResult(result));
    });
}

void OperatorProbe::cancel()
{
    ++m_run;
    delete m_context.data();   // aborts the request
    m_context.clear();
}

} // namespace Starforge::Kube
