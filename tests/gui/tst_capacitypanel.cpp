// The GPU Capacity dock driven as a person drives it: hovering a cell for its tooltip, clicking
// a cell for its pods, choosing a series from the filter with the keyboard, zooming with the
// + and - keys, Ctrl+wheel and the buttons, moving between cells with the arrow keys and
// listing pods with Enter; the layout and hit testing at 1, 50 and 5,000 nodes; the cells as
// assistive technology sees them; and a cell that changes colour when a pod is created on its
// node in the sandbox.

#include "core/cluster/capacity.h"
#include "core/kube/informer.h"
#include "core/kube/kubeclient.h"
#include "gui/capacity/capacityheatmapview.h"
#include "gui/capacity/capacitypanel.h"
#include "gui/capacity/heatmapcolors.h"
#include "models/capacitynodesmodel.h"
#include "models/capacityseriesmodel.h"
#include "sandbox/sandbox.h"
#include "support/sandboxfixture.h"

#include <QAccessible>
#include <QApplication>
#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QListWidget>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QToolTip>

using namespace Starforge;
using Gui::CapacityHeatmapView;
using Gui::CapacityPanel;
using Models::CapacityNodesModel;

namespace {

QJsonObject nodeJson(const QString &name, const QString &series, int gpus, bool cordoned = false)
{
    return QJsonObject{
        {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("labels"), QJsonObject{{QStringLiteral("starforge/gpu-series"), series}}}}},
        {QStringLiteral("spec"), QJsonObject{{QStringLiteral("unschedulable"), cordoned}}},
        {QStringLiteral("status"), QJsonObject{{QStringLiteral("capacity"), QJsonObject{{QStringLiteral("nvidia.com/gpu"), QString::number(gpus)}}},
                                               {QStringLiteral("allocatable"), QJsonObject{{QStringLiteral("nvidia.com/gpu"), QString::number(gpus)}}},
                                               {QStringLiteral("conditions"), QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("Ready")}, {QStringLiteral("status"), QStringLiteral("True")}}}}}}};
}

QJsonObject podJson(const QString &name, const QString &node, int gpus)
{
    return QJsonObject{
        {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("namespace"), QStringLiteral("ml")}}},
        {QStringLiteral("spec"), QJsonObject{{QStringLiteral("nodeName"), node},
                                             {QStringLiteral("containers"), QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("main")},
                                                 {QStringLiteral("resources"), QJsonObject{{QStringLiteral("limits"), QJsonObject{{QStringLiteral("nvidia.com/gpu"), QString::number(gpus)}}}}}}}}}},
        {QStringLiteral("status"), QJsonObject{{QStringLiteral("phase"), QStringLiteral("Running")}}}};
}

QString nodeName(const QString &series, int i)
{
    return QStringLiteral("%1-%2").arg(series).arg(i, 4, 10, QLatin1Char('0'));
}

// A fleet of n nodes: 60 % h200, 40 % h100 (i % 5 < 3: h200); every 7th node cordoned; every 3rd node runs a pod
// of 4 GPUs, every 5th one of 8 (the two together: 12 on 8, overcommitted).
void fill(Cluster::CapacityTracker &tracker, int n)
{
    for (int i = 0; i < n; ++i) {
        const QString series = i % 5 < 3 ? QStringLiteral("h200") : QStringLiteral("h100");
        const QString name = nodeName(series, i);
        tracker.nodeAdded(nodeJson(name, series, 8, i % 7 == 6));
        if (i % 3 == 0) tracker.podAdded(podJson(name + QStringLiteral("-a"), name, 4));
        if (i % 5 == 0) tracker.podAdded(podJson(name + QStringLiteral("-b"), name, 8));
    }
}

QPoint centre(CapacityHeatmapView *view, int row)
{
    return view->visualRect(view->model()->index(row, 0)).center();
}

} // namespace

class TestCapacityPanel : public QObject
{
    Q_OBJECT

