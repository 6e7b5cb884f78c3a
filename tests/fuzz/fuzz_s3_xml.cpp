// Fuzz target: the S3 XML parsers (S3::Xml). The same bytes go to every parser, as any of them
// may be handed whatever a misbehaving server or proxy returns. Parsed pages are used the way
// the client uses them, and a parsed part list is written back out as a CompleteMultipartUpload
// body, so a value that parses but cannot be used is found too.

#include "core/s3/s3xml.h"

#include <cstddef>
#include <cstdint>

using namespace Starforge::S3;

namespace {

void require(bool holds)
{
    if (!holds) {
        __builtin_trap();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray xml = QByteArray::fromRawData(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));

    if (const auto error = Xml::parseError(xml)) {
        require(!error->code.isEmpty());   // the header promises a parsed error has a code
    }
    if (const auto page = Xml::parseListObjectsV2(xml); page.ok()) {
        for (const ObjectInfo &object : page.value().objects) {
            (void)object.key.size();
            (void)object.lastModified.isValid();
        }
    }
    if (const auto parts = Xml::parseListParts(xml); parts.ok()) {
        const QByteArray body = Xml::completeMultipartUploadBody(parts.value().parts);
        require(body.contains("CompleteMultipartUpload"));
    }
    if (const auto uploads = Xml::parseListMultipartUploads(xml); uploads.ok()) {
        (void)uploads.value().uploads.size();
    }
    if (const auto id = Xml::parseInitiateMultipartUpload(xml); id.ok()) {
        require(!id.value().isEmpty());   // an error when missing or empty, says the header
    }
    if (const auto complete = Xml::parseCompleteMultipartUpload(xml); complete.ok()) {
        require(!complete.value().error || !complete.value().error->code.isEmpty());
    }
    return 0;
}
