#include "sandbox/api/structuralschema.h"

#include "sandbox/api/status.h"

#include <QHash>
#include <QRegularExpression>

#include "sandbox/util/yaml.h"

namespace Starforge::Sandbox {

namespace {


QString typeName(const QJsonValue &v)
{
    switch (v.type()) {
    case QJsonValue::Bool: return QStringLiteral("boolean");
    case QJsonValue::Double: return v.toDouble() == std::floor(v.toDouble()) ? QStringLiteral("integer") : QStringLiteral("number");
    case QJsonValue::String: return QStringLiteral("string");
    case QJsonValue::Array: return QStringLiteral("array");
    case QJsonValue::Object: return QStringLiteral("object");
    default: return QStringLiteral("null");
    }
}

QString render(const QJsonValue &v)
{
    if (v.isString()) return u'"' + v.toString() + u'"';
    if (v.isDouble()) return typeName(v) == QLatin1String("integer") ? QString::number(v.toInteger()) : QString::number(v.toDouble());
    if (v.isBool()) return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    return QStringLiteral("null");
}

class Walker
{
public:
    StructuralSchema::Outcome outcome;

    void invalid(const QString &path, const QString &message)
    {
        outcome.causes.append(Status::cause(QStringLiteral("FieldValueInvalid"), path, message));
    }

    // Returns the value after defaulting and pruning.
    QJsonValue walk(const QJsonValue &value, const QJsonObject &schema, const QString &path)
    {
        if (value.isNull() && schema.value(QStringLiteral("nullable")).toBool()) {
            return value;
        }
        if (schema.value(QStringLiteral("x-kubernetes-int-or-string")).toBool()) {
            if (!value.isString() && typeName(value) != QLatin1String("integer")) {
                invalid(path, QStringLiteral("Invalid value: \"%1\": %2 in body must be of type integer-or-string: \"%1\"").arg(typeName(value), path));
                return value;
            }
            checkString(value, schema, path);
            return value;
        }
        const QString type = schema.value(QStringLiteral("type")).toString();
        if (type.isEmpty()) {
            return value;
        }
        const QString actual = typeName(value);
        const bool typeOk = actual == type || (type == QLatin1String("number") && actual == QLatin1String("integer"));
        if (!typeOk) {
            invalid(path, QStringLiteral("Invalid value: \"%1\": %2 in body must be of type %3: \"%1\"").arg(actual, path, type));
            return value;
        }
        if (type == QLatin1String("object")) {
            return walkObject(value.toObject(), schema, path);
        }
        if (type == QLatin1String("array")) {
            const QJsonObject items = schema.value(QStringLiteral("items")).toObject();
            QJsonArray out;
            const QJsonArray in = value.toArray();
            for (qsizetype i = 0; i < in.size(); ++i) {
                out.append(walk(in.at(i), items, QStringLiteral("%1[%2]").arg(path).arg(i)));
            }
            if (schema.contains(QStringLiteral("maxItems")) && in.size() > schema.value(QStringLiteral("maxItems")).toInteger()) {
                outcome.causes.append(Status::cause(QStringLiteral("FieldValueTooMany"), path,
                                                    QStringLiteral("Too many: %1: must have at most %2 items").arg(in.size()).arg(schema.value(QStringLiteral("maxItems")).toInteger())));
            }
            return out;
        }
        if (type == QLatin1String("string")) {
            checkString(value, schema, path);
        }
        if (type == QLatin1String("integer") || type == QLatin1String("number")) {
            const double n = value.toDouble();
            if (schema.contains(QStringLiteral("minimum")) && n < schema.value(QStringLiteral("minimum")).toDouble()) {
                invalid(path, QStringLiteral("Invalid value: %1: %2 in body should be greater than or equal to %3")
                                  .arg(render(value), path, render(schema.value(QStringLiteral("minimum")))));
            }
            if (schema.contains(QStringLiteral("maximum")) && n > schema.value(QStringLiteral("maximum")).toDouble()) {
                invalid(path, QStringLiteral("Invalid value: %1: %2 in body should be less than or equal to %3")
                                  .arg(render(value), path, render(schema.value(QStringLiteral("maximum")))));
            }
            if (type == QLatin1String("integer") && schema.value(QStringLiteral("format")).toString() == QLatin1String("int32")
                && (n > 2147483647.0 || n < -2147483648.0)) {
                invalid(path, QStringLiteral("Invalid value: %1: %2 in body should be of format int32").arg(render(value), path));
            }
        }
        checkEnum(value, schema, path);
        return value;
    }

private:
    QJsonValue walkObject(QJsonObject object, const QJsonObject &schema, const QString &path)
    {
        const QJsonObject properties = schema.value(QStringLiteral("properties")).toObject();
        const QJsonValue additional = schema.value(QStringLiteral("additionalProperties"));
        const bool preserve = schema.value(QStringLiteral("x-kubernetes-preserve-unknown-fields")).toBool();
        // Defaults first, as the API server defaults before it validates.
        for (auto it = properties.begin(); it != properties.end(); ++it) {
            const QJsonObject child = it.value().toObject();
            if (!object.contains(it.key()) && child.contains(QStringLiteral("default"))) {
                object.insert(it.key(), child.value(QStringLiteral("default")));
            }
        }
        const QStringList keys = object.keys();
        for (const QString &key : keys) {
            const QString childPath = path.isEmpty() ? key : path + u'.' + key;
            if (properties.contains(key)) {
                object.insert(key, walk(object.value(key), properties.value(key).toObject(), childPath));
            } else if (additional.isObject()) {
                object.insert(key, walk(object.value(key), additional.toObject(), childPath));
            } else if (additional.toBool() || preserve) {
                continue;
            } else {
                outcome.unknownFields << childPath;
                object.remove(key);
            }
        }
        for (const QJsonValue &required : schema.value(QStringLiteral("required")).toArray()) {
            if (!object.contains(required.toString())) {
                const QString childPath = path.isEmpty() ? required.toString() : path + u'.' + required.toString();
                outcome.causes.append(Status::cause(QStringLiteral("FieldValueRequired"), childPath, QStringLiteral("Required value")));
            }
        }
        checkEnum(object, schema, path);
        return object;
    }

