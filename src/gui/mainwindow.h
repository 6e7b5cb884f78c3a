#pragma once

// The main window: menus, a toolbar with the active connection profile, dock areas for the
// panels (jobs, capacity, events, logs, playground), and a status bar with the active profile,
// the connection state (server, version, features the token cannot use) and a warning while
// TLS verification is off.

#include <QMainWindow>
#include <QProcessEnvironment>

#include <memory>

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
}

namespace Starforge::Gui {

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

private:
    void createDocks();
    void refreshProfiles();
    void refreshStatus();
    // Connects to the active profile's cluster (secrets read from the keychain first).
    void reconnect();
    // Why the active profile cannot connect yet, or empty when it can try.
    QString settingsProblem() const;
    void showAbout();
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
};

} // namespace Starforge::Gui
