// The job detail's pods table: rows applied as differences (insert, update in place, remove)
// under QAbstractItemModelTester, in creation order, and the phase text that says what holds a
// pod (unschedulable, an image that will not pull, an exit code).

#include "models/jobpodsmodel.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTest>

using Starforge::Models::JobPodsModel;

namespace {

QJsonObject pod(const QString &name, const QString &created, const QString &phase, const QJsonObject &status = {}, const QJsonObject &labels = {})
{
    QJsonObject st = status;
    st.insert(QStringLiteral("phase"), phase);
    return QJsonObject{{QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name},
                                                                {QStringLiteral("namespace"), QStringLiteral("ml")},
                                                                {QStringLiteral("creationTimestamp"), created},
                                                                {QStringLiteral("labels"), labels}}},
                       {QStringLiteral("spec"), QJsonObject{{QStringLiteral("nodeName"), status.value(QStringLiteral("node"))}}},
                       {QStringLiteral("status"), st}};
}

QJsonObject containerStatus(const QString &state, const QString &reason, int restarts, int exitCode = 0, const QString &message = {})
{
    QJsonObject detail{{QStringLiteral("reason"), reason}};
    if (!message.isEmpty()) detail.insert(QStringLiteral("message"), message);
    if (state == u"terminated") detail.insert(QStringLiteral("exitCode"), exitCode);
    return QJsonObject{{QStringLiteral("containerStatuses"),
                        QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("ray-head")},
                                               {QStringLiteral("restartCount"), restarts},
                                               {QStringLiteral("state"), QJsonObject{{state, detail}}}}}}};
}

QJsonObject headLabels()
{
    return QJsonObject{{QStringLiteral("ray.io/node-type"), QStringLiteral("head")}};
}

QJsonObject withNode(QJsonObject p, const QString &node)
{
    QJsonObject spec = p.value(QStringLiteral("spec")).toObject();
    spec.insert(QStringLiteral("nodeName"), node);
    p.insert(QStringLiteral("spec"), spec);
    return p;
}

} // namespace

class TestJobPodsModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void phaseSaysWhatHoldsAPod()
    {
        QJsonObject unschedulable = pod(QStringLiteral("a"), QStringLiteral("2026-12-04T10:00:00Z"), QStringLiteral("Pending"));
        QJsonObject status = unschedulable.value(QStringLiteral("status")).toObject();
        status.insert(QStringLiteral("conditions"), QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("PodScheduled")},
                                                                           {QStringLiteral("status"), QStringLiteral("False")},
                                                                           {QStringLiteral("reason"), QStringLiteral("Unschedulable")},
                                                                           {QStringLiteral("message"), QStringLiteral("0/4 nodes are available")}}});
        unschedulable.insert(QStringLiteral("status"), status);
        QCOMPARE(JobPodsModel::phaseText(unschedulable), QStringLiteral("Pending: Unschedulable"));
        QCOMPARE(JobPodsModel::phaseText(pod(QStringLiteral("b"), {}, QStringLiteral("Pending"), containerStatus(QStringLiteral("waiting"), QStringLiteral("ImagePullBackOff"), 0))),
                 QStringLiteral("Waiting: ImagePullBackOff"));
        QCOMPARE(JobPodsModel::phaseText(pod(QStringLiteral("c"), {}, QStringLiteral("Failed"), containerStatus(QStringLiteral("terminated"), QStringLiteral("Error"), 0, 3))),
                 QStringLiteral("Failed: exit code 3"));
        QCOMPARE(JobPodsModel::phaseText(pod(QStringLiteral("d"), {}, QStringLiteral("Failed"), containerStatus(QStringLiteral("terminated"), QStringLiteral("OOMKilled"), 0, 137))),
                 QStringLiteral("Failed: OOMKilled, exit code 137"));
        QCOMPARE(JobPodsModel::phaseText(pod(QStringLiteral("e"), {}, QStringLiteral("Running"), containerStatus(QStringLiteral("running"), {}, 2))), QStringLiteral("Running"));
        QCOMPARE(JobPodsModel::phaseText(pod(QStringLiteral("f"), {}, QStringLiteral("Succeeded"), containerStatus(QStringLiteral("terminated"), QStringLiteral("Completed"), 0, 0))),
                 QStringLiteral("Succeeded"));
    }

    void listsAreAppliedAsDifferences()
    {
        JobPodsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);

        const QJsonObject head = pod(QStringLiteral("job-head-x"), QStringLiteral("2026-12-04T10:00:00Z"), QStringLiteral("Pending"), {}, headLabels());
        const QJsonObject worker = pod(QStringLiteral("job-train-worker-a"), QStringLiteral("2026-12-04T10:00:01Z"), QStringLiteral("Pending"), {},
                                       QJsonObject{{QStringLiteral("ray.io/node-type"), QStringLiteral("worker")}, {QStringLiteral("ray.io/group"), QStringLiteral("train")}});
        // Given newest first: shown in creation order.
        model.setPods({worker, head});
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.index(0, JobPodsModel::NameColumn).data().toString(), QStringLiteral("job-head-x"));
        QCOMPARE(model.index(0, JobPodsModel::RoleColumn).data().toString(), QStringLiteral("head"));
        QCOMPARE(model.index(1, JobPodsModel::RoleColumn).data().toString(), QStringLiteral("worker train"));
        QCOMPARE(model.index(0, JobPodsModel::NodeColumn).data().toString(), QStringLiteral("not scheduled"));
        QCOMPARE(model.headerData(JobPodsModel::RestartsColumn, Qt::Horizontal).toString(), QStringLiteral("Restarts"));

        // The head is scheduled and restarts; the worker goes; the submitter comes.
        inserted.clear();
        QJsonObject running = withNode(pod(QStringLiteral("job-head-x"), QStringLiteral("2026-12-04T10:00:00Z"), QStringLiteral("Running"),
                                           containerStatus(QStringLiteral("running"), {}, 2), headLabels()),
                                       QStringLiteral("gpu-h100-0"));
        const QJsonObject submitter = pod(QStringLiteral("job-abcde"), QStringLiteral("2026-12-04T10:00:05Z"), QStringLiteral("Running"), {},
                                          QJsonObject{{QStringLiteral("batch.kubernetes.io/job-name"), QStringLiteral("job")}, {QStringLiteral("job-name"), QStringLiteral("job")}});
        model.setPods({running, submitter});
        QCOMPARE(reset.count(), 0);
        QCOMPARE(removed.count(), 1);
        QCOMPARE(inserted.count(), 1);
        QVERIFY(!changed.isEmpty());
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.index(0, JobPodsModel::NodeColumn).data().toString(), QStringLiteral("gpu-h100-0"));
        QCOMPARE(model.index(0, JobPodsModel::RestartsColumn).data().toInt(), 2);
        QCOMPARE(model.index(0, JobPodsModel::PhaseColumn).data().toString(), QStringLiteral("Running"));
        QCOMPARE(model.index(1, JobPodsModel::NameColumn).data().toString(), QStringLiteral("job-abcde"));
        QCOMPARE(model.index(1, JobPodsModel::RoleColumn).data().toString(), QStringLiteral("submitter"));

        // The same list again changes nothing.
        changed.clear();
        model.setPods({submitter, running});
        QVERIFY(changed.isEmpty());

        model.clear();
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(reset.count(), 0);
    }
};

QTEST_GUILESS_MAIN(TestJobPodsModel)
#include "tst_jobpodsmodel.moc"
