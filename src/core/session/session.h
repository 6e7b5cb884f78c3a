#pragma once

// One connection to one cluster and its bucket, shared by everything that shows or acts on it:
// the GUI's panels and every starforge-cli command (docs/design.md, "One session").
//
// A Session reads its source (a profile with its keychain secrets, or a sandbox's connection
// file), resolves the settings, makes the Kubernetes and S3 clients, proves the server and the
// token (GET /version, then one SelfSubjectAccessReview per permission), asks which KubeRay
// release runs there, and then runs the shared parts the caller asked for:
//   - informers on RayJobs (this namespace, Starforge's), the namespace's events, and the
//     cluster's nodes and pods;
//   - the CapacityTracker over the node and pod informers;
//   - the JobTracker over the RayJob informer, given the capacity model, so a job's archived
//     cause has the same evidence `starforge-cli status` and `diagnose` use;
//   - the event journal (SessionOptions::journalEvents): every event the event informer adds or
//     updates and every status change of the RayJobs it follows, kept on this machine
//     (docs/events.md, "The local journal"). A journal that cannot be opened switches the
//     "journal" feature off with the reason; the session runs on without it.
// A feature whose permission is missing is switched off with the reason and the Role rule that
// would allow it, and never retried; an informer the server starts refusing (403) is stopped
// the same way. While connected a light request every few seconds tells a lost cluster from a
// quiet one; a lost session reads its source again and rebuilds everything once the cluster
// answers (a restarted sandbox has a new CA and tokens), backing off between attempts.
//
// Teardown runs in one written order (teardown()), never by the order members are declared:
// the progress follower, the job tracker, the capacity tracker, the informers, the journal
// (flushed and closed once nothing feeds it), the checks, then the clients.

#include "core/config/effectiveconfig.h"
#include "core/job/ownership.h"
#include "core/job/rayjobbuilder.h"
#include "core/kube/operatorprobe.h"
#include "core/net/backoff.h"
#include "core/session/sessionsource.h"
#include "core/util/result.h"

#include <QDateTime>
#include <QObject>
#include <QPointer>
#include <QProcessEnvironment>
#include <QTimer>
#include <QVersionNumber>

#include <memory>
#include <optional>

namespace Starforge::Secrets {
class SecretStore;
}
namespace Starforge::Kube {
class Informer;
class KubeClient;
class PermissionCheck;
struct PermissionReport;
struct ApiResult;
}
namespace Starforge::S3 {
class S3Client;
}
namespace Starforge::Cluster {
class CapacityTracker;
}
namespace Starforge::Job {
class JobTracker;
class PendingDiagnoser;
class ProgressFollower;
}
namespace Starforge::Playground {
class PlaygroundClient;
}
namespace Starforge::Events {
class EventJournal;
}

namespace Starforge {

class StartupCleanup;

struct SessionOptions
{
    // GET /version and the permission check before anything else. A one-shot CLI command skips
    // them: its own request proves the token and names what is refused.
    bool verifyAccess = true;
    // The KubeRay release RayJobs are built for and the tracker's deadline timing depend on;
    // when set (--kuberay-version) the operator is not asked.
    std::optional<QVersionNumber> operatorVersion;
    bool probeOperator = true;
    bool followJobs = true;         // RayJob informer and JobTracker (the tracker needs the bucket)
    // Running jobs' driver logs followed for their training progress (ProgressFollower, over
    // the JobTracker): the GUI's Progress column and job detail plot.
    bool followProgress = false;
    // Why each live Pending job waits (PendingDiagnoser, over the JobTracker and the capacity):
    // the GUI's Message column. A round over them this often.
    bool followPendingDiagnoses = false;
    int pendingDiagnosisIntervalMs = 10000;
    QString onlyJobId;              // the RayJob informer and the tracker follow this job alone
    bool followCapacity = true;     // node and pod informers and the CapacityTracker
    bool followEvents = true;       // the namespace's events
    // Events and RayJob status changes journaled to a SQLite file on this machine, so the
    // timeline keeps them after Kubernetes drops them and across restarts. The GUI's MainWindow
    // sets it; the CLI's one-shot commands do not.
    bool journalEvents = false;
    // The journal's file; empty: journalPath() under the data folder, per cluster and namespace.
    QString journalPath;
    // Whether a person can answer an exec credential plugin that asks (the GUI shows its output
    // in a dialog; a CLI on a terminal passes stdin through).
    bool personPresent = false;
    bool forwardStdinToPlugin = false;
    // An informer whose first list fails (other than 403, which switches its feature off) ends
    // the session instead of retrying: a command that reads once must not wait for ever.
    bool failOnFirstListError = false;
    // The job tracker's own timings (tests shorten them); its deadline and series label come
    // from the settings.
    int trackerCheckIntervalMs = 2000;
    int trackerArchiveRetryMs = 5000;
    int livenessIntervalMs = 5000;  // the light request while connected or lost; <= 0: none
    // Lost this long: the session ends (Disconnected, error() says why); 0 keeps reconnecting.
    int giveUpAfterSeconds = 0;
    // A connection file whose sandbox has stopped ends a lost session at once.
    bool giveUpWhenSourceStops = false;
    // A session that follows jobs tidies once at its first start (startupcleanup.h): unfinished
    // multipart uploads under capsules/ and jobs/ and temporary Capsules and log files on this
    // machine, all older than cleanUpOlderThanSeconds.
    bool cleanUpAtStart = true;
    qint64 cleanUpOlderThanSeconds = 24 * 3600;
    // The owner's playground pods (Playground::PlaygroundClient): reaped when the session
    // connects and every reapIntervalMs while it is up (expired or ended ones; <= 0: only at
    // connect). The GUI sets it; the CLI's playground commands reap once themselves.
    bool followPlayground = false;
    int playgroundReapIntervalMs = 60000;
    Net::Backoff::Params reconnectBackoff{1000, 30000, 2.0, 0.5, 120000};
};

// One feature of the app as this session can offer it.
struct FeatureStatus
{
    QString id;                  // "jobs", "events", "logs", "capacity", "playground", "journal"
    QString title;               // "Capacity heatmap and fit verdicts"
    bool available = true;
    QString reason;              // when not: one sentence
    QString roleRule;            // when a permission is missing: the Role/ClusterRole rules (YAML) that would allow it
};

class Session final : public QObject
{
    Q_OBJECT
public:
    enum class State {
        Disconnected,   // not opened, closed, or ended: error() says why when it failed
        Connecting,     // the first connect is under way
        Connected,      // everything asked for is running
        Degraded,       // connected, but a feature is off or an informer keeps failing: features(), problems()
        Lost,           // was connected; the cluster stopped answering (the informers keep trying)
        Reconnecting,   // rebuilding from the source after a loss, backing off between attempts
    };
    Q_ENUM(State)

