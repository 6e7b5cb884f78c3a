#pragma once

// Printing for starforge-cli: aligned text tables for people, JSON for scripts.

#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>
#include <QStringList>
#include <QTextStream>

#include "core/util/result.h"

namespace Starforge::Cli {

// Columns padded to their widest cell; the last column is not padded.
QString formatTable(const QStringList &header, const QList<QStringList> &rows);

void printJson(QTextStream &out, const QJsonValue &value);
// One compact JSON document per line, for output that comes in steps (submit --wait).
void printJsonLine(QTextStream &out, const QJsonObject &object);

// "1 byte", "12345 bytes": a size in the language's plural form (the count may pass int's range).
QString byteCount(qint64 bytes);

// "3m12s", "2h05m", "4d03h" for a span in seconds; "-" when negative or unknown.
QString formatAge(qint64 seconds);

// An error for people ("starforge-cli: <message>") or, with --json, as {"error": <message>};
// redacted either way.
void printError(QTextStream &err, bool json, const QString &message);

// Seconds from time until now; -1 when time is not valid (formatAge prints "-").
qint64 ageOf(const QDateTime &time);
// text on one line, cut at max characters with an ellipsis.
QString oneLine(QString text, qsizetype max = 100);

} // namespace Starforge::Cli

namespace Starforge::Kube {
struct ApiResult;
struct Event;
}
namespace Starforge::Job {
struct JobRecord;
struct Viewer;
}

namespace Starforge::Cli {

// The items of a list reply. A 200 whose body is not a Kubernetes list (a proxy's login page,
// FORGE_K8S_API_SERVER pointing at some other web server) would otherwise read as "no jobs".
Result<QJsonArray> listItems(const Kube::ApiResult &result, const QString &what);
// The short JSON of a job's outcome that `submit --wait` and `stop` print.
QJsonObject recordSummary(const Job::JobRecord &record);
// A job's OWNER column: "you", another person's name, or "-" when it records none.
QString ownerColumn(const Job::JobRecord &record, const Job::Viewer &viewer);
// LAST SEEN, TYPE, REASON, OBJECT, MESSAGE
QStringList eventHeader();
QStringList eventRow(const Kube::Event &event);

} // namespace Starforge::Cli