    void checkString(const QJsonValue &value, const QJsonObject &schema, const QString &path)
    {
        if (!value.isString()) return;
        const QString text = value.toString();
        if (schema.contains(QStringLiteral("maxLength")) && text.size() > schema.value(QStringLiteral("maxLength")).toInteger()) {
            outcome.causes.append(Status::cause(QStringLiteral("FieldValueTooLong"), path,
                                                QStringLiteral("Too long: may not be more than %1 bytes").arg(schema.value(QStringLiteral("maxLength")).toInteger())));
        }
        if (const QString pattern = schema.value(QStringLiteral("pattern")).toString(); !pattern.isEmpty()) {
            static QHash<QString, QRegularExpression> cache;
            auto it = cache.find(pattern);
            if (it == cache.end()) it = cache.insert(pattern, QRegularExpression(pattern));
            if (!it->match(text).hasMatch()) {
                invalid(path, QStringLiteral("Invalid value: \"%1\": %2 in body should match '%3'").arg(text, path, pattern));
            }
        }
    }

    void checkEnum(const QJsonValue &value, const QJsonObject &schema, const QString &path)
    {
        const QJsonArray values = schema.value(QStringLiteral("enum")).toArray();
        if (values.isEmpty() || values.contains(value)) return;
        QStringList supported;
        for (const QJsonValue &v : values) supported << render(v);
        outcome.causes.append(Status::cause(QStringLiteral("FieldValueNotSupported"), path,
                                            QStringLiteral("Unsupported value: %1: supported values: %2").arg(render(value), supported.join(QStringLiteral(", ")))));
    }
};

} // namespace

Result<StructuralSchema> StructuralSchema::fromCrd(const QByteArray &crdYaml, const QString &version)
{
    const auto parsed = Yaml::toJson(crdYaml);
    if (!parsed) {
        return Error::invalid(QStringLiteral("the CRD is not valid YAML: %1").arg(parsed.error().message));
    }
    return fromCrd(parsed->toObject(), version);
}

Result<StructuralSchema> StructuralSchema::fromCrd(const QJsonObject &crd, const QString &version)
{
    for (const QJsonValue &v : crd.value(QStringLiteral("spec")).toObject().value(QStringLiteral("versions")).toArray()) {
        if (v.toObject().value(QStringLiteral("name")).toString() == version) {
            StructuralSchema s;
            s.m_schema = v.toObject().value(QStringLiteral("schema")).toObject().value(QStringLiteral("openAPIV3Schema")).toObject();
            s.m_printerColumns = v.toObject().value(QStringLiteral("additionalPrinterColumns")).toArray();
            return s;
        }
    }
    return Error::notFound(QStringLiteral("the CRD serves no version %1").arg(version));
}

StructuralSchema::Outcome StructuralSchema::admit(QJsonObject &object) const
{
    Walker walker;
    // metadata is the API server's own (ObjectMeta), never pruned by the CRD schema.
    const QJsonValue metadata = object.value(QStringLiteral("metadata"));
    const QJsonValue apiVersion = object.value(QStringLiteral("apiVersion"));
    const QJsonValue kind = object.value(QStringLiteral("kind"));
    object.remove(QStringLiteral("metadata"));
    object = walker.walk(object, m_schema, QString()).toObject();
    object.insert(QStringLiteral("metadata"), metadata);
    object.insert(QStringLiteral("apiVersion"), apiVersion);
    object.insert(QStringLiteral("kind"), kind);
    return walker.outcome;
}

} // namespace Starforge::Sandbox
