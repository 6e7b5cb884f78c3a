#include "sandbox/cluster/eventrecorder.h"

#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

#include <QDateTime>

namespace Starforge::Sandbox {

namespace {

// The note limit of events.k8s.io; longer messages are cut with " ..." as the scheduler does.
constexpr qsizetype MaxMessage = 1024;

const ResourceType &eventType()
{
    return *ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("events"));
}

} // namespace

QJsonObject EventRecorder::reference(const QJsonObject &object, const QString &fieldPath)
{
    const QJsonObject meta = object.value(QStringLiteral("metadata")).toObject();
    QJsonObject ref{{QStringLiteral("kind"), object.value(QStringLiteral("kind"))},
                    {QStringLiteral("name"), meta.value(QStringLiteral("name"))},
                    {QStringLiteral("uid"), meta.value(QStringLiteral("uid"))},
                    {QStringLiteral("apiVersion"), object.value(QStringLiteral("apiVersion"))},
                    {QStringLiteral("resourceVersion"), meta.value(QStringLiteral("resourceVersion"))}};
    if (meta.contains(QStringLiteral("namespace"))) {
        ref.insert(QStringLiteral("namespace"), meta.value(QStringLiteral("namespace")));
    }
    if (!fieldPath.isEmpty()) {
        ref.insert(QStringLiteral("fieldPath"), fieldPath);
    }
    return ref;
}

void EventRecorder::record(const QJsonObject &regarding, const QString &type, const QString &reason, const QString &message,
                           const QString &component, Api api, const QString &action, const QString &host, const QString &fieldPath)
{
    const QJsonObject ref = reference(regarding, fieldPath);
    const QString ns = ref.value(QStringLiteral("namespace")).toString().isEmpty() ? QStringLiteral("default")
                                                                                   : ref.value(QStringLiteral("namespace")).toString();
    QString text = message;
    if (text.size() > MaxMessage) {
        text = text.left(MaxMessage - 4) + QStringLiteral(" ...");
    }
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const QString seconds = now.toString(Qt::ISODate);
    const QString micro = now.toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss.zzz000Z"));
    const QString key = QStringList{component, ref.value(QStringLiteral("uid")).toString(), ref.value(QStringLiteral("name")).toString(),
                                    fieldPath, type, reason, text}.join(u'\x1f');

    if (const auto known = m_names.constFind(key); known != m_names.cend()) {
        const ObjectPtr updated = m_store->modify(eventType(), ns, *known, [&](QJsonObject &event) {
            if (api == Api::Legacy) {
                event.insert(QStringLiteral("count"), event.value(QStringLiteral("count")).toInt(1) + 1);
                event.insert(QStringLiteral("lastTimestamp"), seconds);
            } else {
                const QJsonObject series = event.value(QStringLiteral("series")).toObject();
                event.insert(QStringLiteral("series"), QJsonObject{{QStringLiteral("count"), series.value(QStringLiteral("count")).toInt(1) + 1},
                                                                   {QStringLiteral("lastObservedTime"), micro}});
            }
            return true;
        });
        if (updated) {
            return;
        }
    }

    const QString name = ref.value(QStringLiteral("name")).toString() + u'.'
        + QString::number(static_cast<qulonglong>(now.toMSecsSinceEpoch()) * 1000000ULL + static_cast<qulonglong>(m_names.size()), 16);
    QJsonObject event{{QStringLiteral("apiVersion"), QStringLiteral("v1")},
                      {QStringLiteral("kind"), QStringLiteral("Event")},
                      {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("namespace"), ns}}},
                      {QStringLiteral("involvedObject"), ref},
                      {QStringLiteral("reason"), reason},
                      {QStringLiteral("message"), text},
                      {QStringLiteral("type"), type}};
    if (api == Api::Legacy) {
        QJsonObject source{{QStringLiteral("component"), component}};
        if (!host.isEmpty()) {
            source.insert(QStringLiteral("host"), host);
        }
        event.insert(QStringLiteral("source"), source);
        event.insert(QStringLiteral("firstTimestamp"), seconds);
        event.insert(QStringLiteral("lastTimestamp"), seconds);
        event.insert(QStringLiteral("count"), 1);
        event.insert(QStringLiteral("eventTime"), QJsonValue::Null);
        event.insert(QStringLiteral("reportingComponent"), QString());
        event.insert(QStringLiteral("reportingInstance"), QString());
    } else {
        event.insert(QStringLiteral("eventTime"), micro);
        event.insert(QStringLiteral("firstTimestamp"), QJsonValue::Null);
        event.insert(QStringLiteral("lastTimestamp"), QJsonValue::Null);
        event.insert(QStringLiteral("reportingComponent"), component);
        event.insert(QStringLiteral("reportingInstance"), host.isEmpty() ? QString(component + QStringLiteral("-sandbox")) : host);
        event.insert(QStringLiteral("source"), QJsonObject());
        if (!action.isEmpty()) {
            event.insert(QStringLiteral("action"), action);
        }
    }
    if (std::holds_alternative<ObjectPtr>(m_store->create(eventType(), event))) {
        m_names.insert(key, name);
    }
}

} // namespace Starforge::Sandbox
