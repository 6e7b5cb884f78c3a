#pragma once

// What the job tests share on the sandbox: clients for its API server and S3, RayJobs shaped
// like the app's own (its labels and annotations, small enough to run in a second), and
// drivers as script files. Header-only: only tests that link starforge_sandbox include it.

#include "core/job/ownership.h"
#include "core/job/rayjobbuilder.h"
#include "core/kube/kubeclient.h"
#include "core/s3/s3client.h"
#include "sandbox/sandbox.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>

namespace Starforge::Testing {

inline Kube::ClientConfig kubeClientConfig(const Sandbox::Sandbox &sandbox)
{
    Kube::ClientConfig config;
    config.server = sandbox.apiServerUrl();
    config.token = sandbox.token();
    config.tls.caCertificates = QSslCertificate::fromData(sandbox.caCertificatePem(), QSsl::Pem);
    config.ns = QStringLiteral("starforge");
    return config;
}

inline S3::ClientConfig s3ClientConfig(const Sandbox::Sandbox &sandbox)
{
    S3::ClientConfig config;
    config.endpoint = sandbox.s3Endpoint();
    config.bucket = sandbox.bucket();
    config.credentials = {sandbox.s3AccessKey(), sandbox.s3SecretKey(), {}};
    config.policy = Net::RequestPolicy(Net::TlsSettings{QSslCertificate::fromData(sandbox.caCertificatePem(), QSsl::Pem), false, Net::ClientIdentity(), QString()}, 30000);
    return config;
}

// The image the job tests run (one of the sandbox's present images, given in its options).
inline QString jobTestImage()
{
    return QStringLiteral("rayproject/ray:2.55.1");
}

// The user the sandbox's token signs in as (a SelfSubjectReview's username): a Session on the
// sandbox without FORGE_OWNER owns the jobs made with it.
inline QString sandboxOwner()
{
    return QStringLiteral("sandbox-admin");
}

// A RayJob named "<jobName>-<id>" as the app makes them: the managed-by and job id labels (on
// the pods too), the job name, the owner (label and annotation), a Capsule address and a
// JobSpec annotation. headExtra goes into the head's pod spec (a nodeSelector nobody has keeps
// it Pending).
inline QJsonObject starforgeRayJob(const QString &jobName, const QString &id, const QString &entrypoint, const QJsonObject &headExtra = {},
                                   int ttlSeconds = 30, const QString &owner = sandboxOwner())
{
    QJsonObject head{{QStringLiteral("containers"),
                      QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("ray-head")}, {QStringLiteral("image"), jobTestImage()}}}}};
    for (auto it = headExtra.begin(); it != headExtra.end(); ++it) head.insert(it.key(), it.value());
    const QJsonObject podLabels{{QLatin1String(Job::Labels::ManagedBy), QLatin1String(Job::Labels::ManagedByValue)},
                                {QLatin1String(Job::Labels::JobId), id}};
    const QJsonObject cluster{
        {QStringLiteral("rayVersion"), QStringLiteral("2.55.1")},
        {QStringLiteral("headGroupSpec"),
         QJsonObject{{QStringLiteral("rayStartParams"), QJsonObject()},
                     {QStringLiteral("template"), QJsonObject{{QStringLiteral("metadata"), QJsonObject{{QStringLiteral("labels"), podLabels}}},
                                                              {QStringLiteral("spec"), head}}}}}};
    const QJsonObject spec{{QStringLiteral("entrypoint"), entrypoint},
                           {QStringLiteral("shutdownAfterJobFinishes"), true},
                           {QStringLiteral("ttlSecondsAfterFinished"), ttlSeconds},
                           {QStringLiteral("backoffLimit"), 0},
                           {QStringLiteral("rayClusterSpec"), cluster}};
    const QJsonObject meta{
        {QStringLiteral("name"), QString(jobName + u'-' + id)},
        {QStringLiteral("labels"), QJsonObject{{QLatin1String(Job::Labels::ManagedBy), QLatin1String(Job::Labels::ManagedByValue)},
                                               {QLatin1String(Job::Labels::JobId), id},
                                               {QLatin1String(Job::Labels::JobName), jobName},
                                               {QLatin1String(Job::Labels::Owner), Job::ownerLabelValue(owner)}}},
        {QStringLiteral("annotations"), QJsonObject{{QLatin1String(Job::Labels::CapsuleSha256), QStringLiteral("ab").repeated(32)},
                                                    {QLatin1String(Job::Labels::JobSpec), QStringLiteral("{\"name\":\"%1\",\"version\":1}").arg(jobName)},
                                                    {QLatin1String(Job::Labels::Owner), owner}}}};
    return QJsonObject{{QStringLiteral("apiVersion"), QStringLiteral("ray.io/v1")},
                       {QStringLiteral("kind"), QStringLiteral("RayJob")},
                       {QStringLiteral("metadata"), meta},
                       {QStringLiteral("spec"), spec}};
}

// job with one more annotation (a pre-running deadline, an archive bucket).
inline QJsonObject withAnnotation(QJsonObject job, const char *key, const QString &value)
{
    QJsonObject metadata = job.value(QStringLiteral("metadata")).toObject();
    QJsonObject annotations = metadata.value(QStringLiteral("annotations")).toObject();
    annotations.insert(QLatin1String(key), value);
    metadata.insert(QStringLiteral("annotations"), annotations);
    job.insert(QStringLiteral("metadata"), metadata);
    return job;
}

// The head pod spec addition that keeps a job Pending: a GPU series no sandbox node has.
inline QJsonObject unschedulableHead()
{
    return QJsonObject{{QStringLiteral("nodeSelector"), QJsonObject{{QStringLiteral("starforge/gpu-series"), QStringLiteral("b200")}}}};
}

// Writes code as a Python driver in dir and returns the entrypoint that runs it. A file,
// because containers are host processes on the sandbox and an entrypoint goes through a shell
// and `ray job submit -- ...`, which loses inner quoting.
inline QString driverEntrypoint(const QString &dir, const QString &code)
{
    static int count = 0;
    const QString path = QDir(dir).filePath(QStringLiteral("driver-%1.py").arg(++count));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(code.toUtf8()) < 0) qFatal("cannot write %s", qPrintable(path));
    return QStringLiteral("python3 ") + path;
}

} // namespace Starforge::Testing
