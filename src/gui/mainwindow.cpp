#include "gui/mainwindow.h"

#include "core/config/effectiveconfig.h"
#include "core/config/embeddedsandbox.h"
#include "core/config/profilemanager.h"
#include "core/i18n/translations.h"
#include "core/job/tracker.h"
#include "core/session/session.h"
#include "core/kube/execcredentialprovider.h"
#include "core/kube/kubeclient.h"
#include "gui/capacity/capacityheatmapview.h"
#include "gui/capacity/capacitypanel.h"
#include "gui/jobs/comparewindow.h"
#include "gui/jobs/jobdetailpanel.h"
#include "gui/jobs/jobspanel.h"
#include "gui/events/eventspanel.h"
#include "gui/events/timelineview.h"
#include "gui/logs/logspanel.h"
#include "gui/notify/desktopnotifier.h"
#include "gui/notify/jobstray.h"
#include "gui/palettefollow.h"
#include "gui/playground/launchdialog.h"
#include "gui/playground/playgroundpanel.h"
#include "gui/colorscheme.h"
#include "gui/firstrunpanel.h"
#include "gui/newconnectiondialog.h"
#include "gui/signindialog.h"
#include "gui/profilesdialog.h"
#include "gui/userprompts.h"
#include "gui/wizard/submitwizard.h"
#include "ui_mainwindow.h"

#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QHeaderView>
#include <QScreen>
#include <QSettings>
#include <QDockWidget>
#include <QListView>
#include <QTableView>
#include <QTextBrowser>
#include <QJsonDocument>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMenu>
#include <QMimeData>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QSignalBlocker>
#include <QLocale>
#include <QStatusBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace {

// The window is a person: an exec plugin may ask them to sign in (SignInDialog).
Starforge::SessionOptions guiSessionOptions()
{
    Starforge::SessionOptions options;
    options.personPresent = true;
    options.followProgress = true;   // the Jobs panel's Progress column and the Job dock's plot
    options.followPendingDiagnoses = true;   // the Jobs panel's Message column: why a job waits
    // Events and job states kept on this machine (docs/events.md, "The local journal"), so the
    // event timeline still shows them after Kubernetes has dropped them and after a restart.
    options.journalEvents = true;
    options.followPlayground = true;
    return options;
}

} // namespace

