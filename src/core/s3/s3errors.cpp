#include "core/s3/s3errors.h"

#include <QCoreApplication>

namespace Starforge::S3 {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(S3)
};

QString object(const ErrorContext &context)
{
    return context.key.isEmpty() ? Text::tr("bucket %1").arg(context.bucket)
                                 : Text::tr("object %1 in bucket %2").arg(context.key, context.bucket);
}

} // namespace

Error describeS3Error(int status, const std::optional<ErrorDocument> &document, const ErrorContext &context)
{
    const QString code = document ? document->code : QString();
    const QString serverSays = document && !document->message.isEmpty()
                                   ? Text::tr(" (the server says: %1)").arg(document->message)
                                   : QString();

    if (code == QLatin1String("InvalidAccessKeyId")) {
        return Error::invalid(Text::tr("%1 does not know the access key %2. Check FORGE_S3_ACCESS_KEY: it must be an access "
                                 "key id issued by this S3 server.").arg(context.host, context.accessKeyId));
    }
    if (code == QLatin1String("SignatureDoesNotMatch")) {
        return Error::invalid(Text::tr("%1 rejected the request signature: the secret key does not belong to access key %2. "
                                 "Check FORGE_S3_SECRET_KEY (and FORGE_S3_REGION if the server is region-bound).")
                                  .arg(context.host, context.accessKeyId));
    }
    if (code == QLatin1String("RequestTimeTooSkewed")) {
        return Error::invalid(Text::tr("%1 rejected the request because this machine's clock differs from the server's by "
                                 "more than 15 minutes. Fix the machine's clock (enable time synchronisation, NTP) "
                                 "and try again.%2").arg(context.host, serverSays));
    }
    if (code == QLatin1String("NoSuchBucket")) {
        const QString bucket = document && !document->bucketName.isEmpty() ? document->bucketName : context.bucket;
        return Error::notFound(Text::tr("The bucket %1 does not exist on %2. Create it, or set FORGE_S3_BUCKET to an "
                                  "existing bucket.").arg(bucket, context.host));
    }
    if (code == QLatin1String("NoSuchKey") || (code.isEmpty() && status == 404 && !context.key.isEmpty())) {
        return Error::notFound(Text::tr("The object %1 does not exist in bucket %2.").arg(context.key, context.bucket));
    }
    if (code == QLatin1String("NoSuchUpload")) {
        return Error::notFound(Text::tr("The multipart upload of %1 no longer exists on %2 (it was completed or aborted). "
                                  "Start the upload again.").arg(context.key, context.host));
    }
    if (code == QLatin1String("AccessDenied") || (code.isEmpty() && status == 403)) {
        return Error::invalid(Text::tr("%1 denied access to the %2 for access key %3. Give this key permission on the "
                                 "bucket, or check FORGE_S3_ACCESS_KEY and FORGE_S3_SECRET_KEY.%4")
                                  .arg(context.host, object(context), context.accessKeyId, serverSays));
    }
    if (code == QLatin1String("XAmzContentSHA256Mismatch") || code == QLatin1String("BadDigest")
        || code == QLatin1String("InvalidDigest")) {
        return Error::io(Text::tr("%1 received different bytes than were sent for the %2 (%3): the payload was corrupted "
                            "in transit. Try again; if it repeats, check proxies or network equipment between this "
                            "machine and the server.").arg(context.host, object(context), code));
    }
    if (code == QLatin1String("EntityTooSmall")) {
        return Error::invalid(Text::tr("%1 refused to assemble the %2: every part but the last must be at least 5 MiB. "
                                 "Raise the part size.").arg(context.host, object(context)));
    }
    if (code == QLatin1String("InvalidPart") || code == QLatin1String("InvalidPartOrder")) {
        return Error::io(Text::tr("%1 refused to assemble the %2: a part is missing or its ETag does not match what was "
                            "uploaded (%3). Upload the object again.").arg(context.host, object(context), code));
    }
    if (code == QLatin1String("EntityTooLarge")) {
        return Error::invalid(Text::tr("%1 refused the %2: it is larger than the server allows.%3")
                                  .arg(context.host, object(context), serverSays));
    }
    if (code == QLatin1String("BucketAlreadyExists") || code == QLatin1String("BucketAlreadyOwnedByYou")) {
        return Error::invalid(Text::tr("The bucket %1 already exists on %2.").arg(context.bucket, context.host));
    }
    if (code == QLatin1String("SlowDown") || status == 503 || status == 429) {
        return Error::unavailable(Text::tr("%1 asks to slow down (HTTP %2). Try again in a moment.").arg(context.host).arg(status));
    }
    if (status >= 500) {
        return Error::unavailable(Text::tr("%1 failed with HTTP %2%3 for the %4. Try again later; if it repeats, the "
                                     "server's administrator has to look at it.%5")
                                      .arg(context.host).arg(status)
                                      .arg(code.isEmpty() ? QString() : QStringLiteral(" ") + code, object(context), serverSays));
    }
    if (status == 301 || status == 307 || code == QLatin1String("PermanentRedirect")) {
        return Error::invalid(Text::tr("%1 says the %2 lives at another address. Check FORGE_S3_ENDPOINT, FORGE_S3_REGION "
                                 "and FORGE_S3_PATH_STYLE.%3").arg(context.host, object(context), serverSays));
    }
    return Error::invalid(Text::tr("%1 refused the request for the %2 with HTTP %3%4.%5")
                              .arg(context.host, object(context)).arg(status)
                              .arg(code.isEmpty() ? QString() : QStringLiteral(" ") + code, serverSays));
}

} // namespace Starforge::S3
