// Which changes of a job become a desktop notification (Job::JobNotices): the owner's jobs
// that succeed, fail (with the cause), miss the start deadline, or are stopped from elsewhere;
// once each; never what the first sync found, another owner's job, or a stop made here.

#include "core/job/jobnotices.h"

#include <QSignalSpy>
#include <QTest>

using namespace Starforge::Job;

namespace {

JobRecord job(const QString &id, JobState state, const QString &owner = QStringLiteral("alice@lab"))
{
    JobRecord r;
    r.id = id;
    r.rayJobName = QStringLiteral("grpo-math-") + id;
    r.state = state;
    r.owner = owner;
    return r;
}

Notice last(const QSignalSpy &spy)
{
    return spy.last().first().value<Notice>();
}

} // namespace

Q_DECLARE_METATYPE(Starforge::Job::Notice)

class TestJobNotices : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { qRegisterMetaType<Notice>(); }

    void outcomesOnceEach()
    {
        JobNotices notices(Viewer{QStringLiteral("alice@lab"), {}});
        QSignalSpy spy(&notices, &JobNotices::notice);
        notices.observe(job(QStringLiteral("bcdfgh"), JobState::Pending));
        notices.observe(job(QStringLiteral("bcdfgh"), JobState::Running));
        QCOMPARE(spy.size(), 0);
        JobRecord done = job(QStringLiteral("bcdfgh"), JobState::Succeeded);
        done.started = QDateTime::fromString(QStringLiteral("2026-12-04T01:00:00Z"), Qt::ISODate);
        done.ended = done.started.addSecs(3 * 3600);
        notices.observe(done);
        QCOMPARE(spy.size(), 1);
        QCOMPARE(last(spy).jobId, QStringLiteral("bcdfgh"));
        QCOMPARE(last(spy).title, QStringLiteral("grpo-math-bcdfgh succeeded"));
        QCOMPARE(last(spy).body, QStringLiteral("It ran for 180 min."));
        QVERIFY(!last(spy).urgent);
        // Archived: the same outcome again, not news.
        done.archived = true;
        notices.observe(done);
        QCOMPARE(spy.size(), 1);
    }

    void failuresSayTheCause()
    {
        JobNotices notices(Viewer{QStringLiteral("alice@lab"), {}});
        QSignalSpy spy(&notices, &JobNotices::notice);
        JobRecord failed = job(QStringLiteral("cdfghj"), JobState::Failed);
        failed.cause = QStringLiteral("ImagePullBackOff");
        failed.message = QStringLiteral("The image nvcr.io/x:1 cannot be pulled: not found.");
        notices.observe(failed);
        QCOMPARE(spy.size(), 1);
        QCOMPARE(last(spy).title, QStringLiteral("grpo-math-cdfghj failed"));
        QCOMPARE(last(spy).body, QStringLiteral("ImagePullBackOff: The image nvcr.io/x:1 cannot be pulled: not found."));
        QVERIFY(last(spy).urgent);

        JobRecord late = job(QStringLiteral("dfghjk"), JobState::Failed);
        late.reason = QStringLiteral("PreRunningDeadlineExceeded");
        late.cause = QStringLiteral("NoNodeMatchesSelector");
        late.message = QStringLiteral("No node has the GPU series b200.");
        notices.observe(late);
        QCOMPARE(last(spy).title, QStringLiteral("grpo-math-dfghjk missed its start deadline"));
        QVERIFY(last(spy).body.contains(QStringLiteral("b200")));
    }

    void stopsFromElsewhereOnly()
    {
        JobNotices notices(Viewer{QStringLiteral("alice@lab"), {}});
        QSignalSpy spy(&notices, &JobNotices::notice);
        notices.stoppedHere(QStringLiteral("fghjkl"));
        notices.observe(job(QStringLiteral("fghjkl"), JobState::Stopped));
        QCOMPARE(spy.size(), 0);
        notices.observe(job(QStringLiteral("ghjklm"), JobState::Stopped));
        QCOMPARE(spy.size(), 1);
        QCOMPARE(last(spy).title, QStringLiteral("grpo-math-ghjklm was stopped"));
        QVERIFY(last(spy).body.startsWith(QStringLiteral("Stopped from elsewhere")));
    }

    void notTheBaselineNorOthersJobs()
    {
        JobNotices notices(Viewer{QStringLiteral("alice@lab"), {}});
        QSignalSpy spy(&notices, &JobNotices::notice);
        // Ended before the app connected: its state, not news.
        notices.baseline({job(QStringLiteral("hjklmn"), JobState::Failed)});
        notices.observe(job(QStringLiteral("hjklmn"), JobState::Failed));
        QCOMPARE(spy.size(), 0);
        // A colleague's job in the shared namespace, and one that records no owner.
        notices.observe(job(QStringLiteral("jklmnp"), JobState::Failed, QStringLiteral("bob@lab")));
        notices.observe(job(QStringLiteral("klmnpq"), JobState::Failed, QString()));
        QCOMPARE(spy.size(), 0);
        // Running at the baseline, ending now: news.
        notices.baseline({job(QStringLiteral("lmnpqr"), JobState::Running)});
        notices.observe(job(QStringLiteral("lmnpqr"), JobState::Succeeded));
        QCOMPARE(spy.size(), 1);
    }
};

QTEST_GUILESS_MAIN(TestJobNotices)
#include "tst_jobnotices.moc"
