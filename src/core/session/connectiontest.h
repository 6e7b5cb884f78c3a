#pragma once

// "Test connection": every part a profile (or a sandbox's connection file) needs, checked once
// and reported one line each, so a person sees at a glance what works and what to fix:
//   Settings      the values in force are valid and the keychain could be read
//   API server    GET /version: the Kubernetes release and how long it took
//   Signed in as  the user the cluster knows the credentials by (SelfSubjectReview), or FORGE_OWNER
//   KubeRay       the operator's release, read from its RayJob CRD (operatorprobe.h)
//   one line per feature: what the token may do, with the Role rules that would allow the rest
//   Bucket        one ListObjectsV2 of a key: endpoint, credentials and bucket together
// The object storage is checked beside the cluster, not after it: a profile whose API server is
// down still learns whether its bucket is right. What cannot be checked because something it
// needs failed is Skipped, saying which.

#include "core/session/sessionsource.h"

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QProcessEnvironment>
#include <QString>

#include <memory>

namespace Starforge::Kube {
class KubeClient;
class OperatorProbe;
class PermissionCheck;
struct PermissionReport;
} // namespace Starforge::Kube
namespace Starforge::S3 {
class S3Client;
}
namespace Starforge::Secrets {
class SecretStore;
}

namespace Starforge {

struct ConnectionCheck
{
    enum class Outcome {
        Running,
        Passed,
        Warning,   // works, with a limit worth knowing (a feature the token may not use)
        Failed,    // this part does not work: detail says why and what to change
        Skipped,   // not tried because a part it needs failed
    };

    QString id;       // "settings", "server", "identity", "kuberay", "feature:<id>", "bucket"
    QString title;    // for people: "API server"
    Outcome outcome = Outcome::Running;
    QString detail;   // one or two sentences
    QString fix;      // Failed or Warning: what would make it work (Role rules, a setting to set)
    qint64 elapsedMs = -1;

    static QString outcomeName(Outcome outcome);   // "running", "ok", "warning", "failed", "skipped"
};

class ConnectionTest final : public QObject
{
    Q_OBJECT
public:
    ConnectionTest(Secrets::SecretStore *secrets, QProcessEnvironment environment, QObject *parent = nullptr);
    ~ConnectionTest() override;

    // Starts the checks; a test already running is abandoned first.
    void start(const SessionSource &source);
    void cancel();
    bool isRunning() const { return m_running; }

    // In the order shown; the list is complete from start() on (each Running until it ends).
    const QList<ConnectionCheck> &checks() const { return m_checks; }
    // Finished and nothing Failed (warnings allowed).
    bool passed() const;
    // "4 of 9 checks passed, 1 warning, 1 failed"
    QString summary() const;

Q_SIGNALS:
    void checkChanged(int index);
    void finished();

private:
    int indexOf(const QString &id) const;
    void set(const QString &id, ConnectionCheck::Outcome outcome, const QString &detail, const QString &fix = {}, qint64 elapsedMs = -1);
    // Every check still running becomes Skipped with why, but except (the bucket, which does
    // not need the cluster).
    void skipRunning(const QString &why, const QString &except = {});
    static QString signInFix();
    void onResolved(const Config::EffectiveConfig &config);
    void checkServer();
    void checkCluster();
    void onPermissions(const Kube::PermissionReport &report);
    void checkBucket(const Config::EffectiveConfig &config);
    void maybeFinish();

    Secrets::SecretStore *m_secrets;
    QProcessEnvironment m_environment;
    QList<ConnectionCheck> m_checks;
    std::unique_ptr<Kube::KubeClient> m_kube;
    std::unique_ptr<S3::S3Client> m_s3;
    std::unique_ptr<Kube::PermissionCheck> m_permissions;
    std::unique_ptr<Kube::OperatorProbe> m_probe;
    QString m_namespace;
    QString m_owner;   // FORGE_OWNER, when set
    quint64 m_generation = 0;
    bool m_running = false;
};

} // namespace Starforge
