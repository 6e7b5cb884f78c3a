#pragma once

// Label and field selectors with the API server's syntax and error texts. Labels: =, ==, !=,
// in (…), notin (…), exists, !exists, and the numeric > and <. Fields: =, ==, != only, with
// \ escapes, and only the labels a resource type supports.

#include "core/util/result.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

namespace Starforge::Sandbox {

class LabelSelector
{
public:
    enum class Op { Equals, NotEquals, In, NotIn, Exists, DoesNotExist, GreaterThan, LessThan };
    struct Requirement
    {
        QString key;
        Op op;
        QStringList values;
    };

    static Result<LabelSelector> parse(const QString &text);
    bool matches(const QJsonObject &labels) const;
    bool isEmpty() const { return m_requirements.isEmpty(); }
    const QList<Requirement> &requirements() const { return m_requirements; }

private:
    QList<Requirement> m_requirements;
};

class FieldSelector
{
public:
    struct Requirement
    {
        QString field;
        bool equals = true;
        QString value;
    };

    static Result<FieldSelector> parse(const QString &text);
    // Checks every field against what the type supports: "field label not supported: X".
    Result<void> check(const std::function<bool(const QString &)> &supported) const;
    bool matches(const std::function<std::optional<QString>(const QString &)> &valueOf) const;
    bool isEmpty() const { return m_requirements.isEmpty(); }
    const QList<Requirement> &requirements() const { return m_requirements; }
    // The single metadata.name=X requirement, if that is all the selector says (kubectl delete).
    std::optional<QString> exactName() const;

private:
    QList<Requirement> m_requirements;
};

} // namespace Starforge::Sandbox
