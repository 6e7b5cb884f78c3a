#include "sandbox/store/objectstore.h"

#include "sandbox/store/resourcetypes.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTimer>
#include <QUuid>

namespace Starforge::Sandbox {

namespace {

QString nowRfc3339()
{
    return QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
}

} // namespace

QByteArray StoredObject::json(bool withTypeMeta) const
{
    QByteArray out;
    if (withTypeMeta) {
        const QByteArray apiVersion = object.value(QStringLiteral("apiVersion")).toString().toUtf8();
        const QByteArray kind = object.value(QStringLiteral("kind")).toString().toUtf8();
        out.reserve(body.size() + apiVersion.size() + kind.size() + 32);
        out += "{\"apiVersion\":\"" + apiVersion + "\",\"kind\":\"" + kind + "\",";
    } else {
        out.reserve(body.size() + 1);
        out += '{';
    }
    out += body;
    return out;
}

ObjectStore::ObjectStore(QObject *parent) : QObject(parent) {}

quint64 ObjectStore::oldestWatchableResourceVersion() const
{
    return m_compactedThrough;
}

ObjectPtr ObjectStore::store(const ResourceType &type, QJsonObject object, quint64 rv)
{
    QJsonObject metadata = object.value(QStringLiteral("metadata")).toObject();
    metadata.insert(QStringLiteral("resourceVersion"), QString::number(rv));
    object.insert(QStringLiteral("metadata"), metadata);
    object.insert(QStringLiteral("apiVersion"), type.apiVersion());
    object.insert(QStringLiteral("kind"), type.kind);

    auto stored = std::make_shared<StoredObject>();
    QJsonObject bare = object;
    bare.remove(QStringLiteral("apiVersion"));
    bare.remove(QStringLiteral("kind"));
    stored->body = QJsonDocument(bare).toJson(QJsonDocument::Compact).mid(1);
    stored->object = std::move(object);
    stored->resourceVersion = rv;
    stored->storage = type.storage;
    stored->ns = metadata.value(QStringLiteral("namespace")).toString();
    stored->name = metadata.value(QStringLiteral("name")).toString();
    stored->uid = metadata.value(QStringLiteral("uid")).toString();
    return stored;
}

std::variant<ObjectPtr, StoreError> ObjectStore::create(const ResourceType &type, QJsonObject object)
{
    QJsonObject metadata = object.value(QStringLiteral("metadata")).toObject();
    const QString ns = type.namespaced ? metadata.value(QStringLiteral("namespace")).toString() : QString();
    const QString name = metadata.value(QStringLiteral("name")).toString();
    auto &objects = m_objects[type.storage];
    if (objects.count(keyOf(ns, name))) {
        return StoreError{StoreError::Kind::AlreadyExists,
                          QStringLiteral("%1 \"%2\" already exists").arg(type.qualifiedName(), name)};
    }
    if (!type.namespaced) {
        metadata.remove(QStringLiteral("namespace"));
    }
    metadata.insert(QStringLiteral("uid"), QUuid::createUuid().toString(QUuid::WithoutBraces));
    metadata.insert(QStringLiteral("creationTimestamp"), nowRfc3339());
    if (!type.builtin || type.storage == QLatin1String("jobs.batch")) {
        metadata.insert(QStringLiteral("generation"), 1);
    }
    metadata.remove(QStringLiteral("deletionTimestamp"));
    metadata.remove(QStringLiteral("deletionGracePeriodSeconds"));
    object.insert(QStringLiteral("metadata"), metadata);
    ResourceTypes::applyDefaults(type, object);
    ObjectPtr stored = store(type, std::move(object), ++m_resourceVersion);
    objects[keyOf(ns, name)] = stored;
    record({ChangeType::Added, stored->resourceVersion, type.storage, stored, nullptr});
    return stored;
}

std::variant<ObjectPtr, StoreError> ObjectStore::update(const ResourceType &type, QJsonObject object,
                                                        std::optional<quint64> expectedResourceVersion)
{
    QJsonObject metadata = object.value(QStringLiteral("metadata")).toObject();
    const QString ns = type.namespaced ? metadata.value(QStringLiteral("namespace")).toString() : QString();
    const QString name = metadata.value(QStringLiteral("name")).toString();
    auto &objects = m_objects[type.storage];
    const auto it = objects.find(keyOf(ns, name));
    if (it == objects.end()) {
        return StoreError{StoreError::Kind::NotFound, QStringLiteral("%1 \"%2\" not found").arg(type.qualifiedName(), name)};
    }
    const ObjectPtr previous = it->second;
    if (expectedResourceVersion && *expectedResourceVersion != previous->resourceVersion) {
        return StoreError{StoreError::Kind::Conflict,
                          QStringLiteral("Operation cannot be fulfilled on %1 \"%2\": the object has been modified; "
                                         "please apply your changes to the latest version and try again")
                              .arg(type.qualifiedName(), name)};
    }
    // Identity, creation and a deletion under way stay as stored, whatever the client sent.
    const QJsonObject oldMeta = previous->object.value(QStringLiteral("metadata")).toObject();
    for (const char *key : {"uid", "creationTimestamp", "namespace", "name", "deletionTimestamp", "deletionGracePeriodSeconds"}) {
        const QString k = QString::fromLatin1(key);
        if (oldMeta.contains(k)) {
            metadata.insert(k, oldMeta.value(k));
        } else {
            metadata.remove(k);
        }
    }
    const bool deleting = oldMeta.contains(QStringLiteral("deletionTimestamp"));
    if (deleting) {
        // A deleting object's finalizers can only be removed (docs/kubernetes-facts.md, "Deletion
        // and finalizers").
        const QJsonArray had = oldMeta.value(QStringLiteral("finalizers")).toArray();
        for (const QJsonValue &f : metadata.value(QStringLiteral("finalizers")).toArray()) {
            if (!had.contains(f)) {
                return StoreError{StoreError::Kind::Invalid,
                                  QStringLiteral("metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, "
                                                 "found new finalizers []string{\"%1\"}").arg(f.toString())};
            }
        }
    }
    if (oldMeta.contains(QStringLiteral("generation"))) {
        const QJsonValue oldSpec = previous->object.value(QStringLiteral("spec"));
        const qint64 generation = oldMeta.value(QStringLiteral("generation")).toInteger();
        metadata.insert(QStringLiteral("generation"), oldSpec == object.value(QStringLiteral("spec")) ? generation : generation + 1);
    }
    object.insert(QStringLiteral("metadata"), metadata);
    if (deleting && metadata.value(QStringLiteral("finalizers")).toArray().isEmpty()) {
        // The last finalizer went: the object goes now, with this last state.
        objects.erase(it);
        ObjectPtr deleted = store(type, std::move(object), ++m_resourceVersion);
        record({ChangeType::Deleted, deleted->resourceVersion, type.storage, deleted, previous});
        const QString uid = previous->uid;
        QTimer::singleShot(0, this, [this, uid] { collectGarbage(uid); });
        return deleted;
    }
    ObjectPtr stored = store(type, std::move(object), ++m_resourceVersion);
    it->second = stored;
    record({ChangeType::Modified, stored->resourceVersion, type.storage, stored, previous});
    return stored;
}

ObjectPtr ObjectStore::modify(const ResourceType &type, const QString &ns, const QString &name,
                              const std::function<bool(QJsonObject &)> &mutate)
{
    const ObjectPtr current = get(type.storage, ns, name);
    if (!current) {
        return nullptr;
    }
    QJsonObject object = current->object;
    if (!mutate(object) || object == current->object) {
        return current;
    }
    auto result = update(type, std::move(object));
    return std::holds_alternative<ObjectPtr>(result) ? std::get<ObjectPtr>(result) : nullptr;
}

std::variant<ObjectPtr, StoreError> ObjectStore::remove(const ResourceType &type, const QString &ns, const QString &name,
                                                        bool orphanDependents)
{
    auto &objects = m_objects[type.storage];
    const auto it = objects.find(keyOf(type.namespaced ? ns : QString(), name));
    if (it == objects.end()) {
        return StoreError{StoreError::Kind::NotFound, QStringLiteral("%1 \"%2\" not found").arg(type.qualifiedName(), name)};
    }
    const ObjectPtr previous = it->second;
    const QJsonObject previousMeta = previous->object.value(QStringLiteral("metadata")).toObject();
    if (!previousMeta.value(QStringLiteral("finalizers")).toArray().isEmpty()) {
        // Finalizers hold the object: it is marked and stays visible until they are removed
        // (docs/kubernetes-facts.md, "Deletion and finalizers"). A second delete changes nothing.
        if (previousMeta.contains(QStringLiteral("deletionTimestamp"))) {
            return previous;
        }
        QJsonObject object = previous->object;
        QJsonObject meta = previousMeta;
        meta.insert(QStringLiteral("deletionTimestamp"), nowRfc3339());
        meta.insert(QStringLiteral("deletionGracePeriodSeconds"), 0);
        if (meta.contains(QStringLiteral("generation"))) {
            meta.insert(QStringLiteral("generation"), meta.value(QStringLiteral("generation")).toInteger() + 1);
        }
        object.insert(QStringLiteral("metadata"), meta);
        ObjectPtr marked = store(type, std::move(object), ++m_resourceVersion);
        it->second = marked;
        record({ChangeType::Modified, marked->resourceVersion, type.storage, marked, previous});
        return marked;
    }
    objects.erase(it);
    // The DELETED event carries the last state with a fresh resourceVersion, as etcd's delete does.
    QJsonObject last = previous->object;
    ObjectPtr deleted = store(type, std::move(last), ++m_resourceVersion);
    record({ChangeType::Deleted, deleted->resourceVersion, type.storage, deleted, previous});
    if (!orphanDependents) {
        const QString uid = previous->uid;
        QTimer::singleShot(0, this, [this, uid] { collectGarbage(uid); });
    }
    return deleted;
}

void ObjectStore::collectGarbage(const QString &ownerUid)
{
    struct Victim
    {
        QString storage, ns, name;
    };
    std::vector<Victim> victims;
    for (auto it = m_objects.cbegin(); it != m_objects.cend(); ++it) {
        for (const auto &[key, object] : it.value()) {
            const QJsonArray owners = object->object.value(QStringLiteral("metadata")).toObject()
                                          .value(QStringLiteral("ownerReferences")).toArray();
            for (const QJsonValue &owner : owners) {
                if (owner.toObject().value(QStringLiteral("uid")).toString() == ownerUid) {
                    victims.push_back({it.key(), object->ns, object->name});
                    break;
                }
            }
        }
    }
    for (const Victim &v : victims) {
        if (const ResourceType *type = ResourceTypes::storageType(v.storage)) {
            (void)remove(*type, v.ns, v.name);
        }
    }
}

ObjectPtr ObjectStore::get(const QString &storage, const QString &ns, const QString &name) const
{
    const auto objects = m_objects.constFind(storage);
    if (objects == m_objects.cend()) {
        return nullptr;
    }
    const auto it = objects->find(keyOf(ns, name));
    return it == objects->end() ? nullptr : it->second;
}

void ObjectStore::visit(const QString &storage, const QString &ns, const QString &afterKey,
                        const std::function<bool(const ObjectPtr &)> &visit) const
{
    const auto objects = m_objects.constFind(storage);
    if (objects == m_objects.cend()) {
        return;
    }
    auto it = afterKey.isEmpty() ? objects->begin() : objects->upper_bound(afterKey);
    if (!ns.isEmpty() && (afterKey.isEmpty() || afterKey < keyOf(ns, QString()))) {
        it = objects->lower_bound(keyOf(ns, QString()));
    }
    for (; it != objects->end(); ++it) {
        if (!ns.isEmpty() && it->second->ns != ns) {
            break;
        }
        if (!visit(it->second)) {
            break;
        }
    }
}

std::vector<ObjectPtr> ObjectStore::list(const QString &storage, const QString &ns, const QString &afterKey) const
{
    std::vector<ObjectPtr> out;
    visit(storage, ns, afterKey, [&out](const ObjectPtr &object) {
        out.push_back(object);
        return true;
    });
    return out;
}

qsizetype ObjectStore::count(const QString &storage) const
{
    const auto objects = m_objects.constFind(storage);
    return objects == m_objects.cend() ? 0 : static_cast<qsizetype>(objects->size());
}

std::vector<Change> ObjectStore::changesSince(const QString &storage, quint64 resourceVersion) const
{
    std::vector<Change> out;
    // History is ordered by resourceVersion: find the first newer change by binary search.
    auto it = std::upper_bound(m_history.begin(), m_history.end(), resourceVersion,
                               [](quint64 rv, const Change &c) { return rv < c.resourceVersion; });
    for (; it != m_history.end(); ++it) {
        if (it->storage == storage) {
            out.push_back(*it);
        }
    }
    return out;
}

void ObjectStore::expireHistory()
{
    m_history.clear();
    m_compactedThrough = m_resourceVersion;
}

void ObjectStore::record(Change change)
{
    m_history.push_back(change);
    while (m_history.size() > m_historyLimit) {
        m_compactedThrough = m_history.front().resourceVersion;
        m_history.pop_front();
    }
    Q_EMIT changed(change);
}

} // namespace Starforge::Sandbox
