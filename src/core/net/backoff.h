#pragma once

// Exponential backoff with full jitter, the shape client-go's reflector uses (0.8 s doubling to
// 30 s, reset after a quiet spell): every reconnecting loop in the app (informers, log follow,
// S3 part retries) takes its delays from here. The random source and the clock can be injected
// so tests see exact delays.

#include <QtGlobal>

#include <functional>

namespace Starforge::Net {

class Backoff
{
public:
    struct Params
    {
        int initialMs = 800;
        int maxMs = 30000;
        double factor = 2.0;
        double jitter = 1.0;     // the delay is base * (1 + jitter * u), u in [0, 1)
        int resetAfterMs = 120000; // a success this long after the last failure starts over
    };

    Backoff();
    explicit Backoff(Params params, std::function<double()> random = {});

    // The next delay after a failure, growing towards maxMs.
    int next();
    // Call on success: the next failure starts from initialMs again.
    void reset();
    int failures() const { return m_failures; }
    const Params &params() const { return m_params; }

private:
    Params m_params;
    std::function<double()> m_random;
    double m_base = 0;
    int m_failures = 0;
};

// Retry-After as seconds or an HTTP date, in milliseconds from now; -1 when absent or unreadable.
int retryAfterMs(const QByteArray &headerValue);

} // namespace Starforge::Net
