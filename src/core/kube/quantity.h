#pragma once

// Kubernetes resource quantities ("500m", "8Gi", "1.5", "2e3") as integer milli-units, the
// precision the scheduler and kubectl's resource arithmetic need: cpu "500m" is 500, memory
// "1Ki" is 1,024,000, "nvidia.com/gpu" "8" is 8,000.

#include <QString>

#include <optional>

namespace Starforge::Kube {

std::optional<qint64> parseQuantityMilli(const QString &text);

} // namespace Starforge::Kube
