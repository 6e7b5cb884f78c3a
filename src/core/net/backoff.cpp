#include "core/net/backoff.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QLocale>
#include <QRandomGenerator>

#include <algorithm>

namespace Starforge::Net {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(Backoff)
};

} // namespace

Backoff::Backoff()
    : Backoff(Params{})
{
}

Backoff::Backoff(Params params, std::function<double()> random)
    : m_params(params)
    , m_random(std::move(random))
{
    if (!m_random) {
        m_random = [] { return QRandomGenerator::global()->generateDouble(); };
    }
}

int Backoff::next()
{
    m_base = m_failures == 0 ? m_params.initialMs : std::min<double>(m_base * m_params.factor, m_params.maxMs);
    ++m_failures;
    const double delay = m_base * (1.0 + m_params.jitter * m_random());
    return static_cast<int>(std::min<double>(delay, m_params.maxMs));
}

void Backoff::reset()
{
    m_failures = 0;
    m_base = 0;
}

int retryAfterMs(const QByteArray &headerValue)
{
    const QByteArray text = headerValue.trimmed();
    if (text.isEmpty()) {
        return -1;
    }
    bool isNumber = false;
    const qint64 seconds = text.toLongLong(&isNumber);
    if (isNumber) {
        return seconds < 0 ? -1 : static_cast<int>(std::min<qint64>(seconds, 3600) * 1000);
    }
    // An HTTP date: "Wed, 21 Oct 2015 07:28:00 GMT".
    QDateTime when = QLocale::c().toDateTime(QString::fromLatin1(text), Text::tr("ddd, dd MMM yyyy HH:mm:ss 'GMT'"));
    if (!when.isValid()) {
        return -1;
    }
    when.setTimeSpec(Qt::UTC);
    const qint64 ms = QDateTime::currentDateTimeUtc().msecsTo(when);
    return static_cast<int>(std::clamp<qint64>(ms, 0, 3600 * 1000));
}

} // namespace Starforge::Net
