#pragma once

// Printing for starforge-cli: aligned text tables for people, JSON for scripts.

#include <QJsonValue>
#include <QList>
#include <QString>
#include <QStringList>
#include <QTextStream>

namespace Starforge::Cli {

// Columns padded to their widest cell; the last column is not padded.
QString formatTable(const QStringList &header, const QList<QStringList> &rows);

void printJson(QTextStream &out, const QJsonValue &value);

} // namespace Starforge::Cli
