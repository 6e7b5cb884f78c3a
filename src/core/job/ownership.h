#pragma once

// Whose a job is (docs/jobs.md, "Every job is its owner's"). Researchers share a namespace and a
// bucket, so every RayJob the app makes records its owner and the bucket its archive goes to,
// and an app acts (fails on a deadline, archives, deletes, stops) only on its own user's jobs.
// Everybody else's are shown read-only, marked with their owner.
//
// The owner is FORGE_OWNER when the profile sets it, otherwise the user the cluster knows the
// credentials as (a SelfSubjectReview's status.userInfo.username): the same person on every
// workstation with the same credentials.

#include "core/job/jobrecord.h"
#include "core/util/result.h"

#include <QJsonObject>
#include <QString>
#include <QUrl>

namespace Starforge::Job {

// Who looks at the jobs: the owner name and the archive bucket of the session's profile.
struct Viewer
{
    QString owner;
    QString archiveBucket;   // archiveBucketAddress(); empty when the profile has no bucket
};

enum class Ownership {
    Mine,          // this viewer's, archived to this viewer's bucket
    OtherBucket,   // this viewer's, but archived to another bucket (another of their profiles)
    Others,        // someone else's
    Unowned,       // no owner recorded (made before owners were): nobody's to act on
};

Ownership ownershipOf(const JobRecord &record, const Viewer &viewer);
inline bool actsOn(Ownership ownership)
{
    return ownership == Ownership::Mine;
}

// The owner as a label value (63 characters of [A-Za-z0-9._-], alphanumeric at both ends): the
// name made safe, then a hash of the whole name, so "alice@lab" and "alice-lab" stay apart.
// The annotation of the same key keeps the name itself.
QString ownerLabelValue(const QString &owner);
// "host[:port]/bucket" for an S3 endpoint and bucket: two stores with one bucket name differ.
QString archiveBucketAddress(const QUrl &endpoint, const QString &bucket);

// Whether a RayJob with Starforge's labels is shaped as the app makes them: a job id of
// RayJobBuilder::isJobId's form and the name "<job name>-<id>". Anything else (a hand-made
// RayJob carrying someone's job id) is not followed, archived or acted on.
Result<void> checkJobIdentity(const QJsonObject &rayJob);

// "Job x belongs to bob; Starforge <verb>s only your own jobs." and its variants.
Error notYours(const JobRecord &record, Ownership ownership, const QString &verb);

} // namespace Starforge::Job
