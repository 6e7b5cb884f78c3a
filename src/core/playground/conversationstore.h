#pragma once

// Playground conversations kept on this machine, so they reopen after a restart: one JSON file
// per conversation (the TranscriptModel's export: pod, model, settings, messages with their
// timings) under the data folder's starforge/conversations/, written atomically and readable by
// the user alone (0600 in a 0700 folder). A file that does not parse is listed as damaged, not
// dropped, so nothing is lost silently.

#include "core/util/result.h"

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace Starforge::Playground {

struct ConversationSummary
{
    QString id;           // the file's base name
    QString title;        // the first user message, cut to one line
    QString model;
    QString pod;
    QDateTime updated;
    int messages = 0;
    bool damaged = false; // the file could not be read
};

class ConversationStore
{
public:
    // dir: empty for the data folder's starforge/conversations.
    explicit ConversationStore(QString dir = {});

    QString directory() const { return m_dir; }
    // Newest first.
    QList<ConversationSummary> list() const;
    Result<QJsonObject> load(const QString &id) const;
    // Saves under id (a new id when empty); returns the id.
    Result<QString> save(const QString &id, const QJsonObject &conversation);
    Result<void> remove(const QString &id);

private:
    QString pathOf(const QString &id) const;

    QString m_dir;
};

} // namespace Starforge::Playground
