#pragma once

// S3's error answers as sentences a user can act on: which key, bucket or clock to fix, and
// where (the setting's name). Pure functions, shared by every S3 operation and tested alone.

#include "core/s3/s3xml.h"
#include "core/util/result.h"

#include <QString>

#include <optional>

namespace Starforge::S3 {

struct ErrorContext
{
    QString host;         // the endpoint's host[:port], named in the sentences
    QString bucket;
    QString key;          // empty for bucket-level requests
    QString accessKeyId;  // named when the server does not know it (never the secret)
};

// The Error for an HTTP answer with this status and (when there was one) error document. HEAD
// answers have no body, so the status alone must read well too.
Error describeS3Error(int httpStatus, const std::optional<ErrorDocument> &document, const ErrorContext &context);

} // namespace Starforge::S3
