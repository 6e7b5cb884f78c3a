#pragma once

// The main window: menus, a toolbar with the active connection profile, dock areas for the
// panels (jobs, capacity, events, logs, playground), and a status bar with the active profile,
// the connection state (server, version, features the token cannot use) and a warning while
// TLS verification is off.
//
// The window owns one core Session for the active profile (docs/design.md, "One session"): the
// clients, the connection check, the operator probe, the shared informers, the capacity and
// job trackers. Panels take the Session and follow its signals; a profile change opens it again.

#include "core/config/effectiveconfig.h"
#include "core/job/jobnotices.h"
#include "core/job/jobspec.h"

#include <QMainWindow>
#include <QPointer>
#include <QProcessEnvironment>

#include <memory>
#include <optional>

class QComboBox;
class QDockWidget;
class QLabel;
class QPushButton;

namespace Ui {
class MainWindow;
}
namespace Starforge::Config {
class EmbeddedSandbox;
class ProfileManager;
}
namespace Starforge {
class Session;
}
namespace Starforge::Job {
class JobTracker;
}

namespace Starforge::Kube {
class ExecCredentialProvider;
}

namespace Starforge::Gui {

class JobDetailPanel;
class JobsPanel;
class LogsPanel;
class PlaygroundPanel;
class DesktopNotifier;
class JobsTray;
class EventsPanel;
class UserPrompts;
class ProfilesDialog;
class ColorScheme;
class FirstRunPanel;
class NewConnectionDialog;
class SubmitWizard;

class MainWindow final : public QMainWindow
{
    Q_OBJECT
public:
    MainWindow(Config::ProfileManager *manager, UserPrompts *prompts, QProcessEnvironment environment, QWidget *parent = nullptr);
    ~MainWindow() override;

    // Opens the profiles dialog (non-modal; one at a time) and returns it.
    ProfilesDialog *showProfilesDialog();

    // The first run's three ways in (FirstRunPanel): a kubeconfig context through the profiles
    // dialog; a server and token in a small form, made a profile, made active and tested; or the
    // embedded sandbox, started as a child process and connected through its connection file
    // (no profile is written; its secrets stay in that file, which goes with it).
    void importFromKubeconfig();
    NewConnectionDialog *enterServer();
    void trySandbox();
    bool isOnSandbox() const { return !m_sandboxFile.isEmpty(); }
    // Where trySandbox() finds starforge-sandbox (default: beside the app).
    void setSandboxProgram(const QString &program) { m_sandboxProgram = program; }
    FirstRunPanel *firstRunPanel() const { return m_firstRun; }
    ColorScheme *colorScheme() const { return m_colorScheme; }
    // A problem found while starting (e.g. secrets that could not be moved into the keychain).
    void showStartupProblem(const QString &text);

    QString connectionStateText() const;
    Session *session() const { return m_session; }
    JobsPanel *jobsPanel() const { return m_jobsPanel; }
    JobDetailPanel *jobDetailPanel() const { return m_jobDetail; }
    LogsPanel *logsPanel() const { return m_logs; }
    EventsPanel *eventsPanel() const { return m_events; }
    PlaygroundPanel *playgroundPanel() const { return m_playground; }
    DesktopNotifier *notifier() const { return m_notifier; }
    JobsTray *tray() const { return m_tray; }
    // What a click on a notification does: a job id selects the job and brings its dock and the
    // window forward; "pod:NAME" the playground's pod.
    void openNotificationTarget(const QString &target);
    // The live jobs' tracker while connected (null before the session has started it).
    Job::JobTracker *jobTracker() const;
    // The submission wizard while it is open.
    SubmitWizard *wizard() const;

public Q_SLOTS:
    // Opens the submission wizard (or brings the open one forward) prefilled with spec: File ›
    // New Job, a JobSpec opened or dropped, `starforge JOBSPEC`, a Resubmit of an archived job.
    // On success the wizard closes and the Jobs panel selects the new job.
    SubmitWizard *openWizard(const Starforge::Job::JobSpec &spec);
    // The same for a path: a JobSpec file, or a code folder (its jobspec.json if it has one).
    // A path that cannot be read is reported, and nothing opens.
    SubmitWizard *openWizardAt(const QString &path);
    // File › New Job: the wizard for the last folder used, or an empty one.
    SubmitWizard *newJob();

    // The window's size and place, its docks and the tables' columns, kept beside the profiles
    // file (window.ini) when the window closes and when the app quits, and restored at start.
    void saveWindowState() const;
    bool restoreWindowState();
    QString windowStateFile() const;

protected:
    void closeEvent(QCloseEvent *event) override;
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    void createDocks();
    void followJobNotices();
    void updateTray();
    void refreshProfiles();
    void refreshStatus();
    // Connects to the active profile's cluster (secrets read from the keychain first).
    void reconnect();
    // Why the active profile cannot connect yet, or empty when it can try.
    QString settingsProblem() const;
    void showAbout();
    // recent.ini beside the profiles file: each job name's code base folder (JobSpec::sourceDir)
    // as last submitted here, for Resubmit.
    QString recentFile() const;
    void showJobsMessage(const QString &text);
    QDockWidget *addPanelDock(const QString &objectName, const QString &title, const QString &emptyText, Qt::DockWidgetArea area);

    std::unique_ptr<Ui::MainWindow> m_ui;
    Config::ProfileManager *m_manager;
    UserPrompts *m_prompts;
    QProcessEnvironment m_environment;
    QComboBox *m_profileCombo;
    QLabel *m_profileStatus;
    QLabel *m_connectionStatus;
    QLabel *m_tlsWarning;
    QPushButton *m_setupButton;
    FirstRunPanel *m_firstRun;
    ColorScheme *m_colorScheme = nullptr;
    std::unique_ptr<Config::EmbeddedSandbox> m_embedded;
    QString m_sandboxProgram;
    QString m_sandboxFile;   // the running sandbox's connection file, once it is ready
    ProfilesDialog *m_profilesDialog = nullptr;
    Session *m_session;
    QPointer<Kube::ExecCredentialProvider> m_followedCredentials;   // whose sign-in prompts open a dialog
    JobsPanel *m_jobsPanel = nullptr;
    JobDetailPanel *m_jobDetail = nullptr;
    QDockWidget *m_jobDetailDock = nullptr;
    LogsPanel *m_logs = nullptr;
    QDockWidget *m_logsDock = nullptr;
    EventsPanel *m_events = nullptr;
    PlaygroundPanel *m_playground = nullptr;
    DesktopNotifier *m_notifier = nullptr;
    JobsTray *m_tray = nullptr;
    bool m_toldAboutTray = false;
    std::unique_ptr<Job::JobNotices> m_notices;   // over the session's current tracker
    QPointer<Job::JobTracker> m_noticedTracker;
    QDockWidget *m_playgroundDock = nullptr;
    QDockWidget *m_eventsDock = nullptr;
    bool m_jobsDockWidened = false;
    QPointer<SubmitWizard> m_wizard;
};

} // namespace Starforge::Gui
