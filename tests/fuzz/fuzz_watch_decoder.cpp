// Fuzz target: the watch-stream framing (Kube::WatchDecoder). The input is a byte stream fed in
// chunks whose sizes the input chooses: sizes are read from the end of the input, bytes from the
// front (FuzzedDataProvider), so a plain watch stream is a valid input and a seed may carry a
// trailer of sizes. Invariants: chunking never changes the events or whether the decoder failed;
// a decoder with a small line cap yields a prefix of the same events and never buffers more
// than its cap; decodeLine agrees with the decoder on each line.

#include "core/kube/watchdecoder.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>

using namespace Starforge::Kube;

namespace {

void require(bool holds)
{
    if (!holds) {
        __builtin_trap();
    }
}

bool sameEvent(const WatchEvent &a, const WatchEvent &b)
{
    return a.type == b.type && a.object == b.object;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FuzzedDataProvider input(data, size);
    constexpr qsizetype SmallCap = 256;
    WatchDecoder chunked;
    WatchDecoder capped(SmallCap);
    QList<WatchEvent> chunkedEvents;
    QList<WatchEvent> cappedEvents;
    QByteArray all;
    while (input.remaining_bytes() > 0) {
        const size_t length = input.ConsumeIntegralInRange<size_t>(0, 64);
        const std::vector<char> piece = input.ConsumeBytes<char>(length);
        const QByteArray chunk(piece.data(), static_cast<qsizetype>(piece.size()));
        all += chunk;
        chunkedEvents += chunked.feed(chunk);
        cappedEvents += capped.feed(chunk);
        require(capped.failed() || capped.bufferedBytes() <= SmallCap);
        require(chunked.failed() || chunked.bufferedBytes() <= all.size());
    }

    WatchDecoder whole;
    const QList<WatchEvent> wholeEvents = whole.feed(all);
    require(whole.failed() == chunked.failed());
    require(wholeEvents.size() == chunkedEvents.size());
    for (qsizetype i = 0; i < wholeEvents.size(); ++i) {
        require(sameEvent(wholeEvents.at(i), chunkedEvents.at(i)));
    }
    require(cappedEvents.size() <= wholeEvents.size());
    for (qsizetype i = 0; i < cappedEvents.size(); ++i) {
        require(sameEvent(wholeEvents.at(i), cappedEvents.at(i)));
    }

    // Line by line: every line the decoder accepted decodes alone to the same event, until the
    // first line it refused.
    qsizetype next = 0;
    for (const QByteArray &raw : all.split('\n')) {
        const QByteArray line = raw.trimmed();
        if (line.isEmpty() || next >= wholeEvents.size()) {
            continue;
        }
        WatchEvent event;
        QString problem;
        const bool ok = WatchDecoder::decodeLine(line, &event, &problem);
        require(ok == problem.isEmpty());
        if (!ok) {
            break;
        }
        require(sameEvent(event, wholeEvents.at(next)));
        ++next;
    }
    return 0;
}
