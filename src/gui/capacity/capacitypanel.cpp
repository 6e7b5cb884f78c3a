#include "gui/capacity/capacitypanel.h"

#include "core/cluster/capacity.h"
#include "core/session/session.h"
#include "gui/capacity/capacityheatmapview.h"
#include "gui/capacity/capacitylegend.h"
#include "gui/palettefollow.h"
#include "models/capacitynodesmodel.h"
#include "models/capacityseriesmodel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

namespace Starforge::Gui {

using Models::CapacityNodesModel;
using Models::CapacitySeriesModel;

CapacityPanel::CapacityPanel(QWidget *parent)
    : QWidget(parent)
    , m_nodes(new CapacityNodesModel(this))
    , m_series(new CapacitySeriesModel(this))
    , m_stack(new QStackedWidget(this))
    , m_message(new QLabel(this))
    , m_filter(new QComboBox(this))
    , m_zoomOut(new QToolButton(this))
    , m_zoomIn(new QToolButton(this))
    , m_zoomFit(new QToolButton(this))
    , m_zoomText(new QLabel(this))
    , m_legend(new CapacityLegend(this))
    , m_seriesTable(new QTableView(this))
    , m_view(new CapacityHeatmapView(this))
    , m_podsTitle(new QLabel(this))
    , m_pods(new QListWidget(this))
{
    setObjectName(QStringLiteral("capacityPanel"));

    m_message->setObjectName(QStringLiteral("capacityMessage"));
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    m_message->setMargin(12);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    followQuiet(m_message);

    auto *filterLabel = new QLabel(tr("&Series:"), this);
    filterLabel->setBuddy(m_filter);
    m_filter->setObjectName(QStringLiteral("capacitySeriesFilter"));
    m_filter->setAccessibleName(tr("Series shown"));
    m_filter->setToolTip(tr("Show every GPU series or one"));
    m_filter->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_filter->addItem(tr("All series"), QString());

    const auto setUpButton
        = [this](QToolButton *button, const QString &name, const QString &text, const QString &accessible, const QString &tip) {
              button->setObjectName(name);
              button->setText(text);
              button->setAccessibleName(accessible);
              button->setToolTip(tip);
              button->setAutoRaise(true);
              button->setFocusPolicy(Qt::StrongFocus);
          };
    setUpButton(m_zoomOut, QStringLiteral("capacityZoomOut"), QStringLiteral("−"), tr("Zoom out"),
                tr("Smaller cells (- or Ctrl+wheel down)"));
    setUpButton(m_zoomIn, QStringLiteral("capacityZoomIn"), QStringLiteral("+"), tr("Zoom in"), tr("Larger cells (+ or Ctrl+wheel up)"));
    setUpButton(m_zoomFit, QStringLiteral("capacityZoomFit"), tr("Fit"), tr("Fit all nodes"),
                tr("The largest cells at which every node shows"));
    m_zoomText->setObjectName(QStringLiteral("capacityZoomText"));
    followQuiet(m_zoomText);

    m_seriesTable->setObjectName(QStringLiteral("capacitySeriesTable"));
    m_seriesTable->setAccessibleName(tr("GPU series totals"));
    m_seriesTable->setModel(m_series);
    m_seriesTable->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_seriesTable->setSelectionMode(QAbstractItemView::SingleSelection);
    m_seriesTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_seriesTable->setWordWrap(false);
    m_seriesTable->verticalHeader()->hide();
    m_seriesTable->verticalHeader()->setDefaultSectionSize(m_seriesTable->fontMetrics().height() + 6);
    m_seriesTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_seriesTable->horizontalHeader()->setHighlightSections(false);

    m_view->setModel(m_nodes);

    m_podsTitle->setObjectName(QStringLiteral("capacityPodsTitle"));
    m_podsTitle->setText(tr("Click a node, or press Enter on it, to list its pods."));
    m_podsTitle->setWordWrap(true);
    m_podsTitle->setBuddy(m_pods);
    m_pods->setObjectName(QStringLiteral("capacityPodList"));
    m_pods->setAccessibleName(tr("Pods on the selected node"));

    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(0, 0, 0, 0);
    bar->addWidget(filterLabel);
    bar->addWidget(m_filter);
    bar->addSpacing(8);
    bar->addWidget(m_zoomOut);
    bar->addWidget(m_zoomIn);
    bar->addWidget(m_zoomFit);
    bar->addWidget(m_zoomText);
    bar->addStretch(1);

    auto *podsBox = new QWidget(this);
    auto *podsLayout = new QVBoxLayout(podsBox);
    podsLayout->setContentsMargins(0, 0, 0, 0);
    podsLayout->setSpacing(2);
    podsLayout->addWidget(m_podsTitle);
    podsLayout->addWidget(m_pods, 1);

    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->setObjectName(QStringLiteral("capacitySplitter"));
    splitter->addWidget(m_seriesTable);
    splitter->addWidget(m_view);
    splitter->addWidget(podsBox);
    splitter->setStretchFactor(0, 0);
    splitter->setStretchFactor(1, 1);
    splitter->setStretchFactor(2, 0);
    // The heatmap first: the pods list is short until a node is chosen.
    splitter->setSizes({ 110, 360, 60 });

    auto *page = new QWidget(this);
    auto *pageLayout = new QVBoxLayout(page);
    pageLayout->setContentsMargins(4, 2, 4, 2);
    pageLayout->setSpacing(2);
    pageLayout->addLayout(bar);
    pageLayout->addWidget(m_legend);
    pageLayout->addWidget(splitter, 1);
    m_stack->addWidget(m_message);
    m_stack->addWidget(page);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_stack);

