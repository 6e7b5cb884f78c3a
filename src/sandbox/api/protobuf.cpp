#include "sandbox/api/protobuf.h"

#include <QHash>

namespace Starforge::Sandbox::Protobuf {

namespace {

// The length-delimited fields of one message, by field number; other wire types are skipped.
using Fields = QMultiHash<quint32, QByteArray>;

bool readVarint(const QByteArray &data, qsizetype &pos, quint64 &value)
{
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (pos >= data.size()) {
            return false;
        }
        const auto byte = static_cast<quint8>(data.at(pos++));
        value |= static_cast<quint64>(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            return true;
        }
    }
    return false;
}

std::optional<Fields> parse(const QByteArray &data)
{
    Fields fields;
    qsizetype pos = 0;
    while (pos < data.size()) {
        quint64 key = 0;
        if (!readVarint(data, pos, key)) {
            return std::nullopt;
        }
        const auto field = static_cast<quint32>(key >> 3);
        switch (key & 7) {
        case 0: {
            quint64 ignored = 0;
            if (!readVarint(data, pos, ignored)) return std::nullopt;
            break;
        }
        case 1:
            pos += 8;
            break;
        case 5:
            pos += 4;
            break;
        case 2: {
            quint64 length = 0;
            if (!readVarint(data, pos, length) || length > static_cast<quint64>(data.size() - pos)) {
                return std::nullopt;
            }
            fields.insert(field, data.mid(pos, static_cast<qsizetype>(length)));
            pos += static_cast<qsizetype>(length);
            break;
        }
        default:
            return std::nullopt;
        }
        if (pos > data.size()) {
            return std::nullopt;
        }
    }
    return fields;
}

Error malformed()
{
    return Error::invalid(QStringLiteral("the request body is not a valid Kubernetes protobuf object"));
}

std::optional<Fields> objectFields(const QByteArray &body)
{
    if (!body.startsWith(QByteArray("k8s\0", 4))) {
        return std::nullopt;
    }
    const auto unknown = parse(body.mid(4));
    if (!unknown || !unknown->contains(2)) {
        return std::nullopt;
    }
    return parse(unknown->value(2));
}

QString text(const Fields &fields, quint32 number)
{
    return QString::fromUtf8(fields.value(number));
}

} // namespace

Result<QJsonObject> decodeSelfSubjectAccessReviewSpec(const QByteArray &body)
{
    const auto review = objectFields(body);
    if (!review) {
        return malformed();
    }
    const auto spec = parse(review->value(2));
    if (!spec) {
        return malformed();
    }
    QJsonObject out;
    if (spec->contains(1)) {
        const auto a = parse(spec->value(1));
        if (!a) {
            return malformed();
        }
        out.insert(QStringLiteral("resourceAttributes"),
                   QJsonObject{{QStringLiteral("namespace"), text(*a, 1)}, {QStringLiteral("verb"), text(*a, 2)},
                               {QStringLiteral("group"), text(*a, 3)}, {QStringLiteral("version"), text(*a, 4)},
                               {QStringLiteral("resource"), text(*a, 5)}, {QStringLiteral("subresource"), text(*a, 6)},
                               {QStringLiteral("name"), text(*a, 7)}});
    }
    if (spec->contains(2)) {
        const auto a = parse(spec->value(2));
        if (!a) {
            return malformed();
        }
        out.insert(QStringLiteral("nonResourceAttributes"),
                   QJsonObject{{QStringLiteral("path"), text(*a, 1)}, {QStringLiteral("verb"), text(*a, 2)}});
    }
    return out;
}

Result<QString> decodeSelfSubjectRulesReviewNamespace(const QByteArray &body)
{
    const auto review = objectFields(body);
    if (!review) {
        return malformed();
    }
    const auto spec = parse(review->value(2));
    if (!spec) {
        return malformed();
    }
    return text(*spec, 1);
}

} // namespace Starforge::Sandbox::Protobuf
