#include "gui/playground/playgroundpanel.h"

#include "core/cluster/capacity.h"
#include "core/job/rayjobbuilder.h"
#include "core/playground/conversationstore.h"
#include "core/playground/playgroundclient.h"
#include "core/session/session.h"
#include "gui/palettefollow.h"
#include "gui/playground/chatpane.h"
#include "gui/playground/launchdialog.h"
#include "gui/playground/transcriptview.h"
#include "gui/userprompts.h"
#include "models/playgroundpodsmodel.h"
#include "models/transcriptmodel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QJsonDocument>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QShortcut>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

namespace Starforge::Gui {

using Models::PlaygroundPodsModel;
using Playground::PlaygroundInstance;

PlaygroundPanel::PlaygroundPanel(UserPrompts *prompts, QWidget *parent)
    : QWidget(parent)
    , m_prompts(prompts)
    , m_store(std::make_unique<Playground::ConversationStore>())
    , m_pods(new PlaygroundPodsModel(this))
    , m_podsView(new QTableView(this))
    , m_launch(new QPushButton(tr("&Launch…"), this))
    , m_stopPod(new QPushButton(tr("Stop pod"), this))
    , m_extend(new QPushButton(tr("Exten&d…"), this))
    , m_banner(new QLabel(this))
    , m_podsStatus(new QLabel(this))
    , m_settingsButton(new QToolButton(this))
    , m_system(new QLineEdit(this))
    , m_temperature(new QDoubleSpinBox(this))
    , m_topP(new QDoubleSpinBox(this))
    , m_maxTokens(new QSpinBox(this))
    , m_history(new QComboBox(this))
    , m_new(new QPushButton(tr("&New"), this))
    , m_export(new QPushButton(tr("E&xport…"), this))
    , m_compare(new QCheckBox(tr("C&ompare two models"), this))
    , m_left(new ChatPane(QStringLiteral("chatPaneA"), this))
    , m_right(new ChatPane(QStringLiteral("chatPaneB"), this))
    , m_prompt(new QPlainTextEdit(this))
    , m_send(new QPushButton(tr("&Send"), this))
    , m_stop(new QPushButton(tr("S&top"), this))
    , m_regenerate(new QPushButton(tr("&Regenerate"), this))
{
    setObjectName(QStringLiteral("playgroundPanel"));
    // The pods.
    m_podsView->setObjectName(QStringLiteral("playgroundPodsView"));
    m_podsView->setAccessibleName(tr("Playground pods"));
    m_podsView->setAccessibleDescription(tr("Your vLLM pods: the model each serves, its state and the time left before the cluster ends it"));
    m_podsView->setModel(m_pods);
    m_podsView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_podsView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_podsView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_podsView->verticalHeader()->hide();
    m_podsView->horizontalHeader()->setStretchLastSection(true);
    m_podsView->setWordWrap(false);
    m_podsView->setMaximumHeight(int(5.5 * fontMetrics().height()));
    m_launch->setObjectName(QStringLiteral("playgroundLaunch"));
    m_launch->setToolTip(tr("Serve a model or a checkpoint with vLLM on a GPU pod of your own"));
    m_stopPod->setObjectName(QStringLiteral("playgroundStopPod"));
    m_stopPod->setToolTip(tr("Delete the selected pod now; its GPUs are free again"));
    m_extend->setObjectName(QStringLiteral("playgroundExtend"));
    m_extend->setToolTip(tr("More time for the selected model: a new pod serving it (a pod's deadline cannot be raised)"));
    m_banner->setObjectName(QStringLiteral("playgroundBanner"));
    m_banner->setWordWrap(true);
    m_banner->setAccessibleName(tr("Why the pod is not ready"));
    followBanner(m_banner, Tones::Tone::Warning);
    m_banner->hide();
    m_podsStatus->setWordWrap(true);
    m_podsStatus->setAccessibleName(tr("Playground status"));
    m_podsStatus->hide();
    auto *podButtons = new QHBoxLayout;
    podButtons->addWidget(m_launch);
    podButtons->addWidget(m_stopPod);
    podButtons->addWidget(m_extend);
    podButtons->addStretch();
    auto *podsBox = new QWidget(this);
    auto *podsLayout = new QVBoxLayout(podsBox);
    podsLayout->setContentsMargins(0, 0, 0, 0);
    podsLayout->addLayout(podButtons);
    podsLayout->addWidget(m_podsView);
    podsLayout->addWidget(m_banner);
    podsLayout->addWidget(m_podsStatus);

    // The settings sent with each request.
    m_system->setObjectName(QStringLiteral("playgroundSystem"));
    m_system->setPlaceholderText(tr("System prompt (optional)"));
    m_system->setAccessibleName(tr("System prompt"));
    m_temperature->setRange(0, 2);
    m_temperature->setSingleStep(0.1);
    m_temperature->setValue(0.7);
    m_temperature->setAccessibleName(tr("Temperature"));
    m_topP->setRange(0.01, 1);
    m_topP->setSingleStep(0.05);
    m_topP->setValue(1.0);
    m_topP->setAccessibleName(tr("Top-p"));
    m_maxTokens->setRange(1, 32768);
    m_maxTokens->setValue(512);
    m_maxTokens->setAccessibleName(tr("Maximum tokens per reply"));
    m_settingsBox = new QWidget(this);
    m_settingsBox->setObjectName(QStringLiteral("playgroundSettings"));
    auto *settingsLayout = new QVBoxLayout(m_settingsBox);
    settingsLayout->setContentsMargins(0, 0, 0, 0);
    settingsLayout->addWidget(m_system);
    auto *settingsRow = new QHBoxLayout;
    settingsLayout->addLayout(settingsRow);
    auto addLabelled = [this, settingsRow](const QString &text, QWidget *field) {
        auto *label = new QLabel(text, this);
        label->setBuddy(field);
        settingsRow->addWidget(label);
        settingsRow->addWidget(field);
    };
    addLabelled(tr("T&emperature:"), m_temperature);
    addLabelled(tr("Top-&p:"), m_topP);
    addLabelled(tr("Max to&kens:"), m_maxTokens);
    settingsRow->addStretch();
    // Shown when asked for; the button says what is in force, so the space goes to the talk.
    m_settingsButton->setObjectName(QStringLiteral("playgroundSettingsButton"));
    m_settingsButton->setCheckable(true);
    m_settingsButton->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_settingsButton->setArrowType(Qt::RightArrow);
    m_settingsButton->setAccessibleName(tr("Generation settings"));
    m_settingsBox->hide();
    connect(m_settingsButton, &QToolButton::toggled, this, [this](bool shown) {
        m_settingsBox->setVisible(shown);
        m_settingsButton->setArrowType(shown ? Qt::DownArrow : Qt::RightArrow);
        if (shown) m_system->setFocus(Qt::OtherFocusReason);
    });
    connect(m_system, &QLineEdit::textChanged, this, &PlaygroundPanel::updateSettingsSummary);
    connect(m_temperature, &QDoubleSpinBox::valueChanged, this, &PlaygroundPanel::updateSettingsSummary);
    connect(m_topP, &QDoubleSpinBox::valueChanged, this, &PlaygroundPanel::updateSettingsSummary);
    connect(m_maxTokens, &QSpinBox::valueChanged, this, &PlaygroundPanel::updateSettingsSummary);
    updateSettingsSummary();

    // Conversations.
    m_history->setObjectName(QStringLiteral("playgroundHistory"));
    m_history->setAccessibleName(tr("Saved conversations"));
    m_history->setToolTip(tr("Reopen a conversation kept on this machine"));
    m_history->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_history->setMinimumContentsLength(14);
    m_new->setObjectName(QStringLiteral("playgroundNew"));
    m_new->setToolTip(tr("Start a new conversation (the current one stays saved)"));
    m_export->setObjectName(QStringLiteral("playgroundExport"));
    m_export->setToolTip(tr("Save the conversation as Markdown or JSON, with the model, settings and timings"));
    m_compare->setObjectName(QStringLiteral("playgroundCompare"));
    m_compare->setToolTip(tr("Two models side by side: each prompt goes to both"));
    auto *historyLabel = new QLabel(tr("&History:"), this);
    historyLabel->setBuddy(m_history);
    auto *conversationRow = new QHBoxLayout;
    conversationRow->addWidget(historyLabel);
    conversationRow->addWidget(m_history, 1);
    conversationRow->addWidget(m_new);
    conversationRow->addWidget(m_export);
    conversationRow->addWidget(m_compare);

    auto *panes = new QSplitter(Qt::Horizontal, this);
    panes->setChildrenCollapsible(false);
    panes->addWidget(m_left);
    panes->addWidget(m_right);
    m_right->hide();

    m_prompt->setObjectName(QStringLiteral("playgroundPrompt"));
    m_prompt->setAccessibleName(tr("Message"));
    m_prompt->setPlaceholderText(tr("Message (Ctrl+Return sends, Esc stops)"));
    m_prompt->setTabChangesFocus(true);
    m_prompt->setMaximumHeight(5 * fontMetrics().height());
    m_prompt->installEventFilter(this);
    m_send->setObjectName(QStringLiteral("playgroundSend"));
    m_stop->setObjectName(QStringLiteral("playgroundStop"));
    m_regenerate->setObjectName(QStringLiteral("playgroundRegenerate"));
    m_send->setToolTip(tr("Send (Ctrl+Return)"));
    m_stop->setToolTip(tr("Stop the reply (Esc); vLLM stops generating"));
    m_regenerate->setToolTip(tr("Ask again for the last reply"));
    auto *sendColumn = new QVBoxLayout;
    sendColumn->addWidget(m_send);
    sendColumn->addWidget(m_stop);
    sendColumn->addWidget(m_regenerate);
    sendColumn->addStretch();
    auto *promptRow = new QHBoxLayout;
    promptRow->addWidget(m_prompt, 1);
    promptRow->addLayout(sendColumn);

    auto *chatBox = new QWidget(this);
    auto *chatLayout = new QVBoxLayout(chatBox);
    chatLayout->setContentsMargins(0, 0, 0, 0);
    chatLayout->addLayout(conversationRow);
    chatLayout->addWidget(m_settingsButton, 0, Qt::AlignLeft);
    chatLayout->addWidget(m_settingsBox);
    chatLayout->addWidget(panes, 1);
    chatLayout->addLayout(promptRow);

    auto *split = new QSplitter(Qt::Vertical, this);
    split->setChildrenCollapsible(false);
    split->addWidget(podsBox);
    split->addWidget(chatBox);
    split->setStretchFactor(1, 1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(split);

    setTabOrder(m_launch, m_stopPod);
    setTabOrder(m_stopPod, m_extend);
    setTabOrder(m_extend, m_podsView);
    setTabOrder(m_podsView, m_history);
    setTabOrder(m_history, m_new);
    setTabOrder(m_new, m_export);
    setTabOrder(m_export, m_compare);
    setTabOrder(m_compare, m_settingsButton);
    setTabOrder(m_settingsButton, m_system);
    setTabOrder(m_system, m_temperature);
    setTabOrder(m_temperature, m_topP);
    setTabOrder(m_topP, m_maxTokens);
    setTabOrder(m_maxTokens, m_left->podCombo());
    setTabOrder(m_left->podCombo(), m_left->view());
    setTabOrder(m_left->view(), m_right->podCombo());
    setTabOrder(m_right->podCombo(), m_right->view());
    setTabOrder(m_right->view(), m_prompt);
    setTabOrder(m_prompt, m_send);
    setTabOrder(m_send, m_stop);
    setTabOrder(m_stop, m_regenerate);

    for (ChatPane *pane : {m_left, m_right}) {
        pane->setPodsModel(m_pods);
        pane->setConversationStore(m_store.get());
        connect(pane, &ChatPane::streamingChanged, this, &PlaygroundPanel::updateButtons);
        connect(pane, &ChatPane::conversationSaved, this, [this] { fillHistory(); });
        connect(pane, &ChatPane::editRequested, this, [this, pane](int row) { editMessage(pane, row); });
        connect(pane->view(), &TranscriptView::regenerateRequested, this, [this, pane] {
            if (pane->regenerate(chatSettings())) updateButtons();
        });
    }
    connect(m_launch, &QPushButton::clicked, this, [this] { openLaunchDialog(); });
    connect(m_stopPod, &QPushButton::clicked, this, &PlaygroundPanel::stopSelectedPod);
    connect(m_extend, &QPushButton::clicked, this, [this] { extendSelectedPod(); });
    connect(m_send, &QPushButton::clicked, this, &PlaygroundPanel::send);
    connect(m_stop, &QPushButton::clicked, this, &PlaygroundPanel::stopReplies);
    connect(m_regenerate, &QPushButton::clicked, this, &PlaygroundPanel::regenerate);
    connect(m_compare, &QCheckBox::toggled, this, &PlaygroundPanel::setComparing);
    connect(m_new, &QPushButton::clicked, this, [this] {
        m_left->newConversation();
        m_right->newConversation();
        m_history->setCurrentIndex(-1);
        updateButtons();
    });
    connect(m_export, &QPushButton::clicked, this, [this] {
        const QString path = m_prompts->saveFile(this, tr("Export the conversation"), QStringLiteral("conversation.md"),
                                                 tr("Markdown (*.md);;JSON (*.json)"));
        if (!path.isEmpty() && !exportConversation(path)) m_prompts->inform(this, tr("Export"), tr("Could not write %1.").arg(path));
    });
    connect(m_history, &QComboBox::activated, this, [this](int index) {
        const QString id = m_history->itemData(index).toString();
        if (id.isEmpty()) return;
        if (auto opened = m_left->openConversation(id); !opened) m_prompts->inform(this, tr("Conversation"), opened.error().message);
        updateButtons();
    });
    connect(m_podsView->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this] {
        updateButtons();
        updateBanner();
    });
    connect(m_pods, &QAbstractItemModel::dataChanged, this, [this] { updateButtons(); });
    connect(m_pods, &QAbstractItemModel::rowsInserted, this, [this] { updateButtons(); });
    connect(m_pods, &QAbstractItemModel::rowsRemoved, this, [this] { updateButtons(); });
    connect(m_prompt, &QPlainTextEdit::textChanged, this, &PlaygroundPanel::updateButtons);

    // Esc stops a reply wherever the focus is in the panel.
    new QShortcut(QKeySequence(Qt::Key_Escape), this, this, &PlaygroundPanel::stopReplies, Qt::WidgetWithChildrenShortcut);

    m_refreshTimer.setInterval(5000);
    connect(&m_refreshTimer, &QTimer::timeout, this, [this] {
        // Hidden, the pods are still listed once a minute: their expiry warning is due anyway.
        if (!isVisible()) {
            if (++m_hiddenTicks % 12 == 0) refreshPods();
            return;
        }
        refreshPods();
        for (ChatPane *pane : {m_left, m_right}) {
            if (pane->isVisible() && !pane->isStreaming()) pane->refreshMetrics();
        }
    });
    m_refreshTimer.start();
    m_tick.setInterval(1000);
    connect(&m_tick, &QTimer::timeout, this, [this] {
        if (isVisible()) m_pods->setNow(QDateTime::currentDateTimeUtc());
    });
    m_tick.start();
    fillHistory();
    updateButtons();
}

PlaygroundPanel::~PlaygroundPanel() = default;

void PlaygroundPanel::setSession(Session *session)
{
    if (m_session) disconnect(m_session, nullptr, this, nullptr);
    m_session = session;
    for (ChatPane *pane : {m_left, m_right}) pane->setSession(session);
    if (session) {
        connect(session, &Session::partsAboutToBeRemoved, this, [this] {
            m_listing.reset();
            m_diagnosing.reset();
            for (ChatPane *pane : {m_left, m_right}) pane->stop();
        });
        connect(session, &Session::partsChanged, this, &PlaygroundPanel::takeSessionParts);
        connect(session, &Session::ready, this, &PlaygroundPanel::refreshPods);
        connect(session, &Session::playgroundReaped, this, &PlaygroundPanel::refreshPods);
    }
    takeSessionParts();
}

void PlaygroundPanel::setConversationFolder(const QString &dir)
{
    m_store = std::make_unique<Playground::ConversationStore>(dir);
    for (ChatPane *pane : {m_left, m_right}) pane->setConversationStore(m_store.get());
    fillHistory();
}

void PlaygroundPanel::setRefreshInterval(int ms)
{
    m_refreshTimer.setInterval(ms);
}

void PlaygroundPanel::takeSessionParts()
{
    const bool connected = m_session && m_session->playground();
    if (!connected) {
        m_pods->setInstances({});
        const QString reason = m_session ? m_session->feature(QStringLiteral("playground")).value_or(FeatureStatus{}).reason : QString();
        m_podsStatus->setText(reason.isEmpty() ? tr("Connect to a cluster to launch models and chat with them.") : reason);
        m_podsStatus->show();
    } else {
        m_podsStatus->hide();
        refreshPods();
    }
    updateButtons();
}

void PlaygroundPanel::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    refreshPods();
}