    std::unique_ptr<CapacityPanel> m_panel;
    std::unique_ptr<Cluster::CapacityTracker> m_tracker;

    CapacityHeatmapView *view() const { return m_panel->view(); }

    void show(int nodes, QSize size = QSize(700, 800))
    {
        m_panel.reset();
        m_tracker = std::make_unique<Cluster::CapacityTracker>();
        fill(*m_tracker, nodes);
        m_panel = std::make_unique<CapacityPanel>();
        m_panel->resize(size);
        m_panel->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_panel.get()));
        m_panel->setTracker(m_tracker.get());
        QCoreApplication::processEvents();
    }

private Q_SLOTS:
    void cleanup()
    {
        m_panel.reset();
        m_tracker.reset();
    }

    void messageWithoutATracker()
    {
        CapacityPanel panel;
        QVERIFY(!panel.isShowingHeatmap());
        QVERIFY(panel.messageText().contains(QStringLiteral("connected to a cluster")));
        panel.setSession(nullptr);
        QVERIFY(!panel.isShowingHeatmap());
        // The dock opens 360 px wide beside the jobs: the panel must not ask for more.
        panel.setTracker(nullptr);
        QVERIFY2(panel.minimumSizeHint().width() <= 360, qPrintable(QString::number(panel.minimumSizeHint().width())));
        Cluster::CapacityTracker tracker;
        panel.setTracker(&tracker);
        QVERIFY(panel.isShowingHeatmap());
        QVERIFY2(panel.minimumSizeHint().width() <= 360, qPrintable(QString::number(panel.minimumSizeHint().width())));
    }

    // Every cell is hit where it is drawn, at 1, 50 and 5,000 nodes; bands wrap to the width.
    void layoutAndHitTesting_data()
    {
        QTest::addColumn<int>("nodes");
        QTest::newRow("1") << 1;
        QTest::newRow("50") << 50;
        QTest::newRow("5000") << 5000;
    }
    void layoutAndHitTesting()
    {
        QFETCH(int, nodes);
        show(nodes);
        CapacityHeatmapView *v = view();
        QCOMPARE(v->model()->rowCount(), nodes);
        QCOMPARE(v->shownCellCount(), nodes);
        QCOMPARE(v->shownSeries(), nodes == 1 ? QStringList{QStringLiteral("h200")} : (QStringList{QStringLiteral("h100"), QStringLiteral("h200")}));
        // Columns: as many pitches as the width holds.
        const int pitch = v->cellSize() + (v->cellSize() >= 6 ? 2 : 1);
        QCOMPARE(v->columns(), std::max(1, (v->viewport()->width() - 12 + (pitch - v->cellSize())) / pitch));
        // A large fleet is fitted at first: every band on screen, no scrolling.
        if (nodes == 5000) {
            QVERIFY2(v->cellSize() <= 6, qPrintable(QString::number(v->cellSize())));
            QCOMPARE(v->verticalScrollBar()->maximum(), 0);
        }
        const int step = nodes > 100 ? 37 : 1;
        for (int row = 0; row < nodes; row += step) {
            const QModelIndex index = v->model()->index(row, 0);
            const QRect r = v->visualRect(index);
            QVERIFY(r.isValid());
            QCOMPARE(v->indexAt(r.center()), index);
            QCOMPARE(v->indexAt(r.topLeft()), index);
            QCOMPARE(v->indexAt(r.bottomRight()), index);
            QCOMPARE(v->positionOfRow(row), row);   // no filter: positions are rows
        }
        // The band headers and the margin are no cell.
        QVERIFY(!v->indexAt(QPoint(2, 2)).isValid());
        QVERIFY(!v->indexAt(v->bandHeaderRect(v->shownSeries().constLast()).center()).isValid());
        // Zoomed in all the way, cells wrap into more lines and the view scrolls.
        v->setCellSize(48);
        if (nodes == 5000) QVERIFY(v->verticalScrollBar()->maximum() > 0);
        const QModelIndex last = v->model()->index(nodes - 1, 0);
        v->scrollTo(last);
        QVERIFY(v->viewport()->rect().contains(v->visualRect(last)));
        QCOMPARE(v->indexAt(v->visualRect(last).center()), last);
    }

    void tooltipNamesTheNodeItsGpusAndPods()
    {
        show(50);
        CapacityHeatmapView *v = view();
        // h200-0000: pods of 4 and 8 GPUs on 8: 12 of 8, overcommitted.
        const int row = m_panel->nodesModel()->rowOf(QStringLiteral("h200-0000"));
        QVERIFY(row >= 0);
        const QPoint at = centre(v, row);
        QTest::mouseMove(v->viewport(), at);
        QHelpEvent help(QEvent::ToolTip, at, v->viewport()->mapToGlobal(at));
        QApplication::sendEvent(v->viewport(), &help);
        QTRY_VERIFY(QToolTip::isVisible());
        const QString tip = QToolTip::text();
        QCOMPARE(tip, QStringLiteral("h200-0000 (h200)\n12 of 8 GPUs in use, 0 free\nPods using its GPUs:\n  ml/h200-0000-b: 8 GPUs\n  ml/h200-0000-a: 4 GPUs"));
        // A cordoned node says so.
        const int cordoned = m_panel->nodesModel()->rowOf(QStringLiteral("h100-0048"));
        QVERIFY(cordoned >= 0);
        QCOMPARE(m_panel->nodesModel()->index(cordoned, 0).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("h100-0048 (h100)\n4 of 8 GPUs in use, 0 free\nBlocked: cordoned\nPods using its GPUs:\n  ml/h100-0048-a: 4 GPUs"));
        // An idle node.
        QCOMPARE(m_panel->nodesModel()->index(m_panel->nodesModel()->rowOf(QStringLiteral("h200-0001")), 0).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("h200-0001 (h200)\n0 of 8 GPUs in use, 8 free\nNo pod uses its GPUs"));
        QToolTip::hideText();
    }

    void clickListsPods()
    {
        show(50);
        CapacityHeatmapView *v = view();
        const int row = m_panel->nodesModel()->rowOf(QStringLiteral("h200-0015"));   // 4 + 8
        QTest::mouseClick(v->viewport(), Qt::LeftButton, {}, centre(v, row));
        QCOMPARE(m_panel->podsNode(), QStringLiteral("h200-0015"));
        QCOMPARE(m_panel->podList()->count(), 2);
        QCOMPARE(m_panel->podList()->item(0)->text(), QStringLiteral("ml/h200-0015-b (8 GPUs)"));
        QCOMPARE(m_panel->podList()->item(1)->text(), QStringLiteral("ml/h200-0015-a (4 GPUs)"));
        // A node without pods.
        const int idle = m_panel->nodesModel()->rowOf(QStringLiteral("h200-0001"));
        QTest::mouseClick(v->viewport(), Qt::LeftButton, {}, centre(v, idle));
        QCOMPARE(m_panel->podList()->count(), 1);
        QCOMPARE(m_panel->podList()->item(0)->text(), QStringLiteral("No pods"));
        // The list follows the node: a pod arrives on it.
        m_tracker->podAdded(podJson(QStringLiteral("late"), QStringLiteral("h200-0001"), 2));
        QCOMPARE(m_panel->podList()->item(0)->text(), QStringLiteral("ml/late (2 GPUs)"));
    }

    void filterBySeriesFromTheKeyboard()
    {
        show(50);
        QComboBox *filter = m_panel->seriesFilter();
        QCOMPARE(filter->count(), 3);   // All series, h100, h200
        filter->setFocus();
        QTest::keyClick(filter, Qt::Key_Down);
        QCOMPARE(filter->currentText(), QStringLiteral("h100"));
        QCOMPARE(view()->shownSeries(), QStringList{QStringLiteral("h100")});
        QCOMPARE(view()->shownCellCount(), 20);
        // A hidden node is no cell, and hit testing follows the new layout.
        const int h200 = m_panel->nodesModel()->rowOf(QStringLiteral("h200-0000"));
        QVERIFY(!view()->visualRect(m_panel->nodesModel()->index(h200, 0)).isValid());
        const QModelIndex first = view()->indexAt(centre(view(), 0));
        QCOMPARE(first.data(CapacityNodesModel::SeriesRole).toString(), QStringLiteral("h100"));
        QTest::keyClick(filter, Qt::Key_Down);
        QCOMPARE(view()->shownSeries(), QStringList{QStringLiteral("h200")});
        QTest::keyClick(filter, Qt::Key_Home);
        QCOMPARE(view()->shownCellCount(), 50);
        // Activating a row of the series table shows that series.
        QTableView *table = m_panel->seriesTable();
        table->setFocus();
        table->setCurrentIndex(table->model()->index(1, 0));
        QTest::keyClick(table, Qt::Key_Return);
        QCOMPARE(filter->currentText(), QStringLiteral("h200"));
    }

    void zoomWithKeysWheelAndButtons()
    {
        show(5000);
        CapacityHeatmapView *v = view();
        const int fitted = v->cellSize();
        v->setFocus();
        QTest::keyClick(v, Qt::Key_Plus);
        QVERIFY(v->cellSize() > fitted);
        QTest::keyClick(v, Qt::Key_Minus);
        QCOMPARE(v->cellSize(), fitted);
        const QPoint at = v->viewport()->rect().center();
        QWheelEvent up(at, v->viewport()->mapToGlobal(at), {}, QPoint(0, 120), Qt::NoButton, Qt::ControlModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(v->viewport(), &up);
        QVERIFY(v->cellSize() > fitted);
        // To readable cells: the numbers are drawn from 32 px.
        auto *in = m_panel->findChild<QToolButton *>(QStringLiteral("capacityZoomIn"));
        while (in->isEnabled()) QTest::mouseClick(in, Qt::LeftButton);
        QCOMPARE(v->cellSize(), 48);
        QVERIFY(v->verticalScrollBar()->maximum() > 0);
        QTest::mouseClick(m_panel->findChild<QToolButton *>(QStringLiteral("capacityZoomFit")), Qt::LeftButton);
        QCOMPARE(v->cellSize(), fitted);
        QCOMPARE(v->verticalScrollBar()->maximum(), 0);
        // The overview is no longer re-fitted once the person has zoomed.
        QTest::mouseClick(m_panel->findChild<QToolButton *>(QStringLiteral("capacityZoomOut")), Qt::LeftButton);
        m_tracker->nodeAdded(nodeJson(QStringLiteral("h100-late"), QStringLiteral("h100"), 8));
        QCoreApplication::processEvents();
        QVERIFY(v->cellSize() < fitted);
    }

    void keyboardMovesBetweenCellsAndEnterListsPods()
    {
        show(50);
        CapacityHeatmapView *v = view();
        v->setFocus();
        QTRY_VERIFY(v->hasFocus());
        QTest::keyClick(v, Qt::Key_Home);
        QCOMPARE(v->currentIndex().row(), 0);
        QTest::keyClick(v, Qt::Key_Right);
        QCOMPARE(v->currentIndex().row(), 1);
        QTest::keyClick(v, Qt::Key_Left);
        QCOMPARE(v->currentIndex().row(), 0);
        // Down: one line on within the band (h100 has 20 nodes).
        const int columns = v->columns();
        QVERIFY(columns < 20);
        QTest::keyClick(v, Qt::Key_Down);
        QCOMPARE(v->currentIndex().row(), columns);
        // Down from the band's last line goes into the next band, same column.
        const int lines = (20 + columns - 1) / columns;
        for (int i = 2; i < lines; ++i) QTest::keyClick(v, Qt::Key_Down);
        QCOMPARE(v->currentIndex().row(), (lines - 1) * columns);
        QTest::keyClick(v, Qt::Key_Down);
        QCOMPARE(v->currentIndex().data(CapacityNodesModel::SeriesRole).toString(), QStringLiteral("h200"));
        QTest::keyClick(v, Qt::Key_Up);
        QCOMPARE(v->currentIndex().data(CapacityNodesModel::SeriesRole).toString(), QStringLiteral("h100"));
        QTest::keyClick(v, Qt::Key_End);
        QCOMPARE(v->currentIndex().row(), 49);
        QVERIFY(m_panel->podsNode().isEmpty());
        QTest::keyClick(v, Qt::Key_Return);
        QCOMPARE(m_panel->podsNode(), v->currentIndex().data(CapacityNodesModel::NameRole).toString());
        // The controls are reachable with Tab and named.
        for (const char *name : {"capacitySeriesFilter", "capacityZoomOut", "capacityZoomIn", "capacityZoomFit", "capacitySeriesTable", "capacityHeatmap", "capacityPodList"}) {
            QWidget *w = m_panel->findChild<QWidget *>(QLatin1String(name));
            QVERIFY2(w, name);
            QVERIFY2(!w->accessibleName().isEmpty(), name);
            QVERIFY2(w->focusPolicy() & Qt::TabFocus, name);
        }
    }

    void cellsAreExposedToAssistiveTechnology()
    {
        show(50);
        CapacityHeatmapView *v = view();
        QAccessibleInterface *iface = QAccessible::queryAccessibleInterface(v);
        QVERIFY(iface);
        QCOMPARE(iface->role(), QAccessible::List);
        QCOMPARE(iface->text(QAccessible::Name), QStringLiteral("GPU capacity heatmap"));
        QCOMPARE(iface->childCount(), 50);
        QAccessibleInterface *cell = iface->child(0);
        QVERIFY(cell && cell->isValid());
        QCOMPARE(cell->role(), QAccessible::ListItem);
        const QString first = m_panel->nodesModel()->nodeAt(0);
        QVERIFY2(cell->text(QAccessible::Name).startsWith(first + QStringLiteral(": ")), qPrintable(cell->text(QAccessible::Name)));
        QVERIFY(cell->text(QAccessible::Description).startsWith(first));
        QCOMPARE(cell->parent(), iface);
        QCOMPARE(iface->indexOfChild(cell), 0);
        QCOMPARE(iface->child(0), cell);   // one interface per node
        const QRect r = cell->rect();
        QCOMPARE(r.size(), v->visualRect(v->model()->index(0, 0)).size());
        QCOMPARE(iface->childAt(r.center().x(), r.center().y()), cell);
        // A blocked node says why in its name.
        const int cordoned = m_panel->nodesModel()->rowOf(QStringLiteral("h100-0048"));
        QVERIFY(cordoned >= 0);
        QVERIFY(iface->child(cordoned)->text(QAccessible::Name).endsWith(QStringLiteral("blocked: cordoned")));
        // The focused cell follows the keyboard.
        v->setFocus();
        QTRY_VERIFY(v->hasFocus());
        QTest::keyClick(v, Qt::Key_Home);
        QTest::keyClick(v, Qt::Key_Right);
        QAccessibleInterface *focused = iface->focusChild();
        QVERIFY(focused);
        QCOMPARE(iface->indexOfChild(focused), 1);
        QVERIFY(focused->state().focused);
        // The filter changes the children.
        v->setSeriesFilter(QStringLiteral("h200"));
        QCOMPARE(iface->childCount(), 30);
        // The other controls are named too (on Linux a combo box's accessible name is its
        // label's, through the Labelled relation; its value is the series shown).
        QCOMPARE(m_panel->seriesFilter()->accessibleName(), QStringLiteral("Series shown"));
        QAccessibleInterface *filter = QAccessible::queryAccessibleInterface(m_panel->seriesFilter());
        QCOMPARE(filter->text(QAccessible::Value), QStringLiteral("All series"));
        const auto labels = filter->relations(QAccessible::Label);
        QVERIFY(!labels.isEmpty());
        QCOMPARE(labels.first().first->text(QAccessible::Name), QStringLiteral("Series:"));
        QCOMPARE(QAccessible::queryAccessibleInterface(m_panel->podList())->text(QAccessible::Name), QStringLiteral("Pods on the selected node"));
    }

    // The sandbox's informers feed the panel: a pod created on a node repaints its cell.
    void liveUpdateFromTheSandbox()
    {
        QTemporaryDir dir;
        Sandbox::SandboxOptions options;
        options.connectionFile = dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("h200:3x8");
        options.presentImages = {QStringLiteral("registry.example/present:1")};
        std::unique_ptr<Sandbox::Sandbox> sandbox;
        std::unique_ptr<Testing::SandboxHttp> http;
        QString error;
        QVERIFY2(Testing::startSandbox(sandbox, http, options, &error), qPrintable(error));
        Kube::ClientConfig config;
        config.server = sandbox->apiServerUrl();
        config.token = sandbox->token();
        config.tls.caCertificates = QSslCertificate::fromData(sandbox->caCertificatePem(), QSsl::Pem);
        config.ns = QStringLiteral("starforge");
        Kube::KubeClient client(config);
        Kube::Informer nodes(&client, Kube::ResourceKind::nodes());
        Kube::Informer pods(&client, Kube::ResourceKind::pods());
        Cluster::CapacityTracker tracker;
        tracker.attach(&nodes, &pods);
        CapacityPanel panel;
        panel.resize(600, 600);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.setTracker(&tracker);
        nodes.start();
        pods.start();
        QTRY_VERIFY_WITH_TIMEOUT(tracker.isSynced(), 10000);
        QTRY_COMPARE(panel.view()->shownCellCount(), 3);
        const QString target = panel.nodesModel()->nodeAt(0);
        const auto pixel = [&] {
            const QRect r = panel.view()->visualRect(panel.nodesModel()->index(panel.nodesModel()->rowOf(target), 0));
            return panel.view()->viewport()->grab().toImage().pixelColor(r.topLeft() + QPoint(1, 1) * panel.devicePixelRatio()).rgb();
        };
        QCOMPARE(pixel(), Gui::heatColor(0.0).rgb());

        const QJsonObject body{
            {QStringLiteral("apiVersion"), QStringLiteral("v1")}, {QStringLiteral("kind"), QStringLiteral("Pod")},
            {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), QStringLiteral("busy")}}},
            {QStringLiteral("spec"), QJsonObject{{QStringLiteral("restartPolicy"), QStringLiteral("Never")}, {QStringLiteral("nodeName"), target},
                                                 {QStringLiteral("containers"), QJsonArray{QJsonObject{
                                                     {QStringLiteral("name"), QStringLiteral("main")}, {QStringLiteral("image"), options.presentImages.first()},
                                                     {QStringLiteral("command"), QJsonArray{QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("sleep 60")}},
                                                     {QStringLiteral("resources"), QJsonObject{{QStringLiteral("limits"), QJsonObject{{QStringLiteral("nvidia.com/gpu"), QStringLiteral("6")}}}}}}}}}}};
        QCOMPARE(http->send("POST", QStringLiteral("/api/v1/namespaces/starforge/pods"), QJsonDocument(body).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(pixel(), Gui::heatColor(0.75).rgb(), 10000);
        QCOMPARE(panel.seriesModel()->index(0, Models::CapacitySeriesModel::UsedColumn).data().toString(), QStringLiteral("6"));
        QCOMPARE(http->send("DELETE", QStringLiteral("/api/v1/namespaces/starforge/pods/busy")).status, 200);
        QTRY_COMPARE_WITH_TIMEOUT(pixel(), Gui::heatColor(0.0).rgb(), 10000);
        panel.setTracker(nullptr);
    }
};

QTEST_MAIN(TestCapacityPanel)
#include "tst_capacitypanel.moc"
