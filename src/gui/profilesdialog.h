#pragma once

// Connection profiles: the list on the left (add, import a kubeconfig, duplicate, rename, make
// active, delete), the selected profile's settings on the right, grouped (Cluster, Sign-in,
// Network, ...) and named for people with each FORGE_* variable under its label. Every
// edit is validated as it is typed and shown on its row; Apply hands the batch to the
// ProfileManager, which writes secrets to the keychain and the rest to the profiles file, or
// nothing when anything fails. The dialog never holds a secret beyond the pending edit.

#include "core/util/result.h"

#include <QDialog>
#include <QPointer>
#include <QProcessEnvironment>

#include <memory>

namespace Ui {
class ProfilesDialog;
}
namespace Starforge::Config {
class ProfileManager;
}
namespace Starforge::Models {
class GroupedSettingsModel;
class ProfileListModel;
class ProfileSettingsModel;
} // namespace Starforge::Models

namespace Starforge::Gui {

class ConnectionTestDialog;
class UserPrompts;

class ProfilesDialog final : public QDialog
{
    Q_OBJECT
public:
    ProfilesDialog(Config::ProfileManager *manager, UserPrompts *prompts, QProcessEnvironment environment, QWidget *parent = nullptr);
    ~ProfilesDialog() override;

    QString currentProfile() const;
    void selectProfile(const QString &name);
    // While an operation waits for the keychain, the buttons that would start another are off.
    bool isBusy() const { return m_busy; }

    Models::ProfileSettingsModel *settingsModel() const { return m_settings; }
    // Import kubeconfig…: asks for the file and the context, then creates or updates a profile.
    void importKubeconfig();
    // Tests the shown profile's saved settings in a window of its own (Test connection…).
    ConnectionTestDialog *testConnection();
    // Where a setting is in the grouped view (column: a ProfileSettingsModel::Column).
    QModelIndex settingIndex(const QString &key, int column) const;

    void reject() override;

private:
    void addProfile();
    void duplicateProfile();
    void renameProfile();
    void deleteProfile(bool force);
    void makeActive();
    void apply();
    void resetSelectedSetting();

    void onProfileSelected();
    // Shows a profile's settings (no questions asked).
    void showProfile(const QString &name);
    void readSecrets();
    void updateButtons();
    void updateProblems();
    void updateHelp();
    // The settings model's index of the view's current row; invalid on a group's heading.
    QModelIndex currentSetting() const;
    void setBusy(bool busy);
    void showStatus(const QString &text);
    void showError(const QString &text);
    // Asks a name, checked as a profile name; nullopt when cancelled.
    std::optional<QString> askProfileName(const QString &title, const QString &label, const QString &initial);
    // Asks before dropping unapplied edits; true when there are none or the user agrees.
    bool confirmDiscard();
    // Runs after an asynchronous ProfileManager call: clears busy, reports the error or success.
    std::function<void(Result<void>)> finishing(const QString &success, std::function<void()> then = {});

    std::unique_ptr<Ui::ProfilesDialog> m_ui;
    Config::ProfileManager *m_manager;
    UserPrompts *m_prompts;
    Models::ProfileListModel *m_list;
    QProcessEnvironment m_environment;
    Models::ProfileSettingsModel *m_settings;
    Models::GroupedSettingsModel *m_grouped;
    QString m_shownProfile;
    QPointer<ConnectionTestDialog> m_testDialog;
    bool m_busy = false;
};

} // namespace Starforge::Gui
