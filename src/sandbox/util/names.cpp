#include "sandbox/util/names.h"

namespace Starforge::Sandbox {

QString randomSuffix(QRandomGenerator &random, int length)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    QString out;
    for (int i = 0; i < length; ++i) {
        out += QLatin1Char(alphabet[random.bounded(static_cast<int>(sizeof alphabet - 1))]);
    }
    return out;
}

} // namespace Starforge::Sandbox
