#include "sandbox/cluster/fleet.h"

#include "sandbox/store/objectstore.h"
#include "sandbox/store/resourcetypes.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QJsonArray>
#include <QRegularExpression>
#include <QUuid>

namespace Starforge::Sandbox {

Result<FleetSpec> FleetSpec::parse(const QString &text)
{
    FleetSpec spec;
    static const QRegularExpression scale(QStringLiteral("^scale:(\\d+)$"));
    static const QRegularExpression pool(QStringLiteral("^([a-z0-9]([-a-z0-9]*[a-z0-9])?):(\\d+)x(\\d+)$"));
    if (const auto m = scale.match(text.trimmed()); m.hasMatch()) {
        const int total = m.captured(1).toInt();
        if (total < 1 || total > 20000) {
            return Error::invalid(QStringLiteral("--fleet scale:N takes 1 to 20000 nodes, not %1").arg(m.captured(1)));
        }
        // A large heterogeneous fleet: mostly 8-GPU nodes across series, some CPU nodes.
        const int h200 = total * 4 / 10;
        const int h100 = total * 3 / 10;
        const int a100 = total * 2 / 10;
        const int cpu = total - h200 - h100 - a100;
        spec.pools = {{QStringLiteral("h200"), h200, 8}, {QStringLiteral("h100"), h100, 8},
                      {QStringLiteral("a100"), a100, 8}, {QStringLiteral("cpu"), cpu, 0}};
        spec.backgroundPodsPerNode = 10;
        return spec;
    }
    for (const QString &part : text.split(u',', Qt::SkipEmptyParts)) {
        const auto m = pool.match(part.trimmed());
        if (!m.hasMatch()) {
            return Error::invalid(QStringLiteral("cannot read the fleet pool '%1': write SERIES:NODESxGPUS, e.g. "
                                                 "h200:4x8,cpu:2x0, or scale:5000").arg(part));
        }
        const int nodes = m.captured(3).toInt();
        const int gpus = m.captured(4).toInt();
        if (nodes < 1 || nodes > 20000 || gpus > 16) {
            return Error::invalid(QStringLiteral("fleet pool '%1': 1 to 20000 nodes of 0 to 16 GPUs").arg(part));
        }
        for (const NodePool &existing : std::as_const(spec.pools)) {
            if (existing.series == m.captured(1)) {
                return Error::invalid(QStringLiteral("fleet series '%1' is given twice").arg(existing.series));
            }
        }
        spec.pools << NodePool{m.captured(1), nodes, gpus};
    }
    if (spec.pools.isEmpty()) {
        return Error::invalid(QStringLiteral("the fleet is empty: give SERIES:NODESxGPUS pools, e.g. h200:4x8"));
    }
    return spec;
}

int FleetSpec::nodeCount() const
{
    int n = 0;
    for (const NodePool &p : pools) {
        n += p.nodes;
    }
    return n;
}

namespace {

// A digest of the node's name and a purpose: stable identities for one node, distinct between nodes.
QByteArray nodeDigest(const QString &name, const char *purpose)
{
    return QCryptographicHash::hash(QByteArray(QByteArray(purpose) + '/' + name.toUtf8()), QCryptographicHash::Sha256);
}

QString uuidFrom(const QByteArray &digest)
{
    return QUuid::fromRfc4122(digest.left(16)).toString(QUuid::WithoutBraces);
}

// A pulled image's digest as the runtime reports it in imageID: the repository, '@', a sha256.
QString imageIdOf(const QString &image)
{
    const QString repository = image.section(u'/', -1).contains(u':') ? image.section(u':', 0, -2) : image;
    return repository + QStringLiteral("@sha256:")
        + QString::fromLatin1(QCryptographicHash::hash(image.toUtf8(), QCryptographicHash::Sha256).toHex());
}

} // namespace

QJsonObject makeNode(const QString &name, const QString &series, int gpus, const QString &seriesLabel)
{
    // The boot of this sandbox run: a new boot ID each start, as a rebooted machine has.
    static const QByteArray bootSalt = QUuid::createUuid().toRfc4122();
    const QString now = QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
    QJsonObject labels{{QStringLiteral("kubernetes.io/hostname"), name},
                       {QStringLiteral("kubernetes.io/os"), QStringLiteral("linux")},
                       {QStringLiteral("kubernetes.io/arch"), QStringLiteral("amd64")},
                       {QStringLiteral("beta.kubernetes.io/os"), QStringLiteral("linux")},
                       {QStringLiteral("beta.kubernetes.io/arch"), QStringLiteral("amd64")},
                       {QStringLiteral("node.kubernetes.io/instance-type"), gpus > 0 ? QString(series + QStringLiteral("-x") + QString::number(gpus))
                                                                                     : QStringLiteral("cpu-standard")}};
    if (gpus > 0) {
        labels.insert(seriesLabel, series);
        labels.insert(QStringLiteral("nvidia.com/gpu.present"), QStringLiteral("true"));
        labels.insert(QStringLiteral("nvidia.com/gpu.count"), QString::number(gpus));
    }
    const QString cpu = gpus > 0 ? QStringLiteral("112") : QStringLiteral("32");
    const QString memory = gpus > 0 ? QStringLiteral("2063937112Ki") : QStringLiteral("131890156Ki");
    QJsonObject capacity{{QStringLiteral("cpu"), cpu}, {QStringLiteral("memory"), memory},
                         {QStringLiteral("pods"), QStringLiteral("110")},
                         {QStringLiteral("ephemeral-storage"), QStringLiteral("3750000000Ki")},
                         {QStringLiteral("hugepages-1Gi"), QStringLiteral("0")}, {QStringLiteral("hugepages-2Mi"), QStringLiteral("0")}};
    QJsonObject allocatable = capacity;
    allocatable.insert(QStringLiteral("cpu"), gpus > 0 ? QStringLiteral("111") : QStringLiteral("31"));
    allocatable.insert(QStringLiteral("memory"), gpus > 0 ? QStringLiteral("2062888536Ki") : QStringLiteral("130841580Ki"));
    if (gpus > 0) {
        capacity.insert(QStringLiteral("nvidia.com/gpu"), QString::number(gpus));
        allocatable.insert(QStringLiteral("nvidia.com/gpu"), QString::number(gpus));
    }
    const auto condition = [&](const QString &type, const QString &status, const QString &reason, const QString &message) {
        return QJsonObject{{QStringLiteral("type"), type}, {QStringLiteral("status"), status},
                           {QStringLiteral("lastHeartbeatTime"), now}, {QStringLiteral("lastTransitionTime"), now},
                           {QStringLiteral("reason"), reason}, {QStringLiteral("message"), message}};
    };
    return QJsonObject{
        {QStringLiteral("apiVersion"), QStringLiteral("v1")},
        {QStringLiteral("kind"), QStringLiteral("Node")},
        {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("labels"), labels}}},
        {QStringLiteral("spec"), QJsonObject{{QStringLiteral("providerID"), QString(QStringLiteral("sandbox://") + name)}}},
        {QStringLiteral("status"),
         QJsonObject{{QStringLiteral("capacity"), capacity},
                     {QStringLiteral("allocatable"), allocatable},
                     {QStringLiteral("conditions"),
                      QJsonArray{condition(QStringLiteral("MemoryPressure"), QStringLiteral("False"), QStringLiteral("KubeletHasSufficientMemory"),
                                           QStringLiteral("kubelet has sufficient memory available")),
                                 condition(QStringLiteral("DiskPressure"), QStringLiteral("False"), QStringLiteral("KubeletHasNoDiskPressure"),
                                           QStringLiteral("kubelet has no disk pressure")),
                                 condition(QStringLiteral("PIDPressure"), QStringLiteral("False"), QStringLiteral("KubeletHasSufficientPID"),
                                           QStringLiteral("kubelet has sufficient PID available")),
                                 condition(QStringLiteral("Ready"), QStringLiteral("True"), QStringLiteral("KubeletReady"),
                                           QStringLiteral("kubelet is posting ready status"))}},
                     {QStringLiteral("addresses"),
                      QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("InternalIP")}, {QStringLiteral("address"), QStringLiteral("127.0.0.1")}},
                                 QJsonObject{{QStringLiteral("type"), QStringLiteral("Hostname")}, {QStringLiteral("address"), name}}}},
                     // Every field NodeSystemInfo requires (docs/sandbox.md, "Required fields"): the
                     // official clients refuse a Node without machineID, systemUUID or bootID.
                     {QStringLiteral("nodeInfo"),
                      QJsonObject{{QStringLiteral("machineID"), QString::fromLatin1(nodeDigest(name, "machine-id").toHex().left(32))},
                                  {QStringLiteral("systemUUID"), uuidFrom(nodeDigest(name, "system-uuid"))},
                                  {QStringLiteral("bootID"), uuidFrom(nodeDigest(name + QString::fromLatin1(bootSalt.toHex()), "boot-id"))},
                                  {QStringLiteral("kubeletVersion"), QStringLiteral("v1.32.4")},
                                  {QStringLiteral("kubeProxyVersion"), QStringLiteral("v1.32.4")},
                                  {QStringLiteral("containerRuntimeVersion"), QStringLiteral("sandbox://1.0")},
                                  {QStringLiteral("operatingSystem"), QStringLiteral("linux")},
                                  {QStringLiteral("architecture"), QStringLiteral("amd64")},
                                  {QStringLiteral("osImage"), QStringLiteral("Starforge sandbox")},
                                  {QStringLiteral("kernelVersion"), QStringLiteral("sandbox")}}}}}};
}

