#pragma once

// The sandbox's etcd: every object by storage, namespace and name, one resourceVersion counter
// for the whole cluster, and a bounded history of changes that watches resume from. Objects are
// immutable once stored and shared by pointer, so lists and watch replays cost no copies; each
// keeps its compact JSON so a 50,000-pod list is a concatenation, not a serialisation.

#include "core/util/result.h"

#include <QByteArray>
#include <QDateTime>
#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QString>

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <variant>
#include <memory>
#include <vector>

namespace Starforge::Sandbox {

struct ResourceType;

struct StoredObject
{
    QJsonObject object;  // with apiVersion and kind
    QByteArray body;     // compact JSON without apiVersion/kind, leading '{' removed
    quint64 resourceVersion = 0;
    QString storage;
    QString ns;
    QString name;
    QString uid;

    // The object as a list item (no kind for built-in types) or with apiVersion/kind.
    QByteArray json(bool withTypeMeta) const;
};
using ObjectPtr = std::shared_ptr<const StoredObject>;

enum class ChangeType { Added, Modified, Deleted };

struct Change
{
    ChangeType type = ChangeType::Added;
    quint64 resourceVersion = 0;
    QString storage;
    ObjectPtr object;    // the new state; for Deleted the last state
    ObjectPtr previous;  // the state before a Modified or Deleted, for selector transitions
};

struct StoreError
{
    enum class Kind { NotFound, AlreadyExists, Conflict, Invalid };
    Kind kind;
    QString message;
};

class ObjectStore final : public QObject
{
    Q_OBJECT
public:
    explicit ObjectStore(QObject *parent = nullptr);

    quint64 currentResourceVersion() const { return m_resourceVersion; }
    // Watches from a resourceVersion below this are answered 410: the changes after it are gone.
    quint64 oldestWatchableResourceVersion() const;

    // Sets uid, creationTimestamp, resourceVersion (and generation for custom resources).
    // Fails with AlreadyExists when ns/name is taken.
    std::variant<ObjectPtr, StoreError> create(const ResourceType &type, QJsonObject object);
    // Replaces the object; when expectedResourceVersion is set it must match (optimistic lock).
    std::variant<ObjectPtr, StoreError> update(const ResourceType &type, QJsonObject object,
                                               std::optional<quint64> expectedResourceVersion = std::nullopt);
    // Read-modify-write for controllers: mutate gets the current object; returning false skips.
    ObjectPtr modify(const ResourceType &type, const QString &ns, const QString &name,
                     const std::function<bool(QJsonObject &)> &mutate);
    // Removes the object and, unless orphaning, queues its dependents (ownerReferences) for
    // deletion as the garbage collector does with background propagation. An object with
    // finalizers is not removed but marked (deletionTimestamp, deletionGracePeriodSeconds 0,
    // generation + 1) and returned as marked; it goes when an update removes its last finalizer,
    // and that update returns its last state. A deleting object takes no new finalizers (Invalid).
    std::variant<ObjectPtr, StoreError> remove(const ResourceType &type, const QString &ns, const QString &name,
                                               bool orphanDependents = false);

    ObjectPtr get(const QString &storage, const QString &ns, const QString &name) const;
    // Objects of a storage in key order; ns empty means every namespace. Starts after afterKey.
    std::vector<ObjectPtr> list(const QString &storage, const QString &ns = {}, const QString &afterKey = {}) const;
    // Visits objects as list() returns them, until visit returns false; no copy of the range.
    void visit(const QString &storage, const QString &ns, const QString &afterKey,
               const std::function<bool(const ObjectPtr &)> &visit) const;
    qsizetype count(const QString &storage) const;
    static QString keyOf(const QString &ns, const QString &name) { return ns + u'/' + name; }

    // The changes to a storage after resourceVersion, oldest first.
    std::vector<Change> changesSince(const QString &storage, quint64 resourceVersion) const;

    // History retention (the fault "expire resourceVersions" drops it all at once).
    void setHistoryLimit(std::size_t changes) { m_historyLimit = changes; }
    void expireHistory();

Q_SIGNALS:
    void changed(const Starforge::Sandbox::Change &change);

private:
    ObjectPtr store(const ResourceType &type, QJsonObject object, quint64 rv);
    void record(Change change);
    void collectGarbage(const QString &ownerUid);

    quint64 m_resourceVersion = 1000;
    QHash<QString, std::map<QString, ObjectPtr>> m_objects;
    std::deque<Change> m_history;
    std::size_t m_historyLimit = 200000;
    quint64 m_compactedThrough = 0;
};

} // namespace Starforge::Sandbox
