// Fuzz target: the Server-Sent Events parser (Net::SseParser). The input is a byte stream fed in
// chunks whose sizes the input chooses (sizes from the end of the input, bytes from the front,
// FuzzedDataProvider), so a plain event stream is a valid input. Invariant: feeding the stream
// in pieces gives the same events, retry value and buffered remainder as feeding it at once;
// a CR at the end of one chunk and an LF at the start of the next are one line end; hitting the
// size cap happens at the same byte however the stream is split.

#include "core/net/sseparser.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>

using namespace Starforge::Net;

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
    FuzzedDataProvider input(data, size);
    // A small cap, so that the failed state is reached and must not depend on the chunking.
    constexpr qsizetype Cap = 512;
    SseParser chunked(Cap);
    QList<SseEvent> chunkedEvents;
    QByteArray all;
    while (input.remaining_bytes() > 0) {
        const size_t length = input.ConsumeIntegralInRange<size_t>(0, 64);
        const std::vector<char> piece = input.ConsumeBytes<char>(length);
        const QByteArray chunk(piece.data(), static_cast<qsizetype>(piece.size()));
        all += chunk;
        chunkedEvents += chunked.feed(chunk);
    }

    SseParser whole(Cap);
    const QList<SseEvent> wholeEvents = whole.feed(all);
    require(wholeEvents.size() == chunkedEvents.size());
    for (qsizetype i = 0; i < wholeEvents.size(); ++i) {
        const SseEvent &a = wholeEvents.at(i);
        const SseEvent &b = chunkedEvents.at(i);
        require(a.type == b.type && a.data == b.data && a.id == b.id);
        require(!a.type.isEmpty());
    }
    require(whole.retryMs() == chunked.retryMs());
    require(!whole.retryMs() || *whole.retryMs() >= 0);
    require(whole.bufferedBytes() == chunked.bufferedBytes());
    require(whole.failed() == chunked.failed());
    require(whole.bufferedBytes() <= Cap);
    return 0;
}
