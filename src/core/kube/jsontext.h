#pragma once

// JSON text read with simdjson's On Demand API where a QJsonDocument costs too much: list pages
// of 50,000 pods, and the few fields of each the capacity numbers read (docs/kubernetes.md,
// "The list path"). Error codes only, never exceptions: these run in slots and pool tasks.
// simdjson is a private dependency of starforge_core: only its .cpp files include this header.

#include <QByteArrayView>
#include <QString>

#include <simdjson.h>

#include <cstring>
#include <string>
#include <string_view>

namespace Starforge::Kube::JsonText {

namespace od = simdjson::ondemand;

inline QString toQString(std::string_view text)
{
    return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

// The value as a string; empty when it is something else (as QJsonValue::toString() reads it).
inline std::string_view stringOf(od::value &value)
{
    std::string_view text;
    return value.get_string().get(text) == simdjson::SUCCESS ? text : std::string_view();
}

inline bool isType(od::value &value, od::json_type wanted)
{
    od::json_type type{};
    return value.type().get(type) == simdjson::SUCCESS && type == wanted;
}

// One JSON document's text, copied with the padding simdjson reads past the end, parsed by this
// thread's parser (a parser must not be shared across threads, and making one per object costs
// more than reading it). Valid until the next ThreadText on the same thread. A thread keeps what
// its largest object needed (about five bytes per byte of text) up to LargeText of text; beyond
// that it lets go once done.
class ThreadText
{
public:
    static constexpr size_t LargeText = 256 * 1024;

    explicit ThreadText(QByteArrayView json)
    {
        Buffers &b = buffers();
        const size_t size = static_cast<size_t>(json.size());
        m_large = size > LargeText;
        if (b.text.size() < size + simdjson::SIMDJSON_PADDING) {
            b.text.resize(size + simdjson::SIMDJSON_PADDING);
        }
        std::memcpy(b.text.data(), json.data(), size);
        m_error = b.parser.iterate(b.text.data(), size, b.text.size()).get(m_document);
    }
    ~ThreadText()
    {
        if (m_large) {
            m_document = od::document();
            buffers() = Buffers();
        }
    }
    ThreadText(const ThreadText &) = delete;
    ThreadText &operator=(const ThreadText &) = delete;

    // The document's root object; false when the text is not one.
    bool object(od::object &out)
    {
        return m_error == simdjson::SUCCESS && m_document.get_object().get(out) == simdjson::SUCCESS;
    }

private:
    struct Buffers
    {
        od::parser parser;
        std::string text;
    };
    static Buffers &buffers()
    {
        thread_local Buffers b;
        return b;
    }

    od::document m_document;
    simdjson::error_code m_error = simdjson::UNINITIALIZED;
    bool m_large = false;
};

} // namespace Starforge::Kube::JsonText