namespace Starforge::Gui {

MainWindow::MainWindow(Config::ProfileManager *manager, UserPrompts *prompts, QProcessEnvironment environment, QWidget *parent)
    : QMainWindow(parent)
    , m_ui(std::make_unique<Ui::MainWindow>())
    , m_manager(manager)
    , m_prompts(prompts)
    , m_environment(std::move(environment))
    , m_profileCombo(new QComboBox(this))
    , m_profileStatus(new QLabel(this))
    , m_connectionStatus(new QLabel(this))
    , m_tlsWarning(new QLabel(this))
    , m_setupButton(new QPushButton(tr("Set up a connection…"), this))
    , m_firstRun(new FirstRunPanel(this))
    , m_sandboxProgram(QCoreApplication::applicationDirPath() + QStringLiteral("/starforge-sandbox"))
    , m_session(new Session(manager->secrets(), m_environment, guiSessionOptions(), this))
{
    m_ui->setupUi(this);
    setWindowIcon(QIcon(QStringLiteral(":/starforge/starforge.svg")));

    m_profileCombo->setObjectName(QStringLiteral("profileCombo"));
    m_profileCombo->setMinimumContentsLength(16);
    m_profileCombo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_profileCombo->setToolTip(tr("The connection profile the window works with"));
    m_profileCombo->setAccessibleName(tr("Connection profile"));
    // On Linux a combo box's accessible name is its current text; what it is for comes from its
    // buddy label (AT-SPI's labelled-by relation).
    auto *profileLabel = new QLabel(tr("Profile: "), this);
    profileLabel->setObjectName(QStringLiteral("profileComboLabel"));
    profileLabel->setBuddy(m_profileCombo);
    m_ui->mainToolBar->addWidget(profileLabel);
    m_ui->mainToolBar->addWidget(m_profileCombo);
    m_ui->mainToolBar->addAction(m_ui->profilesAction);
    // Qt's overflow button, shown when the window is too narrow for the toolbar, is an icon alone.
    if (auto *more = m_ui->mainToolBar->findChild<QToolButton *>(QStringLiteral("qt_toolbar_ext_button"))) {
        more->setAccessibleName(tr("More tools"));
    }

    m_profileStatus->setObjectName(QStringLiteral("profileStatus"));
    m_connectionStatus->setObjectName(QStringLiteral("connectionStatus"));
    m_tlsWarning->setObjectName(QStringLiteral("tlsWarning"));
    m_tlsWarning->setStyleSheet(QStringLiteral("QLabel { color: white; background: #c01c28; padding: 1px 6px; border-radius: 3px; }"));
    m_tlsWarning->setText(tr("TLS verification is off"));
    m_tlsWarning->setToolTip(tr("FORGE_K8S_INSECURE_SKIP_TLS_VERIFY is on: anyone on the network path can read and change "
                                "what the app sends, including the token. Use it only with throw-away clusters."));
    statusBar()->addWidget(m_profileStatus);
    statusBar()->addWidget(m_connectionStatus, 1);
    statusBar()->addPermanentWidget(m_tlsWarning);

    m_setupButton->setObjectName(QStringLiteral("setupButton"));
    m_ui->centralLayout->addWidget(m_firstRun, 0, Qt::AlignHCenter);
    m_ui->centralLayout->addWidget(m_setupButton, 0, Qt::AlignHCenter);
    connect(m_firstRun, &FirstRunPanel::importRequested, this, &MainWindow::importFromKubeconfig);
    connect(m_firstRun, &FirstRunPanel::enterServerRequested, this, &MainWindow::enterServer);
    connect(m_firstRun, &FirstRunPanel::sandboxRequested, this, &MainWindow::trySandbox);
    m_ui->centralLayout->addStretch(1);
    m_ui->centralLayout->insertStretch(0, 1);

    createDocks();
    if (restoreWindowState()) {
        m_jobsDockWidened = true;   // the user's own arrangement stays
    } else if (const QScreen *screen = this->screen()) {
        // A first run: larger than the form's 1280 x 800 on a large screen, so every panel has room.
        const QRect available = screen->availableGeometry();
        resize(std::max(width(), std::min(1680, available.width() * 9 / 10)), std::max(height(), std::min(1050, available.height() * 9 / 10)));
    }
    // Desktop notifications: on unless turned off in View (kept in window.ini's preferences).
    m_notifier = new DesktopNotifier(this);
    auto *notifications = new QAction(tr("Desktop &Notifications"), this);
    notifications->setObjectName(QStringLiteral("notificationsAction"));
    notifications->setCheckable(true);
    notifications->setToolTip(tr("Tell me when a job of mine ends or a playground pod is about to stop, while I look elsewhere"));
    notifications->setChecked(QSettings(windowStateFile(), QSettings::IniFormat).value(QStringLiteral("preferences/notifications"), true).toBool());
    m_notifier->setEnabled(notifications->isChecked());
    connect(notifications, &QAction::toggled, this, [this](bool on) {
        m_notifier->setEnabled(on);
        QSettings(windowStateFile(), QSettings::IniFormat).setValue(QStringLiteral("preferences/notifications"), on);
    });
    m_ui->viewMenu->addSeparator();
    m_ui->viewMenu->addAction(notifications);
    // The tray icon: off unless asked for; while on, closing the window keeps the app running.
    m_tray = new JobsTray(this);
    auto *trayAction = new QAction(tr("Show in System &Tray"), this);
    trayAction->setObjectName(QStringLiteral("trayAction"));
    trayAction->setCheckable(true);
    trayAction->setToolTip(tr("An icon with the count of active jobs; closing the window keeps following them, so their logs are archived"));
    trayAction->setChecked(QSettings(windowStateFile(), QSettings::IniFormat).value(QStringLiteral("preferences/tray"), false).toBool());
    m_tray->setEnabled(trayAction->isChecked());
    connect(trayAction, &QAction::toggled, this, [this](bool on) {
        m_tray->setEnabled(on);
        QSettings(windowStateFile(), QSettings::IniFormat).setValue(QStringLiteral("preferences/tray"), on);
    });
    m_ui->viewMenu->addAction(trayAction);
    // Light or dark: as the desktop says (the Settings portal), or fixed by the person.
    m_colorScheme = new ColorScheme(this);
    QMenu *appearance = m_ui->viewMenu->addMenu(tr("&Appearance"));
    appearance->setObjectName(QStringLiteral("appearanceMenu"));
    auto *schemes = new QActionGroup(this);
    const ColorScheme::Mode saved = ColorScheme::modeFromName(
        QSettings(windowStateFile(), QSettings::IniFormat).value(QStringLiteral("preferences/appearance")).toString());
    for (const auto &[mode, text] : {std::pair{ColorScheme::Mode::System, tr("As the &System Says")}, std::pair{ColorScheme::Mode::Light, tr("&Light")},
                                     std::pair{ColorScheme::Mode::Dark, tr("&Dark")}}) {
        QAction *action = appearance->addAction(text);
        action->setObjectName(QStringLiteral("appearance_") + ColorScheme::modeName(mode));
        action->setCheckable(true);
        action->setChecked(mode == saved);
        schemes->addAction(action);
        connect(action, &QAction::triggered, this, [this, mode = mode] {
            m_colorScheme->setMode(mode);
            QSettings(windowStateFile(), QSettings::IniFormat).setValue(QStringLiteral("preferences/appearance"), ColorScheme::modeName(mode));
        });
    }
    m_colorScheme->setMode(saved);
    // The language: the system's, or one fixed here. Every text is built when its window is, so
    // a change takes effect at the next start (main.cpp reads the choice before any window).
    QMenu *languages = m_ui->viewMenu->addMenu(tr("&Language"));
    languages->setObjectName(QStringLiteral("languageMenu"));
    auto *languageGroup = new QActionGroup(this);
    const QString savedLanguage = I18n::savedLanguage();
    const QList<std::pair<QString, QString>> choices = {
        {QString(), tr("As the &System Says")},
        // untranslated: each language by its own name, so a person who cannot read the current one finds theirs
        {QStringLiteral("en"), QStringLiteral("English")},
        {QStringLiteral("de"), QLocale(QLocale::German).nativeLanguageName()},
        {QStringLiteral("zh_CN"), QLocale(QLocale::Chinese, QLocale::SimplifiedHanScript, QLocale::China).nativeLanguageName()}};
    for (const auto &[code, text] : choices) {
        QAction *action = languages->addAction(text);
        action->setObjectName(QStringLiteral("language_") + (code.isEmpty() ? QStringLiteral("system") : code));
        action->setCheckable(true);
        action->setChecked(code == savedLanguage);
        languageGroup->addAction(action);
        connect(action, &QAction::triggered, this, [this, code = code] {
            I18n::saveLanguage(code);
            statusBar()->showMessage(tr("Starforge speaks the new language from its next start."), 10000);
        });
    }
    connect(m_tray, &JobsTray::jobRequested, this, &MainWindow::openNotificationTarget);
    connect(m_tray, &JobsTray::showRequested, this, [this] { openNotificationTarget(QString()); });
    connect(m_tray, &JobsTray::quitRequested, qApp, &QCoreApplication::quit, Qt::QueuedConnection);
    connect(m_notifier, &DesktopNotifier::activated, this, &MainWindow::openNotificationTarget);
    connect(m_playground, &PlaygroundPanel::podExpiringSoon, this, [this](const QString &pod, const QString &model, qint64 secondsLeft) {
        m_notifier->notify(tr("%1 stops in %2 min").arg(model).arg(std::max<qint64>(1, secondsLeft / 60)),
                           tr("The playground pod %1 reaches its time to live; Extend in the Playground launches a new one.").arg(pod),
                           QStringLiteral("pod:") + pod);
    });

    // Quitting without closing the window (SIGTERM, the session ending) keeps the layout too.
    connect(qApp, &QCoreApplication::aboutToQuit, this, &MainWindow::saveWindowState);

    connect(m_ui->profilesAction, &QAction::triggered, this, [this] { showProfilesDialog(); });
    connect(m_setupButton, &QPushButton::clicked, this, [this] { showProfilesDialog(); });
    connect(m_ui->quitAction, &QAction::triggered, this, &QWidget::close);
    connect(m_ui->newJobAction, &QAction::triggered, this, [this] { newJob(); });
    connect(m_ui->openJobSpecAction, &QAction::triggered, this, [this] {
        const QString path = m_prompts->openFile(this, tr("Open JobSpec"), QDir::currentPath());
        if (!path.isEmpty()) openWizardAt(path);
    });
    m_ui->mainToolBar->insertAction(m_ui->mainToolBar->actions().value(0), m_ui->newJobAction);
    setAcceptDrops(true);
    connect(m_ui->aboutAction, &QAction::triggered, this, &MainWindow::showAbout);
    connect(m_manager, &Config::ProfileManager::profilesChanged, this, [this] {
        refreshProfiles();
        reconnect();
    });
    connect(m_manager, &Config::ProfileManager::profileChanged, this, [this](const QString &name) {
        refreshStatus();
        if (name == m_manager->store().activeProfile()) {
            reconnect();
        }
    });
    connect(m_session, &Session::stateChanged, this, &MainWindow::refreshStatus);
    connect(m_session, &Session::featuresChanged, this, &MainWindow::refreshStatus);
    connect(m_session, &Session::notice, this, &MainWindow::showJobsMessage);
    // Each connect makes a new client; an exec plugin that talks to the person gets a dialog.
    connect(m_session, &Session::partsChanged, this, [this] {
        Kube::ExecCredentialProvider *credentials = m_session->kube() ? m_session->kube()->credentials() : nullptr;
        if (credentials && credentials != m_followedCredentials) {
            m_followedCredentials = credentials;
            SignInDialog::follow(credentials, this);
        }
    });
    m_jobsPanel->setSession(m_session);
    m_playground->setSession(m_session);
    connect(m_session, &Session::partsChanged, this, &MainWindow::followJobNotices);
    // A finished checkpoint in the Job dock, served in the playground: the launch form, filled in.
    connect(m_jobDetail, &JobDetailPanel::chatRequested, this, [this](const Playground::LaunchRequest &request) {
        m_playgroundDock->show();
        m_playgroundDock->raise();
        m_playground->openLaunchDialog(request);
    });
    connect(m_jobsPanel, &JobsPanel::compareRequested, this, [this](const QList<Job::JobRecord> &jobs) {
        auto *compare = new CompareWindow(m_session, jobs, m_prompts, this);
        compare->setAttribute(Qt::WA_DeleteOnClose);
        compare->show();
    });
    connect(m_jobsPanel, &JobsPanel::statusMessage, this, &MainWindow::showJobsMessage);
    // The Logs dock follows the selection while it is shown; Open logs brings it forward.
    m_logs->setSession(m_session);
    m_logs->setJobsModel(m_jobsPanel->model());
    connect(m_jobsPanel, &JobsPanel::selectedJobChanged, this, [this](const QString &id) {
        if (!m_logsDock->visibleRegion().isEmpty())
            m_logs->showJob(id);
    });
    connect(m_logsDock, &QDockWidget::visibilityChanged, this, [this](bool visible) {
        if (visible)
            m_logs->showJob(m_jobsPanel->selectedJob() ? m_jobsPanel->selectedJob()->id : QString());
    });
    connect(m_jobsPanel, &JobsPanel::logsRequested, this, [this](const QString &id) {
        m_logsDock->show();
        m_logsDock->raise();
        m_logs->showJob(id);
        m_logs->view()->setFocus(Qt::OtherFocusReason);
    });
    // The Events dock follows the selection while it is shown, as the Logs dock does.
    m_events->setSession(m_session);
    m_events->setJobsModel(m_jobsPanel->model());
    connect(m_jobsPanel, &JobsPanel::selectedJobChanged, this, [this](const QString &id) {
        if (!m_eventsDock->visibleRegion().isEmpty())
            m_events->showJob(id);
    });
    connect(m_eventsDock, &QDockWidget::visibilityChanged, this, [this](bool visible) {
        if (visible)
            m_events->showJob(m_jobsPanel->selectedJob() ? m_jobsPanel->selectedJob()->id : QString());
    });
    connect(m_jobsPanel, &JobsPanel::eventsRequested, this, [this](const QString &id) {
        m_eventsDock->show();
        m_eventsDock->raise();
        m_events->showJob(id);
        m_events->timelineView()->setFocus(Qt::OtherFocusReason);
    });
    // The Job dock follows the selection; Details brings it forward with the keyboard in it.
    m_jobDetail->setSession(m_session);
    m_jobDetail->setJobsModel(m_jobsPanel->model());
    connect(m_jobsPanel, &JobsPanel::selectedJobChanged, m_jobDetail, &JobDetailPanel::showJob);
    connect(m_jobsPanel, &JobsPanel::detailsRequested, this, [this](const QString &id) {
        m_jobDetail->showJob(id);
        m_jobDetailDock->show();
        m_jobDetailDock->raise();
        m_jobDetail->summaryView()->setFocus(Qt::OtherFocusReason);
    });
    // Resubmit: the job's JobSpec as it was submitted (from its RayJob's annotation or its
    // archive), read by the same parser as a file, into the wizard.
    connect(m_jobsPanel, &JobsPanel::resubmitRequested, this, [this](const QJsonObject &jobSpec) {
        auto spec = Job::JobSpec::fromJson(QJsonDocument(jobSpec).toJson(QJsonDocument::Compact));
        if (!spec) {
            showJobsMessage(tr("Cannot resubmit: the job's JobSpec does not read: %1").arg(spec.error().message));
            return;
        }
        // The code comes from where this machine last submitted a job of that name, if it did.
        Job::JobSpec resubmitted = *spec;
        const QString base = QSettings(recentFile(), QSettings::IniFormat).value(QStringLiteral("codeBase/") + resubmitted.name).toString();
        if (!base.isEmpty() && QFileInfo(QDir(base).absoluteFilePath(resubmitted.code)).isDir()) {
            resubmitted.sourceDir = base;
        } else {
            showJobsMessage(tr("Resubmit %1: choose its code folder; this machine has not submitted it before.").arg(resubmitted.name));
        }
        openWizard(resubmitted);
    });
    connect(m_profileCombo, &QComboBox::activated, this, [this](int index) {
        const QString name = m_profileCombo->itemData(index).toString();
        if (name.isEmpty() || name == m_manager->store().activeProfile()) {
            return;
        }
        if (auto set = m_manager->setActiveProfile(name); !set) {
            showStartupProblem(set.error().message);
            refreshProfiles();
        }
    });

    refreshProfiles();
    reconnect();
}

namespace {
// Bumped when the docks change in a way an old saved layout would show wrongly.
constexpr int WindowStateVersion = 2;
}

void MainWindow::followJobNotices()
{
    Job::JobTracker *tracker = m_session->jobs();
    if (tracker == m_noticedTracker) return;
    m_noticedTracker = tracker;
    m_notices.reset();
    if (!tracker) {
        updateTray();
        return;
    }
    m_notices = std::make_unique<Job::JobNotices>(tracker->viewer());
    Job::JobNotices *notices = m_notices.get();
    // What the tracker lists at its first sync is the state of things, not news.
    auto ready = std::make_shared<bool>(tracker->hasSynced());
    if (*ready) notices->baseline(tracker->jobs());
    connect(tracker, &Job::JobTracker::synced, notices, [notices, tracker, ready] {
        if (*ready) return;
        notices->baseline(tracker->jobs());
        *ready = true;
    });
    for (auto signal : {&Job::JobTracker::jobChanged, &Job::JobTracker::jobArchived}) {
        connect(tracker, signal, notices, [notices, ready](const Job::JobRecord &record) {
            if (*ready) notices->observe(record);
            else notices->baseline({record});
        });
    }
    connect(tracker, &Job::JobTracker::stopRequested, notices, &Job::JobNotices::stoppedHere);
    // The tray's count and menu follow the same tracker.
    for (auto signal : {&Job::JobTracker::jobChanged, &Job::JobTracker::jobArchived}) connect(tracker, signal, this, &MainWindow::updateTray);
    connect(tracker, &Job::JobTracker::jobRemoved, this, &MainWindow::updateTray);
    connect(tracker, &Job::JobTracker::synced, this, &MainWindow::updateTray);
    updateTray();
    connect(notices, &Job::JobNotices::notice, this, [this](const Job::Notice &n) { m_notifier->notify(n.title, n.body, n.jobId, n.urgent); });
}

void MainWindow::updateTray()
{
    if (!m_tray) return;
    QList<Job::JobRecord> active;
    if (Job::JobTracker *tracker = m_noticedTracker) {
        for (const Job::JobRecord &job : tracker->jobs()) {
            const bool running = job.state == Job::JobState::Submitting || job.state == Job::JobState::Pending || job.state == Job::JobState::Running;
            if (running && !job.archived && Job::actsOn(tracker->ownershipOf(job))) active << job;
        }
    }
    std::sort(active.begin(), active.end(), [](const Job::JobRecord &a, const Job::JobRecord &b) { return a.created > b.created; });
    m_tray->setActiveJobs(active);
}

void MainWindow::openNotificationTarget(const QString &target)
{
    if (target.startsWith(QStringLiteral("pod:"))) {
        m_playgroundDock->show();
        m_playgroundDock->raise();
        m_playground->selectPod(target.mid(4));
    } else if (!target.isEmpty()) {
        m_jobsPanel->selectJob(target);
        if (auto *jobs = findChild<QDockWidget *>(QStringLiteral("jobsDock"))) jobs->raise();
        m_jobDetailDock->show();
        m_jobDetailDock->raise();
    }
    showNormal();
    raise();
    activateWindow();
}

QString MainWindow::windowStateFile() const
{
    return QFileInfo(m_manager->store().filePath()).dir().filePath(QStringLiteral("window.ini"));
}

void MainWindow::saveWindowState() const
{
    QSettings file(windowStateFile(), QSettings::IniFormat);
    file.setValue(QStringLiteral("window/geometry"), saveGeometry());
    file.setValue(QStringLiteral("window/state"), saveState(WindowStateVersion));
    file.setValue(QStringLiteral("window/version"), WindowStateVersion);
    // Every named table's columns (widths, order, sort), by the table's name.
    file.beginGroup(QStringLiteral("columns"));
    for (const QTableView *table : findChildren<QTableView *>()) {
        if (!table->objectName().isEmpty()) file.setValue(table->objectName(), table->horizontalHeader()->saveState());
    }
    file.endGroup();
}

bool MainWindow::restoreWindowState()
{
    QSettings file(windowStateFile(), QSettings::IniFormat);
    if (file.value(QStringLiteral("window/version")).toInt() != WindowStateVersion) return false;
    const bool placed = restoreGeometry(file.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(file.value(QStringLiteral("window/state")).toByteArray(), WindowStateVersion);
    file.beginGroup(QStringLiteral("columns"));
    for (QTableView *table : findChildren<QTableView *>()) {
        const QByteArray columns = file.value(table->objectName()).toByteArray();
        if (!table->objectName().isEmpty() && !columns.isEmpty()) table->horizontalHeader()->restoreState(columns);
    }
    file.endGroup();
    return placed;
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    saveWindowState();
    if (m_tray && m_tray->keepsRunning()) {
        // The tray is on: the window goes, the app stays and follows the jobs (and archives them).
        hide();
        event->ignore();
        if (!m_toldAboutTray) {
            m_toldAboutTray = true;
            m_notifier->notify(tr("Starforge is still running"), tr("It follows your jobs from the tray; Quit in the tray's menu ends it."), QString());
        }
        return;
    }
    QMainWindow::closeEvent(event);
}

MainWindow::~MainWindow()
{
    // The wizard first: a submission under way still uses the session's clients.
    delete m_wizard;
    // The panels let go of the session's parts before the session tears them down.
    m_jobsPanel->setSession(nullptr);
    m_session->close();
}

Job::JobTracker *MainWindow::jobTracker() const
{
    return m_session->jobs();
}

QDockWidget *MainWindow::addPanelDock(const QString &objectName, const QString &title, const QString &emptyText, Qt::DockWidgetArea area)
{
    auto *dock = new QDockWidget(title, this);
    dock->setObjectName(objectName);
    auto *placeholder = new QLabel(emptyText, dock);
    placeholder->setObjectName(objectName + QStringLiteral("Empty"));
    placeholder->setAlignment(Qt::AlignCenter);
    placeholder->setWordWrap(true);
    placeholder->setMargin(12);
    followQuiet(placeholder);
    dock->setWidget(placeholder);
    addDockWidget(area, dock);
    m_ui->viewMenu->addAction(dock->toggleViewAction());
    return dock;
}

void MainWindow::createDocks()
{
    // Each panel says plainly that it is empty and why, rather than showing made-up content.
    auto *jobs = addPanelDock(QStringLiteral("jobsDock"), tr("Jobs"), QString(), Qt::LeftDockWidgetArea);
    delete jobs->widget();
    m_jobsPanel = new JobsPanel(m_prompts, jobs);
    jobs->setWidget(m_jobsPanel);
    auto *capacity = addPanelDock(QStringLiteral("capacityDock"), tr("GPU Capacity"), QString(), Qt::RightDockWidgetArea);
    delete capacity->widget();
    auto *capacityPanel = new CapacityPanel(capacity);
    capacityPanel->setSession(m_session);
    capacity->setWidget(capacityPanel);
    auto *playground = addPanelDock(QStringLiteral("playgroundDock"), tr("Playground"), QString(), Qt::RightDockWidgetArea);
    delete playground->widget();
    m_playgroundDock = playground;
    m_playground = new PlaygroundPanel(m_prompts, playground);
    playground->setWidget(m_playground);
    m_jobDetailDock = addPanelDock(QStringLiteral("jobDetailDock"), tr("Job"), QString(), Qt::BottomDockWidgetArea);
    delete m_jobDetailDock->widget();
    m_jobDetail = new JobDetailPanel(m_jobDetailDock);
    m_jobDetailDock->setWidget(m_jobDetail);
    m_eventsDock = addPanelDock(QStringLiteral("eventsDock"), tr("Events"), QString(), Qt::BottomDockWidgetArea);
    delete m_eventsDock->widget();
    m_events = new EventsPanel(m_eventsDock);
    m_eventsDock->setWidget(m_events);
    QDockWidget *events = m_eventsDock;
    m_logsDock = addPanelDock(QStringLiteral("logsDock"), tr("Logs"), QString(), Qt::BottomDockWidgetArea);
    delete m_logsDock->widget();
    m_logs = new LogsPanel(m_logsDock);
    m_logsDock->setWidget(m_logs);
    QDockWidget *logs = m_logsDock;
    tabifyDockWidget(capacity, playground);
    capacity->raise();
    tabifyDockWidget(m_jobDetailDock, events);
    tabifyDockWidget(events, logs);
    m_jobDetailDock->raise();
    // The right column (the heatmap, the playground's conversation) runs the window's full
    // height; the job's docks sit under the jobs table they follow.
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
    setCorner(Qt::TopRightCorner, Qt::RightDockWidgetArea);
    resizeDocks({jobs, capacity}, {560, 360}, Qt::Horizontal);
    resizeDocks({m_jobDetailDock}, {290}, Qt::Vertical);

    // Keyboard paths into the panels: View › Go to …, Ctrl+1 to Ctrl+6, each bringing its dock
    // forward with the keyboard in its main view.
    m_jobsPanel->setFocusProxy(m_jobsPanel->view());
    capacityPanel->setFocusProxy(capacityPanel->view());
    m_jobDetail->setFocusProxy(m_jobDetail->summaryView());
    m_logs->setFocusProxy(m_logs->view());
    m_playground->setFocusProxy(m_playground->promptEdit());
    m_ui->viewMenu->addSeparator();
    int n = 0;
    for (QDockWidget *dock : {jobs, m_jobDetailDock, capacity, events, logs, playground}) {
        auto *go = new QAction(tr("Go to %1").arg(dock->windowTitle()), this);
        go->setObjectName(dock->objectName() + QStringLiteral("GoAction"));
        go->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + n++)));
        connect(go, &QAction::triggered, dock, [dock] {
            dock->show();
            dock->raise();
            dock->widget()->setFocus(Qt::ShortcutFocusReason);
        });
        m_ui->viewMenu->addAction(go);
    }
}