bool PlaygroundPanel::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_prompt && event->type() == QEvent::KeyPress) {
        const auto *key = static_cast<QKeyEvent *>(event);
        if ((key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) && (key->modifiers() & Qt::ControlModifier)) {
            send();
            return true;
        }
        if (key->key() == Qt::Key_Escape && (m_left->isStreaming() || m_right->isStreaming())) {
            stopReplies();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

void PlaygroundPanel::refreshPods()
{
    Playground::PlaygroundClient *client = m_session ? m_session->playground() : nullptr;
    if (!client || m_listing) return;   // one list at a time
    m_listing = std::make_unique<QObject>();
    QPointer<QObject> context = m_listing.get();
    client->list([this, context](Result<QList<PlaygroundInstance>> listed) {
        if (!context) return;   // the panel let go of it (a session change)
        m_listing.reset();
        if (!listed) {
            m_podsStatus->setText(tr("The playground pods could not be listed: %1").arg(listed.error().message));
            m_podsStatus->show();
            return;
        }
        m_podsStatus->hide();
        const QDateTime now = QDateTime::currentDateTimeUtc();
        m_pods->setNow(now);
        m_pods->setInstances(*listed);
        for (const PlaygroundInstance &i : *listed) {
            const qint64 left = i.expiresAt.isValid() ? now.secsTo(i.expiresAt) : -1;
            if (!i.ended() && left > 0 && left <= 5 * 60 && !m_warnedExpiring.contains(i.name)) {
                m_warnedExpiring.insert(i.name);
                Q_EMIT podExpiringSoon(i.name, i.servedName, left);
            }
        }
        updateBanner();
        updateButtons();
    });
}

QString PlaygroundPanel::selectedPod() const
{
    const QModelIndex current = m_podsView->currentIndex();
    return current.isValid() ? current.data(PlaygroundPodsModel::PodNameRole).toString() : QString();
}

void PlaygroundPanel::updateBanner()
{
    // The selected pod, or else the first that is not ready: why it waits, in one sentence.
    QString pod = selectedPod();
    if (pod.isEmpty()) {
        for (const PlaygroundInstance &i : m_pods->instances()) {
            if (!i.ready && !i.ended()) {
                pod = i.name;
                break;
            }
        }
    }
    const auto instance = m_pods->instance(pod);
    if (!instance || instance->ready || instance->ended() || !m_session || !m_session->playground()) {
        m_banner->hide();
        m_diagnosedPod.clear();
        return;
    }
    m_diagnosedPod = pod;
    m_diagnosing = std::make_unique<QObject>();
    QPointer<QObject> context = m_diagnosing.get();
    const Cluster::CapacityTracker *capacity = m_session->capacity();
    m_session->playground()->diagnose(pod, capacity && capacity->isSynced() ? &capacity->model() : nullptr, m_session->settings().gpuNodeLabel,
                                      [this, context, pod](Result<Cluster::Diagnosis> diagnosis) {
                                          if (!context || pod != m_diagnosedPod) return;
                                          if (!diagnosis || diagnosis->message.isEmpty()) {
                                              m_banner->setText(tr("%1 is starting: vLLM loads the model before it answers.").arg(pod));
                                          } else {
                                              m_banner->setText(tr("%1: %2").arg(pod, diagnosis->message));
                                          }
                                          m_banner->show();
                                      });
}

LaunchDialog *PlaygroundPanel::openLaunchDialog(const Playground::LaunchRequest &request)
{
    if (!m_session || !m_session->playground()) {
        m_prompts->inform(this, tr("Launch a model"), tr("Connect to a cluster first."));
        return nullptr;
    }
    delete m_launchDialog.data();
    const Cluster::CapacityTracker *capacity = m_session->capacity();
    m_launchDialog = new LaunchDialog(m_session->settings(), capacity, this);
    m_launchDialog->setAttribute(Qt::WA_DeleteOnClose);
    if (!request.model.isEmpty() || !request.series.isEmpty()) m_launchDialog->setRequest(request);
    LaunchDialog *dialog = m_launchDialog;
    connect(dialog, &QDialog::accepted, this, [this, dialog] { launch(dialog->request()); });
    dialog->open();
    return dialog;
}

void PlaygroundPanel::launch(const Playground::LaunchRequest &request)
{
    if (!m_session || !m_session->playground()) return;
    const auto pod = Playground::PlaygroundPod::build(request, m_session->settings(), Job::RayJobBuilder::newJobId(), QDateTime::currentDateTimeUtc());
    if (!pod) {
        m_prompts->inform(this, tr("Launch a model"), pod.error().message);
        return;
    }
    m_podsStatus->setText(tr("Launching %1…").arg(Playground::PlaygroundPod::servedNameFor(request)));
    m_podsStatus->show();
    QPointer<PlaygroundPanel> self(this);
    m_session->playground()->launch(*pod, [self](Result<PlaygroundInstance> launched) {
        if (!self) return;
        if (!launched) {
            self->m_podsStatus->setText(tr("The model was not launched: %1").arg(launched.error().message));
            self->m_podsStatus->show();
            return;
        }
        self->m_podsStatus->setText(tr("%1 launched as %2; it answers once vLLM has loaded the model.").arg(launched->servedName, launched->name));
        self->m_listing.reset();
        self->refreshPods();
        // The new pod is the one to talk to next.
        ChatPane *target = self->m_compare->isChecked() && !self->m_right->pod().isEmpty() && self->m_left->pod() != launched->name
                               ? self->m_right
                               : self->m_left;
        if (target->transcript()->rowCount() == 0) target->setPod(launched->name);
        Q_EMIT self->launched(launched->name);
    });
}

void PlaygroundPanel::stopSelectedPod()
{
    const QString pod = selectedPod();
    if (pod.isEmpty() || !m_session || !m_session->playground()) return;
    const auto instance = m_pods->instance(pod);
    if (!m_prompts->confirm(this, tr("Stop pod"), tr("Delete %1 (%2) now? Its GPUs are freed; conversations with it stay saved.")
                                                     .arg(pod, instance ? instance->servedName : QString()))) {
        return;
    }
    for (ChatPane *pane : {m_left, m_right}) {
        if (pane->pod() == pod) pane->stop();
    }
    QPointer<PlaygroundPanel> self(this);
    m_session->playground()->stop(pod, [self, pod](Result<void> stopped) {
        if (!self) return;
        if (!stopped) {
            self->m_prompts->inform(self, tr("Stop pod"), stopped.error().message);
            return;
        }
        self->m_podsStatus->setText(tr("%1 is stopping.").arg(pod));
        self->m_podsStatus->show();
        self->m_listing.reset();
        self->refreshPods();
    });
}

bool PlaygroundPanel::selectPod(const QString &pod)
{
    const int row = m_pods->rowOf(pod);
    if (row < 0) return false;
    m_podsView->setCurrentIndex(m_pods->index(row, 0));
    m_podsView->setFocus(Qt::OtherFocusReason);
    return true;
}

LaunchDialog *PlaygroundPanel::extendSelectedPod()
{
    const auto instance = m_pods->instance(selectedPod());
    if (!instance) return nullptr;
    LaunchDialog *dialog = openLaunchDialog(instance->launchRequest());
    if (!dialog) return nullptr;
    dialog->setWindowTitle(tr("Extend %1").arg(instance->name));
    dialog->setNote(tr("Kubernetes lets a pod's deadline (activeDeadlineSeconds) only go down, so more time is a new pod serving "
                       "the same model. Launch it, and stop %1 once the new one is ready; the conversation carries over by "
                       "choosing the new pod as its model.")
                        .arg(instance->name));
    return dialog;
}

void PlaygroundPanel::setComparing(bool comparing)
{
    if (m_compare->isChecked() != comparing) m_compare->setChecked(comparing);
    m_right->setVisible(comparing);
    if (comparing && (m_right->pod().isEmpty() || m_right->pod() == m_left->pod())) {
        // Another ready pod than the left one's, if there is one.
        for (const PlaygroundInstance &i : m_pods->instances()) {
            if (i.ready && !i.ended() && i.name != m_left->pod()) {
                m_right->setPod(i.name);
                break;
            }
        }
    }
    updateButtons();
}

void PlaygroundPanel::updateSettingsSummary()
{
    const Playground::ChatSettings s = chatSettings();
    QString text = tr("Settings: temperature %1 · top-p %2 · %3 tokens at most")
                       .arg(QLocale().toString(s.temperature, 'f', 2), QLocale().toString(s.topP, 'f', 2))
                       .arg(s.maxTokens);
    if (!s.system.isEmpty()) text += tr(" · system prompt");
    m_settingsButton->setText(text);
}

Playground::ChatSettings PlaygroundPanel::chatSettings() const
{
    Playground::ChatSettings s;
    s.system = m_system->text().trimmed();
    s.temperature = m_temperature->value();
    s.topP = m_topP->value();
    s.maxTokens = m_maxTokens->value();
    return s;
}

void PlaygroundPanel::send()
{
    const QString text = m_prompt->toPlainText();
    if (text.trimmed().isEmpty()) return;
    bool sent = false;
    for (ChatPane *pane : {m_left, m_right}) {
        if (pane == m_left || m_compare->isChecked()) sent = pane->send(text, chatSettings()) || sent;
    }
    if (sent) m_prompt->clear();
    updateButtons();
}

void PlaygroundPanel::stopReplies()
{
    for (ChatPane *pane : {m_left, m_right}) pane->stop();
}

void PlaygroundPanel::regenerate()
{
    for (ChatPane *pane : {m_left, m_right}) {
        if (pane == m_left || m_compare->isChecked()) pane->regenerate(chatSettings());
    }
    updateButtons();
}

void PlaygroundPanel::editMessage(ChatPane *pane, int row)
{
    const QString current = pane->transcript()->index(row).data(Models::TranscriptModel::ContentRole).toString();
    const std::optional<QString> edited = m_prompts->askText(this, tr("Edit message"), tr("The conversation continues from this message:"), current);
    if (!edited || edited->trimmed().isEmpty()) return;
    pane->resendEdited(row, *edited, chatSettings());
    updateButtons();
}

bool PlaygroundPanel::exportConversation(const QString &path, int pane)
{
    const Models::TranscriptModel *transcript = this->pane(pane)->transcript();
    const QByteArray bytes = path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive) ? QJsonDocument(transcript->toJson()).toJson()
                                                                                         : transcript->toMarkdown().toUtf8();
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return false;
    file.write(bytes);
    return file.commit();
}

void PlaygroundPanel::fillHistory()
{
    const QString current = m_left->conversationId();
    const QSignalBlocker blocker(m_history);
    m_history->clear();
    for (const Playground::ConversationSummary &c : m_store->list()) {
        const QString title = c.damaged ? tr("%1 (damaged: cannot be read)").arg(c.id)
                                        : tr("%1 — %2").arg(c.title.isEmpty() ? tr("(empty)") : c.title, c.model);
        m_history->addItem(title, c.damaged ? QString() : c.id);
    }
    m_history->setCurrentIndex(m_history->findData(current));
}

void PlaygroundPanel::updateButtons()
{
    const bool streaming = m_left->isStreaming() || m_right->isStreaming();
    const bool connected = m_session && m_session->playground();
    m_launch->setEnabled(connected);
    m_stopPod->setEnabled(connected && !selectedPod().isEmpty());
    m_extend->setEnabled(connected && !selectedPod().isEmpty());
    m_send->setEnabled(!streaming && !m_prompt->toPlainText().trimmed().isEmpty());
    m_stop->setEnabled(streaming);
    const auto lastIsReply = [](const ChatPane *pane) {
        const int rows = pane->transcript()->rowCount();
        return rows > 0 && pane->transcript()->index(rows - 1).data(Models::TranscriptModel::MessageRoleRole).toString() == QLatin1String("assistant");
    };
    m_regenerate->setEnabled(!streaming && lastIsReply(m_left));
    m_export->setEnabled(m_left->transcript()->rowCount() > 0);
}

} // namespace Starforge::Gui
