#pragma once

// A chat with a playground pod: POST /v1/chat/completions through the API server's pod proxy
// (pods/<pod>:8000/proxy), streamed. The reply is read as Server-Sent Events (Net::SseParser)
// in vLLM's shapes (docs/vllm.md): the role with the first token, deltas of any number of
// tokens (or none), a chunk with finish_reason, the usage chunk that stream_options.include_usage
// asks for, then `data: [DONE]`. An error before the stream is vLLM's {"error": {...}} object
// (or the API server's Status, e.g. the proxy's 503 while vLLM is not listening); one in the
// middle is `data: {"error": ...}` at status 200. stop() aborts the request at once, and vLLM
// stops generating when its client goes away. Each reply carries its time to first token and
// its tokens per second.

#include "core/util/result.h"

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>

#include <memory>
#include <optional>

class QNetworkReply;

namespace Starforge::Kube {
class KubeClient;
}
namespace Starforge::Net {
class SseParser;
}

namespace Starforge::Playground {

struct ChatMessage
{
    QString role;      // system, user, assistant
    QString content;

    bool operator==(const ChatMessage &) const = default;
};

struct ChatSettings
{
    QString system;             // prepended as a system message when set
    double temperature = 0.7;
    double topP = 1.0;
    int maxTokens = 512;
};

struct ChatReply
{
    QString content;
    QString finishReason;       // stop, length, abort (stopped by the user), or empty on error
    std::optional<Error> error;
    int promptTokens = 0;
    int completionTokens = 0;   // from usage, else the deltas counted
    qint64 firstTokenMs = -1;   // from the request to the first text
    qint64 totalMs = 0;

    // Generation speed after the first token; 0 when it cannot be told.
    double tokensPerSecond() const;
};

class ChatStream final : public QObject
{
    Q_OBJECT
public:
    ~ChatStream() override;

    // Aborts the request; finished() follows with finishReason "abort" and what had come.
    void stop();
    const ChatReply &reply() const { return m_reply; }
    bool isFinished() const { return m_done; }

    // The body vLLM is sent.
    static QByteArray requestBody(const QString &model, const QList<ChatMessage> &messages, const ChatSettings &settings);
    // The path of a pod's chat endpoint through the API server's proxy.
    static QString proxyPath(const QString &ns, const QString &pod, const QString &endpoint);

    // Opens the stream; the caller owns the object (parent it or delete it).
    static ChatStream *start(Kube::KubeClient *client, const QString &ns, const QString &pod, const QString &model,
                             const QList<ChatMessage> &messages, const ChatSettings &settings, QObject *parent = nullptr);

Q_SIGNALS:
    void delta(const QString &text);   // text as it arrives (may be several tokens)
    void finished();

private:
    explicit ChatStream(QObject *parent);
    void onReadyRead();
    void onFinished();
    void finish(std::optional<Error> error);

    QPointer<QNetworkReply> m_network;
    std::unique_ptr<Net::SseParser> m_parser;
    QElapsedTimer m_clock;
    ChatReply m_reply;
    int m_status = 0;
    QByteArray m_errorBody;            // a non-200 answer's body, for its error
    bool m_sawDone = false;
    bool m_stopped = false;
    bool m_done = false;
    int m_deltas = 0;
};

} // namespace Starforge::Playground
