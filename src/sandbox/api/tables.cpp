#include "sandbox/api/tables.h"

#include "sandbox/store/resourcetypes.h"

#include <QDateTime>

namespace Starforge::Sandbox::Tables {

namespace {

struct Column
{
    QString name;
    QString type;
    QString format;
    int priority = 0;
    QString description;
};

QJsonValue at(const QJsonObject &o, const QString &path)
{
    QJsonValue v = o;
    for (const QString &part : path.split(u'.', Qt::SkipEmptyParts)) {
        v = v.toObject().value(part);
    }
    return v;
}

QString str(const QJsonObject &o, const QString &path)
{
    return at(o, path).toString();
}

QString podStatus(const QJsonObject &pod)
{
    const QJsonObject status = pod.value(QStringLiteral("status")).toObject();
    QString reason = status.value(QStringLiteral("reason")).toString(status.value(QStringLiteral("phase")).toString());
    const QJsonArray inits = status.value(QStringLiteral("initContainerStatuses")).toArray();
    for (qsizetype i = 0; i < inits.size(); ++i) {
        const QJsonObject state = inits.at(i).toObject().value(QStringLiteral("state")).toObject();
        const QJsonObject terminated = state.value(QStringLiteral("terminated")).toObject();
        if (!terminated.isEmpty() && terminated.value(QStringLiteral("exitCode")).toInt() == 0) continue;
        if (!terminated.isEmpty()) return QStringLiteral("Init:") + terminated.value(QStringLiteral("reason")).toString(QStringLiteral("Error"));
        const QString waiting = state.value(QStringLiteral("waiting")).toObject().value(QStringLiteral("reason")).toString();
        if (!waiting.isEmpty() && waiting != QLatin1String("PodInitializing")) return QStringLiteral("Init:") + waiting;
        return QStringLiteral("Init:%1/%2").arg(i).arg(inits.size());
    }
    for (const QJsonValue &c : status.value(QStringLiteral("containerStatuses")).toArray()) {
        const QJsonObject state = c.toObject().value(QStringLiteral("state")).toObject();
        const QString waiting = state.value(QStringLiteral("waiting")).toObject().value(QStringLiteral("reason")).toString();
        if (!waiting.isEmpty() && waiting != QLatin1String("ContainerCreating")) return waiting;
        const QJsonObject terminated = state.value(QStringLiteral("terminated")).toObject();
        if (!terminated.isEmpty()) reason = terminated.value(QStringLiteral("reason")).toString(reason);
        if (waiting == QLatin1String("ContainerCreating")) reason = waiting;
    }
    if (pod.value(QStringLiteral("metadata")).toObject().contains(QStringLiteral("deletionTimestamp"))) return QStringLiteral("Terminating");
    return reason;
}

QString nodeStatus(const QJsonObject &node)
{
    QString ready = QStringLiteral("Unknown");
    for (const QJsonValue &c : at(node, QStringLiteral("status.conditions")).toArray()) {
        if (c.toObject().value(QStringLiteral("type")).toString() == QLatin1String("Ready")) {
            ready = c.toObject().value(QStringLiteral("status")).toString() == QLatin1String("True") ? QStringLiteral("Ready") : QStringLiteral("NotReady");
        }
    }
    return at(node, QStringLiteral("spec.unschedulable")).toBool() ? ready + QStringLiteral(",SchedulingDisabled") : ready;
}

QJsonValue cell(const QJsonValue &v)
{
    if (v.isUndefined() || v.isNull()) return QJsonValue(QJsonValue::Null);
    return v;
}

} // namespace

QString age(const QString &rfc3339)
{
    const QDateTime t = QDateTime::fromString(rfc3339, Qt::ISODate);
    if (!t.isValid()) return QStringLiteral("<unknown>");
    const qint64 s = t.secsTo(QDateTime::currentDateTimeUtc());
    if (s < -1) return QStringLiteral("<invalid>");
    if (s < 0) return QStringLiteral("0s");
    if (s < 120) return QStringLiteral("%1s").arg(s);
    const qint64 m = s / 60;
    if (m < 10) return s % 60 == 0 ? QStringLiteral("%1m").arg(m) : QStringLiteral("%1m%2s").arg(m).arg(s % 60);
    if (m < 180) return QStringLiteral("%1m").arg(m);
    const qint64 h = m / 60;
    if (h < 8) return m % 60 == 0 ? QStringLiteral("%1h").arg(h) : QStringLiteral("%1h%2m").arg(h).arg(m % 60);
    if (h < 48) return QStringLiteral("%1h").arg(h);
    const qint64 d = h / 24;
    if (h < 192) return h % 24 == 0 ? QStringLiteral("%1d").arg(d) : QStringLiteral("%1d%2h").arg(d).arg(h % 24);
    if (d < 730) return QStringLiteral("%1d").arg(d);
    return QStringLiteral("%1y").arg(d / 365);
}

QJsonObject build(const ResourceType &type, const std::vector<QJsonObject> &objects, const QJsonArray &printerColumns,
                  const QString &includeObject, const QJsonObject &listMetadata)
{
    const auto nameColumn = Column{QStringLiteral("Name"), QStringLiteral("string"), QStringLiteral("name"), 0,
                                   QStringLiteral("Name must be unique within a namespace.")};
    const auto ageColumn = Column{QStringLiteral("Age"), QStringLiteral("string"), {}, 0,
                                  QStringLiteral("CreationTimestamp is a timestamp representing the server time when this object was created.")};
    std::vector<Column> columns{nameColumn};
    std::function<QJsonArray(const QJsonObject &)> cells;
    const auto created = [](const QJsonObject &o) { return age(str(o, QStringLiteral("metadata.creationTimestamp"))); };
    const auto name = [](const QJsonObject &o) { return str(o, QStringLiteral("metadata.name")); };
    const QString plural = type.plural;

    if (!printerColumns.isEmpty()) {
        for (const QJsonValue &c : printerColumns) {
            const QJsonObject pc = c.toObject();
            columns.push_back(Column{pc.value(QStringLiteral("name")).toString(), pc.value(QStringLiteral("type")).toString(),
                                     pc.value(QStringLiteral("format")).toString(), pc.value(QStringLiteral("priority")).toInt(),
                                     pc.value(QStringLiteral("description")).toString()});
        }
        cells = [printerColumns, name](const QJsonObject &o) {
            QJsonArray row{name(o)};
            for (const QJsonValue &c : printerColumns) {
                const QJsonValue v = at(o, c.toObject().value(QStringLiteral("jsonPath")).toString().mid(1));
                // The API server prints "date" columns as an age, like every AGE column.
                row.append(c.toObject().value(QStringLiteral("type")).toString() == QLatin1String("date") && v.isString() ? QJsonValue(age(v.toString()))
                                                                                                                      : cell(v));
            }
            return row;
        };
    } else if (plural == QLatin1String("nodes")) {
        columns.insert(columns.end(), {Column{QStringLiteral("Status"), QStringLiteral("string"), {}, 0, QStringLiteral("The status of the node")},
                                       Column{QStringLiteral("Roles"), QStringLiteral("string"), {}, 0, QStringLiteral("The roles of the node")},
                                       ageColumn,
                                       Column{QStringLiteral("Version"), QStringLiteral("string"), {}, 0, QStringLiteral("Kubelet Version reported by the node.")},
                                       Column{QStringLiteral("Internal-IP"), QStringLiteral("string"), {}, 1, QStringLiteral("List of internal IPs for the node.")},
                                       Column{QStringLiteral("External-IP"), QStringLiteral("string"), {}, 1, QStringLiteral("List of external IPs for the node.")},
                                       Column{QStringLiteral("OS-Image"), QStringLiteral("string"), {}, 1, QStringLiteral("OS Image reported by the node.")},
                                       Column{QStringLiteral("Kernel-Version"), QStringLiteral("string"), {}, 1, QStringLiteral("Kernel Version reported by the node.")},
                                       Column{QStringLiteral("Container-Runtime"), QStringLiteral("string"), {}, 1, QStringLiteral("Container Runtime Version reported by the node.")}});
        cells = [=](const QJsonObject &o) {
            QString ip;
            for (const QJsonValue &a : at(o, QStringLiteral("status.addresses")).toArray()) {
                if (a.toObject().value(QStringLiteral("type")).toString() == QLatin1String("InternalIP")) ip = a.toObject().value(QStringLiteral("address")).toString();
            }
            return QJsonArray{name(o), nodeStatus(o), QStringLiteral("<none>"), created(o), str(o, QStringLiteral("status.nodeInfo.kubeletVersion")), ip,
                              QStringLiteral("<none>"), str(o, QStringLiteral("status.nodeInfo.osImage")), str(o, QStringLiteral("status.nodeInfo.kernelVersion")),
                              str(o, QStringLiteral("status.nodeInfo.containerRuntimeVersion"))};
        };
    } else if (plural == QLatin1String("pods")) {
        columns.insert(columns.end(), {Column{QStringLiteral("Ready"), QStringLiteral("string"), {}, 0, QStringLiteral("The aggregate readiness state of this pod for accepting traffic.")},
                                       Column{QStringLiteral("Status"), QStringLiteral("string"), {}, 0, QStringLiteral("The aggregate status of the containers in this pod.")},
                                       Column{QStringLiteral("Restarts"), QStringLiteral("string"), {}, 0, QStringLiteral("The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.")},
                                       ageColumn,
                                       Column{QStringLiteral("IP"), QStringLiteral("string"), {}, 1, QStringLiteral("The IP address assigned to the pod")},
                                       Column{QStringLiteral("Node"), QStringLiteral("string"), {}, 1, QStringLiteral("The name of the node this pod is assigned to")},
                                       Column{QStringLiteral("Nominated Node"), QStringLiteral("string"), {}, 1, QStringLiteral("The name of the node this pod is nominated to")},
                                       Column{QStringLiteral("Readiness Gates"), QStringLiteral("string"), {}, 1, QStringLiteral("The readiness gates of the pod")}});
        cells = [=](const QJsonObject &o) {
            const QJsonArray statuses = at(o, QStringLiteral("status.containerStatuses")).toArray();
            int ready = 0;
            int restarts = 0;
            for (const QJsonValue &c : statuses) {
                ready += c.toObject().value(QStringLiteral("ready")).toBool() ? 1 : 0;
                restarts += c.toObject().value(QStringLiteral("restartCount")).toInt();
            }
            const qsizetype total = at(o, QStringLiteral("spec.containers")).toArray().size();
            const QString node = str(o, QStringLiteral("spec.nodeName"));
            const QString ip = str(o, QStringLiteral("status.podIP"));
            return QJsonArray{name(o), QStringLiteral("%1/%2").arg(ready).arg(total), podStatus(o), QString::number(restarts), created(o),
                              ip.isEmpty() ? QStringLiteral("<none>") : ip, node.isEmpty() ? QStringLiteral("<none>") : node,
                              QStringLiteral("<none>"), QStringLiteral("<none>")};
        };
    } else if (plural == QLatin1String("events") && type.group.isEmpty()) {
        columns = {Column{QStringLiteral("Last Seen"), QStringLiteral("string"), {}, 0, QStringLiteral("Time when this Event was last seen")},
                   Column{QStringLiteral("Type"), QStringLiteral("string"), {}, 0, QStringLiteral("Type of this event (Normal, Warning), new types could be added in the future.")},
                   Column{QStringLiteral("Reason"), QStringLiteral("string"), {}, 0, QStringLiteral("The reason for the transition into the object's current status.")},
                   Column{QStringLiteral("Object"), QStringLiteral("string"), {}, 0, QStringLiteral("The object that this event is about.")},
                   Column{QStringLiteral("Message"), QStringLiteral("string"), {}, 0, QStringLiteral("A human-readable description of the status of this operation.")}};
        cells = [=](const QJsonObject &o) {
            QString last = str(o, QStringLiteral("series.lastObservedTime"));
            if (last.isEmpty()) last = str(o, QStringLiteral("lastTimestamp"));
            if (last.isEmpty()) last = str(o, QStringLiteral("eventTime"));
            const QString object = str(o, QStringLiteral("involvedObject.kind")).toLower() + u'/' + str(o, QStringLiteral("involvedObject.name"));
            return QJsonArray{age(last.left(19) + u'Z'), str(o, QStringLiteral("type")), str(o, QStringLiteral("reason")), object, str(o, QStringLiteral("message"))};
        };
    } else if (plural == QLatin1String("jobs")) {
        columns.insert(columns.end(), {Column{QStringLiteral("Status"), QStringLiteral("string"), {}, 0, QStringLiteral("Status of the job.")},
                                       Column{QStringLiteral("Completions"), QStringLiteral("string"), {}, 0, QStringLiteral("The desired number of successfully finished pods the job should be run with.")},
                                       Column{QStringLiteral("Duration"), QStringLiteral("string"), {}, 0, QStringLiteral("Time required to complete the job.")},
                                       ageColumn});
        cells = [=](const QJsonObject &o) {
            QString status = QStringLiteral("Running");
            for (const QJsonValue &c : at(o, QStringLiteral("status.conditions")).toArray()) {
                const QString t = c.toObject().value(QStringLiteral("type")).toString();
                if (t == QLatin1String("Complete") || t == QLatin1String("Failed")) status = t;
            }
            const QString start = str(o, QStringLiteral("status.startTime"));
            return QJsonArray{name(o), status, QStringLiteral("%1/1").arg(at(o, QStringLiteral("status.succeeded")).toInt()),
                              start.isEmpty() ? QString() : age(start), created(o)};
        };
    } else if (plural == QLatin1String("namespaces")) {
        columns.insert(columns.end(), {Column{QStringLiteral("Status"), QStringLiteral("string"), {}, 0, QStringLiteral("The status of the namespace")}, ageColumn});
        cells = [=](const QJsonObject &o) { return QJsonArray{name(o), str(o, QStringLiteral("status.phase")), created(o)}; };
    } else if (plural == QLatin1String("customresourcedefinitions")) {
        // The API server's default table convertor: the creation time itself, not an age.
        columns.push_back(Column{QStringLiteral("Created At"), QStringLiteral("date"), {}, 0, ageColumn.description});
        cells = [=](const QJsonObject &o) { return QJsonArray{name(o), str(o, QStringLiteral("metadata.creationTimestamp"))}; };
    } else {
        columns.push_back(ageColumn);
        cells = [=](const QJsonObject &o) { return QJsonArray{name(o), created(o)}; };
    }

    QJsonArray definitions;
    for (const Column &c : columns) {
        definitions.append(QJsonObject{{QStringLiteral("name"), c.name}, {QStringLiteral("type"), c.type}, {QStringLiteral("format"), c.format},
                                       {QStringLiteral("description"), c.description}, {QStringLiteral("priority"), c.priority}});
    }
    QJsonArray rows;
    for (const QJsonObject &o : objects) {
        QJsonObject row{{QStringLiteral("cells"), cells(o)}};
        if (includeObject == QLatin1String("Object")) {
            row.insert(QStringLiteral("object"), o);
        } else if (includeObject != QLatin1String("None")) {
            row.insert(QStringLiteral("object"), QJsonObject{{QStringLiteral("kind"), QStringLiteral("PartialObjectMetadata")},
                                                             {QStringLiteral("apiVersion"), QStringLiteral("meta.k8s.io/v1")},
                                                             {QStringLiteral("metadata"), o.value(QStringLiteral("metadata"))}});
        }
        rows.append(row);
    }
    return QJsonObject{{QStringLiteral("kind"), QStringLiteral("Table")}, {QStringLiteral("apiVersion"), QStringLiteral("meta.k8s.io/v1")},
                       {QStringLiteral("metadata"), listMetadata}, {QStringLiteral("columnDefinitions"), definitions}, {QStringLiteral("rows"), rows}};
}

} // namespace Starforge::Sandbox::Tables
