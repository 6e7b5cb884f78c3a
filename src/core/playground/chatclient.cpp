#include "core/playground/chatclient.h"

#include "core/kube/kubeclient.h"
#include "core/kube/resourcekind.h"
#include "core/net/sseparser.h"
#include "core/playground/playgroundpod.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkReply>

#include <algorithm>

namespace Starforge::Playground {

namespace {

// vLLM's error object ({"error": {"message", "type", "param", "code"}}, or the older flat
// {"object": "error", "message"}), or the API server's Status; empty when body is neither.
QString errorMessage(const QJsonObject &body)
{
    const QJsonValue error = body.value(QStringLiteral("error"));
    if (error.isObject()) return error[QStringLiteral("message")].toString();
    if (error.isString()) return error.toString();
    if (body.value(QStringLiteral("object")).toString() == QLatin1String("error")
        || body.value(QStringLiteral("kind")).toString() == QLatin1String("Status")) {
        return body.value(QStringLiteral("message")).toString();
    }
    return {};
}

} // namespace

double ChatReply::tokensPerSecond() const
{
    const qint64 generating = totalMs - std::max<qint64>(firstTokenMs, 0);
    if (firstTokenMs < 0 || completionTokens < 2 || generating <= 0) return 0;
    // The first token's time is the prefill's; the rest came at the generation speed.
    return (completionTokens - 1) * 1000.0 / double(generating);
}

ChatStream::ChatStream(QObject *parent)
    : QObject(parent)
    , m_parser(std::make_unique<Net::SseParser>())
{
}

ChatStream::~ChatStream()
{
    if (m_network) {
        m_network->disconnect(this);
        m_network->abort();
        m_network->deleteLater();
    }
}

QByteArray ChatStream::requestBody(const QString &model, const QList<ChatMessage> &messages, const ChatSettings &settings)
{
    QJsonArray list;
    if (!settings.system.isEmpty()) {
        list.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("system")}, {QStringLiteral("content"), settings.system}});
    }
    for (const ChatMessage &m : messages) {
        list.append(QJsonObject{{QStringLiteral("role"), m.role}, {QStringLiteral("content"), m.content}});
    }
    const QJsonObject body{{QStringLiteral("model"), model},
                           {QStringLiteral("messages"), list},
                           {QStringLiteral("stream"), true},
                           {QStringLiteral("stream_options"), QJsonObject{{QStringLiteral("include_usage"), true}}},
                           {QStringLiteral("temperature"), settings.temperature},
                           {QStringLiteral("top_p"), settings.topP},
                           {QStringLiteral("max_tokens"), settings.maxTokens}};
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

QString ChatStream::proxyPath(const QString &ns, const QString &pod, const QString &endpoint)
{
    return Kube::ResourceKind::pods().path(ns, QStringLiteral("%1:%2").arg(pod).arg(VllmPort), QStringLiteral("proxy")) + endpoint;
}

ChatStream *ChatStream::start(Kube::KubeClient *client, const QString &ns, const QString &pod, const QString &model,
                              const QList<ChatMessage> &messages, const ChatSettings &settings, QObject *parent)
{
    auto *stream = new ChatStream(parent);
    Kube::ApiRequest request;
    request.method = "POST";
    request.path = proxyPath(ns, pod, QStringLiteral("/v1/chat/completions"));
    request.body = requestBody(model, messages, settings);
    request.what = tr("chat with %1 in pod %2").arg(model, pod);
    stream->m_clock.start();
    stream->m_network = client->openStream(request);
    if (!stream->m_network) {
        // After the caller has connected to finished().
        QMetaObject::invokeMethod(stream, [stream, pod] {
            stream->finish(Error::unavailable(tr("Cannot reach the pod %1 through the API server.").arg(pod)));
        }, Qt::QueuedConnection);
        return stream;
    }
    connect(stream->m_network, &QNetworkReply::metaDataChanged, stream, [stream] {
        stream->m_status = stream->m_network->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    });
    connect(stream->m_network, &QNetworkReply::readyRead, stream, &ChatStream::onReadyRead);
    connect(stream->m_network, &QNetworkReply::finished, stream, &ChatStream::onFinished);
    return stream;
}

