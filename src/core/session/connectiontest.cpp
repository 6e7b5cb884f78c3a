#include "core/session/connectiontest.h"

#include "core/kube/kubeclient.h"
#include "core/kube/operatorprobe.h"
#include "core/kube/permissions.h"
#include "core/kube/selfsubjectreview.h"
#include "core/logging/logging.h"
#include "core/s3/s3client.h"

namespace Starforge {

namespace {
// A test answers in seconds or says the part is not answering; the sessions' 30 s are for work.
constexpr int RequestTimeoutMs = 15000;
} // namespace

using Outcome = ConnectionCheck::Outcome;

QString ConnectionCheck::outcomeName(Outcome outcome)
{
    switch (outcome) {
    case Outcome::Running: return QStringLiteral("running");
    case Outcome::Passed: return QStringLiteral("ok");
    case Outcome::Warning: return QStringLiteral("warning");
    case Outcome::Failed: return QStringLiteral("failed");
    case Outcome::Skipped: return QStringLiteral("skipped");
    }
    return {};
}

ConnectionTest::ConnectionTest(Secrets::SecretStore *secrets, QProcessEnvironment environment, QObject *parent)
    : QObject(parent)
    , m_secrets(secrets)
    , m_environment(std::move(environment))
{
}

ConnectionTest::~ConnectionTest() = default;

void ConnectionTest::cancel()
{
    ++m_generation;
    m_permissions.reset();
    m_probe.reset();
    m_kube.reset();
    m_s3.reset();   // its replies are its children: nothing answers any more
    m_running = false;
}

void ConnectionTest::start(const SessionSource &source)
{
    cancel();
    m_running = true;
    m_checks.clear();
    const auto add = [this](const QString &id, const QString &title) {
        ConnectionCheck check;
        check.id = id;
        check.title = title;
        m_checks.append(check);
    };
    add(QStringLiteral("settings"), tr("Settings"));
    add(QStringLiteral("server"), tr("API server"));
    add(QStringLiteral("identity"), tr("Signed in as"));
    add(QStringLiteral("kuberay"), tr("KubeRay operator"));
    for (const Kube::Feature &feature : Kube::Feature::all()) add(QStringLiteral("feature:") + feature.id, feature.title);
    add(QStringLiteral("bucket"), tr("Object storage bucket"));

    const quint64 generation = m_generation;
    source.resolve(m_secrets, m_environment, this, [this, generation](Result<Config::EffectiveConfig> resolved) {
        if (generation != m_generation) return;
        if (!resolved) {
            set(QStringLiteral("settings"), Outcome::Failed, resolved.error().message);
            skipRunning(tr("The settings could not be read."));
            return;
        }
        onResolved(*resolved);
    });
}

int ConnectionTest::indexOf(const QString &id) const
{
    for (int i = 0; i < m_checks.size(); ++i) {
        if (m_checks.at(i).id == id) return i;
    }
    return -1;
}

void ConnectionTest::set(const QString &id, Outcome outcome, const QString &detail, const QString &fix, qint64 elapsedMs)
{
    const int i = indexOf(id);
    Q_ASSERT(i >= 0);
    ConnectionCheck &check = m_checks[i];
    check.outcome = outcome;
    // Error sentences may quote a server's answer; nothing secret reaches a dialog or a log.
    check.detail = Logging::redact(detail);
    check.fix = fix;
    check.elapsedMs = elapsedMs;
    Q_EMIT checkChanged(i);
    maybeFinish();
}

void ConnectionTest::skipRunning(const QString &why, const QString &except)
{
    for (const ConnectionCheck &check : std::as_const(m_checks)) {
        if (check.outcome == Outcome::Running && check.id != except) set(check.id, Outcome::Skipped, why);
    }
}

QString ConnectionTest::signInFix()
{
    return tr("The credentials were refused: set a current token, client certificate or credential plugin under Sign-in.");
}

void ConnectionTest::maybeFinish()
{
    if (!m_running) return;
    for (const ConnectionCheck &check : std::as_const(m_checks)) {
        if (check.outcome == Outcome::Running) return;
    }
    m_running = false;
    Q_EMIT finished();
}

bool ConnectionTest::passed() const
{
    if (m_running || m_checks.isEmpty()) return false;
    return std::none_of(m_checks.cbegin(), m_checks.cend(), [](const ConnectionCheck &c) {
        return c.outcome == Outcome::Failed || c.outcome == Outcome::Skipped;
    });
}

QString ConnectionTest::summary() const
{
    int ok = 0, warnings = 0, failed = 0, skipped = 0;
    for (const ConnectionCheck &c : m_checks) {
        ok += c.outcome == Outcome::Passed;
        warnings += c.outcome == Outcome::Warning;
        failed += c.outcome == Outcome::Failed;
        skipped += c.outcome == Outcome::Skipped;
    }
    QString text = tr("%1 of %2 checks passed").arg(ok).arg(m_checks.size());
    if (warnings) text += tr(", %1 with a warning").arg(warnings);
    if (failed) text += tr(", %1 failed").arg(failed);
    if (skipped) text += tr(", %1 not tried").arg(skipped);
    return text;
}

void ConnectionTest::onResolved(const Config::EffectiveConfig &config)
{
    if (const QList<Error> problems = config.problems(); !problems.isEmpty()) {
        QStringList lines;
        for (const Error &e : problems) lines << e.message;
        set(QStringLiteral("settings"), Outcome::Failed, lines.join(u'\n'));
        skipRunning(tr("A setting is invalid."));
        return;
    }
    m_namespace = config.value(QStringLiteral("FORGE_K8S_NAMESPACE"));
    m_owner = config.value(QStringLiteral("FORGE_OWNER"));
    auto client = Kube::ClientConfig::fromSettings(config);
    if (!client) {
        set(QStringLiteral("settings"), Outcome::Failed, client.error().message);
        skipRunning(tr("The cluster's settings are incomplete."));
        return;
    }
    set(QStringLiteral("settings"), Outcome::Passed, tr("Valid; namespace %1.").arg(m_namespace));
    Kube::ClientConfig kube = *client;
    kube.timeoutMs = RequestTimeoutMs;
    m_kube = std::make_unique<Kube::KubeClient>(kube);
    checkBucket(config);
    checkServer();
}

void ConnectionTest::checkServer()
{
    Kube::ApiRequest version;
    version.path = QStringLiteral("/version");
    version.what = tr("reach the API server");
    auto timer = std::make_shared<QElapsedTimer>();
    timer->start();
    const quint64 generation = m_generation;
    const QString server = m_kube->config().server.toString();
    m_kube->send(version, this, [this, generation, timer, server](const Kube::ApiResult &result) {
        if (generation != m_generation) return;
        if (!result.ok() && result.error->kind == Kube::ApiError::Kind::Unauthorized) {
            // The server is there; it refuses the credentials even for /version.
            set(QStringLiteral("server"), Outcome::Passed, tr("%1 answered.").arg(server), {}, timer->elapsed());
            set(QStringLiteral("identity"), Outcome::Failed, result.error->message, signInFix());
            skipRunning(tr("The credentials were refused."), QStringLiteral("bucket"));
            return;
        }
        if (!result.ok()) {
            set(QStringLiteral("server"), Outcome::Failed, result.error->message,
                tr("Check FORGE_K8S_API_SERVER, the CA settings under Network, and that this machine can reach %1.").arg(server),
                timer->elapsed());
            skipRunning(tr("The API server did not answer."), QStringLiteral("bucket"));
            return;
        }
        const QString gitVersion = result.json().value(QLatin1String("gitVersion")).toString();
        set(QStringLiteral("server"), Outcome::Passed,
            gitVersion.isEmpty() ? tr("%1 answered.").arg(server) : tr("Kubernetes %1 at %2.").arg(gitVersion, server), {},
            timer->elapsed());
        checkCluster();
    });
}

void ConnectionTest::checkCluster()
{
    const quint64 generation = m_generation;
    // Who: /version is public on many clusters, so this and the reviews below are what prove
    // the credentials.
    auto whoTimer = std::make_shared<QElapsedTimer>();
    whoTimer->start();
    Kube::whoAmI(m_kube.get(), this, [this, generation, whoTimer](std::optional<QString> username, std::optional<Kube::ApiError> error) {
        if (generation != m_generation) return;
        const qint64 ms = whoTimer->elapsed();
        if (username) {
            const QString detail = m_owner.isEmpty() ? tr("%1; your jobs are recorded as theirs.").arg(*username)
                                                     : tr("%1; your jobs are recorded as %2 (FORGE_OWNER).").arg(*username, m_owner);
            set(QStringLiteral("identity"), Outcome::Passed, detail, {}, ms);
        } else if (error->kind == Kube::ApiError::Kind::Unauthorized) {
            set(QStringLiteral("identity"), Outcome::Failed, error->message, signInFix(), ms);
        } else if (!m_owner.isEmpty()) {
            set(QStringLiteral("identity"), Outcome::Passed, tr("%1 (FORGE_OWNER); the cluster could not say more: %2").arg(m_owner, error->message), {}, ms);
        } else {
            set(QStringLiteral("identity"), Outcome::Warning, tr("The cluster could not say who you are: %1").arg(error->message),
                tr("Set FORGE_OWNER to the same name on every workstation you use, so your jobs stay yours."), ms);
        }
    });

    m_probe = std::make_unique<Kube::OperatorProbe>(m_kube.get());
    auto probeTimer = std::make_shared<QElapsedTimer>();
    probeTimer->start();
    connect(m_probe.get(), &Kube::OperatorProbe::finished, this, [this, probeTimer](const Kube::OperatorVersion &found) {
        using Found = Kube::OperatorVersion::Outcome;
        const qint64 ms = probeTimer->elapsed();
        switch (found.outcome) {
        case Found::Detected:
            set(QStringLiteral("kuberay"), Outcome::Passed, found.message, {}, ms);
            break;
        case Found::Unknown:
            set(QStringLiteral("kuberay"), Outcome::Warning, found.message,
                tr("Allow get on customresourcedefinitions (apiextensions.k8s.io) at the cluster scope, or set the release with "
                   "--kuberay-version in starforge-cli."), ms);
            break;
        case Found::NotInstalled:
        case Found::Unsupported:
            set(QStringLiteral("kuberay"), Outcome::Failed, found.message,
                tr("Ask the cluster's administrators to install KubeRay 1.4 or newer (1.7 is what Starforge is built against)."), ms);
            break;
        case Found::Failed:
            set(QStringLiteral("kuberay"), Outcome::Failed, found.message, {}, ms);
            break;
        }
    });
    m_probe->start();

    m_permissions = std::make_unique<Kube::PermissionCheck>(m_kube.get(), m_namespace);
    auto permissionTimer = std::make_shared<QElapsedTimer>();
    permissionTimer->start();
    connect(m_permissions.get(), &Kube::PermissionCheck::finished, this, [this, permissionTimer](const Kube::PermissionReport &report) {
        const qint64 ms = permissionTimer->elapsed();
        if (report.error) {
            for (const Kube::Feature &feature : Kube::Feature::all()) {
                set(QStringLiteral("feature:") + feature.id, Outcome::Failed, report.error->message, {}, ms);
            }
            return;
        }
        for (const Kube::FeatureAccess &access : report.features) {
            if (access.allowed) {
                set(QStringLiteral("feature:") + access.feature.id, Outcome::Passed, tr("Allowed in namespace %1.").arg(report.ns), {}, ms);
            } else {
                set(QStringLiteral("feature:") + access.feature.id, Outcome::Warning,
                    tr("Unavailable: the token cannot %1.").arg(access.missing.join(QStringLiteral(", "))),
                    tr("A cluster administrator can grant it with these Role rules:\n%1").arg(Kube::roleRules(access.feature)), ms);
            }
        }
    });
    m_permissions->start();
}

void ConnectionTest::checkBucket(const Config::EffectiveConfig &config)
{
    auto s3 = S3::ClientConfig::fromEffectiveConfig(config);
    if (!s3) {
        set(QStringLiteral("bucket"), Outcome::Failed, s3.error().message,
            tr("Jobs ship their code and keep their history there; set the Object storage (S3) settings."));
        return;
    }
    S3::ClientConfig bucket = *s3;
    bucket.maxAttempts = 1;   // a test reports what happened; the app's retries are for work
    const QString where = tr("%1 at %2").arg(bucket.bucket, bucket.endpoint.toString());
    m_s3 = std::make_unique<S3::S3Client>(bucket);
    auto timer = std::make_shared<QElapsedTimer>();
    timer->start();
    // One key of jobs/: endpoint, signature, credentials and the bucket's existence in one request.
    S3::S3Reply *reply = m_s3->listObjects(QStringLiteral("jobs/"), 1);
    const quint64 generation = m_generation;
    connect(reply, &S3::S3Reply::finished, this, [this, reply, generation, timer, where] {
        reply->deleteLater();
        if (generation != m_generation) return;
        if (const Result<void> result = reply->result(); !result) {
            // The client's sentences name the setting to change where they know it (NoSuchBucket).
            const QString message = result.error().message;
            set(QStringLiteral("bucket"), Outcome::Failed, message,
                message.contains(QLatin1String("FORGE_")) ? QString() : tr("Check the Object storage (S3) settings: the endpoint, and the access and secret keys."),
                timer->elapsed());
            return;
        }
        set(QStringLiteral("bucket"), Outcome::Passed, tr("Bucket %1 can be read.").arg(where), {}, timer->elapsed());
    });
}

} // namespace Starforge
