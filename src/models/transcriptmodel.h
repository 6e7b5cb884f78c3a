#pragma once

// One playground conversation as a list model: the user's messages and the model's replies, a
// reply growing as its text streams in (dataChanged on its row only, so a view repaints one
// item), then closed with its timings (time to first token, tokens per second), its finish
// reason and any error. Editing a message drops what came after it, and regenerating drops the
// last reply, so the next request is the conversation as shown. The raw text is Markdown; the
// view renders it. Export as Markdown or JSON carries the model, pod, settings and timings
// that produced it (docs/playground.md, "The panel").

#include "core/playground/chatclient.h"

#include <QAbstractListModel>
#include <QDateTime>
#include <QJsonObject>
#include <QList>

namespace Starforge::Models {

class TranscriptModel final : public QAbstractListModel
{
    Q_OBJECT
public:
    enum Role {
        MessageRoleRole = Qt::UserRole + 1,   // "system", "user", "assistant"
        ContentRole,                          // the Markdown text as written
        StreamingRole,                        // bool: the reply is still arriving
        TimingsTextRole,                      // "first token after 45 ms · 51.6 tokens/s · 20 tokens"
        ErrorRole,                            // the error's sentence, or empty
        FinishReasonRole,                     // stop, length, abort, or empty
    };
    Q_ENUM(Role)

    // What produced the conversation, for the export.
    struct Context
    {
        QString pod;
        QString model;
        Playground::ChatSettings settings;
    };

    explicit TranscriptModel(QObject *parent = nullptr);

    void setContext(const Context &context) { m_context = context; }
    const Context &context() const { return m_context; }

    // A user message; returns its row.
    int appendUser(const QString &text);
    // A reply that starts arriving; text is added with appendDelta until finishReply.
    int beginReply();
    void appendDelta(const QString &text);
    void finishReply(const Playground::ChatReply &reply);
    bool isStreaming() const;

    // Changes a user message's text and drops everything after it (to be sent again).
    bool editMessage(int row, const QString &text);
    // Drops the last reply (to ask for another); false when the last row is not a finished reply.
    bool dropLastReply();
    void clear();

    // The messages to send: every user message and finished reply, in order (errors left out).
    QList<Playground::ChatMessage> messages() const;

    QString toMarkdown() const;
    QJsonObject toJson() const;
    // A conversation toJson() wrote (a saved one, reopened): context and messages, timings kept.
    void loadJson(const QJsonObject &conversation);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

    static QString timingsText(const Playground::ChatReply &reply);

    // The fenced code blocks of a Markdown text (``` or ~~~, with or without a language), each
    // to be copied alone. A fence still open at the end (a reply still streaming) counts.
    struct CodeBlock
    {
        QString language;
        QString code;
    };
    static QList<CodeBlock> codeBlocks(const QString &markdown);

private:
    struct Entry
    {
        QString role;
        QString content;
        bool streaming = false;
        Playground::ChatReply reply;   // for replies
        QDateTime at;
    };

    QList<Entry> m_entries;
    Context m_context;
};

} // namespace Starforge::Models