void ChatStream::stop()
{
    if (m_done || !m_network) return;
    m_stopped = true;
    m_network->abort();   // finished() follows, synchronously
}

void ChatStream::onReadyRead()
{
    const QByteArray bytes = m_network->readAll();
    if (m_status != 200) {
        m_errorBody += bytes.left(std::max<qsizetype>(0, 64 * 1024 - m_errorBody.size()));   // bounded: enough for the message
        return;
    }
    for (const Net::SseEvent &event : m_parser->feed(bytes)) {
        if (m_done) return;   // stopped from a delta handler: nothing more is taken
        if (event.data == QLatin1String("[DONE]")) {
            m_sawDone = true;
            continue;
        }
        const QJsonObject chunk = QJsonDocument::fromJson(event.data.toUtf8()).object();
        if (const QString message = errorMessage(chunk); !message.isEmpty()) {
            m_reply.error = Error::unavailable(tr("vLLM stopped the reply: %1").arg(message));
            continue;
        }
        if (const QJsonObject usage = chunk.value(QStringLiteral("usage")).toObject(); !usage.isEmpty()) {
            m_reply.promptTokens = usage.value(QStringLiteral("prompt_tokens")).toInt();
            m_reply.completionTokens = usage.value(QStringLiteral("completion_tokens")).toInt();
        }
        const QJsonObject choice = chunk.value(QStringLiteral("choices")).toArray().first().toObject();
        const QString text = choice.value(QStringLiteral("delta")).toObject().value(QStringLiteral("content")).toString();
        if (!text.isEmpty()) {
            if (m_reply.firstTokenMs < 0) m_reply.firstTokenMs = m_clock.elapsed();
            ++m_deltas;
            m_reply.content += text;
            Q_EMIT delta(text);
        }
        if (const QString reason = choice.value(QStringLiteral("finish_reason")).toString(); !reason.isEmpty()) {
            m_reply.finishReason = reason;
        }
    }
    if (m_parser->failed() && !m_done && m_network) {
        m_reply.error = Error::unavailable(tr("The chat stream sent an event too large to read."));
        m_network->abort();
    }
}

void ChatStream::onFinished()
{
    if (m_done) return;
    if (m_network->bytesAvailable() > 0) onReadyRead();
    std::optional<Error> error = m_reply.error;
    if (m_stopped) {
        m_reply.finishReason = QStringLiteral("abort");
    } else if (!error && m_status != 200) {
        const QString message = errorMessage(QJsonDocument::fromJson(m_errorBody).object());
        error = m_status == 0 ? Error::unavailable(tr("No answer from the pod: %1").arg(m_network->errorString()))
                              : Error::unavailable(tr("The chat was refused (HTTP %1): %2")
                                                       .arg(m_status)
                                                       .arg(message.isEmpty() ? QString::fromUtf8(m_errorBody.left(300)).trimmed() : message));
    } else if (!error && !m_sawDone) {
        error = Error::unavailable(tr("The reply ended before vLLM finished it: the connection to the pod was cut."));
    }
    finish(error);
}

void ChatStream::finish(std::optional<Error> error)
{
    if (m_done) return;
    m_done = true;
    m_reply.error = std::move(error);
    m_reply.totalMs = m_clock.isValid() ? m_clock.elapsed() : 0;
    if (m_reply.completionTokens == 0) m_reply.completionTokens = m_deltas;
    if (m_network) {
        m_network->disconnect(this);
        m_network->deleteLater();
        m_network = nullptr;
    }
    Q_EMIT finished();
}

} // namespace Starforge::Playground
