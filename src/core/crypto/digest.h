#pragma once

// Streamed SHA-256 and MD5 through OpenSSL's EVP interface: the Capsule builder hashes every
// file, the S3 client signs payloads (x-amz-content-sha256) and checks parts (Content-MD5).
// EVP picks the CPU's SHA extensions when present, which QCryptographicHash does not.

#include "core/util/result.h"

#include <QByteArray>
#include <QString>

#include <memory>

namespace Starforge::Crypto {

class Digest
{
public:
    enum class Algorithm { Sha256, Md5 };

    explicit Digest(Algorithm algorithm);
    ~Digest();
    Digest(Digest &&) noexcept;
    Digest &operator=(Digest &&) noexcept;

    void add(const char *data, qsizetype size);
    void add(const QByteArray &data) { add(data.constData(), data.size()); }
    // The raw digest; the object starts over afterwards.
    QByteArray result();

    static QByteArray sha256(const QByteArray &data);
    static QByteArray md5(const QByteArray &data);
    // A file read in 1 MiB blocks; the error says which file and why.
    static Result<QByteArray> sha256File(const QString &path);

private:
    struct Context;
    std::unique_ptr<Context> m_context;
    Algorithm m_algorithm;
};

} // namespace Starforge::Crypto
