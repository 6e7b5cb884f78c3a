#include "sandbox/crds/kuberaycrds.h"

#include "sandbox/util/yaml.h"

#include <QFile>
#include <QHash>
#include <QJsonArray>
#include <QRegularExpression>

namespace Starforge::Sandbox::KubeRayCrds {

namespace {

// The embedded v1.7 YAML as JSON, parsed once per process (about 0.1 s each).
const QJsonObject &base(const QString &plural)
{
    static QHash<QString, QJsonObject> parsed;
    auto it = parsed.find(plural);
    if (it == parsed.end()) {
        QJsonObject object;
        QFile file(QStringLiteral(":/sandbox/crds/ray.io_%1.yaml").arg(plural));
        if (file.open(QIODevice::ReadOnly)) {
            if (auto json = Yaml::toJson(file.readAll())) {
                object = json->toObject();
            }
        }
        it = parsed.insert(plural, object);
    }
    return *it;
}

// schema.properties[section].properties without field; with replacement when given.
QJsonObject withoutField(QJsonObject schema, const QString &section, const QString &field,
                         const QString &replacement = {}, const QJsonObject &replacementSchema = {})
{
    QJsonObject properties = schema.value(QStringLiteral("properties")).toObject();
    QJsonObject part = properties.value(section).toObject();
    QJsonObject fields = part.value(QStringLiteral("properties")).toObject();
    fields.remove(field);
    if (!replacement.isEmpty()) {
        fields.insert(replacement, replacementSchema);
    }
    part.insert(QStringLiteral("properties"), fields);
    properties.insert(section, part);
    schema.insert(QStringLiteral("properties"), properties);
    return schema;
}

} // namespace

Result<QVersionNumber> parseVersion(const QString &text)
{
    static const QRegularExpression form(QStringLiteral("^v?(\\d+)\\.(\\d+)(\\.\\d+)?$"));
    const QRegularExpressionMatch m = form.match(text.trimmed());
    const QVersionNumber version = m.hasMatch() ? QVersionNumber(m.captured(1).toInt(), m.captured(2).toInt()) : QVersionNumber();
    if (!isSupported(version)) {
        return Error::invalid(QStringLiteral("the sandbox can be KubeRay %1 to %2 (e.g. 1.6), not '%3'")
                                  .arg(Oldest.toString(), Newest.toString(), text));
    }
    return version;
}

bool isSupported(const QVersionNumber &version)
{
    const QVersionNumber minor(version.majorVersion(), version.minorVersion());
    return version.segmentCount() >= 2 && minor >= Oldest && minor <= Newest;
}

QJsonObject crd(const QString &plural, const QVersionNumber &version)
{
    QJsonObject object = base(plural);
    if (plural != QLatin1String("rayjobs") || object.isEmpty() || version >= Newest) {
        return object;
    }
    QJsonObject spec = object.value(QStringLiteral("spec")).toObject();
    QJsonArray versions = spec.value(QStringLiteral("versions")).toArray();
    for (qsizetype i = 0; i < versions.size(); ++i) {
        QJsonObject entry = versions.at(i).toObject();
        QJsonObject schemaHolder = entry.value(QStringLiteral("schema")).toObject();
        QJsonObject schema = schemaHolder.value(QStringLiteral("openAPIV3Schema")).toObject();
        schema = withoutField(schema, QStringLiteral("status"), QStringLiteral("jobStatusCheckFailureStartTime"));
        if (version < QVersionNumber(1, 6)) {
            schema = withoutField(schema, QStringLiteral("spec"), QStringLiteral("preRunningDeadlineSeconds"));
        }
        if (version < QVersionNumber(1, 5)) {
            schema = withoutField(schema, QStringLiteral("spec"), QStringLiteral("deletionStrategy"), QStringLiteral("deletionPolicy"),
                                  QJsonObject{{QStringLiteral("type"), QStringLiteral("string")}});
        }
        schemaHolder.insert(QStringLiteral("openAPIV3Schema"), schema);
        entry.insert(QStringLiteral("schema"), schemaHolder);
        versions.replace(i, entry);
    }
    spec.insert(QStringLiteral("versions"), versions);
    object.insert(QStringLiteral("spec"), spec);
    return object;
}

QJsonObject served(const QString &plural, const QVersionNumber &version, const QString &now)
{
    QJsonObject object = crd(plural, version);
    if (object.isEmpty()) {
        return object;
    }
    QJsonObject spec = object.value(QStringLiteral("spec")).toObject();
    if (!spec.contains(QStringLiteral("conversion"))) {
        spec.insert(QStringLiteral("conversion"), QJsonObject{{QStringLiteral("strategy"), QStringLiteral("None")}});
    }
    object.insert(QStringLiteral("spec"), spec);
    QJsonArray stored;
    for (const QJsonValue &v : spec.value(QStringLiteral("versions")).toArray()) {
        if (v.toObject().value(QStringLiteral("storage")).toBool()) {
            stored.append(v.toObject().value(QStringLiteral("name")));
        }
    }
    const auto condition = [&now](const char *type, const char *reason, const char *message) {
        return QJsonObject{{QStringLiteral("type"), QLatin1String(type)}, {QStringLiteral("status"), QStringLiteral("True")},
                           {QStringLiteral("lastTransitionTime"), now}, {QStringLiteral("reason"), QLatin1String(reason)},
                           {QStringLiteral("message"), QLatin1String(message)}};
    };
    object.insert(QStringLiteral("status"),
                  QJsonObject{{QStringLiteral("acceptedNames"), spec.value(QStringLiteral("names"))},
                              {QStringLiteral("conditions"),
                               QJsonArray{condition("NamesAccepted", "NoConflicts", "no conflicts found"),
                                          condition("Established", "InitialNamesAccepted", "the initial names have been accepted")}},
                              {QStringLiteral("storedVersions"), stored}});
    QJsonObject metadata = object.value(QStringLiteral("metadata")).toObject();
    metadata.insert(QStringLiteral("generation"), 1);
    object.insert(QStringLiteral("metadata"), metadata);
    return object;
}

} // namespace Starforge::Sandbox::KubeRayCrds
