#pragma once

// Small helpers shared by the tests.

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QTest>

namespace Starforge::Testing {

inline QString dataPath(const QString &relative)
{
    return QStringLiteral(SF_TEST_DATA_DIR) + u'/' + relative;
}

inline QByteArray readAll(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        return {};
    }
    return f.readAll();
}

inline bool writeFile(const QString &path, const QByteArray &content)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        return false;
    }
    return f.write(content) == content.size();
}

// Runs the event loop until an asynchronous callback has stored its result.
template <typename T>
bool waitFor(const std::optional<T> &slot, int timeoutMs = 10000)
{
    return QTest::qWaitFor([&slot] { return slot.has_value(); }, timeoutMs);
}

} // namespace Starforge::Testing
