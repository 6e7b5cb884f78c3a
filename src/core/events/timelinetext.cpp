// Timeline::toText: the timeline for a terminal, as `starforge-cli events JOB --timeline` prints
// it. One row per lane over a strip of time columns, the phases above them, a legend, then every
// event in time order with the lane it is on (the rows show where; the list says what).

#include "core/events/timeline.h"

#include <QCoreApplication>
#include <QStringList>

#include <algorithm>

namespace Starforge::Events {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(Timelinetext)
};

constexpr int TitleWidth = 34;

QChar phaseLetter(Phase phase)
{
    switch (phase) {
    case Phase::Pending: return u'P';
    case Phase::Suspended: return u'Z';
    case Phase::Initializing: return u'I';
    case Phase::Running: return u'R';
    case Phase::Succeeded: return u'S';
    case Phase::Failed: return u'F';
    case Phase::Stopped: return u'X';
    }
    return u' ';
}

QString offset(qint64 seconds)
{
    const qint64 s = std::max<qint64>(0, seconds);
    if (s >= 3600)
        return QStringLiteral("+%1:%2:%3").arg(s / 3600).arg((s / 60) % 60, 2, 10, QChar(u'0')).arg(s % 60, 2, 10, QChar(u'0'));
    return QStringLiteral("+%1:%2").arg(s / 60).arg(s % 60, 2, 10, QChar(u'0'));
}

QString duration(qint64 seconds)
{
    if (seconds >= 3600)
        return QStringLiteral("%1h %2m").arg(seconds / 3600).arg((seconds / 60) % 60);
    if (seconds >= 60)
        return QStringLiteral("%1m %2s").arg(seconds / 60).arg(seconds % 60);
    return QStringLiteral("%1s").arg(seconds);
}

// A name cut in the middle to fit: a pod's name shares its front with the job's and differs at
// its end, so both ends stay.
QString elideMiddle(const QString &text, int width)
{
    if (text.size() <= width)
        return text;
    const int tail = (width - 1) / 2;
    return text.left(width - 1 - tail) + u'…' + text.right(tail);
}

// A title in its column, indented by depth.
QString titleCell(const Lane &lane)
{
    const QString indent(lane.depth * 2, u' ');
    return QString(indent + elideMiddle(lane.title, TitleWidth - 1 - int(indent.size()))).leftJustified(TitleWidth);
}

} // namespace

QString Timeline::toText(int columns, const QStringList &evidence) const
{
    columns = std::max(columns, 10);
    if (!start.isValid() || isEmpty())
        return Text::tr("No events or state changes are known for this job.\n");
    const qint64 span = std::max<qint64>(1, start.msecsTo(end));
    auto column = [&](const QDateTime &at) {
        const qint64 ms = std::clamp<qint64>(start.msecsTo(at), 0, span);
        return int(ms * (columns - 1) / span);
    };

    QString out;
    out += Text::tr("%1 → %2 UTC, %3; one column ≈ %4\n")
               .arg(start.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")), end.toUTC().toString(QStringLiteral("HH:mm:ss")),
                    duration(start.secsTo(end)), duration(std::max<qint64>(1, span / 1000 / (columns - 1))));

    QString strip(columns, u' ');
    // Each band from its column up to the next band's; a band shorter than a column still shows
    // in one, the next starting a column later.
    int next = 0;
    for (int b = 0; b < phases.size(); ++b) {
        const PhaseBand &band = phases.at(b);
        const int from = std::max(column(band.start), next);
        const int to = b + 1 == phases.size() ? columns - 1 : std::max(from, column(band.end) - 1);
        for (int c = from; c <= to && c < columns; ++c)
            strip[c] = phaseLetter(band.phase);
        next = to + 1;
    }
    out += QStringLiteral("phase").leftJustified(TitleWidth) + strip + u'\n';

    for (int l = 0; l < lanes.size(); ++l) {
        const Lane &lane = lanes.at(l);
        QString row(columns, u' ');
        if (lane.created.isValid() && lane.kind != LaneKind::HeadGroup && lane.kind != LaneKind::WorkerGroup) {
            const int to = lane.ended.isValid() ? column(lane.ended) : columns - 1;
            for (int c = column(lane.created); c <= to; ++c)
                row[c] = u'-';
        }
        // Spans first, marks over them; a warning or evidence is never hidden by a normal mark.
        auto rank = [](QChar c) { return c == u'*' ? 4 : c == u'!' ? 3 : c == u'#' ? 2 : c == u'o' ? 1 : 0; };
        auto put = [&](int c, QChar ch) {
            if (rank(ch) >= rank(row[c]))
                row[c] = ch;
        };
        for (const TimelineItem &item : items) {
            if (item.lane != l || !item.isSpan())
                continue;
            for (int c = column(item.start); c <= column(item.end); ++c)
                put(c, item.warning() ? u'#' : u'=');
        }
        for (const TimelineItem &item : items) {
            if (item.lane != l)
                continue;
            put(column(item.end), evidence.contains(item.key()) ? u'*' : item.warning() ? u'!' : u'o');
        }
        QString line = titleCell(lane) + row;
        while (line.endsWith(u' '))
            line.chop(1);
        out += line + u'\n';
    }
    out += QStringLiteral("\nphases: P Pending, Z Suspended, I Initializing, R Running, S Succeeded, F Failed, X Stopped\n"
                          "marks:  o event, ! warning, = repeated, # repeated warning, * evidence of the diagnosis, - the object exists\n");

    if (!items.isEmpty()) {
        out += Text::tr("\nevents, time since %1:\n").arg(start.toUTC().toString(Text::tr("HH:mm:ss")));
        int objectWidth = 0;
        for (const TimelineItem &item : items)
            objectWidth = std::max<int>(objectWidth, std::min<int>(40, lanes.at(item.lane).title.size()));
        for (const TimelineItem &item : items) {
            const Lane &lane = lanes.at(item.lane);
            QString what = item.event.reason;
            if (item.event.count > 1)
                what += QStringLiteral(" ×%1").arg(item.event.count);
            QString when = offset(start.secsTo(item.start));
            if (item.isSpan())
                when += QStringLiteral("–") + offset(start.secsTo(item.end)).mid(1);
            out += QStringLiteral("%1 %2 %3 %4 %5: %6\n")
                       .arg(evidence.contains(item.key()) ? QStringLiteral("*") : QStringLiteral(" "),
                            when.leftJustified(13), elideMiddle(lane.title, 40).leftJustified(objectWidth),
                            item.event.type.leftJustified(7), what, item.event.message.simplified());
        }
    }
    return out;
}

} // namespace Starforge::Events
