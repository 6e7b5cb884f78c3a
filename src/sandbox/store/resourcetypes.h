#pragma once

// The resource types the sandbox serves: what discovery lists, how paths map to storage, which
// field labels each type can be selected by, and how an object is named in messages.

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

namespace Starforge::Sandbox {

struct ResourceType
{
    QString group;      // "" for the core group
    QString version;
    QString plural;
    QString singular;
    QString kind;
    bool namespaced = true;
    QStringList shortNames;
    QStringList verbs;
    QStringList categories;
    QStringList subresources; // "status", "log", "proxy"
    // Field labels beyond metadata.name and metadata.namespace.
    QStringList fieldLabels;
    // Built-in types: list items carry no kind/apiVersion, as on a real API server.
    bool builtin = true;
    // Where objects live; events.k8s.io/v1 events are core events seen through a conversion.
    QString storage;
    std::function<QJsonObject(const QJsonObject &)> fromStorage;
    std::function<QJsonObject(const QJsonObject &)> toStorage;

    QString apiVersion() const { return group.isEmpty() ? version : group + u'/' + version; }
    // "pods", "rayjobs.ray.io": the form Status messages use.
    QString qualifiedName() const { return group.isEmpty() ? plural : plural + u'.' + group; }
    bool converts() const { return static_cast<bool>(fromStorage); }
};

class ResourceTypes
{
public:
    static const QList<ResourceType> &all();
    static const ResourceType *find(const QString &group, const QString &version, const QString &plural);
    static const ResourceType *byKind(const QString &apiVersion, const QString &kind);
    // The type objects of this storage are kept as (the storage's own, unconverted type).
    static const ResourceType *storageType(const QString &storage);
    // Group-versions in discovery order ("v1" first, then "group/version").
    static QStringList groupVersions();

    // A field label's value for an object of this type, in the type's own shape; nullopt when
    // the type does not support the label (the caller answers 400).
    static std::optional<QString> fieldValue(const ResourceType &type, const QJsonObject &object, const QString &label);
    // The API server's defaulting on create: a pod container's requests default to its limits.
    static void applyDefaults(const ResourceType &type, QJsonObject &object);
};

// events.k8s.io/v1 <-> core/v1 Event, field by field as the API server converts them.
QJsonObject coreEventToEventsV1(const QJsonObject &core);
QJsonObject eventsV1ToCoreEvent(const QJsonObject &events);

} // namespace Starforge::Sandbox
