#include "core/crypto/digest.h"

#include <QCoreApplication>
#include <QFile>

#include <openssl/evp.h>

namespace Starforge::Crypto {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(Digest)
};

} // namespace

struct Digest::Context
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    ~Context() { EVP_MD_CTX_free(ctx); }
};

namespace {

const EVP_MD *method(Digest::Algorithm algorithm)
{
    return algorithm == Digest::Algorithm::Sha256 ? EVP_sha256() : EVP_md5();
}

} // namespace

Digest::Digest(Algorithm algorithm)
    : m_context(std::make_unique<Context>())
    , m_algorithm(algorithm)
{
    EVP_DigestInit_ex(m_context->ctx, method(algorithm), nullptr);
}

Digest::~Digest() = default;
Digest::Digest(Digest &&) noexcept = default;
Digest &Digest::operator=(Digest &&) noexcept = default;

void Digest::add(const char *data, qsizetype size)
{
    if (size > 0) {
        EVP_DigestUpdate(m_context->ctx, data, static_cast<size_t>(size));
    }
}

QByteArray Digest::result()
{
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(m_context->ctx, out, &length);
    EVP_DigestInit_ex(m_context->ctx, method(m_algorithm), nullptr);
    return QByteArray(reinterpret_cast<const char *>(out), static_cast<qsizetype>(length));
}

QByteArray Digest::sha256(const QByteArray &data)
{
    Digest d(Algorithm::Sha256);
    d.add(data);
    return d.result();
}

QByteArray Digest::md5(const QByteArray &data)
{
    Digest d(Algorithm::Md5);
    d.add(data);
    return d.result();
}

Result<QByteArray> Digest::sha256File(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        return Error::io(Text::tr("cannot read %1 to hash it: %2").arg(path, file.errorString()));
    }
    Digest d(Algorithm::Sha256);
    QByteArray block(1024 * 1024, Qt::Uninitialized);
    for (;;) {
        const qint64 n = file.read(block.data(), block.size());
        if (n < 0) {
            return Error::io(Text::tr("cannot read %1 to hash it: %2").arg(path, file.errorString()));
        }
        if (n == 0) {
            break;
        }
        d.add(block.constData(), n);
    }
    return d.result();
}

} // namespace Starforge::Crypto
