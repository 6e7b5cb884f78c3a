#pragma once

// Small helpers shared by the tests.

#include <QByteArray>
#include <QCoreApplication>
#include <QFile>
#include <QString>
#include <QTest>
#include <QTranslator>

namespace Starforge::Testing {

// English singular and plural of the %n messages ("1 node", "2 nodes"), as the apps have them:
// they install this catalogue at start (I18n::installTranslators); without it a core message
// reads "2 node(s)". For tests that compare the core's English text.
inline bool installEnglishPlurals()
{
    static QTranslator *english = nullptr;
    if (english) return true;
    auto *translator = new QTranslator(QCoreApplication::instance());
    if (!translator->load(QStringLiteral("starforge_en"), QStringLiteral(SF_QM_DIR))) {
        delete translator;
        return false;
    }
    english = translator;
    return QCoreApplication::installTranslator(english);
}

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
