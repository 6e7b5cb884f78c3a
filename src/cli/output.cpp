#include "cli/output.h"

#include "core/job/jobrecord.h"
#include "core/job/ownership.h"
#include "core/kube/kubeclient.h"
#include "core/kube/resources.h"
#include "core/logging/logging.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <limits>

namespace Starforge::Cli {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text
{
    Q_DECLARE_TR_FUNCTIONS(CliOutput)
};

} // namespace

QString formatTable(const QStringList &header, const QList<QStringList> &rows)
{
    QList<qsizetype> widths(header.size(), 0);
    auto measure = [&widths](const QStringList &row) {
        for (qsizetype c = 0; c < row.size() && c < widths.size(); ++c) {
            widths[c] = qMax(widths[c], row.at(c).size());
        }
    };
    measure(header);
    for (const QStringList &row : rows) {
        measure(row);
    }
    QString text;
    auto append = [&text, &widths](const QStringList &row) {
        for (qsizetype c = 0; c < row.size(); ++c) {
            const bool last = c + 1 == row.size();
            text += last ? row.at(c) : row.at(c).leftJustified(widths.value(c) + 2);
        }
        text += u'\n';
    };
    append(header);
    for (const QStringList &row : rows) {
        append(row);
    }
    return text;
}

void printJson(QTextStream &out, const QJsonValue &value)
{
    QJsonDocument document;
    if (value.isArray()) {
        document.setArray(value.toArray());
    } else {
        document.setObject(value.toObject());
    }
    // Qt indents an empty array as "[\n]": print "[]", as scripts compare against it.
    const bool empty = value.isArray() ? value.toArray().isEmpty() : value.toObject().isEmpty();
    out << QString::fromUtf8(document.toJson(empty ? QJsonDocument::Compact : QJsonDocument::Indented));
    if (empty) out << '\n';
    out.flush();
}

void printJsonLine(QTextStream &out, const QJsonObject &object)
{
    out << QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact)) << '\n';
    out.flush();
}

QString byteCount(qint64 bytes)
{
    // tr()'s count is an int: a larger size picks its plural form by its last six digits (all
    // that plural rules look at) and prints in full through %1.
    const int form = bytes <= std::numeric_limits<int>::max() ? int(bytes) : int(1000000 + bytes % 1000000);
    return Text::tr("%1 byte(s)", "a size; the count decides the plural form", form).arg(bytes);
}

QString formatAge(qint64 seconds)
{
    if (seconds < 0) {
        return QStringLiteral("-");
    }
    if (seconds < 60) {
        return QStringLiteral("%1s").arg(seconds);
    }
    if (seconds < 3600) {
        return QStringLiteral("%1m%2s").arg(seconds / 60).arg(seconds % 60, 2, 10, QLatin1Char('0'));
    }
    if (seconds < 86400) {
        return QStringLiteral("%1h%2m").arg(seconds / 3600).arg((seconds % 3600) / 60, 2, 10, QLatin1Char('0'));
    }
    return QStringLiteral("%1d%2h").arg(seconds / 86400).arg((seconds % 86400) / 3600, 2, 10, QLatin1Char('0'));
}

void printError(QTextStream &err, bool json, const QString &message)
{
    if (json) {
        printJson(err, QJsonObject{{QStringLiteral("error"), Logging::redact(message)}});
    } else {
        err << "starforge-cli: " << Logging::redact(message) << Qt::endl;
    }
}

qint64 ageOf(const QDateTime &time)
{
    return time.isValid() ? time.secsTo(QDateTime::currentDateTimeUtc()) : -1;
}

QString oneLine(QString text, qsizetype max)
{
    text.replace(u'\n', u' ');
    return text.size() > max ? text.left(max - 1) + QChar(0x2026) : text;
}

Result<QJsonArray> listItems(const Kube::ApiResult &result, const QString &what)
{
    if (!result.ok()) {
        return result.error->toError();
    }
    const QJsonValue items = result.json().value(QStringLiteral("items"));
    if (items.isArray() || items.isNull()) {
        return items.toArray();
    }
    return Error::invalid(Text::tr("Could not %1: the server's answer is not a Kubernetes list. Is FORGE_K8S_API_SERVER the cluster's API server?").arg(what));
}

QJsonObject recordSummary(const Job::JobRecord &record)
{
    return QJsonObject{{QStringLiteral("id"), record.id},
                       {QStringLiteral("name"), record.rayJobName},
                       {QStringLiteral("state"), Job::jobStateName(record.state)},
                       {QStringLiteral("archived"), record.archived},
                       {QStringLiteral("reason"), record.reason},
                       {QStringLiteral("message"), record.message},
                       {QStringLiteral("cause"), record.cause},
                       {QStringLiteral("endedAt"), record.ended.isValid() ? record.ended.toUTC().toString(Qt::ISODate) : QString()},
                       {QStringLiteral("lost"), QJsonArray::fromStringList(record.lost)},
                       {QStringLiteral("owner"), record.owner}};
}

QString ownerColumn(const Job::JobRecord &record, const Job::Viewer &viewer)
{
    if (record.owner.isEmpty()) return QStringLiteral("-");
    return record.owner == viewer.owner ? Text::tr("you") : record.owner;
}

QStringList eventHeader()
{
    // untranslated: column keys, as kubectl's; scripts pick columns of the table by them
    return {QStringLiteral("LAST SEEN"), QStringLiteral("TYPE"), QStringLiteral("REASON"), QStringLiteral("OBJECT"), QStringLiteral("MESSAGE")};
}

QStringList eventRow(const Kube::Event &e)
{
    return {formatAge(ageOf(e.lastSeen)), e.type, e.reason, e.regardingKind + u'/' + e.regardingName,
            oneLine(e.message, 160) + (e.count > 1 ? Text::tr(" (x%1)").arg(e.count) : QString())};
}

} // namespace Starforge::Cli
