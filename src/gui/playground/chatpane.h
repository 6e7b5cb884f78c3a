#pragma once

// One side of the playground's chat (docs/playground.md, "The panel"): a pod to talk to, the
// conversation with it (TranscriptModel in a TranscriptView) and the pod's vLLM metrics. The
// panel shows one pane, or two side by side to compare models: the same prompt goes to both.
// Sending streams the reply through the API server's pod proxy (Playground::ChatStream); stop
// aborts it (vLLM stops generating when its client goes), regenerate asks again for the last
// reply, and editing a message of yours drops what followed it and asks from there. Each
// conversation is saved on this machine as it changes (Playground::ConversationStore) and can
// be reopened after a restart.

#include "core/playground/chatclient.h"
#include "models/playgroundpodsmodel.h"

#include <QPointer>
#include <QTimer>
#include <QWidget>

class QComboBox;
class QLabel;

namespace Starforge {
class Session;
}
namespace Starforge::Models {
class TranscriptModel;
}
namespace Starforge::Playground {
class ConversationStore;
}

namespace Starforge::Gui {

class TranscriptView;

class ChatPane final : public QWidget
{
    Q_OBJECT
public:
    ChatPane(const QString &name, QWidget *parent = nullptr);
    ~ChatPane() override;

    void setSession(Session *session);
    void setPodsModel(Models::PlaygroundPodsModel *pods);
    void setConversationStore(Playground::ConversationStore *store);

    void setPod(const QString &pod);
    QString pod() const;
    QString servedName() const;
    // Why a message cannot go now ("choose a pod", "… is still starting"); empty when it can.
    QString whyNotReady() const;

    // Sends a message with these settings; false (and why in the status line) when it cannot.
    bool send(const QString &text, const Playground::ChatSettings &settings);
    bool regenerate(const Playground::ChatSettings &settings);
    bool resendEdited(int row, const QString &text, const Playground::ChatSettings &settings);
    void stop();
    bool isStreaming() const;

    // A fresh conversation, or one saved earlier.
    void newConversation();
    Result<void> openConversation(const QString &id);
    QString conversationId() const { return m_conversationId; }

    // Reads the pod's /metrics now (the panel asks every few seconds while visible).
    void refreshMetrics();

    // The parts, for tests and screenshots.
    Models::TranscriptModel *transcript() const { return m_transcript; }
    TranscriptView *view() const { return m_view; }
    QComboBox *podCombo() const { return m_podCombo; }
    QLabel *statusLabel() const { return m_status; }
    QLabel *metricsLabel() const { return m_metrics; }

Q_SIGNALS:
    void streamingChanged(bool streaming);
    void replyFinished();
    void conversationSaved(const QString &id);
    void editRequested(int row);

private:
    bool startReply(const Playground::ChatSettings &settings);
    void onStreamFinished();
    void save();
    void syncPodCombo();

    QPointer<Session> m_session;
    QPointer<Models::PlaygroundPodsModel> m_pods;
    Playground::ConversationStore *m_store = nullptr;
    QPointer<Playground::ChatStream> m_stream;
    std::unique_ptr<QObject> m_metricsRequest;   // context of the /metrics read in flight
    QString m_pod;
    QString m_conversationId;

    Models::TranscriptModel *m_transcript;
    TranscriptView *m_view;
    QComboBox *m_podCombo;
    QLabel *m_status;
    QLabel *m_metrics;
};

} // namespace Starforge::Gui
