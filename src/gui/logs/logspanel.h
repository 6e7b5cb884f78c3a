#pragma once

// The Logs dock: one log of the selected job at a time, from a file on disk (docs/logs.md):
//  - sources: the job's pods while it runs (the submitter's driver log first, then the head and
//    the workers; a restarted container's previous log as a source of its own; "All pods
//    (merged)": every pod's lines in time order, tagged), followed live with a Logs::LogFollower
//    into a spool file; once the job is archived, its archived logs, downloaded to a file;
//  - the lines through LogLinesModel (the line index: a gigabyte log scrolls without being read
//    into memory), errors, warnings and tracebacks coloured, progress lines as step markers;
//  - Follow keeps the newest line in view; a jump to the first traceback;
//  - search (text or expression, any case) on the thread pool with progress and cancel, next and
//    previous match (F3, Shift+F3), and "only matching lines";
//  - Save… copies the log to a file; Copy (Ctrl+C, or the view's context menu) the selected lines;
//  - Wrap lines (Alt+W, remembered) wraps long lines instead of cutting them;
//  - the scroll bar marks where the search's matches are (MatchScrollBar).

#include "core/logs/logfollower.h"
#include "core/net/backoff.h"

#include <QPointer>
#include <QSet>
#include <QTimer>
#include <QWidget>

#include <atomic>
#include <memory>

class QAction;
class QCheckBox;
class QMenu;
class QToolButton;
class QComboBox;
class QLabel;
class QLineEdit;
class QAbstractItemView;
class QTableView;
class QPushButton;
class QStringListModel;
class QTemporaryFile;

namespace Starforge {
class Session;
}
namespace Starforge::Kube {
class KubeClient;
}
namespace Starforge::Models {
class JobsModel;
class LogLinesModel;
}

namespace Starforge::Gui {

class MatchesModel;
class MatchScrollBar;

class LogsPanel final : public QWidget
{
    Q_OBJECT
public:
    explicit LogsPanel(QWidget *parent = nullptr);
    ~LogsPanel() override;

    void setSession(Session *session);
    void setJobsModel(Models::JobsModel *model);
    void showJob(const QString &jobId);
    QString jobId() const { return m_jobId; }

    // For tests and screenshots.
    QComboBox *sourceCombo() const { return m_source; }
    QAbstractItemView *view() const;
    Models::LogLinesModel *linesModel() const { return m_lines; }
    QLineEdit *searchEdit() const { return m_search; }
    QCheckBox *regexCheck() const { return m_regex; }
    QCheckBox *caseCheck() const { return m_anyCase; }
    QCheckBox *onlyMatchingCheck() const { return m_onlyMatching; }
    QCheckBox *followCheck() const { return m_follow; }
    QLabel *statusLabel() const { return m_status; }
    QAction *wrapAction() const { return m_wrap; }
    QToolButton *wrapButton() const { return m_wrapButton; }
    MatchScrollBar *matchScrollBar() const { return m_scrollBar; }
    const Logs::LogFollower *follower() const { return m_follower.get(); }
    QList<qint64> matches() const { return m_matches; }
    // The line (0-based) the view's current row shows; -1: none.
    qint64 currentLine() const;
    // Writes the shown log to path.
    bool saveTo(const QString &path, QString *error = nullptr) const;

    // Where Save… asks for a file (tests answer without a dialog).
    std::function<QString(QWidget *parent)> chooseSaveFile;
    // The reconnect back-off of the followed streams (tests shorten it).
    void setStreamBackoff(const Net::Backoff::Params &params) { m_backoff = params; }
    // Follows these containers' logs (several: merged) as the only source, without a job: what
    // a job's live source does, for bench_logfollow.
    void followLive(Kube::KubeClient *client, const QString &ns, const QList<Logs::LogFollower::Source> &sources, const QString &label);

public Q_SLOTS:
    void findNext();
    void findPrevious();
    void jumpToFirstTraceback();
    // The selected lines as written, to the clipboard (at most MaxCopyLines).
    void copySelection();

private:
    struct Source
    {
        QString label;
        QString pod;           // live: the pod and its container
        QString container;
        bool previous = false;
        QString archiveKey;    // archived: the object in the bucket
        bool merged = false; // every live (current) source above, merged by time
        QByteArray tag; // the source's tag in the merged view
    };
    static constexpr int MaxCopyLines = 100000;

    void refreshSources();
    void openSource(int index);
    void closeSource();
    // A new search over the whole log; continueSearch() searches only the lines that came since.
    void startSearch();
    void continueSearch();
    void runSearch(qint64 firstLine, bool append);
    void updateStatus();
    void showMatches();
    void goToLine(qint64 line);
    void setStatus(const QString &text);
    bool openSpool();
    void startFollowing(Kube::KubeClient *client, const QString &ns, const QList<Logs::LogFollower::Source> &sources);
    void setWrap(bool wrap);
    void showContextMenu(const QPoint &at);
    void updateOverview();
    // Wrapped: the rows in view (and a page either side) get their wrapped height.
    void fitWrappedRows();

    QPointer<Session> m_session;
    QPointer<Models::JobsModel> m_jobsModel;
    QString m_jobId;
    QList<Source> m_sources;
    std::unique_ptr<QObject> m_work;             // the source's reads; deleting it drops them
    std::unique_ptr<Logs::LogFollower> m_follower;
    Net::Backoff::Params m_backoff;
    std::unique_ptr<QTemporaryFile> m_spool;
    QTimer m_refresh;                            // batches of followed lines into the model
    std::shared_ptr<std::atomic<bool>> m_cancelSearch;
    QList<qint64> m_matches;
    qint64 m_searchedTo = 0;                     // lines the shown matches cover
    bool m_searching = false;
    QTimer m_searchDelay;                        // typing: restarted by each key
    QTimer m_searchMore;                         // a followed log's new lines: not restarted

    QComboBox *m_source;
    QCheckBox *m_follow;
    QPushButton *m_traceback;
    QPushButton *m_save;
    QAction *m_wrap;
    QToolButton *m_wrapButton;
    QAction *m_copy;
    QMenu *m_contextMenu;
    MatchScrollBar *m_scrollBar;
    QLineEdit *m_search;
    QCheckBox *m_regex;
    QCheckBox *m_anyCase;
    QCheckBox *m_onlyMatching;
    QPushButton *m_previous;
    QPushButton *m_next;
    QTableView *m_view;
    QSet<int> m_wrappedRows; // rows given a wrapped height, to give back one line's
    bool m_fitting = false; // fitWrappedRows() is under way
    Models::LogLinesModel *m_lines;
    MatchesModel *m_matchesModel;
    QLabel *m_status;
};

} // namespace Starforge::Gui
