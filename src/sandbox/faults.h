#pragma once

// The sandbox's fault knobs: what tests and users turn on to see how the app copes with a
// misbehaving cluster (throttling, server errors, latency, cut streams, failing S3 parts).
// Switchable at start (--faults) and at run time (GET/PUT/PATCH /sandbox/v1/faults); the API
// server holds the current set, and the parts that act on a knob (the API server, the pods/log
// follower, the S3 endpoint) read it from there, so a change applies to the next request.
//
// The rates and delays are for soak runs; tests that must not depend on chance or timers use
// the deterministic knobs: next500Creates (a count that is spent) and holdS3Uploads (a switch).

#include "core/util/result.h"

#include <QJsonObject>
#include <QString>

namespace Starforge::Sandbox {

struct Faults
{
    double rate429 = 0;            // fraction of resource requests answered 429
    double rate500 = 0;            // fraction answered 500
    int delayMs = 0;               // added before every resource request is answered
    int dropWatchesAfterMs = 0;    // every watch stream is cut after this long (0: never)
    int dropLogsAfterMs = 0;       // every pods/log follow is cut after this long (0: never)
    double s3PartFailureRate = 0;  // fraction of S3 part uploads answered 500
    int next500Creates = 0;        // the next N POSTs on resources are answered 500; each one spends one
    bool holdS3Uploads = false;    // S3 PUTs (objects and parts) wait unanswered until this is off

    QJsonObject toJson() const;
    // The knobs `json` names, over `base` (PATCH keeps the others, PUT starts from none).
    static Result<Faults> fromJson(const QJsonObject &json, const Faults &base);
    // "rate429=0.1,rate500=0.05,delayMs=20,dropWatchesAfterMs=2000,dropLogsAfterMs=500,s3PartFailureRate=0.1,
    //  next500Creates=2,holdS3Uploads=1"
    static Result<Faults> parse(const QString &spec);
};

} // namespace Starforge::Sandbox
