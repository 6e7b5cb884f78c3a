// The playground from the command line (docs/playground.md):
//   playground launch (--model PATH|NAME | --job ID [--step N]) [--series S] [--gpus N] [--ttl 2h] [--wait]
//   playground list
//   playground stop NAME
//   playground chat NAME [PROMPT...] [--system S] [--temperature T] [--top-p P] [--max-tokens N] [--session FILE]
// Every one of them first reaps the owner's expired or ended playground pods, as the app does
// when it starts. chat streams the reply to stdout as it comes and prints its time to first token
// and speed on stderr; --session keeps the conversation in a file, so the next chat continues it.

#include "cli/command.h"
#include "cli/commands/commands.h"
#include "cli/output.h"
#include "core/job/history.h"
#include "core/job/progressfollower.h"
#include "core/job/rayjobbuilder.h"
#include "core/kube/kubeclient.h"
#include "core/playground/chatclient.h"
#include "core/playground/playgroundclient.h"
#include "core/playground/playgroundpod.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSaveFile>
#include <QTimer>

#include <cstdio>

namespace Starforge::Cli {

namespace {

using namespace Starforge::Playground;

// "2h", "90m", "45s", "1d" or seconds.
std::optional<int> parseDuration(const QString &text)
{
    static const QRegularExpression form(QStringLiteral("^(\\d+)([smhd]?)$"));
    const auto m = form.match(text.trimmed());
    if (!m.hasMatch()) return std::nullopt;
    const qint64 n = m.captured(1).toLongLong();
    const QString unit = m.captured(2);
    const qint64 seconds = unit == QLatin1String("m") ? n * 60 : unit == QLatin1String("h") ? n * 3600 : unit == QLatin1String("d") ? n * 86400 : n;
    return seconds > std::numeric_limits<int>::max() ? std::nullopt : std::optional<int>(int(seconds));
}

QJsonObject toJson(const PlaygroundInstance &i, const QDateTime &now)
{
    return QJsonObject{{QStringLiteral("name"), i.name}, {QStringLiteral("state"), i.stateText()}, {QStringLiteral("model"), i.model},
                       {QStringLiteral("servedName"), i.servedName}, {QStringLiteral("series"), i.series}, {QStringLiteral("gpus"), i.gpus},
                       {QStringLiteral("jobId"), i.jobId}, {QStringLiteral("step"), i.step},
                       {QStringLiteral("expiresAt"), i.expiresAt.toString(Qt::ISODate)},
                       {QStringLiteral("secondsLeft"), i.expiresAt.isValid() ? std::max<qint64>(0, now.secsTo(i.expiresAt)) : 0}};
}

class PlaygroundCommand : public Command
{
    Q_OBJECT
public:
    using Command::Command;

protected:
    // A clients-only session, the owner's playground, and the reaper's pass; then then().
    void withPlayground(std::function<void()> then)
    {
        openSession(clientsOnly(), [this, then = std::move(then)] {
            if (m_session->settings().owner.isEmpty()) {
                fail(Error::invalid(tr("the owner is unknown; set FORGE_OWNER (the playground acts only on your own pods)")));
                return;
            }
            m_playground = new PlaygroundClient(m_session->kube(), m_session->settings().ns, m_session->settings().owner, work());
            m_playground->reap(QDateTime::currentDateTimeUtc(), [this, then](Result<QStringList> reaped) {
                if (reaped && !reaped->isEmpty() && !json()) note(tr("reaped %1").arg(reaped->join(QStringLiteral(", "))));
                then();
            });
        });
    }

    PlaygroundClient *m_playground = nullptr;
};

class LaunchCommand final : public PlaygroundCommand
{
    Q_OBJECT
public:
    using PlaygroundCommand::PlaygroundCommand;

