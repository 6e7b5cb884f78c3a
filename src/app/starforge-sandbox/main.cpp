// starforge-sandbox: the local Kubernetes + KubeRay stand-in. Parses options, starts the
// sandbox, writes the connection file once it is ready, and stops cleanly on SIGTERM/SIGINT.

#include "core/logging/logging.h"
#include "core/util/crashstack.h"
#include "core/util/quitonsignals.h"
#include "sandbox/crds/kuberaycrds.h"
#include "sandbox/sandbox.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QTextStream>

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text
{
    Q_DECLARE_TR_FUNCTIONS(SandboxApp)
};

} // namespace

int main(int argc, char *argv[])
{
    Starforge::printStackOnCrash("starforge-sandbox");
    using namespace Starforge;
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("starforge-sandbox"));
    QCoreApplication::setApplicationVersion(QStringLiteral(STARFORGE_VERSION));
    Logging::installRedactingMessageHandler();
    Logging::setDefaultFilterRules();

    QCommandLineParser parser;
    parser.setApplicationDescription(Text::tr("A local Kubernetes + KubeRay cluster for Starforge and its tests."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption listen(QStringLiteral("listen"), Text::tr("Loopback address and port (port 0: any free one)."),
                                    QStringLiteral("host:port"), QStringLiteral("127.0.0.1:0"));   // untranslated: the option's value syntax
    const QCommandLineOption connection(QStringLiteral("connection-file"),
                                        Text::tr("Where to write the connection details once ready (JSON)."), QStringLiteral("file"));
    const QCommandLineOption fleet(QStringLiteral("fleet"),
                                   Text::tr("Nodes: SERIES:NODESxGPUS,... (e.g. h200:4x8,cpu:2x0) or scale:N."), QStringLiteral("spec"));
    const QCommandLineOption seed(QStringLiteral("seed"), Text::tr("Seed for the sandbox's random choices."), QStringLiteral("n"),
                                  QStringLiteral("1"));
    const QCommandLineOption rbac(QStringLiteral("rbac"), Text::tr("RBAC file adding users with fewer rights."), QStringLiteral("file"));
    const QCommandLineOption faults(QStringLiteral("faults"),
                                    Text::tr("Faults from the start: rate429=F,rate500=F,delayMs=N,dropWatchesAfterMs=N,dropLogsAfterMs=N,s3PartFailureRate=F,"
                                                   "next500Creates=N,holdS3Uploads=0|1 (docs/sandbox.md)."),
                                    QStringLiteral("spec"));
    const QCommandLineOption ns(QStringLiteral("namespace"), Text::tr("The namespace for Starforge's objects."), QStringLiteral("name"),
                                QStringLiteral("starforge"));
    const QCommandLineOption images(QStringLiteral("images"),
                                    Text::tr("Images present on the nodes, comma-separated (default: the FORGE_IMAGE_* defaults); "
                                                   "others fail to pull."),
                                    QStringLiteral("list"));
    const QCommandLineOption privateRegistry(QStringLiteral("private-registry"),
                                             Text::tr("Image prefix of the private registry: its images need an imagePullSecrets Secret "
                                                            "(kubernetes.io/dockerconfigjson) with credentials for its host, else the pull "
                                                            "fails with 401 Unauthorized (default registry.sandbox.internal/private/; "
                                                            "empty: none)."),
                                             QStringLiteral("prefix"), QStringLiteral("registry.sandbox.internal/private/"));
    const QCommandLineOption kuberay(QStringLiteral("kuberay-version"),
                                     Text::tr("The KubeRay release to be, 1.4 to 1.7: its RayJob CRD is served and admitted against "
                                                    "(1.5 and older prune preRunningDeadlineSeconds)."),
                                     QStringLiteral("version"), QStringLiteral("1.7"));
    const QCommandLineOption tokenTtl(QStringLiteral("token-ttl"),
                                      Text::tr("Lifetime of the tokens starforge-sandbox-credential (the kubeconfig's "
                                                     "starforge-sandbox-exec context) mints (default 3600; 0: they never expire)."),
                                      QStringLiteral("seconds"), QStringLiteral("3600"));
    const QCommandLineOption deleteRayJob(QStringLiteral("delete-rayjob-after-job-finishes"),
                                          Text::tr("Run the operator with DELETE_RAYJOB_CR_AFTER_JOB_FINISHES=true: "
                                                         "shutdownAfterJobFinishes deletes the RayJob itself at ttlSecondsAfterFinished."));
    const QCommandLineOption featureGates(QStringLiteral("feature-gates"),
                                          Text::tr("The operator's feature gates: RayJobDeletionPolicy=true|false "
                                                         "(spec.deletionStrategy; default on from --kuberay-version 1.6)."),
                                          QStringLiteral("gates"));
    const QCommandLineOption operatorEnv(QStringLiteral("operator-env"),
                                         Text::tr("The operator's environment, comma-separated: ENABLE_INIT_CONTAINER_INJECTION, "
                                                        "ENABLE_PROBES_INJECTION (on unless false) and DELETE_RAYJOB_CR_AFTER_JOB_FINISHES "
                                                        "(off unless true), e.g. ENABLE_PROBES_INJECTION=false."),
                                         QStringLiteral("vars"));
    const QCommandLineOption tokenRate(QStringLiteral("token-rate"),
                                       Text::tr("Tokens per second the vLLM stand-in generates in playground pods (default 50)."),
                                       QStringLiteral("n"), QStringLiteral("50"));
    const QCommandLineOption stepSeconds(QStringLiteral("nemo-rl-step-seconds"),
                                         Text::tr("Seconds each training step of the NeMo-RL stand-in takes (default 0.2), so a job "
                                                        "with hundreds of steps can run unchanged in a test."),
                                         QStringLiteral("s"));
    parser.addOptions({listen, connection, fleet, seed, rbac, faults, ns, images, privateRegistry, kuberay, tokenTtl, deleteRayJob, featureGates,
                       operatorEnv, tokenRate, stepSeconds});
    parser.process(app);

    QTextStream err(stderr);
    const auto fail = [&err](const QString &message) {
        err << "starforge-sandbox: " << message << Qt::endl;
        return 1;
    };
    Sandbox::SandboxOptions options;
    const QString hostPort = parser.value(listen);
    const qsizetype colon = hostPort.lastIndexOf(u':');
    bool portOk = false;
    const uint port = colon > 0 ? hostPort.mid(colon + 1).toUInt(&portOk) : 0;
    QString host = colon > 0 ? hostPort.left(colon) : QString();
    if (host.startsWith(u'[') && host.endsWith(u']')) {
        host = host.mid(1, host.size() - 2);
    }
    if (!portOk || port > 65535 || !options.address.setAddress(host)) {
        return fail(Text::tr("--listen takes HOST:PORT with a loopback address, e.g. 127.0.0.1:0, not '%1'").arg(hostPort));
    }
    options.port = static_cast<quint16>(port);
    options.connectionFile = parser.value(connection);
    options.fleet = parser.value(fleet);
    bool seedOk = false;
    options.seed = parser.value(seed).toUInt(&seedOk);
    if (!seedOk) {
        return fail(Text::tr("--seed takes a non-negative integer"));
    }
    options.rbacFile = parser.value(rbac);
    options.ns = parser.value(ns);
    options.presentImages = parser.value(images).split(u',', Qt::SkipEmptyParts);
    options.privateRegistry = parser.value(privateRegistry);
    auto kuberayVersion = Sandbox::KubeRayCrds::parseVersion(parser.value(kuberay));
    if (!kuberayVersion) {
        return fail(Text::tr("--kuberay-version: %1").arg(kuberayVersion.error().message));
    }
    options.kuberayVersion = *kuberayVersion;
    bool ttlOk = false;
    options.tokenTtlSeconds = parser.value(tokenTtl).toLongLong(&ttlOk);
    if (!ttlOk || options.tokenTtlSeconds < 0) {
        return fail(Text::tr("--token-ttl takes a number of seconds (0: tokens never expire), not '%1'").arg(parser.value(tokenTtl)));
    }
    options.deleteRayJobAfterJobFinishes = parser.isSet(deleteRayJob);
    bool rateOk = false;
    options.tokenRate = parser.value(tokenRate).toDouble(&rateOk);
    if (!rateOk || options.tokenRate <= 0) {
        return fail(Text::tr("--token-rate takes a positive number of tokens per second, not '%1'").arg(parser.value(tokenRate)));
    }
    if (parser.isSet(stepSeconds)) {
        bool stepOk = false;
        const double seconds = parser.value(stepSeconds).toDouble(&stepOk);
        if (!stepOk || !(seconds >= 0)) {
            return fail(
                Text::tr("--nemo-rl-step-seconds takes a number of seconds, 0 or more, not '%1'").arg(parser.value(stepSeconds)));
        }
        options.nemoRlStepSeconds = seconds;
    }
    for (const QString &gate : parser.value(featureGates).split(u',', Qt::SkipEmptyParts)) {
        const QStringList kv = gate.trimmed().split(u'=');
        if (kv.size() != 2 || kv.at(0) != QLatin1String("RayJobDeletionPolicy") || (kv.at(1) != QLatin1String("true") && kv.at(1) != QLatin1String("false"))) {
            return fail(Text::tr("--feature-gates takes RayJobDeletionPolicy=true or RayJobDeletionPolicy=false, not '%1'").arg(gate));
        }
        options.rayJobDeletionPolicy = kv.at(1) == QLatin1String("true");
    }
    for (const QString &variable : parser.value(operatorEnv).split(u',', Qt::SkipEmptyParts)) {
        const qsizetype eq = variable.indexOf(u'=');
        const QString key = variable.left(eq).trimmed();
        // As the operator reads them: only "false" turns an injection off, only "true" turns
        // the RayJob's own deletion on.
        const QString value = eq < 0 ? QString() : variable.mid(eq + 1).trimmed().toLower();
        if (eq < 0) {
            return fail(Text::tr("--operator-env takes NAME=VALUE pairs, not '%1'").arg(variable));
        } else if (key == QLatin1String("ENABLE_INIT_CONTAINER_INJECTION")) {
            options.injectInitContainer = value != QLatin1String("false");
        } else if (key == QLatin1String("ENABLE_PROBES_INJECTION")) {
            options.injectProbes = value != QLatin1String("false");
        } else if (key == QLatin1String("DELETE_RAYJOB_CR_AFTER_JOB_FINISHES")) {
            options.deleteRayJobAfterJobFinishes = value == QLatin1String("true");
        } else {
            return fail(Text::tr("--operator-env knows ENABLE_INIT_CONTAINER_INJECTION, ENABLE_PROBES_INJECTION and "
                                       "DELETE_RAYJOB_CR_AFTER_JOB_FINISHES, not '%1'").arg(key));
        }
    }
    if (parser.isSet(faults)) {
        auto parsed = Sandbox::Faults::parse(parser.value(faults));
        if (!parsed) {
            return fail(parsed.error().message);
        }
        options.faults = *parsed;
    }

    Starforge::quitOnTerminationSignals(app);
    Sandbox::Sandbox sandbox;
    if (auto started = sandbox.start(options); !started) {
        return fail(started.error().message);
    }
    QTextStream(stdout) << Text::tr("starforge-sandbox %1 serving %2; connection file %3")
                               .arg(QCoreApplication::applicationVersion(), sandbox.apiServerUrl().toString(), options.connectionFile)
                        << Qt::endl;
    const int code = app.exec();
    sandbox.stop();
    return code;
}