void MainWindow::refreshProfiles()
{
    const QSignalBlocker blocker(m_profileCombo);
    m_profileCombo->clear();
    const auto &store = m_manager->store();
    for (const QString &name : store.profileNames()) {
        m_profileCombo->addItem(name, name);
    }
    if (store.profileNames().isEmpty()) {
        m_profileCombo->addItem(tr("(no profiles)"), QString());
    } else if (store.activeProfile().isEmpty()) {
        m_profileCombo->insertItem(0, tr("(none active)"), QString());
    }
    m_profileCombo->setCurrentIndex(qMax(0, m_profileCombo->findData(store.activeProfile())));
    m_profileCombo->setEnabled(!store.profileNames().isEmpty());
    refreshStatus();
}

QString MainWindow::settingsProblem() const
{
    const auto &store = m_manager->store();
    const QString active = store.activeProfile();
    if (active.isEmpty()) {
        if (isOnSandbox()) return {};   // the embedded sandbox needs no profile
        return store.profileNames().isEmpty() ? tr("Not connected: no connection profile yet") : tr("Not connected: no profile is active");
    }
    const auto config = Config::EffectiveConfig::resolve(store.profile(active), m_environment);
    if (const auto problems = config.problems(); !problems.isEmpty()) {
        return tr("Not connected: %1").arg(problems.first().message);
    }
    if (config.value(QStringLiteral("FORGE_K8S_API_SERVER")).isEmpty()) {
        return tr("Not connected: the profile has no API server (FORGE_K8S_API_SERVER)");
    }
    return {};
}

