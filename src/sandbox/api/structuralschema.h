#pragma once

// Admission of custom resources against their CRD's OpenAPI v3 schema, as the API server does
// it: defaults applied, unknown fields pruned (or refused under fieldValidation=Strict), then
// types, required fields, enums, minimum/maximum, patterns and int-or-string checked, each
// failure a Status cause with the apiextensions message text. CEL rules
// (x-kubernetes-validations) are not evaluated.

#include "core/util/result.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QStringList>

namespace Starforge::Sandbox {

class StructuralSchema
{
public:
    // The openAPIV3Schema of one served version of a CustomResourceDefinition (YAML).
    static Result<StructuralSchema> fromCrd(const QByteArray &crdYaml, const QString &version);
    // The same from the CRD already parsed (YAML read as JSON).
    static Result<StructuralSchema> fromCrd(const QJsonObject &crd, const QString &version);

    struct Outcome
    {
        QJsonArray causes;          // [{reason, message, field}]
        QStringList unknownFields;  // "spec.foo", pruned from the object
    };
    Outcome admit(QJsonObject &object) const;

    const QJsonObject &schema() const { return m_schema; }
    // The version's additionalPrinterColumns (for kubectl's Table output).
    const QJsonArray &printerColumns() const { return m_printerColumns; }

private:
    QJsonObject m_schema;
    QJsonArray m_printerColumns;
};

} // namespace Starforge::Sandbox
