// The capacity heatmap's models under QAbstractItemModelTester, fed by a CapacityTracker on real
// informers against the sandbox: nodes created, relabelled, cordoned and deleted, pods bound to
// a node, pods waiting for a series (pending demand) and for a series with no node at all. Each
// case checks what a view sees: rows inserted, changed and removed per event, never a reset,
// and the numbers the capacity engine computed.

#include "core/cluster/capacity.h"
#include "core/kube/informer.h"
#include "core/kube/kubeclient.h"
#include "models/capacitynodesmodel.h"
#include "models/capacityseriesmodel.h"
#include "sandbox/sandbox.h"
#include "support/sandboxfixture.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using Models::CapacityNodesModel;
using Models::CapacitySeriesModel;

class TestCapacityModels : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<Testing::SandboxHttp> m_http;
    std::unique_ptr<Kube::KubeClient> m_kube;
    std::unique_ptr<Kube::Informer> m_nodes;
    std::unique_ptr<Kube::Informer> m_pods;
    std::unique_ptr<Cluster::CapacityTracker> m_tracker;
    const QString m_image = QStringLiteral("registry.example/present:1");

    void makePod(const QString &name, const QString &series, int gpus, const QString &script = QStringLiteral("sleep 60"))
    {
        const QJsonObject body{
            {QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("Pod")},
            {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}}},
            {QStringLiteral("spec"), QJsonObject{{QStringLiteral("restartPolicy"), QStringLiteral("Never")},
                                                 {QStringLiteral("nodeSelector"), QJsonObject{{QStringLiteral("starforge/gpu-series"), series}}},
                                                 {QStringLiteral("containers"), QJsonArray{QJsonObject{
                                                     {QStringLiteral("name"), QStringLiteral("main")}, {QStringLiteral("image"), m_image},
                                                     {QStringLiteral("command"), QJsonArray{QStringLiteral("sh"), QStringLiteral("-c"), script}},
                                                     {QStringLiteral("resources"), QJsonObject{{QStringLiteral("limits"), QJsonObject{{QStringLiteral("nvidia.com/gpu"), QString::number(gpus)}}}}}}}}}}};
        QCOMPARE(m_http->send("POST", QStringLiteral("/api/v1/namespaces/starforge/pods"), QJsonDocument(body).toJson()).status, 201);
    }
    void deletePod(const QString &name)
    {
        QCOMPARE(m_http->send("DELETE", QStringLiteral("/api/v1/namespaces/starforge/pods/") + name).status, 200);
    }
    void patchNode(const QString &name, const QByteArray &patch)
    {
        QCOMPARE(m_http->send("PATCH", QStringLiteral("/api/v1/nodes/") + name, patch, "application/merge-patch+json").status, 200);
    }
    static QString cell(const QAbstractItemModel &model, int row, int column) { return model.index(row, column).data().toString(); }