    setTabOrder(m_filter, m_zoomOut);
    setTabOrder(m_zoomOut, m_zoomIn);
    setTabOrder(m_zoomIn, m_zoomFit);
    setTabOrder(m_zoomFit, m_seriesTable);
    setTabOrder(m_seriesTable, m_view);
    setTabOrder(m_view, m_pods);

    connect(m_filter, &QComboBox::currentIndexChanged, this, [this] { m_view->setSeriesFilter(m_filter->currentData().toString()); });
    connect(m_zoomIn, &QToolButton::clicked, this, [this] {
        m_zoomChosen = true;
        m_view->zoomIn();
    });
    connect(m_zoomOut, &QToolButton::clicked, this, [this] {
        m_zoomChosen = true;
        m_view->zoomOut();
    });
    connect(m_zoomFit, &QToolButton::clicked, this, [this] { m_view->zoomToFit(); });
    connect(m_view, &CapacityHeatmapView::zoomedByUser, this, [this] { m_zoomChosen = true; });
    connect(m_view, &CapacityHeatmapView::zoomChanged, this, &CapacityPanel::updateZoomText);
    connect(m_view, &QAbstractItemView::clicked, this, &CapacityPanel::showPods);
    connect(m_view, &QAbstractItemView::activated, this, &CapacityPanel::showPods);
    // A series row chosen in the table shows that series' band.
    connect(m_seriesTable, &QAbstractItemView::activated, this, [this](const QModelIndex &index) {
        const int at = m_filter->findData(index.data(CapacitySeriesModel::SeriesRole).toString());
        if (at >= 0)
            m_filter->setCurrentIndex(at);
    });
    for (auto signal : { &QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved }) {
        connect(m_series, signal, this, &CapacityPanel::refreshFilter);
        connect(m_nodes, signal, this, &CapacityPanel::refreshPods);
    }
    connect(m_nodes, &QAbstractItemModel::dataChanged, this, [this](const QModelIndex &topLeft) {
        if (!m_podsNode.isEmpty() && m_nodes->nodeAt(topLeft.row()) == m_podsNode)
            refreshPods();
    });
    // The first fill of a large cluster: show every node until the person picks a zoom.
    connect(m_nodes, &QAbstractItemModel::rowsInserted, this, [this] {
        if (!m_zoomChosen)
            QTimer::singleShot(0, this, [this] {
                if (!m_zoomChosen)
                    m_view->zoomToFit();
            });
    });

    updateZoomText();
    setMessage(tr("The capacity heatmap appears once the window is connected to a cluster."));
}

CapacityPanel::~CapacityPanel() = default;

