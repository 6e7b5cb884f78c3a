#include "sandbox/util/yaml.h"

#include <QJsonArray>
#include <QJsonObject>

#include <yaml-cpp/yaml.h>

namespace Starforge::Sandbox::Yaml {

namespace {

QJsonValue convert(const YAML::Node &node)
{
    switch (node.Type()) {
    case YAML::NodeType::Map: {
        QJsonObject o;
        for (const auto &kv : node) {
            o.insert(QString::fromStdString(kv.first.as<std::string>()), convert(kv.second));
        }
        return o;
    }
    case YAML::NodeType::Sequence: {
        QJsonArray a;
        for (const auto &item : node) {
            a.append(convert(item));
        }
        return a;
    }
    case YAML::NodeType::Scalar: {
        if (node.Tag() == "!") {
            return QString::fromStdString(node.Scalar()); // quoted: a string whatever it reads like
        }
        bool b = false;
        if (YAML::convert<bool>::decode(node, b)) return b;
        long long i = 0;
        if (YAML::convert<long long>::decode(node, i)) return static_cast<qint64>(i);
        double d = 0;
        if (YAML::convert<double>::decode(node, d)) return d;
        return QString::fromStdString(node.Scalar());
    }
    default:
        return QJsonValue::Null;
    }
}

} // namespace

Result<QJsonValue> toJson(const QByteArray &yaml)
{
    try {
        return convert(YAML::Load(yaml.toStdString()));
    } catch (const YAML::Exception &e) {
        return Error::invalid(QString::fromStdString(e.what()));
    }
}

Result<QList<QJsonValue>> allToJson(const QByteArray &yaml)
{
    try {
        QList<QJsonValue> out;
        for (const YAML::Node &doc : YAML::LoadAll(yaml.toStdString())) {
            out << convert(doc);
        }
        return out;
    } catch (const YAML::Exception &e) {
        return Error::invalid(QString::fromStdString(e.what()));
    }
}

} // namespace Starforge::Sandbox::Yaml
