#include "core/playground/vllmmetrics.h"

#include <QByteArray>
#include <QList>

#include <cmath>

namespace Starforge::Playground {

QHash<QString, double> VllmMetrics::samples(QByteArrayView text)
{
    QHash<QString, double> out;
    for (const QByteArray &raw : QByteArray(text.data(), text.size()).split('\n')) {
        const QByteArray line = raw.trimmed();
        if (line.isEmpty() || line.startsWith('#')) continue;
        qsizetype nameEnd = 0;
        while (nameEnd < line.size() && line.at(nameEnd) != '{' && line.at(nameEnd) != ' ') ++nameEnd;
        const QByteArray name = line.left(nameEnd);
        qsizetype valueStart = nameEnd;
        if (valueStart < line.size() && line.at(valueStart) == '{') {
            // Label values are quoted and may hold '}' or spaces: find the closing brace outside quotes.
            bool quoted = false;
            for (; valueStart < line.size(); ++valueStart) {
                const char c = line.at(valueStart);
                if (c == '\\' && quoted) { ++valueStart; continue; }
                if (c == '"') quoted = !quoted;
                if (c == '}' && !quoted) break;
            }
            ++valueStart;
        }
        const QList<QByteArray> rest = line.mid(valueStart).trimmed().split(' ');
        if (name.isEmpty() || rest.isEmpty()) continue;
        bool ok = false;
        const double value = rest.first().toDouble(&ok);
        if (!ok || std::isnan(value)) continue;
        out[QString::fromLatin1(name)] += value;
    }
    return out;
}

VllmMetrics VllmMetrics::parse(QByteArrayView text)
{
    const QHash<QString, double> s = samples(text);
    VllmMetrics m;
    for (auto it = s.cbegin(); it != s.cend(); ++it) {
        if (it.key().startsWith(QLatin1String("vllm:"))) m.any = true;
    }
    m.requestsRunning = s.value(QStringLiteral("vllm:num_requests_running"));
    m.requestsWaiting = s.value(QStringLiteral("vllm:num_requests_waiting"));
    m.kvCacheUsage = s.value(QStringLiteral("vllm:kv_cache_usage_perc"));
    m.promptTokens = s.value(QStringLiteral("vllm:prompt_tokens_total"));
    m.generationTokens = s.value(QStringLiteral("vllm:generation_tokens_total"));
    m.requestsFinished = s.value(QStringLiteral("vllm:request_success_total"));
    const double count = s.value(QStringLiteral("vllm:time_to_first_token_seconds_count"));
    if (count > 0) m.meanTimeToFirstTokenSeconds = s.value(QStringLiteral("vllm:time_to_first_token_seconds_sum")) / count;
    return m;
}

} // namespace Starforge::Playground
