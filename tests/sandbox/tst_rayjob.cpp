// The sandbox's KubeRay: a RayJob runs its entrypoint from a zipped working_dir through the
// RayCluster, pods and submitter Job, and reaches Complete/SUCCEEDED with the script's output in
// the submitter's log; failures, the operator's validation, the pre-running deadline with the
// scheduler's text on the stuck pod, and clean-up after the TTL. The NeMo-RL stand-in named by
// the connection file's FORGE_NEMO_RL_DIR runs as the driver with the head's environment, its
// step banners in the log and its checkpoint under FORGE_STORAGE_ROOT, or fails on request.
// The submitter runs the operator's script word for word; jobStatus and Ray's messages come
// from the head's "dashboard"; a killed submitter pod, and one `kubectl drain` evicts, is retried
// without a second submission; workers wait for the head in the injected wait-gcs-ready init
// container and Ray containers carry the operator's probes; SubmissionFailed, the dashboard's failures, suspend and resume, and the deadlines' messages
// with Go-formatted times.

#include "core/config/embeddedsandbox.h"
#include "sandbox/sandbox.h"
#include "sandbox/store/objectstore.h"
#include "support/sandboxfixture.h"
#include "support/testutil.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QProcess>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <functional>
#include <csignal>

using namespace Starforge;
using namespace Starforge::Testing;

namespace {

const QString RayImage = QStringLiteral("rayproject/ray:2.55.1");

QJsonObject container(const QString &name, int gpus = 0)
{
    QJsonObject c{{QStringLiteral("name"), name}, {QStringLiteral("image"), RayImage}};
    if (gpus > 0) {
        c.insert(QStringLiteral("resources"), QJsonObject{{QStringLiteral("limits"), QJsonObject{{QStringLiteral("nvidia.com/gpu"), QString::number(gpus)}}}});
    }
    return c;
}

QJsonObject rayJob(const QString &name, const QString &entrypoint, const QString &runtimeEnvYaml, int workerGpus = 0, const QJsonObject &extra = {})
{
    QJsonObject spec{
        {QStringLiteral("entrypoint"), entrypoint},
        {QStringLiteral("runtimeEnvYAML"), runtimeEnvYaml},
        {QStringLiteral("shutdownAfterJobFinishes"), true},
        {QStringLiteral("ttlSecondsAfterFinished"), 1},
        {QStringLiteral("rayClusterSpec"),
         QJsonObject{{QStringLiteral("rayVersion"), QStringLiteral("2.55.1")},
                     {QStringLiteral("headGroupSpec"), QJsonObject{{QStringLiteral("rayStartParams"), QJsonObject()},
                                                                   {QStringLiteral("template"), QJsonObject{{QStringLiteral("spec"), QJsonObject{{QStringLiteral("containers"), QJsonArray{container(QStringLiteral("ray-head"))}}}}}}}},
                     {QStringLiteral("workerGroupSpecs"),
                      QJsonArray{QJsonObject{{QStringLiteral("groupName"), QStringLiteral("gpu")}, {QStringLiteral("replicas"), 2},
                                             {QStringLiteral("minReplicas"), 2}, {QStringLiteral("maxReplicas"), 2},
                                             {QStringLiteral("rayStartParams"), QJsonObject()},
                                             {QStringLiteral("template"), QJsonObject{{QStringLiteral("spec"), QJsonObject{{QStringLiteral("containers"), QJsonArray{container(QStringLiteral("ray-worker"), workerGpus)}}}}}}}}}}}};
    for (auto it = extra.begin(); it != extra.end(); ++it) {
        spec.insert(it.key(), it.value());
    }
    return QJsonObject{{QStringLiteral("apiVersion"), QStringLiteral("ray.io/v1")}, {QStringLiteral("kind"), QStringLiteral("RayJob")},
                       {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("labels"), QJsonObject{{QStringLiteral("team"), QStringLiteral("rl")}}}}},
                       {QStringLiteral("spec"), spec}};
}

// "2026-12-04T13:55:45Z" as Go's time.Time.String() prints it: "2026-12-04 13:55:45 +0000 UTC".
QString RayJobStart(const QString &rfc3339)
{
    QString s = rfc3339;
    s.replace(u'T', u' ');
    s.chop(1);
    return s + QStringLiteral(" +0000 UTC");
}

// The processes whose command line has every word (a zombie's is empty: it is not counted).
QList<int> processesWith(const QStringList &words)
{
    QList<int> found;
    for (const QString &pid : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
        bool number = false;
        pid.toInt(&number);
        if (!number) continue;
        QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
        if (!cmdline.open(QIODevice::ReadOnly)) continue;
        const QStringList args = QString::fromUtf8(cmdline.readAll()).split(QChar(0));
        if (std::all_of(words.cbegin(), words.cend(), [&](const QString &w) { return args.contains(w); })) {
            found << pid.toInt();
        }
    }
    return found;
}

// SIGKILLs the processes whose command line has every word; true when one was found.
bool killProcessWith(const QStringList &words)
{
    bool killed = false;
    for (const int pid : processesWith(words)) {
        killed = ::kill(pid, SIGKILL) == 0 || killed;
    }
    return killed;
}

} // namespace

