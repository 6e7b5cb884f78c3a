#include "gui/playground/chatpane.h"

#include "core/kube/kubeclient.h"
#include "core/playground/conversationstore.h"
#include "core/playground/vllmmetrics.h"
#include "core/session/session.h"
#include "gui/palettefollow.h"
#include "gui/playground/transcriptview.h"
#include "models/playgroundpodsmodel.h"
#include "models/transcriptmodel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QVBoxLayout>

namespace Starforge::Gui {

using Models::PlaygroundPodsModel;
using Models::TranscriptModel;

ChatPane::ChatPane(const QString &name, QWidget *parent)
    : QWidget(parent)
    , m_transcript(new TranscriptModel(this))
    , m_view(new TranscriptView(this))
    , m_podCombo(new QComboBox(this))
    , m_status(new QLabel(this))
    , m_metrics(new QLabel(this))
{
    setObjectName(name);
    m_podCombo->setObjectName(name + QStringLiteral("PodCombo"));
    m_podCombo->setAccessibleName(tr("Model to chat with"));
    m_podCombo->setToolTip(tr("The playground pod this conversation talks to"));
    m_podCombo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_podCombo->setMinimumContentsLength(16);
    m_view->setObjectName(name + QStringLiteral("Transcript"));
    m_view->setModel(m_transcript);
    m_status->setObjectName(name + QStringLiteral("Status"));
    m_status->setWordWrap(true);
    m_status->setAccessibleName(tr("Chat status"));
    m_metrics->setObjectName(name + QStringLiteral("Metrics"));
    m_metrics->setWordWrap(true);
    m_metrics->setAccessibleName(tr("vLLM metrics"));
    followQuiet(m_metrics);
    auto *modelLabel = new QLabel(tr("&Model:"), this);
    modelLabel->setBuddy(m_podCombo);
    auto *top = new QHBoxLayout;
    top->addWidget(modelLabel);
    top->addWidget(m_podCombo, 1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_status);
    layout->addWidget(m_metrics);
    m_status->hide();
    m_metrics->hide();

    connect(m_podCombo, &QComboBox::activated, this, [this](int index) {
        setPod(m_podCombo->itemData(index, PlaygroundPodsModel::PodNameRole).toString());
    });
    connect(m_view, &TranscriptView::editRequested, this, &ChatPane::editRequested);
}

ChatPane::~ChatPane()
{
    // A reply still arriving is stopped, not left to write into a deleted model.
    if (m_stream) {
        m_stream->disconnect(this);
        m_stream->stop();
    }
}

void ChatPane::setSession(Session *session)
{
    m_session = session;
}

void ChatPane::setPodsModel(PlaygroundPodsModel *pods)
{
    if (m_pods) disconnect(m_pods, nullptr, this, nullptr);
    m_pods = pods;
    m_podCombo->setModel(pods);
    m_podCombo->setModelColumn(PlaygroundPodsModel::ModelColumn);
    if (pods) {
        // The combo follows the model's rows; keep showing this pane's pod when they move.
        for (auto signal : {&QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved}) {
            connect(pods, signal, this, [this] { syncPodCombo(); });
        }
        connect(pods, &QAbstractItemModel::dataChanged, this, [this] { syncPodCombo(); });
    }
    syncPodCombo();
}

void ChatPane::setConversationStore(Playground::ConversationStore *store)
{
    m_store = store;
}

void ChatPane::setPod(const QString &pod)
{
    if (pod != m_pod) {
        m_pod = pod;
        m_metricsRequest.reset();   // another pod's answer is not this one's
        m_metrics->clear();
        m_metrics->hide();
    }
    syncPodCombo();
    refreshMetrics();
}

QString ChatPane::pod() const
{
    return m_pod;
}

QString ChatPane::servedName() const
{
    const auto instance = m_pods ? m_pods->instance(m_pod) : std::nullopt;
    return instance ? instance->servedName : QString();
}

void ChatPane::syncPodCombo()
{
    if (!m_pods) return;
    // The first ready pod when none was chosen, so one click on Launch then Send is enough.
    if (m_pod.isEmpty() || m_pods->rowOf(m_pod) < 0) {
        for (const auto &i : m_pods->instances()) {
            if (i.ready && !i.ended()) {
                m_pod = i.name;
                break;
            }
        }
    }
    const int row = m_pods->rowOf(m_pod);
    if (m_podCombo->currentIndex() != row) m_podCombo->setCurrentIndex(row);
    m_view->setModelName(servedName());
}

QString ChatPane::whyNotReady() const
{
    if (!m_session || !m_session->kube()) return tr("Not connected to a cluster.");
    if (m_pod.isEmpty()) return tr("Launch a model above, or choose one, to chat with it.");
    const auto instance = m_pods ? m_pods->instance(m_pod) : std::nullopt;
    if (!instance) return tr("The pod %1 is gone; choose another model.").arg(m_pod);
    if (instance->ended()) return tr("The pod %1 has ended (%2); launch it again to chat.").arg(m_pod, instance->stateText());
    if (!instance->ready) return tr("%1 is not ready yet (%2); the model loads before it answers.").arg(instance->servedName, instance->stateText());
    return {};
}

bool ChatPane::isStreaming() const
{
    return m_stream && !m_stream->isFinished();
}

bool ChatPane::send(const QString &text, const Playground::ChatSettings &settings)
{
    if (text.trimmed().isEmpty() || isStreaming()) return false;
    if (const QString why = whyNotReady(); !why.isEmpty()) {
        m_status->setText(why);
        m_status->show();
        return false;
    }
    m_transcript->appendUser(text);
    return startReply(settings);
}

bool ChatPane::regenerate(const Playground::ChatSettings &settings)
{
    if (isStreaming() || !whyNotReady().isEmpty()) return false;
    if (!m_transcript->dropLastReply()) return false;
    return startReply(settings);
}

bool ChatPane::resendEdited(int row, const QString &text, const Playground::ChatSettings &settings)
{
    if (isStreaming() || text.trimmed().isEmpty() || !whyNotReady().isEmpty()) return false;
    if (!m_transcript->editMessage(row, text)) return false;
    return startReply(settings);
}

bool ChatPane::startReply(const Playground::ChatSettings &settings)
{
    m_status->hide();
    const QString model = servedName();
    m_transcript->setContext({m_pod, model, settings});
    m_view->setModelName(model);
    m_stream = Playground::ChatStream::start(m_session->kube(), m_session->settings().ns, m_pod, model, m_transcript->messages(), settings, this);
    m_transcript->beginReply();
    connect(m_stream, &Playground::ChatStream::delta, m_transcript, &TranscriptModel::appendDelta);
    connect(m_stream, &Playground::ChatStream::finished, this, &ChatPane::onStreamFinished);
    Q_EMIT streamingChanged(true);
    return true;
}

void ChatPane::stop()
{
    if (isStreaming()) m_stream->stop();
}

void ChatPane::onStreamFinished()
{
    Playground::ChatStream *stream = m_stream;
    if (!stream) return;
    m_transcript->finishReply(stream->reply());
    stream->deleteLater();
    m_stream = nullptr;
    save();
    refreshMetrics();
    Q_EMIT streamingChanged(false);
    Q_EMIT replyFinished();
}

void ChatPane::save()
{
    if (!m_store || m_transcript->rowCount() == 0) return;
    const auto saved = m_store->save(m_conversationId, m_transcript->toJson());
    if (!saved) {
        m_status->setText(tr("The conversation could not be saved: %1").arg(saved.error().message));
        m_status->show();
        return;
    }
    m_conversationId = *saved;
    Q_EMIT conversationSaved(m_conversationId);
}

void ChatPane::newConversation()
{
    stop();
    m_transcript->clear();
    m_conversationId.clear();
    m_status->hide();
}

Result<void> ChatPane::openConversation(const QString &id)
{
    if (!m_store) return Error::invalid(tr("no conversation store"));
    const auto loaded = m_store->load(id);
    if (!loaded) return loaded.error();
    stop();
    m_transcript->loadJson(*loaded);
    m_conversationId = id;
    // Talk to the same pod again if it is still there; else the reader chooses another.
    const QString pod = m_transcript->context().pod;
    if (m_pods && m_pods->rowOf(pod) >= 0) setPod(pod);
    m_view->setModelName(m_transcript->context().model);
    if (m_pods && m_pods->rowOf(pod) < 0) {
        m_status->setText(tr("Reopened. Its pod %1 is gone: choose a model to continue the conversation with.").arg(pod));
        m_status->show();
    }
    return {};
}

void ChatPane::refreshMetrics()
{
    if (!m_session || !m_session->kube() || m_pod.isEmpty() || !whyNotReady().isEmpty()) return;
    if (m_metricsRequest) return;   // one read at a time
    m_metricsRequest = std::make_unique<QObject>();
    Kube::ApiRequest request;
    request.path = Playground::ChatStream::proxyPath(m_session->settings().ns, m_pod, QStringLiteral("/metrics"));
    request.what = tr("read %1's metrics").arg(m_pod);
    request.timeoutMs = 10000;
    const QString pod = m_pod;
    m_session->kube()->send(request, m_metricsRequest.get(), [this, pod](const Kube::ApiResult &result) {
        m_metricsRequest.release()->deleteLater();   // the context of this very callback
        if (pod != m_pod) return;
        if (!result.ok()) {
            m_metrics->setText(tr("Metrics: %1").arg(result.error->message));
            m_metrics->show();
            return;
        }
        const Playground::VllmMetrics m = Playground::VllmMetrics::parse(result.body);
        if (!m.any) {
            m_metrics->setText(tr("Metrics: the pod's /metrics has no vLLM series."));
        } else {
            QString text = tr("%1 running · %2 waiting · KV cache %3% · %4 tokens generated")
                               .arg(qRound(m.requestsRunning))
                               .arg(qRound(m.requestsWaiting))
                               .arg(QLocale().toString(m.kvCacheUsage * 100, 'f', 1))
                               .arg(QLocale().toString(qint64(m.generationTokens)));
            if (m.meanTimeToFirstTokenSeconds) text += tr(" · mean first token %1 ms").arg(qRound(*m.meanTimeToFirstTokenSeconds * 1000));
            m_metrics->setText(text);
        }
        m_metrics->show();
    });
}

} // namespace Starforge::Gui