QString MainWindow::connectionStateText() const
{
    const QString problem = settingsProblem();
    return problem.isEmpty() ? m_session->statusText() : problem;
}

void MainWindow::reconnect()
{
    if (!settingsProblem().isEmpty()) {
        m_session->close();
        return;
    }
    if (m_manager->store().activeProfile().isEmpty()) {
        m_session->open(SessionSource::ofConnectionFile(m_sandboxFile));   // settingsProblem() allows it only on the sandbox
        return;
    }
    // The session reads the token from the keychain, then connects with the settings in force.
    m_session->open(SessionSource::ofProfile(*m_manager->store().profile(m_manager->store().activeProfile())));
}

void MainWindow::refreshStatus()
{
    const auto &store = m_manager->store();
    const QString active = store.activeProfile();
    m_profileStatus->setText(!active.isEmpty() ? tr("Profile: %1").arg(active) : isOnSandbox() ? tr("Sandbox (until the app quits)") : tr("Profile: none"));
    m_connectionStatus->setText(connectionStateText());
    // What a cluster administrator would grant for each feature the token cannot use.
    QStringList rules;
    for (const FeatureStatus &feature : m_session->features()) {
        if (!feature.available && !feature.roleRule.isEmpty()) rules << tr("%1:\n%2").arg(feature.title, feature.roleRule);
    }
    m_connectionStatus->setToolTip(rules.isEmpty() ? QString() : tr("Role rules that would allow the missing features:\n\n%1").arg(rules.join(QStringLiteral("\n\n"))));
    const auto config = Config::EffectiveConfig::resolve(store.profile(active), m_environment);
    m_tlsWarning->setVisible(!active.isEmpty() && config.boolean(QStringLiteral("FORGE_K8S_INSECURE_SKIP_TLS_VERIFY")));
    setWindowTitle(!active.isEmpty() ? tr("%1 — Starforge").arg(active) : isOnSandbox() ? tr("Sandbox — Starforge") : tr("Starforge"));

    const bool none = store.profileNames().isEmpty();
    m_ui->welcomeLabel->setText(none && !isOnSandbox() ? tr("<h2>Welcome to Starforge</h2><p>Run NeMo-RL training on Kubernetes and KubeRay from here.</p>"
                                                            "<p>Choose how to connect:</p>")
                                     : tr("<h2>%1</h2><p>%2</p>").arg(active.isEmpty() ? tr("No active profile") : active.toHtmlEscaped(),
                                                                      connectionStateText().toHtmlEscaped()));
    m_setupButton->setText(none ? tr("Set up a connection…") : tr("Connection profiles…"));
    // The three ways in until there is a connection to use; after that, the profiles button.
    const bool firstRun = none && !isOnSandbox();
    m_firstRun->setVisible(firstRun);
    m_setupButton->setVisible(!firstRun);
    // Connected, the panels are the content (the status bar keeps the connection's sentence);
    // otherwise the welcome says what to do next.
    const bool connected = m_session->isUp() || m_session->state() == Session::State::Lost;
    if (connected && !m_ui->centralWidget->isHidden() && !m_jobsDockWidened) {
        // The first time the panels take the whole width, most of it goes to the jobs table;
        // after that the user's own arrangement stays.
        m_jobsDockWidened = true;
        if (auto *jobs = findChild<QDockWidget *>(QStringLiteral("jobsDock"))) {
            resizeDocks({jobs}, {std::max(560, width() * 3 / 5)}, Qt::Horizontal);
        }
    }
    m_ui->centralWidget->setVisible(!connected);
}

