// The typed views of resources.h read from JSON text with simdjson (On Demand, error codes
// only), for an informer's reader on the thread that parses a list page. Each mirrors its
// QJsonObject twin in resources.cpp field by field: a value of the wrong type reads as absent,
// so both give the same view of the same object (tst_capacity compares them). Kept apart from
// resources.cpp so what links only those views (the fuzz targets) needs no simdjson.

#include "core/kube/resources.h"

#include "core/kube/jsontext.h"
#include "core/kube/quantity.h"

#include <QJsonDocument>

#include <algorithm>
#include <limits>

namespace Starforge::Kube {

namespace {

// Whole units from milli-units, saturated, as resources.cpp counts them.
int wholeUnits(qint64 milli)
{
    const qint64 units = milli / 1000;
    return static_cast<int>(std::clamp<qint64>(units, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
}

namespace Text = JsonText;
using Text::od::json_type;

// A quantity string in milli-units; absent when it is not a string or does not parse. Whole
// numbers ("1", "8": nearly every GPU count) are read here: parseQuantityMilli's regular
// expression would cost more than the rest of the pod.
std::optional<qint64> quantityMilli(Text::od::value &value)
{
    if (!Text::isType(value, json_type::string)) {
        return std::nullopt;
    }
    const std::string_view text = Text::stringOf(value);
    if (!text.empty() && text.size() <= 15) {
        qint64 units = 0;
        bool digits = true;
        for (const char c : text) {
            digits = digits && c >= '0' && c <= '9';
            units = units * 10 + (c - '0');
        }
        if (digits) {
            return units * 1000;   // below 10^18: parseQuantityMilli's limit is 9 x 10^18
        }
    }
    return parseQuantityMilli(Text::toQString(text));
}

// nvidia.com/gpu of a resource map (status.capacity, limits, requests, overhead).
std::optional<qint64> gpuMilliOf(Text::od::value &map)
{
    Text::od::object object;
    if (map.get_object().get(object) != simdjson::SUCCESS) {
        return std::nullopt;
    }
    std::optional<qint64> found;
    for (auto entry : object) {
        Text::od::field field;
        std::string_view key;
        if (std::move(entry).get(field) != simdjson::SUCCESS || field.unescaped_key().get(key) != simdjson::SUCCESS) {
            return found;
        }
        if (key == "nvidia.com/gpu") {
            found = quantityMilli(field.value());
        }
    }
    return found;
}

// One resource's arithmetic of podRequests(): an absent amount adds nothing and is not a zero.
struct GpuMilli
{
    std::optional<qint64> value;

    void add(std::optional<qint64> more)
    {
        if (!more) return;
        qint64 sum = 0;
        const qint64 base = value.value_or(0);
        if (__builtin_add_overflow(base, *more, &sum)) {
            sum = *more > 0 ? std::numeric_limits<qint64>::max() : std::numeric_limits<qint64>::min();
        }
        value = sum;
    }
    void atLeast(std::optional<qint64> other)
    {
        if (other) value = std::max(value.value_or(0), *other);
    }
};

// A container's nvidia.com/gpu request (its limit when it has no request) and restartPolicy.
struct ContainerGpu
{
    std::optional<qint64> milli;
    bool sidecar = false;
};

ContainerGpu containerGpu(Text::od::value &value)
{
    ContainerGpu out;
    Text::od::object container;
    if (value.get_object().get(container) != simdjson::SUCCESS) {
        return out;
    }
    std::optional<qint64> limit;
    std::optional<qint64> request;
    for (auto entry : container) {
        Text::od::field field;
        std::string_view key;
        if (std::move(entry).get(field) != simdjson::SUCCESS || field.unescaped_key().get(key) != simdjson::SUCCESS) {
            break;
        }
        if (key == "restartPolicy") {
            out.sidecar = Text::stringOf(field.value()) == "Always";
        } else if (key == "resources") {
            Text::od::object resources;
            if (field.value().get_object().get(resources) != simdjson::SUCCESS) {
                continue;
            }
            for (auto part : resources) {
                Text::od::field f;
                std::string_view name;
                if (std::move(part).get(f) != simdjson::SUCCESS || f.unescaped_key().get(name) != simdjson::SUCCESS) {
                    break;
                }
                if (name == "limits") {
                    limit = gpuMilliOf(f.value());
                } else if (name == "requests") {
                    request = gpuMilliOf(f.value());
                }
            }
        }
    }
    out.milli = request ? request : limit;
    return out;
}

// podRequests(pod)["nvidia.com/gpu"] from spec's containers, initContainers and overhead, and
// spec.nodeName and spec.nodeSelector's string values on the way (spec is read once, its keys
// in any order).
qint64 gpuRequestsOf(Text::od::value &specValue, QString *nodeName, QJsonObject *nodeSelector)
{
    Text::od::object spec;
    if (specValue.get_object().get(spec) != simdjson::SUCCESS) {
        return 0;
    }
    GpuMilli total;
    GpuMilli sidecars;
    GpuMilli initPeak;
    std::optional<qint64> overhead;
    for (auto entry : spec) {
        Text::od::field field;
        std::string_view key;
        if (std::move(entry).get(field) != simdjson::SUCCESS || field.unescaped_key().get(key) != simdjson::SUCCESS) {
            break;
        }
        const bool app = key == "containers";
        if (app || key == "initContainers") {
            Text::od::array list;
            if (field.value().get_array().get(list) != simdjson::SUCCESS) {
                continue;
            }
            for (auto element : list) {
                Text::od::value v;
                if (element.get(v) != simdjson::SUCCESS) {
                    break;
                }
                const ContainerGpu c = containerGpu(v);
                if (app) {
                    total.add(c.milli);
                } else if (c.sidecar) {
                    sidecars.add(c.milli);
                } else if (c.milli || sidecars.value) {
                    // An init container runs beside the sidecars started before it.
                    GpuMilli during = sidecars;
                    during.add(c.milli);
                    initPeak.atLeast(during.value);
                }
            }
        } else if (key == "overhead") {
            overhead = gpuMilliOf(field.value());
        } else if (key == "nodeName") {
            *nodeName = Text::toQString(Text::stringOf(field.value()));
        } else if (key == "nodeSelector") {
            Text::od::object selector;
            if (field.value().get_object().get(selector) != simdjson::SUCCESS) {
                continue;
            }
            for (auto term : selector) {
                Text::od::field f;
                std::string_view name;
                if (std::move(term).get(f) != simdjson::SUCCESS || f.unescaped_key().get(name) != simdjson::SUCCESS) {
                    break;
                }
                std::string_view value;
                if (f.value().get_string().get(value) == simdjson::SUCCESS) {
                    nodeSelector->insert(Text::toQString(name), Text::toQString(value));
                }
            }
        }
    }
    // JSON keys come in any order: sidecars and init containers are only known at the end.
    total.add(sidecars.value);
    total.atLeast(initPeak.value);
    total.add(overhead);
    return total.value.value_or(0);
}

} // namespace

std::optional<Node> Node::fromJsonText(QByteArrayView json, const QString &seriesLabel)
{
    Text::ThreadText text(json);
    Text::od::object node;
    if (!text.object(node)) {
        return std::nullopt;
    }
    Node n;
    for (auto entry : node) {
        Text::od::field field;
        std::string_view key;
        if (std::move(entry).get(field) != simdjson::SUCCESS || field.unescaped_key().get(key) != simdjson::SUCCESS) {
            break;
        }
        Text::od::object part;
        if ((key != "metadata" && key != "spec" && key != "status") || field.value().get_object().get(part) != simdjson::SUCCESS) {
            continue;
        }
        for (auto inner : part) {
            Text::od::field f;
            std::string_view name;
            if (std::move(inner).get(f) != simdjson::SUCCESS || f.unescaped_key().get(name) != simdjson::SUCCESS) {
                break;
            }
            Text::od::value &v = f.value();
            if (key == "metadata") {
                if (name == "name") {
                    n.name = Text::toQString(Text::stringOf(v));
                } else if (name == "uid") {
                    n.uid = Text::toQString(Text::stringOf(v));
                } else if (name == "labels") {
                    // Qt's parser builds the object in one go; inserting label by label costs
                    // five times as much (QJsonObject::insert keeps its keys sorted).
                    Text::od::object map;
                    std::string_view raw;
                    if (v.get_object().get(map) == simdjson::SUCCESS && map.raw_json().get(raw) == simdjson::SUCCESS) {
                        const QByteArray labelsText = QByteArray::fromRawData(raw.data(), static_cast<qsizetype>(raw.size()));
                        n.labels = QJsonDocument::fromJson(labelsText).object();
                    } else {
                        n.labels = QJsonObject();
                    }
                }
            } else if (key == "spec") {
                if (name == "unschedulable") {
                    bool flag = false;
                    n.unschedulable = v.get_bool().get(flag) == simdjson::SUCCESS && flag;
                } else if (name == "taints") {
                    n.taints.clear();
                    Text::od::array taints;
                    if (v.get_array().get(taints) != simdjson::SUCCESS) {
                        continue;
                    }
                    for (auto element : taints) {
                        Text::od::value t;
                        if (element.get(t) != simdjson::SUCCESS) {
                            break;
                        }
                        Taint taint;
                        Text::od::object o;
                        if (t.get_object().get(o) == simdjson::SUCCESS) {
                            for (auto tf : o) {
                                Text::od::field x;
                                std::string_view k;
                                if (std::move(tf).get(x) != simdjson::SUCCESS || x.unescaped_key().get(k) != simdjson::SUCCESS) {
                                    break;
                                }
                                if (k == "key") taint.key = Text::toQString(Text::stringOf(x.value()));
                                else if (k == "value") taint.value = Text::toQString(Text::stringOf(x.value()));
                                else if (k == "effect") taint.effect = Text::toQString(Text::stringOf(x.value()));
                            }
                        }
                        n.taints << taint;
                    }
                }
            } else if (key == "status") {
                if (name == "capacity") {
                    const auto milli = gpuMilliOf(v);
                    n.gpuCapacity = milli ? wholeUnits(*milli) : 0;
                } else if (name == "allocatable") {
                    const auto milli = gpuMilliOf(v);
                    n.gpuAllocatable = milli ? wholeUnits(*milli) : 0;
                } else if (name == "conditions") {
                    n.ready = false;
                    n.readyReason.clear();
                    Text::od::array conditions;
                    if (v.get_array().get(conditions) != simdjson::SUCCESS) {
                        continue;
                    }
                    for (auto element : conditions) {
                        Text::od::value c;
                        if (element.get(c) != simdjson::SUCCESS) {
                            break;
                        }
                        Text::od::object o;
                        if (c.get_object().get(o) != simdjson::SUCCESS) {
                            continue;
                        }
                        std::string_view type, status, reason;
                        for (auto cf : o) {
                            Text::od::field x;
                            std::string_view k;
                            if (std::move(cf).get(x) != simdjson::SUCCESS || x.unescaped_key().get(k) != simdjson::SUCCESS) {
                                break;
                            }
                            if (k == "type") type = Text::stringOf(x.value());
                            else if (k == "status") status = Text::stringOf(x.value());
                            else if (k == "reason") reason = Text::stringOf(x.value());
                        }
                        // The last Ready condition counts, as in fromJson.
                        if (type == "Ready") {
                            n.ready = status == "True";
                            n.readyReason = Text::toQString(reason);
                        }
                    }
                }
            }
        }
    }
    n.series = n.labels.value(seriesLabel).toString();
    return n;
}

std::optional<Pod> Pod::usageFromJsonText(QByteArrayView json)
{
    Text::ThreadText text(json);
    Text::od::object pod;
    if (!text.object(pod)) {
        return std::nullopt;
    }
    Pod p;
    for (auto entry : pod) {
        Text::od::field field;
        std::string_view key;
        if (std::move(entry).get(field) != simdjson::SUCCESS || field.unescaped_key().get(key) != simdjson::SUCCESS) {
            break;
        }
        if (key == "spec") {
            p.nodeName.clear();
            p.nodeSelector = QJsonObject();
            p.gpuRequests = wholeUnits(gpuRequestsOf(field.value(), &p.nodeName, &p.nodeSelector));
            continue;
        }
        const bool metadata = key == "metadata";
        if (!metadata && key != "status") {
            continue;
        }
        Text::od::object part;
        if (field.value().get_object().get(part) != simdjson::SUCCESS) {
            continue;
        }
        for (auto inner : part) {
            Text::od::field f;
            std::string_view name;
            if (std::move(inner).get(f) != simdjson::SUCCESS || f.unescaped_key().get(name) != simdjson::SUCCESS) {
                break;
            }
            if (metadata) {
                if (name == "name") p.name = Text::toQString(Text::stringOf(f.value()));
                else if (name == "namespace") p.ns = Text::toQString(Text::stringOf(f.value()));
                else if (name == "uid") p.uid = Text::toQString(Text::stringOf(f.value()));
            } else if (name == "phase") {
                p.phase = Text::toQString(Text::stringOf(f.value()));
            }
        }
    }
    return p;
}

} // namespace Starforge::Kube