class TestRayJob : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<SandboxHttp> m_http;
    QString m_zip;
    const QString m_rayjobs = QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs");

    QJsonObject status(const QString &name)
    {
        return m_http->get(m_rayjobs + u'/' + name).json().value(QStringLiteral("status")).toObject();
    }
    QJsonArray list(const QString &path) { return m_http->get(path).json().value(QStringLiteral("items")).toArray(); }

    // A sandbox with the test's options (over the defaults the other tests use).
    void start(const std::function<void(Sandbox::SandboxOptions &)> &adjust = {})
    {
        m_http.reset();
        m_sandbox.reset();
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("h200:2x8,cpu:1x0");
        options.presentImages = {RayImage};
        options.jobRetryBackoffMs = 200;
        if (adjust) adjust(options);
        QString error;
        QVERIFY2(startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
    }

private Q_SLOTS:
    void initTestCase()
    {
        // A Capsule-shaped zip: one top-level directory holding the script.
        m_zip = m_dir.filePath(QStringLiteral("capsule.zip"));
        QProcess python;
        python.start(QStringLiteral("python3"), {QStringLiteral("-c"), QStringLiteral(
            "import zipfile,sys\n"
            "z=zipfile.ZipFile(sys.argv[1],'w')\n"
            "z.writestr('capsule-1/main.py','import os,sys\\nprint(\"training step 1 of 2\", os.environ[\"RECIPE\"])\\nprint(\"training step 2 of 2\")\\nsys.exit(int(os.environ.get(\"EXIT\",\"0\")))\\n')\n"
            // A NeMo-RL config as the examples write it: inheriting from the image's.
            "z.writestr('capsule-1/configs/run.yaml','defaults: /opt/nemo-rl/examples/configs/grpo_math_1B.yaml\\n"
            "data:\\n  default:\\n    prompt_file: /opt/nemo-rl/examples/prompts/cot.txt\\n')\n"
            "z.close()\n"), m_zip});
        QVERIFY(python.waitForFinished());
        QCOMPARE(python.exitCode(), 0);
    }

    void init() { start(); }

    void cleanup()
    {
        m_http.reset();
        m_sandbox.reset();
    }

    void runsToCompletion()
    {
        const QString env = QStringLiteral("working_dir: file://%1\nenv_vars:\n  RECIPE: grpo\n").arg(m_zip);
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(rayJob(QStringLiteral("train"), QStringLiteral("python3 main.py"), env, 4)).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("train")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Complete"), 30000);
        const QJsonObject s = status(QStringLiteral("train"));
        QCOMPARE(s.value(QStringLiteral("jobStatus")).toString(), QStringLiteral("SUCCEEDED"));
        QCOMPARE(s.value(QStringLiteral("succeeded")).toInt(), 1);
        const QString cluster = s.value(QStringLiteral("rayClusterName")).toString();
        QVERIFY(QRegularExpression(QStringLiteral("^train-[bcdfghjklmnpqrstvwxz2456789]{5}$")).match(cluster).hasMatch());
        QVERIFY(s.value(QStringLiteral("jobId")).toString().startsWith(QStringLiteral("train-")));
        QVERIFY(!s.value(QStringLiteral("startTime")).toString().isEmpty());
        QVERIFY(!s.value(QStringLiteral("endTime")).toString().isEmpty());
        QCOMPARE(s.value(QStringLiteral("dashboardURL")).toString(), QStringLiteral("%1-head-svc.starforge.svc.cluster.local:8265").arg(cluster));

        // The submitter Job's pod carries the Job controller's labels and the driver's output.
        const QJsonArray submitters = list(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3Dtrain"));
        QCOMPARE(submitters.size(), 1);
        const QJsonObject labels = submitters.first().toObject().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("labels")).toObject();
        QCOMPARE(labels.value(QStringLiteral("job-name")).toString(), QStringLiteral("train"));
        QVERIFY(!labels.value(QStringLiteral("controller-uid")).toString().isEmpty());
        QCOMPARE(labels.value(QStringLiteral("ray.io/originated-from-crd")).toString(), QStringLiteral("RayJob"));
        const QString submitter = submitters.first().toObject().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString();
        const QByteArray log = m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods/%1/log").arg(submitter)).body;
        QVERIFY2(log.contains("training step 1 of 2 grpo\ntraining step 2 of 2\n"), log.constData());
        const QString jobId = s.value(QStringLiteral("jobId")).toString();
        QVERIFY2(log.contains(QStringLiteral("Job '%1' submitted successfully").arg(jobId).toUtf8()), log.constData());
        // Ray's status as the dashboard gave it: its message, and when Ray accepted the job.
        QCOMPARE(s.value(QStringLiteral("message")).toString(), QStringLiteral("Job finished successfully."));
        const QJsonObject rayInfo = s.value(QStringLiteral("rayJobInfo")).toObject();
        QVERIFY(!rayInfo.value(QStringLiteral("startTime")).toString().isEmpty());
        QVERIFY(rayInfo.value(QStringLiteral("endTime")).toString() >= rayInfo.value(QStringLiteral("startTime")).toString());
        QVERIFY(rayInfo.value(QStringLiteral("startTime")).toString() >= s.value(QStringLiteral("startTime")).toString());

        // The submitter runs the operator's script (common/job.go), word for word, and its variables.
        const QJsonObject submitterJob = m_http->get(QStringLiteral("/apis/batch/v1/namespaces/starforge/jobs/train")).json();
        QCOMPARE(submitterJob.value(QStringLiteral("spec")).toObject().value(QStringLiteral("backoffLimit")).toInt(), 2);
        const QJsonObject c = submitterJob.value(QStringLiteral("spec")).toObject().value(QStringLiteral("template")).toObject()
                                  .value(QStringLiteral("spec")).toObject().value(QStringLiteral("containers")).toArray().first().toObject();
        QCOMPARE(c.value(QStringLiteral("command")).toArray(), (QJsonArray{QStringLiteral("/bin/bash"), QStringLiteral("-ce"), QStringLiteral("--")}));
        const QString address = QStringLiteral("http://%1-head-svc.starforge.svc.cluster.local:8265").arg(cluster);
        const QString expected = QStringLiteral(
            "until python -c \"import urllib.request; r=urllib.request.urlopen('%1/api/gcs_healthz', timeout=10); exit(0 if b'success' in r.read() else 1)\" "
            ">/dev/null 2>&1 ; do echo \"Waiting for Ray Dashboard GCS to become healthy at %1 ...\" ; sleep 2 ; done ; "
            "if ! ray job status --address %1 %2 >/dev/null 2>&1 ; then ray job submit --address %1 --no-wait "
            "--runtime-env-json \"{\\\"env_vars\\\":{\\\"RECIPE\\\":\\\"grpo\\\"},\\\"working_dir\\\":\\\"file://%3\\\"}\" "
            "--submission-id %2 -- python3 main.py ; fi ; ray job logs --address %1 --follow %2").arg(address, jobId, m_zip);
        QCOMPARE(c.value(QStringLiteral("args")).toArray(), QJsonArray{expected});
        QStringList submitterEnv;
        for (const QJsonValue &v : c.value(QStringLiteral("env")).toArray()) {
            submitterEnv << v[QStringLiteral("name")].toString() + u'=' + v[QStringLiteral("value")].toString();
        }
        QCOMPARE(submitterEnv, (QStringList{QStringLiteral("PYTHONUNBUFFERED=1"), QStringLiteral("RAY_DASHBOARD_ADDRESS=%1-head-svc.starforge.svc.cluster.local:8265").arg(cluster),
                                   QStringLiteral("RAY_JOB_SUBMISSION_ID=") + jobId}));

        // The operator's events on the RayJob.
        QStringList reasons;
        for (const QJsonValue &e : list(QStringLiteral("/api/v1/namespaces/starforge/events?fieldSelector=involvedObject.kind%3DRayJob,involvedObject.name%3Dtrain"))) {
            reasons << e.toObject().value(QStringLiteral("reason")).toString();
        }
        QVERIFY2(reasons.contains(QStringLiteral("CreatedRayCluster")) && reasons.contains(QStringLiteral("CreatedRayJobSubmitter")), qPrintable(reasons.join(u',')));
        // The RayJob's own head Service, in the operator's words.
        const QJsonArray created = list(QStringLiteral("/api/v1/namespaces/starforge/events?fieldSelector=involvedObject.name%3Dtrain,reason%3DCreatedService"));
        QCOMPARE(created.size(), 1);
        QCOMPARE(created.first()[QStringLiteral("message")].toString(), QStringLiteral("Created the service starforge/train-head-svc"));
        QCOMPARE(created.first()[QStringLiteral("type")].toString(), QStringLiteral("Normal"));

        // shutdownAfterJobFinishes with a 1 s TTL: the cluster and its pods go, the submitter Job stays.
        QTRY_COMPARE_WITH_TIMEOUT(m_http->get(QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayclusters/") + cluster).status, 404, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(list(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=ray.io%2Fcluster%3D") + cluster).size(), 0, 10000);
        QCOMPARE(m_http->get(QStringLiteral("/apis/batch/v1/namespaces/starforge/jobs/train")).status, 200);
    }

    // A RayJob running NeMo-RL's example script as Starforge's do: FORGE_NEMO_RL_DIR and
    // FORGE_STORAGE_ROOT in the Ray containers (from the connection file), the entrypoint
    // expanding them in the driver (single quotes keep the submitter's bash from doing it).
    QJsonObject nemoRlJob(const QString &name, const QString &overrides)
    {
        const QJsonObject forge = QJsonDocument::fromJson(readAll(m_dir.filePath(QStringLiteral("conn.json")))).object()
                                      .value(QStringLiteral("forge")).toObject();
        const QJsonArray env{QJsonObject{{QStringLiteral("name"), QStringLiteral("FORGE_NEMO_RL_DIR")},
                                         {QStringLiteral("value"), forge.value(QStringLiteral("FORGE_NEMO_RL_DIR"))}},
                             QJsonObject{{QStringLiteral("name"), QStringLiteral("FORGE_STORAGE_ROOT")},
                                         {QStringLiteral("value"), forge.value(QStringLiteral("FORGE_STORAGE_ROOT"))}}};
        const QString entrypoint = QStringLiteral(
            "python3 '$FORGE_NEMO_RL_DIR/examples/run_grpo.py' --config configs/run.yaml grpo.max_num_steps=3 "
            "'++checkpointing.checkpoint_dir=$FORGE_STORAGE_ROOT/jobs/%1/checkpoints' '++logger.log_dir=$FORGE_STORAGE_ROOT/jobs/%1/logs' "
            "++checkpointing.save_consolidated=true %2").arg(name, overrides);
        QJsonObject job = rayJob(name, entrypoint, QStringLiteral("working_dir: file://%1\n").arg(m_zip));
        QJsonObject spec = job.value(QStringLiteral("spec")).toObject();
        QJsonObject cluster = spec.value(QStringLiteral("rayClusterSpec")).toObject();
        QJsonObject head = cluster.value(QStringLiteral("headGroupSpec")).toObject();
        QJsonObject podTemplate = head.value(QStringLiteral("template")).toObject();
        QJsonObject podSpec = podTemplate.value(QStringLiteral("spec")).toObject();
        QJsonArray containers = podSpec.value(QStringLiteral("containers")).toArray();
        QJsonObject ray = containers.first().toObject();
        ray.insert(QStringLiteral("env"), env);
        containers.replace(0, ray);
        podSpec.insert(QStringLiteral("containers"), containers);
        podTemplate.insert(QStringLiteral("spec"), podSpec);
        head.insert(QStringLiteral("template"), podTemplate);
        cluster.insert(QStringLiteral("headGroupSpec"), head);
        spec.insert(QStringLiteral("rayClusterSpec"), cluster);
        job.insert(QStringLiteral("spec"), spec);
        return job;
    }

    QByteArray submitterLog(const QString &job)
    {
        const QJsonArray pods = list(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=job-name%3D") + job);
        if (pods.isEmpty()) return {};
        const QString pod = pods.first().toObject().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString();
        return m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods/%1/log").arg(pod)).body;
    }

    void connectionFileNamesTheNemoRlStandIn()
    {
        const QJsonObject forge = QJsonDocument::fromJson(readAll(m_dir.filePath(QStringLiteral("conn.json")))).object()
                                      .value(QStringLiteral("forge")).toObject();
        QCOMPARE(forge.value(QStringLiteral("FORGE_NEMO_RL_DIR")).toString(), m_sandbox->nemoRlDir());
        QCOMPARE(forge.value(QStringLiteral("FORGE_STORAGE_ROOT")).toString(), m_sandbox->storageRoot());
        QVERIFY2(QFileInfo::exists(m_sandbox->nemoRlDir() + QStringLiteral("/examples/run_grpo.py")), qPrintable(m_sandbox->nemoRlDir()));
        QVERIFY(QFileInfo(m_sandbox->storageRoot()).isDir());
        QVERIFY(m_sandbox->storageRoot().startsWith(m_dir.filePath(QStringLiteral("conn.json.state/"))));
        // What `starforge --sandbox` turns into the session profile.
        const auto connection = Config::SandboxConnection::read(m_dir.filePath(QStringLiteral("conn.json")));
        QVERIFY2(connection.ok(), connection.ok() ? "" : qPrintable(connection.error().message));
        QCOMPARE(connection->settings.value(QStringLiteral("FORGE_NEMO_RL_DIR")), m_sandbox->nemoRlDir());
        QCOMPARE(connection->settings.value(QStringLiteral("FORGE_STORAGE_ROOT")), m_sandbox->storageRoot());
        // A corpus claim, so JobSpecs with "corpus": true run here: its directory in the state
        // directory, with a file saying what it is.
        QCOMPARE(forge.value(QStringLiteral("FORGE_K8S_CORPUS_PVC")).toString(), Sandbox::Sandbox::corpusClaim());
        QCOMPARE(connection->settings.value(QStringLiteral("FORGE_K8S_CORPUS_PVC")), Sandbox::Sandbox::corpusClaim());
        QVERIFY(m_sandbox->corpusDir().startsWith(m_dir.filePath(QStringLiteral("conn.json.state/"))));
        QVERIFY(QFileInfo(m_sandbox->corpusDir() + QStringLiteral("/README.txt")).isFile());
    }

    void nemoRlStandInRunsToCompletion()
    {
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(nemoRlJob(QStringLiteral("grpo1"), {})).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("grpo1")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Complete"), 30000);
        QCOMPARE(status(QStringLiteral("grpo1")).value(QStringLiteral("jobStatus")).toString(), QStringLiteral("SUCCEEDED"));
        const QByteArray log = submitterLog(QStringLiteral("grpo1"));
        for (int step = 1; step <= 3; ++step) {
            QVERIFY2(log.contains(QStringLiteral("========================= Step %1/3 =========================\n").arg(step).toUtf8()), log.constData());
        }
        QVERIFY2(!log.contains("Step 4/"), log.constData());
        QVERIFY2(log.contains("  \u2022 Loss: "), log.constData());
        QVERIFY2(log.contains("Saving checkpoint for step 3...\n"), log.constData());
        QVERIFY2(log.contains("Max number of steps has been reached, stopping training early\n"), log.constData());
        // The checkpoint under the storage root, consolidated for vLLM.
        const QString stepDir = m_sandbox->storageRoot() + QStringLiteral("/jobs/grpo1/checkpoints/step_3");
        QVERIFY2(QFileInfo::exists(stepDir + QStringLiteral("/policy/weights/model/consolidated/model.safetensors.index.json")), qPrintable(stepDir));
        QVERIFY(QFileInfo::exists(stepDir + QStringLiteral("/config.yaml")));
        QCOMPARE(QJsonDocument::fromJson(readAll(stepDir + QStringLiteral("/training_info.json"))).object().value(QStringLiteral("total_steps")).toInt(), 3);
        QVERIFY(QFileInfo(m_sandbox->storageRoot() + QStringLiteral("/jobs/grpo1/logs/exp_001")).isDir());
    }

    void nemoRlStandInFailsOnRequest()
    {
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(nemoRlJob(QStringLiteral("grpo2"), QStringLiteral("+starforge.fake_fail_at_step=2"))).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("grpo2")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Failed"), 30000);
        QCOMPARE(status(QStringLiteral("grpo2")).value(QStringLiteral("jobStatus")).toString(), QStringLiteral("FAILED"));
        QCOMPARE(status(QStringLiteral("grpo2")).value(QStringLiteral("reason")).toString(), QStringLiteral("AppFailed"));
        const QByteArray log = submitterLog(QStringLiteral("grpo2"));
        QVERIFY2(log.contains("========================= Step 2/3 ========================="), log.constData());
        QVERIFY2(!log.contains("Step 3/3"), log.constData());
        QVERIFY2(log.contains("Traceback (most recent call last):"), log.constData());
        QVERIFY2(log.contains("RuntimeError: starforge.fake_fail_at_step=2"), log.constData());
        QVERIFY2(log.contains("Job 'grpo2-"), log.constData());
    }

    void rayPodsCarryKubeRaysLabels()
    {
        const QString env = QStringLiteral("working_dir: file://%1\nenv_vars:\n  RECIPE: sft\n").arg(m_zip);
        QJsonObject job = rayJob(QStringLiteral("labels"), QStringLiteral("sleep 5"), env);
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(job).toJson()).status, 201);
        QTRY_VERIFY_WITH_TIMEOUT(!status(QStringLiteral("labels")).value(QStringLiteral("rayClusterName")).toString().isEmpty(), 10000);
        const QString cluster = status(QStringLiteral("labels")).value(QStringLiteral("rayClusterName")).toString();
        QTRY_COMPARE_WITH_TIMEOUT(list(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=ray.io%2Fcluster%3D") + cluster).size(), 3, 10000);
        const QJsonArray heads = list(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=ray.io%2Fcluster%3D%1,ray.io%2Fnode-type%3Dhead").arg(cluster));
        QCOMPARE(heads.size(), 1);
        const QJsonObject head = heads.first().toObject().value(QStringLiteral("metadata")).toObject();
        QVERIFY(head.value(QStringLiteral("name")).toString().startsWith(cluster + QStringLiteral("-head-")));
        QCOMPARE(head.value(QStringLiteral("labels")).toObject().value(QStringLiteral("ray.io/group")).toString(), QStringLiteral("headgroup"));
        QCOMPARE(head.value(QStringLiteral("labels")).toObject().value(QStringLiteral("app.kubernetes.io/created-by")).toString(), QStringLiteral("kuberay-operator"));
        const QJsonArray workers = list(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=ray.io%2Fgroup%3Dgpu"));
        QCOMPARE(workers.size(), 2);
        QVERIFY(workers.first().toObject().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString().startsWith(cluster + QStringLiteral("-gpu-worker-")));
        const QJsonObject clusterObject = m_http->get(QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayclusters/") + cluster).json();
        QCOMPARE(clusterObject.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("labels")).toObject().value(QStringLiteral("team")).toString(), QStringLiteral("rl"));

        // What the operator adds: the head has no init container; each worker waits for the
        // head's GCS in wait-gcs-ready (the worker's image, 200m/256Mi, FQ_RAY_IP and RAY_IP);
        // Ray 2.55 containers are probed over HTTP at the dashboard agent's /api/healthz.
        const QJsonObject headSpec = heads.first().toObject().value(QStringLiteral("spec")).toObject();
        QVERIFY(headSpec.value(QStringLiteral("initContainers")).toArray().isEmpty());
        const QJsonObject headRay = headSpec.value(QStringLiteral("containers")).toArray().first().toObject();
        QCOMPARE(headRay[QStringLiteral("readinessProbe")][QStringLiteral("httpGet")][QStringLiteral("path")].toString(), QStringLiteral("/api/healthz"));
        QCOMPARE(headRay[QStringLiteral("readinessProbe")][QStringLiteral("timeoutSeconds")].toInt(), 5);
        QCOMPARE(headRay[QStringLiteral("livenessProbe")][QStringLiteral("failureThreshold")].toInt(), 120);
        const QJsonObject workerPod = workers.first().toObject();
        const QJsonObject workerSpec = workerPod.value(QStringLiteral("spec")).toObject();
        const QJsonArray inits = workerSpec.value(QStringLiteral("initContainers")).toArray();
        QCOMPARE(inits.size(), 1);
        const QJsonObject wait = inits.first().toObject();
        QCOMPARE(wait.value(QStringLiteral("name")).toString(), QStringLiteral("wait-gcs-ready"));
        QCOMPARE(wait.value(QStringLiteral("image")).toString(), RayImage);
        QCOMPARE(wait[QStringLiteral("resources")][QStringLiteral("requests")][QStringLiteral("memory")].toString(), QStringLiteral("256Mi"));
        const QString fqdn = cluster + QStringLiteral("-head-svc.starforge.svc.cluster.local");
        QVERIFY(wait.value(QStringLiteral("args")).toArray().first().toString().contains(QStringLiteral("ray health-check --address %1:6379").arg(fqdn)));
        QStringList envNames;
        for (const QJsonValue &e : wait.value(QStringLiteral("env")).toArray()) {
            envNames << e[QStringLiteral("name")].toString() + u'=' + e[QStringLiteral("value")].toString();
        }
        QCOMPARE(envNames, (QStringList{QStringLiteral("FQ_RAY_IP=") + fqdn, QStringLiteral("RAY_IP=%1-head-svc").arg(cluster)}));
        const QJsonObject workerRay = workerSpec.value(QStringLiteral("containers")).toArray().first().toObject();
        QCOMPARE(workerRay[QStringLiteral("readinessProbe")][QStringLiteral("timeoutSeconds")].toInt(), 2);
        QCOMPARE(workerRay[QStringLiteral("livenessProbe")][QStringLiteral("httpGet")][QStringLiteral("port")].toInt(), 52365);
        QTRY_COMPARE_WITH_TIMEOUT(m_http->get(QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayclusters/") + cluster).json()
                                      .value(QStringLiteral("status")).toObject().value(QStringLiteral("state")).toString(), QStringLiteral("ready"), 20000);
        // The worker started only after its init container saw the head.
        const QString workerName = workerPod[QStringLiteral("metadata")][QStringLiteral("name")].toString();
        QVERIFY(m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods/%1/log?container=wait-gcs-ready").arg(workerName)).body.contains("GCS is ready."));
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("labels")).value(QStringLiteral("jobStatus")).toString(), QStringLiteral("RUNNING"), 10000);
        QCOMPARE(status(QStringLiteral("labels")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Running"));
        // Deleting the RayJob takes everything it owns with it.
        QCOMPARE(m_http->send("DELETE", m_rayjobs + QStringLiteral("/labels")).status, 200);
        QTRY_COMPARE_WITH_TIMEOUT(list(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=ray.io%2Fcluster%3D") + cluster).size(), 0, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(m_http->get(QStringLiteral("/apis/batch/v1/namespaces/starforge/jobs/labels")).status, 404, 10000);
    }

    // Older Rays are probed through wget (the head also for the GCS); a probe the user wrote is
    // kept; ENABLE_INIT_CONTAINER_INJECTION=false leaves the workers without wait-gcs-ready.
    void injectionsFollowRayVersionAndOperatorSettings()
    {
        start([](Sandbox::SandboxOptions &o) { o.injectInitContainer = false; });
        QJsonObject job = rayJob(QStringLiteral("olderray"), QStringLiteral("sleep 30"), QStringLiteral("working_dir: file://%1\n").arg(m_zip));
        QJsonObject spec = job.value(QStringLiteral("spec")).toObject();
        QJsonObject clusterSpec = spec.value(QStringLiteral("rayClusterSpec")).toObject();
        clusterSpec.insert(QStringLiteral("rayVersion"), QStringLiteral("2.46.0"));
        QJsonArray groups = clusterSpec.value(QStringLiteral("workerGroupSpecs")).toArray();
        QJsonObject group = groups.first().toObject();
        QJsonObject worker = container(QStringLiteral("ray-worker"));
        const QJsonObject own{{QStringLiteral("tcpSocket"), QJsonObject{{QStringLiteral("port"), 6380}}}, {QStringLiteral("periodSeconds"), 7}};
        worker.insert(QStringLiteral("readinessProbe"), own);
        group.insert(QStringLiteral("template"), QJsonObject{{QStringLiteral("spec"), QJsonObject{{QStringLiteral("containers"), QJsonArray{worker}}}}});
        groups.replace(0, group);
        clusterSpec.insert(QStringLiteral("workerGroupSpecs"), groups);
        spec.insert(QStringLiteral("rayClusterSpec"), clusterSpec);
        job.insert(QStringLiteral("spec"), spec);
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(job).toJson()).status, 201);
        QJsonArray pods;
        QTRY_COMPARE_WITH_TIMEOUT((pods = list(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=ray.io%2Fis-ray-node%3Dyes"))).size(), 3, 10000);
        for (const QJsonValue &pod : pods) {
            const bool head = pod[QStringLiteral("metadata")][QStringLiteral("labels")][QStringLiteral("ray.io/node-type")].toString() == QLatin1String("head");
            const QJsonObject podSpec = pod[QStringLiteral("spec")].toObject();
            QVERIFY(podSpec.value(QStringLiteral("initContainers")).toArray().isEmpty());
            const QJsonObject ray = podSpec.value(QStringLiteral("containers")).toArray().first().toObject();
            const QString liveness = ray[QStringLiteral("livenessProbe")][QStringLiteral("exec")][QStringLiteral("command")].toArray().last().toString();
            QVERIFY2(liveness.startsWith(QStringLiteral("wget --tries 1 -T 2 -q -O- http://localhost:52365/api/local_raylet_healthz | grep success")), qPrintable(liveness));
            QCOMPARE(liveness.contains(QStringLiteral("http://localhost:8265/api/gcs_healthz")), head);
            if (!head) {
                QCOMPARE(ray.value(QStringLiteral("readinessProbe")).toObject(), own);
            }
        }
    }

    void failingEntrypointFailsTheJob()
    {
        const QString env = QStringLiteral("working_dir: file://%1\nenv_vars:\n  RECIPE: grpo\n  EXIT: \"3\"\n").arg(m_zip);
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(rayJob(QStringLiteral("broken"), QStringLiteral("python3 main.py"), env)).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("broken")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Failed"), 30000);
        const QJsonObject s = status(QStringLiteral("broken"));
        QCOMPARE(s.value(QStringLiteral("jobStatus")).toString(), QStringLiteral("FAILED"));
        QCOMPARE(s.value(QStringLiteral("reason")).toString(), QStringLiteral("AppFailed"));
        QCOMPARE(s.value(QStringLiteral("failed")).toInt(), 1);
        // Ray's message with the driver's real exit code and its last lines.
        QCOMPARE(s.value(QStringLiteral("message")).toString(),
                 QStringLiteral("Job entrypoint command failed with exit code 3, last available logs (truncated to 20,000 chars):\n"
                                "training step 1 of 2 grpo\ntraining step 2 of 2\n"));
        // `ray job logs --follow` ends well whatever the Ray job did: the submitter Job completed.
        const QJsonArray conditions = m_http->get(QStringLiteral("/apis/batch/v1/namespaces/starforge/jobs/broken")).json()
                                          .value(QStringLiteral("status")).toObject().value(QStringLiteral("conditions")).toArray();
        QVERIFY(!conditions.isEmpty());
        QCOMPARE(conditions.last().toObject().value(QStringLiteral("type")).toString(), QStringLiteral("Complete"));
    }

    // Ray says PENDING while it sets up the runtime env (here the working_dir's download, which
    // the test holds), with rayJobInfo.startTime already set (when Ray accepted the job); the
    // deployment is Running meanwhile. Once the download answers, the driver runs.
    void pendingWhileTheRuntimeEnvIsSetUp()
    {
        QTcpServer server;
        QVERIFY(server.listen(QHostAddress::LocalHost));
        QTcpSocket *held = nullptr;
        connect(&server, &QTcpServer::newConnection, this, [&] { held = server.nextPendingConnection(); });
        const QString env = QStringLiteral("working_dir: http://127.0.0.1:%1/capsule.zip\nenv_vars:\n  RECIPE: rm\n").arg(server.serverPort());
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(rayJob(QStringLiteral("slowenv"), QStringLiteral("python3 main.py"), env)).toJson()).status, 201);
        QTRY_VERIFY_WITH_TIMEOUT(held != nullptr, 20000);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("slowenv")).value(QStringLiteral("jobStatus")).toString(), QStringLiteral("PENDING"), 10000);
        const QJsonObject s = status(QStringLiteral("slowenv"));
        QCOMPARE(s.value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Running"));
        QCOMPARE(s.value(QStringLiteral("message")).toString(), QStringLiteral("Job has not started yet. It may be waiting for the runtime environment to be set up."));
        QVERIFY(!s.value(QStringLiteral("rayJobInfo")).toObject().value(QStringLiteral("startTime")).toString().isEmpty());
        QTest::qWait(500);
        QCOMPARE(status(QStringLiteral("slowenv")).value(QStringLiteral("jobStatus")).toString(), QStringLiteral("PENDING"));
        QFile zip(m_zip);
        QVERIFY(zip.open(QIODevice::ReadOnly));
        const QByteArray body = zip.readAll();
        held->write("HTTP/1.0 200 OK\r\nContent-Type: application/zip\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body);
        held->flush();
        held->disconnectFromHost();
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("slowenv")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Complete"), 30000);
        QCOMPARE(status(QStringLiteral("slowenv")).value(QStringLiteral("jobStatus")).toString(), QStringLiteral("SUCCEEDED"));
        QVERIFY2(submitterLog(QStringLiteral("slowenv")).contains("training step 1 of 2 rm\n"), submitterLog(QStringLiteral("slowenv")).constData());
    }

    // A submitter pod that dies (an eviction, an OOM kill) is replaced by the Job; the new pod
    // finds the job already submitted (`ray job status`), follows its logs, and the job succeeds.
    void aKilledSubmitterPodIsRetried()
    {
        // A script file: an entrypoint is shell-parsed by the submitter's bash and again by Ray.
        const QString driver = m_dir.filePath(QStringLiteral("evicted.sh"));
        QFile file(driver);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("echo first\nsleep 3\necho second\n");
        file.close();
        QJsonObject job = rayJob(QStringLiteral("evicted"), QStringLiteral("sh ") + driver, {});
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(job).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("evicted")).value(QStringLiteral("jobStatus")).toString(), QStringLiteral("RUNNING"), 15000);
        const QString jobId = status(QStringLiteral("evicted")).value(QStringLiteral("jobId")).toString();
        // The submitter's `ray job logs --follow` process, killed as the kubelet kills an evicted pod's.
        // (Not in QTRY_VERIFY, which evaluates its expression more than once.)
        QVERIFY(QTest::qWaitFor([&] { return killProcessWith({QStringLiteral("logs"), QStringLiteral("--follow"), jobId}); }, 10000));
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("evicted")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Complete"), 30000);
        QCOMPARE(status(QStringLiteral("evicted")).value(QStringLiteral("jobStatus")).toString(), QStringLiteral("SUCCEEDED"));
        const QJsonObject jobStatus = m_http->get(QStringLiteral("/apis/batch/v1/namespaces/starforge/jobs/evicted")).json().value(QStringLiteral("status")).toObject();
        QCOMPARE(jobStatus.value(QStringLiteral("failed")).toInt(), 1);
        QCOMPARE(jobStatus.value(QStringLiteral("succeeded")).toInt(), 1);
        // The second pod did not submit again: it followed the running job to its end.
        QByteArray second;
        for (const QJsonValue &p : list(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=job-name%3Devicted"))) {
            if (p[QStringLiteral("status")][QStringLiteral("phase")].toString() != QLatin1String("Succeeded")) continue;
            second = m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods/%1/log").arg(p[QStringLiteral("metadata")][QStringLiteral("name")].toString())).body;
        }
        QVERIFY2(second.contains("first\nsecond\n"), second.constData());
        QVERIFY2(!second.contains("submitted successfully"), second.constData());
    }

    // `kubectl drain` evicts the running submitter pod through the Eviction API: the pod is
    // marked DisruptionTarget/EvictionByEvictionAPI and deleted, the Job counts it as failed
    // (KubeRay sets no podFailurePolicy) and starts another on a node that is not cordoned,
    // which re-attaches to the running Ray job; the job succeeds, submitted once.
    void anEvictedSubmitterPodIsRetried()
    {
        const QString kubectlPath = QStandardPaths::findExecutable(QStringLiteral("kubectl"));
        QVERIFY2(!kubectlPath.isEmpty(), "kubectl must be on PATH (it is part of the build image)");
        const QString driver = m_dir.filePath(QStringLiteral("drained.sh"));
        QFile file(driver);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("echo first\nsleep 4\necho second\n");
        file.close();
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(rayJob(QStringLiteral("drained"), QStringLiteral("sh ") + driver, {})).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("drained")).value(QStringLiteral("jobStatus")).toString(), QStringLiteral("RUNNING"), 15000);
        const QJsonArray submitters = list(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=job-name%3Ddrained"));
        QCOMPARE(submitters.size(), 1);
        const QString evicted = submitters.first()[QStringLiteral("metadata")][QStringLiteral("name")].toString();
        const QString node = submitters.first()[QStringLiteral("spec")][QStringLiteral("nodeName")].toString();

        QJsonObject lastSeen;
        connect(m_sandbox->store(), &Sandbox::ObjectStore::changed, this, [&](const Sandbox::Change &change) {
            if (change.storage == QLatin1String("pods") && change.object->name == evicted) lastSeen = change.object->object;
        });
        QProcess drain;
        drain.start(kubectlPath, {QStringLiteral("--kubeconfig"), m_sandbox->kubeconfigFile(), QStringLiteral("--cache-dir"), m_dir.filePath(QStringLiteral("kubectl-cache")),
                                  QStringLiteral("drain"), node, QStringLiteral("--pod-selector=job-name=drained"), QStringLiteral("--ignore-daemonsets"),
                                  QStringLiteral("--delete-emptydir-data"), QStringLiteral("--timeout=60s")});
        // The sandbox answers on this thread: wait with the event loop running.
        QTRY_COMPARE_WITH_TIMEOUT(drain.state(), QProcess::NotRunning, 70000);
        const QString out = QString::fromUtf8(drain.readAllStandardOutput() + drain.readAllStandardError());
        QVERIFY2(drain.exitCode() == 0, qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("pod/%1 evicted").arg(evicted)), qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("node/%1 drained").arg(node)), qPrintable(out));
        QCOMPARE(m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods/") + evicted).status, 404);
        // Its last state: marked by the Eviction API before it went.
        QJsonObject disruption;
        for (const QJsonValue &c : lastSeen[QStringLiteral("status")][QStringLiteral("conditions")].toArray()) {
            if (c[QStringLiteral("type")].toString() == QLatin1String("DisruptionTarget")) disruption = c.toObject();
        }
        QCOMPARE(disruption.value(QStringLiteral("reason")).toString(), QStringLiteral("EvictionByEvictionAPI"));
        QCOMPARE(disruption.value(QStringLiteral("message")).toString(), QStringLiteral("Eviction API: evicting"));

        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("drained")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Complete"), 30000);
        QCOMPARE(status(QStringLiteral("drained")).value(QStringLiteral("jobStatus")).toString(), QStringLiteral("SUCCEEDED"));
        const QJsonObject jobStatus = m_http->get(QStringLiteral("/apis/batch/v1/namespaces/starforge/jobs/drained")).json().value(QStringLiteral("status")).toObject();
        QCOMPARE(jobStatus.value(QStringLiteral("failed")).toInt(), 1);
        QCOMPARE(jobStatus.value(QStringLiteral("succeeded")).toInt(), 1);
        const QJsonArray after = list(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=job-name%3Ddrained"));
        QCOMPARE(after.size(), 1);
        QVERIFY(after.first()[QStringLiteral("spec")][QStringLiteral("nodeName")].toString() != node); // the drained node is cordoned
        const QByteArray second = m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods/%1/log").arg(after.first()[QStringLiteral("metadata")][QStringLiteral("name")].toString())).body;
        QVERIFY2(second.contains("first\nsecond\n"), second.constData());
        QVERIFY2(!second.contains("submitted successfully"), second.constData());

        // The Eviction API's refusals: a body naming another pod, a pod that is not there.
        const QByteArray other = R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"someone-else"}})";
        const auto mismatch = m_http->send("POST", QStringLiteral("/api/v1/namespaces/starforge/pods/%1/eviction").arg(after.first()[QStringLiteral("metadata")][QStringLiteral("name")].toString()), other);
        QCOMPARE(mismatch.status, 400);
        QCOMPARE(mismatch.json().value(QStringLiteral("message")).toString(), QStringLiteral("name in URL does not match name in Eviction object"));
        QCOMPARE(m_http->send("POST", QStringLiteral("/api/v1/namespaces/starforge/pods/someone-else/eviction"), other).status, 404);
    }

    // A submitter that fails up to its Job's backoff limit: SubmissionFailed with the Job's condition.
    void submitterBackoffLimitFailsTheSubmission()
    {
        QJsonObject job = rayJob(QStringLiteral("nosubmit"), QStringLiteral("true"), {});
        QJsonObject spec = job.value(QStringLiteral("spec")).toObject();
        const QJsonObject submitter{{QStringLiteral("name"), QStringLiteral("ray-job-submitter")}, {QStringLiteral("image"), RayImage},
                                    {QStringLiteral("command"), QJsonArray{QStringLiteral("/bin/sh"), QStringLiteral("-c"), QStringLiteral("exit 5")}}};
        spec.insert(QStringLiteral("submitterPodTemplate"),
                    QJsonObject{{QStringLiteral("spec"), QJsonObject{{QStringLiteral("restartPolicy"), QStringLiteral("Never")},
                                                                     {QStringLiteral("containers"), QJsonArray{submitter}}}}});
        spec.insert(QStringLiteral("submitterConfig"), QJsonObject{{QStringLiteral("backoffLimit"), 1}});
        job.insert(QStringLiteral("spec"), spec);
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(job).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("nosubmit")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Failed"), 30000);
        const QJsonObject s = status(QStringLiteral("nosubmit"));
        QCOMPARE(s.value(QStringLiteral("reason")).toString(), QStringLiteral("SubmissionFailed"));
        QCOMPARE(s.value(QStringLiteral("message")).toString(),
                 QStringLiteral("Job submission has failed. Reason: BackoffLimitExceeded. Message: Job has reached the specified backoff limit"));
        QCOMPARE(s.value(QStringLiteral("jobStatus")).toString(), QString());
        QCOMPARE(list(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=job-name%3Dnosubmit")).size(), 2);
    }

    // The operator's verdicts when Ray cannot say: a submitter that ended without submitting
    // (Ray does not know the job), one that ended while Ray's job still runs (the 30 s
    // DefaultSubmitterFinishedTimeout, 1 s here), and a dashboard that stops answering for
    // longer than RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS (1 s here), which is not retried.
    void dashboardFailures()
    {
        start([](Sandbox::SandboxOptions &o) {
            o.rayJobStatusCheckTimeoutSeconds = 1;
            o.rayJobSubmitterFinishedTimeoutSeconds = 1;
        });
        QJsonObject job = rayJob(QStringLiteral("quiet"), QStringLiteral("true"), {});
        QJsonObject spec = job.value(QStringLiteral("spec")).toObject();
        const QJsonObject submitter{{QStringLiteral("name"), QStringLiteral("ray-job-submitter")}, {QStringLiteral("image"), RayImage},
                                    {QStringLiteral("command"), QJsonArray{QStringLiteral("true")}}};
        spec.insert(QStringLiteral("submitterPodTemplate"),
                    QJsonObject{{QStringLiteral("spec"), QJsonObject{{QStringLiteral("restartPolicy"), QStringLiteral("Never")},
                                                                     {QStringLiteral("containers"), QJsonArray{submitter}}}}});
        job.insert(QStringLiteral("spec"), spec);
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(job).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("quiet")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Failed"), 20000);
        QCOMPARE(status(QStringLiteral("quiet")).value(QStringLiteral("reason")).toString(), QStringLiteral("AppFailed"));
        QCOMPARE(status(QStringLiteral("quiet")).value(QStringLiteral("message")).toString(), QStringLiteral("Submitter completed but Ray job not found in RayCluster."));

        // A submitter that submits and leaves without following (its own command, with the
        // operator's variables): Ray's job still runs when the grace period is over.
        QJsonObject left = rayJob(QStringLiteral("left"), QStringLiteral("sleep 30"), {});
        QJsonObject leftSpec = left.value(QStringLiteral("spec")).toObject();
        const QJsonObject leaving{{QStringLiteral("name"), QStringLiteral("ray-job-submitter")}, {QStringLiteral("image"), RayImage},
                                  {QStringLiteral("command"), QJsonArray{QStringLiteral("/bin/bash"), QStringLiteral("-c"),
                                                                         QStringLiteral("ray job submit --address http://$RAY_DASHBOARD_ADDRESS --no-wait "
                                                                                        "--submission-id $RAY_JOB_SUBMISSION_ID -- sleep 30")}}};
        leftSpec.insert(QStringLiteral("submitterPodTemplate"),
                        QJsonObject{{QStringLiteral("spec"), QJsonObject{{QStringLiteral("restartPolicy"), QStringLiteral("Never")},
                                                                         {QStringLiteral("containers"), QJsonArray{leaving}}}}});
        left.insert(QStringLiteral("spec"), leftSpec);
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(left).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("left")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Failed"), 20000);
        const QJsonObject gone = status(QStringLiteral("left"));
        QCOMPARE(gone.value(QStringLiteral("reason")).toString(), QStringLiteral("JobDeploymentStatusTransitionGracePeriodExceeded"));
        QCOMPARE(gone.value(QStringLiteral("jobStatus")).toString(), QStringLiteral("FAILED"));
        QVERIFY2(QRegularExpression(QStringLiteral("^The RayJob submitter finished at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d but the ray job did not reach terminal state within 1s$"))
                     .match(gone.value(QStringLiteral("message")).toString()).hasMatch(), qPrintable(gone.value(QStringLiteral("message")).toString()));

        QJsonObject lost = rayJob(QStringLiteral("lost"), QStringLiteral("sleep 30"), {}, 0, QJsonObject{{QStringLiteral("backoffLimit"), 2}});
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(lost).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("lost")).value(QStringLiteral("jobStatus")).toString(), QStringLiteral("RUNNING"), 15000);
        // The head stops answering (its record of itself, which the sandbox's dashboard is, goes).
        const QString cluster = status(QStringLiteral("lost")).value(QStringLiteral("rayClusterName")).toString();
        QVERIFY(QFile::remove(m_dir.filePath(QStringLiteral("conn.json.state/ray/heads/starforge/%1.json").arg(cluster))));
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("lost")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Failed"), 15000);
        const QJsonObject s = status(QStringLiteral("lost"));
        QCOMPARE(s.value(QStringLiteral("reason")).toString(), QStringLiteral("JobStatusCheckTimeoutExceeded"));
        QVERIFY2(QRegularExpression(QStringLiteral("^Job status checks have been failing since \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d; exceeded timeout of 1s$"))
                     .match(s.value(QStringLiteral("message")).toString()).hasMatch(), qPrintable(s.value(QStringLiteral("message")).toString()));
        // Not retried despite backoffLimit 2.
        QTest::qWait(500);
        QCOMPARE(status(QStringLiteral("lost")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Failed"));
        QCOMPARE(status(QStringLiteral("lost")).value(QStringLiteral("failed")).toInt(), 1);
    }

    // The other grace period (checkTransitionGracePeriodAndUpdateStatusIfNeeded): Ray's job
    // ended but the deployment cannot follow, as its submitter submitted and never exits. After
    // RAYJOB_DEPLOYMENT_STATUS_TRANSITION_GRACE_PERIOD_SECONDS (1 s here) from Ray's end time the
    // operator ends the RayJob itself: Complete after a success, Failed after a failure.
    void rayEndsButTheSubmitterDoesNot()
    {
        start([](Sandbox::SandboxOptions &o) { o.rayJobTransitionGraceSeconds = 1; });
        const auto lingering = [this](const QString &name, const QString &entrypoint) {
            QJsonObject job = rayJob(name, entrypoint, {});
            QJsonObject spec = job.value(QStringLiteral("spec")).toObject();
            const QJsonObject submitter{{QStringLiteral("name"), QStringLiteral("ray-job-submitter")}, {QStringLiteral("image"), RayImage},
                                        {QStringLiteral("command"), QJsonArray{QStringLiteral("/bin/bash"), QStringLiteral("-c"),
                                                                               QStringLiteral("ray job submit --address http://$RAY_DASHBOARD_ADDRESS --no-wait "
                                                                                              "--submission-id $RAY_JOB_SUBMISSION_ID -- %1 && sleep 600").arg(entrypoint)}}};
            spec.insert(QStringLiteral("submitterPodTemplate"),
                        QJsonObject{{QStringLiteral("spec"), QJsonObject{{QStringLiteral("restartPolicy"), QStringLiteral("Never")},
                                                                         {QStringLiteral("containers"), QJsonArray{submitter}}}}});
            job.insert(QStringLiteral("spec"), spec);
            QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(job).toJson()).status, 201);
        };
        lingering(QStringLiteral("lingers"), QStringLiteral("true"));
        lingering(QStringLiteral("lingersfailed"), QStringLiteral("false"));
        const QString message = QStringLiteral("JobDeploymentStatus does not transition to Complete or Failed within the grace period after JobStatus reaches a terminal state.");

        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("lingers")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Complete"), 30000);
        const QJsonObject done = status(QStringLiteral("lingers"));
        QCOMPARE(done.value(QStringLiteral("jobStatus")).toString(), QStringLiteral("SUCCEEDED"));
        QCOMPARE(done.value(QStringLiteral("reason")).toString(), QStringLiteral("JobDeploymentStatusTransitionGracePeriodExceeded"));
        QCOMPARE(done.value(QStringLiteral("message")).toString(), message);
        QCOMPARE(done.value(QStringLiteral("succeeded")).toInt(), 1);
        // Not before the grace period after Ray's end (both cut to whole seconds).
        const QDateTime rayEnd = QDateTime::fromString(done[QStringLiteral("rayJobInfo")][QStringLiteral("endTime")].toString(), Qt::ISODate);
        QVERIFY(rayEnd.isValid());
        QVERIFY2(QDateTime::fromString(done.value(QStringLiteral("endTime")).toString(), Qt::ISODate) >= rayEnd.addSecs(1),
                 qPrintable(done.value(QStringLiteral("endTime")).toString() + u' ' + rayEnd.toString(Qt::ISODate)));
        // The submitter was still running: it is not what ended the RayJob.
        const QJsonObject submitterJob = m_http->get(QStringLiteral("/apis/batch/v1/namespaces/starforge/jobs/lingers")).json();
        QCOMPARE(submitterJob[QStringLiteral("status")][QStringLiteral("conditions")].toArray().size(), 0);

        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("lingersfailed")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Failed"), 30000);
        const QJsonObject failed = status(QStringLiteral("lingersfailed"));
        QCOMPARE(failed.value(QStringLiteral("jobStatus")).toString(), QStringLiteral("FAILED"));
        QCOMPARE(failed.value(QStringLiteral("reason")).toString(), QStringLiteral("JobDeploymentStatusTransitionGracePeriodExceeded"));
        QCOMPARE(failed.value(QStringLiteral("message")).toString(), message);
        QCOMPARE(failed.value(QStringLiteral("failed")).toInt(), 1);
    }

    // spec.suspend: Suspending → Suspended with the cluster and submitter gone and the job's
    // Ray fields cleared; resumed, it starts again from New with a new startTime.
    void suspendAndResume()
    {
        QJsonObject job = rayJob(QStringLiteral("parked"), QStringLiteral("sleep 30"), {});
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(job).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("parked")).value(QStringLiteral("jobStatus")).toString(), QStringLiteral("RUNNING"), 15000);
        const QJsonObject before = status(QStringLiteral("parked"));
        const QString cluster = before.value(QStringLiteral("rayClusterName")).toString();
        const QString path = m_rayjobs + QStringLiteral("/parked");
        QCOMPARE(m_http->send("PATCH", path, R"({"spec":{"suspend":true}})", "application/merge-patch+json").status, 200);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("parked")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Suspended"), 10000);
        const QJsonObject suspended = status(QStringLiteral("parked"));
        QCOMPARE(suspended.value(QStringLiteral("jobStatus")).toString(), QString());
        QVERIFY(!suspended.contains(QStringLiteral("rayClusterName")) && !suspended.contains(QStringLiteral("jobId")));
        QCOMPARE(m_http->get(QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayclusters/") + cluster).status, 404);
        QCOMPARE(m_http->get(QStringLiteral("/apis/batch/v1/namespaces/starforge/jobs/parked")).status, 404);
        QStringList reasons;
        for (const QJsonValue &e : list(QStringLiteral("/api/v1/namespaces/starforge/events?fieldSelector=involvedObject.kind%3DRayJob,involvedObject.name%3Dparked"))) {
            reasons << e[QStringLiteral("reason")].toString();
        }
        QVERIFY2(reasons.contains(QStringLiteral("DeletedRayCluster")) && reasons.contains(QStringLiteral("DeletedRayJobSubmitter")), qPrintable(reasons.join(u',')));
        QTest::qWait(1100);   // startTime has whole seconds
        QCOMPARE(m_http->send("PATCH", path, R"({"spec":{"suspend":false}})", "application/merge-patch+json").status, 200);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("parked")).value(QStringLiteral("jobStatus")).toString(), QStringLiteral("RUNNING"), 15000);
        const QJsonObject resumed = status(QStringLiteral("parked"));
        QVERIFY(resumed.value(QStringLiteral("startTime")).toString() > before.value(QStringLiteral("startTime")).toString());
        QVERIFY(resumed.value(QStringLiteral("rayClusterName")).toString() != cluster);
        QVERIFY(resumed.value(QStringLiteral("jobId")).toString() != before.value(QStringLiteral("jobId")).toString());
        // Created suspended, a job never gets a cluster.
        QJsonObject queued = rayJob(QStringLiteral("queued"), QStringLiteral("true"), {}, 0, QJsonObject{{QStringLiteral("suspend"), true}});
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(queued).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("queued")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Suspended"), 10000);
        QTest::qWait(500);
        QCOMPARE(list(QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayclusters?labelSelector=ray.io%2Foriginated-from-cr-name%3Dqueued")).size(), 0);
    }

    void missingWorkingDirFailsVisibly()
    {
        const QString env = QStringLiteral("working_dir: file://%1/missing.zip\n").arg(m_dir.path());
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(rayJob(QStringLiteral("nodir"), QStringLiteral("python3 main.py"), env)).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("nodir")).value(QStringLiteral("jobStatus")).toString(), QStringLiteral("FAILED"), 30000);
        const QJsonArray submitters = list(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=job-name%3Dnodir"));
        QVERIFY(!submitters.isEmpty());
        const QString pod = submitters.first().toObject().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString();
        const QByteArray log = m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods/%1/log").arg(pod)).body;
        Q_UNUSED(log);
        // Ray's verdict is the job's message, not the driver's log (the driver never ran).
        const QString message = status(QStringLiteral("nodir")).value(QStringLiteral("message")).toString();
        QVERIFY2(message.startsWith(QStringLiteral("runtime_env setup failed: Local file")) && message.contains(QStringLiteral("missing.zip does not exist")), qPrintable(message));
    }

    void validationFailures()
    {
        const QString longName = QStringLiteral("a").repeated(48);
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(rayJob(longName, QStringLiteral("true"), {})).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(longName).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("ValidationFailed"), 10000);
        QCOMPARE(status(longName).value(QStringLiteral("reason")).toString(), QStringLiteral("ValidationFailed"));
        QCOMPARE(status(longName).value(QStringLiteral("message")).toString(),
                 QStringLiteral("The RayJob metadata is invalid: RayJob name should be no more than 47 characters"));

        QJsonObject ttl = rayJob(QStringLiteral("ttl"), QStringLiteral("true"), {});
        QJsonObject spec = ttl.value(QStringLiteral("spec")).toObject();
        spec.insert(QStringLiteral("shutdownAfterJobFinishes"), false);
        ttl.insert(QStringLiteral("spec"), spec);
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(ttl).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("ttl")).value(QStringLiteral("message")).toString(),
                                  QStringLiteral("The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false cannot have TTLSecondsAfterFinished"), 10000);
        QTRY_VERIFY_WITH_TIMEOUT(!list(QStringLiteral("/api/v1/namespaces/starforge/events?fieldSelector=involvedObject.name%3Dttl,reason%3DInvalidRayJobSpec,type%3DWarning")).isEmpty(), 10000);
        // The operator's validation event says whose: "ns/name: <error>".
        QCOMPARE(list(QStringLiteral("/api/v1/namespaces/starforge/events?fieldSelector=involvedObject.name%3Dttl,reason%3DInvalidRayJobSpec"))
                     .first()[QStringLiteral("message")].toString(),
                 QStringLiteral("starforge/ttl: The RayJob spec is invalid: a RayJob with shutdownAfterJobFinishes set to false cannot have TTLSecondsAfterFinished"));
        QJsonObject bounds = rayJob(QStringLiteral("bounds"), QStringLiteral("true"), {});
        QJsonObject bspec = bounds.value(QStringLiteral("spec")).toObject();
        QJsonObject cluster = bspec.value(QStringLiteral("rayClusterSpec")).toObject();
        QJsonArray groups = cluster.value(QStringLiteral("workerGroupSpecs")).toArray();
        QJsonObject group = groups.first().toObject();
        group.insert(QStringLiteral("minReplicas"), 3);
        group.insert(QStringLiteral("maxReplicas"), 1);
        groups.replace(0, group);
        cluster.insert(QStringLiteral("workerGroupSpecs"), groups);
        bspec.insert(QStringLiteral("rayClusterSpec"), cluster);
        bounds.insert(QStringLiteral("spec"), bspec);
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(bounds).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("bounds")).value(QStringLiteral("message")).toString(),
                                  QStringLiteral("The RayJob spec is invalid: worker group gpu has minReplicas 3 greater than maxReplicas 1"), 10000);
        // Nothing was created for any of them.
        QCOMPARE(list(QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayclusters")).size(), 0);
    }

    void activeDeadlineEndsARunningJob()
    {
        // Long enough that the job is seen RUNNING first on a loaded machine.
        QJsonObject job = rayJob(QStringLiteral("endless"), QStringLiteral("sleep 60"), {}, 0, QJsonObject{{QStringLiteral("activeDeadlineSeconds"), 8}});
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(job).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("endless")).value(QStringLiteral("jobStatus")).toString(), QStringLiteral("RUNNING"), 15000);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("endless")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Failed"), 20000);
        QCOMPARE(status(QStringLiteral("endless")).value(QStringLiteral("reason")).toString(), QStringLiteral("DeadlineExceeded"));
        // The operator's words with the start time as Go prints a metav1.Time.
        const QString message = status(QStringLiteral("endless")).value(QStringLiteral("message")).toString();
        const QString start = RayJobStart(status(QStringLiteral("endless")).value(QStringLiteral("startTime")).toString());
        QCOMPARE(message, QStringLiteral("The RayJob has passed the activeDeadlineSeconds. StartTime: %1. ActiveDeadlineSeconds: 8").arg(start));
    }

    // A RayJob with a finalizer of its own besides the operator's: DELETE marks it
    // (deletionTimestamp, deletionGracePeriodSeconds 0) and it stays visible; the operator stops
    // the Ray job at the head (the driver is killed, Ray's record says STOPPED) and removes only
    // its own finalizer while the other one still holds the RayJob, its cluster and its
    // submitter; no new finalizer can be added; a second DELETE changes nothing; removing the
    // last finalizer deletes it, and what it owns goes with it.
    void deleteWithFinalizersPassesThroughDeletionTimestamp()
    {
        // A driver this test can find among the processes by its words (the test's own pid in
        // them, so that no other run's driver is taken for it).
        const QStringList driver{QStringLiteral("sleep"), QStringLiteral("59.%1").arg(QCoreApplication::applicationPid())};
        QJsonObject job = rayJob(QStringLiteral("held"), driver.join(u' '), {});
        QJsonObject meta = job.value(QStringLiteral("metadata")).toObject();
        meta.insert(QStringLiteral("finalizers"), QJsonArray{QStringLiteral("example.com/hold")});
        job.insert(QStringLiteral("metadata"), meta);
        const QString path = m_rayjobs + QStringLiteral("/held");
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(job).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("held")).value(QStringLiteral("jobStatus")).toString(), QStringLiteral("RUNNING"), 20000);
        const auto metadata = [&] { return m_http->get(path).json().value(QStringLiteral("metadata")).toObject(); };
        QCOMPARE(metadata().value(QStringLiteral("finalizers")).toArray(),
                 (QJsonArray{QStringLiteral("example.com/hold"), QStringLiteral("ray.io/rayjob-finalizer")}));
        const QString cluster = status(QStringLiteral("held")).value(QStringLiteral("rayClusterName")).toString();
        const QString jobId = status(QStringLiteral("held")).value(QStringLiteral("jobId")).toString();
        QCOMPARE(m_http->get(QStringLiteral("/apis/batch/v1/namespaces/starforge/jobs/held")).status, 200);
        QTRY_COMPARE_WITH_TIMEOUT(processesWith(driver).size(), 1, 10000);
        // The head's record of the Ray job, which its dashboard answers with.
        const QString rayRecord = m_dir.filePath(QStringLiteral("conn.json.state/ray/heads/starforge/%1.jobs/%2.json").arg(cluster, jobId));
        const auto rayJobInfo = [&] { return QJsonDocument::fromJson(readAll(rayRecord)).object(); };
        QCOMPARE(rayJobInfo().value(QStringLiteral("status")).toString(), QStringLiteral("RUNNING"));

        const auto deleted = m_http->send("DELETE", path);
        QCOMPARE(deleted.status, 200);
        const QJsonObject marked = deleted.json().value(QStringLiteral("metadata")).toObject();
        QVERIFY(!marked.value(QStringLiteral("deletionTimestamp")).toString().isEmpty());
        QCOMPARE(marked.value(QStringLiteral("deletionGracePeriodSeconds")).toInt(-1), 0);
        // Still there, marked; the operator's finalizer goes once it stopped the Ray job.
        QTRY_COMPARE_WITH_TIMEOUT(metadata().value(QStringLiteral("finalizers")).toArray(), (QJsonArray{QStringLiteral("example.com/hold")}), 10000);
        QCOMPARE(metadata().value(QStringLiteral("deletionTimestamp")).toString(), marked.value(QStringLiteral("deletionTimestamp")).toString());
        // Stopped as Ray stops a job: its driver gone, STOPPED with Ray's message and an end time,
        // while example.com/hold still holds the RayJob.
        QTRY_COMPARE_WITH_TIMEOUT(rayJobInfo().value(QStringLiteral("status")).toString(), QStringLiteral("STOPPED"), 10000);
        QCOMPARE(rayJobInfo().value(QStringLiteral("message")).toString(), QStringLiteral("Job was intentionally stopped."));
        QVERIFY(rayJobInfo().value(QStringLiteral("end_time")).toInteger() >= rayJobInfo().value(QStringLiteral("start_time")).toInteger());
        QCOMPARE(processesWith(driver), QList<int>());
        QCOMPARE(list(m_rayjobs).size(), 1);
        QCOMPARE(m_http->get(QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayclusters/") + cluster).status, 200);
        // The submitter is not the operator's to delete: it stays, owned by the RayJob.
        QCOMPARE(m_http->get(QStringLiteral("/apis/batch/v1/namespaces/starforge/jobs/held")).status, 200);

        const auto added = m_http->send("PATCH", path, R"({"metadata":{"finalizers":["example.com/hold","example.com/late"]}})", "application/merge-patch+json");
        QCOMPARE(added.status, 422);
        QVERIFY2(added.message().contains(QStringLiteral("no new finalizers can be added if the object is being deleted")), qPrintable(added.message()));
        QCOMPARE(m_http->send("DELETE", path).status, 200);
        QCOMPARE(metadata().value(QStringLiteral("deletionTimestamp")).toString(), marked.value(QStringLiteral("deletionTimestamp")).toString());

        const auto released = m_http->send("PATCH", path, R"({"metadata":{"finalizers":null}})", "application/merge-patch+json");
        QCOMPARE(released.status, 200);
        QCOMPARE(m_http->get(path).status, 404);
        QTRY_COMPARE_WITH_TIMEOUT(m_http->get(QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayclusters/") + cluster).status, 404, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(m_http->get(QStringLiteral("/apis/batch/v1/namespaces/starforge/jobs/held")).status, 404, 10000);
    }

    // DELETE_RAYJOB_CR_AFTER_JOB_FINISHES=true: shutdownAfterJobFinishes deletes the RayJob
    // itself at the TTL, with its cluster and submitter.
    void operatorDeletesTheRayJobAtTheTtl()
    {
        cleanup();
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("h200:2x8,cpu:1x0");
        options.presentImages = {RayImage};
        options.deleteRayJobAfterJobFinishes = true;
        QString error;
        QVERIFY2(startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(rayJob(QStringLiteral("brief"), QStringLiteral("true"), {})).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("brief")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Complete"), 30000);
        QTRY_COMPARE_WITH_TIMEOUT(m_http->get(m_rayjobs + QStringLiteral("/brief")).status, 404, 10000);
        QTRY_VERIFY_WITH_TIMEOUT(list(QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayclusters")).isEmpty(), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(m_http->get(QStringLiteral("/apis/batch/v1/namespaces/starforge/jobs/brief")).status, 404, 10000);
    }

    // deletionRules: DeleteWorkers at once, then DeleteCluster a second later; the RayJob stays.
    // The operator's validation of the strategy, and its feature gate.
    void deletionRules()
    {
        const auto rule = [](const QString &policy, int ttl) {
            return QJsonObject{{QStringLiteral("policy"), policy},
                               {QStringLiteral("condition"), QJsonObject{{QStringLiteral("jobStatus"), QStringLiteral("SUCCEEDED")}, {QStringLiteral("ttlSeconds"), ttl}}}};
        };
        const QJsonObject rules{{QStringLiteral("deletionStrategy"), QJsonObject{{QStringLiteral("deletionRules"),
                                                                                  QJsonArray{rule(QStringLiteral("DeleteWorkers"), 0), rule(QStringLiteral("DeleteCluster"), 2)}}}},
                                {QStringLiteral("shutdownAfterJobFinishes"), false}, {QStringLiteral("ttlSecondsAfterFinished"), 0}};
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(rayJob(QStringLiteral("rules"), QStringLiteral("true"), {}, 0, rules)).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("rules")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Complete"), 30000);
        const QString cluster = status(QStringLiteral("rules")).value(QStringLiteral("rayClusterName")).toString();
        const QString clusterPath = QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayclusters/") + cluster;
        const auto workers = [&] { return list(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=ray.io%2Fnode-type%3Dworker")).size(); };
        QTRY_COMPARE_WITH_TIMEOUT(workers(), 0, 10000);
        QCOMPARE(m_http->get(clusterPath).status, 200);   // the head stays until DeleteCluster's TTL
        QVERIFY(m_http->get(clusterPath).json()[QStringLiteral("spec")][QStringLiteral("workerGroupSpecs")][0][QStringLiteral("suspend")].toBool());
        QTRY_COMPARE_WITH_TIMEOUT(m_http->get(clusterPath).status, 404, 10000);
        QCOMPARE(m_http->get(m_rayjobs + QStringLiteral("/rules")).status, 200);

        // deletionRules and shutdownAfterJobFinishes together: the operator's refusal.
        QJsonObject both = rules;
        both.insert(QStringLiteral("shutdownAfterJobFinishes"), true);
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(rayJob(QStringLiteral("both"), QStringLiteral("true"), {}, 0, both)).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("both")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("ValidationFailed"), 10000);
        QCOMPARE(status(QStringLiteral("both")).value(QStringLiteral("message")).toString(),
                 QStringLiteral("The RayJob spec is invalid: spec.shutdownAfterJobFinishes and spec.deletionStrategy.deletionRules are mutually exclusive"));

        // The feature gate off (an operator before 1.6, or turned off): any deletionStrategy is refused.
        cleanup();
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("cpu:1x0");
        options.presentImages = {RayImage};
        options.rayJobDeletionPolicy = false;
        QString error;
        QVERIFY2(startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(rayJob(QStringLiteral("gated"), QStringLiteral("true"), {}, 0, rules)).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("gated")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("ValidationFailed"), 10000);
        QCOMPARE(status(QStringLiteral("gated")).value(QStringLiteral("message")).toString(),
                 QStringLiteral("RayJobDeletionPolicy feature gate must be enabled to use DeletionStrategy"));
    }

    // The legacy deletionStrategy (onSuccess/onFailure, at ttlSecondsAfterFinished): a success
    // with onSuccess DeleteCluster and shutdownAfterJobFinishes false (whose TTL must be 0)
    // loses its cluster, the RayJob stays; with shutdownAfterJobFinishes and a TTL, onSuccess
    // DeleteWorkers takes the workers and leaves the head, where shutdownAfterJobFinishes alone
    // would delete the cluster. The operator's refusals: the legacy fields with deletionRules,
    // and shutdownAfterJobFinishes with a DeleteNone policy (v1.7's words, its typo included).
    void legacyDeletionPolicies()
    {
        const auto policy = [](const QString &name) { return QJsonObject{{QStringLiteral("policy"), name}}; };
        const auto legacy = [&](const QString &onSuccess, const QString &onFailure) {
            return QJsonObject{{QStringLiteral("onSuccess"), policy(onSuccess)}, {QStringLiteral("onFailure"), policy(onFailure)}};
        };
        const QJsonObject deleteCluster{{QStringLiteral("deletionStrategy"), legacy(QStringLiteral("DeleteCluster"), QStringLiteral("DeleteNone"))},
                                        {QStringLiteral("shutdownAfterJobFinishes"), false}, {QStringLiteral("ttlSecondsAfterFinished"), 0}};
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(rayJob(QStringLiteral("legacy"), QStringLiteral("true"), {}, 0, deleteCluster)).toJson()).status, 201);
        const QJsonObject deleteWorkers{{QStringLiteral("deletionStrategy"), legacy(QStringLiteral("DeleteWorkers"), QStringLiteral("DeleteCluster"))},
                                        {QStringLiteral("shutdownAfterJobFinishes"), true}, {QStringLiteral("ttlSecondsAfterFinished"), 1}};
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(rayJob(QStringLiteral("legacyworkers"), QStringLiteral("true"), {}, 0, deleteWorkers)).toJson()).status, 201);

        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("legacy")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Complete"), 30000);
        QCOMPARE(status(QStringLiteral("legacy")).value(QStringLiteral("jobStatus")).toString(), QStringLiteral("SUCCEEDED"));
        const QString cluster = status(QStringLiteral("legacy")).value(QStringLiteral("rayClusterName")).toString();
        QTRY_COMPARE_WITH_TIMEOUT(m_http->get(QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayclusters/") + cluster).status, 404, 10000);
        QCOMPARE(m_http->get(m_rayjobs + QStringLiteral("/legacy")).status, 200);
        QStringList reasons;
        for (const QJsonValue &e : list(QStringLiteral("/api/v1/namespaces/starforge/events?fieldSelector=involvedObject.kind%3DRayJob,involvedObject.name%3Dlegacy"))) {
            if (e[QStringLiteral("reason")].toString() == u"DeletedRayCluster") reasons << e[QStringLiteral("message")].toString();
        }
        QCOMPARE(reasons, QStringList{QStringLiteral("Deleted cluster starforge/%1").arg(cluster)});

        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("legacyworkers")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Complete"), 30000);
        const QString kept = status(QStringLiteral("legacyworkers")).value(QStringLiteral("rayClusterName")).toString();
        const QString keptPath = QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayclusters/") + kept;
        QTRY_VERIFY_WITH_TIMEOUT(m_http->get(keptPath).json()[QStringLiteral("spec")][QStringLiteral("workerGroupSpecs")][0][QStringLiteral("suspend")].toBool(), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(list(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=ray.io%2Fcluster%3D%1,ray.io%2Fnode-type%3Dworker").arg(kept)).size(), 0, 10000);
        QCOMPARE(list(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=ray.io%2Fcluster%3D%1,ray.io%2Fnode-type%3Dhead").arg(kept)).size(), 1);
        QCOMPARE(m_http->get(keptPath).status, 200);

        // The legacy fields and deletionRules together.
        QJsonObject both = legacy(QStringLiteral("DeleteCluster"), QStringLiteral("DeleteNone"));
        both.insert(QStringLiteral("deletionRules"),
                    QJsonArray{QJsonObject{{QStringLiteral("policy"), QStringLiteral("DeleteCluster")},
                                           {QStringLiteral("condition"), QJsonObject{{QStringLiteral("jobStatus"), QStringLiteral("SUCCEEDED")}}}}});
        const QJsonObject mixed{{QStringLiteral("deletionStrategy"), both}, {QStringLiteral("shutdownAfterJobFinishes"), false}, {QStringLiteral("ttlSecondsAfterFinished"), 0}};
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(rayJob(QStringLiteral("mixed"), QStringLiteral("true"), {}, 0, mixed)).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("mixed")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("ValidationFailed"), 10000);
        QCOMPARE(status(QStringLiteral("mixed")).value(QStringLiteral("reason")).toString(), QStringLiteral("ValidationFailed"));
        QCOMPARE(status(QStringLiteral("mixed")).value(QStringLiteral("message")).toString(),
                 QStringLiteral("The RayJob spec is invalid: Cannot use both legacy onSuccess/onFailure fields and deletionRules simultaneously"));

        // shutdownAfterJobFinishes with a DeleteNone policy.
        const QJsonObject none{{QStringLiteral("deletionStrategy"), legacy(QStringLiteral("DeleteCluster"), QStringLiteral("DeleteNone"))},
                               {QStringLiteral("shutdownAfterJobFinishes"), true}, {QStringLiteral("ttlSecondsAfterFinished"), 1}};
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(rayJob(QStringLiteral("keepnone"), QStringLiteral("true"), {}, 0, none)).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("keepnone")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("ValidationFailed"), 10000);
        QCOMPARE(status(QStringLiteral("keepnone")).value(QStringLiteral("message")).toString(),
                 QStringLiteral("The RayJob spec is invalid: shutdownAfterJobFinshes is set to 'true' while deletion policy is 'DeleteNone'"));
    }

    // Pod names as KubeRay's utils.PodName makes them: the cluster (or cluster-group) name cut
    // to 50 characters first, then "-head-" / "-worker-" and 5 generated characters.
    void longNamesKeepTheirNodeType()
    {
        const QString name = QStringLiteral("n").repeated(47);   // the longest RayJob name; its cluster has 53
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(rayJob(name, QStringLiteral("sleep 30"), {})).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(list(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=ray.io%2Fnode-type")).size(), 3, 10000);
        const QString cluster = status(name).value(QStringLiteral("rayClusterName")).toString();
        QCOMPARE(cluster.size(), 53);
        const QRegularExpression head(QStringLiteral("^%1-head-[a-z0-9]{5}$").arg(cluster.left(50)));
        const QRegularExpression worker(QStringLiteral("^%1-worker-[a-z0-9]{5}$").arg(QString(cluster + QStringLiteral("-gpu")).left(50)));
        int heads = 0, workers = 0;
        for (const QJsonValue &pod : list(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=ray.io%2Fnode-type"))) {
            const QString podName = pod[QStringLiteral("metadata")][QStringLiteral("name")].toString();
            heads += head.match(podName).hasMatch() ? 1 : 0;
            workers += worker.match(podName).hasMatch() ? 1 : 0;
        }
        QCOMPARE(heads, 1);
        QCOMPARE(workers, 2);
    }

    // ValidateRayClusterMetadata: a RayCluster named with more than 53 characters (its pods and
    // Services are named after it) gets a Warning event and nothing else.
    void longClusterNamesAreRefused()
    {
        const QString name = QStringLiteral("c").repeated(54);
        const QJsonObject cluster{{QStringLiteral("apiVersion"), QStringLiteral("ray.io/v1")}, {QStringLiteral("kind"), QStringLiteral("RayCluster")},
                                  {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}}},
                                  {QStringLiteral("spec"), rayJob(QStringLiteral("unused"), QStringLiteral("true"), {})[QStringLiteral("spec")][QStringLiteral("rayClusterSpec")]}};
        QCOMPARE(m_http->send("POST", QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayclusters"), QJsonDocument(cluster).toJson()).status, 201);
        const QString events = QStringLiteral("/api/v1/namespaces/starforge/events?fieldSelector=involvedObject.name%3D%1,reason%3DInvalidRayClusterMetadata").arg(name);
        QTRY_COMPARE_WITH_TIMEOUT(list(events).size(), 1, 10000);
        const QJsonObject refused = list(events).first().toObject();
        QCOMPARE(refused.value(QStringLiteral("type")).toString(), QStringLiteral("Warning"));
        QCOMPARE(refused.value(QStringLiteral("message")).toString(),
                 QStringLiteral("The RayCluster metadata is invalid starforge/%1: RayCluster name should be no more than 53 characters").arg(name));
        // The reconcile that recorded it created nothing.
        QCOMPARE(list(QStringLiteral("/api/v1/namespaces/starforge/pods?labelSelector=ray.io%2Fcluster%3D") + name).size(), 0);
        QCOMPARE(m_http->get(QStringLiteral("/api/v1/namespaces/starforge/services/%1-head-svc").arg(name)).status, 404);
    }

    void preRunningDeadlineWithAStuckWorker()
    {
        // Workers ask for 16 GPUs: no node has them, so the cluster never becomes ready.
        QJsonObject job = rayJob(QStringLiteral("stuck"), QStringLiteral("true"), {}, 16, QJsonObject{{QStringLiteral("preRunningDeadlineSeconds"), 2}});
        QCOMPARE(m_http->send("POST", m_rayjobs, QJsonDocument(job).toJson()).status, 201);
        QTRY_VERIFY_WITH_TIMEOUT(!list(QStringLiteral("/api/v1/namespaces/starforge/events?fieldSelector=reason%3DFailedScheduling")).isEmpty(), 10000);
        const QJsonObject failed = list(QStringLiteral("/api/v1/namespaces/starforge/events?fieldSelector=reason%3DFailedScheduling")).first().toObject();
        QCOMPARE(failed.value(QStringLiteral("message")).toString(),
                 QStringLiteral("0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.."));
        QCOMPARE(status(QStringLiteral("stuck")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Initializing"));
        QTRY_COMPARE_WITH_TIMEOUT(status(QStringLiteral("stuck")).value(QStringLiteral("jobDeploymentStatus")).toString(), QStringLiteral("Failed"), 10000);
        QCOMPARE(status(QStringLiteral("stuck")).value(QStringLiteral("reason")).toString(), QStringLiteral("PreRunningDeadlineExceeded"));
        QCOMPARE(status(QStringLiteral("stuck")).value(QStringLiteral("message")).toString(),
                 QStringLiteral("The RayJob has passed the preRunningDeadlineSeconds. StartTime: %1. PreRunningDeadlineSeconds: 2")
                     .arg(RayJobStart(status(QStringLiteral("stuck")).value(QStringLiteral("startTime")).toString())));
    }
};

QTEST_GUILESS_MAIN(TestRayJob)
#include "tst_rayjob.moc"