    Session(Secrets::SecretStore *secrets, QProcessEnvironment environment, SessionOptions options = {}, QObject *parent = nullptr);
    ~Session() override;

    // Connects to source; any session already open is closed first.
    void open(SessionSource source);
    void close();

    State state() const { return m_state; }
    static QString stateName(State state);
    bool isUp() const { return m_state == State::Connected || m_state == State::Degraded; }
    // One sentence for a status bar: "Connected to https://…: Kubernetes v1.32.4, namespace ml"
    QString statusText() const { return m_status; }
    // Why the session ended or could not connect.
    std::optional<Error> error() const { return m_error; }
    // The first connect's settings were read; valid until close().
    const SessionSource &source() const { return m_source; }
    // The settings in force (secrets included) and the ones the manifest depends on.
    const Config::EffectiveConfig &config() const { return m_config; }
    const Job::ClusterSettings &settings() const { return m_settings; }
    QString ns() const { return m_settings.ns; }
    // Whose jobs this session acts on (FORGE_OWNER, else the cluster's name for the user; set
    // once connected) and the bucket it archives to.
    Job::Viewer viewer() const { return {m_settings.owner, m_settings.archiveBucket}; }
    QString serverVersion() const { return m_serverVersion; }

    // The clients (null before the settings are read and after close()).
    Kube::KubeClient *kube() const { return m_kube.get(); }
    // The bucket's client, or the sentence saying which setting to fix.
    Result<S3::S3Client *> bucket() const;
    S3::S3Client *s3() const { return m_s3.get(); }

    // The KubeRay release found (or given); meaningful once connected.
    const Kube::OperatorVersion &operatorVersion() const { return m_operator; }

    QList<FeatureStatus> features() const { return m_features; }
    std::optional<FeatureStatus> feature(const QString &id) const;
    // Running problems worth a word: an informer backing off, with its last error.
    QStringList problems() const;

    // The shared parts; null when not asked for, switched off, or not connected.
    Kube::Informer *rayJobInformer() const { return m_rayJobs.get(); }
    Kube::Informer *eventInformer() const { return m_events.get(); }
    Kube::Informer *nodeInformer() const { return m_nodes.get(); }
    Kube::Informer *podInformer() const { return m_pods.get(); }
    Cluster::CapacityTracker *capacity() const { return m_capacity.get(); }
    Job::JobTracker *jobs() const { return m_jobs.get(); }
    Job::ProgressFollower *progress() const { return m_progress.get(); }
    // Why each live Pending job waits (SessionOptions::followPendingDiagnoses); null otherwise.
    Job::PendingDiagnoser *pendingDiagnoser() const { return m_diagnoser.get(); }
    // The owner's playground (SessionOptions::followPlayground); null when not asked for, not
    // connected, or the owner is unknown.
    Playground::PlaygroundClient *playground() const { return m_playground.get(); }
    // Where this session's journal is or would be: SessionOptions::journalPath, else the data
    // folder's journal-<hash>.sqlite for this cluster and namespace (read by starforge-cli
    // events --timeline when the app has kept one).
    QString journalFile() const;
    // The event journal (SessionOptions::journalEvents); null when not asked for, when it could
    // not be opened (feature "journal" says why), and when not connected.
    Events::EventJournal *journal() const { return m_journal.get(); }

