// Fuzz target: bytes as a Kubernetes API answer, read by every typed view (Node, Pod, Event,
// Job, RayJob, RayCluster), plus Kube::parseTime and the quantity parser on every string in
// the document and on every line of the raw input (most mutated inputs are not JSON, and those
// two parsers see text straight from the server). A crash, a sanitizer report or a broken
// invariant below is a finding.

#include "core/kube/quantity.h"
#include "core/kube/resources.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <cstddef>
#include <cstdint>

using namespace Starforge::Kube;

namespace {

// A finding libFuzzer saves: an invariant the views promise does not hold.
void require(bool holds)
{
    if (!holds) {
        __builtin_trap();
    }
}

void readString(const QString &text)
{
    const QDateTime t = parseTime(text);
    require(!t.isValid() || t.timeSpec() == Qt::UTC);
    if (const auto milli = parseQuantityMilli(text)) {
        // The parser refuses what does not fit, with room to spare for sums.
        require(*milli <= qint64(9'000'000'000'000'000'000) && *milli >= -qint64(9'000'000'000'000'000'000));
    }
}

// Strings anywhere in the document; bounded so one wide input does not become a slow one.
void collectStrings(const QJsonValue &value, QList<QString> &out)
{
    if (out.size() >= 256) {
        return;
    }
    if (value.isString()) {
        out << value.toString();
    } else if (value.isObject()) {
        const QJsonObject o = value.toObject();
        for (auto it = o.begin(); it != o.end(); ++it) {
            out << it.key();
            collectStrings(it.value(), out);
        }
    } else if (value.isArray()) {
        for (const QJsonValue &v : value.toArray()) {
            collectStrings(v, out);
        }
    }
}

void readViews(const QJsonObject &o)
{
    const Node node = Node::fromJson(o, QStringLiteral("starforge/gpu-series"));
    (void)node;
    const Pod pod = Pod::fromJson(o);
    (void)pod.condition(QStringLiteral("Ready"));
    const Event event = Event::fromJson(o);
    require(event.count >= 1);

    const Job job = Job::fromJson(o);
    (void)job.isFinished();
    (void)job.ownerRayJob();

    const RayJob rayJob = RayJob::fromJson(o);
    (void)rayJob.isTerminal();
    (void)rayJob.isSucceeded();
    require(!rayJob.isSucceeded() || rayJob.isTerminal());
    require(rayJob.rayClusterSpec.desiredGpus() >= 0);
    for (const RayGroup &group : rayJob.rayClusterSpec.workers) {
        require(group.desiredPods() >= 0);
    }

    const RayCluster cluster = RayCluster::fromJson(o);
    require(cluster.spec.desiredGpus() >= 0);
    (void)cluster.status.condition(QStringLiteral("HeadPodReady"));
    (void)cluster.originRayJob();
    (void)RayClusterStatus::fromJson(o.value(QStringLiteral("status")).toObject());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray bytes = QByteArray::fromRawData(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const QJsonDocument document = QJsonDocument::fromJson(bytes);
    QList<QString> strings;
    if (document.isObject()) {
        const QJsonObject root = document.object();
        readViews(root);
        // A List: every item, as the client reads a list answer.
        for (const QJsonValue &item : root.value(QStringLiteral("items")).toArray()) {
            readViews(item.toObject());
        }
        // A watch event's object.
        readViews(root.value(QStringLiteral("object")).toObject());
        collectStrings(root, strings);
    } else if (document.isArray()) {
        for (const QJsonValue &item : document.array()) {
            readViews(item.toObject());
        }
        collectStrings(document.array(), strings);
    }
    for (const QByteArray &line : bytes.split('\n')) {
        strings << QString::fromUtf8(line);
    }
    for (const QString &s : std::as_const(strings)) {
        readString(s);
    }
    return 0;
}