    void run() override
    {
        const QString usage = tr("usage: starforge-cli playground launch (--model PATH|NAME | --job ID [--step N]) [--series S] [--gpus N] [--ttl 2h] [--wait]");
        if (m_args.value(QStringLiteral("model")).isEmpty() == m_args.value(QStringLiteral("job")).isEmpty()) {
            fail(Error::invalid(tr("give either --model or --job\n%1").arg(usage)));
            return;
        }
        m_request.model = m_args.value(QStringLiteral("model"));
        m_request.jobId = m_args.value(QStringLiteral("job"));
        m_request.series = m_args.value(QStringLiteral("series"));
        bool ok = true;
        if (m_args.values.contains(QStringLiteral("gpus"))) m_request.gpus = m_args.value(QStringLiteral("gpus")).toInt(&ok);
        if (!ok) {
            fail(Error::invalid(tr("--gpus takes a number of GPUs (the tensor parallel size)")));
            return;
        }
        if (m_args.values.contains(QStringLiteral("ttl"))) {
            const auto ttl = parseDuration(m_args.value(QStringLiteral("ttl")));
            if (!ttl) {
                fail(Error::invalid(tr("--ttl takes a duration such as 90m, 2h or 3600, not '%1'").arg(m_args.value(QStringLiteral("ttl")))));
                return;
            }
            m_request.ttlSeconds = *ttl;
        }
        withPlayground([this] { m_request.jobId.isEmpty() ? launch() : fromJob(); });
    }

private:
    // The job's newest checkpoint vLLM can serve as it is (or --step's), from its archived log.
    void fromJob()
    {
        Job::readArchivedJob(m_session->s3(), m_request.jobId, this, [this](Result<Job::JobRecord> record) {
            if (!record) {
                fail(Error{record.error().code, tr("%1 (a job's checkpoints are served once it has ended)").arg(record.error().message)});
                return;
            }
            if (record->owner != m_session->settings().owner) {
                fail(Error::invalid(record->owner.isEmpty()
                                        ? tr("job %1 belongs to nobody recorded; the playground serves only your own jobs' checkpoints").arg(m_request.jobId)
                                        : tr("job %1 belongs to %2; the playground serves only your own jobs' checkpoints").arg(m_request.jobId, record->owner)));
                return;
            }
            if (m_request.series.isEmpty()) {
                m_request.series = record->jobSpec.value(QStringLiteral("pools")).toArray().first()[QStringLiteral("series")].toString();
            }
            Job::readArchivedProgress(m_session->s3(), *record, this, [this](std::optional<Job::JobProgress> progress) {
                const int wanted = m_args.value(QStringLiteral("step")).toInt();
                std::optional<Job::ServableCheckpoint> chosen;
                QString notReady;
                for (const Job::ServableCheckpoint &c : progress ? progress->servableCheckpoints() : QList<Job::ServableCheckpoint>()) {
                    if (wanted > 0 && c.step != wanted) continue;
                    if (c.consolidated) chosen = c;
                    else notReady = c.converter.isEmpty() ? tr("its %1 checkpoints have no Hugging Face weights and no converter").arg(c.backend)
                                                          : tr("its %1 checkpoints need NeMo-RL's %2 first").arg(c.backend, c.converter);
                }
                if (!chosen) {
                    // One sentence per case: word order differs between languages.
                    QString why;
                    if (wanted > 0) {
                        why = notReady.isEmpty() ? tr("job %1 has no checkpoint at step %2 vLLM can serve").arg(m_request.jobId).arg(wanted)
                                                 : tr("job %1 has no checkpoint at step %2 vLLM can serve: %3").arg(m_request.jobId).arg(wanted).arg(notReady);
                    } else {
                        why = notReady.isEmpty() ? tr("job %1 has no checkpoint vLLM can serve").arg(m_request.jobId)
                                                 : tr("job %1 has no checkpoint vLLM can serve: %2").arg(m_request.jobId, notReady);
                    }
                    fail(Error::invalid(why));
                    return;
                }
                m_request.model = chosen->path;
                m_request.tokenizer = chosen->tokenizerPath;
                m_request.step = chosen->step;
                launch();
            });
        });
    }

    void launch()
    {
        const QString id = Job::RayJobBuilder::newJobId();
        const auto pod = PlaygroundPod::build(m_request, m_session->settings(), id, QDateTime::currentDateTimeUtc());
        if (!pod) {
            fail(pod.error());
            return;
        }
        m_playground->launch(*pod, [this](Result<PlaygroundInstance> launched) {
            if (!launched) {
                fail(launched.error());
                return;
            }
            m_name = launched->name;
            if (!json()) m_out << tr("%1 launched: %2 on %3").arg(m_name, launched->servedName, launched->series) << Qt::endl;
            if (!m_args.flag(QStringLiteral("wait"))) {
                if (json()) printJson(m_out, toJson(*launched, QDateTime::currentDateTimeUtc()));
                finish(Ok);
                return;
            }
            waitReady();
        });
    }

