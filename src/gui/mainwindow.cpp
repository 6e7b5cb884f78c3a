#include "gui/mainwindow.h"

#include "core/config/effectiveconfig.h"
#include "core/config/profilemanager.h"
#include "core/job/rayjobbuilder.h"
#include "core/job/tracker.h"
#include "core/kube/clusterconnection.h"
#include "core/kube/operatorprobe.h"
#include "core/s3/s3client.h"
#include "core/secrets/secretstore.h"
#include "gui/jobspanel.h"
#include "gui/profilesdialog.h"
#include "gui/userprompts.h"
#include "ui_mainwindow.h"

#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QStatusBar>
#include <QVBoxLayout>

#include <algorithm>

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
    , m_connection(new Kube::ClusterConnection(this))
{
    m_ui->setupUi(this);
    setWindowIcon(QIcon(QStringLiteral(":/starforge/starforge.svg")));

    m_profileCombo->setObjectName(QStringLiteral("profileCombo"));
    m_profileCombo->setMinimumContentsLength(16);
    m_profileCombo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_profileCombo->setToolTip(tr("The connection profile the window works with"));
    auto *profileLabel = new QLabel(tr("Profile: "), this);
    m_ui->mainToolBar->addWidget(profileLabel);
    m_ui->mainToolBar->addWidget(m_profileCombo);
    m_ui->mainToolBar->addAction(m_ui->profilesAction);

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
    m_ui->centralLayout->addWidget(m_setupButton, 0, Qt::AlignHCenter);
    m_ui->centralLayout->addStretch(1);
    m_ui->centralLayout->insertStretch(0, 1);

    createDocks();

    connect(m_ui->profilesAction, &QAction::triggered, this, [this] { showProfilesDialog(); });
    connect(m_setupButton, &QPushButton::clicked, this, [this] { showProfilesDialog(); });
    connect(m_ui->quitAction, &QAction::triggered, this, &QWidget::close);
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
    connect(m_connection, &Kube::ClusterConnection::stateChanged, this, [this](Kube::ClusterConnection::State state) {
        refreshStatus();
        if (state == Kube::ClusterConnection::State::Connected) {
            startJobs();
        } else {
            stopJobs(jobsPlaceholder());
        }
    });
    connect(m_jobsPanel, &JobsPanel::statusMessage, this, &MainWindow::showJobsMessage);
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

MainWindow::~MainWindow()
{
    // Before the connection's client goes: the tracker and the probe use it.
    stopJobs({});
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
    placeholder->setStyleSheet(QStringLiteral("color: palette(mid);"));
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
    auto *capacity = addPanelDock(QStringLiteral("capacityDock"), tr("GPU Capacity"), tr("The capacity heatmap is not in this version yet."), Qt::RightDockWidgetArea);
    auto *playground = addPanelDock(QStringLiteral("playgroundDock"), tr("Playground"), tr("The playground is not in this version yet."), Qt::RightDockWidgetArea);
    auto *events = addPanelDock(QStringLiteral("eventsDock"), tr("Events"),
                                tr("The event timeline is not in this version yet. Double-click a job in the Jobs panel for its message, "
                                   "cause and what its archive keeps."),
                                Qt::BottomDockWidgetArea);
    auto *logs = addPanelDock(QStringLiteral("logsDock"), tr("Logs"),
                              tr("The log viewer is not in this version yet. An ended job's logs are archived under jobs/<id>/logs/ in the "
                                 "bucket (starforge-cli logs JOB)."),
                              Qt::BottomDockWidgetArea);
    tabifyDockWidget(capacity, playground);
    capacity->raise();
    tabifyDockWidget(events, logs);
    events->raise();
    resizeDocks({jobs, capacity}, {560, 360}, Qt::Horizontal);
    resizeDocks({events}, {220}, Qt::Vertical);
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
    return problem.isEmpty() ? m_connection->statusText() : problem;
}

void MainWindow::reconnect()
{
    const quint64 generation = ++m_connectGeneration;
    const QString active = m_manager->store().activeProfile();
    // The tracker and the probe use the connection's client, which the calls below replace.
    stopJobs(tr("Connecting…"));
    m_config.reset();
    if (!settingsProblem().isEmpty()) {
        m_connection->disconnectFromCluster();
        return;
    }
    // The token lives in the keychain: read it, then connect with the settings in force.
    m_connection->prepare(Config::EffectiveConfig::resolve(m_manager->store().profile(active), m_environment)
                              .value(QStringLiteral("FORGE_K8S_API_SERVER")));
    m_manager->secrets()->readAll(active, this, [this, generation, active](Result<QMap<QString, QString>> secrets) {
        if (generation != m_connectGeneration) {
            return;
        }
        if (!secrets) {
            m_connection->fail(secrets.error().message);
            return;
        }
        const auto config = Config::EffectiveConfig::resolve(m_manager->store().profile(active), m_environment, *secrets);
        auto client = Kube::ClientConfig::fromSettings(config);
        if (!client) {
            m_connection->fail(client.error().message);
            return;
        }
        m_config = config;
        m_connection->connectTo(*client);
    });
}

void MainWindow::refreshStatus()
{
    const auto &store = m_manager->store();
    const QString active = store.activeProfile();
    m_profileStatus->setText(active.isEmpty() ? tr("Profile: none") : tr("Profile: %1").arg(active));
    m_connectionStatus->setText(connectionStateText());
    const auto config = Config::EffectiveConfig::resolve(store.profile(active), m_environment);
    m_tlsWarning->setVisible(!active.isEmpty() && config.boolean(QStringLiteral("FORGE_K8S_INSECURE_SKIP_TLS_VERIFY")));
    setWindowTitle(active.isEmpty() ? tr("Starforge") : tr("%1 — Starforge").arg(active));

    const bool none = store.profileNames().isEmpty();
    m_ui->welcomeLabel->setText(none ? tr("<h2>Welcome to Starforge</h2><p>Run NeMo-RL training on Kubernetes and KubeRay from here.</p>"
                                          "<p>Start with a connection profile: import a context from your kubeconfig, or enter the "
                                          "API server and a token.</p>")
                                     : tr("<h2>%1</h2><p>%2</p>").arg(active.isEmpty() ? tr("No active profile") : active.toHtmlEscaped(),
                                                                      connectionStateText().toHtmlEscaped()));
    m_setupButton->setText(none ? tr("Set up a connection…") : tr("Connection profiles…"));
    // Connected, the panels are the content (the status bar keeps the connection's sentence);
    // otherwise the welcome says what to do next.
    const bool connected = m_connection->state() == Kube::ClusterConnection::State::Connected;
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

QString MainWindow::jobsPlaceholder() const
{
    switch (m_connection->state()) {
    case Kube::ClusterConnection::State::Connecting:
        return tr("Connecting…");
    case Kube::ClusterConnection::State::Connected:
        return {};
    case Kube::ClusterConnection::State::Disconnected:
    case Kube::ClusterConnection::State::Failed:
        break;
    }
    return tr("Jobs appear here once the window is connected to a cluster (the status bar says why it is not).");
}

void MainWindow::startJobs()
{
    if (m_s3 || !m_config || !m_connection->client()) {
        return;
    }
    // Tracking needs the bucket: ended jobs are archived there, and the history is read from it.
    auto s3 = S3::ClientConfig::fromEffectiveConfig(*m_config);
    if (!s3) {
        m_jobsPanel->setMessage(tr("Job tracking and history need the profile's object storage. Set FORGE_S3_ENDPOINT, FORGE_S3_BUCKET, "
                                   "FORGE_S3_ACCESS_KEY and FORGE_S3_SECRET_KEY in File › Connection Profiles (the keys are kept in the "
                                   "keychain), or in the environment.\n\n%1")
                                    .arg(s3.error().message));
        return;
    }
    m_s3 = std::make_unique<S3::S3Client>(*s3);
    m_jobsPanel->setHistoryStore(m_s3.get());
    // Whether the operator enforces the pre-running deadline decides the tracker's own timing.
    m_probe = std::make_unique<Kube::OperatorProbe>(m_connection->client());
    connect(m_probe.get(), &Kube::OperatorProbe::finished, this, &MainWindow::startTracker);
    m_probe->start();
}

void MainWindow::startTracker(const Kube::OperatorVersion &found)
{
    using Outcome = Kube::OperatorVersion::Outcome;
    if (m_tracker || !m_s3 || !m_config) {
        return;
    }
    if (found.outcome == Outcome::NotInstalled || found.outcome == Outcome::Unsupported) {
        // No RayJobs to follow; the history still shows.
        showJobsMessage(tr("Live jobs are not followed: %1").arg(found.message));
        return;
    }
    if (found.outcome != Outcome::Detected) {
        showJobsMessage(tr("%1 Starforge enforces the pre-running deadline itself.").arg(found.message));
    }
    const auto settings = Job::ClusterSettings::fromConfig(*m_config);
    Job::TrackerOptions options;
    options.ns = settings.ns;
    options.preRunningDeadlineSeconds = settings.preRunningDeadlineSeconds;
    options.operatorEnforcesDeadline = found.hasPreRunningDeadline();
    options.seriesLabel = settings.gpuNodeLabel;
    m_tracker = std::make_unique<Job::JobTracker>(m_connection->client(), m_s3.get(), options);
    connect(m_tracker.get(), &Job::JobTracker::archiveFailed, this, [this](const QString &id, const QString &message) {
        showJobsMessage(tr("Could not archive job %1 (its RayJob is kept; trying again later): %2").arg(id, message));
    });
    m_jobsPanel->setTracker(m_tracker.get());
    m_tracker->start();
}

void MainWindow::stopJobs(const QString &why)
{
    if (m_jobsPanel) {
        m_jobsPanel->setMessage(why);
    }
    m_tracker.reset();
    m_probe.reset();
    m_s3.reset();
}

void MainWindow::showJobsMessage(const QString &text)
{
    statusBar()->showMessage(text, 15000);
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
