#include "core/job/progress.h"

#include <QCoreApplication>
#include <QIODevice>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>

#include <algorithm>
#include <cmath>
#include <limits>

namespace Starforge::Job {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(Progress)
};

constexpr QByteArrayView Prefix("STARFORGE_PROGRESS ");

// A whole, non-negative count from a JSON number that fits an int; nullopt otherwise.
std::optional<int> count(const QJsonValue &v)
{
    if (!v.isDouble()) return std::nullopt;
    const double d = v.toDouble();
    if (!std::isfinite(d) || d < 0 || d > std::numeric_limits<int>::max() || d != std::floor(d)) return std::nullopt;
    return static_cast<int>(d);
}

// A metric's value: a finite JSON number, or the runner's "nan", "inf", "-inf" (JSON has no such
// numbers; a diverged loss is worth showing). nullopt otherwise.
std::optional<double> metricValue(const QJsonValue &v)
{
    if (v.isDouble()) return std::isfinite(v.toDouble()) ? std::optional<double>(v.toDouble()) : std::nullopt;
    const QString text = v.toString();
    if (text == QLatin1String("nan")) return std::numeric_limits<double>::quiet_NaN();
    if (text == QLatin1String("inf")) return std::numeric_limits<double>::infinity();
    if (text == QLatin1String("-inf")) return -std::numeric_limits<double>::infinity();
    return std::nullopt;
}

// Inserts c in step order, replacing an entry of the same step.
void insertByStep(QList<ServableCheckpoint> &list, const ServableCheckpoint &c)
{
    auto pos = std::lower_bound(list.begin(), list.end(), c.step, [](const ServableCheckpoint &a, int s) { return a.step < s; });
    if (pos != list.end() && pos->step == c.step) {
        *pos = c;
    } else {
        list.insert(pos, c);
    }
}

} // namespace

QJsonObject ServableCheckpoint::toJson() const
{
    return QJsonObject{{QStringLiteral("step"), step},
                       {QStringLiteral("path"), path},
                       {QStringLiteral("tokenizer"), tokenizerPath},
                       {QStringLiteral("backend"), backend},
                       {QStringLiteral("consolidated"), consolidated},
                       {QStringLiteral("converter"), converter}};
}

