#pragma once

// Everything the sandbox writes under its state directory is its owner's alone: directories
// 0700, files 0600 (docs/sandbox.md, "What it serves"). Jobs, objects and logs of one user are
// never readable by another user of the machine.

#include <QFile>
#include <QString>

namespace Starforge::Sandbox {

// mkpath with each directory it creates (and the last one, if it exists) owner-only.
bool makeOwnerOnlyPath(const QString &path);

// Opens `file` in `mode`, creating it owner-only (0600) when it does not exist.
bool openOwnerOnly(QFile &file, QIODevice::OpenMode mode);

} // namespace Starforge::Sandbox
