#pragma once

// The main window: menus, a toolbar with the active connection profile, dock areas for the
// panels (jobs, capacity, events, logs, playground), and a status bar with the active profile,
// the connection state (server, version, features the token cannot use) and a warning while
// TLS verification is off.
//
// Once connected it runs the jobs side of the session: the S3 client for the profile's bucket
// (the history), the OperatorProbe (which KubeRay release enforces the pre-running deadline)
// and then the JobTracker, all torn down before the connection changes.

#include "core/config/effectiveconfig.h"

#include <QMainWindow>
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
class ProfileManager;
}
namespace Starforge::Kube {
class ClusterConnection;
class OperatorProbe;
struct OperatorVersion;
}
namespace Starforge::Job {
class JobTracker;
}
namespace Starforge::S3 {
class S3Client;
}

namespace Starforge::Gui {

class JobsPanel;
class UserPrompts;
class ProfilesDialog;

class MainWindow final : public QMainWindow
{
    Q_OBJECT
public:
    MainWindow(Config::ProfileManager *manager, UserPrompts *prompts, QProcessEnvironment environment, QWidget *parent = nullptr);
    ~MainWindow() override;

    // Opens the profiles dialog (non-modal; one at a time) and returns it.
    ProfilesDialog *showProfilesDialog();
    // A problem found while starting (e.g. secrets that could not be moved into the keychain).
    void showStartupProblem(const QString &text);

    QString connectionStateText() const;
    Kube::ClusterConnection *connection() const { return m_connection; }
    JobsPanel *jobsPanel() const { return m_jobsPanel; }
    // The live jobs' tracker while connected (null before the operator probe has answered).
    Job::JobTracker *jobTracker() const { return m_tracker.get(); }

private:
    void createDocks();
    void refreshProfiles();
    void refreshStatus();
    // Connects to the active profile's cluster (secrets read from the keychain first).
    void reconnect();
    // Why the active profile cannot connect yet, or empty when it can try.
    QString settingsProblem() const;
    void showAbout();
    // The jobs side of a connected session: bucket, probe, then tracker; and its teardown.
    void startJobs();
    void startTracker(const Kube::OperatorVersion &found);
    void stopJobs(const QString &why);
    QString jobsPlaceholder() const;
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
    ProfilesDialog *m_profilesDialog = nullptr;
    Kube::ClusterConnection *m_connection;
    quint64 m_connectGeneration = 0;   // a newer reconnect() makes older keychain answers moot
    JobsPanel *m_jobsPanel = nullptr;
    bool m_jobsDockWidened = false;
    std::optional<Config::EffectiveConfig> m_config;   // the settings connected with, secrets included
    // Declared in teardown order reversed: the tracker goes first, then the probe, then the bucket.
    std::unique_ptr<S3::S3Client> m_s3;
    std::unique_ptr<Kube::OperatorProbe> m_probe;
    std::unique_ptr<Job::JobTracker> m_tracker;
};

} // namespace Starforge::Gui
