#include "core/kube/quantity.h"

#include <QHash>
#include <QRegularExpression>

#include <cmath>

namespace Starforge::Kube {

std::optional<qint64> parseQuantityMilli(const QString &text)
{
    static const QRegularExpression re(QStringLiteral("^([+-]?[0-9]*\\.?[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$"));
    const auto m = re.match(text.trimmed());
    if (!m.hasMatch()) {
        return std::nullopt;
    }
    const long double number = m.captured(1).toDouble();
    const QString suffix = m.captured(2);
    long double factor = 1;
    if (suffix.isEmpty()) {
        factor = 1;
    } else if (suffix.startsWith(u'e') || suffix.startsWith(u'E')) {
        // An exponent beyond int is refused, not read as 0 (which would make "1e99999999999" one).
        bool ok = false;
        const int exponent = suffix.mid(1).toInt(&ok);
        if (!ok) {
            return std::nullopt;
        }
        factor = std::pow(10.0L, exponent);
    } else {
        static const QHash<QString, long double> factors{
            {QStringLiteral("n"), 1e-9L}, {QStringLiteral("u"), 1e-6L}, {QStringLiteral("m"), 1e-3L},
            {QStringLiteral("k"), 1e3L}, {QStringLiteral("M"), 1e6L}, {QStringLiteral("G"), 1e9L},
            {QStringLiteral("T"), 1e12L}, {QStringLiteral("P"), 1e15L}, {QStringLiteral("E"), 1e18L},
            {QStringLiteral("Ki"), 1024.0L}, {QStringLiteral("Mi"), 1048576.0L}, {QStringLiteral("Gi"), 1073741824.0L},
            {QStringLiteral("Ti"), 1099511627776.0L}, {QStringLiteral("Pi"), 1125899906842624.0L},
            {QStringLiteral("Ei"), 1152921504606846976.0L}};
        factor = factors.value(suffix, 0);
    }
    const long double milli = number * factor * 1000.0L;
    if (!std::isfinite(milli) || std::fabs(milli) > 9.0e18L) {
        return std::nullopt;
    }
    // Kubernetes rounds fractional milli-units up.
    return static_cast<qint64>(std::ceil(milli - 1e-9L));
}

} // namespace Starforge::Kube
