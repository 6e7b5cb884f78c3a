#include "sandbox/util/ownerfiles.h"

#include <QDir>
#include <QFileInfo>

namespace Starforge::Sandbox {

namespace {

constexpr QFileDevice::Permissions OwnerOnlyDirectory = QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner
    | QFileDevice::ReadUser | QFileDevice::WriteUser | QFileDevice::ExeUser;
constexpr QFileDevice::Permissions OwnerOnlyFile
    = QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadUser | QFileDevice::WriteUser;

} // namespace

bool makeOwnerOnlyPath(const QString &path)
{
    const QString clean = QDir::cleanPath(QFileInfo(path).absoluteFilePath());
    const QFileInfo info(clean);
    if (info.isDir()) {
        return QFile::setPermissions(clean, OwnerOnlyDirectory);
    }
    // Parents first, each created owner-only; directories that already exist are left as they are,
    // except the one asked for.
    const QString parent = info.path();
    if (parent != clean && !QFileInfo(parent).isDir() && !makeOwnerOnlyPath(parent)) {
        return false;
    }
    return QDir().mkdir(clean, OwnerOnlyDirectory) || QFileInfo(clean).isDir();
}

bool openOwnerOnly(QFile &file, QIODevice::OpenMode mode)
{
    return file.open(mode, OwnerOnlyFile);
}

} // namespace Starforge::Sandbox
