#pragma once

// A small expected<T, Error> for C++20 (std::expected is C++23). Fallible calls in the core return
// Result<T>; the Error carries a sentence a user can act on, never an exception across a slot.

#include <QString>

#include <optional>
#include <utility>
#include <variant>

namespace Starforge {

struct Error
{
    enum class Code {
        Invalid,       // the user's input is wrong; the message says what to fix
        NotFound,      // a named thing (profile, context, entry) does not exist
        Unsupported,   // the input is valid but we cannot handle it yet
        Unavailable,   // a service (Secret Service, server) did not answer
        Io,            // a file could not be read or written
        Internal,      // a bug or an impossible state
    };

    Code code = Code::Internal;
    QString message;

    static Error invalid(QString message) { return {Code::Invalid, std::move(message)}; }
    static Error notFound(QString message) { return {Code::NotFound, std::move(message)}; }
    static Error unsupported(QString message) { return {Code::Unsupported, std::move(message)}; }
    static Error unavailable(QString message) { return {Code::Unavailable, std::move(message)}; }
    static Error io(QString message) { return {Code::Io, std::move(message)}; }
    static Error internal(QString message) { return {Code::Internal, std::move(message)}; }
};

template <typename T>
class [[nodiscard]] Result
{
public:
    Result(T value) : m_value(std::move(value)) {}              // NOLINT(google-explicit-constructor)
    Result(Error error) : m_value(std::move(error)) {}          // NOLINT(google-explicit-constructor)

    bool ok() const { return std::holds_alternative<T>(m_value); }
    explicit operator bool() const { return ok(); }

    const T &value() const & { return std::get<T>(m_value); }
    T &value() & { return std::get<T>(m_value); }
    T &&value() && { return std::get<T>(std::move(m_value)); }
    const T &operator*() const & { return value(); }
    const T *operator->() const { return &value(); }

    const Error &error() const { return std::get<Error>(m_value); }

private:
    std::variant<T, Error> m_value;
};

template <>
class [[nodiscard]] Result<void>
{
public:
    Result() = default;
    Result(Error error) : m_error(std::move(error)) {}          // NOLINT(google-explicit-constructor)

    bool ok() const { return !m_error.has_value(); }
    explicit operator bool() const { return ok(); }
    const Error &error() const { return *m_error; }

private:
    std::optional<Error> m_error;
};

} // namespace Starforge
