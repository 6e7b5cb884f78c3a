#include "core/playground/conversationstore.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSaveFile>
#include <QStandardPaths>

#include <algorithm>

namespace Starforge::Playground {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(ConversationStore)
};

bool isId(const QString &id)
{
    static const QRegularExpression form(QStringLiteral("^[a-z0-9-]{1,64}$"));
    return form.match(id).hasMatch();
}

} // namespace

ConversationStore::ConversationStore(QString dir)
    : m_dir(dir.isEmpty() ? QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) + QStringLiteral("/starforge/conversations")
                          : std::move(dir))
{
}

QString ConversationStore::pathOf(const QString &id) const
{
    return m_dir + u'/' + id + QStringLiteral(".json");
}

QList<ConversationSummary> ConversationStore::list() const
{
    QList<ConversationSummary> out;
    const QFileInfoList files = QDir(m_dir).entryInfoList({QStringLiteral("*.json")}, QDir::Files);
    for (const QFileInfo &info : files) {
        ConversationSummary s;
        s.id = info.completeBaseName();
        s.updated = info.lastModified().toUTC();
        QFile file(info.filePath());
        QJsonParseError error{};
        const QJsonDocument doc = file.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(file.readAll(), &error) : QJsonDocument();
        if (!doc.isObject()) {
            s.damaged = true;
            s.title = Text::tr("(cannot be read)");
            out.append(s);
            continue;
        }
        const QJsonObject o = doc.object();
        s.model = o.value(QStringLiteral("model")).toString();
        s.pod = o.value(QStringLiteral("pod")).toString();
        const QJsonArray messages = o.value(QStringLiteral("messages")).toArray();
        s.messages = int(messages.size());
        for (const QJsonValue &m : messages) {
            if (m[QStringLiteral("role")].toString() != QLatin1String("user")) continue;
            s.title = m[QStringLiteral("content")].toString().simplified().left(80);
            break;
        }
        out.append(s);
    }
    std::sort(out.begin(), out.end(), [](const ConversationSummary &a, const ConversationSummary &b) { return a.updated > b.updated; });
    return out;
}

Result<QJsonObject> ConversationStore::load(const QString &id) const
{
    if (!isId(id)) return Error::invalid(Text::tr("\"%1\" is not a conversation.").arg(id));
    QFile file(pathOf(id));
    if (!file.open(QIODevice::ReadOnly)) return Error::notFound(Text::tr("No conversation %1 in %2.").arg(id, m_dir));
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &error);
    if (!doc.isObject()) return Error::io(Text::tr("The conversation %1 cannot be read (%2); the file is kept as it is.").arg(file.fileName(), error.errorString()));
    return doc.object();
}

Result<QString> ConversationStore::save(const QString &id, const QJsonObject &conversation)
{
    QString name = id;
    if (name.isEmpty()) {
        name = QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss-"))
            + QString::number(QRandomGenerator::global()->bounded(1u << 30), 36);
    }
    if (!isId(name)) return Error::invalid(Text::tr("\"%1\" is not a conversation.").arg(name));
    if (!QDir().mkpath(m_dir) || !QFile::setPermissions(m_dir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner)) {
        return Error::io(Text::tr("Cannot make %1 for the conversations.").arg(m_dir));
    }
    QSaveFile file(pathOf(name));
    if (!file.open(QIODevice::WriteOnly) || !file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner)) {
        return Error::io(Text::tr("Cannot write %1: %2").arg(pathOf(name), file.errorString()));
    }
    file.write(QJsonDocument(conversation).toJson(QJsonDocument::Indented));
    if (!file.commit()) return Error::io(Text::tr("Cannot write %1: %2").arg(pathOf(name), file.errorString()));
    return name;
}

Result<void> ConversationStore::remove(const QString &id)
{
    if (!isId(id)) return Error::invalid(Text::tr("\"%1\" is not a conversation.").arg(id));
    if (!QFile::remove(pathOf(id)) && QFile::exists(pathOf(id))) return Error::io(Text::tr("Cannot remove %1.").arg(pathOf(id)));
    return {};
}

} // namespace Starforge::Playground
