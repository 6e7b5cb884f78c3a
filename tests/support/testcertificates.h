#pragma once

// Certificates made on the spot for tests of client authentication: a CA, and client
// certificates it signs (RSA or EC, valid, expired or not yet valid), with their keys as PEM,
// plain or encrypted. Header-only; the test links OpenSSL::Crypto.

#include <QByteArray>
#include <QString>

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

namespace Starforge::Testing {

struct TestKeyPair
{
    EVP_PKEY *key = nullptr;
    QByteArray keyPem;           // unencrypted PKCS#8
    QByteArray certificatePem;
};

inline EVP_PKEY *makeKey(bool ec)
{
    return ec ? EVP_EC_gen("prime256v1") : EVP_RSA_gen(2048);
}

inline QByteArray bioText(BIO *bio)
{
    char *data = nullptr;
    const long size = BIO_get_mem_data(bio, &data);
    QByteArray text(data, static_cast<qsizetype>(size));
    BIO_free(bio);
    return text;
}

inline QByteArray keyPem(EVP_PKEY *key, const char *passphrase = nullptr)
{
    BIO *bio = BIO_new(BIO_s_mem());
    if (passphrase) {
        PEM_write_bio_PKCS8PrivateKey(bio, key, EVP_aes_256_cbc(), passphrase, static_cast<int>(strlen(passphrase)), nullptr, nullptr);
    } else {
        PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
    }
    return bioText(bio);
}

// A certificate for subjectKey with CN and O, signed by issuerKey (itself when null), valid from
// now + fromSeconds to now + toSeconds.
inline QByteArray certificatePem(EVP_PKEY *subjectKey, EVP_PKEY *issuerKey, const QString &cn, const QString &org, long fromSeconds,
                                 long toSeconds, X509 *issuer = nullptr)
{
    X509 *x = X509_new();
    X509_set_version(x, 2);
    static long serial = 1000;
    ASN1_INTEGER_set(X509_get_serialNumber(x), ++serial);
    X509_gmtime_adj(X509_getm_notBefore(x), fromSeconds);
    X509_gmtime_adj(X509_getm_notAfter(x), toSeconds);
    X509_set_pubkey(x, subjectKey);
    X509_NAME *name = X509_get_subject_name(x);
    const QByteArray o = org.toUtf8();
    const QByteArray c = cn.toUtf8();
    if (!o.isEmpty()) X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, reinterpret_cast<const unsigned char *>(o.constData()), -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char *>(c.constData()), -1, -1, 0);
    X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
    X509_sign(x, issuerKey ? issuerKey : subjectKey, EVP_sha256());
    BIO *bio = BIO_new(BIO_s_mem());
    PEM_write_bio_X509(bio, x);
    X509_free(x);
    return bioText(bio);
}

// A self-signed client certificate and its key.
inline TestKeyPair selfSignedClient(const QString &cn, const QString &org, bool ec = false, long fromSeconds = -60, long toSeconds = 86400)
{
    TestKeyPair pair;
    pair.key = makeKey(ec);
    pair.keyPem = keyPem(pair.key);
    pair.certificatePem = certificatePem(pair.key, nullptr, cn, org, fromSeconds, toSeconds);
    return pair;
}

} // namespace Starforge::Testing