std::optional<ServableCheckpoint> ServableCheckpoint::fromJson(const QJsonObject &json)
{
    const auto step = count(json.value(QLatin1String("step")));
    ServableCheckpoint c;
    c.path = json.value(QLatin1String("path")).toString();
    if (!step || c.path.isEmpty() || !json.value(QLatin1String("consolidated")).isBool()) return std::nullopt;
    c.step = *step;
    c.tokenizerPath = json.value(QLatin1String("tokenizer")).toString();
    c.backend = json.value(QLatin1String("backend")).toString();
    if (c.backend.isEmpty()) c.backend = QStringLiteral("unknown");
    c.consolidated = json.value(QLatin1String("consolidated")).toBool();
    c.converter = json.value(QLatin1String("converter")).toString();
    return c;
}

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
        // The Step banner counts within the epoch: a new epoch (or a count that went back)
        // starts after the global steps so far.
        if (m_newEpoch || *step < m_step) m_stepsBefore = m_currentGlobalStep;
        m_newEpoch = false;
        m_step = *step;
        m_totalSteps = *total;
        m_currentGlobalStep = m_stepsBefore + *step;
        if (m_points.isEmpty() || m_points.last().step != m_currentGlobalStep) {
            m_points.append(ProgressPoint{m_currentGlobalStep, {}, m_epoch, *step});
            if (m_points.size() > MaxPoints) m_points.removeFirst();
        }
        return true;
    }
    if (kind == QLatin1String("epoch")) {
        const auto epoch = count(record.value(QLatin1String("epoch")));
        const auto total = count(record.value(QLatin1String("total")));
        if (!epoch || !total) return false;
        m_newEpoch = m_newEpoch || *epoch != m_epoch || m_step > 0;
        m_epoch = *epoch;
        m_totalEpochs = *total;
        return true;
    }
    if (kind == QLatin1String("metric")) {
        const QString name = record.value(QLatin1String("name")).toString();
        const auto value = metricValue(record.value(QLatin1String("value")));
        if (name.isEmpty() || !value || m_points.isEmpty()) return false;
        m_points.last().metrics.insert(name, *value);
        return true;
    }
    if (kind == QLatin1String("checkpoint")) {
        const auto step = count(record.value(QLatin1String("step")));
        if (!step) return false;
        m_lastCheckpoint = *step;
        m_globalStep = *step;
        // NeMo-RL saves during the step it names: that is the current step's global number (a
        // resumed run's count starts past the steps its log never showed).
        if (m_step > 0 && *step >= m_step && !m_newEpoch) {
            m_stepsBefore = *step - m_step;
            m_currentGlobalStep = *step;
            if (!m_points.isEmpty() && m_points.last().stepInEpoch == m_step) {
                const bool ascending = m_points.size() < 2 || m_points.at(m_points.size() - 2).step < *step;
                if (ascending) m_points.last().step = *step;
            }
        }
        return true;
    }
    if (kind == QLatin1String("checkpoint_saved")) {
        const auto step = count(record.value(QLatin1String("step")));
        if (!step) return false;
        m_sawSaved = true;
        const auto pos = std::lower_bound(m_saved.begin(), m_saved.end(), *step);
        if (pos == m_saved.end() || *pos != *step) m_saved.insert(pos, *step);
        return true;
    }
    if (kind == QLatin1String("checkpoint_removed")) {
        const auto step = count(record.value(QLatin1String("step")));
        if (!step) return false;
        m_saved.removeAll(*step);
        m_servable.removeIf([&](const ServableCheckpoint &c) { return c.step == *step; });
        return true;
    }
    if (kind == QLatin1String("servable")) {
        const auto c = ServableCheckpoint::fromJson(record);
        if (!c) return false;
        insertByStep(m_servable, *c);
        return true;
    }
    if (kind == QLatin1String("servable_checkpoints")) {
        // The whole list once training has ended: it stands for every servable, saved and
        // removed record before it, which a rotated log may have lost. An entry that does not
        // parse is left out, not the list.
        const QJsonValue checkpoints = record.value(QLatin1String("checkpoints"));
        if (!checkpoints.isArray()) return false;
        QList<ServableCheckpoint> list;
        for (const QJsonValue &entry : checkpoints.toArray()) {
            if (const auto c = ServableCheckpoint::fromJson(entry.toObject())) insertByStep(list, *c);
        }
        m_servable = list;
        m_saved.clear();
        for (const ServableCheckpoint &c : std::as_const(m_servable)) m_saved.append(c.step);
        m_sawSaved = true;
        return true;
    }
    if (kind == QLatin1String("log_dir")) {
        const QString path = record.value(QLatin1String("path")).toString();
        if (path.isEmpty()) return false;
        m_logDirectory = path;
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

std::optional<QList<ServableCheckpoint>> servableCheckpointsAtTheEnd(QIODevice &log, qint64 tailBytes)
{
    const qint64 size = log.size();
    const qint64 from = std::max<qint64>(0, size - tailBytes);
    if (!log.seek(from)) return std::nullopt;
    const QByteArray tail = log.read(size - from);
    // Whole lines only: the first one may have been cut by the tail's start.
    qsizetype end = tail.size();
    while (end > 0) {
        const qsizetype start = tail.lastIndexOf('\n', end - 1) + 1;
        if (start == 0 && from > 0) break;
        const QByteArrayView line = QByteArrayView(tail).sliced(start, end - start);
        if (line.contains(QByteArrayView("\"kind\": \"servable_checkpoints\""))) {
            JobProgress progress;
            if (progress.feed(line)) return progress.servableCheckpoints();
        }
        end = start - 1;
    }
    return std::nullopt;
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

QString JobProgress::doneReason() const
{
    if (!m_doneReason.isEmpty() || !m_exitCode) return m_doneReason;
    return *m_exitCode == 0 ? Text::tr("Ran all epochs") : Text::tr("Exited with code %1").arg(*m_exitCode);
}

QString JobProgress::summary() const
{
    if (m_totalSteps <= 0) return {};
    QString steps = QStringLiteral("step %1/%2").arg(m_step).arg(m_totalSteps);
    if (m_totalEpochs > 1 || m_currentGlobalStep != m_step) steps += Text::tr(" (global step %1)").arg(m_currentGlobalStep);
    return m_totalEpochs > 1 ? QStringLiteral("epoch %1/%2, %3").arg(m_epoch).arg(m_totalEpochs).arg(steps) : steps;
}

QString JobProgress::details() const
{
    if (summary().isEmpty()) return {};
    QStringList parts{summary()};
    // untranslated: NeMo-RL's words in the log, matched
    for (const char *metric : {"Loss", "Avg Reward", "Accuracy", "Total step time"}) {
        if (const auto v = latest(QLatin1String(metric))) parts << QStringLiteral("%1 %2").arg(QLatin1String(metric)).arg(*v, 0, 'g', 4);
    }
    if (m_sawSaved) {
        if (lastSavedCheckpoint() > 0) parts << Text::tr("last checkpoint step %1").arg(lastSavedCheckpoint());
        if (m_lastCheckpoint > lastSavedCheckpoint() && !done()) parts << Text::tr("saving step %1").arg(m_lastCheckpoint);
    } else if (m_lastCheckpoint > 0) {
        parts << Text::tr("last checkpoint step %1").arg(m_lastCheckpoint);   // a log from before checkpoint_saved
    }
    return parts.join(QStringLiteral(", "));
}

} // namespace Starforge::Job
