// The sandbox scheduler's own reading of pod requests (sandbox/cluster/podrequests.h), against
// expectations worked out by hand from the Kubernetes rules, not against core/kube's reading:
// the two are kept apart so that a mistake in one is caught by the other's tests.

#include "sandbox/cluster/podrequests.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QTest>

#include <limits>

using namespace Starforge::Sandbox;

namespace {

// A container with the given requests and limits ({"cpu": "2"} style).
QJsonObject container(const QJsonObject &requests, const QJsonObject &limits = {})
{
    QJsonObject resources;
    if (!requests.isEmpty()) resources.insert(QStringLiteral("requests"), requests);
    if (!limits.isEmpty()) resources.insert(QStringLiteral("limits"), limits);
    return QJsonObject{{QStringLiteral("name"), QStringLiteral("c")}, {QStringLiteral("image"), QStringLiteral("x")},
                       {QStringLiteral("resources"), resources}};
}

QJsonObject sidecar(const QJsonObject &requests)
{
    QJsonObject c = container(requests);
    c.insert(QStringLiteral("restartPolicy"), QStringLiteral("Always"));
    return c;
}

QJsonObject pod(const QJsonArray &containers, const QJsonArray &inits = {}, const QJsonObject &overhead = {})
{
    QJsonObject spec{{QStringLiteral("containers"), containers}};
    if (!inits.isEmpty()) spec.insert(QStringLiteral("initContainers"), inits);
    if (!overhead.isEmpty()) spec.insert(QStringLiteral("overhead"), overhead);
    return QJsonObject{{QStringLiteral("spec"), spec}};
}

QJsonObject cpu(const char *quantity)
{
    return QJsonObject{{QStringLiteral("cpu"), QString::fromLatin1(quantity)}};
}

QJsonObject amounts(std::initializer_list<std::pair<const char *, const char *>> quantities)
{
    QJsonObject o;
    for (const auto &[name, quantity] : quantities) o.insert(QString::fromLatin1(name), QString::fromLatin1(quantity));
    return o;
}

PodRequests::MilliAmounts milli(std::initializer_list<std::pair<const char *, qint64>> values)
{
    PodRequests::MilliAmounts out;
    for (const auto &[name, value] : values) out.insert(QString::fromLatin1(name), value);
    return out;
}

} // namespace

