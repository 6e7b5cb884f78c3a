#pragma once

// The GPU Capacity dock: the per-series totals (CapacitySeriesModel in a table), the heatmap
// (CapacityHeatmapView over CapacityNodesModel) with its legend, a series filter and zoom
// controls, and the pods of the node last clicked or entered. It follows a core Session: the
// session's CapacityTracker is taken whenever the session (re)builds its parts and let go of
// before they are torn down. Without a tracker it shows a sentence saying why instead.

#include <QWidget>

class QComboBox;
class QLabel;
class QListWidget;
class QStackedWidget;
class QTableView;
class QToolButton;

namespace Starforge {
class Session;
}
namespace Starforge::Cluster {
class CapacityTracker;
}
namespace Starforge::Models {
class CapacityNodesModel;
class CapacitySeriesModel;
} // namespace Starforge::Models

namespace Starforge::Gui {

class CapacityHeatmapView;
class CapacityLegend;

class CapacityPanel final : public QWidget
{
    Q_OBJECT
public:
    explicit CapacityPanel(QWidget *parent = nullptr);
    ~CapacityPanel() override;

    // Follows session's capacity tracker from now on; nullptr: none.
    void setSession(Session *session);
    // The tracker shown (nullptr: none, and the message is shown).
    void setTracker(Cluster::CapacityTracker *tracker);
    void setMessage(const QString &text);

    CapacityHeatmapView *view() const { return m_view; }
    Models::CapacityNodesModel *nodesModel() const { return m_nodes; }
    Models::CapacitySeriesModel *seriesModel() const { return m_series; }
    QTableView *seriesTable() const { return m_seriesTable; }
    QListWidget *podList() const { return m_pods; }
    QComboBox *seriesFilter() const { return m_filter; }
    QString messageText() const;
    bool isShowingHeatmap() const;
    // The node whose pods the list shows (empty: none).
    QString podsNode() const { return m_podsNode; }

    // Lists the pods of the node at index (a row of nodesModel()).
    void showPods(const QModelIndex &index);

private:
    void syncWithSession();
    void refreshFilter();
    void refreshPods();
    void updateZoomText();

    Models::CapacityNodesModel *m_nodes;
    Models::CapacitySeriesModel *m_series;
    QStackedWidget *m_stack;
    QLabel *m_message;
    QComboBox *m_filter;
    QToolButton *m_zoomOut;
    QToolButton *m_zoomIn;
    QToolButton *m_zoomFit;
    QLabel *m_zoomText;
    CapacityLegend *m_legend;
    QTableView *m_seriesTable;
    CapacityHeatmapView *m_view;
    QLabel *m_podsTitle;
    QListWidget *m_pods;
    Session *m_session = nullptr;
    QString m_podsNode;
    bool m_zoomChosen = false; // the person zoomed: no automatic fit any more
};

} // namespace Starforge::Gui
