#pragma once

// The Job dock: the job selected in the Jobs panel, followed as it changes (docs/jobs.md, "The
// job detail"):
//  - the record's state and, while it waits, the diagnosis engine's sentence in a banner;
//  - the JobSpec (pools, recipe, image, overrides), the RayJob's status fields and its
//    RayCluster's (state, workers ready of desired, head pod);
//  - the job's pods (JobPodsModel): phase with what holds them, node, restarts;
//  - the training progress plot (ProgressPlot) from the session's ProgressFollower while the job
//    runs, or from the archived driver log once it is archived;
//  - its finished checkpoints (CheckpointsModel), each ready to chat or with the converter it
//    needs, from the same progress.
// A live job is read again (fetchCheckedSnapshot) when its record changes and every few seconds
// while the dock is visible; an archived one once, from objects.json in the bucket.

#include "core/job/jobrecord.h"
#include "core/job/jobsnapshot.h"
#include "core/playground/playgroundpod.h"

#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <memory>
#include <optional>

class QComboBox;
class QLabel;
class QPushButton;
class QStackedWidget;
class QTableView;
class QTextBrowser;

namespace Starforge {
class Session;
}
namespace Starforge::Job {
class JobProgress;
}
namespace Starforge::Models {
class JobsModel;
class JobPodsModel;
class CheckpointsModel;
}

namespace Starforge::Gui {

class ProgressPlot;

class JobDetailPanel final : public QWidget
{
    Q_OBJECT
public:
    explicit JobDetailPanel(QWidget *parent = nullptr);
    ~JobDetailPanel() override;

    // The session whose cluster, bucket and progress follower are read (nullptr: none).
    void setSession(Session *session);
    // Where the selected job's record comes from (the Jobs panel's model).
    void setJobsModel(Models::JobsModel *model);
    // Follows this job from now on; empty: none.
    void showJob(const QString &jobId);
    QString jobId() const { return m_jobId; }

    // Read live jobs again this often while visible (tests shorten it).
    void setRefreshInterval(int ms);

    // The parts, for tests and screenshots.
    QLabel *titleLabel() const { return m_title; }
    QLabel *diagnosisBanner() const { return m_banner; }
    QTextBrowser *summaryView() const { return m_summary; }
    QTableView *podsView() const { return m_podsView; }
    Models::JobPodsModel *podsModel() const { return m_pods; }
    ProgressPlot *plot() const { return m_plot; }
    QComboBox *metricCombo() const { return m_metric; }
    QLabel *progressLabel() const { return m_progressLabel; }
    QTableView *checkpointsView() const { return m_checkpointsView; }
    Models::CheckpointsModel *checkpointsModel() const { return m_checkpoints; }
    QPushButton *chatButton() const { return m_chat; }
    bool isShowingJob() const;

    // What "Chat with step N" launches: the selected checkpoint, or with none selected the newest
    // vLLM can serve as it is; nullopt when that one cannot be served as it is.
    std::optional<Playground::LaunchRequest> chatRequest() const;

Q_SIGNALS:
    // The selected checkpoint, to be served in the playground.
    void chatRequested(const Playground::LaunchRequest &request);

public:

    // The summary as HTML: the record, its JobSpec, and what the snapshot adds.
    static QString summaryHtml(const Job::JobRecord &record, const std::optional<Job::JobSnapshot> &snapshot);

protected:
    void showEvent(QShowEvent *event) override;

private:
    void takeSessionParts();
    std::optional<Job::JobRecord> currentRecord() const;
    void render();
    void refresh();
    void readArchive(const Job::JobRecord &record);
    void takeSnapshot(const Job::JobSnapshot &snapshot);
    void showProgress();
    void onProgressChanged(const QString &jobId);
    void setArchivedProgress(const Job::JobRecord &record);
    void showCheckpoints(const Job::JobProgress &progress);
    void updateChatButton();

    QPointer<Session> m_session;
    QPointer<Models::JobsModel> m_model;
    QString m_jobId;
    std::optional<Job::JobSnapshot> m_snapshot;
    std::unique_ptr<QObject> m_fetch;        // context of the read in flight; deleting it drops the answer
    bool m_fetchAgain = false;               // something changed while a read was in flight
    bool m_archiveRead = false;              // the archived job's objects and log were asked for
    bool m_archivedProgressShown = false;
    QTimer m_refreshTimer;
    QTimer m_soon;                           // coalesces record changes into one read

    QStackedWidget *m_stack;
    QLabel *m_empty;
    QLabel *m_title;
    QLabel *m_banner;
    QTextBrowser *m_summary;
    Models::JobPodsModel *m_pods;
    QTableView *m_podsView;
    ProgressPlot *m_plot;
    QComboBox *m_metric;
    QLabel *m_progressLabel;
    Models::CheckpointsModel *m_checkpoints;
    QTableView *m_checkpointsView;
    QPushButton *m_chat;
};

} // namespace Starforge::Gui
