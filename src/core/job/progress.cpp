#include "core/job/progress.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>

#include <cmath>
#include <limits>

namespace Starforge::Job {

namespace {

constexpr QByteArrayView Prefix("STARFORGE_PROGRESS ");

// A whole, non-negative count from a JSON number that fits an int; nullopt otherwise.
std::optional<int> count(const QJsonValue &v)
{
    if (!v.isDouble()) return std::nullopt;
    const double d = v.toDouble();
    if (!std::isfinite(d) || d < 0 || d > std::numeric_limits<int>::max() || d != std::floor(d)) return std::nullopt;
    return static_cast<int>(d);
}

} // namespace

bool JobProgress::feed(QByteArrayView line)
{
    while (!line.isEmpty() && (line.back() == '\n' || line.back() == '\r')) line.chop(1);
    // The kubelet's timestamp (logs read with timestamps=true) comes first, then a space.
    qsizetype at = line.indexOf(Prefix);
    if (at < 0) return false;
    if (at > 0) {
        // Only a timestamp may come first ("2026-12-03T10:00:00.123456789Z "): the prefix
        // inside another line's text is that line's, not the runner's.
        const QByteArrayView before = line.first(at - 1);
        if (line.at(at - 1) != ' ' || before.isEmpty() || before.contains(' ') || !(before.front() >= '0' && before.front() <= '9')
            || !before.contains('T')) {
            return false;
        }
    }
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(line.sliced(at + Prefix.size()).toByteArray(), &error);
    if (error.error != QJsonParseError::NoError || !document.isObject()) return false;
    const QJsonObject record = document.object();
    const QString kind = record.value(QLatin1String("kind")).toString();
    if (kind == QLatin1String("start")) {
        m_started = true;
        return true;
    }
    if (kind == QLatin1String("step")) {
        const auto step = count(record.value(QLatin1String("step")));
        const auto total = count(record.value(QLatin1String("total")));
        if (!step || !total) return false;
        m_step = *step;
        m_totalSteps = *total;
        if (m_points.isEmpty() || m_points.last().step != *step) {
            m_points.append(ProgressPoint{*step, {}});
            if (m_points.size() > MaxPoints) m_points.removeFirst();
        }
        return true;
    }
    if (kind == QLatin1String("epoch")) {
        const auto epoch = count(record.value(QLatin1String("epoch")));
        const auto total = count(record.value(QLatin1String("total")));
        if (!epoch || !total) return false;
        m_epoch = *epoch;
        m_totalEpochs = *total;
        return true;
    }
    if (kind == QLatin1String("metric")) {
        const QString name = record.value(QLatin1String("name")).toString();
        const QJsonValue value = record.value(QLatin1String("value"));
        if (name.isEmpty() || !value.isDouble() || !std::isfinite(value.toDouble()) || m_points.isEmpty()) return false;
        m_points.last().metrics.insert(name, value.toDouble());
        return true;
    }
    if (kind == QLatin1String("checkpoint")) {
        const auto step = count(record.value(QLatin1String("step")));
        if (!step) return false;
        m_lastCheckpoint = *step;
        return true;
    }
    if (kind == QLatin1String("done")) {
        m_doneReason = record.value(QLatin1String("reason")).toString();
        return true;
    }
    if (kind == QLatin1String("exit")) {
        const QJsonValue code = record.value(QLatin1String("code"));
        if (!code.isDouble()) return false;
        m_exitCode = code.toInt();
        return true;
    }
    return false;
}

JobProgress JobProgress::fromLog(QByteArrayView log)
{
    JobProgress progress;
    while (!log.isEmpty()) {
        const qsizetype end = log.indexOf('\n');
        progress.feed(end < 0 ? log : log.first(end));
        log = end < 0 ? QByteArrayView() : log.sliced(end + 1);
    }
    return progress;
}

std::optional<double> JobProgress::latest(const QString &metric) const
{
    for (auto it = m_points.crbegin(); it != m_points.crend(); ++it) {
        if (const auto found = it->metrics.constFind(metric); found != it->metrics.cend()) return *found;
    }
    return std::nullopt;
}

QString JobProgress::summary() const
{
    if (m_totalSteps <= 0) return {};
    const QString steps = QStringLiteral("step %1/%2").arg(m_step).arg(m_totalSteps);
    return m_totalEpochs > 1 ? QStringLiteral("epoch %1/%2, %3").arg(m_epoch).arg(m_totalEpochs).arg(steps) : steps;
}

QString JobProgress::details() const
{
    if (summary().isEmpty()) return {};
    QStringList parts{summary()};
    for (const char *metric : {"Loss", "Avg Reward", "Accuracy", "Total step time"}) {
        if (const auto v = latest(QLatin1String(metric))) parts << QStringLiteral("%1 %2").arg(QLatin1String(metric)).arg(*v, 0, 'g', 4);
    }
    if (m_lastCheckpoint > 0) parts << QStringLiteral("last checkpoint step %1").arg(m_lastCheckpoint);
    return parts.join(QStringLiteral(", "));
}

} // namespace Starforge::Job
