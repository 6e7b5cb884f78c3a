#pragma once

#include <QRandomGenerator>
#include <QString>

namespace Starforge::Sandbox {

// A generated-name suffix in the alphabet apimachinery's rand.String uses (no vowels, no
// look-alike digits), as in "<generateName>x7k2q" and KubeRay's "<rayjob>-<5 chars>".
QString randomSuffix(QRandomGenerator &random, int length = 5);

} // namespace Starforge::Sandbox
