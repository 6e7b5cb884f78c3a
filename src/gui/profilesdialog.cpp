#include "gui/profilesdialog.h"

#include "core/config/kubeconfig.h"
#include "core/config/profilemanager.h"
#include "core/config/settingsschema.h"
#include "core/config/validation.h"
#include "core/logging/logging.h"
#include "core/secrets/secretstore.h"
#include "core/session/sessionsource.h"
#include "gui/connectiontestdialog.h"
#include "gui/palettefollow.h"
#include "gui/settingdelegate.h"
#include "gui/userprompts.h"
#include "models/groupedsettingsmodel.h"
#include "models/profilelistmodel.h"
#include "models/profilesettingsmodel.h"
#include "ui_profilesdialog.h"

#include <QDir>
#include <QFileInfo>
#include <QHeaderView>
#include <QPushButton>

namespace Starforge::Gui {

using Models::ProfileSettingsModel;

ProfilesDialog::ProfilesDialog(Config::ProfileManager *manager, UserPrompts *prompts, QProcessEnvironment environment, QWidget *parent)
    : QDialog(parent)
    , m_ui(std::make_unique<Ui::ProfilesDialog>())
    , m_manager(manager)
    , m_prompts(prompts)
    , m_list(new Models::ProfileListModel(manager, this))
    , m_environment(environment)
    , m_settings(new ProfileSettingsModel(manager, std::move(environment), this))
    , m_grouped(new Models::GroupedSettingsModel(this))
{
    m_ui->setupUi(this);
    m_ui->profileList->setModel(m_list);
    m_grouped->setSourceModel(m_settings);
    m_ui->settingsView->setModel(m_grouped);
    m_ui->settingsView->setItemDelegateForColumn(ProfileSettingsModel::KeyColumn, new SettingNameDelegate(this));
    m_ui->settingsView->setItemDelegateForColumn(ProfileSettingsModel::ValueColumn, new SettingDelegate(this));
    m_ui->settingsView->header()->setStretchLastSection(false);
    m_ui->settingsView->header()->setSectionResizeMode(ProfileSettingsModel::KeyColumn, QHeaderView::ResizeToContents);
    m_ui->settingsView->header()->setSectionResizeMode(ProfileSettingsModel::ValueColumn, QHeaderView::Stretch);
    m_ui->settingsView->header()->setSectionResizeMode(ProfileSettingsModel::SourceColumn, QHeaderView::ResizeToContents);
    m_ui->splitter->setStretchFactor(1, 1);
    followTone(m_ui->problemLabel, Tones::Tone::Error);
    followQuiet(m_ui->helpLabel);
    m_ui->problemLabel->hide();

    connect(m_ui->addButton, &QPushButton::clicked, this, &ProfilesDialog::addProfile);
    connect(m_ui->duplicateButton, &QPushButton::clicked, this, &ProfilesDialog::duplicateProfile);
    connect(m_ui->renameButton, &QPushButton::clicked, this, &ProfilesDialog::renameProfile);
    connect(m_ui->deleteButton, &QPushButton::clicked, this, [this] { deleteProfile(false); });
    connect(m_ui->importButton, &QPushButton::clicked, this, &ProfilesDialog::importKubeconfig);
    connect(m_ui->activateButton, &QPushButton::clicked, this, &ProfilesDialog::makeActive);
    connect(m_ui->applyButton, &QPushButton::clicked, this, &ProfilesDialog::apply);
    connect(m_ui->revertButton, &QPushButton::clicked, m_settings, &ProfileSettingsModel::revert);
    connect(m_ui->resetButton, &QPushButton::clicked, this, &ProfilesDialog::resetSelectedSetting);
    connect(m_ui->testButton, &QPushButton::clicked, this, &ProfilesDialog::testConnection);
    connect(m_ui->buttonBox, &QDialogButtonBox::rejected, this, &ProfilesDialog::reject);
    connect(m_ui->profileList->selectionModel(), &QItemSelectionModel::currentChanged, this, &ProfilesDialog::onProfileSelected);
    connect(m_ui->settingsView->selectionModel(), &QItemSelectionModel::currentChanged, this, &ProfilesDialog::updateHelp);
    connect(m_settings, &ProfileSettingsModel::pendingChanged, this, [this] {
        updateProblems();
        updateButtons();
        updateHelp();
    });
    connect(m_grouped, &QAbstractItemModel::modelReset, this, [this] {
        // A profile shown: every group open, its heading across the whole row. Selection models
        // forget their current index on reset; keep the help line meaningful.
        for (int row = 0; row < m_grouped->rowCount(); ++row) {
            m_ui->settingsView->setFirstColumnSpanned(row, QModelIndex(), true);
        }
        m_ui->settingsView->expandAll();
        updateHelp();
    });
    connect(m_list, &QAbstractItemModel::modelReset, this, [this] {
        // After a rename or delete the list is rebuilt: keep showing the profile if it still exists.
        const int row = m_list->rowOf(m_shownProfile);
        if (row >= 0) {
            const QSignalBlocker blocker(m_ui->profileList->selectionModel());
            m_ui->profileList->setCurrentIndex(m_list->index(row));
        } else {
            showProfile(QString());
        }
    });

    const QString active = manager->store().activeProfile();
    if (!active.isEmpty()) {
        selectProfile(active);
    } else if (m_list->rowCount() > 0) {
        selectProfile(m_list->nameAt(0));
    }
    updateButtons();
    updateHelp();
}

ProfilesDialog::~ProfilesDialog()
{
    // An open editor commits while the dialog is torn down; the form is gone by then.
    disconnect(m_settings, nullptr, this, nullptr);
    disconnect(m_list, nullptr, this, nullptr);
}

QString ProfilesDialog::currentProfile() const
{
    return m_shownProfile;
}

void ProfilesDialog::selectProfile(const QString &name)
{
    const int row = m_list->rowOf(name);
    if (row < 0) {
        return;
    }
    m_ui->profileList->setCurrentIndex(m_list->index(row));
    if (m_shownProfile != name) {
        // The list kept its current row through a reset, so no selection signal came.
        showProfile(name);
    }
}

void ProfilesDialog::showProfile(const QString &name)
{
    m_shownProfile = name;
    m_settings->setProfile(name);
    m_ui->profileHeading->setText(name.isEmpty() ? QString() : tr("<b>%1</b>%2").arg(name.toHtmlEscaped(),
        name == m_manager->store().activeProfile() ? tr(" — active") : QString()));
    readSecrets();
    updateProblems();
    updateButtons();
    updateHelp();
}

void ProfilesDialog::reject()
{
    if (m_busy || !confirmDiscard()) {
        return;
    }
    QDialog::reject();
}

bool ProfilesDialog::confirmDiscard()
{
    if (!m_settings->hasPendingChanges()) {
        return true;
    }
    return m_prompts->confirm(this, tr("Unapplied changes"),
                              tr("The changes to profile %1 have not been applied. Discard them?").arg(m_shownProfile));
}

void ProfilesDialog::onProfileSelected()
{
    const QString name = m_list->nameAt(m_ui->profileList->currentIndex().row());
    if (name == m_shownProfile) {
        return;
    }
    if (!confirmDiscard()) {
        // Stay on the profile being edited.
        const QSignalBlocker blocker(m_ui->profileList->selectionModel());
        m_ui->profileList->setCurrentIndex(m_list->index(m_list->rowOf(m_shownProfile)));
        return;
    }
    showProfile(name);
}

void ProfilesDialog::readSecrets()
{
    const QString name = m_shownProfile;
    if (name.isEmpty()) {
        return;
    }
    m_manager->secrets()->readAll(name, this, [this, name](Result<QMap<QString, QString>> secrets) {
        if (name != m_shownProfile) {
            return; // the user moved on
        }
        if (!secrets) {
            m_settings->setKeychainProblem(secrets.error().message);
            showError(tr("The keychain could not be read: %1").arg(secrets.error().message));
            return;
        }
        QMap<QString, bool> present;
        for (const QString &key : Config::SettingsSchema::secretKeys()) {
            present.insert(key, secrets->contains(key));
        }
        m_settings->setSecretsPresent(present);
    });
}

void ProfilesDialog::updateButtons()
{
    const bool selected = !m_shownProfile.isEmpty();
    const bool idle = !m_busy;
    m_ui->addButton->setEnabled(idle);
    m_ui->importButton->setEnabled(idle);
    m_ui->duplicateButton->setEnabled(idle && selected);
    m_ui->renameButton->setEnabled(idle && selected);
    m_ui->testButton->setEnabled(idle && selected);
    m_ui->deleteButton->setEnabled(idle && selected);
    m_ui->activateButton->setEnabled(idle && selected && m_shownProfile != m_manager->store().activeProfile());
    m_ui->settingsView->setEnabled(idle && selected);
    m_ui->resetButton->setEnabled(idle && selected && currentSetting().isValid());
    m_ui->revertButton->setEnabled(idle && m_settings->hasPendingChanges());
    m_ui->applyButton->setEnabled(idle && m_settings->hasPendingChanges() && !m_settings->hasErrors());
    m_ui->buttonBox->setEnabled(idle);
}

void ProfilesDialog::updateProblems()
{
    const QStringList errors = m_settings->errors();
    m_ui->problemLabel->setText(errors.join(u'\n'));
    m_ui->problemLabel->setVisible(!errors.isEmpty());
}

QModelIndex ProfilesDialog::currentSetting() const
{
    return m_grouped->mapToSource(m_ui->settingsView->currentIndex());
}

QModelIndex ProfilesDialog::settingIndex(const QString &key, int column) const
{
    return m_grouped->indexOfKey(key, column);
}

void ProfilesDialog::updateHelp()
{
    const QModelIndex viewed = m_ui->settingsView->currentIndex();
    const QModelIndex current = currentSetting();
    if (m_shownProfile.isEmpty()) {
        m_ui->helpLabel->setText(m_list->rowCount() == 0 ? tr("No profiles yet. Add one, or import a context from a kubeconfig file.")
                                                         : tr("Select a profile to see and edit its settings."));
    } else if (m_grouped->isGroup(viewed)) {
        m_ui->helpLabel->setText(QStringLiteral("<b>%1</b> — %2").arg(viewed.siblingAtColumn(0).data().toString().toHtmlEscaped(),
                                                                       viewed.data(Models::GroupedSettingsModel::AboutRole).toString().toHtmlEscaped()));
    } else if (!current.isValid()) {
        m_ui->helpLabel->setText(tr("Select a setting to see what it means. Environment variables of the same name override "
                                    "the profile while they are set."));
    } else {
        const QModelIndex name = viewed.siblingAtColumn(ProfileSettingsModel::KeyColumn);
        m_ui->helpLabel->setText(QStringLiteral("<b>%1</b> <code>%2</code> — %3")
                                     .arg(name.data().toString().toHtmlEscaped(), name.data(ProfileSettingsModel::KeyRole).toString(),
                                          name.data(ProfileSettingsModel::HelpRole).toString().toHtmlEscaped()));
    }
    m_ui->resetButton->setEnabled(!m_busy && !m_shownProfile.isEmpty() && current.isValid());
}

void ProfilesDialog::setBusy(bool busy)
{
    m_busy = busy;
    if (busy) {
        showStatus(tr("Waiting for the keychain…"));
    }
    updateButtons();
}

void ProfilesDialog::showStatus(const QString &text)
{
    followPalette(m_ui->statusLabel, [](const QPalette &) { return QString(); });
    m_ui->statusLabel->setText(text);
}

void ProfilesDialog::showError(const QString &text)
{
    followTone(m_ui->statusLabel, Tones::Tone::Error);
    m_ui->statusLabel->setText(Logging::redact(text));
}

std::function<void(Result<void>)> ProfilesDialog::finishing(const QString &success, std::function<void()> then)
{
    return [this, success, then](Result<void> result) {
        setBusy(false);
        if (!result) {
            showError(result.error().message);
            return;
        }
        showStatus(success);
        if (then) {
            then();
        }
        updateButtons();
    };
}

std::optional<QString> ProfilesDialog::askProfileName(const QString &title, const QString &label, const QString &initial)
{
    QString suggestion = initial;
    while (true) {
        const auto answer = m_prompts->askText(this, title, label, suggestion);
        if (!answer) {
            return std::nullopt;
        }
        const auto valid = Validation::profileName(*answer);
        if (!valid) {
            m_prompts->inform(this, title, valid.error().message);
            suggestion = *answer;
            continue;
        }
        if (m_manager->store().contains(*valid)) {
            m_prompts->inform(this, title, tr("A profile named %1 already exists; choose another name.").arg(*valid));
            suggestion = *answer;
            continue;
        }
        return *valid;
    }
}

void ProfilesDialog::addProfile()
{
    if (!confirmDiscard()) {
        return;
    }
    const auto name = askProfileName(tr("Add profile"), tr("Name of the new profile (letters, digits, '.', '_', '-'):"), QString());
    if (!name) {
        return;
    }
    m_settings->revert();
    setBusy(true);
    m_manager->addProfile(*name, this, finishing(tr("Created profile %1. Set its API server and token to connect.").arg(*name), [this, n = *name] {
        selectProfile(n);
    }));
}

void ProfilesDialog::duplicateProfile()
{
    const QString source = m_shownProfile;
    if (source.isEmpty() || !confirmDiscard()) {
        return;
    }
    const auto name = askProfileName(tr("Duplicate profile"), tr("Name of the copy of %1:").arg(source), source + QStringLiteral("-copy"));
    if (!name) {
        return;
    }
    m_settings->revert();
    setBusy(true);
    m_manager->duplicateProfile(source, *name, this, finishing(tr("Duplicated %1 as %2, secrets included.").arg(source, *name), [this, n = *name] {
        selectProfile(n);
    }));
}

void ProfilesDialog::renameProfile()
{
    const QString oldName = m_shownProfile;
    if (oldName.isEmpty() || !confirmDiscard()) {
        return;
    }
    const auto name = askProfileName(tr("Rename profile"), tr("New name of %1:").arg(oldName), oldName);
    if (!name) {
        return;
    }
    m_settings->revert();
    setBusy(true);
    m_manager->renameProfile(oldName, *name, this, [this, oldName, n = *name](Result<void> result) {
        setBusy(false);
        if (!result) {
            // When the keychain failed the file still has the old name; keep showing it.
            selectProfile(m_manager->store().contains(oldName) ? oldName : n);
            showError(result.error().message);
            return;
        }
        selectProfile(n);
        showStatus(tr("Renamed %1 to %2.").arg(oldName, n));
        updateButtons();
    });
}

void ProfilesDialog::deleteProfile(bool force)
{
    const QString name = m_shownProfile;
    if (name.isEmpty()) {
        return;
    }
    if (!force && !m_prompts->confirm(this, tr("Delete profile"),
                                      tr("Delete profile %1 and its secrets in the keychain? This cannot be undone.").arg(name))) {
        return;
    }
    m_settings->revert();
    setBusy(true);
    auto warning = std::make_shared<QString>();
    m_manager->removeProfile(
        name, force, this,
        [this, name, force, warning](Result<void> result) {
            setBusy(false);
            if (!result) {
                if (!force && result.error().code == Error::Code::Unavailable
                    && m_prompts->confirm(this, tr("Keychain unavailable"),
                                          tr("%1\n\nDelete the profile anyway and leave its secrets in the keychain?").arg(result.error().message))) {
                    deleteProfile(true);
                    return;
                }
                showError(result.error().message);
                return;
            }
            if (!warning->isEmpty()) {
                showError(tr("Deleted profile %1, but %2").arg(name, *warning));
            } else {
                showStatus(tr("Deleted profile %1.").arg(name));
            }
            updateButtons();
            updateHelp();
        },
        [warning](const QString &text) { *warning = text; });
}

void ProfilesDialog::importKubeconfig()
{
    if (!confirmDiscard()) {
        return;
    }
    const QStringList defaults = Config::Kubeconfig::defaultPaths();
    const QString file = m_prompts->openFile(this, tr("Import kubeconfig"), defaults.value(0, QDir::homePath()));
    if (file.isEmpty()) {
        return;
    }
    const auto config = Config::Kubeconfig::load({file});
    if (!config) {
        showError(config.error().message);
        return;
    }
    QStringList contexts = config->contextNames();
    if (contexts.isEmpty()) {
        showError(tr("%1 defines no contexts; there is nothing to import.").arg(file));
        return;
    }
    // The current context first, so accepting the default imports what kubectl uses.
    if (contexts.removeOne(config->currentContext())) {
        contexts.prepend(config->currentContext());
    }
    QString context = contexts.first();
    if (contexts.size() > 1) {
        const auto chosen = m_prompts->chooseItem(this, tr("Import kubeconfig"), tr("Context to import from %1:").arg(QFileInfo(file).fileName()), contexts);
        if (!chosen) {
            return;
        }
        context = *chosen;
    }
    const auto imported = config->importContext(context);
    if (!imported) {
        showError(imported.error().message);
        return;
    }
    // Re-importing into an existing profile is allowed: it refreshes the connection settings.
    QString name = Config::ProfileManager::profileNameFromContext(context);
    while (true) {
        const auto answer = m_prompts->askText(this, tr("Import kubeconfig"),
                                               tr("Profile to create or update from context %1:").arg(context), name);
        if (!answer) {
            return;
        }
        const auto valid = Validation::profileName(*answer);
        if (!valid) {
            m_prompts->inform(this, tr("Import kubeconfig"), valid.error().message);
            name = *answer;
            continue;
        }
        name = *valid;
        if (m_manager->store().contains(name)
            && !m_prompts->confirm(this, tr("Import kubeconfig"),
                                   tr("Profile %1 exists. Replace its API server, CA, TLS, proxy and credential settings with those of context %2?").arg(name, context))) {
            continue;
        }
        break;
    }
    m_settings->revert();
    QString message = tr("Imported context %1 into profile %2.").arg(context, name);
    for (const QString &field : imported->taken) {
        message += u'\n' + tr("Took %1").arg(field);
    }
    for (const QString &note : imported->notes) {
        message += u'\n' + tr("Note: %1").arg(note);
    }
    setBusy(true);
    m_manager->importKubeconfig(*imported, name, this, finishing(message, [this, name] {
        const bool shown = m_shownProfile == name;
        selectProfile(name);
        if (shown) {
            readSecrets(); // the token may have changed
        }
    }));
}

void ProfilesDialog::makeActive()
{
    if (m_shownProfile.isEmpty()) {
        return;
    }
    if (auto set = m_manager->setActiveProfile(m_shownProfile); !set) {
        showError(set.error().message);
        return;
    }
    m_ui->profileHeading->setText(tr("<b>%1</b> — active").arg(m_shownProfile.toHtmlEscaped()));
    showStatus(tr("%1 is the active profile.").arg(m_shownProfile));
    updateButtons();
}

void ProfilesDialog::apply()
{
    if (m_shownProfile.isEmpty() || !m_settings->hasPendingChanges() || m_settings->hasErrors()) {
        return;
    }
    const QString name = m_shownProfile;
    const auto changes = m_settings->pendingChanges();
    setBusy(true);
    m_manager->setValues(name, changes, false, this, [this, name, count = changes.size()](Result<void> result) {
        setBusy(false);
        if (!result) {
            showError(result.error().message); // the edits stay pending, so nothing typed is lost
            return;
        }
        m_settings->revert();
        readSecrets();
        showStatus(tr("Saved %n change(s) to profile %1.", nullptr, static_cast<int>(count)).arg(name));
        updateButtons();
    });
}

void ProfilesDialog::resetSelectedSetting()
{
    const QModelIndex current = currentSetting();
    if (current.isValid()) {
        m_settings->resetRow(current.row());
    }
}

ConnectionTestDialog *ProfilesDialog::testConnection()
{
    const auto profile = m_manager->store().profile(m_shownProfile);
    if (!profile) return nullptr;
    if (!m_testDialog) {
        m_testDialog = new ConnectionTestDialog(m_manager->secrets(), m_environment, this);
        m_testDialog->setAttribute(Qt::WA_DeleteOnClose);
    }
    // What is tested is what a connection would use: the saved profile, not unapplied edits.
    if (m_settings->hasPendingChanges()) {
        showStatus(tr("Testing the saved settings of %1; apply your edits to test them.").arg(m_shownProfile));
    }
    m_testDialog->start(SessionSource::ofProfile(*profile), tr("profile %1").arg(m_shownProfile));
    m_testDialog->show();
    m_testDialog->raise();
    return m_testDialog;
}

} // namespace Starforge::Gui
