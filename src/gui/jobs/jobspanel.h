#pragma once

// The Jobs dock: the current and archived jobs of the connected cluster (JobsModel through
// JobsFilterModel) in a table, with a filter box, a state filter, Stop (live jobs, after a
// confirmation) and Refresh history in a toolbar and a context menu; Details (double-click,
// Return) asks for the Job dock. It follows a core Session: the session's bucket gives the history and its
// JobTracker the live jobs, taken again whenever the session rebuilds them. Until it has a
// bucket to read (not connected, no S3 settings) it shows a sentence saying why instead.

#include "core/job/jobrecord.h"

#include <QWidget>

#include <optional>

class QAction;
class QJsonObject;
class QComboBox;
class QLabel;
class QLineEdit;
class QStackedWidget;
class QTableView;

namespace Starforge {
class Session;
}
namespace Starforge::Job {
class JobTracker;
}
namespace Starforge::S3 {
class S3Client;
}
namespace Starforge::Models {
class JobsModel;
}

namespace Starforge::Gui {

class JobsFilterModel;
class UserPrompts;

class JobsPanel final : public QWidget
{
    Q_OBJECT
public:
    explicit JobsPanel(UserPrompts *prompts, QWidget *parent = nullptr);
    ~JobsPanel() override;

    // Follows session (its bucket, its job tracker and its state) from now on; nullptr: none.
    void setSession(Session *session);

    // Shows text in place of the table and lets go of the tracker and the bucket.
    void setMessage(const QString &text);
    // The bucket whose history is shown (read at once); shows the table. nullptr: none.
    void setHistoryStore(S3::S3Client *s3);
    // The tracker whose live jobs are shown, and which Stop asks. nullptr: none.
    void setTracker(Job::JobTracker *tracker);

    Models::JobsModel *model() const { return m_model; }
    JobsFilterModel *filterModel() const { return m_proxy; }
    QTableView *view() const { return m_view; }
    QString messageText() const;
    bool isShowingJobs() const;

    // The selected job's record, if a row is selected.
    std::optional<Job::JobRecord> selectedJob() const;
    // Every selected job's record, in the table's order (Compare runs).
    QList<Job::JobRecord> selectedJobs() const;
    QAction *compareAction() const { return m_compareAction; }
    // Delete the selected job for good, its RayJob and its archive (asks first; the viewer's
    // own jobs only, as the core's deleteJob decides); copy its RayJob as JSON (the live one,
    // else the archived one) to the clipboard.
    void deleteSelected();
    void copySelectedRayJob();
    // Selects the job's row and shows it; a job not listed yet (just submitted, the tracker has
    // not seen it) is selected when its row appears. False when it is not listed yet.
    bool selectJob(const QString &jobId);
    // Stop the selected job (asks first); Refresh history; Details of the selected job.
    void stopSelected();
    void refreshHistory();
    void showSelectedDetails();

Q_SIGNALS:
    // Outcomes and errors for the status bar.
    void statusMessage(const QString &text);
    // The job the panels that follow one job (timeline, logs) show; empty: none selected.
    void selectedJobChanged(const QString &jobId);
    // Compare runs on two or more selected jobs.
    void compareRequested(const QList<Starforge::Job::JobRecord> &jobs);
    // Details (double-click, Return, the context menu): show the Job dock for this job.
    void detailsRequested(const QString &jobId);
    // Open logs: the Logs dock for this job.
    void logsRequested(const QString &jobId);
    // Open events: the Events dock for this job.
    void eventsRequested(const QString &jobId);
    // Resubmit: the selected job's JobSpec, for the submission wizard to open.
    void resubmitRequested(const QJsonObject &jobSpec);

private:
    QModelIndex selectedIndex() const;
    void showDetails(const QModelIndex &proxyIndex);
    void showContextMenu(const QPoint &pos);
    void updateActions();
    void updateSummary();
    void syncWithSession();
    QString sessionPlaceholder() const;

    UserPrompts *m_prompts;
    Models::JobsModel *m_model;
    JobsFilterModel *m_proxy;
    QStackedWidget *m_stack;
    QLabel *m_message;
    QTableView *m_view;
    QLineEdit *m_filter;
    QComboBox *m_stateFilter;
    QLabel *m_summary;
    QAction *m_stopAction;
    QAction *m_refreshAction;
    QAction *m_detailsAction;
    QAction *m_copyIdAction;
    QAction *m_deleteAction;
    QAction *m_resubmitAction;
    QAction *m_copyRayJobAction;
    // The event timeline comes with issue 14: off until then.
    QAction *m_openEventsAction;
    QAction *m_openLogsAction;
    QAction *m_compareAction;
    Session *m_session = nullptr;
    QString m_selectedJob;
    bool m_deleting = false;   // a delete is under way: Delete waits for it
    QString m_pendingSelection;   // selectJob() of a job not listed yet
};

} // namespace Starforge::Gui
