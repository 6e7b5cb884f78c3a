#include "sandbox/cluster/podrequests.h"

#include <QJsonArray>
#include <QLocale>
#include <QStringView>

#include <algorithm>
#include <limits>
#include <utility>

namespace Starforge::Sandbox::PodRequests {

namespace {

constexpr quint64 Cap = static_cast<quint64>(std::numeric_limits<qint64>::max());
// Exponents beyond this are clamped: 10^±100 already saturates or rounds any mantissa away.
constexpr int ExponentBound = 100;

quint64 timesCapped(quint64 value, quint64 factor)
{
    if (value != 0 && factor > Cap / value) {
        return Cap;
    }
    return value * factor;
}

qint64 plusCapped(qint64 a, qint64 b)
{
    // Requests are never negative here (ofContainer drops negative ones), so only the top can be crossed.
    return a > std::numeric_limits<qint64>::max() - b ? std::numeric_limits<qint64>::max() : a + b;
}

bool isAsciiDigit(QChar c)
{
    return c >= u'0' && c <= u'9';
}

// The numeric part of a quantity: its digits as one integer and the power of ten that places the
// decimal point. Digits past what a qint64 holds are dropped (and remembered, for rounding up).
struct Mantissa
{
    quint64 digits = 0;
    int exponent = 0;
    bool droppedNonZero = false;
    bool negative = false;
};

std::optional<Mantissa> readMantissa(QStringView text, qsizetype &pos)
{
    Mantissa m;
    if (pos < text.size() && (text[pos] == u'+' || text[pos] == u'-')) {
        m.negative = text[pos] == u'-';
        ++pos;
    }
    bool anyDigit = false;
    bool inFraction = false;
    for (; pos < text.size(); ++pos) {
        const QChar c = text[pos];
        if (c == u'.' && !inFraction) {
            inFraction = true;
            continue;
        }
        if (!isAsciiDigit(c)) {
            break;
        }
        anyDigit = true;
        const int digit = c.unicode() - u'0';
        if (m.digits <= (Cap - 9) / 10) {
            m.digits = m.digits * 10 + static_cast<quint64>(digit);
            if (inFraction) --m.exponent;
        } else {
            if (!inFraction) ++m.exponent;
            m.droppedNonZero = m.droppedNonZero || digit != 0;
        }
    }
    if (!anyDigit) {
        return std::nullopt; // "", "+", ".", "Ki"
    }
    return m;
}

// The suffix as a power of ten and a power of 1024: SI ("m", "k", "M", …), binary ("Ki", "Mi",
// …) or an exponent ("e3", "E-2"). A lone "E" is exa, not an exponent.
struct Scale
{
    int tens = 0;
    int powersOf1024 = 0;
};

std::optional<Scale> readSuffix(QStringView suffix)
{
    if (suffix.isEmpty()) {
        return Scale{};
    }
    static const std::pair<const char16_t *, int> decimal[] = {{u"n", -9}, {u"u", -6}, {u"m", -3}, {u"k", 3}, {u"M", 6},
                                                               {u"G", 9},  {u"T", 12}, {u"P", 15}, {u"E", 18}};
    static const std::pair<const char16_t *, int> binary[] = {{u"Ki", 1}, {u"Mi", 2}, {u"Gi", 3}, {u"Ti", 4}, {u"Pi", 5}, {u"Ei", 6}};
    for (const auto &[name, tens] : decimal) {
        if (suffix == QStringView(name)) return Scale{tens, 0};
    }
    for (const auto &[name, power] : binary) {
        if (suffix == QStringView(name)) return Scale{0, power};
    }
    if (suffix[0] != u'e' && suffix[0] != u'E') {
        return std::nullopt;
    }
    qsizetype pos = 1;
    bool negative = false;
    if (pos < suffix.size() && (suffix[pos] == u'+' || suffix[pos] == u'-')) {
        negative = suffix[pos] == u'-';
        ++pos;
    }
    if (pos == suffix.size()) {
        return std::nullopt; // "2e", "2e-"
    }
    int exponent = 0;
    for (; pos < suffix.size(); ++pos) {
        if (!isAsciiDigit(suffix[pos])) {
            return std::nullopt; // "2e1.5", "2e3Ki"
        }
        exponent = std::min(exponent * 10 + (suffix[pos].unicode() - u'0'), ExponentBound);
    }
    return Scale{negative ? -exponent : exponent, 0};
}

QString quantityText(const QJsonValue &value)
{
    // Quantities are strings in the API, but a JSON number is accepted for them too.
    return value.isDouble() ? QString::number(value.toDouble(), 'g', QLocale::FloatingPointShortest) : value.toString();
}

void addTo(MilliAmounts &into, const MilliAmounts &amounts)
{
    for (auto it = amounts.cbegin(); it != amounts.cend(); ++it) {
        into[it.key()] = plusCapped(into.value(it.key()), it.value());
    }
}

void raiseTo(MilliAmounts &into, const MilliAmounts &floor)
{
    for (auto it = floor.cbegin(); it != floor.cend(); ++it) {
        if (!into.contains(it.key()) || into.value(it.key()) < it.value()) {
            into.insert(it.key(), it.value());
        }
    }
}

MilliAmounts readAmounts(const QJsonObject &quantities)
{
    MilliAmounts amounts;
    for (auto it = quantities.begin(); it != quantities.end(); ++it) {
        if (const auto milli = milliQuantity(quantityText(it.value())); milli && *milli >= 0) {
            amounts.insert(it.key(), *milli);
        }
    }
    return amounts;
}

bool isSidecar(const QJsonObject &initContainer)
{
    return initContainer.value(QStringLiteral("restartPolicy")).toString() == QLatin1String("Always");
}

} // namespace

std::optional<qint64> milliQuantity(const QString &text)
{
    // The API server trims the JSON string before it parses the quantity; inside, no space.
    const QStringView quantity = QStringView(text).trimmed();
    qsizetype pos = 0;
    const auto mantissa = readMantissa(quantity, pos);
    if (!mantissa) {
        return std::nullopt;
    }
    const auto scale = readSuffix(quantity.mid(pos));
    if (!scale) {
        return std::nullopt;
    }
    quint64 value = mantissa->digits;
    for (int i = 0; i < scale->powersOf1024; ++i) {
        value = timesCapped(value, 1024);
    }
    // The 1024s first: "1.5Ki" is 15 × 1024 / 10, exact, where dividing first would lose the half.
    int tens = std::clamp(mantissa->exponent + scale->tens, -ExponentBound, ExponentBound) + 3; // + 3: thousandths
    bool roundUp = mantissa->droppedNonZero;
    for (; tens > 0 && value < Cap; --tens) {
        value = timesCapped(value, 10);
    }
    for (; tens < 0; ++tens) {
        roundUp = roundUp || value % 10 != 0;
        value /= 10;
    }
    if (roundUp && value < Cap) {
        ++value; // "1n" of cpu is 1 milli-CPU, never 0: asking for anything means asking for something
    }
    const auto magnitude = static_cast<qint64>(value);
    return mantissa->negative ? -magnitude : magnitude;
}

MilliAmounts ofContainer(const QJsonObject &container)
{
    const QJsonObject resources = container.value(QStringLiteral("resources")).toObject();
    const QJsonObject requests = resources.value(QStringLiteral("requests")).toObject();
    MilliAmounts amounts = readAmounts(requests);
    const MilliAmounts limits = readAmounts(resources.value(QStringLiteral("limits")).toObject());
    for (auto it = limits.cbegin(); it != limits.cend(); ++it) {
        if (!requests.contains(it.key())) {
            amounts.insert(it.key(), it.value());
        }
    }
    return amounts;
}

MilliAmounts ofPod(const QJsonObject &pod)
{
    const QJsonObject spec = pod.value(QStringLiteral("spec")).toObject();
    // What runs once the pod is up: every app container and every sidecar.
    MilliAmounts running;
    for (const QJsonValue &c : spec.value(QStringLiteral("containers")).toArray()) {
        addTo(running, ofContainer(c.toObject()));
    }
    // The init phase, one init container at a time, each beside the sidecars declared before it.
    MilliAmounts sidecarsSoFar;
    MilliAmounts initPeak;
    for (const QJsonValue &v : spec.value(QStringLiteral("initContainers")).toArray()) {
        const QJsonObject init = v.toObject();
        const MilliAmounts own = ofContainer(init);
        if (isSidecar(init)) {
            addTo(sidecarsSoFar, own);
            addTo(running, own);
            raiseTo(initPeak, sidecarsSoFar);
        } else {
            MilliAmounts withSidecars = sidecarsSoFar;
            addTo(withSidecars, own);
            raiseTo(initPeak, withSidecars);
        }
    }
    raiseTo(running, initPeak);
    addTo(running, readAmounts(spec.value(QStringLiteral("overhead")).toObject()));
    return running;
}

bool holdsNodeResources(const QJsonObject &pod)
{
    const QString node = pod.value(QStringLiteral("spec")).toObject().value(QStringLiteral("nodeName")).toString();
    const QString phase = pod.value(QStringLiteral("status")).toObject().value(QStringLiteral("phase")).toString();
    return !node.isEmpty() && phase != QLatin1String("Succeeded") && phase != QLatin1String("Failed");
}

} // namespace Starforge::Sandbox::PodRequests
