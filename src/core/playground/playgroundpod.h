#pragma once

// The playground's vLLM pod (docs/playground.md): one standalone Pod per model served, no
// Service or Ingress; the app reaches it through the API server's pod proxy. The pod carries
// everything needed to find it again and to reclaim it without the app:
//  - activeDeadlineSeconds = the TTL, so the cluster ends it even if no app is running;
//  - labels app.kubernetes.io/managed-by=starforge, starforge.dev/component=playground,
//    starforge.dev/owner (the owner as a label value) and starforge.dev/job-id when it serves a
//    job's checkpoint; annotations with the owner's name, the model, the job and step, and the
//    expiry time;
//  - the series nodeSelector, GPU limits = the tensor parallel size and the GPU toleration as
//    for jobs; the storage claim mounted read-only;
//  - vLLM's own command line: MODEL --served-model-name --tensor-parallel-size --port 8000
//    [--tokenizer] [--max-model-len], and a readiness probe on /health. No --api-key: the API
//    server drops Authorization on proxy, so access is RBAC on pods/proxy.

#include "core/job/rayjobbuilder.h"
#include "core/util/result.h"

#include <QDateTime>
#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace Starforge::Playground {

inline constexpr int VllmPort = 8000;
inline constexpr char ComponentLabel[] = "starforge.dev/component";
inline constexpr char ComponentValue[] = "playground";
inline constexpr char ExpiresAnnotation[] = "starforge.dev/expires-at";
inline constexpr char ModelAnnotation[] = "starforge.dev/model";
inline constexpr char StepAnnotation[] = "starforge.dev/step";

struct LaunchRequest
{
    QString model;          // an absolute path under the storage root (a checkpoint), or a model name (org/name)
    QString tokenizer;      // a path under the storage root; empty: the model's own
    QString servedName;     // what clients ask for; empty: from the job and step, or the model's last part
    QString jobId;          // the job whose checkpoint it is; empty for a model name
    int step = 0;           // that checkpoint's step
    QString series;         // the GPU series to run on
    int gpus = 1;           // the tensor parallel size
    int ttlSeconds = 2 * 3600;
    int maxModelLen = 0;    // 0: the model's own
};

class PlaygroundPod
{
public:
    // Every problem with the request against the settings, one line each, naming the field.
    static QStringList problems(const LaunchRequest &request, const Job::ClusterSettings &settings);
    // The Pod, named "play-<id>" (id as newJobId()), created at now.
    static Result<QJsonObject> build(const LaunchRequest &request, const Job::ClusterSettings &settings, const QString &id, const QDateTime &now);
    // The name clients give as "model": "<job>-step-<N>" for a checkpoint, else the model's last part.
    static QString servedNameFor(const LaunchRequest &request);
    static QString podName(const QString &id) { return QStringLiteral("play-") + id; }
    // A label selector for the owner's playground pods.
    static QString ownerSelector(const QString &owner);
};

} // namespace Starforge::Playground
