#include "models/transcriptmodel.h"

#include <QJsonArray>
#include <QLocale>
#include <QStringList>

#include <algorithm>

namespace Starforge::Models {

TranscriptModel::TranscriptModel(QObject *parent)
    : QAbstractListModel(parent)
{
}

int TranscriptModel::appendUser(const QString &text)
{
    const int row = int(m_entries.size());
    beginInsertRows({}, row, row);
    m_entries.append(Entry{QStringLiteral("user"), text, false, {}, QDateTime::currentDateTimeUtc()});
    endInsertRows();
    return row;
}

int TranscriptModel::beginReply()
{
    const int row = int(m_entries.size());
    beginInsertRows({}, row, row);
    m_entries.append(Entry{QStringLiteral("assistant"), QString(), true, {}, QDateTime::currentDateTimeUtc()});
    endInsertRows();
    return row;
}

bool TranscriptModel::isStreaming() const
{
    return !m_entries.isEmpty() && m_entries.last().streaming;
}

void TranscriptModel::appendDelta(const QString &text)
{
    if (!isStreaming() || text.isEmpty()) return;
    m_entries.last().content += text;
    const QModelIndex changed = index(int(m_entries.size()) - 1);
    Q_EMIT dataChanged(changed, changed, {Qt::DisplayRole, ContentRole, Qt::AccessibleTextRole});
}

void TranscriptModel::finishReply(const Playground::ChatReply &reply)
{
    if (!isStreaming()) return;
    Entry &last = m_entries.last();
    last.streaming = false;
    last.reply = reply;
    // The reply's own text wins: it is what arrived, whatever a view dropped.
    if (!reply.content.isEmpty() || reply.error) last.content = reply.content;
    const QModelIndex changed = index(int(m_entries.size()) - 1);
    Q_EMIT dataChanged(changed, changed);
}

bool TranscriptModel::editMessage(int row, const QString &text)
{
    if (row < 0 || row >= m_entries.size() || m_entries.at(row).role != QLatin1String("user") || isStreaming()) return false;
    if (row + 1 < m_entries.size()) {
        beginRemoveRows({}, row + 1, int(m_entries.size()) - 1);
        m_entries.resize(row + 1);
        endRemoveRows();
    }
    m_entries[row].content = text;
    Q_EMIT dataChanged(index(row), index(row));
    return true;
}

bool TranscriptModel::dropLastReply()
{
    if (m_entries.isEmpty() || m_entries.last().role != QLatin1String("assistant") || isStreaming()) return false;
    const int row = int(m_entries.size()) - 1;
    beginRemoveRows({}, row, row);
    m_entries.removeLast();
    endRemoveRows();
    return true;
}

void TranscriptModel::clear()
{
    beginResetModel();
    m_entries.clear();
    endResetModel();
}

QList<Playground::ChatMessage> TranscriptModel::messages() const
{
    QList<Playground::ChatMessage> out;
    for (const Entry &e : m_entries) {
        if (e.streaming || e.reply.error || (e.role == QLatin1String("assistant") && e.content.isEmpty())) continue;
        out.append({e.role, e.content});
    }
    return out;
}

QString TranscriptModel::timingsText(const Playground::ChatReply &reply)
{
    if (reply.firstTokenMs < 0) return {};
    QString text = tr("first token after %1 ms").arg(reply.firstTokenMs);
    if (const double speed = reply.tokensPerSecond(); speed > 0) text += tr(" · %1 tokens/s").arg(QLocale().toString(speed, 'f', 1));
    text += tr(" · %n token(s)", nullptr, reply.completionTokens);
    if (reply.finishReason == QLatin1String("length")) text += tr(" · cut at max tokens");
    if (reply.finishReason == QLatin1String("abort")) text += tr(" · stopped");
    return text;
}

QList<TranscriptModel::CodeBlock> TranscriptModel::codeBlocks(const QString &markdown)
{
    QList<CodeBlock> out;
    QString fence;        // the opening fence's characters while inside a block
    CodeBlock current;
    QStringList lines;
    for (const QStringView line : QStringView(markdown).split(u'\n')) {
        const QStringView trimmed = line.trimmed();
        if (fence.isEmpty()) {
            // CommonMark: a fence is three or more backticks or tildes.
            if (trimmed.startsWith(u"```") || trimmed.startsWith(u"~~~")) {
                const QChar c = trimmed.front();
                qsizetype n = 0;
                while (n < trimmed.size() && trimmed.at(n) == c) ++n;
                fence = QString(n, c);
                current = CodeBlock{trimmed.mid(n).trimmed().split(u' ').value(0).toString(), QString()};
                lines.clear();
            }
            continue;
        }
        // The closing fence: the same character, at least as many, nothing else.
        const bool closes = trimmed.size() >= fence.size() && std::all_of(trimmed.begin(), trimmed.end(), [&](QChar c) { return c == fence.front(); });
        if (closes) {
            current.code = lines.join(u'\n');
            out.append(current);
            fence.clear();
            continue;
        }
        lines.append(line.toString());
    }
    if (!fence.isEmpty() && !lines.isEmpty()) {
        current.code = lines.join(u'\n');
        out.append(current);
    }
    return out;
}

QString TranscriptModel::toMarkdown() const
{
    QString out = tr("# Playground conversation\n\n");
    out += tr("- Model: `%1` (pod `%2`)\n").arg(m_context.model, m_context.pod);
    out += tr("- Settings: temperature %1, top-p %2, max tokens %3\n").arg(m_context.settings.temperature).arg(m_context.settings.topP).arg(m_context.settings.maxTokens);
    if (!m_context.settings.system.isEmpty()) out += tr("- System prompt: %1\n").arg(m_context.settings.system);
    for (const Entry &e : m_entries) {
        out += e.role == QLatin1String("user") ? tr("\n## You\n\n") : tr("\n## %1\n\n").arg(m_context.model);
        out += e.content + u'\n';
        if (e.role == QLatin1String("assistant")) {
            if (const QString timings = timingsText(e.reply); !timings.isEmpty()) out += QStringLiteral("\n*%1*\n").arg(timings);
            if (e.reply.error) out += QStringLiteral("\n> %1\n").arg(e.reply.error->message);
        }
    }
    return out;
}

QJsonObject TranscriptModel::toJson() const
{
    QJsonArray messages;
    for (const Entry &e : m_entries) {
        QJsonObject m{{QStringLiteral("role"), e.role}, {QStringLiteral("content"), e.content}, {QStringLiteral("at"), e.at.toString(Qt::ISODateWithMs)}};
        if (e.role == QLatin1String("assistant")) {
            m.insert(QStringLiteral("finishReason"), e.reply.finishReason);
            m.insert(QStringLiteral("firstTokenMs"), e.reply.firstTokenMs);
            m.insert(QStringLiteral("totalMs"), e.reply.totalMs);
            m.insert(QStringLiteral("completionTokens"), e.reply.completionTokens);
            m.insert(QStringLiteral("promptTokens"), e.reply.promptTokens);
            m.insert(QStringLiteral("tokensPerSecond"), e.reply.tokensPerSecond());
            if (e.reply.error) m.insert(QStringLiteral("error"), e.reply.error->message);
        }
        messages.append(m);
    }
    return QJsonObject{{QStringLiteral("pod"), m_context.pod},
                       {QStringLiteral("model"), m_context.model},
                       {QStringLiteral("settings"), QJsonObject{{QStringLiteral("system"), m_context.settings.system},
                                                                {QStringLiteral("temperature"), m_context.settings.temperature},
                                                                {QStringLiteral("topP"), m_context.settings.topP},
                                                                {QStringLiteral("maxTokens"), m_context.settings.maxTokens}}},
                       {QStringLiteral("messages"), messages}};
}

void TranscriptModel::loadJson(const QJsonObject &conversation)
{
    beginResetModel();
    m_entries.clear();
    const QJsonObject settings = conversation.value(QStringLiteral("settings")).toObject();
    m_context.pod = conversation.value(QStringLiteral("pod")).toString();
    m_context.model = conversation.value(QStringLiteral("model")).toString();
    m_context.settings.system = settings.value(QStringLiteral("system")).toString();
    m_context.settings.temperature = settings.value(QStringLiteral("temperature")).toDouble(m_context.settings.temperature);
    m_context.settings.topP = settings.value(QStringLiteral("topP")).toDouble(m_context.settings.topP);
    m_context.settings.maxTokens = settings.value(QStringLiteral("maxTokens")).toInt(m_context.settings.maxTokens);
    for (const QJsonValue &v : conversation.value(QStringLiteral("messages")).toArray()) {
        const QJsonObject m = v.toObject();
        Entry e{m.value(QStringLiteral("role")).toString(), m.value(QStringLiteral("content")).toString(), false, {},
                QDateTime::fromString(m.value(QStringLiteral("at")).toString(), Qt::ISODateWithMs)};
        if (e.role != QLatin1String("user") && e.role != QLatin1String("assistant")) continue;
        e.reply.content = e.content;
        e.reply.finishReason = m.value(QStringLiteral("finishReason")).toString();
        e.reply.firstTokenMs = m.value(QStringLiteral("firstTokenMs")).toInteger(-1);
        e.reply.totalMs = m.value(QStringLiteral("totalMs")).toInteger();
        e.reply.completionTokens = m.value(QStringLiteral("completionTokens")).toInt();
        e.reply.promptTokens = m.value(QStringLiteral("promptTokens")).toInt();
        if (m.contains(QStringLiteral("error"))) e.reply.error = Error::unavailable(m.value(QStringLiteral("error")).toString());
        m_entries.append(e);
    }
    endResetModel();
}

int TranscriptModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_entries.size());
}

QVariant TranscriptModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const Entry &e = m_entries.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
    case ContentRole: return e.content;
    case MessageRoleRole: return e.role;
    case StreamingRole: return e.streaming;
    case TimingsTextRole: return e.role == QLatin1String("assistant") ? timingsText(e.reply) : QString();
    case ErrorRole: return e.reply.error ? e.reply.error->message : QString();
    case FinishReasonRole: return e.reply.finishReason;
    case Qt::AccessibleTextRole:
        return QString((e.role == QLatin1String("user") ? tr("You: %1") : tr("Model: %1")).arg(e.content)
                       + (e.streaming ? tr(" (still writing)") : QString()));
    default: return {};
    }
}

QHash<int, QByteArray> TranscriptModel::roleNames() const
{
    QHash<int, QByteArray> names = QAbstractListModel::roleNames();
    names.insert(MessageRoleRole, "messageRole");
    names.insert(ContentRole, "content");
    names.insert(StreamingRole, "streaming");
    names.insert(TimingsTextRole, "timings");
    names.insert(ErrorRole, "error");
    names.insert(FinishReasonRole, "finishReason");
    return names;
}

} // namespace Starforge::Models