namespace {

QJsonObject backgroundPod(const QString &name, const QString &ns, const QString &node, int gpus)
{
    QJsonObject requests{{QStringLiteral("cpu"), QStringLiteral("2")}, {QStringLiteral("memory"), QStringLiteral("8Gi")}};
    if (gpus > 0) {
        requests.insert(QStringLiteral("nvidia.com/gpu"), QString::number(gpus));
    }
    const QString now = QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
    return QJsonObject{
        {QStringLiteral("apiVersion"), QStringLiteral("v1")},
        {QStringLiteral("kind"), QStringLiteral("Pod")},
        {QStringLiteral("metadata"), QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("namespace"), ns},
                                                 {QStringLiteral("labels"), QJsonObject{{QStringLiteral("app"), QStringLiteral("background")},
                                                                                        {QStringLiteral("team"), QStringLiteral("other")}}}}},
        {QStringLiteral("spec"),
         QJsonObject{{QStringLiteral("nodeName"), node},
                     {QStringLiteral("restartPolicy"), QStringLiteral("Always")},
                     {QStringLiteral("schedulerName"), QStringLiteral("default-scheduler")},
                     {QStringLiteral("containers"),
                      QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("main")},
                                             {QStringLiteral("image"), QStringLiteral("registry.example/background:1")},
                                             {QStringLiteral("resources"), QJsonObject{{QStringLiteral("requests"), requests},
                                                                                       {QStringLiteral("limits"), requests}}}}}}}},
        {QStringLiteral("status"),
         QJsonObject{{QStringLiteral("phase"), QStringLiteral("Running")},
                     {QStringLiteral("hostIP"), QStringLiteral("127.0.0.1")},
                     {QStringLiteral("podIP"), QStringLiteral("127.0.0.1")},
                     {QStringLiteral("startTime"), now},
                     {QStringLiteral("conditions"),
                      QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("PodScheduled")}, {QStringLiteral("status"), QStringLiteral("True")}},
                                 QJsonObject{{QStringLiteral("type"), QStringLiteral("Ready")}, {QStringLiteral("status"), QStringLiteral("True")}}}},
                     {QStringLiteral("containerStatuses"),
                      QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("main")}, {QStringLiteral("ready"), true},
                                             {QStringLiteral("restartCount"), 0},
                                             {QStringLiteral("image"), QStringLiteral("registry.example/background:1")},
                                             {QStringLiteral("imageID"), imageIdOf(QStringLiteral("registry.example/background:1"))},
                                             {QStringLiteral("state"), QJsonObject{{QStringLiteral("running"),
                                                                                    QJsonObject{{QStringLiteral("startedAt"), now}}}}}}}}}}};
}

} // namespace

void createFleet(ObjectStore &store, const FleetSpec &fleet, const QString &seriesLabel, const QString &backgroundNamespace)
{
    const ResourceType *nodes = ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("nodes"));
    const ResourceType *pods = ResourceTypes::find(QString(), QStringLiteral("v1"), QStringLiteral("pods"));
    for (const NodePool &pool : fleet.pools) {
        for (int i = 0; i < pool.nodes; ++i) {
            const QString name = QStringLiteral("%1-%2").arg(pool.series).arg(i, fleet.nodeCount() > 999 ? 5 : 2, 10, QLatin1Char('0'));
            (void)store.create(*nodes, makeNode(name, pool.series, pool.gpusPerNode, seriesLabel));
            for (int p = 0; p < fleet.backgroundPodsPerNode; ++p) {
                // Four of every ten background pods hold GPUs, so capacity figures are not trivial.
                const int gpus = pool.gpusPerNode > 0 && p < 4 ? 1 : 0;
                (void)store.create(*pods, backgroundPod(QStringLiteral("%1-bg-%2").arg(name).arg(p), backgroundNamespace, name, gpus));
            }
        }
    }
}

} // namespace Starforge::Sandbox