void CapacityPanel::setSession(Session *session)
{
    if (m_session)
        disconnect(m_session, nullptr, this, nullptr);
    m_session = session;
    if (m_session) {
        connect(m_session, &Session::partsChanged, this, &CapacityPanel::syncWithSession);
        connect(m_session, &Session::partsAboutToBeRemoved, this, [this] { setTracker(nullptr); });
        connect(m_session, &Session::stateChanged, this, &CapacityPanel::syncWithSession);
        connect(m_session, &Session::featuresChanged, this, &CapacityPanel::syncWithSession);
        connect(m_session, &QObject::destroyed, this, [this] { m_session = nullptr; });
    }
    syncWithSession();
}

void CapacityPanel::syncWithSession()
{
    Cluster::CapacityTracker *tracker = m_session ? m_session->capacity() : nullptr;
    if (tracker) {
        if (m_nodes->tracker() != tracker)
            setTracker(tracker);
        return;
    }
    QString text = tr("The capacity heatmap appears once the window is connected to a cluster.");
    if (m_session) {
        const auto feature = m_session->feature(QStringLiteral("capacity"));
        if (feature && !feature->available) {
            text = tr("The capacity heatmap is off for this connection: %1").arg(feature->reason);
        } else if (m_session->state() == Session::State::Connecting || m_session->state() == Session::State::Reconnecting) {
            text = tr("Connecting…");
        }
    }
    if (m_nodes->tracker() || m_message->text() != text || isShowingHeatmap())
        setMessage(text);
}

void CapacityPanel::setMessage(const QString &text)
{
    setTracker(nullptr);
    m_message->setText(text);
    m_stack->setCurrentWidget(m_message);
}

void CapacityPanel::setTracker(Cluster::CapacityTracker *tracker)
{
    m_nodes->setTracker(tracker);
    m_series->setTracker(tracker);
    m_podsNode.clear();
    refreshPods();
    if (tracker)
        m_stack->setCurrentIndex(1);
}

QString CapacityPanel::messageText() const
{
    return m_message->text();
}

bool CapacityPanel::isShowingHeatmap() const
{
    return m_stack->currentWidget() != m_message;
}

void CapacityPanel::refreshFilter()
{
    const QString chosen = m_filter->currentData().toString();
    const QSignalBlocker blocker(m_filter);
    while (m_filter->count() > 1)
        m_filter->removeItem(1);
    for (const QString &series : m_series->seriesNames())
        m_filter->addItem(series, series);
    const int at = m_filter->findData(chosen);
    m_filter->setCurrentIndex(at >= 0 ? at : 0);
    if (at < 0)
        m_view->setSeriesFilter(QString());
}

void CapacityPanel::showPods(const QModelIndex &index)
{
    m_podsNode = index.isValid() ? m_nodes->nodeAt(index.row()) : QString();
    refreshPods();
}

void CapacityPanel::refreshPods()
{
    const int row = m_podsNode.isEmpty() ? -1 : m_nodes->rowOf(m_podsNode);
    m_pods->clear();
    if (row < 0) {
        m_podsTitle->setText(m_podsNode.isEmpty() ? tr("Click a node, or press Enter on it, to list its pods.")
                                                  : tr("Node %1 is no longer in the cluster.").arg(m_podsNode));
        return;
    }
    const QModelIndex index = m_nodes->index(row, 0);
    const QStringList pods = index.data(CapacityNodesModel::PodListRole).toStringList();
    QString title = tr("Pods on %1: %2 of %3 GPUs in use")
                        .arg(m_podsNode)
                        .arg(index.data(CapacityNodesModel::UsedRole).toLongLong())
                        .arg(index.data(CapacityNodesModel::AllocatableRole).toInt());
    if (index.data(CapacityNodesModel::BlockedRole).toBool())
        title += tr("; blocked: %1").arg(index.data(CapacityNodesModel::BlockReasonRole).toString());
    m_podsTitle->setText(title);
    if (pods.isEmpty()) {
        m_pods->addItem(tr("No pods"));
        return;
    }
    m_pods->addItems(pods);
}

void CapacityPanel::updateZoomText()
{
    m_zoomText->setText(tr("%1 px cells").arg(m_view->cellSize()));
    const QList<int> &levels = CapacityHeatmapView::zoomLevels();
    m_zoomIn->setEnabled(m_view->cellSize() < levels.constLast());
    m_zoomOut->setEnabled(m_view->cellSize() > levels.constFirst());
}

} // namespace Starforge::Gui