    // Seconds since the cluster last answered while Lost; 0 otherwise.
    qint64 lostForSeconds() const;

    // The start-up clean-up (SessionOptions::cleanUpAtStart); null before it starts and after
    // close(). Its finished() is forwarded as cleanedUp().
    const StartupCleanup *startupCleanup() const { return m_cleanup.get(); }

Q_SIGNALS:
    void stateChanged(Starforge::Session::State state);
    // The clients, informers or trackers were made or torn down: a panel takes them again.
    void partsChanged();
    // They are about to be deleted: a panel lets go of them now (partsChanged follows).
    void partsAboutToBeRemoved();
    void featuresChanged();
    // Connected and every started informer has synced (once per connect): a command that needs
    // the whole picture starts now.
    void ready();
    // A note worth showing once (an operator version assumed, the cluster answering again).
    void notice(const QString &text);
    // The start-up clean-up has finished; startupCleanup()->report() says what it did.
    void cleanedUp();
    // The reaper deleted these playground pods (expired or ended).
    void playgroundReaped(const QStringList &names);

private:
    void connectFromSource();
    void onResolved(Result<Config::EffectiveConfig> resolved);
    void checkServer();
    void checkPermissions();
    void onPermissions(const Kube::PermissionReport &report);
    void resolveOwnerThenProbe();
    QString localOwnerName() const;
    void probeOperatorThenStart();
    void startParts();
    void watchInformer(Kube::Informer *informer, const QString &featureId);
    void maybeReady();
    void connectFailed(const Error &error);
    void checkLiveness();
    void onLivenessAnswer(const Kube::ApiResult &result);
    void becomeLost(const QString &why);
    void rebuild();
    void scheduleReconnect(const Error &why);
    void giveUp(const Error &why);
    void switchOff(const QString &featureId, const QString &reason, const QString &roleRule = {});
    void setState(State state, const QString &status);
    void refreshUpState();
    QString connectedText() const;
    void teardown();
    void resetFeatures();
    void openJournal();
    // Where this machine keeps what it knows of the connected cluster and namespace: the 16 hex
    // digits that name the seen-jobs file and the event journal.
    QString placeKey() const;

    Secrets::SecretStore *m_secrets;
    QProcessEnvironment m_environment;
    SessionOptions m_options;
    SessionSource m_source;
    State m_state = State::Disconnected;
    State m_loggedState = State::Disconnected;   // the last state written to the log
    QString m_status;
    std::optional<Error> m_error;
    quint64 m_generation = 0;            // bumped by every (re)build: late answers of an older one are dropped

    Config::EffectiveConfig m_config;
    Job::ClusterSettings m_settings;
    QString m_serverVersion;
    Kube::OperatorVersion m_operator;
    QList<FeatureStatus> m_features;
    bool m_readyEmitted = false;

    // Owned parts; torn down by teardown() in its written order.
    std::unique_ptr<Kube::KubeClient> m_kube;
    std::unique_ptr<S3::S3Client> m_s3;
    std::optional<Error> m_s3Problem;
    std::unique_ptr<Kube::PermissionCheck> m_permissionCheck;
    std::unique_ptr<Kube::OperatorProbe> m_probe;
    std::unique_ptr<Kube::Informer> m_rayJobs;
    std::unique_ptr<Kube::Informer> m_events;
    std::unique_ptr<Kube::Informer> m_nodes;
    std::unique_ptr<Kube::Informer> m_pods;
    std::unique_ptr<Cluster::CapacityTracker> m_capacity;
    std::unique_ptr<Job::JobTracker> m_jobs;
    std::unique_ptr<Job::ProgressFollower> m_progress;
    std::unique_ptr<Job::PendingDiagnoser> m_diagnoser;
    std::unique_ptr<Playground::PlaygroundClient> m_playground;
    QTimer m_playgroundReaper;
    std::unique_ptr<Events::EventJournal> m_journal;
    std::unique_ptr<StartupCleanup> m_cleanup;
    bool m_cleanupStarted = false;   // once per Session, not per reconnect

    // Liveness and reconnection.
    QTimer m_liveness;
    QPointer<QObject> m_livenessRequest;   // the request in flight; deleting it aborts it
    QDateTime m_lostSince;
    QTimer m_reconnectTimer;
    Net::Backoff m_reconnectBackoff;
};

} // namespace Starforge
