#pragma once

// The Events dock (docs/events.md): the job selected in the Jobs panel on a timeline.
//  - A banner above, from the diagnosis engine: while the job waits, why, in one sentence with
//    the numbers; for a job that failed, the cause. Its link selects the evidence, which the
//    timeline rings. It clears once the job runs.
//  - The timeline (TimelineView) beside a sortable, filterable list of the same events; a click
//    on either selects the event in both.
// A live job is read again (its objects and events) when its record changes, when the
// session's event informer sees an event of it, and every few seconds while the dock is
// visible; the session's journal adds what Kubernetes has dropped and the state changes the
// phases are drawn from. An archived job is read once from its archived objects.json and
// events.json, merged with the journal.

#include "core/events/timeline.h"
#include "core/job/jobsnapshot.h"

#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <memory>
#include <optional>

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QStackedWidget;
class QTableView;
class QToolButton;

namespace Starforge {
class Session;
}
namespace Starforge::Job {
struct JobRecord;
}
namespace Starforge::Kube {
class Informer;
}
namespace Starforge::Models {
class JobsModel;
class TimelineModel;
}

namespace Starforge::Gui {

class TimelineView;

class EventsPanel final : public QWidget
{
    Q_OBJECT
public:
    explicit EventsPanel(QWidget *parent = nullptr);
    ~EventsPanel() override;

    void setSession(Session *session);
    void setJobsModel(Models::JobsModel *model);
    void showJob(const QString &jobId);
    QString jobId() const { return m_jobId; }
    void setRefreshInterval(int ms);

    // The parts, for tests and screenshots.
    TimelineView *timelineView() const { return m_view; }
    QTableView *listView() const { return m_list; }
    QLineEdit *filterEdit() const { return m_filter; }
    QLabel *diagnosisBanner() const { return m_banner; }
    QLabel *titleLabel() const { return m_title; }
    Models::TimelineModel *timelineModel() const { return m_model; }
    QSortFilterProxyModel *listModel() const { return m_proxy; }
    bool isShowingJob() const;

    // Shows a timeline made elsewhere (the archive reader, tests, screenshots).
    void setTimeline(const Events::Timeline &timeline, const QStringList &evidence);

protected:
    void showEvent(QShowEvent *event) override;

private:
    std::optional<Job::JobRecord> currentRecord() const;
    void render();
    void refresh();
    void readArchive(const Job::JobRecord &record);
    void takeSnapshot(const Job::JobSnapshot &snapshot, bool archived);
    void selectEvidence();
    void syncFromTimeline();
    void syncFromList();

    QPointer<Session> m_session;
    QPointer<Models::JobsModel> m_jobs;
    QPointer<Kube::Informer> m_informer;
    QString m_jobId;
    QString m_rayJobName;   // the shown job's, for the event informer's filter
    std::optional<Job::JobSnapshot> m_snapshot;
    std::unique_ptr<QObject> m_fetch;
    bool m_fetchAgain = false;
    bool m_archiveRead = false;
    QString m_shownJob;     // the job whose timeline the view shows (a new one is fitted)

    QStackedWidget *m_stack;
    QLabel *m_empty;
    QLabel *m_title;
    QLabel *m_banner;
    QLineEdit *m_filter;
    QToolButton *m_zoomIn;
    QToolButton *m_zoomOut;
    QToolButton *m_fit;
    Models::TimelineModel *m_model;
    QSortFilterProxyModel *m_proxy;
    TimelineView *m_view;
    QTableView *m_list;
    QStringList m_evidence;
    QTimer m_refreshTimer;
    QTimer m_soon;
    bool m_syncing = false;
};

} // namespace Starforge::Gui