SubmitWizard *MainWindow::wizard() const
{
    return m_wizard;
}

SubmitWizard *MainWindow::openWizard(const Job::JobSpec &spec)
{
    if (m_wizard) {
        // One submission at a time: the open wizard keeps what was typed into it.
        m_wizard->raise();
        m_wizard->activateWindow();
        showJobsMessage(tr("A job is being prepared in the open wizard; submit or cancel it first."));
        return m_wizard;
    }
    m_wizard = new SubmitWizard(m_session, spec, this);
    m_wizard->setAttribute(Qt::WA_DeleteOnClose);
    connect(m_wizard, &SubmitWizard::submitted, this, [this](const QString &jobId) {
        showJobsMessage(tr("Job %1 submitted").arg(jobId));
        // Where its relative paths start, for a later Resubmit of a job of this name.
        const Job::JobSpec submitted = m_wizard->spec();
        QSettings(recentFile(), QSettings::IniFormat).setValue(QStringLiteral("codeBase/") + submitted.name, submitted.sourceDir);
        m_jobsPanel->selectJob(jobId);
        if (auto *jobs = findChild<QDockWidget *>(QStringLiteral("jobsDock"))) jobs->raise();
    });
    m_wizard->show();
    return m_wizard;
}

SubmitWizard *MainWindow::openWizardAt(const QString &path)
{
    const auto spec = SubmitWizard::specForPath(path);
    if (!spec) {
        showStartupProblem(spec.error().message);
        return nullptr;
    }
    return openWizard(*spec);
}

