#include "sandbox/faults.h"

#include <QStringList>

#include <cmath>

namespace Starforge::Sandbox {

QJsonObject Faults::toJson() const
{
    return QJsonObject{{QStringLiteral("rate429"), rate429},
                       {QStringLiteral("rate500"), rate500},
                       {QStringLiteral("delayMs"), delayMs},
                       {QStringLiteral("dropWatchesAfterMs"), dropWatchesAfterMs},
                       {QStringLiteral("dropLogsAfterMs"), dropLogsAfterMs},
                       {QStringLiteral("s3PartFailureRate"), s3PartFailureRate},
                       {QStringLiteral("next500Creates"), next500Creates},
                       {QStringLiteral("holdS3Uploads"), holdS3Uploads}};
}

Result<Faults> Faults::fromJson(const QJsonObject &json, const Faults &base)
{
    Faults f = base;
    for (auto it = json.begin(); it != json.end(); ++it) {
        const QString key = it.key();
        // A switch may be written true/false or 1/0 (the --faults form has numbers only).
        const double v = it.value().isBool() ? (it.value().toBool() ? 1 : 0) : it.value().toDouble(-1);
        const bool rate = key == QLatin1String("rate429") || key == QLatin1String("rate500")
            || key == QLatin1String("s3PartFailureRate");
        const bool count = key == QLatin1String("next500Creates");
        const bool flag = key == QLatin1String("holdS3Uploads");
        if (rate && (v < 0 || v > 1)) {
            return Error::invalid(QStringLiteral("fault %1 must be a fraction between 0 and 1").arg(key));
        }
        if (count && (v < 0 || v > 1000000 || v != std::floor(v))) {
            return Error::invalid(QStringLiteral("fault %1 must be a whole number between 0 and 1000000").arg(key));
        }
        if (flag && v != 0 && v != 1) {
            return Error::invalid(QStringLiteral("fault %1 must be 1 (on) or 0 (off)").arg(key));
        }
        if (!rate && !count && !flag && (v < 0 || v > 3600000)) {
            return Error::invalid(QStringLiteral("fault %1 must be milliseconds between 0 and 3600000").arg(key));
        }
        if (key == QLatin1String("rate429")) f.rate429 = v;
        else if (key == QLatin1String("rate500")) f.rate500 = v;
        else if (key == QLatin1String("s3PartFailureRate")) f.s3PartFailureRate = v;
        else if (key == QLatin1String("delayMs")) f.delayMs = static_cast<int>(v);
        else if (key == QLatin1String("dropWatchesAfterMs")) f.dropWatchesAfterMs = static_cast<int>(v);
        else if (key == QLatin1String("dropLogsAfterMs")) f.dropLogsAfterMs = static_cast<int>(v);
        else if (count) f.next500Creates = static_cast<int>(v);
        else if (flag) f.holdS3Uploads = v != 0;
        else return Error::invalid(QStringLiteral("unknown fault '%1'; known: rate429, rate500, delayMs, dropWatchesAfterMs, "
                                                  "dropLogsAfterMs, s3PartFailureRate, next500Creates, holdS3Uploads").arg(key));
    }
    return f;
}

Result<Faults> Faults::parse(const QString &spec)
{
    QJsonObject json;
    for (const QString &part : spec.split(u',', Qt::SkipEmptyParts)) {
        const qsizetype eq = part.indexOf(u'=');
        bool ok = false;
        const double v = eq > 0 ? part.mid(eq + 1).toDouble(&ok) : 0;
        if (!ok) {
            return Error::invalid(QStringLiteral("cannot read the fault '%1': write NAME=NUMBER, e.g. rate500=0.1").arg(part));
        }
        json.insert(part.left(eq).trimmed(), v);
    }
    return fromJson(json, Faults());
}

} // namespace Starforge::Sandbox