private Q_SLOTS:
    void initTestCase()
    {
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("h200:2x8,h100:1x8,cpu:1x0");
        options.presentImages = {m_image};
        QString error;
        QVERIFY2(Testing::startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
        Kube::ClientConfig config;
        config.server = m_sandbox->apiServerUrl();
        config.token = m_sandbox->token();
        config.tls.caCertificates = QSslCertificate::fromData(m_sandbox->caCertificatePem(), QSsl::Pem);
        config.ns = QStringLiteral("starforge");
        m_kube = std::make_unique<Kube::KubeClient>(config);
        m_nodes = std::make_unique<Kube::Informer>(m_kube.get(), Kube::ResourceKind::nodes());
        m_pods = std::make_unique<Kube::Informer>(m_kube.get(), Kube::ResourceKind::pods());
        m_tracker = std::make_unique<Cluster::CapacityTracker>();
        m_tracker->attach(m_nodes.get(), m_pods.get());
        m_nodes->start();
        m_pods->start();
        QTRY_VERIFY_WITH_TIMEOUT(m_tracker->isSynced(), 10000);
    }

    void cleanupTestCase()
    {
        m_tracker.reset();
        m_pods.reset();
        m_nodes.reset();
        m_kube.reset();
        m_http.reset();
        m_sandbox.reset();
    }

    // One row per labelled node, by series then name; a pod bound to a node changes its row.
    void nodesFollowPodsAndNodes()
    {
        CapacityNodesModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        model.setTracker(m_tracker.get());
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.seriesAt(0), QStringLiteral("h100"));
        QCOMPARE(model.seriesAt(1), QStringLiteral("h200"));
        QVERIFY(model.nodeAt(1) < model.nodeAt(2));
        QCOMPARE(model.headerData(CapacityNodesModel::UsedColumn, Qt::Horizontal).toString(), QStringLiteral("GPUs used"));
        const QString h100 = model.nodeAt(0);
        QCOMPARE(model.index(0, 0).data(CapacityNodesModel::LoadRole).toDouble(), 0.0);

        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        makePod(QStringLiteral("six"), QStringLiteral("h100"), 6);
        QTRY_COMPARE_WITH_TIMEOUT(model.index(0, 0).data(CapacityNodesModel::UsedRole).toLongLong(), 6, 10000);
        QVERIFY(!changed.isEmpty());
        QCOMPARE(changed.last().at(0).toModelIndex().row(), 0);
        QCOMPARE(model.index(0, 0).data(CapacityNodesModel::LoadRole).toDouble(), 0.75);
        QCOMPARE(model.index(0, 0).data(CapacityNodesModel::FreeRole).toInt(), 2);
        QCOMPARE(model.index(0, 0).data(CapacityNodesModel::PodListRole).toStringList(), QStringList{QStringLiteral("starforge/six (6 GPUs)")});
        const QString tip = model.index(0, 0).data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(h100) && tip.contains(QStringLiteral("6 of 8 GPUs in use, 2 free")) && tip.contains(QStringLiteral("starforge/six: 6 GPUs")), qPrintable(tip));
        QCOMPARE(inserted.size(), 0);
        QCOMPARE(removed.size(), 0);

        // Cordoned: blocked, the reason in the status column and the tooltip.
        patchNode(h100, R"({"spec":{"unschedulable":true}})");
        QTRY_VERIFY_WITH_TIMEOUT(model.index(0, 0).data(CapacityNodesModel::BlockedRole).toBool(), 10000);
        QCOMPARE(cell(model, 0, CapacityNodesModel::StatusColumn), QStringLiteral("cordoned"));
        QVERIFY(model.index(0, 0).data(Qt::ToolTipRole).toString().contains(QStringLiteral("Blocked: cordoned")));
        QCOMPARE(model.index(0, 0).data(CapacityNodesModel::FreeRole).toInt(), 0);
        patchNode(h100, R"({"spec":{"unschedulable":null}})");
        QTRY_VERIFY_WITH_TIMEOUT(!model.index(0, 0).data(CapacityNodesModel::BlockedRole).toBool(), 10000);

        // A node joins the cluster: one row inserted where its series and name put it.
        const QJsonObject node{{QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("Node")},
                               {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), QStringLiteral("aaa-new")},
                                                                        {QStringLiteral("labels"), QJsonObject{{QStringLiteral("starforge/gpu-series"), QStringLiteral("h200")}}}}},
                               {QStringLiteral("status"), QJsonObject{{QStringLiteral("capacity"), QJsonObject{{QStringLiteral("nvidia.com/gpu"), QStringLiteral("4")}}},
                                                                      {QStringLiteral("allocatable"), QJsonObject{{QStringLiteral("nvidia.com/gpu"), QStringLiteral("4")}}},
                                                                      {QStringLiteral("conditions"), QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("Ready")}, {QStringLiteral("status"), QStringLiteral("True")}}}}}}};
        const auto created = m_http->send("POST", QStringLiteral("/api/v1/nodes"), QJsonDocument(node).toJson());
        QVERIFY2(created.status == 201, created.body.constData());
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 4, 10000);
        QCOMPARE(inserted.size(), 1);
        QCOMPARE(model.rowOf(QStringLiteral("aaa-new")), 1);   // first of h200
        QCOMPARE(model.index(1, 0).data(CapacityNodesModel::AllocatableRole).toInt(), 4);

        // Relabelled into h100: removed from h200's run, inserted into h100's.
        patchNode(QStringLiteral("aaa-new"), R"({"metadata":{"labels":{"starforge/gpu-series":"h100"}}})");
        QTRY_COMPARE_WITH_TIMEOUT(model.seriesAt(model.rowOf(QStringLiteral("aaa-new"))), QStringLiteral("h100"), 10000);
        QCOMPARE(model.rowOf(QStringLiteral("aaa-new")), 0);
        QCOMPARE(removed.size(), 1);
        QCOMPARE(inserted.size(), 2);

        // Deleted: its row goes.
        QCOMPARE(m_http->send("DELETE", QStringLiteral("/api/v1/nodes/aaa-new")).status, 200);
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 3, 10000);
        QCOMPARE(model.rowOf(QStringLiteral("aaa-new")), -1);
        QCOMPARE(removed.size(), 2);

        deletePod(QStringLiteral("six"));
        QTRY_COMPARE_WITH_TIMEOUT(model.index(0, 0).data(CapacityNodesModel::UsedRole).toLongLong(), 0, 10000);
        QCOMPARE(resets.size(), 0);

        // Letting go of the tracker removes the rows (no reset either).
        model.setTracker(nullptr);
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(resets.size(), 0);
    }

    // Per series: the engine's totals, pending demand, the largest job that fits now; a series
    // that only pods wait for comes and goes with them.
    void seriesFollowDemandAndUse()
    {
        CapacitySeriesModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        model.setTracker(m_tracker.get());
        QCOMPARE(model.seriesNames(), (QStringList{QStringLiteral("h100"), QStringLiteral("h200")}));
        const int h200 = model.rowOf(QStringLiteral("h200"));
        QCOMPARE(cell(model, h200, CapacitySeriesModel::NodesColumn), QStringLiteral("2"));
        QCOMPARE(cell(model, h200, CapacitySeriesModel::CapacityColumn), QStringLiteral("16"));
        QCOMPARE(cell(model, h200, CapacitySeriesModel::FitsNowColumn), QStringLiteral("2 × 8"));

        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        makePod(QStringLiteral("three"), QStringLiteral("h200"), 3);
        // 3 used on one node: free 5 and 8; largest job now 1 x 8 = 8 against 2 x 5 = 10.
        QTRY_COMPARE_WITH_TIMEOUT(cell(model, h200, CapacitySeriesModel::UsedColumn), QStringLiteral("3"), 10000);
        QCOMPARE(cell(model, h200, CapacitySeriesModel::FreeColumn), QStringLiteral("13"));
        QCOMPARE(cell(model, h200, CapacitySeriesModel::LargestFreeColumn), QStringLiteral("8"));
        QCOMPARE(cell(model, h200, CapacitySeriesModel::FitsNowColumn), QStringLiteral("2 × 5"));
        QVERIFY(!changed.isEmpty());

        // Too big for any h200 node: it waits, and is the series' pending demand.
        makePod(QStringLiteral("huge"), QStringLiteral("h200"), 12);
        QTRY_COMPARE_WITH_TIMEOUT(cell(model, h200, CapacitySeriesModel::PendingColumn), QStringLiteral("12 (1 pod)"), 10000);
        QCOMPARE(model.index(h200, CapacitySeriesModel::PendingColumn).data(CapacitySeriesModel::ValueRole).toLongLong(), 12);

        // A series with no node: a row while a pod waits for it.
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        makePod(QStringLiteral("b200-wait"), QStringLiteral("b200"), 8);
        QTRY_COMPARE_WITH_TIMEOUT(model.rowOf(QStringLiteral("b200")), 0, 10000);
        QCOMPARE(inserted.size(), 1);
        QCOMPARE(cell(model, 0, CapacitySeriesModel::NodesColumn), QStringLiteral("0"));
        QCOMPARE(cell(model, 0, CapacitySeriesModel::PendingColumn), QStringLiteral("8 (1 pod)"));
        QCOMPARE(cell(model, 0, CapacitySeriesModel::FitsNowColumn), QStringLiteral("none"));
        deletePod(QStringLiteral("b200-wait"));
        QTRY_COMPARE_WITH_TIMEOUT(model.rowOf(QStringLiteral("b200")), -1, 10000);
        QCOMPARE(removed.size(), 1);

        // Cordoning an h200 node moves its unused GPUs to blocked.
        const QString node = m_tracker->model().nodesOf(QStringLiteral("h200")).constLast();
        patchNode(node, R"({"spec":{"unschedulable":true}})");
        const int row = model.rowOf(QStringLiteral("h200"));
        QTRY_COMPARE_WITH_TIMEOUT(cell(model, row, CapacitySeriesModel::NodesColumn), QStringLiteral("2 (1 blocked)"), 10000);
        const Cluster::SeriesSummary s = m_tracker->model().series(QStringLiteral("h200"));
        QCOMPARE(cell(model, row, CapacitySeriesModel::BlockedColumn), QString::number(s.blocked));
        QCOMPARE(cell(model, row, CapacitySeriesModel::FreeColumn), QString::number(s.free));
        patchNode(node, R"({"spec":{"unschedulable":null}})");
        deletePod(QStringLiteral("huge"));
        deletePod(QStringLiteral("three"));
        QTRY_COMPARE_WITH_TIMEOUT(cell(model, row, CapacitySeriesModel::FreeColumn), QStringLiteral("16"), 10000);
        QCOMPARE(cell(model, row, CapacitySeriesModel::PendingColumn), QStringLiteral("0"));
        QCOMPARE(resets.size(), 0);
    }
};

QTEST_GUILESS_MAIN(TestCapacityModels)
#include "tst_capacitymodels.moc"