    // Ready once vLLM answers /health through the proxy; an ended pod fails the wait.
    void waitReady()
    {
        Kube::ApiRequest health;
        health.path = ChatStream::proxyPath(m_session->settings().ns, m_name, QStringLiteral("/health"));
        health.what = tr("ask %1 for its health").arg(m_name);
        m_session->kube()->send(health, this, [this](const Kube::ApiResult &result) {
            if (result.ok()) {
                m_playground->list([this](Result<QList<PlaygroundInstance>> listed) {
                    for (const PlaygroundInstance &i : listed ? *listed : QList<PlaygroundInstance>()) {
                        if (i.name != m_name) continue;
                        if (json()) printJson(m_out, toJson(i, QDateTime::currentDateTimeUtc()));
                        else m_out << tr("%1 ready").arg(m_name) << Qt::endl;
                    }
                    finish(Ok);
                });
                return;
            }
            m_playground->list([this](Result<QList<PlaygroundInstance>> listed) {
                for (const PlaygroundInstance &i : listed ? *listed : QList<PlaygroundInstance>()) {
                    if (i.name == m_name && i.ended()) {
                        fail(Error::unavailable(tr("%1 ended before it was ready (%2); see `kubectl logs %1`").arg(m_name, i.stateText())));
                        return;
                    }
                }
                // Every fifth second, why it is not ready yet, said once per cause.
                if (++m_polls % 5 == 0) {
                    m_playground->diagnose(m_name, nullptr, m_session->settings().gpuNodeLabel, [this](Result<Cluster::Diagnosis> why) {
                        if (why && why->cause != Cluster::Cause::Unknown && why->causeId() != m_lastCause) {
                            m_lastCause = why->causeId();
                            note(tr("%1 is waiting: %2: %3").arg(m_name, m_lastCause, why->message));
                        }
                    });
                }
                QTimer::singleShot(1000, this, [this] { waitReady(); });
            });
        });
    }

    LaunchRequest m_request;
    QString m_name;
    int m_polls = 0;
    QString m_lastCause;
};

class ListCommand final : public PlaygroundCommand
{
    Q_OBJECT
public:
    using PlaygroundCommand::PlaygroundCommand;

    void run() override
    {
        withPlayground([this] {
            m_playground->list([this](Result<QList<PlaygroundInstance>> listed) {
                if (!listed) {
                    fail(listed.error());
                    return;
                }
                const QDateTime now = QDateTime::currentDateTimeUtc();
                if (json()) {
                    QJsonArray out;
                    for (const PlaygroundInstance &i : *listed) out.append(toJson(i, now));
                    printJson(m_out, out);
                } else {
                    QList<QStringList> rows;
                    for (const PlaygroundInstance &i : *listed) {
                        rows << QStringList{i.name, i.stateText(), i.servedName, i.series, QString::number(i.gpus),
                                            i.expiresAt.isValid() ? formatAge(std::max<qint64>(0, now.secsTo(i.expiresAt))) : QString()};
                    }
                    // untranslated: column keys, as kubectl's; scripts pick columns of the table by them
                    m_out << formatTable({QStringLiteral("NAME"), QStringLiteral("STATE"), QStringLiteral("MODEL"), QStringLiteral("SERIES"),
                                          QStringLiteral("GPUS"), QStringLiteral("TIME LEFT")}, rows);
                }
                finish(Ok);
            });
        });
    }
};

class StopPlaygroundCommand final : public PlaygroundCommand
{
    Q_OBJECT
public:
    using PlaygroundCommand::PlaygroundCommand;

    void run() override
    {
        if (m_args.positionals.size() != 3) {
            fail(Error::invalid(tr("usage: starforge-cli playground stop NAME")));
            return;
        }
        const QString name = m_args.positionals.at(2);
        withPlayground([this, name] {
            m_playground->stop(name, [this, name](Result<void> stopped) {
                if (!stopped) {
                    fail(stopped.error());
                    return;
                }
                if (!json()) m_out << tr("%1 stopped").arg(name) << Qt::endl;
                finish(Ok);
            });
        });
    }
};

class ChatCommand final : public PlaygroundCommand
{
    Q_OBJECT
public:
    using PlaygroundCommand::PlaygroundCommand;

