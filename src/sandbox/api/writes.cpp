// The API server's writes: create (generateName, name checks), update and the status
// subresource, JSON merge patch, delete with propagationPolicy and preconditions, and the admission hook they all
// pass through before the store sees the object.

#include "sandbox/api/apiserver.h"

#include "sandbox/api/status.h"
#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"
#include "sandbox/util/names.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

namespace Starforge::Sandbox {

namespace {

// The API server's object-name checks, with its texts: DNS-1123 labels for namespaces,
// subdomains for everything else.
QString nameProblem(const QString &name, bool label)
{
    static const QRegularExpression subdomain(QStringLiteral("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"));
    static const QRegularExpression labelRe(QStringLiteral("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"));
    const int max = label ? 63 : 253;
    if (name.size() > max) {
        return QStringLiteral("must be no more than %1 characters").arg(max);
    }
    if ((label ? labelRe : subdomain).match(name).hasMatch()) {
        return {};
    }
    return label ? QStringLiteral("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
                                  "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
                                  "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
                 : QStringLiteral("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                                  "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                                  "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
}

QJsonValue mergePatch(const QJsonValue &target, const QJsonValue &patch)
{
    if (!patch.isObject()) {
        return patch;
    }
    QJsonObject out = target.isObject() ? target.toObject() : QJsonObject();
    const QJsonObject p = patch.toObject();
    for (auto it = p.begin(); it != p.end(); ++it) {
        if (it.value().isNull()) {
            out.remove(it.key());
        } else {
            out.insert(it.key(), mergePatch(out.value(it.key()), it.value()));
        }
    }
    return out;
}

// The store's only refusal of an update that exists is a new finalizer on a deleting object:
// "metadata.finalizers: Forbidden: …" as a 422 on the object's kind.
QJsonObject finalizerRefusal(const ResourceType &type, const QString &name, const QString &storeMessage)
{
    const QString prefix = QStringLiteral("metadata.finalizers: ");
    const QString message = storeMessage.startsWith(prefix) ? storeMessage.mid(prefix.size()) : storeMessage;
    return Status::invalid(type.kind, type.group, name,
                           {Status::cause(QStringLiteral("FieldValueForbidden"), QStringLiteral("metadata.finalizers"), message)});
}

} // namespace

void ApiServer::create(const RequestInfo &info, const Http::Request &request, Http::Responder *responder)
{
    const ResourceType &type = *info.type;
    if (!info.name.isEmpty()) {
        respondStatus(responder, Status::methodNotAllowed());
        return;
    }
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(request.body, &parseError);
    if (!doc.isObject()) {
        respondStatus(responder, Status::badRequest(QStringLiteral("couldn't get version/kind; json parse error: %1")
                                                        .arg(parseError.error == QJsonParseError::NoError
                                                                 ? QStringLiteral("the body is not a JSON object")
                                                                 : parseError.errorString())));
        return;
    }
    QJsonObject object = doc.object();
    const QString apiVersion = object.value(QStringLiteral("apiVersion")).toString();
    const QString kind = object.value(QStringLiteral("kind")).toString();
    if (apiVersion.isEmpty() || kind.isEmpty()) {
        respondStatus(responder, Status::badRequest(QStringLiteral("Object 'Kind' is missing in '%1'")
                                                        .arg(QString::fromUtf8(request.body.left(200)))));
        return;
    }
    if (apiVersion != type.apiVersion() || kind != type.kind) {
        respondStatus(responder, Status::badRequest(QStringLiteral("the API version in the data (%1) does not match the expected API version (%2)")
                                                        .arg(apiVersion, type.apiVersion())));
        return;
    }
    QJsonObject metadata = object.value(QStringLiteral("metadata")).toObject();
    const QString bodyNs = metadata.value(QStringLiteral("namespace")).toString();
    if (type.namespaced) {
        if (!bodyNs.isEmpty() && bodyNs != info.ns) {
            respondStatus(responder, Status::badRequest(QStringLiteral("the namespace of the provided object does not match the namespace sent on the request")));
            return;
        }
        metadata.insert(QStringLiteral("namespace"), info.ns);
        const ResourceType *nsType = ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("namespaces"));
        if (!m_store->get(nsType->storage, QString(), info.ns)) {
            respondStatus(responder, Status::notFound(QStringLiteral("namespaces"), info.ns, QString(), QStringLiteral("namespaces")));
            return;
        }
    }
    QString name = metadata.value(QStringLiteral("name")).toString();
    const QString generateName = metadata.value(QStringLiteral("generateName")).toString();
    if (name.isEmpty() && !generateName.isEmpty()) {
        name = generateName + randomSuffix(m_random, 5);
        metadata.insert(QStringLiteral("name"), name);
    }
    QJsonArray causes;
    if (name.isEmpty()) {
        causes.append(Status::cause(QStringLiteral("FieldValueRequired"), QStringLiteral("metadata.name"),
                                    QStringLiteral("Required value: name or generateName is required")));
    } else {
        const QString problem = nameProblem(name, type.plural == QLatin1String("namespaces"));
        if (!problem.isEmpty()) {
            causes.append(Status::cause(QStringLiteral("FieldValueInvalid"), QStringLiteral("metadata.name"),
                                        QStringLiteral("Invalid value: \"%1\": %2").arg(name, problem)));
        }
    }
    if (!causes.isEmpty()) {
        respondStatus(responder, Status::invalid(type.kind, type.group, name, causes));
        return;
    }
    object.insert(QStringLiteral("metadata"), metadata);
    if (!type.builtin && type.subresources.contains(QStringLiteral("status"))) {
        object.remove(QStringLiteral("status")); // the status subresource owns it
    }
    Http::Headers headers;
    if (!admit(type, object, request, responder, headers)) {
        return;
    }
    if (type.converts()) {
        object = type.toStorage(object);
    }
    const ResourceType *storageType = type.converts() ? ResourceTypes::storageType(type.storage) : &type;
    auto created = m_store->create(*storageType, object);
    if (std::holds_alternative<StoreError>(created)) {
        // The store's only refusal of a checked create is a taken name.
        respondStatus(responder, Status::make(409, QStringLiteral("AlreadyExists"),
                                              QStringLiteral("%1 \"%2\" already exists").arg(type.qualifiedName(), name),
                                              Status::details(name, type.group, type.plural)));
        return;
    }
    const ObjectPtr stored = std::get<ObjectPtr>(created);
    if (type.converts()) {
        respondJson(responder, 201, type.fromStorage(stored->object));
        return;
    }
    responder->respond(201, JsonContentType, stored->json(true) + '\n', headers);
}

void ApiServer::update(const RequestInfo &info, const Http::Request &request, Http::Responder *responder)
{
    const ResourceType &type = *info.type;
    const QJsonDocument doc = QJsonDocument::fromJson(request.body);
    if (!doc.isObject()) {
        respondStatus(responder, Status::badRequest(QStringLiteral("couldn't get version/kind; json parse error: the body is not a JSON object")));
        return;
    }
    QJsonObject object = doc.object();
    QJsonObject metadata = object.value(QStringLiteral("metadata")).toObject();
    if (metadata.value(QStringLiteral("name")).toString() != info.name) {
        respondStatus(responder, Status::badRequest(QStringLiteral("the name of the object (%1) does not match the name on the URL (%2)")
                                                        .arg(metadata.value(QStringLiteral("name")).toString(), info.name)));
        return;
    }
    const ObjectPtr current = m_store->get(type.storage, info.ns, info.name);
    if (!current) {
        respondStatus(responder, Status::notFound(type.qualifiedName(), info.name, type.group, type.plural));
        return;
    }
    if (info.subresource == QLatin1String("status")) {
        // The status subresource changes status only; the main resource ignores status changes of CRDs.
        QJsonObject merged = current->object;
        merged.insert(QStringLiteral("status"), object.value(QStringLiteral("status")));
        object = merged;
    } else if (!type.builtin) {
        object.insert(QStringLiteral("status"), current->object.value(QStringLiteral("status")));
    }
    metadata.insert(QStringLiteral("namespace"), info.ns);
    object.insert(QStringLiteral("metadata"), metadata);
    std::optional<quint64> expected;
    if (const QString rv = metadata.value(QStringLiteral("resourceVersion")).toString(); !rv.isEmpty()) {
        expected = rv.toULongLong();
    }
    Http::Headers headers;
    if (!admit(type, object, request, responder, headers)) {
        return;
    }
    const ResourceType *storageType = type.converts() ? ResourceTypes::storageType(type.storage) : &type;
    auto result = m_store->update(*storageType, type.converts() ? type.toStorage(object) : object, expected);
    if (auto *error = std::get_if<StoreError>(&result)) {
        respondStatus(responder, error->kind == StoreError::Kind::Conflict
                                     ? Status::make(409, QStringLiteral("Conflict"), error->message,
                                                    Status::details(info.name, type.group, type.plural))
                                 : error->kind == StoreError::Kind::Invalid ? finalizerRefusal(type, info.name, error->message)
                                                                            : Status::notFound(type.qualifiedName(), info.name, type.group, type.plural));
        return;
    }
    responder->respond(200, JsonContentType, std::get<ObjectPtr>(result)->json(true) + '\n', headers);
}

void ApiServer::patch(const RequestInfo &info, const Http::Request &request, Http::Responder *responder)
{
    const ResourceType &type = *info.type;
    const QByteArray contentType = request.header("content-type").split(';').first().trimmed();
    if (contentType != "application/merge-patch+json" && contentType != "application/strategic-merge-patch+json") {
        respondStatus(responder, Status::make(415, QStringLiteral("UnsupportedMediaType"),
                                              QStringLiteral("the body of the request was in an unknown format - accepted media types include: "
                                                             "application/merge-patch+json, application/strategic-merge-patch+json")));
        return;
    }
    const QJsonDocument doc = QJsonDocument::fromJson(request.body);
    if (!doc.isObject()) {
        respondStatus(responder, Status::badRequest(QStringLiteral("error decoding patch: the body is not a JSON object")));
        return;
    }
    const ObjectPtr current = m_store->get(type.storage, info.ns, info.name);
    if (!current) {
        respondStatus(responder, Status::notFound(type.qualifiedName(), info.name, type.group, type.plural));
        return;
    }
    const QJsonObject currentShape = type.converts() ? type.fromStorage(current->object) : current->object;
    QJsonObject patched = mergePatch(currentShape, doc.object()).toObject();
    // The URL names the object: a patch cannot move it to another name or namespace.
    QJsonObject patchedMeta = patched.value(QStringLiteral("metadata")).toObject();
    patchedMeta.insert(QStringLiteral("name"), info.name);
    if (type.namespaced) patchedMeta.insert(QStringLiteral("namespace"), info.ns);
    patched.insert(QStringLiteral("metadata"), patchedMeta);
    patched.insert(QStringLiteral("apiVersion"), type.apiVersion());
    patched.insert(QStringLiteral("kind"), type.kind);
    if (info.subresource == QLatin1String("status")) {
        QJsonObject merged = currentShape;
        merged.insert(QStringLiteral("status"), patched.value(QStringLiteral("status")));
        patched = merged;
    } else if (!type.builtin) {
        patched.insert(QStringLiteral("status"), current->object.value(QStringLiteral("status")));
    }
    Http::Headers headers;
    if (!admit(type, patched, request, responder, headers)) {
        return;
    }
    const ResourceType *storageType = type.converts() ? ResourceTypes::storageType(type.storage) : &type;
    auto result = m_store->update(*storageType, type.converts() ? type.toStorage(patched) : patched);
    if (auto *error = std::get_if<StoreError>(&result)) {
        respondStatus(responder, error->kind == StoreError::Kind::Invalid ? finalizerRefusal(type, info.name, error->message)
                                                                          : Status::notFound(type.qualifiedName(), info.name, type.group, type.plural));
        return;
    }
    responder->respond(200, JsonContentType, std::get<ObjectPtr>(result)->json(true) + '\n', headers);
}

void ApiServer::remove(const RequestInfo &info, const Http::Request &request, Http::Responder *responder)
{
    // In kube-apiserver's order: the object must exist (404), then the options must be valid
    // (422), then the preconditions must hold (409), and only then is it deleted.
    const ResourceType &type = *info.type;
    const ResourceType *storageType = type.converts() ? ResourceTypes::storageType(type.storage) : &type;
    const ObjectPtr current = m_store->get(storageType->storage, info.ns, info.name);
    if (!current) {
        respondStatus(responder, Status::notFound(type.qualifiedName(), info.name, type.group, type.plural));
        return;
    }
    QString policy = request.queryValue(QStringLiteral("propagationPolicy"));
    QJsonObject preconditions;
    if (!request.body.isEmpty()) {
        const QJsonObject options = QJsonDocument::fromJson(request.body).object();
        policy = options.value(QStringLiteral("propagationPolicy")).toString(policy);
        if (options.value(QStringLiteral("orphanDependents")).toBool()) {
            policy = QStringLiteral("Orphan");
        }
        preconditions = options.value(QStringLiteral("preconditions")).toObject();
    }
    if (!policy.isEmpty() && policy != QLatin1String("Orphan") && policy != QLatin1String("Background")
        && policy != QLatin1String("Foreground")) {
        respondStatus(responder, Status::invalid(QStringLiteral("DeleteOptions"), QString(), QString(),
                                                 {Status::cause(QStringLiteral("FieldValueNotSupported"), QStringLiteral("propagationPolicy"),
                                                                QStringLiteral("Unsupported value: \"%1\": supported values: \"Foreground\", \"Background\", \"Orphan\"").arg(policy))}));
        return;
    }
    // DeleteOptions.preconditions: a uid keeps a newer object of the same name (deleted and made
    // again since the client looked) from being deleted in the old one's place; a
    // resourceVersion keeps a changed one. A field given as null is no precondition.
    // docs/kubernetes-facts.md, "Delete preconditions", has the texts and where they come from.
    const QJsonValue wantUid = preconditions.value(QStringLiteral("uid"));
    const QJsonValue wantVersion = preconditions.value(QStringLiteral("resourceVersion"));
    const QString haveVersion = QString::number(current->resourceVersion);
    QString failed;
    if (type.plural == QLatin1String("namespaces") && wantUid.isString() && wantUid.toString() != current->uid) {
        // A namespace's delete is its own and checks the uid with the storage layer's text.
        respondStatus(responder, Status::make(409, QStringLiteral("Conflict"),
                                              QStringLiteral("Operation cannot be fulfilled on namespaces \"%1\": Precondition failed: UID in "
                                                             "precondition: %2, UID in object meta: %3").arg(info.name, wantUid.toString(), current->uid),
                                              Status::details(info.name, QString(), type.plural)));
        return;
    }
    if (wantUid.isString() && wantUid.toString() != current->uid) {
        failed = QStringLiteral("the UID in the precondition (%1) does not match the UID in record (%2). "
                                "The object might have been deleted and then recreated").arg(wantUid.toString(), current->uid);
    } else if (wantVersion.isString() && wantVersion.toString() != haveVersion) {
        failed = QStringLiteral("the ResourceVersion in the precondition (%1) does not match the ResourceVersion in record (%2). "
                                "The object might have been modified").arg(wantVersion.toString(), haveVersion);
    }
    if (!failed.isEmpty()) {
        // Named by kind, not by resource: the check works on the decoded object's kind.
        const QString kindName = type.group.isEmpty() ? type.kind : type.kind + u'.' + type.group;
        respondStatus(responder, Status::make(409, QStringLiteral("Conflict"),
                                              QStringLiteral("Operation cannot be fulfilled on %1 \"%2\": %3").arg(kindName, info.name, failed),
                                              Status::details(info.name, type.group, type.kind)));
        return;
    }
    auto result = m_store->remove(*storageType, info.ns, info.name, policy == QLatin1String("Orphan"));
    if (std::holds_alternative<StoreError>(result)) {
        respondStatus(responder, Status::notFound(type.qualifiedName(), info.name, type.group, type.plural));
        return;
    }
    const ObjectPtr deleted = std::get<ObjectPtr>(result);
    if (type.converts()) {
        respondJson(responder, 200, type.fromStorage(deleted->object));
        return;
    }
    responder->respond(200, JsonContentType, deleted->json(true) + '\n');
}

bool ApiServer::admit(const ResourceType &type, QJsonObject &object, const Http::Request &request, Http::Responder *responder,
                      Http::Headers &headers)
{
    const auto admission = m_admission.constFind(type.storage);
    if (admission == m_admission.cend()) {
        return true;
    }
    QString validation = request.queryValue(QStringLiteral("fieldValidation"));
    if (validation.isEmpty()) {
        validation = QStringLiteral("Warn");
    }
    if (validation != QLatin1String("Strict") && validation != QLatin1String("Warn") && validation != QLatin1String("Ignore")) {
        respondStatus(responder, Status::badRequest(QStringLiteral("fieldValidation must be one of \"Ignore\", \"Warn\", or \"Strict\", not \"%1\"").arg(validation)));
        return false;
    }
    QStringList warnings;
    if (const auto status = (*admission)(type, object, validation, warnings)) {
        respondStatus(responder, *status);
        return false;
    }
    for (const QString &w : warnings) {
        headers.append({"Warning", "299 - \"" + w.toUtf8().replace('"', "\\\"") + '"'});
    }
    return true;
}

} // namespace Starforge::Sandbox