QString MainWindow::recentFile() const
{
    // Beside the profiles file: what this machine remembers of its own submissions.
    return QFileInfo(m_manager->store().filePath()).dir().filePath(QStringLiteral("recent.ini"));
}

SubmitWizard *MainWindow::newJob()
{
    Job::JobSpec spec = SubmitWizard::specForFolder(QDir::currentPath());
    spec.name.clear();
    return openWizard(spec);
}

void MainWindow::dragEnterEvent(QDragEnterEvent *event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.size() == 1 && urls.first().isLocalFile()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent *event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.size() != 1 || !urls.first().isLocalFile()) return;
    event->acceptProposedAction();
    openWizardAt(urls.first().toLocalFile());
}

void MainWindow::showJobsMessage(const QString &text)
{
    statusBar()->showMessage(text, 15000);
}

void MainWindow::importFromKubeconfig()
{
    ProfilesDialog *dialog = showProfilesDialog();
    dialog->importKubeconfig();
}

NewConnectionDialog *MainWindow::enterServer()
{
    auto *dialog = new NewConnectionDialog(m_manager->store(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, name = QPointer<NewConnectionDialog>(dialog)] {
        if (!name) return;
        const QString profile = name->profileName();
        m_firstRun->setBusy(tr("Saving profile %1…").arg(profile));
        m_manager->setValues(profile, name->values(), true, this, [this, profile](Result<void> saved) {
            if (saved) saved = m_manager->setActiveProfile(profile);
            if (!saved) {
                m_firstRun->showProblem(saved.error().message);
                return;
            }
            m_firstRun->setBusy(QString());
            // Connecting starts with the active profile; the test says part by part what works.
            ProfilesDialog *profiles = showProfilesDialog();
            profiles->selectProfile(profile);
            profiles->testConnection();
        });
    });
    dialog->open();
    return dialog;
}

