#include "cli/output.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace Starforge::Cli {

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
    out << QString::fromUtf8(document.toJson(QJsonDocument::Indented));
    out.flush();
}

} // namespace Starforge::Cli