    void run() override
    {
        if (m_args.positionals.size() < 3) {
            fail(Error::invalid(tr("usage: starforge-cli playground chat NAME [PROMPT...] [--system S] [--temperature T] [--top-p P] "
                                   "[--max-tokens N] [--session FILE]")));
            return;
        }
        m_name = m_args.positionals.at(2);
        QString prompt = m_args.positionals.mid(3).join(u' ');
        if (prompt.isEmpty()) {
            QFile in;
            if (in.open(stdin, QIODevice::ReadOnly)) prompt = QString::fromUtf8(in.readAll()).trimmed();
        }
        if (prompt.isEmpty()) {
            fail(Error::invalid(tr("no prompt: give it after NAME or on standard input")));
            return;
        }
        bool ok = true;
        const auto number = [&](const char *key, double fallback) {
            const QString text = m_args.value(QString::fromLatin1(key));
            if (text.isEmpty()) return fallback;
            bool good = false;
            const double v = text.toDouble(&good);
            ok = ok && good;
            return v;
        };
        m_settings.system = m_args.value(QStringLiteral("system"));
        m_settings.temperature = number("temperature", m_settings.temperature);
        m_settings.topP = number("top-p", m_settings.topP);
        m_settings.maxTokens = int(number("max-tokens", m_settings.maxTokens));
        if (!ok) {
            fail(Error::invalid(tr("--temperature, --top-p and --max-tokens take numbers")));
            return;
        }
        m_sessionFile = m_args.value(QStringLiteral("session"));
        if (!m_sessionFile.isEmpty() && QFile::exists(m_sessionFile)) {
            QFile file(m_sessionFile);
            const QJsonObject saved = file.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(file.readAll()).object() : QJsonObject();
            if (saved.value(QStringLiteral("pod")).toString() != m_name) {
                const QJsonValue pod = saved.value(QStringLiteral("pod"));
                fail(Error::invalid(!pod.isString()
                                        ? tr("%1 is a conversation with nothing readable, not %2; give another --session file").arg(m_sessionFile, m_name)
                                        : tr("%1 is a conversation with %2, not %3; give another --session file").arg(m_sessionFile, pod.toString(), m_name)));
                return;
            }
            for (const QJsonValue &m : saved.value(QStringLiteral("messages")).toArray()) {
                m_messages.append({m[QStringLiteral("role")].toString(), m[QStringLiteral("content")].toString()});
            }
        }
        m_messages.append({QStringLiteral("user"), prompt});
        withPlayground([this] {
            m_playground->list([this](Result<QList<PlaygroundInstance>> listed) {
                if (!listed) {
                    fail(listed.error());
                    return;
                }
                const auto it = std::find_if(listed->cbegin(), listed->cend(), [this](const PlaygroundInstance &i) { return i.name == m_name; });
                if (it == listed->cend()) {
                    fail(Error::notFound(tr("no playground pod of yours named %1 (see `starforge-cli playground list`)").arg(m_name)));
                    return;
                }
                chat(it->servedName);
            });
        });
    }

    void interrupt() override
    {
        if (m_stream && !m_stream->isFinished()) m_stream->stop();   // finished() then ends the command
        else PlaygroundCommand::interrupt();
    }

private:
    void chat(const QString &model)
    {
        m_stream = ChatStream::start(m_session->kube(), m_session->settings().ns, m_name, model, m_messages, m_settings, work());
        connect(m_stream, &ChatStream::delta, this, [this](const QString &text) { m_out << text << Qt::flush; });
        connect(m_stream, &ChatStream::finished, this, [this] {
            const ChatReply &reply = m_stream->reply();
            m_out << Qt::endl;
            if (reply.error) {
                fail(*reply.error);
                return;
            }
            // The finish reason is vLLM's word ("length", "abort"), quoted as it comes.
            const QString speed = QString::number(reply.tokensPerSecond(), 'f', 1);
            m_err << (reply.finishReason == QLatin1String("stop")
                          ? tr("%n token(s), first after %1 ms, %2 tokens/s", nullptr, reply.completionTokens).arg(reply.firstTokenMs).arg(speed)
                          : tr("%n token(s), first after %1 ms, %2 tokens/s (%3)", nullptr, reply.completionTokens)
                                .arg(QString::number(reply.firstTokenMs), speed, reply.finishReason))
                  << Qt::endl;
            m_messages.append({QStringLiteral("assistant"), reply.content});
            if (!m_sessionFile.isEmpty() && !save()) return;
            finish(reply.finishReason == QLatin1String("abort") ? Interrupted : Ok);
        });
    }

    bool save()
    {
        QJsonArray messages;
        for (const ChatMessage &m : m_messages) messages.append(QJsonObject{{QStringLiteral("role"), m.role}, {QStringLiteral("content"), m.content}});
        QSaveFile file(m_sessionFile);
        if (!file.open(QIODevice::WriteOnly)) {
            fail(Error::io(tr("cannot write %1: %2").arg(m_sessionFile, file.errorString())));
            return false;
        }
        file.write(QJsonDocument(QJsonObject{{QStringLiteral("pod"), m_name}, {QStringLiteral("messages"), messages}}).toJson());
        if (!file.commit()) {
            fail(Error::io(tr("cannot write %1: %2").arg(m_sessionFile, file.errorString())));
            return false;
        }
        return true;
    }

    QString m_name;
    QString m_sessionFile;
    ChatSettings m_settings;
    QList<ChatMessage> m_messages;
    ChatStream *m_stream = nullptr;
};

} // namespace

std::unique_ptr<Command> makePlaygroundLaunchCommand(const CommandContext &context) { return std::make_unique<LaunchCommand>(context); }
std::unique_ptr<Command> makePlaygroundListCommand(const CommandContext &context) { return std::make_unique<ListCommand>(context); }
std::unique_ptr<Command> makePlaygroundStopCommand(const CommandContext &context) { return std::make_unique<StopPlaygroundCommand>(context); }
std::unique_ptr<Command> makePlaygroundChatCommand(const CommandContext &context) { return std::make_unique<ChatCommand>(context); }

} // namespace Starforge::Cli

#include "playgroundcommands.moc"
