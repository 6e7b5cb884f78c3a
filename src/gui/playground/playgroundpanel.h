#pragma once

// The Playground dock (docs/playground.md, "The panel"):
//  - the owner's playground pods (PlaygroundPodsModel): each with the name to ask for, where it
//    runs, its state and the time left before the cluster ends it; Launch… (LaunchDialog, also
//    opened from a finished job's checkpoint in the Job dock), Stop, and for a pod that does not
//    start, the diagnosis engine's sentence under the table;
//  - the chat: a ChatPane, or two side by side to compare models with the same prompts; the
//    settings sent with each request (system prompt, temperature, top-p, max tokens); Send
//    (Ctrl+Return), Stop (Esc), Regenerate, New, the saved conversations to reopen, and Export
//    as Markdown or JSON.
// Pods are listed again every few seconds while the dock is visible, after a launch or a stop,
// and when the session's reaper has removed some; the countdown moves every second.

#include "core/playground/chatclient.h"
#include "core/playground/playgroundpod.h"
#include "gui/playground/launchdialog.h"

#include <QPointer>
#include <QSet>
#include <QTimer>
#include <QWidget>

#include <memory>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTableView;
class QToolButton;

namespace Starforge {
class Session;
}
namespace Starforge::Models {
class PlaygroundPodsModel;
}
namespace Starforge::Playground {
class ConversationStore;
}

namespace Starforge::Gui {

class ChatPane;
class UserPrompts;

class PlaygroundPanel final : public QWidget
{
    Q_OBJECT
public:
    PlaygroundPanel(UserPrompts *prompts, QWidget *parent = nullptr);
    ~PlaygroundPanel() override;

    void setSession(Session *session);
    // Where conversations are kept (tests); empty: the data folder's.
    void setConversationFolder(const QString &dir);
    void setRefreshInterval(int ms);

    // Opens the launch form, filled in (a job's checkpoint); the pod is made when it is accepted.
    LaunchDialog *openLaunchDialog(const Playground::LaunchRequest &request = {});
    // Reads the owner's pods now.
    void refreshPods();
    void stopSelectedPod();
    // The launch form for the selected pod's model again, saying why it is a new pod.
    LaunchDialog *extendSelectedPod();
    void setComparing(bool comparing);
    // Sends the prompt box's text to the pane, or to both when comparing.
    void send();
    void stopReplies();
    void regenerate();
    bool exportConversation(const QString &path, int pane = 0);
    Playground::ChatSettings chatSettings() const;

    // The parts, for tests and screenshots.
    QTableView *podsView() const { return m_podsView; }
    Models::PlaygroundPodsModel *podsModel() const { return m_pods; }
    QLabel *podBanner() const { return m_banner; }
    ChatPane *pane(int index) const { return index == 0 ? m_left : m_right; }
    QPlainTextEdit *promptEdit() const { return m_prompt; }
    QPushButton *sendButton() const { return m_send; }
    QPushButton *stopButton() const { return m_stop; }
    QCheckBox *compareCheck() const { return m_compare; }
    QComboBox *historyCombo() const { return m_history; }
    QLineEdit *systemEdit() const { return m_system; }
    QToolButton *settingsButton() const { return m_settingsButton; }
    QDoubleSpinBox *temperatureSpin() const { return m_temperature; }
    QDoubleSpinBox *topPSpin() const { return m_topP; }
    QSpinBox *maxTokensSpin() const { return m_maxTokens; }
    LaunchDialog *launchDialog() const { return m_launchDialog; }

    // Selects the pod in the table (a notification's click); false when it is not listed.
    bool selectPod(const QString &pod);

Q_SIGNALS:
    void launched(const QString &pod);
    // Once per pod, when fewer than five minutes are left before the cluster ends it.
    void podExpiringSoon(const QString &pod, const QString &servedName, qint64 secondsLeft);

protected:
    void showEvent(QShowEvent *event) override;
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void takeSessionParts();
    void launch(const Playground::LaunchRequest &request);
    void updateButtons();
    void updateBanner();
    void fillHistory();
    void updateSettingsSummary();
    void editMessage(ChatPane *pane, int row);
    QString selectedPod() const;

    UserPrompts *m_prompts;
    QPointer<Session> m_session;
    std::unique_ptr<Playground::ConversationStore> m_store;
    std::unique_ptr<QObject> m_listing;     // context of the list in flight
    std::unique_ptr<QObject> m_diagnosing;  // context of the diagnosis in flight
    QString m_diagnosedPod;
    QSet<QString> m_warnedExpiring;   // pods podExpiringSoon() was emitted for
    int m_hiddenTicks = 0;
    QTimer m_refreshTimer;
    QTimer m_tick;

    Models::PlaygroundPodsModel *m_pods;
    QTableView *m_podsView;
    QPushButton *m_launch;
    QPushButton *m_stopPod;
    QPushButton *m_extend;
    QLabel *m_banner;
    QLabel *m_podsStatus;
    QToolButton *m_settingsButton;
    QWidget *m_settingsBox;
    QLineEdit *m_system;
    QDoubleSpinBox *m_temperature;
    QDoubleSpinBox *m_topP;
    QSpinBox *m_maxTokens;
    QComboBox *m_history;
    QPushButton *m_new;
    QPushButton *m_export;
    QCheckBox *m_compare;
    ChatPane *m_left;
    ChatPane *m_right;
    QPlainTextEdit *m_prompt;
    QPushButton *m_send;
    QPushButton *m_stop;
    QPushButton *m_regenerate;
    QPointer<LaunchDialog> m_launchDialog;
};

} // namespace Starforge::Gui
