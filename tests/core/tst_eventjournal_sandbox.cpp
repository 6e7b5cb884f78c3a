// The event journal behind a real Session on the sandbox: a Pending job's events (the
// operator's, the scheduler's FailedScheduling on its head pod) and its RayJob's states are
// journaled as the informers see them, and are still in the file after the session has closed
// and the cluster has dropped them; a journal that cannot be opened switches its feature off
// with the reason and the session runs on.

#include "core/events/eventjournal.h"
#include "core/job/rayjobbuilder.h"
#include "core/kube/informer.h"
#include "core/session/session.h"
#include "support/memorysecretstore.h"
#include "support/sandboxfixture.h"
#include "support/sandboxjobs.h"
#include "support/testutil.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;

namespace {

QSet<QString> uidsOf(const QList<QJsonObject> &events)
{
    QSet<QString> out;
    for (const QJsonObject &e : events) out.insert(e.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("uid")).toString());
    return out;
}

bool hasReason(const QList<QJsonObject> &events, const QString &reason)
{
    return std::any_of(events.begin(), events.end(), [&reason](const QJsonObject &e) { return e.value(QStringLiteral("reason")).toString() == reason; });
}

} // namespace

class TestEventJournalSandbox : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<Testing::SandboxHttp> m_http;
    Testing::MemorySecretStore m_secrets;
    const QString m_ns = QStringLiteral("starforge");

    QString connectionFile() const { return m_dir.filePath(QStringLiteral("conn.json")); }

    static bool waitReady(Session &session, QSignalSpy &ready)
    {
        return QTest::qWaitFor([&] { return ready.size() >= 1 || session.state() == Session::State::Disconnected; }, 20000) && ready.size() >= 1;
    }

    // The cluster's own events about objects whose name starts with prefix.
    QSet<QString> clusterEventUids(const QString &prefix)
    {
        const auto reply = m_http->get(QStringLiteral("/api/v1/namespaces/%1/events").arg(m_ns));
        QSet<QString> out;
        for (const QJsonValue &item : QJsonDocument::fromJson(reply.body).object().value(QStringLiteral("items")).toArray()) {
            const QJsonObject e = item.toObject();
            if (e.value(QStringLiteral("involvedObject")).toObject().value(QStringLiteral("name")).toString().startsWith(prefix)) {
                out.insert(e.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("uid")).toString());
            }
        }
        return out;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        Sandbox::SandboxOptions options;
        options.connectionFile = connectionFile();
        options.fleet = QStringLiteral("h100:1x8,cpu:1x0");
        options.presentImages = {Testing::jobTestImage()};
        QString error;
        QVERIFY2(Testing::startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
    }

    void cleanupTestCase()
    {
        m_http.reset();
        m_sandbox.reset();
    }

    void aJobsEventsOutliveTheSessionAndTheCluster()
    {
        const QString path = m_dir.filePath(QStringLiteral("data/journal.sqlite"));
        SessionOptions options;
        options.journalEvents = true;
        options.journalPath = path;
        options.trackerCheckIntervalMs = 200;
        Session session(&m_secrets, QProcessEnvironment(), options);
        QSignalSpy ready(&session, &Session::ready);
        session.open(SessionSource::ofConnectionFile(connectionFile()));
        QVERIFY2(waitReady(session, ready), qPrintable(session.statusText()));
        QCOMPARE(session.state(), Session::State::Connected);
        const auto feature = session.feature(QStringLiteral("journal"));
        QVERIFY(feature && feature->available);
        QVERIFY(session.journal());
        QCOMPARE(session.journal()->path(), QFileInfo(path).absoluteFilePath());

        // A job that stays Pending: its head pod fits no node.
        const QString id = Job::RayJobBuilder::newJobId();
        const QString name = QStringLiteral("journal-") + id;
        const QJsonObject job = Testing::starforgeRayJob(QStringLiteral("journal"), id, QStringLiteral("python3 -c pass"), Testing::unschedulableHead());
        QCOMPARE(m_http->send("POST", QStringLiteral("/apis/ray.io/v1/namespaces/%1/rayjobs").arg(m_ns), QJsonDocument(job).toJson()).status, 201);

        // The scheduler's verdict on the head pod ("<rayjob>-xxxxx-head-yyyyy") is journaled
        // under the RayJob's name, and so is every event the cluster has about the job's objects.
        QTRY_VERIFY_WITH_TIMEOUT(hasReason(session.journal()->events(m_ns, {name}), QStringLiteral("FailedScheduling")), 20000);
        QSet<QString> inCluster;
        QTRY_VERIFY_WITH_TIMEOUT((inCluster = clusterEventUids(name), !inCluster.isEmpty() && uidsOf(session.journal()->events(m_ns, {name})).contains(inCluster)), 10000);
        const QList<QJsonObject> journaled = session.journal()->events(m_ns, {name});
        QStringList seen;
        for (const QJsonObject &e : journaled) {
            seen << e.value(QStringLiteral("involvedObject")).toObject().value(QStringLiteral("kind")).toString() + u' '
                    + e.value(QStringLiteral("reason")).toString();
        }
        qInfo().noquote() << "journaled:" << seen.join(QStringLiteral(", "));
        QVERIFY(journaled.size() >= 2);
        for (const QJsonObject &e : journaled) {
            QVERIFY(e.value(QStringLiteral("involvedObject")).toObject().value(QStringLiteral("name")).toString().startsWith(name));
        }
        // Nothing of it under another job's name.
        QCOMPARE(session.journal()->events(m_ns, {QStringLiteral("journal-") + Job::RayJobBuilder::newJobId()}).size(), 0);

        // The RayJob's states as the informer saw them: each one a change, with the job's id.
        QTRY_VERIFY_WITH_TIMEOUT(!session.journal()->jobStates(m_ns, name).isEmpty(), 10000);
        const QList<Events::JobStateChange> states = session.journal()->jobStates(m_ns, name);
        for (qsizetype i = 0; i < states.size(); ++i) {
            QCOMPARE(states[i].jobId, id);
            QCOMPARE(states[i].rayJobName, name);
            if (i > 0) QVERIFY(!states[i].sameStatus(states[i - 1]));
        }
        QVERIFY2(!states.last().deploymentStatus.isEmpty(), "the operator has not set a deployment status");
        const QSet<QString> before = uidsOf(journaled);

        // Closed: the journal goes with the session's parts.
        session.close();
        QVERIFY(!session.journal());

        // Kubernetes drops them: the RayJob (its cluster and pods with it) and every event.
        QCOMPARE(m_http->send("DELETE", QStringLiteral("/apis/ray.io/v1/namespaces/%1/rayjobs/%2").arg(m_ns, name)).status, 200);
        const auto listed = m_http->get(QStringLiteral("/api/v1/namespaces/%1/events").arg(m_ns));
        for (const QJsonValue &item : QJsonDocument::fromJson(listed.body).object().value(QStringLiteral("items")).toArray()) {
            const QString eventName = item.toObject().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString();
            QCOMPARE(m_http->send("DELETE", QStringLiteral("/api/v1/namespaces/%1/events/%2").arg(m_ns, eventName)).status, 200);
        }
        QVERIFY(clusterEventUids(name).isEmpty());

        // A new journal on the file, as the app after a restart: all still there.
        auto reopened = Events::EventJournal::open(path);
        QVERIFY2(reopened, reopened ? "" : qPrintable(reopened.error().message));
        const QList<QJsonObject> kept = (*reopened)->events(m_ns, {name});
        QCOMPARE(uidsOf(kept), before);
        QVERIFY(hasReason(kept, QStringLiteral("FailedScheduling")));
        QCOMPARE((*reopened)->jobStates(m_ns, name).size(), states.size());
    }

    void aJournalThatCannotOpenIsAFeatureOff()
    {
        // Where the journal's folder would go, a file stands.
        const QString blocker = m_dir.filePath(QStringLiteral("a-file"));
        QVERIFY(Testing::writeFile(blocker, "not a folder"));
        SessionOptions options;
        options.journalEvents = true;
        options.journalPath = blocker + QStringLiteral("/journal.sqlite");
        Session session(&m_secrets, QProcessEnvironment(), options);
        QSignalSpy ready(&session, &Session::ready);
        session.open(SessionSource::ofConnectionFile(connectionFile()));
        QVERIFY2(waitReady(session, ready), qPrintable(session.statusText()));
        QCOMPARE(session.state(), Session::State::Degraded);
        QVERIFY(!session.journal());
        const auto feature = session.feature(QStringLiteral("journal"));
        QVERIFY(feature && !feature->available);
        QVERIFY2(feature->reason.contains(QStringLiteral("Cannot create the folder")), qPrintable(feature->reason));
        QVERIFY2(session.statusText().contains(QStringLiteral("Event journal on this machine is unavailable")), qPrintable(session.statusText()));
        // Everything else runs.
        QVERIFY(session.eventInformer() && session.eventInformer()->hasSynced());
        QVERIFY(session.jobs());
        session.close();

        // Not asked for: no journal and no such feature.
        Session plain(&m_secrets, QProcessEnvironment(), SessionOptions{});
        QSignalSpy plainReady(&plain, &Session::ready);
        plain.open(SessionSource::ofConnectionFile(connectionFile()));
        QVERIFY2(waitReady(plain, plainReady), qPrintable(plain.statusText()));
        QCOMPARE(plain.state(), Session::State::Connected);
        QVERIFY(!plain.journal());
        QVERIFY(!plain.feature(QStringLiteral("journal")));
    }
};

QTEST_GUILESS_MAIN(TestEventJournalSandbox)
#include "tst_eventjournal_sandbox.moc"