void MainWindow::trySandbox()
{
    if (m_embedded) return;   // starting or running
    m_embedded = std::make_unique<Config::EmbeddedSandbox>();
    m_firstRun->setBusy(tr("Starting the sandbox cluster…"));
    connect(m_embedded.get(), &Config::EmbeddedSandbox::ready, this, [this](const Config::SandboxConnection &connection) {
        m_sandboxFile = m_embedded->connectionFile();
        m_firstRun->setBusy(QString());
        showJobsMessage(tr("The sandbox is running; kubectl reaches it with KUBECONFIG=%1").arg(connection.kubeconfig));
        refreshStatus();
        reconnect();
    });
    connect(m_embedded.get(), &Config::EmbeddedSandbox::failed, this, [this](const QString &message) {
        m_firstRun->showProblem(tr("The sandbox did not start: %1").arg(message));
        m_embedded.release()->deleteLater();
    });
    m_embedded->start(m_sandboxProgram);
}

ProfilesDialog *MainWindow::showProfilesDialog()
{
    if (!m_profilesDialog) {
        m_profilesDialog = new ProfilesDialog(m_manager, m_prompts, m_environment, this);
        m_profilesDialog->setAttribute(Qt::WA_DeleteOnClose);
        connect(m_profilesDialog, &QObject::destroyed, this, [this] { m_profilesDialog = nullptr; });
    }
    m_profilesDialog->show();
    m_profilesDialog->raise();
    m_profilesDialog->activateWindow();
    return m_profilesDialog;
}

void MainWindow::showStartupProblem(const QString &text)
{
    statusBar()->showMessage(text, 0);
    m_prompts->inform(this, tr("Starforge"), text);
}

void MainWindow::showAbout()
{
    m_prompts->inform(this, tr("About Starforge"),
                      tr("Starforge Desktop %1\n\nRun NeMo-RL training on Kubernetes and KubeRay from the desktop.\n"
                         "Qt %2.")
                          .arg(QStringLiteral(STARFORGE_VERSION), QString::fromLatin1(qVersion())));
}

} // namespace Starforge::Gui
