#pragma once

// Printing for starforge-cli: aligned text tables for people, JSON for scripts.

#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>
#include <QStringList>
#include <QTextStream>

namespace Starforge::Cli {

// Columns padded to their widest cell; the last column is not padded.
QString formatTable(const QStringList &header, const QList<QStringList> &rows);

void printJson(QTextStream &out, const QJsonValue &value);
// One compact JSON document per line, for output that comes in steps (submit --wait).
void printJsonLine(QTextStream &out, const QJsonObject &object);

// "3m12s", "2h05m", "4d03h" for a span in seconds; "-" when negative or unknown.
QString formatAge(qint64 seconds);

} // namespace Starforge::Cli