class TestPodRequests : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void quantities_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<qint64>("milli");
        QTest::newRow("whole cores") << "8" << true << qint64(8000);
        QTest::newRow("milli-cores") << "500m" << true << qint64(500);
        QTest::newRow("fraction") << "1.5" << true << qint64(1500);
        QTest::newRow("leading point") << ".5" << true << qint64(500);
        QTest::newRow("trailing point") << "5." << true << qint64(5000);
        QTest::newRow("plus sign") << "+2" << true << qint64(2000);
        QTest::newRow("minus sign") << "-2" << true << qint64(-2000);
        QTest::newRow("zero") << "0" << true << qint64(0);
        QTest::newRow("kibi") << "1Ki" << true << qint64(1024000);
        QTest::newRow("gibi") << "1Gi" << true << qint64(1073741824000);
        QTest::newRow("fractional gibi") << "1.5Gi" << true << qint64(1610612736000);
        QTest::newRow("half a kibi") << "0.5Ki" << true << qint64(512000);
        QTest::newRow("kilo") << "2k" << true << qint64(2000000);
        QTest::newRow("mega") << "3M" << true << qint64(3000000000);
        QTest::newRow("giga") << "1.5G" << true << qint64(1500000000000);
        QTest::newRow("tera") << "1T" << true << qint64(1000000000000000);
        QTest::newRow("exponent") << "2e3" << true << qint64(2000000);
        QTest::newRow("capital exponent") << "2E3" << true << qint64(2000000);
        QTest::newRow("plus exponent") << "1e+2" << true << qint64(100000);
        QTest::newRow("negative exponent") << "25e-1" << true << qint64(2500);
        QTest::newRow("exa, not an exponent") << "0.001E" << true << qint64(1000000000000000000);
        // Below a thousandth: rounded up, so asking for anything is asking for at least 1.
        QTest::newRow("micro rounds up") << "1u" << true << qint64(1);
        QTest::newRow("nano rounds up") << "1n" << true << qint64(1);
        QTest::newRow("1500 micro") << "1500u" << true << qint64(2);
        QTest::newRow("sub-milli fraction") << "0.0001" << true << qint64(1);
        QTest::newRow("exactly 2 milli in nano") << "2000000n" << true << qint64(2);
        // Too big for thousandths in a qint64: capped, not wrapped.
        QTest::newRow("exbi capped") << "16Ei" << true << std::numeric_limits<qint64>::max();
        QTest::newRow("huge exponent capped") << "1e300" << true << std::numeric_limits<qint64>::max();
        QTest::newRow("many digits capped") << "123456789012345678901234567890" << true << std::numeric_limits<qint64>::max();
        QTest::newRow("bytes suffix") << "64GB" << false << qint64(0);
        QTest::newRow("lowercase kibi") << "1ki" << false << qint64(0);
        QTest::newRow("capital kilo") << "1K" << false << qint64(0);
        QTest::newRow("two points") << "1.2.3" << false << qint64(0);
        QTest::newRow("empty") << "" << false << qint64(0);
        QTest::newRow("suffix alone") << "Gi" << false << qint64(0);
        QTest::newRow("point alone") << "." << false << qint64(0);
        QTest::newRow("dangling exponent") << "2e" << false << qint64(0);
        QTest::newRow("fractional exponent") << "2e1.5" << false << qint64(0);
        QTest::newRow("space inside") << "1 Gi" << false << qint64(0);
        QTest::newRow("spaces around") << " 2 " << true << qint64(2000);
        QTest::newRow("double sign") << "+-1" << false << qint64(0);
    }
    void quantities()
    {
        QFETCH(QString, text);
        QFETCH(bool, valid);
        QFETCH(qint64, milli);
        const std::optional<qint64> parsed = PodRequests::milliQuantity(text);
        QCOMPARE(parsed.has_value(), valid);
        if (valid) QCOMPARE(*parsed, milli);
    }

    void containerRequestsDefaultToLimits()
    {
        // cpu from requests (the limit is larger and does not count), memory from the limit alone,
        // the GPU from the limit alone, a malformed quantity and a negative one left out.
        const PodRequests::MilliAmounts c = PodRequests::ofContainer(
            container(amounts({{"cpu", "500m"}, {"ephemeral-storage", "lots"}, {"example.com/foo", "-1"}}),
                      amounts({{"cpu", "2"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "8"}})));
        QCOMPARE(c, milli({{"cpu", 500}, {"memory", 1073741824000}, {"nvidia.com/gpu", 8000}}));
        QVERIFY(PodRequests::ofContainer(QJsonObject{{QStringLiteral("name"), QStringLiteral("bare")}}).isEmpty());
    }

    void numbersAreQuantitiesToo()
    {
        const QJsonObject c = container(QJsonObject{{QStringLiteral("cpu"), 2}, {QStringLiteral("memory"), 0.1}});
        QCOMPARE(PodRequests::ofContainer(c), milli({{"cpu", 2000}, {"memory", 100}}));
    }

    void appContainersAddUp()
    {
        // 1 + 0.25 + 2 cores; memory 1Gi + 512Mi; 4 + 4 GPUs.
        const QJsonObject p = pod({container(amounts({{"cpu", "1"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "4"}})),
                                   container(amounts({{"cpu", "250m"}, {"memory", "512Mi"}})),
                                   container({}, amounts({{"cpu", "2"}, {"nvidia.com/gpu", "4"}}))});
        QCOMPARE(PodRequests::ofPod(p), milli({{"cpu", 3250}, {"memory", 1610612736000}, {"nvidia.com/gpu", 8000}}));
    }

    void initContainerLargerThanTheSum()
    {
        // App containers: cpu 1 + 2 = 3. Init containers run one at a time: 5 and 4, so the
        // pod needs max(3, 5) = 5 cores, not 3 and not 3 + 5 + 4.
        const QJsonObject p = pod({container(cpu("1")), container({}, cpu("2"))}, {container(cpu("5")), container(cpu("4"))});
        QCOMPARE(PodRequests::ofPod(p).value(QStringLiteral("cpu")), 5000);
    }

    void initContainerSmallerThanTheSum()
    {
        const QJsonObject p = pod({container(cpu("3")), container(cpu("3"))}, {container(cpu("4"))});
        QCOMPARE(PodRequests::ofPod(p).value(QStringLiteral("cpu")), 6000);
    }

    void eachResourceOnItsOwn()
    {
        // cpu peaks in the init container (6 > 2), memory in the app containers (3Gi > 1Gi), and
        // a GPU only the init container asks for still counts.
        const QJsonObject p = pod({container(amounts({{"cpu", "1"}, {"memory", "2Gi"}})), container(amounts({{"cpu", "1"}, {"memory", "1Gi"}}))},
                                  {container(amounts({{"cpu", "6"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "1"}}))});
        QCOMPARE(PodRequests::ofPod(p), milli({{"cpu", 6000}, {"memory", 3221225472000}, {"nvidia.com/gpu", 1000}}));
    }

    void sidecarsAddToTheSum()
    {
        // A sidecar (restartPolicy Always) keeps running beside the app containers: 2 + 1 = 3,
        // where an ordinary init container of 1 would vanish under max(2, 1) = 2.
        QCOMPARE(PodRequests::ofPod(pod({container(cpu("2"))}, {sidecar(cpu("1"))})).value(QStringLiteral("cpu")), 3000);
        QCOMPARE(PodRequests::ofPod(pod({container(cpu("2"))}, {container(cpu("1"))})).value(QStringLiteral("cpu")), 2000);
    }

    void sidecarsAddToLaterInitContainers()
    {
        // Init order: sidecar A (1), init B (4), sidecar C (2), init D (3).
        // B runs beside A: 1 + 4 = 5. D runs beside A and C: 1 + 2 + 3 = 6. C itself: 1 + 2 = 3.
        // Running pod: app 1 + sidecars 1 + 2 = 4. The pod: max(4, 5, 6, 3) = 6.
        const QJsonObject p = pod({container(cpu("1"))}, {sidecar(cpu("1")), container(cpu("4")), sidecar(cpu("2")), container(cpu("3"))});
        QCOMPARE(PodRequests::ofPod(p).value(QStringLiteral("cpu")), 6000);
        // A sidecar declared after an init container does not run beside it: 4 alone, and the
        // running pod is 1 + 1 = 2, so max(4, 2) = 4, not 5.
        const QJsonObject q = pod({container(cpu("1"))}, {container(cpu("4")), sidecar(cpu("1"))});
        QCOMPARE(PodRequests::ofPod(q).value(QStringLiteral("cpu")), 4000);
    }

    void overheadOnTop()
    {
        // max(app 1 + 1, init 3) = 3 cores, plus 250m of overhead; memory 2Gi + 128Mi.
        const QJsonObject p = pod({container(amounts({{"cpu", "1"}, {"memory", "2Gi"}})), container(cpu("1"))}, {container(cpu("3"))},
                                  amounts({{"cpu", "250m"}, {"memory", "128Mi"}}));
        QCOMPARE(PodRequests::ofPod(p), milli({{"cpu", 3250}, {"memory", 2281701376000}}));
    }

    void gpuPodOfARayWorker()
    {
        // A Ray GPU worker as KubeRay writes it: limits only on the worker (requests defaulted
        // from them), a small init container waiting for the head, a log-shipping sidecar, and a
        // runtime-class overhead.
        const QJsonObject worker = container({}, amounts({{"cpu", "16"}, {"memory", "200Gi"}, {"nvidia.com/gpu", "8"}}));
        const QJsonObject waitForHead = container(amounts({{"cpu", "200m"}, {"memory", "256Mi"}}));
        const QJsonObject logShipper = sidecar(amounts({{"cpu", "100m"}, {"memory", "64Mi"}}));
        const QJsonObject p = pod({worker}, {waitForHead, logShipper}, amounts({{"cpu", "100m"}, {"memory", "32Mi"}}));
        // cpu: max(16 + 0.1, 0.2) + 0.1 = 16.2; memory: max(200Gi + 64Mi, 256Mi) + 32Mi
        // = (214,748,364,800 + 67,108,864 + 33,554,432) bytes; GPUs: 8.
        QCOMPARE(PodRequests::ofPod(p), milli({{"cpu", 16200}, {"memory", 214849028096000}, {"nvidia.com/gpu", 8000}}));
    }

    void emptyPod()
    {
        QVERIFY(PodRequests::ofPod(QJsonObject()).isEmpty());
        QVERIFY(PodRequests::ofPod(pod({container({})})).isEmpty());
    }

    void holdsNodeResources_data()
    {
        QTest::addColumn<QString>("nodeName");
        QTest::addColumn<QString>("phase");
        QTest::addColumn<bool>("holds");
        QTest::newRow("pending, unbound") << "" << "Pending" << false;
        QTest::newRow("bound, pending") << "h200-0" << "Pending" << true;
        QTest::newRow("bound, no status yet") << "h200-0" << "" << true;
        QTest::newRow("running") << "h200-0" << "Running" << true;
        QTest::newRow("unknown") << "h200-0" << "Unknown" << true;
        QTest::newRow("succeeded") << "h200-0" << "Succeeded" << false;
        QTest::newRow("failed") << "h200-0" << "Failed" << false;
    }
    void holdsNodeResources()
    {
        QFETCH(QString, nodeName);
        QFETCH(QString, phase);
        QFETCH(bool, holds);
        QJsonObject p = pod({container(cpu("1"))});
        QJsonObject spec = p.value(QStringLiteral("spec")).toObject();
        if (!nodeName.isEmpty()) spec.insert(QStringLiteral("nodeName"), nodeName);
        p.insert(QStringLiteral("spec"), spec);
        if (!phase.isEmpty()) p.insert(QStringLiteral("status"), QJsonObject{{QStringLiteral("phase"), phase}});
        QCOMPARE(PodRequests::holdsNodeResources(p), holds);
    }
};

QTEST_GUILESS_MAIN(TestPodRequests)
#include "tst_podrequests.moc"
