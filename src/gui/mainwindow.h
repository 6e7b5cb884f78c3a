#pragma once

// The main window: menus, a toolbar with the active connection profile, dock areas for the
// panels (jobs, capacity, events, logs, playground), and a status bar with the active profile,
// the connection state and a warning while TLS verification is off.

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

private:
    void createDocks();
    void refreshProfiles();
    void refreshStatus();
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
};

} // namespace Starforge::Gui
