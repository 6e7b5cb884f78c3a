#pragma once

// vLLM's Prometheus metrics (GET /metrics through the pod proxy), the few the playground shows
// beside a chat: requests running and waiting, KV-cache use, prompt and generation tokens so
// far, and the mean time to first token. vLLM labels every series with model_name and engine;
// the values here are summed over them. The text format: `# HELP`/`# TYPE` lines, then
// `name{label="v",...} value [timestamp]`; lines that do not parse are skipped, as a scraper
// does.

#include <QByteArrayView>
#include <QHash>
#include <QString>

#include <optional>

namespace Starforge::Playground {

struct VllmMetrics
{
    double requestsRunning = 0;      // vllm:num_requests_running
    double requestsWaiting = 0;      // vllm:num_requests_waiting
    double kvCacheUsage = 0;         // vllm:kv_cache_usage_perc, 0..1
    double promptTokens = 0;         // vllm:prompt_tokens_total
    double generationTokens = 0;     // vllm:generation_tokens_total
    double requestsFinished = 0;     // vllm:request_success_total, every finished_reason
    std::optional<double> meanTimeToFirstTokenSeconds;   // _sum / _count of the histogram
    bool any = false;                // at least one vllm: series was read

    static VllmMetrics parse(QByteArrayView text);
    // Every sample, by name without labels, summed: for tests and for what is not above.
    static QHash<QString, double> samples(QByteArrayView text);
};

} // namespace Starforge::Playground
